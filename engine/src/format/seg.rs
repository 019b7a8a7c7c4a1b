//! Immutable columnar segment files (`format-spec.md` §6): the byte layout, the column
//! codecs (frame-of-reference bit-packing, runs, string heaps), per-chunk crc32, and the
//! encoder / verifying decoder between a file and a `SegData`.

use crate::error::CorruptionKind;
use crate::model::{Closure, Content, Disc, IdentRec, Marks, Row, SegData, NONE};
use crate::op::Origin;
use crate::time::OPEN_END;

/// File magic of a segment.
pub const SEG_MAGIC: &[u8; 8] = b"TGMSSEG\0";
/// Magic closing the trailer of a segment.
pub const SEG_TRAILER_MAGIC: &[u8; 4] = b"TGSE";
/// Segment format major version.
pub const SEG_MAJOR: u16 = 1;
/// Segment minor of flush segments written by formats 1.2–1.4: codec 4 (DFOR) for integer
/// columns, rows in write order.
pub const SEG_MINOR: u16 = 1;
/// Segment minor of a compacted full image with index chunks (64–76) and random-access
/// integer codecs only (FOR, DFORS, PFOR): format 1.3.
pub const SEG_MINOR_INDEXED: u16 = 2;
/// Segment minor of a full image that also holds the valid-time index chunks (77–80):
/// format 1.4.
pub const SEG_MINOR_TIME_INDEX: u16 = 3;
/// Segment minor of a full image whose row tables are in segment order `(vt_s, ident,
/// tt_s)` (invariant S9), with the closed-row sets (chunks 81–82, codec ROARING): format
/// 1.5. Compaction writes it.
pub const SEG_MINOR_SORTED: u16 = 4;
/// Segment minor of flush segments written by format 1.5: minor 1 with its rows in segment
/// order and the closed-row sets (chunks 81–82) of the closures it records.
pub const SEG_MINOR_FLUSH: u16 = 5;

/// True for the minors of full images with index chunks (64–76 and more): 2, 3 and 4.
pub fn is_indexed(minor: u16) -> bool {
    (SEG_MINOR_INDEXED..=SEG_MINOR_SORTED).contains(&minor)
}

/// True for the minors whose rows are in segment order, with closed-row sets: 4 and 5.
pub fn is_sorted(minor: u16) -> bool {
    minor >= SEG_MINOR_SORTED
}
/// Header bytes: magic 8, major 2, minor 2, flags 4, seq 8, base marks 7 × 8, crc 4, pad 4.
pub const SEG_HEADER_LEN: usize = 88;
/// Trailer bytes: footer offset 8, footer length 8, footer crc 4, magic 4.
pub const SEG_TRAILER_LEN: usize = 24;
/// Bytes of one chunk-directory entry.
pub const DIR_ENTRY_LEN: usize = 24;

/// Chunk ids (`format-spec.md` §6.3). Row chunks are `ROWS_NODE + k` / `ROWS_EDGE + k`.
pub mod chunk {
    /// uid table `[base, end)`: the uid strings (HEAP).
    pub const UIDS: u16 = 1;
    /// string table `[base, end)`: labels, props, sources, provenance refs, reasons, rel
    /// types and string discs, deduplicated store-wide (HEAP).
    pub const STRINGS: u16 = 2;
    /// content table: the label's string id.
    pub const CONTENT_LABEL: u16 = 3;
    /// content table: the props' string id (canonical JSON text).
    pub const CONTENT_PROPS: u16 = 4;
    /// content table: the source's string id.
    pub const CONTENT_SOURCE: u16 = 5;
    /// content table: the provenance ref's string id (canonical JSON text).
    pub const CONTENT_PROV: u16 = 6;
    /// edge identity table: the src uid id.
    pub const IDENT_SRC: u16 = 7;
    /// edge identity table: the dst uid id.
    pub const IDENT_DST: u16 = 8;
    /// edge identity table: the rel type's string id.
    pub const IDENT_REL: u16 = 9;
    /// edge identity table: disc tag; bit 0 set = string disc (clear = ordinal `#k`), bit 1
    /// set = the identity is in the explicit-identity map, other bits 0.
    pub const IDENT_DISC_TAG: u16 = 10;
    /// edge identity table: the disc value, the ordinal `k` or a string id (per the tag).
    pub const IDENT_DISC_VAL: u16 = 11;
    /// ordinal slots: the identity created by ingest ordinal `k`, `0xFFFFFFFF` for none.
    pub const SLOTS: u16 = 12;
    /// first chunk of the node row columns: column `c` is chunk `ROWS_NODE + c` (16–27).
    pub const ROWS_NODE: u16 = 16;
    /// first chunk of the edge row columns: column `c` is chunk `ROWS_EDGE + c` (32–43).
    pub const ROWS_EDGE: u16 = 32;
    // offsets inside a row group
    /// row column: the uid id (nodes) or edge identity id (edges).
    pub const IDENT: u16 = 0;
    /// row column: the content id.
    pub const CONTENT: u16 = 1;
    /// row column: start of the valid interval, µs.
    pub const VT_S: u16 = 2;
    /// row column: `vt_e - vt_s` in µs, or 0 for an open end (`vt_e = OPEN_END`).
    pub const VT_LEN: u16 = 3;
    /// row column: start of the transaction interval (the batch's `tt`), µs; RUNS, one run
    /// per batch, unless an integer column is smaller (minors 4 and 5).
    pub const TT_S: u16 = 4;
    /// row column: the reason, 0 for none, else its string id + 1.
    pub const REASON: u16 = 5;
    /// row column: the origin tag (1 assert, 2 retract, 3 correct, 4 ingest).
    pub const ORIGIN: u16 = 6;
    /// row column: 1, or 0 for a row retired inside its own batch.
    pub const ALIVE: u16 = 7;
    /// closure column: the store-wide row number closed, strictly ascending.
    pub const CLOSE_ROW: u16 = 8;
    /// closure column: the closed row's `tt_e`, µs.
    pub const CLOSE_TT_E: u16 = 9;
    /// closure column: the `closed_by` tag (1–4, as the origin).
    pub const CLOSE_BY: u16 = 10;
    /// closure column: the close reason, 0 for none, else its string id + 1.
    pub const CLOSE_REASON: u16 = 11;
    // index chunks of a minor-2, 3 or 4 segment (full image only)
    /// uid heap: n_uids + 1 cumulative byte offsets into the heap's string bytes.
    pub const UID_OFFS: u16 = 64;
    /// string heap: n_strings + 1 cumulative byte offsets.
    pub const STR_OFFS: u16 = 65;
    /// uid ids sorted by their UTF-8 bytes.
    pub const UID_ORDER: u16 = 66;
    /// string ids sorted by their UTF-8 bytes.
    pub const STR_ORDER: u16 = 67;
    /// node postings per uid: n_uids + 1 offsets into `NODE_POST`.
    pub const NODE_POST_OFF: u16 = 68;
    /// node row numbers grouped by uid, ascending within a uid.
    pub const NODE_POST: u16 = 69;
    /// edge postings per identity: n_idents + 1 offsets into `EDGE_POST`.
    pub const EDGE_POST_OFF: u16 = 70;
    /// edge row numbers grouped by identity, ascending within an identity.
    pub const EDGE_POST: u16 = 71;
    /// out adjacency per uid (edge rows whose identity has that src).
    pub const OUT_OFF: u16 = 72;
    /// out adjacency: edge row numbers grouped by src uid, ascending within a uid.
    pub const OUT: u16 = 73;
    /// in adjacency per uid (edge rows whose identity has that dst).
    pub const IN_OFF: u16 = 74;
    /// in adjacency: edge row numbers grouped by dst uid, ascending within a uid.
    pub const IN: u16 = 75;
    /// ids of the mapped identities sorted by (src, dst, rel, disc tag bit 0, disc value
    /// as u64).
    pub const MAPPED_ORDER: u16 = 76;
    // valid-time index chunks of a minor-3 segment (full image only)
    /// node row numbers sorted by `(vt_s, row)`.
    pub const NODE_BY_START: u16 = 77;
    /// node rows whose interval is not one microsecond, sorted by `(vt_e, row)`.
    pub const NODE_LONG_BY_END: u16 = 78;
    /// edge row numbers sorted by `(vt_s, row)`.
    pub const EDGE_BY_START: u16 = 79;
    /// edge rows whose interval is not one microsecond, sorted by `(vt_e, row)`.
    pub const EDGE_LONG_BY_END: u16 = 80;
    // closed-row sets of a minor-4 or 5 segment, codec ROARING
    /// the node rows that have a closure.
    pub const NODE_CLOSED: u16 = 81;
    /// the edge rows that have a closure.
    pub const EDGE_CLOSED: u16 = 82;
}

/// Codec tags of the chunk directory.
pub mod codec {
    /// Frame-of-reference bit-packed integers.
    pub const FOR: u8 = 1;
    /// Runs of equal i64 values.
    pub const RUNS: u8 = 2;
    /// A string heap.
    pub const HEAP: u8 = 3;
    /// Delta + frame-of-reference bit packing (segment minor ≥ 1).
    pub const DFOR: u8 = 4;
    /// DFOR followed by a FOR column of every 32nd value, for random access (segment
    /// minors 2–4).
    pub const DFORS: u8 = 5;
    /// Patched frame of reference with exception starts per 32 values, for sparse columns
    /// (segment minors 2–4).
    pub const PFOR: u8 = 6;
    /// A roaring bitmap in the portable serialization, without run containers (segment
    /// minors 4 and 5).
    pub const ROARING: u8 = 7;
}

/// Values between two skip entries of a DFORS column (and between two exception starts of
/// a PFOR column).
pub const DFORS_STRIDE: usize = 32;

/// Every chunk id a version-1.0 segment holds, in file order, with its codec.
pub fn chunk_layout() -> Vec<(u16, u8)> {
    use chunk::*;
    let mut v = vec![(UIDS, codec::HEAP), (STRINGS, codec::HEAP)];
    for id in CONTENT_LABEL..=SLOTS {
        v.push((id, codec::FOR));
    }
    for g in [ROWS_NODE, ROWS_EDGE] {
        for k in IDENT..=CLOSE_REASON {
            v.push((g + k, if k == TT_S { codec::RUNS } else { codec::FOR }));
        }
    }
    v
}

/// Every chunk id a segment of minor `minor` holds, in file order, with its nominal codec
/// (FOR chunks may use DFOR in minors 1 and 5 and DFORS or PFOR in minors 2–4; the `tt_s`
/// RUNS chunks may use those integer codecs in minors 4 and 5).
pub fn chunk_layout_for(minor: u16) -> Vec<(u16, u8)> {
    let mut v = chunk_layout();
    if is_indexed(minor) {
        for id in chunk::UID_OFFS..=chunk::MAPPED_ORDER {
            v.push((id, codec::FOR));
        }
    }
    if is_indexed(minor) && minor >= SEG_MINOR_TIME_INDEX {
        for id in chunk::NODE_BY_START..=chunk::EDGE_LONG_BY_END {
            v.push((id, codec::FOR));
        }
    }
    if is_sorted(minor) {
        v.push((chunk::NODE_CLOSED, codec::ROARING));
        v.push((chunk::EDGE_CLOSED, codec::ROARING));
    }
    v
}

// ------------------------------------------------------------------ codecs

/// FOR codec: `u32 count | i64 min | u8 width | ceil(count·width / 8) bytes`, each value
/// stored as `value − min` (mod 2^64) in `width` bits, least significant bit first.
pub fn put_for(out: &mut Vec<u8>, v: &[i64]) {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    let min = v.iter().copied().min().unwrap_or(0);
    let maxd = v
        .iter()
        .map(|&x| (x as u64).wrapping_sub(min as u64))
        .max()
        .unwrap_or(0);
    let w = 64 - maxd.leading_zeros();
    out.extend_from_slice(&min.to_le_bytes());
    out.push(w as u8);
    if w == 0 {
        return;
    }
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    for &x in v {
        acc |= ((x as u64).wrapping_sub(min as u64) as u128) << bits;
        bits += w;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        out.push(acc as u8);
    }
}

/// DFOR codec, patched delta + frame of reference: `u32 count | i64 first | u32 n_exc |
/// i64 min | u8 width | packed bits of the count − 1 deltas | n_exc × (u32 index, i64 delta)`.
/// Delta `i` is `v[i+1] − v[i]` (mod 2^64). Deltas outside `[min, min + 2^width)` are
/// **exceptions**: their packed slot holds 0 and their value is in the exception list
/// (indexes strictly ascending). The encoder picks `min` and `width` to minimize the size.
pub fn put_dfor(out: &mut Vec<u8>, v: &[i64]) {
    dfor_with_exceptions(out, v);
}

/// The frame `(min, width)` of a patched column of `vals` that minimises the packed bits
/// plus 12 bytes per exception (a value outside `[min, min + 2^width)`). Candidate bases
/// are the smallest value and a few low quantiles; `(0, 0)` for no values. Ties go to the
/// earlier candidate: bases in that order, widths ascending.
///
/// A long column is not sorted: its quantiles come from a radix selection and, per base,
/// the values in each frame from a histogram of bit lengths, so the frame costs a few
/// passes and no copy of the column (tested equal to the sorting computation).
fn patched_frame<I: Iterator<Item = i64> + Clone>(vals: I) -> (i64, u32) {
    let n = vals.clone().count();
    if n == 0 {
        return (0, 0);
    }
    let ranks = [0, n / 10_000, n / 1_000, n / 100].map(|i| i.min(n - 1));
    let mut bases = select_ranks(vals.clone(), n, &ranks);
    bases.dedup();
    // Per base: the values below it, and per bit length of `x − base` those at or above.
    let (below, by_len): (Vec<usize>, Vec<[usize; 65]>) =
        bases.iter().map(|&m| bit_lengths(vals.clone(), m)).unzip();
    let (mut best_min, mut best_w, mut best_cost) = (0i64, 0u32, u128::MAX);
    for (i, &m) in bases.iter().enumerate() {
        // `hi`: the values below `m + 2^w` (all of them at width 64).
        let mut hi = below[i];
        for w in 0..=64u32 {
            hi = if w == 64 {
                n
            } else {
                hi + by_len[i][w as usize]
            };
            let exc = (n - (hi - below[i])) as u128;
            let cost = (n as u128 * w as u128).div_ceil(8) + exc * 12;
            if cost < best_cost {
                (best_min, best_w, best_cost) = (m, w, cost);
            }
            if hi == n {
                break;
            }
        }
    }
    (best_min, best_w)
}

/// The values of `vals` below `m`, and per bit length `l` (0–64) the values `x ≥ m` for
/// which `x − m` has `l` bits. Four histograms take alternate values, so that runs of equal
/// lengths do not wait on one counter.
fn bit_lengths(vals: impl Iterator<Item = i64>, m: i64) -> (usize, [usize; 65]) {
    let mut h = [[0u32; 66]; 4];
    let slot = |x: i64| {
        if x < m {
            65
        } else {
            (64 - (x as u64).wrapping_sub(m as u64).leading_zeros()) as usize
        }
    };
    for (i, x) in vals.enumerate() {
        h[i & 3][slot(x)] += 1;
    }
    let total = |i: usize| h.iter().map(|g| g[i] as usize).sum::<usize>();
    (total(65), std::array::from_fn(total))
}

/// The values of ranks `ranks` (each below `n`, the count of `v`) in the ascending order of
/// `v`. A
/// short column is sorted; a long one is passed once, keeping its smallest values (as many
/// as the largest rank asks for, a hundredth of the column here) in a bounded heap.
fn select_ranks(v: impl Iterator<Item = i64>, n: usize, ranks: &[usize]) -> Vec<i64> {
    let keep = ranks.iter().max().map_or(0, |&r| r + 1);
    if n <= 1 << 16 || keep > n / 64 + 1 {
        let mut sorted: Vec<i64> = v.collect();
        sorted.sort_unstable();
        return ranks.iter().map(|&r| sorted[r]).collect();
    }
    let mut heap = std::collections::BinaryHeap::with_capacity(keep);
    for x in v {
        if heap.len() < keep {
            heap.push(x);
        } else if let Some(mut top) = heap.peek_mut() {
            if x < *top {
                *top = x;
            }
        }
    }
    let smallest = heap.into_sorted_vec();
    ranks.iter().map(|&r| smallest[r]).collect()
}

/// Whether `x` fits the frame `[min, min + 2^w)`.
fn in_frame(x: i64, min: i64, w: u32) -> bool {
    w == 64 || (x as i128 >= min as i128 && (x as i128) < min as i128 + (1i128 << w))
}

/// Appends `min | width | bits` of `vals` in the frame `(min, w)` (exceptions packed as
/// 0) and returns the exceptions `(index, value)`, ascending.
fn put_patched_body<I: Iterator<Item = i64> + Clone>(
    out: &mut Vec<u8>,
    vals: I,
    min: i64,
    w: u32,
) -> Vec<(u32, i64)> {
    out.extend_from_slice(&min.to_le_bytes());
    out.push(w as u8);
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    if w > 0 {
        for d in vals.clone() {
            let x = if in_frame(d, min, w) {
                (d as u64).wrapping_sub(min as u64)
            } else {
                0
            };
            acc |= (x as u128) << bits;
            bits += w;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc as u8);
        }
    }
    vals.enumerate()
        .filter(|&(_, d)| !in_frame(d, min, w))
        .map(|(i, d)| (i as u32, d))
        .collect()
}

fn put_exc_list(out: &mut Vec<u8>, exc: &[(u32, i64)]) {
    for &(i, d) in exc {
        out.extend_from_slice(&i.to_le_bytes());
        out.extend_from_slice(&d.to_le_bytes());
    }
}

/// Per block of [`DFORS_STRIDE`] values of a column of `n`, the number of exceptions (of
/// the ascending `exc`) whose index is below the block's first value.
fn exc_starts(exc: &[usize], n: usize) -> Vec<i64> {
    (0..n.div_ceil(DFORS_STRIDE))
        .map(|k| exc.partition_point(|&i| i < k * DFORS_STRIDE) as i64)
        .collect()
}

/// [`put_dfor`], returning the exception indexes (ascending).
fn dfor_with_exceptions(out: &mut Vec<u8>, v: &[i64]) -> Vec<usize> {
    let (min, w) = patched_frame(deltas_of(v));
    put_dfor_framed(out, v, min, w)
}

/// `v[i + 1] − v[i]` (mod 2^64) for every `i`, computed on each pass (a long column's
/// deltas are never held).
fn deltas_of(v: &[i64]) -> impl Iterator<Item = i64> + Clone + '_ {
    v.windows(2).map(|w| w[1].wrapping_sub(w[0]))
}

/// The DFOR bytes of `v` in the frame `(min, w)` of its deltas; returns the exception
/// indexes (ascending).
fn put_dfor_framed(out: &mut Vec<u8>, v: &[i64], min: i64, w: u32) -> Vec<usize> {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    out.extend_from_slice(&v.first().copied().unwrap_or(0).to_le_bytes());
    let n_exc = deltas_of(v).filter(|&d| !in_frame(d, min, w)).count();
    out.extend_from_slice(&(n_exc as u32).to_le_bytes());
    let exc = put_patched_body(out, deltas_of(v), min, w);
    put_exc_list(out, &exc);
    exc.into_iter().map(|(i, _)| i as usize).collect()
}

/// Encodes an integer column with whichever of FOR and DFOR is smaller; returns the codec.
pub fn put_int(out: &mut Vec<u8>, v: &[i64]) -> u8 {
    let mut a = Vec::new();
    put_for(&mut a, v);
    let mut b = Vec::new();
    put_dfor(&mut b, v);
    if b.len() < a.len() {
        out.extend_from_slice(&b);
        codec::DFOR
    } else {
        out.extend_from_slice(&a);
        codec::FOR
    }
}

/// DFORS codec (5): the DFOR layout, then a FOR column of the skip values `v[0], v[32],
/// v[64], …` (`ceil(count / 32)` values) and a FOR column of the exception starts (per
/// block, the number of exceptions with index below its first value), so value `i` is
/// `skip[i / 32]` plus the deltas from `(i / 32) · 32` up to `i`, the exceptions among
/// them found without a search.
pub fn put_dfors(out: &mut Vec<u8>, v: &[i64]) {
    let (min, w) = patched_frame(deltas_of(v));
    put_dfors_framed(out, v, min, w);
}

fn put_dfors_framed(out: &mut Vec<u8>, v: &[i64], min: i64, w: u32) {
    let exc = put_dfor_framed(out, v, min, w);
    let skips: Vec<i64> = v.iter().step_by(DFORS_STRIDE).copied().collect();
    put_for(out, &skips);
    put_for(out, &exc_starts(&exc, v.len()));
}

/// PFOR codec (6), patched frame of reference: `u32 count | i64 min | u8 width | bits |
/// u32 n_exc | n_exc × (u32 index, i64 value)`, then a FOR column of the exception starts
/// (per block of 32 values, the number of exceptions with index below its first value).
/// A value outside `[min, min + 2^width)` is an exception: its packed slot holds 0. The
/// encoder picks `min` and `width` to minimise the size, so a sparse column (mostly 0,
/// rare large values) packs to a few bits per value.
pub fn put_pfor(out: &mut Vec<u8>, v: &[i64]) {
    let (min, w) = patched_frame(v.iter().copied());
    put_pfor_framed(out, v, min, w);
}

fn put_pfor_framed(out: &mut Vec<u8>, v: &[i64], min: i64, w: u32) {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    let exc = put_patched_body(out, v.iter().copied(), min, w);
    out.extend_from_slice(&(exc.len() as u32).to_le_bytes());
    put_exc_list(out, &exc);
    let idx: Vec<usize> = exc.iter().map(|&(i, _)| i as usize).collect();
    put_for(out, &exc_starts(&idx, v.len()));
}

/// Bytes of a FOR column of `n` values whose smallest is `min` and largest `max`.
fn for_len(n: usize, min: i64, max: i64) -> usize {
    let w = 64 - (max as u64).wrapping_sub(min as u64).leading_zeros() as usize;
    13 + (n * w).div_ceil(8)
}

/// Bytes of the patched body and exception list of `vals` in the frame `(min, w)`
/// (`min | width | bits | n_exc × 12`), and the bytes of the FOR column of its exception
/// starts (blocks of a column of `n`).
fn patched_len(vals: impl Iterator<Item = i64>, n: usize, min: i64, w: u32) -> usize {
    let blocks = n.div_ceil(DFORS_STRIDE);
    // The exception starts ascend from 0 to the exceptions below the last block's start.
    let last_start = (blocks.max(1) - 1) * DFORS_STRIDE;
    let (mut n_exc, mut below_last, mut len) = (0, 0, 0);
    for (i, x) in vals.enumerate() {
        len += 1;
        if !in_frame(x, min, w) {
            n_exc += 1;
            below_last += usize::from(i < last_start);
        }
    }
    let starts = if blocks == 0 {
        for_len(0, 0, 0)
    } else {
        for_len(blocks, 0, below_last as i64)
    };
    9 + (len * w as usize).div_ceil(8) + 12 * n_exc + starts
}

/// Encodes an integer column with the smallest of FOR, DFORS and PFOR (the random-access
/// codecs of a minor-2, 3 or 4 segment; FOR on a tie, then DFORS); returns the codec. The
/// sizes are computed first and only the smallest encoding is written, so a long column
/// costs one encoding beside it (its deltas are computed on each pass, never held).
pub fn put_int_ra(out: &mut Vec<u8>, v: &[i64]) -> u8 {
    let n = v.len();
    let (lo, hi) = v
        .iter()
        .fold((i64::MAX, i64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let for_bytes = if n == 0 {
        for_len(0, 0, 0)
    } else {
        for_len(n, lo, hi)
    };
    let skips = v.iter().step_by(DFORS_STRIDE);
    let (slo, shi) = skips.fold((i64::MAX, i64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let skip_bytes = if n == 0 {
        for_len(0, 0, 0)
    } else {
        for_len(n.div_ceil(DFORS_STRIDE), slo, shi)
    };
    // The two patched frames are independent passes over the column: a long one takes
    // both cores (the sizes and the bytes are the same either way).
    let frames = || {
        let dfors = || {
            let (min, w) = patched_frame(deltas_of(v));
            // count | first | n_exc, then the patched body of the deltas, then the skips.
            (
                min,
                w,
                16 + patched_len(deltas_of(v), n, min, w) + skip_bytes,
            )
        };
        let pfor = || {
            let (min, w) = patched_frame(v.iter().copied());
            // count | patched body | n_exc (in the list's 9 + 12 × n_exc) | starts
            (min, w, 8 + patched_len(v.iter().copied(), n, min, w))
        };
        if n > 1 << 16 {
            rayon::join(dfors, pfor)
        } else {
            (dfors(), pfor())
        }
    };
    let ((dmin, dw, dfors_bytes), (pmin, pw, pfor_bytes)) = frames();
    if dfors_bytes < for_bytes && dfors_bytes <= pfor_bytes {
        put_dfors_framed(out, v, dmin, dw);
        codec::DFORS
    } else if pfor_bytes < for_bytes && pfor_bytes < dfors_bytes {
        put_pfor_framed(out, v, pmin, pw);
        codec::PFOR
    } else {
        put_for(out, v);
        codec::FOR
    }
}

/// RUNS codec: `u32 run_count | run_count × (i64 value, u32 length)`; lengths ≥ 1.
pub fn put_runs(out: &mut Vec<u8>, v: &[i64]) {
    let mut runs: Vec<(i64, u32)> = Vec::new();
    for &x in v {
        match runs.last_mut() {
            Some((val, n)) if *val == x => *n += 1,
            _ => runs.push((x, 1)),
        }
    }
    out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
    for (val, n) in runs {
        out.extend_from_slice(&val.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// HEAP codec: a FOR column of byte lengths, then the UTF-8 bytes of every string.
pub fn put_heap(out: &mut Vec<u8>, v: &[String]) {
    let lens: Vec<i64> = v.iter().map(|s| s.len() as i64).collect();
    put_for(out, &lens);
    for s in v {
        out.extend_from_slice(s.as_bytes());
    }
}

/// A bounds-checked reader over one chunk. Errors are `(offset within the chunk, kind)`.
struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

type DecErr = (usize, CorruptionKind);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecErr> {
        if self.b.len() - self.pos < n {
            return Err((
                self.pos,
                format!("needs {n} bytes, chunk has {}", self.b.len() - self.pos).into(),
            ));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, DecErr> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecErr> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn i64(&mut self) -> Result<i64, DecErr> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }
    fn done(&self) -> Result<(), DecErr> {
        if self.pos != self.b.len() {
            return Err((
                self.pos,
                format!("{} bytes left over", self.b.len() - self.pos).into(),
            ));
        }
        Ok(())
    }

    fn for_col(&mut self, want: usize) -> Result<Vec<i64>, DecErr> {
        let at = self.pos;
        let n = self.u32()? as usize;
        if n != want {
            return Err((
                at,
                format!("column holds {n} values, {want} expected").into(),
            ));
        }
        self.for_body(n)
    }

    /// A FOR body (`min | width | bits`) of `n` values.
    fn for_body(&mut self, n: usize) -> Result<Vec<i64>, DecErr> {
        let min = self.i64()?;
        let w = self.u8()? as u32;
        if w > 64 {
            return Err((self.pos - 1, format!("bit width {w} exceeds 64").into()));
        }
        let nbytes = (n as u128 * w as u128).div_ceil(8) as usize;
        let bytes = self.take(nbytes)?;
        let mut out = Vec::with_capacity(n);
        if w == 0 {
            out.resize(n, min);
            return Ok(out);
        }
        let mask: u128 = if w == 64 {
            u64::MAX as u128
        } else {
            (1u128 << w) - 1
        };
        let mut acc: u128 = 0;
        let mut bits = 0u32;
        let mut it = bytes.iter();
        for _ in 0..n {
            while bits < w {
                acc |= (*it.next().unwrap_or(&0) as u128) << bits;
                bits += 8;
            }
            let d = (acc & mask) as u64;
            acc >>= w;
            bits -= w;
            out.push((min as u64).wrapping_add(d) as i64);
        }
        Ok(out)
    }

    /// Checks the FOR column of exception starts that ends a DFORS or PFOR column of `n`
    /// values with the ascending exception indexes `exc`.
    fn exc_starts(&mut self, n: usize, exc: &[usize]) -> Result<(), DecErr> {
        let at = self.pos;
        let starts = self.for_col(n.div_ceil(DFORS_STRIDE))?;
        for (k, s) in starts.into_iter().enumerate() {
            if s != exc.partition_point(|&i| i < k * DFORS_STRIDE) as i64 {
                return Err((
                    at,
                    format!("exception start {k} disagrees with the list").into(),
                ));
            }
        }
        Ok(())
    }

    /// An exception list of `n_exc` entries for a column of `n` values (or deltas): patches
    /// `vals` and returns the indexes, checked strictly ascending and below `n`.
    fn exc_list(&mut self, n_exc: usize, vals: &mut [i64]) -> Result<Vec<usize>, DecErr> {
        let mut exc: Vec<usize> = Vec::with_capacity(n_exc);
        for _ in 0..n_exc {
            let at = self.pos;
            let i = self.u32()? as usize;
            let d = self.i64()?;
            if i >= vals.len() || exc.last().is_some_and(|&p| i <= p) {
                return Err((
                    at,
                    format!("exception index {i} out of order or range").into(),
                ));
            }
            vals[i] = d;
            exc.push(i);
        }
        Ok(exc)
    }

    /// An integer column in codec `codec` (FOR, DFOR, DFORS or PFOR) holding `want` values.
    fn int_col(&mut self, codec: u8, want: usize) -> Result<Vec<i64>, DecErr> {
        if codec == codec::FOR {
            return self.for_col(want);
        }
        if codec == codec::PFOR {
            let at = self.pos;
            let n = self.u32()? as usize;
            if n != want {
                return Err((
                    at,
                    format!("column holds {n} values, {want} expected").into(),
                ));
            }
            let mut vals = self.for_body(n)?;
            let at = self.pos;
            let n_exc = self.u32()? as usize;
            if n_exc > n {
                return Err((at, format!("{n_exc} exceptions for {n} values").into()));
            }
            let exc = self.exc_list(n_exc, &mut vals)?;
            self.exc_starts(n, &exc)?;
            return Ok(vals);
        }
        let at = self.pos;
        let n = self.u32()? as usize;
        if n != want {
            return Err((
                at,
                format!("column holds {n} values, {want} expected").into(),
            ));
        }
        let first = self.i64()?;
        let n_exc = self.u32()? as usize;
        let nd = n.saturating_sub(1);
        if n_exc > nd {
            return Err((
                self.pos - 4,
                format!("{n_exc} exceptions for {nd} deltas").into(),
            ));
        }
        let mut deltas = self.for_body(nd)?;
        let exc = self.exc_list(n_exc, &mut deltas)?;
        let mut out = Vec::with_capacity(n);
        if n > 0 {
            out.push(first);
            let mut cur = first;
            for d in deltas {
                cur = cur.wrapping_add(d);
                out.push(cur);
            }
        }
        if codec == codec::DFORS {
            let at = self.pos;
            let skips = self.for_col(n.div_ceil(DFORS_STRIDE))?;
            for (k, s) in skips.into_iter().enumerate() {
                if out[k * DFORS_STRIDE] != s {
                    return Err((
                        at,
                        format!("skip value {k} disagrees with the deltas").into(),
                    ));
                }
            }
            self.exc_starts(n, &exc)?;
        }
        Ok(out)
    }

    fn runs(&mut self, want: usize) -> Result<Vec<i64>, DecErr> {
        let nruns = self.u32()? as usize;
        if nruns > want {
            return Err((0, format!("{nruns} runs for {want} values").into()));
        }
        let mut out = Vec::with_capacity(want);
        for _ in 0..nruns {
            let at = self.pos;
            let v = self.i64()?;
            let n = self.u32()? as usize;
            if n == 0 || out.len() + n > want {
                return Err((
                    at,
                    format!("run of length {n} does not fit {want} values").into(),
                ));
            }
            out.resize(out.len() + n, v);
        }
        if out.len() != want {
            return Err((
                self.pos,
                format!("runs cover {} of {want} values", out.len()).into(),
            ));
        }
        Ok(out)
    }

    fn heap(&mut self, want: usize) -> Result<Vec<String>, DecErr> {
        let lens = self.for_col(want)?;
        let mut out = Vec::with_capacity(want);
        for l in lens {
            let at = self.pos;
            if l < 0 {
                return Err((at, "negative string length".into()));
            }
            let b = self.take(l as usize)?;
            let s = std::str::from_utf8(b).map_err(|_| (at, "string is not UTF-8".into()))?;
            out.push(s.to_string());
        }
        Ok(out)
    }
}

/// Fully decodes one integer column (FOR, DFOR, DFORS or PFOR) of `want` values that fills `b`.
#[cfg(test)]
pub(crate) fn decode_int(b: &[u8], codec: u8, want: usize) -> Result<Vec<i64>, CorruptionKind> {
    let mut r = Rd { b, pos: 0 };
    r.int_col(codec, want)
        .and_then(|v| r.done().map(|_| v))
        .map_err(|(o, k)| format!("at {o}: {k}").into())
}

/// The bytes of the one segment file in store directory `dir` (a test of a store with
/// exactly one segment, e.g. just compacted).
#[cfg(test)]
pub(crate) fn only_segment(dir: &std::path::Path) -> Vec<u8> {
    let segs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgs"))
        .collect();
    assert_eq!(segs.len(), 1, "{segs:?}");
    std::fs::read(&segs[0]).unwrap()
}

// ------------------------------------------------------------------ file layout

/// Summary of a segment for the manifest's zone map (`format-spec.md` §7.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZoneMap {
    /// Number of node rows in the segment, alive or not.
    pub node_rows: u64,
    /// Number of edge rows in the segment, alive or not.
    pub edge_rows: u64,
    /// Smallest `vt_s` of the segment's edge rows, µs (0 when none).
    pub vt_min: i64,
    /// Largest `vt_s` of the segment's edge rows, µs (0 when none).
    pub vt_max: i64,
    /// Largest `vt_e` of the segment's edge rows, µs (0 when none).
    pub max_vt_e: i64,
    /// Smallest `tt_s` of all rows of the segment, µs (0 when none).
    pub tt_min: i64,
    /// Largest `tt_s` of all rows of the segment, µs (0 when none).
    pub tt_max: i64,
    /// Distinct rel-type string ids of the segment's edge rows, ascending.
    pub rels: Vec<u32>,
}

fn u32s(v: impl Iterator<Item = u32>) -> Vec<i64> {
    v.map(|x| x as i64).collect()
}

/// An optional id as stored: `0` for none, else the id + 1.
fn opt_id(x: u32) -> i64 {
    if x == NONE {
        0
    } else {
        x as i64 + 1
    }
}

/// Encodes a segment file, its rows already in segment order (§6.1). `rel_of` maps an edge
/// identity id to its rel string id (for the zone map). With `indexes` and a full image
/// (`d.base` all zero: compaction) the file is minor 4: random-access codecs only, plus the
/// index chunks 64–80; otherwise (flush segments) it is minor 5. Both carry the closed-row
/// sets 81–82.
pub(crate) fn encode(
    seq: u64,
    d: &SegData,
    rel_of: &dyn Fn(u32) -> u32,
    indexes: bool,
) -> (Vec<u8>, ZoneMap) {
    let minor = if indexes && d.base == Marks::default() {
        SEG_MINOR_SORTED
    } else {
        SEG_MINOR_FLUSH
    };
    encode_as(seq, d, rel_of, minor)
}

/// [`encode`] as segment minor `minor`: 1 or 5, or (a full image only) 2, 3 or 4. (Minors 4
/// and 5 expect rows in segment order; tests write older minors.)
pub(crate) fn encode_as(
    seq: u64,
    d: &SegData,
    rel_of: &dyn Fn(u32) -> u32,
    minor: u16,
) -> (Vec<u8>, ZoneMap) {
    use chunk::*;
    let out = Vec::with_capacity(SEG_HEADER_LEN + 64 * (d.nodes.len() + d.edges.len()));
    let mut w = SegWriter::new(out, seq, minor, d.base);
    let mut body = Vec::new();
    for (id, codec) in chunk_layout_for(minor) {
        body.clear();
        let used = match id {
            NODE_CLOSED | EDGE_CLOSED => {
                let k = usize::from(id == EDGE_CLOSED);
                body = crate::format::bitmap::serialize(d.closes[k].iter().map(|c| c.row));
                codec
            }
            UIDS => {
                put_heap(&mut body, &d.uids);
                codec
            }
            STRINGS => {
                put_heap(&mut body, &d.strings);
                codec
            }
            _ => put_int_chunk(&mut body, id, codec, minor, &int_chunk(d, id)),
        };
        w.chunk(id, used, &body);
    }
    let (out, _, _) = w.finish();

    let mut z = ZoneMap {
        node_rows: d.nodes.len() as u64,
        edge_rows: d.edges.len() as u64,
        ..ZoneMap::default()
    };
    if let Some(first) = d.edges.first() {
        z.vt_min = first.vt_s;
        z.vt_max = first.vt_s;
        for r in &d.edges {
            z.vt_min = z.vt_min.min(r.vt_s);
            z.vt_max = z.vt_max.max(r.vt_s);
            z.max_vt_e = z.max_vt_e.max(r.vt_e);
            z.rels.push(rel_of(r.ident));
        }
    }
    let tts = d.nodes.iter().chain(d.edges.iter()).map(|r| r.tt_s);
    z.tt_min = tts.clone().min().unwrap_or(0);
    z.tt_max = tts.max().unwrap_or(0);
    z.rels.sort_unstable();
    z.rels.dedup();
    (out, z)
}

/// A segment file written front to back (§6.2): the header, then each chunk as it is
/// encoded, then the footer (the directory of the chunks written) and the trailer. The
/// bytes go to a `Vec<u8>` (flush segments, tests) or to a file (compaction over a mapped
/// image, which never holds the whole file); they are counted and hashed (BLAKE3, the
/// manifest's digest) on the way. The first write error is kept and returned by
/// [`SegWriter::finish`].
pub(crate) struct SegWriter<W: std::io::Write> {
    w: W,
    len: u64,
    hash: blake3::Hasher,
    /// `(chunk id, codec, offset, length, crc32)` of each chunk written.
    dir: Vec<(u16, u8, u64, u64, u32)>,
    err: Option<std::io::Error>,
}

impl<W: std::io::Write> SegWriter<W> {
    /// Starts segment `seq` of minor `minor` whose base marks are `base`: writes the header.
    pub(crate) fn new(w: W, seq: u64, minor: u16, base: Marks) -> SegWriter<W> {
        let mut h = Vec::with_capacity(SEG_HEADER_LEN);
        h.extend_from_slice(SEG_MAGIC);
        h.extend_from_slice(&SEG_MAJOR.to_le_bytes());
        h.extend_from_slice(&minor.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&seq.to_le_bytes());
        for m in base.to_array() {
            h.extend_from_slice(&m.to_le_bytes());
        }
        let crc = crc32fast::hash(&h);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        let mut sw = SegWriter {
            w,
            len: 0,
            hash: blake3::Hasher::new(),
            dir: Vec::new(),
            err: None,
        };
        sw.put(&h);
        sw
    }

    fn put(&mut self, b: &[u8]) {
        if self.err.is_none() {
            match self.w.write_all(b) {
                Ok(()) => {
                    self.hash.update(b);
                    self.len += b.len() as u64;
                }
                Err(e) => self.err = Some(e),
            }
        }
    }

    /// Appends chunk `id`, encoded as `body` in codec `codec` (chunks go in layout order).
    pub(crate) fn chunk(&mut self, id: u16, codec: u8, body: &[u8]) {
        self.dir.push((
            id,
            codec,
            self.len,
            body.len() as u64,
            crc32fast::hash(body),
        ));
        self.put(body);
    }

    /// Writes the footer and trailer; returns the sink, the file's length and its BLAKE3
    /// digest, or the first write error.
    pub(crate) fn finish_io(mut self) -> std::io::Result<(W, u64, [u8; 32])> {
        let footer_offset = self.len;
        let mut footer = Vec::with_capacity(4 + DIR_ENTRY_LEN * self.dir.len());
        footer.extend_from_slice(&(self.dir.len() as u32).to_le_bytes());
        for (id, codec, off, len, crc) in &self.dir {
            footer.extend_from_slice(&id.to_le_bytes());
            footer.push(*codec);
            footer.push(0);
            footer.extend_from_slice(&off.to_le_bytes());
            footer.extend_from_slice(&(*len as u32).to_le_bytes());
            footer.extend_from_slice(&crc.to_le_bytes());
            footer.extend_from_slice(&0u32.to_le_bytes());
        }
        let mut tail = Vec::with_capacity(footer.len() + SEG_TRAILER_LEN);
        tail.extend_from_slice(&footer);
        tail.extend_from_slice(&footer_offset.to_le_bytes());
        tail.extend_from_slice(&(footer.len() as u64).to_le_bytes());
        tail.extend_from_slice(&crc32fast::hash(&footer).to_le_bytes());
        tail.extend_from_slice(SEG_TRAILER_MAGIC);
        self.put(&tail);
        match self.err {
            Some(e) => Err(e),
            None => Ok((self.w, self.len, *self.hash.finalize().as_bytes())),
        }
    }
}

impl SegWriter<Vec<u8>> {
    /// [`SegWriter::finish_io`] of an in-memory segment, which cannot fail.
    pub(crate) fn finish(self) -> (Vec<u8>, u64, [u8; 32]) {
        match self.finish_io() {
            Ok(r) => r,
            Err(_) => unreachable!("writing to a Vec<u8> does not fail"),
        }
    }
}

/// Encodes the values of integer chunk `id` (nominal codec `codec`, §6.3) of a segment of
/// minor `minor` into `body`, in the codec the format allows there that is smallest;
/// returns the codec used. A minor-2, 3 or 4 segment takes the smallest random-access codec
/// for every chunk; a flush segment packs the small columns with FOR and the others with
/// the smaller of FOR and DFOR; a `tt_s` chunk is RUNS unless (minors 4 and 5) an integer
/// column is smaller.
pub(crate) fn put_int_chunk(body: &mut Vec<u8>, id: u16, codec: u8, minor: u16, v: &[i64]) -> u8 {
    use chunk::*;
    let indexed = is_indexed(minor);
    let put = |out: &mut Vec<u8>| {
        if indexed {
            put_int_ra(out, v)
        } else {
            put_int(out, v)
        }
    };
    let row_col = match id {
        ROWS_NODE..=27 => Some(id - ROWS_NODE),
        ROWS_EDGE..=43 => Some(id - ROWS_EDGE),
        _ => None,
    };
    match row_col {
        Some(TT_S) => {
            put_runs(body, v);
            // A sorted segment takes an integer column instead when it is smaller (rows
            // in `vt_s` order from a log that arrived out of time order).
            let mut ints = Vec::new();
            let c = if is_sorted(minor) {
                put(&mut ints)
            } else {
                codec
            };
            if !ints.is_empty() && ints.len() < body.len() {
                std::mem::swap(body, &mut ints);
                c
            } else {
                codec
            }
        }
        // Columns that a flush segment always packs with FOR (small or sparse values); an
        // indexed segment picks among its random-access codecs (a sparse `reason` column
        // packs far smaller as PFOR).
        Some(REASON | ORIGIN | ALIVE | CLOSE_TT_E | CLOSE_BY | CLOSE_REASON) if !indexed => {
            put_for(body, v);
            codec::FOR
        }
        _ => put(body),
    }
}

/// The stored value of content column `id` (chunks 3–6) of content `c`.
pub(crate) fn content_value(id: u16, c: &Content) -> i64 {
    use chunk::*;
    i64::from(match id {
        CONTENT_LABEL => c.label,
        CONTENT_PROPS => c.props,
        CONTENT_SOURCE => c.source,
        _ => c.provenance,
    })
}

/// The stored value of identity column `id` (chunks 7–11) of identity `e`.
pub(crate) fn ident_value(id: u16, e: &IdentRec) -> i64 {
    use chunk::*;
    match id {
        IDENT_SRC => i64::from(e.src),
        IDENT_DST => i64::from(e.dst),
        IDENT_REL => i64::from(e.rel),
        IDENT_DISC_TAG => matches!(e.disc, Disc::Str(_)) as i64 | (e.mapped as i64) << 1,
        _ => match e.disc {
            Disc::Ordinal(k) => k as i64,
            Disc::Str(s) => i64::from(s),
        },
    }
}

/// The stored value of row column `c` (`IDENT` … `ALIVE`, §6.3) of row `r`.
pub(crate) fn row_value(c: u16, r: &Row) -> i64 {
    use chunk::*;
    match c {
        IDENT => i64::from(r.ident),
        CONTENT => i64::from(r.content),
        VT_S => r.vt_s,
        // 0 = open end; an instantaneous row stores 1, so a segment of instantaneous rows
        // packs this column to width 0 (elided).
        VT_LEN if r.vt_e == OPEN_END => 0,
        VT_LEN => r.vt_e - r.vt_s,
        TT_S => r.tt_s,
        REASON => opt_id(r.reason),
        ORIGIN => r.origin as u8 as i64,
        _ => r.alive as i64,
    }
}

/// The stored value of close column `c` (`CLOSE_ROW` … `CLOSE_REASON`) of closure `x`.
pub(crate) fn close_value(c: u16, x: &Closure) -> i64 {
    use chunk::*;
    match c {
        CLOSE_ROW => i64::from(x.row),
        CLOSE_TT_E => x.tt_e,
        CLOSE_BY => x.closed_by as u8 as i64,
        _ => opt_id(x.close_reason),
    }
}

/// The values of integer chunk `id` of segment `d`.
fn int_chunk(d: &SegData, id: u16) -> Vec<i64> {
    use chunk::*;
    match id {
        UID_OFFS..=EDGE_LONG_BY_END => index_column(d, id),
        CONTENT_LABEL..=CONTENT_PROV => d.contents.iter().map(|c| content_value(id, c)).collect(),
        IDENT_SRC..=IDENT_DISC_VAL => d.idents.iter().map(|e| ident_value(id, e)).collect(),
        SLOTS => u32s(d.slots.iter().copied()),
        _ => {
            let (g, rows, closes) = if id < ROWS_EDGE {
                (ROWS_NODE, &d.nodes, &d.closes[0])
            } else {
                (ROWS_EDGE, &d.edges, &d.closes[1])
            };
            let c = id - g;
            if c < CLOSE_ROW {
                rows.iter().map(|r| row_value(c, r)).collect()
            } else {
                closes.iter().map(|x| close_value(c, x)).collect()
            }
        }
    }
}

/// Index chunk `id` (64–80) of a full image `d`, as an integer column: exactly what
/// `State::load_seg` builds (postings, adjacency) plus heap offsets, sort orders and the
/// valid-time orders. One chunk at a time, so an encoder or verifier holds one such column
/// (a few bytes per row) rather than all of them.
pub(crate) fn index_column(d: &SegData, id: u16) -> Vec<i64> {
    use chunk::*;
    fn offsets(v: &[String]) -> Vec<i64> {
        let mut o = Vec::with_capacity(v.len() + 1);
        let mut at = 0i64;
        o.push(0);
        for s in v {
            at += s.len() as i64;
            o.push(at);
        }
        o
    }
    fn order(v: &[String]) -> Vec<i64> {
        let mut ids: Vec<u32> = (0..v.len() as u32).collect();
        ids.sort_by(|&a, &b| v[a as usize].as_bytes().cmp(v[b as usize].as_bytes()));
        u32s(ids.into_iter())
    }
    let nu = d.uids.len();
    let ends = |dst: bool| {
        d.edges.iter().map(move |r| {
            d.idents
                .get(r.ident as usize)
                .map_or(NONE, |e| if dst { e.dst } else { e.src })
        })
    };
    let idents = || d.edges.iter().map(|r| r.ident);
    match id {
        UID_OFFS => offsets(&d.uids),
        STR_OFFS => offsets(&d.strings),
        UID_ORDER => order(&d.uids),
        STR_ORDER => order(&d.strings),
        NODE_POST_OFF | NODE_POST => group(nu, d.nodes.iter().map(|r| r.ident), id == NODE_POST),
        EDGE_POST_OFF | EDGE_POST => group(d.idents.len(), idents(), id == EDGE_POST),
        OUT_OFF | OUT => group(nu, ends(false), id == OUT),
        IN_OFF | IN => group(nu, ends(true), id == IN),
        MAPPED_ORDER => {
            let mut mapped: Vec<u32> = (0..d.idents.len() as u32)
                .filter(|&k| d.idents[k as usize].mapped)
                .collect();
            mapped.sort_by_key(|&k| ident_key(&d.idents[k as usize]));
            u32s(mapped.into_iter())
        }
        NODE_BY_START => start_order(&d.nodes),
        NODE_LONG_BY_END => long_end_order(&d.nodes),
        EDGE_BY_START => start_order(&d.edges),
        EDGE_LONG_BY_END => long_end_order(&d.edges),
        _ => Vec::new(),
    }
}

/// Groups `0..keys.len()` by `keys[i]` (stable, so ascending within a key; keys ≥ n
/// are dropped): the n + 1 offsets, or (`vals`) the grouped positions. The offsets are
/// counted as u32 (a segment's counts are), 4 bytes a key beside the column.
pub(crate) fn group(n: usize, keys: impl Iterator<Item = u32> + Clone, vals: bool) -> Vec<i64> {
    let off = group_offsets(n, keys.clone());
    if vals {
        group_list(off, keys)
    } else {
        off.into_iter().map(i64::from).collect()
    }
}

/// [`group`]'s offsets and positions both, from one count of the keys: a grouping's two
/// chunks (offsets, list) built together.
pub(crate) fn group_both(n: usize, keys: impl Iterator<Item = u32> + Clone) -> [Vec<i64>; 2] {
    let off = group_offsets(n, keys.clone());
    let offsets = off.iter().map(|&o| i64::from(o)).collect();
    [offsets, group_list(off, keys)]
}

/// The n + 1 start offsets of the keys below `n`, counted.
fn group_offsets(n: usize, keys: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut off = vec![0u32; n + 1];
    for k in keys {
        if (k as usize) < n {
            off[k as usize + 1] += 1;
        }
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    off
}

/// The positions of the keys below `n` grouped by key, placed from the start offsets `off`.
fn group_list(mut off: Vec<u32>, keys: impl Iterator<Item = u32>) -> Vec<i64> {
    let n = off.len() - 1;
    let mut out = vec![0i64; off[n] as usize];
    for (r, k) in keys.enumerate() {
        if (k as usize) < n {
            out[off[k as usize] as usize] = r as i64;
            off[k as usize] += 1;
        }
    }
    out
}

/// Chunk 77 or 79 (the valid-time index, §6.5): every row number sorted by `(vt_s, row)` —
/// the rows themselves when they are in `vt_s` order already (a minor-4 image).
fn start_order(rows: &[crate::model::Row]) -> Vec<i64> {
    if rows.windows(2).all(|w| w[0].vt_s <= w[1].vt_s) {
        return (0..rows.len() as i64).collect();
    }
    let mut by_start: Vec<(i64, u32)> = (0..rows.len()).map(|r| (rows[r].vt_s, r as u32)).collect();
    by_start.sort_unstable();
    u32s(by_start.into_iter().map(|p| p.1))
}

/// Chunk 78 or 80: the rows whose interval is longer than one microsecond (`vt_e != vt_s +
/// 1`, open ends included) sorted by `(vt_e, row)`. Every row is listed, alive or not, open
/// or closed: readers test belief on the row.
fn long_end_order(rows: &[crate::model::Row]) -> Vec<i64> {
    let mut by_end: Vec<(i64, u32)> = (0..rows.len())
        .filter(|&r| rows[r].vt_e != rows[r].vt_s.saturating_add(1))
        .map(|r| (rows[r].vt_e, r as u32))
        .collect();
    by_end.sort_unstable();
    u32s(by_end.into_iter().map(|p| p.1))
}

/// Sort key of an identity in the mapped-identity order (chunk 76): `(src, dst, rel, disc
/// tag bit 0, disc value as u64)`.
pub(crate) fn ident_key(e: &IdentRec) -> (u32, u32, u32, u8, u64) {
    let (tag, val) = disc_parts(e.disc);
    (e.src, e.dst, e.rel, tag, val)
}

/// A disc as its stored tag bit 0 and value.
pub(crate) fn disc_parts(d: Disc) -> (u8, u64) {
    match d {
        Disc::Ordinal(k) => (0, k),
        Disc::Str(s) => (1, s as u64),
    }
}

/// A problem found in a segment file: byte offset in the file and what is wrong.
pub type SegErr = (u64, CorruptionKind);

/// Verifies and decodes a segment file: header, trailer, footer crc, every chunk's crc,
/// then every column. The first problem is returned with its file offset.
/// Index chunks (minors 2, 3) are checked only for their crc and directory entry here; see
/// [`verify`] for the full check.
pub(crate) fn decode(b: &[u8]) -> Result<(u64, SegData), SegErr> {
    decode_with(b, false)
}

/// [`decode`], also checking that the index chunks of a minor-2, 3 or 4 segment equal what
/// its rows imply and that the closed-row sets of a minor-4 or 5 segment hold its close rows
/// (invariant S8), and that a minor-4 or 5 segment's rows are in segment order (S9); used
/// by `tgms check`.
pub(crate) fn decode_checked(b: &[u8]) -> Result<(u64, SegData), SegErr> {
    decode_with(b, true)
}

/// A segment's verified header and chunk directory.
pub(crate) struct Dir {
    pub(crate) minor: u16,
    pub(crate) seq: u64,
    pub(crate) base: [u64; 7],
    /// `(chunk id, nominal codec)` in file order (`chunk_layout_for(minor)`).
    pub(crate) layout: Vec<(u16, u8)>,
    /// The codec each chunk uses.
    pub(crate) codecs: Vec<u8>,
    /// File offset and byte length of each chunk.
    pub(crate) offsets: Vec<u64>,
    pub(crate) lens: Vec<usize>,
}

/// Checks a segment's header, trailer, footer crc, directory layout (for its minor) and
/// every chunk's crc32; returns the directory.
pub(crate) fn read_dir(b: &[u8]) -> Result<Dir, SegErr> {
    read_dir_with(b, &mut |_| {})
}

/// [`read_dir`], calling `checked(end)` after each chunk's crc check with the offset where
/// the chunk ends (the caller may release the pages before it).
pub(crate) fn read_dir_with(b: &[u8], checked: &mut dyn FnMut(usize)) -> Result<Dir, SegErr> {
    if b.len() < SEG_HEADER_LEN + SEG_TRAILER_LEN {
        return Err((
            0,
            format!("file of {} bytes is too short for a segment", b.len()).into(),
        ));
    }
    if &b[..8] != SEG_MAGIC {
        let format = "segment";
        return Err((0, CorruptionKind::BadMagic { format }));
    }
    let le64 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
    let le32 = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]));
    let hcrc = le32(80);
    if crc32fast::hash(&b[..80]) != hcrc {
        let what = "header".into();
        return Err((80, CorruptionKind::ChecksumMismatch { what }));
    }
    if le32(84) != 0 {
        return Err((84, "header padding is not zero".into()));
    }
    let major = u16::from_le_bytes([b[8], b[9]]);
    if major != SEG_MAJOR {
        let what = "segment major";
        let (version, reads) = (major, None);
        return Err((
            8,
            CorruptionKind::UnsupportedVersion {
                what,
                version,
                reads,
            },
        ));
    }
    let seq = le64(16);
    let mut base = [0u64; 7];
    for (k, m) in base.iter_mut().enumerate() {
        *m = le64(24 + 8 * k);
    }
    let t = b.len() - SEG_TRAILER_LEN;
    if &b[t + 20..] != SEG_TRAILER_MAGIC {
        return Err((t as u64 + 20, "bad trailer magic (file truncated?)".into()));
    }
    let (f_off, f_len, f_crc) = (le64(t), le64(t + 8), le32(t + 16));
    if f_off.checked_add(f_len) != Some(t as u64) || f_off < SEG_HEADER_LEN as u64 {
        return Err((
            t as u64,
            "footer position inconsistent with file length".into(),
        ));
    }
    let footer = &b[f_off as usize..t];
    if crc32fast::hash(footer) != f_crc {
        let what = "footer".into();
        return Err((f_off, CorruptionKind::ChecksumMismatch { what }));
    }
    let minor = u16::from_le_bytes([b[10], b[11]]);
    if minor > SEG_MINOR_FLUSH {
        let what = "segment minor";
        let (version, reads) = (minor, None);
        return Err((
            10,
            CorruptionKind::UnsupportedVersion {
                what,
                version,
                reads,
            },
        ));
    }
    let layout = chunk_layout_for(minor);
    if footer.len() != 4 + DIR_ENTRY_LEN * layout.len()
        || u32::from_le_bytes(footer[..4].try_into().unwrap_or([0; 4])) as usize != layout.len()
    {
        return Err((
            f_off,
            format!("chunk directory does not list the chunks of segment minor {minor}").into(),
        ));
    }
    if is_indexed(minor) && base != [0; 7] {
        return Err((
            24,
            "an indexed (minor 2, 3 or 4) segment must be a full image".into(),
        ));
    }
    let mut codecs: Vec<u8> = Vec::with_capacity(layout.len());
    let mut offsets: Vec<u64> = Vec::with_capacity(layout.len());
    let mut lens: Vec<usize> = Vec::with_capacity(layout.len());
    let mut expect_off = SEG_HEADER_LEN as u64;
    for (k, &(id, codec)) in layout.iter().enumerate() {
        let e = &footer[4 + DIR_ENTRY_LEN * k..4 + DIR_ENTRY_LEN * (k + 1)];
        let at = f_off + 4 + (DIR_ENTRY_LEN * k) as u64;
        let eid = u16::from_le_bytes([e[0], e[1]]);
        let off = u64::from_le_bytes(e[4..12].try_into().unwrap_or([0; 8]));
        let len = u32::from_le_bytes(e[12..16].try_into().unwrap_or([0; 4])) as u64;
        let crc = u32::from_le_bytes(e[16..20].try_into().unwrap_or([0; 4]));
        // The integer codecs a FOR chunk may use instead: DFOR in flush segments (minors
        // 1 and 5), the random-access ones in full images (2–4); a sorted segment (4, 5)
        // may store `tt_s` (RUNS) as such an integer column too.
        let ints: &[u8] = match minor {
            0 => &[],
            1 | SEG_MINOR_FLUSH => &[codec::FOR, codec::DFOR],
            _ => &[codec::FOR, codec::DFORS, codec::PFOR],
        };
        let codec_ok = e[2] == codec
            || (codec == codec::FOR && ints.contains(&e[2]))
            || (codec == codec::RUNS && is_sorted(minor) && ints.contains(&e[2]));
        if eid != id || !codec_ok || off != expect_off || off + len > f_off {
            return Err((
                at,
                format!("directory entry {k} (chunk {eid}) is inconsistent").into(),
            ));
        }
        codecs.push(e[2]);
        let body = &b[off as usize..(off + len) as usize];
        if crc32fast::hash(body) != crc {
            let what = format!("chunk {id}");
            return Err((off, CorruptionKind::ChecksumMismatch { what }));
        }
        checked((off + len) as usize);
        lens.push(len as usize);
        offsets.push(off);
        expect_off = off + len;
    }
    if expect_off != f_off {
        return Err((
            expect_off,
            "bytes between the last chunk and the footer".into(),
        ));
    }
    Ok(Dir {
        minor,
        seq,
        base,
        layout,
        codecs,
        offsets,
        lens,
    })
}

fn decode_with(b: &[u8], check_indexes: bool) -> Result<(u64, SegData), SegErr> {
    use chunk::*;
    let Dir {
        minor,
        seq,
        base,
        layout,
        codecs,
        offsets,
        lens,
    } = read_dir(b)?;
    let chunks: Vec<&[u8]> = offsets
        .iter()
        .zip(&lens)
        .map(|(&o, &l)| &b[o as usize..o as usize + l])
        .collect();
    // Decode. Counts come from the directory's chunks themselves; every column of a table
    // must agree with the first.
    let idx = |id: u16| layout.iter().position(|&(c, _)| c == id).unwrap_or(0);
    let count_of = |id: u16| -> Result<usize, SegErr> {
        let c = chunks[idx(id)];
        if c.len() < 4 {
            return Err((offsets[idx(id)], "chunk too short".into()));
        }
        let at = if layout[idx(id)].1 == codec::RUNS {
            usize::MAX
        } else {
            0
        };
        if at == usize::MAX {
            return Err((offsets[idx(id)], "count of a runs chunk".into()));
        }
        Ok(u32::from_le_bytes(c[..4].try_into().unwrap_or([0; 4])) as usize)
    };
    let col = |id: u16, want: usize| -> Result<Vec<i64>, SegErr> {
        let mut r = Rd {
            b: chunks[idx(id)],
            pos: 0,
        };
        let v = r
            .int_col(codecs[idx(id)], want)
            .and_then(|v| r.done().map(|_| v));
        v.map_err(|(o, k)| (offsets[idx(id)] + o as u64, k.in_chunk(id)))
    };
    let heap = |id: u16| -> Result<Vec<String>, SegErr> {
        let want = count_of(id)?;
        let mut r = Rd {
            b: chunks[idx(id)],
            pos: 0,
        };
        let v = r.heap(want).and_then(|v| r.done().map(|_| v));
        v.map_err(|(o, k)| (offsets[idx(id)] + o as u64, k.in_chunk(id)))
    };
    let as_u32 = |id: u16, v: Vec<i64>| -> Result<Vec<u32>, SegErr> {
        v.into_iter()
            .map(|x| {
                u32::try_from(x).map_err(|_| {
                    (
                        offsets[idx(id)],
                        CorruptionKind::from(format!("value {x} out of range")).in_chunk(id),
                    )
                })
            })
            .collect()
    };
    let opt_u32 = |id: u16, v: Vec<i64>| -> Result<Vec<u32>, SegErr> {
        v.into_iter()
            .map(|x| match x {
                0 => Ok(NONE),
                x if x > 0 && x <= u32::MAX as i64 => Ok((x - 1) as u32),
                x => Err((
                    offsets[idx(id)],
                    CorruptionKind::from(format!("value {x} out of range")).in_chunk(id),
                )),
            })
            .collect()
    };
    let mut d = SegData {
        base: Marks::from_array(base),
        uids: heap(UIDS)?,
        strings: heap(STRINGS)?,
        ..SegData::default()
    };
    let nc = count_of(CONTENT_LABEL)?;
    let cols: Vec<Vec<u32>> = [CONTENT_LABEL, CONTENT_PROPS, CONTENT_SOURCE, CONTENT_PROV]
        .iter()
        .map(|&id| col(id, nc).and_then(|v| as_u32(id, v)))
        .collect::<Result<_, _>>()?;
    d.contents = (0..nc)
        .map(|i| Content {
            label: cols[0][i],
            props: cols[1][i],
            source: cols[2][i],
            provenance: cols[3][i],
        })
        .collect();
    let ni = count_of(IDENT_SRC)?;
    let src = as_u32(IDENT_SRC, col(IDENT_SRC, ni)?)?;
    let dst = as_u32(IDENT_DST, col(IDENT_DST, ni)?)?;
    let rel = as_u32(IDENT_REL, col(IDENT_REL, ni)?)?;
    let tag = col(IDENT_DISC_TAG, ni)?;
    let val = col(IDENT_DISC_VAL, ni)?;
    for i in 0..ni {
        let disc = match tag[i] & 1 {
            0 => Disc::Ordinal(val[i] as u64),
            _ => Disc::Str(u32::try_from(val[i]).map_err(|_| {
                (
                    offsets[idx(IDENT_DISC_VAL)],
                    "disc string id out of range".into(),
                )
            })?),
        };
        if tag[i] & !3 != 0 {
            return Err((
                offsets[idx(IDENT_DISC_TAG)],
                format!("unknown disc tag {}", tag[i]).into(),
            ));
        }
        d.idents.push(IdentRec {
            src: src[i],
            dst: dst[i],
            rel: rel[i],
            disc,
            mapped: tag[i] & 2 != 0,
        });
    }
    let ns = count_of(SLOTS)?;
    d.slots = as_u32(SLOTS, col(SLOTS, ns)?)?;
    for (k, g) in [ROWS_NODE, ROWS_EDGE].into_iter().enumerate() {
        let n = count_of(g + IDENT)?;
        let ident = as_u32(g + IDENT, col(g + IDENT, n)?)?;
        let content = as_u32(g + CONTENT, col(g + CONTENT, n)?)?;
        let vt_s = col(g + VT_S, n)?;
        let vt_len = col(g + VT_LEN, n)?;
        let tt_s = {
            let id = g + TT_S;
            let mut r = Rd {
                b: chunks[idx(id)],
                pos: 0,
            };
            if codecs[idx(id)] == codec::RUNS {
                r.runs(n)
                    .and_then(|v| r.done().map(|_| v))
                    .map_err(|(o, kd)| (offsets[idx(id)] + o as u64, kd.in_chunk(id)))?
            } else {
                col(id, n)?
            }
        };
        let reason = opt_u32(g + REASON, col(g + REASON, n)?)?;
        let origin = col(g + ORIGIN, n)?;
        let alive = col(g + ALIVE, n)?;
        let mut rows = Vec::with_capacity(n);
        for i in 0..n {
            let bad =
                |id: u16, what: &str| (offsets[idx(g + id)], format!("row {i}: {what}").into());
            let vt_e = match vt_len[i] {
                0 => OPEN_END,
                l if l > 0 && vt_s[i].checked_add(l).is_some_and(|e| e < OPEN_END) => vt_s[i] + l,
                _ => return Err(bad(VT_LEN, "illegal valid-time length")),
            };
            let origin = u8::try_from(origin[i])
                .ok()
                .and_then(Origin::from_u8)
                .ok_or_else(|| bad(ORIGIN, "unknown origin"))?;
            if !(0..=1).contains(&alive[i]) {
                return Err(bad(ALIVE, "alive flag is not 0 or 1"));
            }
            rows.push(Row {
                ident: ident[i],
                content: content[i],
                vt_s: vt_s[i],
                vt_e,
                tt_s: tt_s[i],
                tt_e: OPEN_END,
                reason: reason[i],
                close_reason: NONE,
                origin,
                closed_by: None,
                alive: alive[i] == 1,
            });
        }
        let nclose = count_of(g + CLOSE_ROW)?;
        let crow = as_u32(g + CLOSE_ROW, col(g + CLOSE_ROW, nclose)?)?;
        let ctt = col(g + CLOSE_TT_E, nclose)?;
        let cby = col(g + CLOSE_BY, nclose)?;
        let creason = opt_u32(g + CLOSE_REASON, col(g + CLOSE_REASON, nclose)?)?;
        let mut closes = Vec::with_capacity(nclose);
        for i in 0..nclose {
            let closed_by = u8::try_from(cby[i])
                .ok()
                .and_then(Origin::from_u8)
                .ok_or_else(|| {
                    (
                        offsets[idx(g + CLOSE_BY)],
                        format!("closure {i}: unknown kind").into(),
                    )
                })?;
            if i > 0 && crow[i] <= crow[i - 1] {
                return Err((
                    offsets[idx(g + CLOSE_ROW)],
                    "closure rows not strictly ascending".into(),
                ));
            }
            closes.push(Closure {
                row: crow[i],
                tt_e: ctt[i],
                closed_by,
                close_reason: creason[i],
            });
        }
        if k == 0 {
            d.nodes = rows;
        } else {
            d.edges = rows;
        }
        d.closes[k] = closes;
    }
    if check_indexes && is_sorted(minor) {
        segment_order_holds(&d).map_err(|(k, row)| {
            let id = [ROWS_NODE, ROWS_EDGE][k] + VT_S;
            (
                offsets[idx(id)],
                format!(
                    "row {row} of the {} table is out of segment order (invariant S9)",
                    ["node", "edge"][k]
                )
                .into(),
            )
        })?;
        for (k, id) in [NODE_CLOSED, EDGE_CLOSED].into_iter().enumerate() {
            let at = offsets[idx(id)];
            let rows = crate::format::bitmap::values(chunks[idx(id)]).map_err(|e| (at, e))?;
            if !rows.iter().eq(d.closes[k].iter().map(|c| &c.row)) {
                return Err((
                    at,
                    format!("closed-row set {id} disagrees with the close rows (invariant S8)")
                        .into(),
                ));
            }
        }
    }
    if check_indexes && is_indexed(minor) {
        let ids = layout.iter().map(|c| c.0);
        for id in ids.filter(|id| (UID_OFFS..=EDGE_LONG_BY_END).contains(id)) {
            let want = index_column(&d, id);
            if col(id, want.len())? != want {
                return Err((
                    offsets[idx(id)],
                    format!("index chunk {id} disagrees with the rows (invariant S8)").into(),
                ));
            }
        }
    }
    Ok((seq, d))
}

/// `Err((table, row))` for the first row of a full image (nodes 0, edges 1) that sorts
/// before its predecessor in segment order `(vt_s, ident, tt_s)` (invariant S9).
fn segment_order_holds(d: &SegData) -> Result<(), (usize, usize)> {
    for (k, rows) in [&d.nodes, &d.edges].into_iter().enumerate() {
        let key = |r: &crate::model::Row| (r.vt_s, r.ident, r.tt_s);
        if let Some(i) = rows.windows(2).position(|w| key(&w[0]) > key(&w[1])) {
            return Err((k, i + 1));
        }
    }
    Ok(())
}

/// Decodes a segment and checks what loading it into a store checks of its values (ids
/// within the dictionaries, legal times: `State::check_at`), without the index comparisons
/// of [`verify`]: `Err((file offset, what))` on the first problem.
pub fn decode_structure(b: &[u8]) -> Result<(), SegErr> {
    let (_, d) = decode(b)?;
    d.check_at(d.base).map_err(|k| (0, k))
}

/// Verifies a segment file's structure, checksums and columns, that the index chunks of a
/// minor-2, 3 or 4 segment equal what its rows imply and that a minor-4 segment's rows are
/// in segment order (not its chaining with other segments): `Err((file offset, what))` on
/// the first problem.
pub fn verify(b: &[u8]) -> Result<(), SegErr> {
    decode_with(b, true).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(v: &[i64]) {
        for (enc, codec) in [
            (put_for as fn(&mut Vec<u8>, &[i64]), codec::FOR),
            (put_dfor, codec::DFOR),
        ] {
            let mut b = Vec::new();
            enc(&mut b, v);
            let mut r = Rd { b: &b, pos: 0 };
            assert_eq!(r.int_col(codec, v.len()).unwrap(), v, "codec {codec}");
            assert!(r.done().is_ok());
        }
        let mut b = Vec::new();
        let c = put_int(&mut b, v);
        let mut r = Rd { b: &b, pos: 0 };
        assert_eq!(r.int_col(c, v.len()).unwrap(), v);
    }

    #[test]
    fn dfor_packs_mostly_increasing_columns_with_outliers() {
        let mut v: Vec<i64> = (0..10_000).collect();
        v[5_000] = 3;
        v[7_000] = i64::MIN;
        roundtrip(&v);
        let mut b = Vec::new();
        assert_eq!(put_int(&mut b, &v), codec::DFOR);
        assert!(b.len() < 10_000 / 4 + 100, "{} bytes", b.len());
        roundtrip(&[]);
        roundtrip(&[i64::MAX, i64::MIN, 0, -1, 1]);
    }

    proptest! {
        #[test]
        fn int_codecs_round_trip(v in prop::collection::vec(
            prop_oneof![8 => 0..64i64, 1 => any::<i64>()], 0..300)) {
            roundtrip(&v);
        }

        #[test]
        fn random_access_choice_equals_the_smallest_encoding(v in prop::collection::vec(
            prop_oneof![8 => 0..64i64, 2 => -3..3i64, 1 => any::<i64>()], 0..400),
            ascending in any::<bool>()) {
            let mut v = v;
            if ascending {
                v.sort_unstable();
            }
            check_choice(&v);
        }
    }

    /// The frame of the sorting computation (the oracle of `patched_frame`).
    fn sorted_frame(vals: &[i64]) -> (i64, u32) {
        let mut sorted = vals.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let (mut best_min, mut best_w, mut best_cost) = (0i64, 0u32, u128::MAX);
        if n > 0 {
            let mut bases: Vec<i64> = [0, n / 10_000, n / 1_000, n / 100]
                .iter()
                .map(|&i| sorted[i.min(n - 1)])
                .collect();
            bases.dedup();
            for &m in &bases {
                let lo = sorted.partition_point(|&x| x < m);
                for w in 0..=64u32 {
                    let hi = if w == 64 {
                        n
                    } else {
                        let top = (m as i128) + (1i128 << w);
                        sorted.partition_point(|&x| (x as i128) < top)
                    };
                    let exc = (n - (hi - lo)) as u128;
                    let cost = (n as u128 * w as u128).div_ceil(8) + exc * 12;
                    if cost < best_cost {
                        (best_min, best_w, best_cost) = (m, w, cost);
                    }
                    if hi == n {
                        break;
                    }
                }
            }
        }
        (best_min, best_w)
    }

    /// `put_int_ra` writes the smallest of the three encodings (FOR on a tie, then DFORS),
    /// byte for byte, and the frame equals the sorting computation's.
    fn check_choice(v: &[i64]) {
        assert_eq!(
            patched_frame(v.iter().copied()),
            sorted_frame(v),
            "frame of {} values",
            v.len()
        );
        let deltas: Vec<i64> = deltas_of(v).collect();
        assert_eq!(
            patched_frame(deltas_of(v)),
            sorted_frame(&deltas),
            "frame of deltas"
        );
        let mut best = Vec::new();
        put_for(&mut best, v);
        let mut c = codec::FOR;
        for (enc, k) in [
            (put_dfors as fn(&mut Vec<u8>, &[i64]), codec::DFORS),
            (put_pfor, codec::PFOR),
        ] {
            let mut b = Vec::new();
            enc(&mut b, v);
            if b.len() < best.len() {
                (best, c) = (b, k);
            }
        }
        let mut out = Vec::new();
        assert_eq!(put_int_ra(&mut out, v), c, "codec for {} values", v.len());
        assert!(out == best, "bytes for {} values", v.len());
    }

    /// Long columns take the radix selection of the frame's quantiles.
    #[test]
    fn random_access_choice_of_long_columns() {
        let mut r = tgms_testkit::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move || r.next_u64();
        let n = 70_000 + (next() % 5_000) as usize;
        let wide: Vec<i64> = (0..n).map(|_| next() as i64).collect();
        let small: Vec<i64> = (0..n).map(|_| (next() % 7) as i64 - 3).collect();
        let sparse: Vec<i64> = (0..n)
            .map(|_| {
                if next() % 50 == 0 {
                    (next() >> 20) as i64
                } else {
                    0
                }
            })
            .collect();
        let mut asc: Vec<i64> = (0..n as i64).map(|i| i * 3 + (next() % 2) as i64).collect();
        asc[n / 2] = i64::MIN;
        let negative: Vec<i64> = (0..n).map(|_| -((next() % 1_000_000) as i64)).collect();
        let extremes: Vec<i64> = (0..n)
            .map(|i| [i64::MIN, i64::MAX, 0, -1][(i + (next() % 2) as usize) % 4])
            .collect();
        for v in [&wide, &small, &sparse, &asc, &negative, &extremes] {
            check_choice(v);
            for r in [0, n / 10_000, n / 1_000, n / 100, n / 2, n - 1] {
                let mut s = v.to_vec();
                s.sort_unstable();
                assert_eq!(
                    select_ranks(v.iter().copied(), n, &[r]),
                    vec![s[r]],
                    "rank {r}"
                );
            }
        }
    }
}
