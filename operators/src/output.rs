//! Payload construction with the framework's list rules (`operators.md` §6): cursor
//! pagination of `rows`, capped secondary lists, totals and completeness certificates. The
//! list's row key and certificate field names come from the registry declaration, so a
//! kernel never spells them.

use crate::args::Args;
use crate::error::OpError;
use crate::json::set_digest;
use crate::registry::{Cut, OpSpec};
use serde_json::{Map, Value};

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
    /// The complete paged list, when captured: its name and every row in list order.
    complete: Option<(String, Vec<Value>)>,
    /// Paged lists set so far, and whether the kernel set `truncated` or `cursor` itself
    /// (then the envelope's flags are not the paged list's alone, and no page is derived
    /// from a kept list: [`Output::into_complete`] returns `None`).
    paged_lists: u32,
    own_flags: bool,
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

/// A kernel's payload with its complete paged list kept (`crate::page_cache`): every page
/// of the same call is `payload` with the list, `truncated` and `cursor` replaced.
#[derive(Debug)]
pub struct Complete {
    /// The payload as the kernel left it (its page at the call's offset).
    pub payload: Map<String, Value>,
    /// The paged list's field name.
    pub list: String,
    /// Every row of the list, in list order.
    pub rows: Vec<Value>,
}

impl Complete {
    /// The payload of the page at `offset` with page size `limit` (§6.1).
    pub fn page(&self, offset: usize, limit: usize) -> Map<String, Value> {
        let (range, truncated, cursor) = page_of(self.rows.len(), offset, limit);
        let mut m = self.payload.clone();
        m.insert(self.list.clone(), Value::Array(self.rows[range].to_vec()));
        m.insert("truncated".into(), Value::Bool(truncated));
        m.insert("cursor".into(), cursor);
        m
    }
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
        }
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
        let keep = self.capture && rows.len() > self.limit;
        if !keep {
            return self.paged_lazy(name, keys, |page| {
                Ok(rows.into_iter().skip(page.start).take(page.len()).collect())
            });
        }
        // The rows are all here already: page them without rendering a second copy.
        self.capture = false;
        let truncated = self.paged_lazy(name, keys, |page| Ok(rows[page].to_vec()));
        self.capture = true;
        let truncated = truncated?;
        self.complete = Some((name.to_string(), rows));
        Ok(truncated)
    }

    /// [`Output::paged`] for long lists whose rows are costly to build: `keys` are the
    /// declared row keys of the complete ordered list (one per row, in row order) and
    /// `page(range)` builds the rows at positions `range` (the page, possibly empty).
    pub fn paged_lazy(
        &mut self,
        name: &str,
        keys: Vec<Value>,
        page: impl FnOnce(std::ops::Range<usize>) -> Result<Vec<Value>, OpError>,
    ) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Paged)?;
        let offset = self.offset.clone()?;
        let total = keys.len();
        let digest = set_digest(&keys);
        let (range, truncated, cursor) = page_of(total, offset, self.limit);
        self.paged_lists += 1;
        // A complete list spanning several pages is rendered whole once and kept, so the
        // next pages read it (`crate::page_cache`); the page is cut from it.
        let keep_all = self.capture
            && self.capture_lazy
            && total > self.limit
            && total <= LAZY_KEEP_MAX_ROWS
            && self.complete.is_none();
        let (page, all) = if keep_all {
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
        if page.len() != range.len() {
            return Err(OpError::internal(format!(
                "{name}: {} page rows expected, got {}",
                range.len(),
                page.len()
            )));
        }
        self.map.insert(name.to_string(), Value::Array(page));
        self.map
            .insert(decl.total_field.clone(), Value::from(total));
        self.map.insert("truncated".into(), Value::Bool(truncated));
        self.map.insert("cursor".into(), cursor);
        self.map
            .insert(decl.digest_field.clone(), Value::from(digest));
        if let Some(all) = all {
            self.complete = Some((name.to_string(), all));
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
