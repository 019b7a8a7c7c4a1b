//! Scans of a read-only store's mapped base image (`base.rs`, `format-spec.md` §9.4)
//! without decoding it into memory: window, boundary and start selections over fixed zones
//! of rows, each zone skipped when its valid-time bounds rule it out; the compact edge
//! columns; the lowercase uid heap; and the row orders of the store digest.
//!
//! Determinism: zones are fixed row ranges; the hits of each zone are listed in row order
//! and the lists concatenated in zone order, so every selection is in ascending row order
//! whatever the thread count.
//!
//! [`Image`] is the image as the read path holds it: the format's [`Base`], which knows
//! nothing of these scans, with the scans' caches ([`ScanCaches`]), built once per open
//! store by the first scan that needs each: zone bounds (32 bytes per [`ZONE_ROWS`] rows),
//! the rows not believed now, the edge columns (20 bytes per edge row, only when a grouped
//! aggregation asks for them) and the lowercase heap (about the uid bytes).
//!
//! Memory: a selection holds its answer plus one zone's decoded columns per worker.

use crate::format::base::{Base, BlockCols, RowBlock};
use crate::format::mmap::SegBytes;
use crate::ident::{self, Id12};
use crate::lowercase::LowerHeap;
use crate::model::{ordinal_text, Disc, IdentPart, PerTable, SegData, Table};
use crate::rows::cols::EdgeColumns;
use crate::time::{clamp_tt, overlaps};
use rayon::prelude::*;
use std::ops::{Deref, Range};
use std::sync::{Arc, OnceLock};

/// A base image and the read path's caches over it; reads of the image itself go through
/// [`Deref`] to the [`Base`].
pub(crate) struct Image {
    base: Base,
    pub(crate) caches: ScanCaches,
}

/// The read path's per-image caches (see the module doc).
#[derive(Default)]
pub(crate) struct ScanCaches {
    /// Valid-time bounds of each zone of rows, per table (indexed by `Table as usize`).
    pub(crate) zones: PerTable<OnceLock<Vec<Zone>>>,
    /// The compact edge columns of every edge row.
    pub(crate) cols: OnceLock<Arc<EdgeColumns>>,
    /// The lowercase uid search heap.
    pub(crate) lower: OnceLock<LowerHeap>,
    /// The edge rows not believed at the current belief state.
    pub(crate) unbelieved: OnceLock<Unbelieved>,
}

impl Image {
    /// The image with no cache built yet.
    pub(crate) fn new(base: Base) -> Image {
        Image {
            base,
            caches: ScanCaches::default(),
        }
    }

    /// The image of no rows, encoded in memory (sequence number 0, which no segment file
    /// has): what a store without an image file reads and writes over.
    pub(crate) fn empty() -> Image {
        // Encoded once per process: every store without an image (and every compaction's
        // reload) starts from these bytes.
        static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        let bytes = BYTES.get_or_init(|| {
            crate::format::seg::encode_as(
                0,
                &SegData::default(),
                &|_| 0,
                crate::format::seg::SEG_MINOR_ARITH,
            )
            .0
        });
        // The encoder's own output for no rows: a failure to open it is a bug of the
        // format layer, caught by every test that creates a store.
        let base = Base::open(SegBytes::Heap(bytes.clone())).expect("the image of no rows opens");
        Image::new(base)
    }
}

impl Deref for Image {
    type Target = Base;

    #[inline]
    fn deref(&self) -> &Base {
        &self.base
    }
}

/// Rows per zone: the unit of pruning and of parallel work.
pub(crate) const ZONE_ROWS: usize = 4096;

/// The valid-time bounds of a zone's rows (every row, believed or not, so the bounds hold
/// at every belief state).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zone {
    vs_min: i64,
    vs_max: i64,
    ve_min: i64,
    ve_max: i64,
}

impl Zone {
    fn of(vt_s: &[i64], vt_e: &[i64]) -> Zone {
        let min_max = |v: &[i64]| {
            v.iter()
                .fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
        };
        let ((vs_min, vs_max), (ve_min, ve_max)) = (min_max(vt_s), min_max(vt_e));
        Zone {
            vs_min,
            vs_max,
            ve_min,
            ve_max,
        }
    }

    /// Some row may overlap `[a, b)`.
    fn may_overlap(&self, a: i64, b: i64) -> bool {
        self.vs_min < b && a < self.ve_max
    }

    /// Some row may start in `[a, b]`.
    fn may_start_in(&self, a: i64, b: i64) -> bool {
        a <= self.vs_max && self.vs_min <= b
    }

    /// Some row may end in `[a, b]`.
    fn may_end_in(&self, a: i64, b: i64) -> bool {
        a <= self.ve_max && self.ve_min <= b
    }
}

/// The zones of table `k`, computed by the first caller.
fn zones(b: &Image, k: Table) -> &[Zone] {
    b.caches.zones[k].get_or_init(|| {
        (0..b.n_rows(k).div_ceil(ZONE_ROWS))
            .into_par_iter()
            .map(|z| {
                let (s, e) = b.vt_cols(k, z * ZONE_ROWS, (z + 1) * ZONE_ROWS);
                Zone::of(&s, &e)
            })
            .collect()
    })
}

/// `f(row, block, j)` for every row of table `k` believed at `as_of_tt` in a zone that
/// `zone_ok` admits (`j`: the row's place in its decoded `block`, which holds `vt_s`, `vt_e`
/// and, with `with_ident`, the identity column), in ascending row order.
fn select<T: Send>(
    b: &Image,
    k: Table,
    as_of_tt: i64,
    with_ident: bool,
    zone_ok: impl Fn(&Zone) -> bool + Sync,
    f: impl Fn(u32, &RowBlock, usize) -> Option<T> + Sync,
) -> Vec<T> {
    let zs = zones(b, k);
    let hit: Vec<usize> = (0..zs.len()).filter(|&z| zone_ok(&zs[z])).collect();
    select_zones(b, k, &hit, as_of_tt, with_ident, f)
}

/// [`select`] over the zones `hit` (ascending).
fn select_zones<T: Send>(
    b: &Image,
    k: Table,
    hit: &[usize],
    as_of_tt: i64,
    with_ident: bool,
    f: impl Fn(u32, &RowBlock, usize) -> Option<T> + Sync,
) -> Vec<T> {
    let a = clamp_tt(as_of_tt);
    // Zones in groups: a group's per-zone lists are appended to the answer before the next
    // group, so the temporary lists of a large answer never coexist. The lists' buffers
    // are kept from group to group (`append` empties a list but keeps its buffer): freed,
    // they would go back to the system and be faulted in again by the next group (at 10M
    // rows, as many fresh pages as the answer).
    let mut out = Vec::new();
    let mut parts: Vec<Vec<T>> = Vec::new();
    parts.resize_with(hit.len().min(ZONE_GROUP), Vec::new);
    for group in hit.chunks(ZONE_GROUP) {
        parts.par_iter_mut().zip(group).for_each(|(part, &z)| {
            let start = z * ZONE_ROWS;
            let blk = b.row_block(
                k,
                start,
                start + ZONE_ROWS,
                a,
                BlockCols::starts(true, with_ident),
            );
            part.extend(
                (0..blk.vt_s.len())
                    .filter(|&j| blk.believed(j, a))
                    .filter_map(|j| f((start + j) as u32, &blk, j)),
            );
        });
        parts.iter_mut().for_each(|p| out.append(p));
    }
    out
}

/// Zones per group of [`select`].
const ZONE_GROUP: usize = 64;

/// A window read through the valid-time index (`format-spec.md` §6.5, chunks 77–80):
/// `ranges` are `(by_end, lo, hi)`, the index entries with `vt_s` (or, `by_end`, a long
/// row's `vt_e`) in `[lo, hi)`; their rows are the candidates, and `f` (with belief) alone
/// decides membership. `None` — answer by zones instead — when the image has no index or
/// the candidates exceed an eighth of the table. Candidates clustered in few zones are
/// answered by decoding those zones; scattered ones row by row. Ascending row order.
fn via_index<T: Send>(
    b: &Image,
    k: Table,
    ranges: &[(bool, i64, i64)],
    as_of_tt: i64,
    with_ident: bool,
    f: impl Fn(u32, &RowBlock, usize) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    if !b.has_time_index() {
        return None;
    }
    let pos: Vec<(bool, usize, usize)> = ranges
        .iter()
        .map(|&(e, lo, hi)| {
            let a = b.time_rank(k, e, lo);
            (e, a, b.time_rank(k, e, hi).max(a))
        })
        .collect();
    let n: usize = pos.iter().map(|p| p.2 - p.1).sum();
    if n.saturating_mul(8) > b.n_rows(k) {
        return None;
    }
    let mut rows: Vec<u32> = Vec::with_capacity(n);
    for &(e, lo, hi) in &pos {
        rows.extend(b.time_rows(k, e, lo, hi));
    }
    rows.sort_unstable();
    rows.dedup();
    let mut hit: Vec<usize> = rows.iter().map(|&r| r as usize / ZONE_ROWS).collect();
    hit.dedup();
    // A zone decode costs a few nanoseconds a row, a single row's random reads about a
    // hundred times that.
    if hit.len() * ZONE_ROWS <= 64 * rows.len() {
        return Some(select_zones(b, k, &hit, as_of_tt, with_ident, f));
    }
    let a = clamp_tt(as_of_tt);
    Some(
        rows.par_iter()
            .with_min_len(1024)
            .filter_map(|&r| {
                let blk = b.row_block(
                    k,
                    r as usize,
                    r as usize + 1,
                    a,
                    BlockCols::starts(true, with_ident),
                );
                (!blk.vt_s.is_empty() && blk.believed(0, a))
                    .then(|| f(r, &blk, 0))
                    .flatten()
            })
            .collect(),
    )
}

/// The index ranges of the rows that may overlap `[a, e)`: those starting in it, and the
/// long rows starting before it that end after `a` — the shorter of the long rows with
/// `vt_e > a` and all rows with `vt_s < a`.
fn overlap_ranges(b: &Image, k: Table, a: i64, e: i64) -> Vec<(bool, i64, i64)> {
    let mut v = vec![(false, a, e)];
    if a > i64::MIN {
        let long_after = b.n_long(k) - b.time_rank(k, true, a.saturating_add(1));
        if long_after <= b.time_rank(k, false, a) {
            v.push((true, a.saturating_add(1), i64::MAX));
        } else {
            v.push((false, i64::MIN, a));
        }
    }
    v
}

/// Ascending rows of table `k` believed at `as_of_tt` that overlap `w` (all when `None`),
/// of an edge identity with a rel id in `rels` when given (edges only).
pub(crate) fn overlapping(
    b: &Image,
    k: Table,
    w: Option<(i64, i64)>,
    as_of_tt: i64,
    rels: Option<&[u32]>,
) -> Vec<u32> {
    overlapping_map(b, k, w, as_of_tt, rels, false, |r, _, _| r)
}

/// [`overlapping`], each selected row given as `g(row, block, j)` (see [`select`]; the
/// block holds the identity column when `with_ident`): the columns a caller needs are read
/// from the zone's sequential decode instead of row by row.
pub(crate) fn overlapping_map<T: Send>(
    b: &Image,
    k: Table,
    w: Option<(i64, i64)>,
    as_of_tt: i64,
    rels: Option<&[u32]>,
    with_ident: bool,
    g: impl Fn(u32, &RowBlock, usize) -> T + Sync,
) -> Vec<T> {
    let with_ident = with_ident || rels.is_some();
    // A window that holds every row's start holds every row (`vt_e > vt_s`): no row is
    // tested against it and no zone bound is needed (the first scan of an open store would
    // otherwise decode the valid-time columns once more to bound its zones).
    let w = w.filter(|&(a, e)| {
        let n = b.n_rows(k);
        !(b.has_time_index() && b.time_rank(k, false, a) == 0 && b.time_rank(k, false, e) == n)
    });
    let f = |r: u32, blk: &RowBlock, j: usize| {
        let inside = w.is_none_or(|(a, e)| overlaps(blk.vt_s[j], blk.vt_e[j], a, e));
        let rel_ok =
            || rels.is_none_or(|rs| rs.contains(&b.ident_part(blk.ident[j], IdentPart::Rel)));
        (inside && rel_ok()).then(|| g(r, blk, j))
    };
    if let Some((a, e)) = w {
        let ranges = overlap_ranges(b, k, a, e);
        if let Some(v) = via_index(b, k, &ranges, as_of_tt, with_ident, f) {
            return v;
        }
    }
    select(
        b,
        k,
        as_of_tt,
        with_ident,
        |z| w.is_none_or(|(a, e)| z.may_overlap(a, e)),
        f,
    )
}

/// Ascending rows of table `k` believed at `as_of_tt` that start or end inside `(lo, hi]`.
pub(crate) fn boundaries(b: &Image, k: Table, lo: i64, hi: i64, as_of_tt: i64) -> Vec<u32> {
    if lo >= hi {
        return Vec::new();
    }
    let f = |r: u32, blk: &RowBlock, j: usize| {
        let (s, e) = (blk.vt_s[j], blk.vt_e[j]);
        ((lo < s && s <= hi) || (lo < e && e <= hi)).then_some(r)
    };
    // A start in (lo, hi] is found by vt_s; an end in (lo, hi] of an instantaneous row
    // means vt_s in [lo, hi), of a long row it is found by vt_e.
    let ranges = [
        (false, lo, hi.saturating_add(1)),
        (true, lo.saturating_add(1), hi.saturating_add(1)),
    ];
    if let Some(v) = via_index(b, k, &ranges, as_of_tt, false, f) {
        return v;
    }
    select(
        b,
        k,
        as_of_tt,
        false,
        |z| z.may_start_in(lo + 1, hi) || z.may_end_in(lo + 1, hi),
        f,
    )
}

/// `(vt_s, row, identity)` of the edge rows believed at `as_of_tt` with
/// `t_a <= vt_s < t_b`, in ascending row order.
pub(crate) fn start_rows(b: &Image, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<(i64, u32, u32)> {
    if t_a >= t_b {
        return Vec::new();
    }
    let f = |r: u32, blk: &RowBlock, j: usize| {
        let t = blk.vt_s[j];
        (t_a <= t && t < t_b).then_some((t, r, blk.ident[j]))
    };
    if let Some(v) = via_index(b, Table::Edges, &[(false, t_a, t_b)], as_of_tt, true, f) {
        return v;
    }
    select(
        b,
        Table::Edges,
        as_of_tt,
        true,
        |z| z.may_start_in(t_a, t_b - 1),
        f,
    )
}

/// Part `part` of the identities `ids`, decoded as one range when they are dense (ingest
/// creates identities in row order), else read one by one.
pub(crate) fn ident_parts(b: &Image, ids: &[u32], part: IdentPart) -> Vec<u32> {
    let lo = ids.iter().copied().min().unwrap_or(0) as usize;
    let hi = ids.iter().copied().max().unwrap_or(0) as usize;
    if hi - lo < 4 * ids.len() {
        let v = b.ident_part_range(part, lo, hi + 1);
        ids.iter()
            .map(|&i| v.get(i as usize - lo).copied().unwrap_or(u32::MAX))
            .collect()
    } else {
        ids.iter().map(|&i| b.ident_part(i, part)).collect()
    }
}

/// The edge rows not believed at the **current** belief state — any `as_of_tt` at or
/// after `max_tt`, the largest stored transaction time — ascending: there a row is believed
/// exactly when it is not listed, so whole zones are answered without reading a row.
pub(crate) struct Unbelieved {
    max_tt: i64,
    ids: Vec<u32>,
    /// The listed rows' `vt_s`, ascending.
    vt_s: Vec<i64>,
}

impl Unbelieved {
    /// The listed rows in `[a, e)`.
    fn within(&self, a: u32, e: u32) -> &[u32] {
        let (i, j) = (
            self.ids.partition_point(|&x| x < a),
            self.ids.partition_point(|&x| x < e),
        );
        &self.ids[i..j]
    }
}

/// The edge table's [`Unbelieved`], computed by the first caller.
fn unbelieved(b: &Image) -> &Unbelieved {
    b.caches.unbelieved.get_or_init(|| {
        let max_tt = b.max_tt(Table::Edges);
        let a = clamp_tt(max_tt);
        let parts: Vec<Vec<(u32, i64)>> = (0..b.n_rows(Table::Edges).div_ceil(ZONE_ROWS))
            .into_par_iter()
            .map(|z| {
                let start = z * ZONE_ROWS;
                let blk = b.row_block(
                    Table::Edges,
                    start,
                    start + ZONE_ROWS,
                    a,
                    BlockCols::starts(false, false),
                );
                (0..blk.vt_s.len())
                    .filter(|&j| !blk.believed(j, a))
                    .map(|j| ((start + j) as u32, blk.vt_s[j]))
                    .collect()
            })
            .collect();
        let (ids, mut vt_s): (Vec<u32>, Vec<i64>) = parts.into_iter().flatten().unzip();
        vt_s.sort_unstable();
        Unbelieved { max_tt, ids, vt_s }
    })
}

/// Appends run `r` to `runs`, merging it into the last run when they touch.
fn push_run(runs: &mut Vec<Range<u32>>, r: Range<u32>) {
    match runs.last_mut() {
        _ if r.is_empty() => {}
        Some(last) if last.end == r.start => last.end = r.end,
        _ => runs.push(r),
    }
}

/// The edge rows believed at `as_of_tt` with `t_a <= vt_s < t_b`, as maximal runs of
/// consecutive rows, ascending. At the current belief state a zone whose rows all start
/// in the window is its row range minus the unbelieved rows, with nothing decoded.
pub(crate) fn start_runs(b: &Image, t_a: i64, t_b: i64, as_of_tt: i64) -> Vec<Range<u32>> {
    if t_a >= t_b {
        return Vec::new();
    }
    let f =
        |r: u32, blk: &RowBlock, j: usize| (t_a <= blk.vt_s[j] && blk.vt_s[j] < t_b).then_some(r);
    if let Some(v) = via_index(b, Table::Edges, &[(false, t_a, t_b)], as_of_tt, false, f) {
        let mut runs = Vec::new();
        v.into_iter().for_each(|r| push_run(&mut runs, r..r + 1));
        return runs;
    }
    let n = b.n_rows(Table::Edges);
    let zs = zones(b, Table::Edges);
    let unb = unbelieved(b);
    let current = clamp_tt(as_of_tt) >= clamp_tt(unb.max_tt);
    let a = clamp_tt(as_of_tt);
    let hit: Vec<usize> = (0..zs.len())
        .filter(|&z| zs[z].may_start_in(t_a, t_b - 1))
        .collect();
    let parts: Vec<Vec<Range<u32>>> = hit
        .par_iter()
        .map(|&z| {
            let (start, end) = (z * ZONE_ROWS, ((z + 1) * ZONE_ROWS).min(n));
            let mut runs = Vec::new();
            if current && t_a <= zs[z].vs_min && zs[z].vs_max < t_b {
                let mut from = start as u32;
                for &u in unb.within(start as u32, end as u32) {
                    push_run(&mut runs, from..u);
                    from = u + 1;
                }
                push_run(&mut runs, from..end as u32);
                return runs;
            }
            let blk = b.row_block(Table::Edges, start, end, a, BlockCols::starts(false, false));
            for j in 0..blk.vt_s.len() {
                if t_a <= blk.vt_s[j] && blk.vt_s[j] < t_b && blk.believed(j, a) {
                    let r = (start + j) as u32;
                    push_run(&mut runs, r..r + 1);
                }
            }
            runs
        })
        .collect();
    let mut out: Vec<Range<u32>> = Vec::new();
    parts
        .into_iter()
        .flatten()
        .for_each(|r| push_run(&mut out, r));
    out
}

/// Per bucket `[t_a + i·stride, …) ∩ [t_a, t_b)` (`n` buckets), the edge rows believed at
/// `as_of_tt` that start in it, of rel id `rel` when given. At the current belief state,
/// without a rel filter, a zone whose rows all start in one bucket adds its row count minus
/// its unbelieved rows, with nothing decoded; other zones are decoded and counted row by
/// row. Integer sums in zone order: the counts do not depend on the thread count.
pub(crate) fn start_counts(
    b: &Image,
    (t_a, t_b, stride): (i64, i64, i64),
    as_of_tt: i64,
    rel: Option<u32>,
    n: usize,
) -> Vec<u64> {
    let unb = unbelieved(b);
    let current = rel.is_none() && clamp_tt(as_of_tt) >= clamp_tt(unb.max_tt);
    if current && b.has_time_index() {
        // At the current belief state a bucket's count is the rows starting in it (two
        // binary searches in the valid-time index) less the unbelieved ones among them.
        let starting = |lo: i64, hi: i64| {
            let below =
                |t: i64| b.time_rank(Table::Edges, false, t) - unb.vt_s.partition_point(|&v| v < t);
            below(hi).saturating_sub(below(lo)) as u64
        };
        return (0..n as i64)
            .map(|i| {
                let lo = t_a.saturating_add(i.saturating_mul(stride));
                starting(lo, lo.saturating_add(stride).min(t_b))
            })
            .collect();
    }
    let rows = b.n_rows(Table::Edges);
    let zs = zones(b, Table::Edges);
    let a = clamp_tt(as_of_tt);
    let bucket = |vt: i64| ((vt as i128 - t_a as i128) / stride as i128) as usize;
    let hit: Vec<usize> = (0..zs.len())
        .filter(|&z| zs[z].may_start_in(t_a, t_b - 1))
        .collect();
    hit.par_iter()
        .fold(
            || vec![0u64; n],
            |mut c, &z| {
                let (start, end) = (z * ZONE_ROWS, ((z + 1) * ZONE_ROWS).min(rows));
                let (lo, hi) = (zs[z].vs_min, zs[z].vs_max);
                if current && t_a <= lo && hi < t_b && bucket(lo) == bucket(hi) {
                    let off = unb.within(start as u32, end as u32).len();
                    c[bucket(lo)] += (end - start - off) as u64;
                    return c;
                }
                let blk = b.row_block(
                    Table::Edges,
                    start,
                    end,
                    a,
                    BlockCols::starts(false, rel.is_some()),
                );
                for j in 0..blk.vt_s.len() {
                    let vt = blk.vt_s[j];
                    if vt < t_a || vt >= t_b || !blk.believed(j, a) {
                        continue;
                    }
                    if rel.is_some_and(|x| b.ident_part(blk.ident[j], IdentPart::Rel) != x) {
                        continue;
                    }
                    c[bucket(vt)] += 1;
                }
                c
            },
        )
        .reduce(
            || vec![0u64; n],
            |mut x, y| {
                x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
                x
            },
        )
}

/// The compact columns of every edge row, built by the first caller: per zone, the `vt_s`
/// and identity columns are decoded in one pass each; the identities' src, dst and rel are
/// decoded as one range when the zone's identities are dense (ingest creates identities in
/// row order), else read one by one.
pub(crate) fn edge_columns(b: &Image) -> Arc<EdgeColumns> {
    b.caches
        .cols
        .get_or_init(|| {
            let n = b.n_rows(Table::Edges);
            let parts: Vec<EdgeColumns> = (0..n.div_ceil(ZONE_ROWS))
                .into_par_iter()
                .map(|z| {
                    let (a, e) = (z * ZONE_ROWS, ((z + 1) * ZONE_ROWS).min(n));
                    let ids = b.ident_col(Table::Edges, a, e);
                    let part = |p: IdentPart| ident_parts(b, &ids, p);
                    EdgeColumns {
                        vt_s: b.vt_s_col(Table::Edges, a, e),
                        src: part(IdentPart::Src),
                        dst: part(IdentPart::Dst),
                        rel: part(IdentPart::Rel),
                    }
                })
                .collect();
            let mut cols = EdgeColumns::default();
            for p in parts {
                cols.vt_s.extend(p.vt_s);
                cols.src.extend(p.src);
                cols.dst.extend(p.dst);
                cols.rel.extend(p.rel);
            }
            Arc::new(cols)
        })
        .clone()
}

/// The lowercase search heap of the image's uids, built by the first caller.
pub(crate) fn lower(b: &Image) -> &LowerHeap {
    b.caches
        .lower
        .get_or_init(|| LowerHeap::build((0..b.marks().uids as u32).map(|i| b.uid_name(i))))
}

/// Every alive node row in digest order `(uid bytes, tt_s, vt_s)`.
pub(crate) fn node_digest_order(b: &Image) -> Vec<u32> {
    let mut out = Vec::with_capacity(b.n_rows(Table::Nodes));
    for i in 0..b.marks().uids as usize {
        let mut rows: Vec<(i64, i64, u32)> = b
            .node_postings(b.uid_by_rank(i))
            .into_iter()
            .filter(|&r| b.row_alive(Table::Nodes, r))
            .map(|r| (b.row_tt_s(Table::Nodes, r), b.row_vt(Table::Nodes, r).0, r))
            .collect();
        rows.sort_unstable();
        out.extend(rows.into_iter().map(|x| x.2));
    }
    out
}

/// The 12 eid bytes of edge identity `id`.
pub(crate) fn eid(b: &Image, id: u32) -> Id12 {
    let e = b.ident(id);
    let mut buf = [0u8; 21];
    let disc = match e.disc {
        Disc::Ordinal(k) => ordinal_text(k, &mut buf),
        Disc::Str(s) => b.string(s),
    };
    ident::eid_bytes(b.uid_name(e.src), b.uid_name(e.dst), b.string(e.rel), disc)
}

/// Identities per group of [`digest_groups`] (16 MB of sort keys).
pub(crate) const IDENT_GROUP: usize = 1 << 20;

/// Every edge identity `0..n` in eid order (`eid` derives one), handed to `f` group by group
/// (each group sorted by eid, the groups in eid order), so that at most about `group` sort
/// keys are held (one two-byte prefix may exceed it): a first pass keeps each eid's first
/// two bytes (2 bytes per identity) and cuts the two-byte prefix space into groups; each
/// group's eids are then derived again and sorted. At most `group` identities are one
/// group, their eids derived once.
pub(crate) fn digest_groups(
    n: u32,
    eid: impl Fn(u32) -> Id12 + Sync,
    group: usize,
    mut f: impl FnMut(&[(Id12, u32)]),
) {
    if n as usize <= group {
        // One group: no prefix pass, each eid derived once.
        let mut all: Vec<(Id12, u32)> = (0..n).into_par_iter().map(|i| (eid(i), i)).collect();
        all.par_sort_unstable();
        if !all.is_empty() {
            f(&all);
        }
        return;
    }
    let prefix: Vec<u16> = (0..n)
        .into_par_iter()
        .map(|i| {
            let e = eid(i);
            u16::from_be_bytes([e[0], e[1]])
        })
        .collect();
    let mut count = vec![0usize; 1 << 16];
    prefix.iter().for_each(|&p| count[p as usize] += 1);
    let mut lo = 0usize;
    while lo < count.len() {
        let (mut hi, mut size) = (lo, 0);
        while hi < count.len() && (hi == lo || size + count[hi] <= group) {
            size += count[hi];
            hi += 1;
        }
        if size > 0 {
            let mut group: Vec<(Id12, u32)> = (0..n)
                .into_par_iter()
                .filter(|&i| (lo..hi).contains(&(prefix[i as usize] as usize)))
                .map(|i| (eid(i), i))
                .collect();
            group.par_sort_unstable();
            f(&group);
        }
        lo = hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::mmap::SegBytes;
    use crate::format::seg;
    use crate::time::OPEN_END;
    use crate::{Op, Options, Store};
    use serde_json::json;

    /// A compacted image of `n` ingested events (time-ordered or scattered, a fifth with
    /// durations, some open-ended) plus retractions and corrections, with the valid-time
    /// index — as written (minor 4, rows in `vt_s` order), or with its edge rows `shuffled`
    /// (minor 3) — and re-encoded as minor 2 (without it).
    fn images(n: usize, scattered: bool, seed: u64, shuffled: bool) -> (Image, Image) {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let opts = Options {
            no_sync: true,
            ..Options::default()
        };
        let mut s = Store::create_with(&dir, opts).unwrap();
        let mut r = tgms_testkit::Rng::new(seed);
        let mut next = |m: u64| r.below(m);
        let mut ends: Vec<(String, String, &str, i64)> = Vec::new();
        let events: Vec<serde_json::Value> = (0..n as u64)
            .map(|i| {
                let t = if scattered { next(3 * n as u64) } else { 3 * i };
                let rel = ["R", "S"][next(2) as usize];
                let (u, w) = (format!("n{}", next(50)), format!("n{}", next(50)));
                ends.push((u.clone(), w.clone(), rel, t as i64));
                let mut ev = json!({"src": u, "dst": w, "rel_type": rel, "vt_s": t});
                match next(10) {
                    0 | 1 => ev["vt_e"] = json!(t + 1 + next(500)),
                    2 => ev["vt_e"] = json!(OPEN_END),
                    _ => {}
                }
                ev
            })
            .collect();
        // Eight ingest batches (tt 1–8): in `vt_s` order their rows interleave when
        // scattered, so a sorted image stores `tt_s` as an integer column, not runs.
        for (b, chunk) in events.chunks(n.div_ceil(8)).enumerate() {
            let op = json!({"op": "ingest_events", "events": chunk});
            s.write_at(1 + b as i64, vec![Op::from_json(&op)]).unwrap();
        }
        let mut closed = 0;
        for tt in 10..88 {
            let k = next(n as u64) as usize;
            let (u, w, rel, t) = &ends[k];
            let r = json!({"kind": "edge", "src": u, "dst": w, "rel_type": rel,
                "disc": format!("#{k}")});
            let op = json!({"op": "retract", "ref": r, "t": t, "reason": "r"});
            closed += usize::from(s.write_at(tt, vec![Op::from_json(&op)]).is_ok());
        }
        assert!(closed >= 50, "only {closed} retractions");
        s.compact().unwrap();
        drop(s);
        let b = seg::only_segment(&dir);
        assert_eq!(seg::header_minor(&b).unwrap(), seg::SEG_MINOR_ARITH);
        seg::verify(&b).unwrap();
        let dir = seg::read_dir(&b).unwrap();
        let tt_codec = dir.codecs[dir.layout.iter().position(|c| c.0 == 36).unwrap()];
        assert_eq!(tt_codec == seg::codec::RUNS, !scattered);
        let (seq, mut d) = seg::decode(&b).unwrap();
        let minor = if shuffled {
            // Rows in an order unrelated to time (as a 1.4 image of a scattered log kept
            // them), closures renumbered with them.
            let n = d.edges.len();
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, next(i as u64 + 1) as usize);
            }
            let mut new_of = vec![0u32; n];
            for (new, &old) in order.iter().enumerate() {
                new_of[old] = new as u32;
            }
            d.edges = order.iter().map(|&old| d.edges[old]).collect();
            for c in &mut d.closes[Table::Edges] {
                c.row = new_of[c.row as usize];
            }
            d.closes[Table::Edges].sort_by_key(|c| c.row);
            seg::SEG_MINOR_TIME_INDEX
        } else {
            seg::SEG_MINOR_ARITH
        };
        let b3 = seg::encode_as(seq, &d, &|_| 0, minor).0;
        let b2 = seg::encode_as(seq, &d, &|_| 0, seg::SEG_MINOR_INDEXED).0;
        let (x3, x2) = (
            Image::new(crate::format::base::Base::open(SegBytes::Heap(b3)).unwrap()),
            Image::new(crate::format::base::Base::open(SegBytes::Heap(b2)).unwrap()),
        );
        assert!(x3.has_time_index() && !x2.has_time_index());
        (x3, x2)
    }

    #[test]
    fn ordinal_text_writes_the_disc() {
        for k in [0, 1, 9, 10, 99, 100, 12_345, u32::MAX as u64, u64::MAX] {
            let mut buf = [0u8; 21];
            assert_eq!(ordinal_text(k, &mut buf), format!("#{k}"));
        }
    }

    /// Identities handed over group by group come out in eid order, whatever the group size.
    #[test]
    fn digest_groups_are_the_eid_order() {
        let (b, _) = images(3_000, true, 9, false);
        let mut want: Vec<(Id12, u32)> = (0..b.marks().idents as u32)
            .map(|i| (eid(&b, i), i))
            .collect();
        want.sort();
        for group in [1, 7, 100, 1 << 20] {
            let (mut got, mut groups) = (Vec::new(), 0);
            digest_groups(
                b.marks().idents as u32,
                |i| eid(&b, i),
                group,
                |g| {
                    got.extend_from_slice(g);
                    groups += 1;
                },
            );
            assert_eq!(got, want, "group {group}");
            assert!(group > 3_000 || groups > 1);
        }
    }

    /// Every window read through the valid-time index (minor 3 or 4) equals the same read
    /// by zones (minor 2), on rows in `vt_s` order (events logged in and out of time order)
    /// and on rows in no time order, narrow and wide windows.
    #[test]
    fn index_reads_equal_zone_reads() {
        for (scattered, seed, shuffled) in [(false, 5, false), (true, 6, true), (true, 7, false)] {
            let n = 30_000;
            let (x3, x2) = images(n, scattered, seed, shuffled);
            let span = 3 * n as i64;
            let mut windows = vec![(0, 10), (span / 2, span / 2 + 40), (span - 5, span + 600)];
            windows.extend([
                (span / 3, span / 3 + 900),
                (-10, 0),
                (0, span / 5),
                (5, OPEN_END),
            ]);
            let mut answered = 0;
            for (a, e) in windows {
                for as_of in [OPEN_END, 1, 5, 40, 0] {
                    for k in Table::BOTH {
                        let rels = [Some(&[0u32, 1, 2, 3][..]), None];
                        for r in rels {
                            let v = overlapping(&x3, k, Some((a, e)), as_of, r);
                            assert_eq!(v, overlapping(&x2, k, Some((a, e)), as_of, r));
                            answered += usize::from(!v.is_empty());
                        }
                        let v = boundaries(&x3, k, a, e, as_of);
                        assert_eq!(v, boundaries(&x2, k, a, e, as_of), "bounds {a} {e}");
                        answered += usize::from(!v.is_empty());
                    }
                    assert_eq!(start_rows(&x3, a, e, as_of), start_rows(&x2, a, e, as_of));
                    assert_eq!(start_runs(&x3, a, e, as_of), start_runs(&x2, a, e, as_of));
                }
            }
            assert!(answered >= 40, "only {answered} non-empty answers");
        }
    }
}
