//! The stored data model shared by the segment format, the memtable and the read path
//! (`data-model.md` §6, `format-spec.md` §6): a version row, a content, an edge identity's
//! record and disc, the table marks a segment covers, a segment's contents, the store
//! statistics, and the segment order of rows. Nothing here knows how rows are held.

use crate::error::CorruptionKind;
use crate::op::Origin;
use crate::time::OPEN_END;
use std::collections::BTreeMap;

/// A row table: node versions or edge versions. An image, a segment and the delta each
/// hold one of both, in this order (`Table as usize` indexes their pairs).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Table {
    /// Node versions.
    Nodes = 0,
    /// Edge versions.
    Edges = 1,
}

impl Table {
    /// Both tables, in storage order.
    pub const BOTH: [Table; 2] = [Table::Nodes, Table::Edges];

    /// The edge table when `edges`, else the node table.
    pub(crate) fn of(edges: bool) -> Table {
        if edges {
            Table::Edges
        } else {
            Table::Nodes
        }
    }
}

/// A dictionary of names: the uids, or the strings (rel types, labels, reasons, props
/// texts, discriminators).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dict {
    Uids,
    Strings,
}

/// One value per row table, indexed by [`Table`] (the image's, a segment's and the delta's
/// pairs of columns, lists and indexes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PerTable<T> {
    pub(crate) nodes: T,
    pub(crate) edges: T,
}

impl<T> PerTable<T> {
    /// `f` of each table.
    pub(crate) fn from_fn(mut f: impl FnMut(Table) -> T) -> PerTable<T> {
        PerTable {
            nodes: f(Table::Nodes),
            edges: f(Table::Edges),
        }
    }

    /// The two values, nodes first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        [&self.nodes, &self.edges].into_iter()
    }
}

impl<T> std::ops::Index<Table> for PerTable<T> {
    type Output = T;
    #[inline]
    fn index(&self, k: Table) -> &T {
        match k {
            Table::Nodes => &self.nodes,
            Table::Edges => &self.edges,
        }
    }
}

impl<T> std::ops::IndexMut<Table> for PerTable<T> {
    #[inline]
    fn index_mut(&mut self, k: Table) -> &mut T {
        match k {
            Table::Nodes => &mut self.nodes,
            Table::Edges => &mut self.edges,
        }
    }
}

/// "No string" in optional string-id fields (`reason`, `close_reason`).
pub(crate) const NONE: u32 = u32::MAX;

/// A version's content (`data-model.md` §6.2): label, props, source, provenance_ref.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Content {
    pub(crate) label: u32,
    pub(crate) props: u32,
    pub(crate) source: u32,
    pub(crate) provenance: u32,
}

/// One stored version row, node or edge. Strings are ids into the state's string heap.
#[derive(Clone, Copy)]
pub(crate) struct Row {
    /// uid id (nodes) or edge-identity id (edges).
    pub(crate) ident: u32,
    pub(crate) content: u32,
    pub(crate) vt_s: i64,
    pub(crate) vt_e: i64,
    pub(crate) tt_s: i64,
    pub(crate) tt_e: i64,
    pub(crate) reason: u32,
    pub(crate) close_reason: u32,
    pub(crate) origin: Origin,
    pub(crate) closed_by: Option<Origin>,
    /// False once retired by a later op of the same batch; such a row never existed.
    pub(crate) alive: bool,
}

impl Row {
    /// A row of `ident` by `origin` with nothing else set: no content or reason, valid and
    /// believed from 0 on without end.
    #[inline]
    pub(crate) fn blank(ident: u32, origin: Origin, alive: bool) -> Row {
        Row {
            ident,
            content: NONE,
            vt_s: 0,
            vt_e: OPEN_END,
            tt_s: 0,
            tt_e: OPEN_END,
            reason: NONE,
            close_reason: NONE,
            origin,
            closed_by: None,
            alive,
        }
    }

    #[inline]
    pub(crate) fn believed_now(&self) -> bool {
        self.alive && self.tt_e == OPEN_END
    }
}

/// The discriminator of an edge identity. `"#k"` with canonical decimal `k` is stored as
/// the ordinal `k`, so default ingest discs need no string.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Disc {
    Ordinal(u64),
    Str(u32),
}

/// Store statistics of `data-model.md` §11 (minus `disk_bytes`, read from the file system).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Distinct uids registered in the store.
    pub n_entities: u64,
    /// Node versions stored (believed and superseded).
    pub n_node_versions: u64,
    /// Edge versions stored (believed and superseded).
    pub n_edge_versions: u64,
    /// Smallest `vt_s` of any edge version (µs); `None` without edges.
    pub vt_min: Option<i64>,
    /// Largest edge valid-time end (µs): `vt_e`, or `vt_s + 1` for an open-ended version;
    /// `None` without edges.
    pub vt_max: Option<i64>,
    /// Edge versions per rel type.
    pub rel_type_counts: BTreeMap<String, u64>,
    /// The most edge versions any one source uid has.
    pub max_out_degree: u64,
    /// Transaction time (µs) of the first batch; `None` before any.
    pub first_tt: Option<i64>,
    /// Transaction time (µs) of the last batch; `None` before any.
    pub last_tt: Option<i64>,
    /// Batches applied, failed ones included.
    pub n_batches: u64,
    /// Batches that failed and were rolled back (their tt is still used up).
    pub n_failed_batches: u64,
    /// The ingest ordinal counter (§6.7).
    pub ingest_ordinal: u64,
}

impl Stats {
    /// Counts one more alive edge version valid over `[vt_s, vt_e)`: its count and the
    /// valid-time extent (an open end counts as `vt_s + 1`).
    pub(crate) fn count_edge_version(&mut self, vt_s: i64, vt_e: i64) {
        self.n_edge_versions += 1;
        self.vt_min = Some(self.vt_min.map_or(vt_s, |m| m.min(vt_s)));
        let end = if vt_e < OPEN_END { vt_e } else { vt_s + 1 };
        self.vt_max = Some(self.vt_max.map_or(end, |m| m.max(end)));
    }
}

/// Dense-id counts of every table of the state: a segment covers `[base, end)` of each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) uids: u64,
    pub(crate) strings: u64,
    pub(crate) contents: u64,
    pub(crate) idents: u64,
    pub(crate) slots: u64,
    pub(crate) nodes: u64,
    pub(crate) edges: u64,
}

impl Marks {
    /// The row count of table `k`.
    pub(crate) fn rows(self, k: Table) -> u64 {
        match k {
            Table::Nodes => self.nodes,
            Table::Edges => self.edges,
        }
    }

    pub(crate) fn to_array(self) -> [u64; 7] {
        [
            self.uids,
            self.strings,
            self.contents,
            self.idents,
            self.slots,
            self.nodes,
            self.edges,
        ]
    }

    /// These counts advanced by `n` (in [`Marks::to_array`] order).
    pub(crate) fn plus(self, n: [usize; 7]) -> Marks {
        let mut a = self.to_array();
        a.iter_mut().zip(n).for_each(|(x, k)| *x += k as u64);
        Marks::from_array(a)
    }

    pub(crate) fn from_array(a: [u64; 7]) -> Marks {
        Marks {
            uids: a[0],
            strings: a[1],
            contents: a[2],
            idents: a[3],
            slots: a[4],
            nodes: a[5],
            edges: a[6],
        }
    }
}

/// The disc text `#k` of ordinal `k`, written into `buf` (no allocation).
pub(crate) fn ordinal_text(k: u64, buf: &mut [u8; 21]) -> &str {
    let mut at = buf.len();
    let mut x = k;
    loop {
        at -= 1;
        buf[at] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    at -= 1;
    buf[at] = b'#';
    std::str::from_utf8(&buf[at..]).unwrap_or("#")
}

/// `Some(k)` when `s` is `"#"` followed by the canonical decimal of `k`.
pub(crate) fn ordinal_of(s: &str) -> Option<u64> {
    let d = s.strip_prefix('#')?;
    if d.is_empty() || (d.len() > 1 && d.starts_with('0')) || !d.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    d.parse().ok()
}

/// A closure of a stored row's transaction time: the row (global index in its table),
/// `tt_e`, the kind and reason of the closing op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Closure {
    pub(crate) row: u32,
    pub(crate) tt_e: i64,
    pub(crate) closed_by: Origin,
    pub(crate) close_reason: u32,
}

/// A part of an edge identity that the image stores as a column of its own, in column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdentPart {
    /// The source uid.
    Src = 0,
    /// The destination uid.
    Dst = 1,
    /// The rel type (a string id).
    Rel = 2,
}

impl IdentPart {
    /// The end of an edge: its source (`out`) or its destination (`!out`).
    pub(crate) fn end(out: bool) -> IdentPart {
        if out {
            IdentPart::Src
        } else {
            IdentPart::Dst
        }
    }
    /// This part of `e`.
    #[inline]
    pub(crate) fn of(self, e: &IdentRec) -> u32 {
        match self {
            IdentPart::Src => e.src,
            IdentPart::Dst => e.dst,
            IdentPart::Rel => e.rel,
        }
    }
}

/// An edge identity as a segment stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdentRec {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) rel: u32,
    pub(crate) disc: Disc,
    pub(crate) mapped: bool,
}

/// The content of one segment: every table's entries in `[base, end)` plus the closures
/// of rows below `end` that the segment records (`format-spec.md` §6).
#[derive(Default)]
pub(crate) struct SegData {
    pub(crate) base: Marks,
    pub(crate) uids: Vec<String>,
    pub(crate) strings: Vec<String>,
    pub(crate) contents: Vec<Content>,
    pub(crate) idents: Vec<IdentRec>,
    pub(crate) slots: Vec<u32>,
    /// Rows with `tt_e = OPEN_END`, `closed_by = None`, `close_reason = NONE`; closures
    /// are applied from `closes`.
    pub(crate) nodes: Vec<Row>,
    pub(crate) edges: Vec<Row>,
    /// `[node closures, edge closures]`, each sorted by row.
    pub(crate) closes: PerTable<Vec<Closure>>,
}

impl SegData {
    /// The segment starts where the store is (`at`), every id its records and rows refer
    /// to exists once it is appended (below its end marks), and every row's times are
    /// legal. `Err(kind)` names the first violation. The loaders check duplicates and
    /// closures themselves.
    pub(crate) fn check_at(&self, at: Marks) -> std::result::Result<(), CorruptionKind> {
        if self.base != at {
            return Err(format!("segment starts at {:?}, store is at {:?}", self.base, at).into());
        }
        let end = self.end();
        let (nu, ns, nc, ni) = (
            end.uids as u32,
            end.strings as u32,
            end.contents as u32,
            end.idents as u32,
        );
        let opt_ok = |s: u32| s == NONE || s < ns;
        if self.contents.iter().any(|c| {
            [c.label, c.props, c.source, c.provenance]
                .iter()
                .any(|&x| x >= ns)
        }) {
            return Err("content refers to a string that does not exist".into());
        }
        for e in &self.idents {
            if e.src >= nu || e.dst >= nu || e.rel >= ns {
                return Err("edge identity refers to a missing uid or string".into());
            }
            if matches!(e.disc, Disc::Str(s) if s >= ns) {
                return Err("edge identity disc refers to a missing string".into());
            }
        }
        if self.slots.iter().any(|&s| s != NONE && s >= ni) {
            return Err("ordinal slot refers to a missing edge identity".into());
        }
        for (rows, limit) in [(&self.nodes, nu), (&self.edges, ni)] {
            for row in rows {
                if row.ident >= limit || row.content >= nc || !opt_ok(row.reason) {
                    return Err("row refers to a missing identity, content or string".into());
                }
                if !(row.vt_s < row.vt_e && (0..crate::time::OPEN_END).contains(&row.tt_s)) {
                    return Err(format!(
                        "row with illegal times vt [{}, {}) tt_s {}",
                        row.vt_s, row.vt_e, row.tt_s
                    )
                    .into());
                }
            }
        }
        match self
            .closes
            .iter()
            .flatten()
            .find(|c| !opt_ok(c.close_reason))
        {
            Some(c) => Err(format!("closure of row {} is inconsistent", c.row).into()),
            None => Ok(()),
        }
    }

    pub(crate) fn end(&self) -> Marks {
        self.base.plus([
            self.uids.len(),
            self.strings.len(),
            self.contents.len(),
            self.idents.len(),
            self.slots.len(),
            self.nodes.len(),
            self.edges.len(),
        ])
    }
}

pub(crate) fn open_row(r: &Row) -> Row {
    Row {
        tt_e: OPEN_END,
        closed_by: None,
        close_reason: NONE,
        ..*r
    }
}

/// The segment order of `rows` (`format-spec.md` §6.1) — sorted by `(vt_s, ident, tt_s,
/// old position)` — as `new_of[old] = new`; `None` when the rows are already in it (an
/// ingest in time order).
pub(crate) fn segment_order(rows: &[Row]) -> Option<Vec<u32>> {
    use rayon::prelude::*;
    let key = |x: &Row| (x.vt_s, x.ident, x.tt_s);
    if rows.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        return None;
    }
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.par_sort_unstable_by_key(|&r| {
        let x = &rows[r as usize];
        (x.vt_s, x.ident, x.tt_s, r)
    });
    let mut new_of = vec![0u32; rows.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    Some(new_of)
}

/// Moves each row `i` to position `new_of[i]` in place, one cycle at a time (no second
/// copy of the rows); `new_of` ends as the identity.
pub(crate) fn move_rows(rows: &mut [Row], new_of: &mut [u32]) {
    for i in 0..rows.len() {
        while new_of[i] as usize != i {
            let j = new_of[i] as usize;
            rows.swap(i, j);
            new_of.swap(i, j);
        }
    }
}

/// Puts `rows`, the store's rows `first..` of their table, in segment order and renumbers
/// the closures of them in `closes` to match (the others keep their numbers); `closes`
/// ends sorted by row.
pub(crate) fn permute_from(rows: &mut [Row], closes: &mut [Closure], first: u32) {
    let Some(mut new_of) = segment_order(rows) else {
        return;
    };
    for c in closes.iter_mut().filter(|c| c.row >= first) {
        c.row = first + new_of[(c.row - first) as usize];
    }
    closes.sort_unstable_by_key(|c| c.row);
    move_rows(rows, &mut new_of);
}

pub(crate) fn closure_of(row: u32, r: &Row) -> Option<Closure> {
    (r.tt_e != OPEN_END).then(|| Closure {
        row,
        tt_e: r.tt_e,
        closed_by: r.closed_by.unwrap_or(Origin::Assert),
        close_reason: r.close_reason,
    })
}
