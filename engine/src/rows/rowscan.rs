//! Index-assisted scans of decoded rows — the memtable's tables and a delta's rows above
//! an image: storage-order ids of the rows in a valid-time window, starting in one, or
//! with a boundary in one, found through the valid-time index (`rows/tindex.rs`). The read path
//! (`read.rs`, `rows.rs`) calls them; the mapped image has its own (`rows/mapscan.rs`).

use crate::model::Row;
use crate::rows::tindex::{IndexCache, TableIndex, Unbelieved};
use crate::time::{clamp_tt, overlaps};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// The row is believed at `as_of_tt` (clamped to the clock's range).
#[inline]
pub(crate) fn believed_at(r: &Row, as_of_tt: i64) -> bool {
    let a = clamp_tt(as_of_tt);
    r.alive && r.tt_s <= a && a < r.tt_e
}

/// The row's valid interval overlaps the window `w` (every row when `None`).
#[inline]
pub(crate) fn in_window(r: &Row, w: Option<(i64, i64)>) -> bool {
    w.is_none_or(|(a, b)| overlaps(r.vt_s, r.vt_e, a, b))
}

// ---------------------------------------------------------------------------------------
// Window selection through the valid-time index (`rows/tindex.rs`). Every window read names its
// candidate rows by binary search in the index (plus the unindexed tail of newest rows),
// checks the exact predicate on each candidate in parallel chunks, and sorts the ids back
// to storage order (ids are unique, so the order does not depend on the thread count). When
// the candidates are a large share of the table, a parallel scan of the storage order is
// cheaper and yields the same list, because the predicate is exact on its own.

/// Rows per parallel work unit.
pub(crate) const CHUNK: usize = 16_384;

/// Storage-order ids of the rows in `range` that satisfy `keep`, scanned in parallel.
fn scan_ids(rows: &[Row], range: Range<usize>, keep: impl Fn(&Row) -> bool + Sync) -> Vec<u32> {
    let start = range.start;
    if range.len() <= CHUNK {
        // One work unit: stay on the calling thread (no pool round trip).
        return rows[range]
            .iter()
            .enumerate()
            .filter(|(_, r)| keep(r))
            .map(|(i, _)| (start + i) as u32)
            .collect();
    }
    // One list per fixed chunk, concatenated in chunk order (one allocation at the end).
    let parts: Vec<Vec<u32>> = rows[range]
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, ch)| {
            let base = start + c * CHUNK;
            ch.iter()
                .enumerate()
                .filter(|(_, r)| keep(r))
                .map(|(i, _)| (base + i) as u32)
                .collect()
        })
        .collect();
    parts.concat()
}

/// Storage-order ids of the rows satisfying `keep` among the index candidates `cands`
/// (may overlap) and the tail `[ix.covered, rows.len())`. `keep` must be exact: it alone
/// decides membership, the candidates only bound the work.
fn select(
    rows: &[Row],
    ix: &TableIndex,
    cands: &[&[u32]],
    keep: impl Fn(&Row) -> bool + Sync,
) -> Vec<u32> {
    let tail = ix.covered..rows.len();
    let n: usize = cands.iter().map(|c| c.len()).sum::<usize>() + tail.len();
    if n.saturating_mul(4) >= rows.len() {
        return scan_ids(rows, 0..rows.len(), keep);
    }
    let hit = |&i: &u32| keep(&rows[i as usize]);
    let mut ids: Vec<u32> = if n <= CHUNK {
        // One work unit: stay on the calling thread (no pool round trip).
        cands
            .iter()
            .flat_map(|c| c.iter().copied().filter(hit))
            .collect()
    } else {
        let chunks: Vec<&[u32]> = cands.iter().flat_map(|c| c.chunks(CHUNK)).collect();
        chunks
            .par_iter()
            .flat_map_iter(|c| c.iter().copied().filter(hit))
            .collect()
    };
    ids.extend(scan_ids(rows, tail, &keep));
    if ids.len() <= CHUNK {
        ids.sort_unstable();
    } else {
        ids.par_sort_unstable();
    }
    ids.dedup();
    ids
}

/// Storage-order ids of the rows overlapping `w` (every row when `None`) that satisfy
/// `keep`, which must imply the overlap.
pub(crate) fn overlapping(
    rows: &[Row],
    cache: &IndexCache,
    w: Option<(i64, i64)>,
    keep: impl Fn(&Row) -> bool + Sync,
) -> Vec<u32> {
    let Some((a, b)) = w else {
        return scan_ids(rows, 0..rows.len(), keep);
    };
    let ix = cache.get(rows);
    // Rows starting in [a, b) overlap; a row starting before `a` overlaps only when it
    // ends after `a`, which an instantaneous row cannot: those are long rows, found by the
    // shorter of the `vt_e > a` suffix and the `vt_s < a` prefix.
    let inside = ix.by_start.ids_in(a, b.saturating_sub(1));
    let before = if a == i64::MIN {
        &[][..]
    } else if ix.by_end.count_in(a.saturating_add(1), i64::MAX)
        <= ix.by_start.count_in(i64::MIN, a - 1)
    {
        ix.by_end.ids_in(a.saturating_add(1), i64::MAX)
    } else {
        ix.by_start.ids_in(i64::MIN, a - 1)
    };
    select(rows, &ix, &[inside, before], keep)
}

/// True when `[vt_s, vt_e)` starts or ends inside `(lo, hi]`.
fn boundary_in(r: &Row, lo: i64, hi: i64) -> bool {
    (lo < r.vt_s && r.vt_s <= hi) || (lo < r.vt_e && r.vt_e <= hi)
}

/// Storage-order ids of the rows believed at `as_of` that start or end inside `(lo, hi]`.
pub(crate) fn boundaries(
    rows: &[Row],
    cache: &IndexCache,
    lo: i64,
    hi: i64,
    as_of: i64,
) -> Vec<u32> {
    if lo >= hi {
        return Vec::new();
    }
    let ix = cache.get(rows);
    // A start in (lo, hi] is found by `vt_s`; an end in (lo, hi] of an instantaneous row
    // means `vt_s` in [lo, hi), of a long row it is found by `vt_e`.
    let starts = ix.by_start.ids_in(lo, hi);
    let ends = ix.by_end.ids_in(lo + 1, hi);
    select(rows, &ix, &[starts, ends], |r| {
        believed_at(r, as_of) && boundary_in(r, lo, hi)
    })
}

/// `0..n` without the ids of `skip` (ascending, unique, all `< n`), followed by `extra`
/// zeroed slots for the caller to fill. Filled in parallel over fixed output chunks: output
/// slot `k` holds `k + s` where `s` counts the skipped ids below it, i.e. the `s` with
/// `skip[j] - j <= k` exactly for `j < s` (`skip[j] - j` is non-decreasing).
fn complement(n: usize, skip: &[u32], extra: usize) -> Vec<u32> {
    let kept = n - skip.len();
    // Zeroed allocation: the pages are mapped lazily, written once by the fill.
    let mut ids = vec![0u32; kept + extra];
    ids[..kept]
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            let k0 = c * CHUNK;
            // Binary search for the first `j` with `skip[j] - j > k0` (ids are unique and
            // ascending, so `skip[j] >= j`).
            let (mut s, mut hi) = (0, skip.len());
            while s < hi {
                let m = (s + hi) / 2;
                if skip[m] as usize - m <= k0 {
                    s = m + 1;
                } else {
                    hi = m;
                }
            }
            for (k, o) in out.iter_mut().enumerate() {
                let mut p = k0 + k + s;
                while s < skip.len() && skip[s] as usize == p {
                    s += 1;
                    p += 1;
                }
                *o = p as u32;
            }
        });
    ids
}

/// The storage positions of a start query, in one of two forms.
pub(crate) enum Starts {
    /// Every covered row `[0, covered)` but the ascending `skip` ids, then `tail` (ids of
    /// uncovered rows, ascending).
    AllBut {
        covered: usize,
        skip: Arc<Unbelieved>,
        tail: Vec<u32>,
    },
    /// An ascending id list.
    Ids(Vec<u32>),
    /// Maximal runs of consecutive ids, ascending.
    Runs(Vec<Range<u32>>),
}

impl Starts {
    /// The positions as one ascending list.
    pub(crate) fn ids(self) -> Vec<u32> {
        match self {
            Starts::AllBut {
                covered,
                skip,
                tail,
            } => {
                let mut ids = complement(covered, &skip.ids, tail.len());
                let n = ids.len() - tail.len();
                ids[n..].copy_from_slice(&tail);
                ids
            }
            Starts::Ids(ids) => ids,
            Starts::Runs(runs) => runs.into_iter().flatten().collect(),
        }
    }

    /// The positions as maximal runs of consecutive ids, ascending.
    pub(crate) fn runs(self) -> Vec<Range<u32>> {
        let mut runs: Vec<Range<u32>> = Vec::new();
        let mut add = |r: Range<u32>| match runs.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ if r.is_empty() => {}
            _ => runs.push(r),
        };
        match self {
            Starts::AllBut {
                covered,
                skip,
                tail,
            } => {
                let mut from = 0u32;
                for &u in &skip.ids {
                    add(from..u);
                    from = u + 1;
                }
                add(from..covered as u32);
                tail.iter().for_each(|&i| add(i..i + 1));
            }
            Starts::Ids(ids) => ids.iter().for_each(|&i| add(i..i + 1)),
            Starts::Runs(runs) => return runs,
        }
        runs
    }
}

/// Storage-order ids of the rows believed at `as_of` with `t_a <= vt_s < t_b`; `gen` is
/// the table's close generation.
pub(crate) fn starts(
    rows: &[Row],
    cache: &IndexCache,
    gen: u64,
    t_a: i64,
    t_b: i64,
    as_of: i64,
) -> Starts {
    if t_a >= t_b {
        return Starts::Ids(Vec::new());
    }
    let ix = cache.get(rows);
    let keep = |r: &Row| believed_at(r, as_of) && t_a <= r.vt_s && r.vt_s < t_b;
    let cands = ix.by_start.ids_in(t_a, t_b - 1);
    if !cands.is_empty() && cands.len() == ix.covered {
        // Every covered row starts in the window: at a belief state after every stored
        // transaction time the covered answer is all covered rows but the unbelieved ones,
        // listed without reading a row.
        let unb = cache.unbelieved(rows, &ix, gen);
        if clamp_tt(as_of) >= unb.max_tt {
            return Starts::AllBut {
                covered: ix.covered,
                skip: unb,
                tail: scan_ids(rows, ix.covered..rows.len(), keep),
            };
        }
    }
    Starts::Ids(select(rows, &ix, &[cands], keep))
}
