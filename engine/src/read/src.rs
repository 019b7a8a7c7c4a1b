//! [`Src`]: where a version view and a point read find rows, strings and identity lists
//! (the image alone, or the image with the delta above it), with the
//! per-source reads every snapshot read is written over.

use super::*;

/// Where a version view and a point read find rows, strings and identity lists: the
/// image alone (nothing above it), or the image with the delta above it. Both number
/// everything the same way (the delta's ids continue the image's), so ids and views from
/// either mix freely.
#[derive(Clone, Copy)]
pub(crate) enum Src<'a> {
    Map(&'a Image),
    /// The mapped image with decoded flush segments above it (`rows.rs`).
    Over(&'a Rows),
}

/// Single fields of row `i` of table `k`: the same-named accessor of
/// the image (which reads that field's column alone) or of the image with the delta.
macro_rules! row_fields {
    ($($(#[$m:meta])* $name:ident -> $t:ty;)*) => {
        impl Src<'_> {
            $(
                $(#[$m])*
                #[inline]
                pub(super) fn $name(self, k: Table, i: u32) -> $t {
                    match self {
                        Src::Map(b) => b.$name(k, i),
                        Src::Over(o) => o.$name(k, i),
                    }
                }
            )*
        }
    };
}

row_fields! {
    row_ident -> u32;
    /// `[vt_s, vt_e)`.
    row_vt -> (i64, i64);
    /// `vt_s` alone (one column).
    row_vt_s -> i64;
    row_tt_s -> i64;
    /// `(tt_e, closed_by, close_reason)`.
    row_close -> (i64, Option<Origin>, u32);
    row_origin -> Origin;
    row_reason -> u32;
    row_alive -> bool;
}

impl<'a> Src<'a> {
    /// Row `i` of table `k` is believed at `as_of_tt` (a mapped row reads its alive,
    /// `tt_s` and closure columns only).
    #[inline]
    pub(super) fn believed(self, k: Table, i: u32, as_of_tt: i64) -> bool {
        let a = clamp_tt(as_of_tt);
        self.row_alive(k, i) && self.row_tt_s(k, i) <= a && a < self.row_close(k, i).0
    }
    /// Row `i` of table `k`.
    #[inline]
    pub(super) fn row(self, k: Table, i: u32) -> Row {
        match self {
            Src::Map(b) => b.row(k, i),
            Src::Over(o) => o.row(k, i),
        }
    }
    #[inline]
    pub(super) fn row_content(self, k: Table, i: u32) -> Content {
        let c = match self {
            Src::Map(b) => b.row_content(k, i),
            Src::Over(o) => o.row_content(k, i),
        };
        self.content(c)
    }
    /// Part `part` of identity `id`.
    #[inline]
    pub(super) fn ident_part(self, id: u32, part: IdentPart) -> u32 {
        match self {
            Src::Map(b) => b.ident_part(id, part),
            Src::Over(o) => o.ident_part(id, part),
        }
    }
    #[inline]
    pub(super) fn string(self, id: u32) -> &'a str {
        match self {
            Src::Map(b) => b.string(id),
            Src::Over(o) => o.string(id),
        }
    }
    #[inline]
    pub(super) fn uid(self, id: u32) -> &'a str {
        match self {
            Src::Map(b) => b.uid_name(id),
            Src::Over(o) => o.uid_name(id),
        }
    }
    #[inline]
    pub(super) fn string_id(self, s: &str) -> Option<u32> {
        match self {
            Src::Map(b) => b.string_id(s),
            Src::Over(o) => o.string_id(s),
        }
    }
    #[inline]
    pub(super) fn uid_id(self, uid: &str) -> Option<u32> {
        match self {
            Src::Map(b) => b.uid_id(uid),
            Src::Over(o) => o.uid_id(uid),
        }
    }
    #[inline]
    pub(super) fn content(self, id: u32) -> Content {
        match self {
            Src::Map(b) => b.content(id),
            Src::Over(o) => o.content(id),
        }
    }
    #[inline]
    pub(super) fn ident(self, id: u32) -> IdentRec {
        match self {
            Src::Map(b) => b.ident(id),
            Src::Over(o) => o.ident(id),
        }
    }
    #[inline]
    pub(super) fn disc_text(self, d: Disc) -> String {
        match d {
            Disc::Ordinal(k) => format!("#{k}"),
            Disc::Str(id) => self.string(id).to_string(),
        }
    }
    /// The 12 eid bytes of an identity (cached per identity in memory, derived when mapped).
    #[inline]
    pub(super) fn eid(self, ident: u32) -> Id12 {
        match self {
            Src::Map(b) => mapscan::eid(b, ident),
            Src::Over(o) => o.eid(ident),
        }
    }
    #[inline]
    pub(super) fn node_postings(self, uid: u32) -> Cow<'a, [u32]> {
        match self {
            Src::Map(b) => Cow::Owned(b.node_postings(uid)),
            Src::Over(o) => Cow::Owned(o.node_postings(uid)),
        }
    }
    #[inline]
    pub(super) fn edge_postings(self, ident: u32) -> Cow<'a, [u32]> {
        match self {
            Src::Map(b) => Cow::Owned(b.edge_postings(ident)),
            Src::Over(o) => Cow::Owned(o.edge_postings(ident)),
        }
    }
    /// Edge rows with `src` (`out`) or `dst` (`!out`) = `uid`, ascending.
    #[inline]
    pub(super) fn adjacency(self, uid: u32, out: bool) -> Cow<'a, [u32]> {
        match (self, out) {
            (Src::Map(b), true) => Cow::Owned(b.out_adj(uid)),
            (Src::Map(b), false) => Cow::Owned(b.in_adj(uid)),
            (Src::Over(o), out) => Cow::Owned(o.adjacency(uid, out)),
        }
    }
    /// The identity `(src, dst, rel_type, disc)` names, if it exists.
    pub(super) fn lookup_edge(self, src: &str, dst: &str, rel: &str, disc: &str) -> Option<u32> {
        match self {
            Src::Map(b) => {
                let (s, d) = (b.uid_id(src)?, b.uid_id(dst)?);
                let rel = b.string_id(rel)?;
                let disc = match ordinal_of(disc) {
                    Some(k) => Disc::Ordinal(k),
                    None => Disc::Str(b.string_id(disc)?),
                };
                if let Disc::Ordinal(k) = disc {
                    if let Some(id) = b.slot(k) {
                        let e = b.ident(id);
                        if (e.src, e.dst, e.rel) == (s, d, rel) {
                            return Some(id);
                        }
                    }
                }
                b.find_mapped_ident(s, d, rel, disc)
            }
            Src::Over(o) => {
                let (s, d) = (o.uid_id(src)?, o.uid_id(dst)?);
                let rel = o.string_id(rel)?;
                let disc = match ordinal_of(disc) {
                    Some(k) => Disc::Ordinal(k),
                    None => Disc::Str(o.string_id(disc)?),
                };
                o.find_ident(s, d, rel, disc)
            }
        }
    }

    /// Every edge identity in eid order, a bounded group at a time (see
    /// [`mapscan::digest_groups`]); for mapped sources, whose eids are derived.
    #[inline]
    pub(super) fn digest_groups(self, f: impl FnMut(&[(Id12, u32)])) {
        let n = match self {
            Src::Map(b) => b.marks().idents as usize,
            Src::Over(o) => o.delta.end().idents as usize,
        };
        mapscan::digest_groups(n as u32, |i| self.eid(i), mapscan::IDENT_GROUP, f)
    }

    /// Storage-order ids of the rows of table `k` believed at `as_of_tt` that overlap the
    /// window (every believed row when `None`).
    #[inline]
    pub(super) fn window_ids(self, k: Table, w: Option<(i64, i64)>, as_of_tt: i64) -> Vec<u32> {
        match self {
            Src::Map(b) => mapscan::overlapping(b, k, w, as_of_tt, None),
            Src::Over(o) => o.window_ids(k, w, as_of_tt, None),
        }
    }

    /// Storage-order ids of the rows of table `k` believed at `as_of_tt` that start or end
    /// inside `(lo, hi]`.
    #[inline]
    pub(super) fn boundary_ids(self, k: Table, lo: i64, hi: i64, as_of_tt: i64) -> Vec<u32> {
        match self {
            Src::Map(b) => mapscan::boundaries(b, k, lo, hi, as_of_tt),
            Src::Over(o) => o.boundary_ids(k, lo, hi, as_of_tt),
        }
    }

    /// Views of edge rows sorted by `(vt_s, eid, tt_s)` (row id last, so the unstable sort
    /// is deterministic). An eid is derived (hashed) where not cached: sort by `vt_s` first
    /// and derive eids only to order rows that share a `vt_s`.
    #[inline]
    pub(super) fn sorted_edges(self, idx: Vec<u32>) -> Vec<EdgeVersion<'a>> {
        let rows: Vec<(i64, u32)> = idx
            .iter()
            .map(|&i| (self.row_vt(Table::Edges, i).0, i))
            .collect();
        self.sorted_pairs(rows)
    }

    /// [`Src::sorted_edges`] of `(vt_s, row)` pairs whose `vt_s` the caller has read.
    pub(super) fn sorted_pairs(self, mut rows: Vec<(i64, u32)>) -> Vec<EdgeVersion<'a>> {
        rows.sort_unstable();
        let mut out = Vec::with_capacity(rows.len());
        for run in rows.chunk_by(|a, b| a.0 == b.0) {
            if run.len() == 1 {
                out.push(EdgeVersion {
                    src: self,
                    idx: run[0].1,
                });
                continue;
            }
            let mut keys: Vec<(Id12, i64, u32)> = run
                .iter()
                .map(|&(_, i)| {
                    (
                        self.eid(self.row_ident(Table::Edges, i)),
                        self.row_tt_s(Table::Edges, i),
                        i,
                    )
                })
                .collect();
            keys.sort_unstable();
            out.extend(keys.into_iter().map(|k| EdgeVersion {
                src: self,
                idx: k.2,
            }));
        }
        out
    }
}

impl Src<'_> {
    /// The ids of the known uids among `uids`, ascending, without repeats (for
    /// `binary_search` membership tests).
    #[inline]
    pub(super) fn uid_set(self, uids: &[String]) -> Vec<u32> {
        let mut set: Vec<u32> = uids.iter().filter_map(|u| self.uid_id(u)).collect();
        set.sort_unstable();
        set.dedup();
        set
    }

    /// The order of edge row `row` (of identity `ident`) among the versions that share its
    /// `vt_s`: `(eid, tt_s, row)`, as [`Src::sorted_edges`] orders them.
    #[inline]
    pub(super) fn tie_key(self, row: u32, ident: u32) -> (Id12, i64, u32) {
        (self.eid(ident), self.row_tt_s(Table::Edges, row), row)
    }
}
