//! Payload construction with the framework's list rules (`operators.md` §6): cursor
//! pagination of `rows`, capped secondary lists, totals and completeness certificates. The
//! list's row key and certificate field names come from the registry declaration, so a
//! kernel never spells them.

use crate::args::Args;
use crate::error::OpError;
use crate::json::{canonicalize_floats, project_row, set_digest};
use crate::registry::{Cut, OpSpec};
use rayon::prelude::*;
use serde_json::{Map, Value};
use tgms_engine::canon;

/// The payload being built by a kernel.
pub struct Output {
    spec: &'static OpSpec,
    limit: usize,
    offset: Result<usize, OpError>,
    map: Map<String, Value>,
    /// Keep the complete paged list when it spans more than one page
    /// (`crate::page_cache`): set by the pipeline for calls whose result it may cache.
    capture: bool,
    /// Also render a lazily rendered list whole to keep it ([`Output::paged_lazy`]).
    capture_lazy: bool,
    /// The complete paged list, when captured: its name and its rows in list order.
    complete: Option<(String, KeptRows)>,
    /// Paged lists set so far, and whether the kernel set `truncated` or `cursor` itself
    /// (then the envelope's flags are not the paged list's alone, and no page is derived
    /// from a kept list: [`Output::into_complete`] returns `None`).
    paged_lists: u32,
    own_flags: bool,
    /// The paged list to cut to columns as it is rendered ([`Output::project`],
    /// [`Output::project_beside`]).
    projection: Option<Projection>,
    /// The projected list's name and the canonical text of its whole rows.
    projected_text: Option<ListText>,
    /// The projected list rendered beside its page: its rows cut to the columns, and its
    /// name and the canonical text of its whole rows.
    beside: Option<(Vec<Value>, ListText)>,
    /// The paged list whose rows at some positions to render whole instead of paging it
    /// ([`Output::pick`]; taken when rendered), and those rows once rendered.
    pick: Option<(String, Vec<usize>)>,
    picked: Option<Vec<Value>>,
}

/// A paged list to render cut to `columns`: instead of the list when the call returns it
/// whole (`admit` is `None`), or beside its page when `admit(total, page)` holds.
struct Projection {
    list: String,
    columns: Vec<String>,
    admit: Option<Admit>,
}

/// Whether to render a list whole beside its page ([`Output::project_beside`]), given the
/// list's total and its page's rows.
pub type Admit = Box<dyn Fn(usize, &[Value]) -> bool>;

/// A list's name and the canonical text of its whole rows, in parts (their concatenation):
/// what the result digest reads in place of a list held cut to columns.
pub type ListText = (String, Vec<String>);

/// A payload as a call returning its paged list whole would give it, with that list cut to
/// columns ([`Output::take_beside`]), and the list's text.
pub type BesidePayload = (Map<String, Value>, ListText);

/// One member value of a row given as typed cells ([`Output::paged_cells`]): written as
/// canonical text or picked as a column without building the row as a value.
#[derive(Debug, Clone, Copy)]
pub enum Cell<'a> {
    /// A string.
    Str(&'a str),
    /// Bytes shown as a string of lowercase hex (an eid or vid).
    Hex(&'a [u8]),
    /// An integer.
    Int(i64),
    /// `null`.
    Null,
}

impl Cell<'_> {
    /// A string, or `null` for `None`.
    pub fn opt_str(s: Option<&str>) -> Cell<'_> {
        s.map_or(Cell::Null, Cell::Str)
    }

    /// The JSON value.
    pub fn to_value(self) -> Value {
        match self {
            Cell::Str(s) => Value::from(s),
            Cell::Hex(b) => Value::from(canon::hex(b)),
            Cell::Int(n) => Value::from(n),
            Cell::Null => Value::Null,
        }
    }

    /// Appends the canonical JSON text (the text of [`Cell::to_value`]).
    pub fn write(self, out: &mut String) {
        match self {
            Cell::Str(s) => canon::write_str(out, s),
            Cell::Hex(b) => {
                out.push('"');
                canon::push_hex(out, b);
                out.push('"');
            }
            Cell::Int(n) => out.push_str(itoa::Buffer::new().format(n)),
            Cell::Null => out.push_str("null"),
        }
    }
}

/// The visitor of a row given as cells: called once per member, in key byte order.
pub type CellSink<'s> = dyn FnMut(&'static str, Cell<'_>) + 's;

/// Rows rendered per chunk of a projected list ([`Output::project`]): the whole rows of one
/// chunk are alive at a time, and chunks of typed cells are rendered on every core.
const PROJECT_CHUNK_ROWS: usize = 4096;

/// Items of a sequence handed out by increasing, non-overlapping position ranges: the rows of
/// a lazily rendered list ([`Output::paged_lazy`]) asked for as one page or as consecutive
/// chunks, moved out without a copy.
struct InOrder<I> {
    it: I,
    pos: usize,
}

impl<I: Iterator> InOrder<I> {
    /// Hands out `it`'s items from position 0.
    fn new(it: I) -> Self {
        InOrder { it, pos: 0 }
    }

    /// The items at positions `r`, which must not start before the end of the previous
    /// range (earlier positions are gone).
    fn take(&mut self, r: std::ops::Range<usize>) -> impl Iterator<Item = I::Item> + '_ {
        let skip = r.start.saturating_sub(self.pos);
        self.pos = r.end.max(self.pos);
        self.it.by_ref().skip(skip).take(r.len())
    }
}

/// The page of §6.1 at `offset` of a list of `total` rows with page size `limit`: the row
/// positions, `truncated`, and the next `cursor`. One rule for the kernel's page and for a
/// page read from a kept complete list (`crate::page_cache`), so both give the same bytes.
pub fn page_of(total: usize, offset: usize, limit: usize) -> (std::ops::Range<usize>, bool, Value) {
    let range = offset.min(total)..offset.saturating_add(limit).min(total);
    let end = offset.saturating_add(range.len());
    let truncated = end < total;
    let cursor = if truncated {
        Value::from(end.to_string())
    } else {
        Value::Null
    };
    (range, truncated, cursor)
}

/// The rows of a list given as typed cells by a source that owns what it reads
/// ([`Output::paged_cells_owned`]): `row(i, sink)` calls `sink` with every member of row `i`
/// in key byte order.
pub type OwnedCells = dyn Fn(usize, &mut CellSink<'_>) + Send + Sync;

/// The complete paged list a [`Complete`] keeps.
pub enum KeptRows {
    /// Every row rendered, in list order.
    Values(Vec<Value>),
    /// Rows rendered from their source when a page asks for them.
    Cells {
        /// Number of rows.
        total: usize,
        /// The source.
        row: std::sync::Arc<OwnedCells>,
        /// An estimate of the heap bytes the source holds (the page cache's unit of
        /// account).
        bytes: usize,
    },
}

impl KeptRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            KeptRows::Values(v) => v.len(),
            KeptRows::Cells { total, .. } => *total,
        }
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows at positions `range` (within `0..len`), rendered.
    fn rows(&self, range: std::ops::Range<usize>) -> Vec<Value> {
        match self {
            KeptRows::Values(v) => v[range].to_vec(),
            KeptRows::Cells { row, .. } => {
                range.map(|i| cells_value(|sink| row(i, sink))).collect()
            }
        }
    }
}

/// The JSON object of one row given as typed cells by `fill`.
fn cells_value(fill: impl FnOnce(&mut CellSink<'_>)) -> Value {
    let mut m = Map::new();
    fill(&mut |k, c| {
        m.insert(k.to_string(), c.to_value());
    });
    Value::Object(m)
}

/// A kernel's payload with its complete paged list kept (`crate::page_cache`): every page
/// of the same call is `payload` with the list, `truncated` and `cursor` replaced.
pub struct Complete {
    /// The payload as the kernel left it (its page at the call's offset).
    pub payload: Map<String, Value>,
    /// The paged list's field name.
    pub list: String,
    /// Every row of the list, in list order.
    pub rows: KeptRows,
}

impl Complete {
    /// The payload of the page at `offset` with page size `limit` (§6.1).
    pub fn page(&self, offset: usize, limit: usize) -> Map<String, Value> {
        let (range, truncated, cursor) = page_of(self.rows.len(), offset, limit);
        let mut m = self.payload.clone();
        m.insert(self.list.clone(), Value::Array(self.rows.rows(range)));
        m.insert("truncated".into(), Value::Bool(truncated));
        m.insert("cursor".into(), cursor);
        m
    }
}

/// The `total` rows of the list `name` rendered by `page` in chunks of
/// [`PROJECT_CHUNK_ROWS`]: each row cut to `cols`, and the canonical text of the whole list
/// (floats canonical, as the pipeline makes them in every payload).
fn project_chunks(
    name: &str,
    total: usize,
    cols: &[String],
    page: &mut impl FnMut(std::ops::Range<usize>) -> Result<Vec<Value>, OpError>,
) -> Result<(Vec<Value>, String), OpError> {
    let mut cut = Vec::with_capacity(total);
    let mut text = String::from("[");
    let mut start = 0;
    while start < total {
        let end = start.saturating_add(PROJECT_CHUNK_ROWS).min(total);
        let rows = page(start..end)?;
        if rows.len() != end - start {
            return Err(OpError::internal(format!(
                "{name}: {} rows expected, got {}",
                end - start,
                rows.len()
            )));
        }
        for mut r in rows {
            canonicalize_floats(&mut r)
                .map_err(|_| OpError::invalid("non-finite float in operator output"))?;
            if !cut.is_empty() {
                text.push(',');
            }
            canon::write_value(&mut text, &r);
            cut.push(project_row(&r, cols));
        }
        start = end;
    }
    text.push(']');
    Ok((cut, text))
}

/// Rows `rows` of a list of typed cells ([`Output::paged_cells`]): their canonical text (each
/// row after the list's first preceded by a comma) and each row cut to `cols`.
fn cells_chunk(
    name: &str,
    rows: std::ops::Range<usize>,
    cols: &[String],
    row: &impl Fn(usize, &mut CellSink<'_>) -> Result<(), OpError>,
) -> Result<(String, Vec<Value>), OpError> {
    let mut cut = Vec::with_capacity(rows.len());
    let mut text = String::with_capacity(rows.len().saturating_mul(256));
    for i in rows {
        if i > 0 {
            text.push(',');
        }
        text.push('{');
        let mut prev: Option<&'static str> = None;
        let mut ordered = true;
        let mut picked: Vec<(&'static str, Value)> = Vec::with_capacity(cols.len());
        row(i, &mut |k, c| {
            if let Some(p) = prev {
                // The text is canonical only in key byte order, each key once.
                ordered &= p.as_bytes() < k.as_bytes();
                text.push(',');
            }
            prev = Some(k);
            canon::write_str(&mut text, k);
            text.push(':');
            c.write(&mut text);
            if cols.iter().any(|x| x == k) {
                picked.push((k, c.to_value()));
            }
        })?;
        if !ordered {
            return Err(OpError::internal(format!(
                "{name}: row cells not in key order"
            )));
        }
        text.push('}');
        // The row's members named in `cols` ([`project_row`]), each once (checked above).
        cut.push(Value::Object(
            picked
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        ));
    }
    Ok((text, cut))
}

/// All `total` rows of a list of typed cells ([`Output::paged_cells`]) cut to `cols`, and
/// the canonical text of the whole list in parts. Chunks are rendered on every core and
/// joined in list order: the same text and rows for any number of threads.
fn cells_cut(
    name: &str,
    total: usize,
    cols: &[String],
    row: &(impl Fn(usize, &mut CellSink<'_>) -> Result<(), OpError> + Sync),
) -> Result<(Vec<Value>, Vec<String>), OpError> {
    let chunks: Vec<(String, Vec<Value>)> = (0..total.div_ceil(PROJECT_CHUNK_ROWS))
        .into_par_iter()
        .map(|c| {
            let rows = c * PROJECT_CHUNK_ROWS..((c + 1) * PROJECT_CHUNK_ROWS).min(total);
            cells_chunk(name, rows, cols, row)
        })
        .collect::<Result<_, OpError>>()?;
    let mut cut = Vec::with_capacity(total);
    let mut parts = Vec::with_capacity(chunks.len() + 2);
    parts.push("[".to_string());
    for (text, rows) in chunks {
        parts.push(text);
        cut.extend(rows);
    }
    parts.push("]".to_string());
    Ok((cut, parts))
}

/// The most rows a lazily rendered list ([`Output::paged_lazy`]) renders beyond its page to
/// keep the complete list; longer lists are not kept (each page renders its own rows).
pub const LAZY_KEEP_MAX_ROWS: usize = 1_000_000;

impl Output {
    /// An empty payload for one call of `spec`.
    pub fn new(spec: &'static OpSpec, args: &Args) -> Self {
        Output {
            spec,
            limit: args.limit(),
            offset: args.offset(),
            map: Map::new(),
            capture: false,
            capture_lazy: false,
            complete: None,
            paged_lists: 0,
            own_flags: false,
            projection: None,
            projected_text: None,
            beside: None,
            pick: None,
            picked: None,
        }
    }

    /// Renders the rows at `positions` of the complete paged list `list` whole, in that order,
    /// floats canonical ([`Output::take_picked`]): the rows a selecting reducer reads of a
    /// complete result (`crate::pipeline::call_operator_picked`, which uses nothing else of
    /// the payload). The list itself is then not set: no page and no certificate are built.
    pub fn pick(&mut self, list: &str, positions: Vec<usize>) {
        self.pick = Some((list.to_string(), positions));
    }

    /// The rows picked ([`Output::pick`]), when the kernel paged the list.
    pub fn take_picked(&mut self) -> Option<Vec<Value>> {
        self.picked.take()
    }

    /// The positions to pick of the paged list `name` of `total` rows, taken out of the pick
    /// (a list is picked from once); an internal error when one is past the list's end.
    fn take_pick(&mut self, name: &str, total: usize) -> Result<Option<Vec<usize>>, OpError> {
        if self.pick.as_ref().is_none_or(|p| p.0 != name) {
            return Ok(None);
        }
        let at = self.pick.take().map(|p| p.1).unwrap_or_default();
        match at.iter().max() {
            Some(&past) if past >= total => Err(OpError::internal(format!(
                "{name}: row {past} picked of {total}"
            ))),
            _ => Ok(Some(at)),
        }
    }

    /// Sets the picked rows: `row(i)` at each position of `at`, floats canonical.
    fn set_picked(
        &mut self,
        at: Vec<usize>,
        row: impl Fn(usize) -> Result<Value, OpError>,
    ) -> Result<(), OpError> {
        let rows = at
            .into_iter()
            .map(|i| {
                let mut r = row(i)?;
                canonicalize_floats(&mut r)
                    .map_err(|_| OpError::invalid("non-finite float in operator output"))?;
                Ok(r)
            })
            .collect::<Result<_, OpError>>()?;
        self.picked = Some(rows);
        Ok(())
    }

    /// Picks from the paged list `name` of `total` rows with `row(i)` when it is the list to
    /// pick from; `true` when it did (the list is then not paged, [`Output::pick`]).
    fn pick_with(
        &mut self,
        name: &str,
        total: usize,
        row: impl Fn(usize) -> Result<Value, OpError>,
    ) -> Result<bool, OpError> {
        match self.take_pick(name, total)? {
            Some(at) => self.set_picked(at, row).map(|()| true),
            None => Ok(false),
        }
    }

    /// Renders the paged list `list`, when the call returns it whole, in chunks cut to
    /// `columns` ([`project_row`]): the payload holds the cut rows, and the canonical text of
    /// the whole rows is kept for the result digest ([`Output::take_projected_text`]), so a
    /// complete list of a million wide rows is never held as values at once. Other lists,
    /// and a list returned as a page, are built as usual.
    pub fn project(&mut self, list: &str, columns: Vec<String>) {
        self.projection = Some(Projection {
            list: list.to_string(),
            columns,
            admit: None,
        });
    }

    /// [`Output::project`] for a call that returns a page: the page is built as usual and,
    /// when `admit(total, page)` holds and the page is not the whole list, the whole list is
    /// also rendered cut to `columns`, in the same kernel run ([`Output::take_beside`]).
    /// Supported by lists of typed cells ([`Output::paged_cells`]) and lists the kernel
    /// gives whole ([`Output::paged`], [`Output::paged_keyed`]); a lazily rendered list is
    /// only paged.
    pub fn project_beside(&mut self, list: &str, columns: Vec<String>, admit: Admit) {
        self.projection = Some(Projection {
            list: list.to_string(),
            columns,
            admit: Some(admit),
        });
    }

    /// The payload a call returning the projected list whole would have, with that list cut
    /// to its columns, when it was rendered beside the page ([`Output::project_beside`]) and
    /// that payload follows from this one: the kernel paged exactly one list and left
    /// `truncated` and `cursor` to it (as for [`Output::into_complete`]).
    pub fn take_beside(&mut self) -> Option<BesidePayload> {
        let (cut, text) = self.beside.take()?;
        if self.paged_lists != 1 || self.own_flags {
            return None;
        }
        let mut m: Map<String, Value> = self
            .map
            .iter()
            .filter(|(k, _)| **k != text.0)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        m.insert(text.0.clone(), Value::Array(cut));
        m.insert("truncated".into(), Value::Bool(false));
        m.insert("cursor".into(), Value::Null);
        Some((m, text))
    }

    /// The projected list's name and the canonical text of its whole rows (the
    /// concatenation of the parts), when one was projected ([`Output::project`]): the
    /// payload's digest is taken over that text in the list's place.
    pub fn take_projected_text(&mut self) -> Option<ListText> {
        self.projected_text.take()
    }

    /// Keeps the complete paged list when it spans more than one page
    /// (`crate::page_cache`; read back with [`Output::into_complete`]). A list the kernel
    /// renders lazily ([`Output::paged_lazy`]) is rendered whole for it only with
    /// `lazy_too` (rendering every row costs more than the page alone).
    pub fn capture_complete(&mut self, lazy_too: bool) {
        self.capture = true;
        self.capture_lazy = lazy_too;
    }

    /// Sets a plain field.
    pub fn set(&mut self, name: &str, v: Value) {
        if name == "truncated" || name == "cursor" {
            self.own_flags = true;
        }
        self.map.insert(name.to_string(), v);
    }

    fn decl(&self, name: &str, cut: Cut) -> Result<&'static crate::registry::ListDecl, OpError> {
        self.spec
            .output(name)
            .and_then(|o| o.list.as_ref())
            .filter(|l| l.cut == cut)
            .ok_or_else(|| {
                OpError::internal(format!(
                    "{}: no {cut:?} list '{name}' declared",
                    self.spec.name
                ))
            })
    }

    /// Pages the complete ordered list `rows` (§6.1): sets `rows`, `rows_total`,
    /// `truncated`, `cursor` and `set_digest`. Returns whether the page is truncated.
    pub fn paged(&mut self, name: &str, rows: Vec<Value>) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Paged)?;
        let keys: Vec<Value> = rows.iter().map(|r| decl.key.of(r)).collect();
        self.paged_keyed(name, rows, keys)
    }

    /// [`Output::paged`] with the row keys given by the kernel (one per row, in row order),
    /// for lists whose key depends on the call ([`crate::registry::RowKey::Computed`]).
    pub fn paged_keyed(
        &mut self,
        name: &str,
        rows: Vec<Value>,
        keys: Vec<Value>,
    ) -> Result<bool, OpError> {
        if keys.len() != rows.len() {
            return Err(OpError::internal(format!(
                "{name}: one key per row expected"
            )));
        }
        if self.pick_with(name, rows.len(), |i| Ok(rows[i].clone()))? {
            return Ok(false);
        }
        if let Some(cols) = self.beside_columns(name, rows.len()) {
            let total = rows.len();
            let truncated = self.paged_lazy(name, keys, |page| Ok(rows[page].to_vec()))?;
            if self.admits(name, total) {
                let mut rows = InOrder::new(rows.into_iter());
                let (cut, text) =
                    project_chunks(name, total, &cols, &mut |r| Ok(rows.take(r).collect()))?;
                self.beside = Some((cut, (name.to_string(), vec![text])));
            }
            return Ok(truncated);
        }
        let keep = self.capture && rows.len() > self.limit;
        if !keep {
            let mut rows = InOrder::new(rows.into_iter());
            return self.paged_lazy(name, keys, |page| Ok(rows.take(page).collect()));
        }
        // The rows are all here already: page them without rendering a second copy.
        self.capture = false;
        let truncated = self.paged_lazy(name, keys, |page| Ok(rows[page].to_vec()));
        self.capture = true;
        let truncated = truncated?;
        self.complete = Some((name.to_string(), KeptRows::Values(rows)));
        Ok(truncated)
    }

    /// [`Output::paged`] for long lists whose rows are costly to build: `keys` are the
    /// declared row keys of the complete ordered list (one per row, in row order) and
    /// `page(range)` builds the rows at positions `range` (the page, possibly empty). It is
    /// called with increasing, non-overlapping ranges: once, or chunk by chunk for a
    /// projected list ([`Output::project`]).
    pub fn paged_lazy(
        &mut self,
        name: &str,
        keys: Vec<Value>,
        page: impl FnMut(std::ops::Range<usize>) -> Result<Vec<Value>, OpError>,
    ) -> Result<bool, OpError> {
        let digest = set_digest(&keys);
        self.paged_lazy_certified(name, keys.len(), digest, page)
    }

    /// [`Output::paged_lazy`] with the list's length and certificate given (e.g. from
    /// [`crate::json::set_digest_by`] over every row's key), for lists whose keys are
    /// costly to hold as values.
    pub fn paged_lazy_certified(
        &mut self,
        name: &str,
        total: usize,
        digest: String,
        mut page: impl FnMut(std::ops::Range<usize>) -> Result<Vec<Value>, OpError>,
    ) -> Result<bool, OpError> {
        let offset = self.offset.clone()?;
        let range = page_of(total, offset, self.limit).0;
        if let Some(cols) = self.projected_columns(name, total) {
            let (cut, text) = project_chunks(name, total, &cols, &mut page)?;
            return self.put_list(name, total, digest, cut, Some(vec![text]));
        }
        // A complete list spanning several pages is rendered whole once and kept, so the
        // next pages read it (`crate::page_cache`); the page is cut from it. A list with
        // rows to pick is rendered whole for them too (its rows come in increasing ranges).
        let keep_all = self.capture
            && self.capture_lazy
            && total > self.limit
            && total <= LAZY_KEEP_MAX_ROWS
            && self.complete.is_none();
        let pick = self.take_pick(name, total)?;
        let (page, all) = if keep_all || pick.is_some() {
            let all = page(0..total)?;
            if all.len() != total {
                return Err(OpError::internal(format!(
                    "{name}: {total} rows expected, got {}",
                    all.len()
                )));
            }
            (all[range.clone()].to_vec(), Some(all))
        } else {
            (page(range.clone())?, None)
        };
        if let (Some(at), Some(all)) = (pick, &all) {
            self.set_picked(at, |i| Ok(all[i].clone()))?;
            return Ok(false);
        }
        let truncated = self.put_list(name, total, digest, page, None)?;
        if let Some(all) = all {
            self.complete = Some((name.to_string(), KeptRows::Values(all)));
        }
        Ok(truncated)
    }

    /// The columns to cut the paged list `name` of `total` rows to, when it is the projected
    /// list ([`Output::project`]) and the call returns it whole.
    fn projected_columns(&self, name: &str, total: usize) -> Option<Vec<String>> {
        self.projection_of(name, total, true)
    }

    /// The columns to cut the paged list `name` of `total` rows to beside its page, when it
    /// is the projected list ([`Output::project_beside`]) and the page is not all of it.
    fn beside_columns(&self, name: &str, total: usize) -> Option<Vec<String>> {
        self.projection_of(name, total, false)
    }

    /// The projection's columns when it names list `name` and applies to a call whose page
    /// of `total` rows is the whole list (`whole`, [`Output::project`]) or is not
    /// ([`Output::project_beside`]).
    fn projection_of(&self, name: &str, total: usize, whole: bool) -> Option<Vec<String>> {
        let p = self
            .projection
            .as_ref()
            .filter(|p| p.list == name && p.admit.is_none() == whole)?;
        let offset = *self.offset.as_ref().ok()?;
        let is_whole = page_of(total, offset, self.limit).0 == (0..total);
        (is_whole == whole).then(|| p.columns.clone())
    }

    /// Whether the list `name` of `total` rows, its page set, is to be rendered whole beside
    /// it ([`Output::project_beside`]).
    fn admits(&self, name: &str, total: usize) -> bool {
        let admit = self.projection.as_ref().and_then(|p| p.admit.as_ref());
        match (admit, self.map.get(name).and_then(Value::as_array)) {
            (Some(admit), Some(page)) => admit(total, page),
            _ => false,
        }
    }

    /// Sets the paged list `name` of `total` rows (§6.1): its page `rows` (or its rows cut to
    /// columns, with `text` the canonical text of the whole rows), total, flags and
    /// certificate `digest`. Returns whether the page is truncated.
    fn put_list(
        &mut self,
        name: &str,
        total: usize,
        digest: String,
        rows: Vec<Value>,
        text: Option<Vec<String>>,
    ) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Paged)?;
        let (range, truncated, cursor) = page_of(total, self.offset.clone()?, self.limit);
        if rows.len() != range.len() {
            return Err(OpError::internal(format!(
                "{name}: {} page rows expected, got {}",
                range.len(),
                rows.len()
            )));
        }
        self.paged_lists += 1;
        self.map.insert(name.to_string(), Value::Array(rows));
        self.map
            .insert(decl.total_field.clone(), Value::from(total));
        self.map.insert("truncated".into(), Value::Bool(truncated));
        self.map.insert("cursor".into(), cursor);
        self.map
            .insert(decl.digest_field.clone(), Value::from(digest));
        if let Some(text) = text {
            self.projected_text = Some((name.to_string(), text));
        }
        Ok(truncated)
    }

    /// [`Output::paged_lazy_certified`] for rows made of typed cells: `row(i, sink)` calls
    /// `sink` with every member of row `i` in key byte order (the canonical order). A page
    /// builds its rows as values; a projected list ([`Output::project`]) is written as
    /// canonical text and cut to its columns straight from the cells, without a value per
    /// row. `digest()` is the list's certificate, not computed when the list is only picked
    /// from ([`Output::pick`]).
    pub fn paged_cells(
        &mut self,
        name: &str,
        total: usize,
        digest: impl FnOnce() -> String,
        row: impl Fn(usize, &mut CellSink<'_>) -> Result<(), OpError> + Sync,
    ) -> Result<bool, OpError> {
        if let Some(cols) = self.projected_columns(name, total) {
            let (cut, parts) = cells_cut(name, total, &cols, &row)?;
            return self.put_list(name, total, digest(), cut, Some(parts));
        }
        let beside = self.beside_columns(name, total);
        let value_of = |i: usize| {
            let mut filled = Ok(());
            let v = cells_value(|sink| filled = row(i, sink));
            filled.map(|()| v)
        };
        if self.pick_with(name, total, value_of)? {
            return Ok(false);
        }
        let truncated =
            self.paged_lazy_certified(name, total, digest(), |page| page.map(value_of).collect())?;
        if let Some(cols) = beside.filter(|_| self.admits(name, total)) {
            let (cut, parts) = cells_cut(name, total, &cols, &row)?;
            self.beside = Some((cut, (name.to_string(), parts)));
        }
        Ok(truncated)
    }

    /// [`Output::paged_cells`] for a row source that owns what it reads: a call whose
    /// result may be cached keeps the source itself as its complete list
    /// ([`KeptRows::Cells`]), not rendered rows. The first page renders only its own rows,
    /// and every later page of the call renders its rows from the kept source without a
    /// kernel run. `bytes` estimates the heap bytes the source holds.
    pub fn paged_cells_owned(
        &mut self,
        name: &str,
        total: usize,
        digest: impl FnOnce() -> String,
        row: impl Fn(usize, &mut CellSink<'_>) + Send + Sync + 'static,
        bytes: usize,
    ) -> Result<bool, OpError> {
        let row: std::sync::Arc<OwnedCells> = std::sync::Arc::new(row);
        let keep = self.capture && total > self.limit && self.complete.is_none();
        let lists = self.paged_lists;
        // The source is kept instead: the lazy path must not render the list whole.
        let capture = std::mem::replace(&mut self.capture, false);
        let shared = std::sync::Arc::clone(&row);
        let truncated = self.paged_cells(name, total, digest, move |i, sink| {
            shared(i, sink);
            Ok(())
        });
        self.capture = capture;
        let truncated = truncated?;
        // Not when the list was picked from instead of paged.
        if keep && self.paged_lists > lists {
            self.complete = Some((name.to_string(), KeptRows::Cells { total, row, bytes }));
        }
        Ok(truncated)
    }

    /// Caps the complete ordered list at `limit` (§6.2): sets the list, its total, its
    /// `_truncated` flag when declared, and its certificate. Returns `total > limit`.
    pub fn capped(&mut self, name: &str, rows: Vec<Value>) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Capped)?;
        let total = rows.len();
        let digest = set_digest(&rows.iter().map(|r| decl.key.of(r)).collect::<Vec<_>>());
        self.capped_certified(name, rows, total, digest)
    }

    /// [`Output::capped`] for kernels that render only the rows that survive the cap:
    /// `head` holds the list's first `min(total, limit)` rows (more are dropped), `total`
    /// is the length of the complete list and `digest` its certificate (e.g. from
    /// [`crate::json::set_digest_by`] over every row's key).
    pub fn capped_certified(
        &mut self,
        name: &str,
        head: Vec<Value>,
        total: usize,
        digest: String,
    ) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Capped)?;
        if head.len() < total.min(self.limit) {
            return Err(OpError::internal(format!(
                "{name}: {} rows rendered, {} needed",
                head.len(),
                total.min(self.limit)
            )));
        }
        let cut = total > self.limit;
        let head: Vec<Value> = head.into_iter().take(self.limit).collect();
        self.set(name, Value::Array(head));
        self.set(&decl.total_field, Value::from(total));
        if let Some(f) = &decl.truncated_field {
            self.set(f, Value::Bool(cut));
        }
        self.set(&decl.digest_field, Value::from(digest));
        Ok(cut)
    }

    /// The row cap of the call (`limit`).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The finished payload.
    pub fn into_payload(self) -> Map<String, Value> {
        self.map
    }

    /// The finished payload, with the complete paged list when one was kept and every page
    /// of the call can be derived from it: the kernel paged exactly one list and left
    /// `truncated` and `cursor` to it. `None` as the second part otherwise.
    pub fn into_complete(self) -> (Map<String, Value>, Option<Complete>) {
        let derivable = self.paged_lists == 1 && !self.own_flags;
        match self.complete {
            Some((list, rows)) if derivable => {
                let payload = self.map.clone();
                (
                    self.map,
                    Some(Complete {
                        payload,
                        list,
                        rows,
                    }),
                )
            }
            _ => (self.map, None),
        }
    }
}
