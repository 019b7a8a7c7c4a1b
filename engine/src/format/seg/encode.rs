//! The column encoders (`format-spec.md` §5): FOR, DFOR, DFORS, PFOR, ARITH, the
//! random-access integer choice, runs and string heaps.
//!
//! Writers index only what they built and sized themselves (the values they encode, the
//! offsets they count); the format layer's ban on indexing guards its readers of
//! untrusted bytes.
#![allow(clippy::indexing_slicing)]

use super::*;

/// FOR codec: `u32 count | i64 min | u8 width | ceil(count·width / 8) bytes`, each value
/// stored as `value − min` (mod 2^64) in `width` bits, least significant bit first.
pub fn put_for(out: &mut Vec<u8>, v: &[i64]) {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    // `x − min` grows with `x`, so the largest is `max − min`: one pass finds both.
    let (min, max) = v
        .iter()
        .fold((i64::MAX, i64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (min, maxd) = if v.is_empty() {
        (0, 0)
    } else {
        (min, (max as u64).wrapping_sub(min as u64))
    };
    let w = 64 - maxd.leading_zeros();
    out.extend_from_slice(&min.to_le_bytes());
    out.push(w as u8);
    pack(
        out,
        v.iter().map(|&x| (x as u64).wrapping_sub(min as u64)),
        v.len(),
        w,
    );
}

/// Appends `vals` (`n` values, each below 2^`w`) in `w` bits each, least significant bit
/// first: `ceil(n·w / 8)` bytes, the bit stream of [`put_for`]. The bytes are sized first
/// and whole 64-bit words stored as they fill.
fn pack(out: &mut Vec<u8>, vals: impl Iterator<Item = u64>, n: usize, w: u32) {
    if w == 0 {
        return;
    }
    let start = out.len();
    let len = (n * w as usize).div_ceil(8);
    // A word of slack: the last word is stored whole, then cut to `len`.
    out.resize(start + len + 8, 0);
    let bytes = &mut out[start..];
    let (mut acc, mut bits, mut at) = (0u64, 0u32, 0usize);
    for x in vals {
        // Invariant: `bits < 64` bits of `acc` are pending.
        acc |= x << bits;
        let filled = bits + w;
        if filled >= 64 {
            bytes[at..at + 8].copy_from_slice(&acc.to_le_bytes());
            at += 8;
            // The bits of `x` that did not fit (none when it started a word).
            acc = x.checked_shr(64 - bits).unwrap_or(0);
            bits = filled - 64;
        } else {
            bits = filled;
        }
    }
    bytes[at..at + 8].copy_from_slice(&acc.to_le_bytes());
    out.truncate(start + len);
}

/// DFOR codec, patched delta + frame of reference: `u32 count | i64 first | u32 n_exc |
/// i64 min | u8 width | packed bits of the count − 1 deltas | n_exc × (u32 index, i64 delta)`.
/// Delta `i` is `v[i+1] − v[i]` (mod 2^64). Deltas outside `[min, min + 2^width)` are
/// **exceptions**: their packed slot holds 0 and their value is in the exception list
/// (indexes strictly ascending). The encoder picks `min` and `width` to minimize the size.
pub fn put_dfor(out: &mut Vec<u8>, v: &[i64]) {
    dfor_with_exceptions(out, v);
}

/// The frame of a patched column: values in `[min, min + 2^w)` are packed in `w` bits, the
/// `n_exc` others are exceptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Frame {
    pub min: i64,
    pub w: u32,
    pub n_exc: usize,
}

/// The frame of a patched column of `vals` that minimises the packed bits plus 12 bytes
/// per exception (a value outside `[min, min + 2^width)`). Candidate bases are the smallest
/// value and a few low quantiles; `(0, 0)` with no exceptions for no values. Ties go to the
/// earlier candidate: bases in that order, widths ascending.
///
/// A long column is not sorted: its quantiles come from one pass keeping its smallest
/// hundredth ([`select_ranks`]), and the values in each frame from
/// passes of bit-length histograms ([`bit_lengths`]): one for the smallest value's base,
/// then one for the other bases at once, only those which that histogram cannot show to
/// cost at least as much ([`costs_at_least`]). So the frame costs two or three passes and
/// no copy of the column (tested equal to the sorting computation). The histograms also
/// give the frame's exception count, so the writers need no pass to count them. A column of
/// one value takes no such pass, and [`frame_and_span_of`] counts ascending values by
/// binary searches.
pub(super) fn patched_frame<I: ExactSizeIterator<Item = i64> + Clone>(vals: I) -> Frame {
    frame_and_span(vals).0
}

/// [`patched_frame`], and the bits of `max − min` of the values (0 for none): the width of
/// their FOR column, read off the histogram of the smallest value's base, so a caller
/// sizing FOR too needs no pass of its own.
pub(super) fn frame_and_span<I: ExactSizeIterator<Item = i64> + Clone>(vals: I) -> (Frame, u32) {
    let n = vals.len();
    let mut rest = vals.clone();
    let Some(first) = rest.next() else {
        return (Frame::default(), 0);
    };
    // A column of one value (an image's origins, reasons, or an arithmetic column's
    // deltas) has one base, in whose frame of width 0 every value lies: no pass needed.
    if rest.all(|x| x == first) {
        let f = Frame {
            min: first,
            w: 0,
            n_exc: 0,
        };
        return (f, 0);
    }
    let bases = select_ranks(vals.clone(), n, &quantile_ranks(n));
    frame_search(
        n,
        bases,
        |m| fine_lengths(vals.clone(), m),
        |rest| bit_lengths(vals.clone(), rest),
    )
}

/// [`frame_and_span`] of the values `v`, counted by binary searches instead of passes when
/// they ascend (an image's valid-time starts, offsets, ordinals): the same frame and span.
pub(super) fn frame_and_span_of(v: &[i64]) -> (Frame, u32) {
    if v.is_empty() || !v.is_sorted() {
        return frame_and_span(v.iter().copied());
    }
    let n = v.len();
    let bases = quantile_ranks(n).iter().map(|&r| v[r]).collect();
    frame_search(
        n,
        bases,
        |m| sorted_fine_lengths(v, m),
        |rest| sorted_bit_lengths(v, rest),
    )
}

/// The ranks of the frame search's candidate bases in a column of `n > 0` values: the
/// smallest value and three low quantiles.
fn quantile_ranks(n: usize) -> [usize; 4] {
    [0, n / 10_000, n / 1_000, n / 100].map(|i| i.min(n - 1))
}

/// The frame search of [`frame_and_span`] over `n > 0` values, given the values at
/// [`quantile_ranks`] (ascending) and the two counts, however they are taken:
/// `fine(m)`, [`fine_lengths`] of the values above their smallest `m`, and `lengths(bases)`,
/// [`bit_lengths`] of the values above each base.
fn frame_search(
    n: usize,
    mut bases: Vec<i64>,
    fine: impl FnOnce(i64) -> FineLengths,
    lengths: impl FnOnce(&[i64]) -> (Vec<usize>, Vec<[usize; 65]>),
) -> (Frame, u32) {
    bases.dedup();
    // The smallest value's base first: none is below it, and its histogram bounds what
    // the other bases can cost, so only those that might be cheaper are counted.
    let fine = fine(bases[0]);
    let first = fine.by_len();
    let mut best = (Frame::default(), u128::MAX);
    offer(&mut best, n, bases[0], 0, &first);
    let rest: Vec<i64> = bases[1..]
        .iter()
        .copied()
        .filter(|&m| !costs_at_least(n, m.wrapping_sub(bases[0]) as u64, &fine, best.1))
        .collect();
    let (below, by_len) = lengths(&rest);
    for (i, &m) in rest.iter().enumerate() {
        offer(&mut best, n, m, below[i], &by_len[i]);
    }
    let span = (0..=64u32)
        .rev()
        .find(|&l| first[l as usize] > 0)
        .unwrap_or(0);
    (best.0, span)
}

/// Bytes of a patched body of `n` values in `w` bits with `exc` exceptions, as the frame
/// search counts them.
fn frame_cost(n: usize, w: u32, exc: usize) -> u128 {
    (n as u128 * w as u128).div_ceil(8) + exc as u128 * 12
}

/// Offers the frames of base `m` to the search's `best` (frame, cost), widths ascending:
/// a frame replaces it only when strictly cheaper, so ties go to the earlier base and the
/// narrower width. `below` values of the `n` are below `m`; `by_len[l]` of the others have
/// `l` bits above it.
fn offer(best: &mut (Frame, u128), n: usize, m: i64, below: usize, by_len: &[usize; 65]) {
    // `hi`: the values below `m + 2^w` (all of them at width 64).
    let mut hi = below;
    for w in 0..=64u32 {
        hi = if w == 64 { n } else { hi + by_len[w as usize] };
        let exc = n - (hi - below);
        let cost = frame_cost(n, w, exc);
        if cost < best.1 {
            // At width 64 every value is in the frame ([`in_frame`]); a width-64 frame is
            // only chosen at the smallest value's base, where none is below it.
            let n_exc = if w == 64 { 0 } else { exc };
            *best = (Frame { min: m, w, n_exc }, cost);
        }
        if hi == n {
            break;
        }
    }
}

/// Whether every frame of a base `delta` above the smallest value costs at least `cost`,
/// from the smallest value's histogram `fine` ([`fine_lengths`]), so that base need not be
/// counted: it cannot be strictly cheaper than a frame found before it. A frame of width
/// `w < 64` at that base holds only values below `min + delta + 2^w`, at most those of the
/// slots that start below `delta + 2^w` above the smallest; its exceptions are at least
/// the others. At width 64 it costs 8 bytes a value or more, which the smallest value's
/// base never exceeds.
pub(super) fn costs_at_least(n: usize, delta: u64, fine: &FineLengths, cost: u128) -> bool {
    (0..64u32).all(|w| {
        let held = fine.starting_below(u128::from(delta) + (1u128 << w));
        frame_cost(n, w, n - held.min(n)) >= cost
    })
}

/// Bits after the leading one that part each bit length of [`fine_slot`].
const FINE_BITS: usize = 4;
/// Parts of each bit length of [`fine_slot`].
const FINE: usize = 1 << FINE_BITS;
/// Slots of [`fine_slot`]: bit lengths 0–64, each in [`FINE`] parts.
const SLOTS: usize = 65 * FINE;

/// The values of a column per slot of their offset above its smallest value
/// ([`fine_slot`]), as running totals in slot order, which is the order of the slots'
/// offsets.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FineLengths {
    /// `held[k]`: the values in slots `0..k` (`l · FINE + q` for slot `(l, q)`).
    held: Vec<usize>,
}

impl FineLengths {
    /// The values per bit length of their offset.
    fn by_len(&self) -> [usize; 65] {
        std::array::from_fn(|l| self.held[(l + 1) * FINE] - self.held[l * FINE])
    }

    /// The values in the slots that start below offset `top`: every value whose offset is
    /// below `top`, and the others of the slot `top` lies in.
    fn starting_below(&self, top: u128) -> usize {
        // Slot starts ascend with the slot index: a binary search for the first at `top`.
        let (mut lo, mut hi) = (0, SLOTS);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if fine_start(mid / FINE, mid % FINE) < top {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.held[lo]
    }
}

/// The slot of offset `d` above a base: its bit length `l`, and for `l > FINE_BITS` which
/// of the [`FINE`] equal parts of `[2^(l−1), 2^l)` it lies in (the bits after its leading
/// one); part 0 for shorter offsets.
#[inline]
fn fine_slot(d: u64) -> (usize, usize) {
    let l = (64 - d.leading_zeros()) as usize;
    let q = if l > FINE_BITS {
        (d >> (l - 1 - FINE_BITS)) as usize & (FINE - 1)
    } else {
        0
    };
    (l, q)
}

/// The smallest offset above the base in slot `(l, q)` of [`fine_slot`].
fn fine_start(l: usize, q: usize) -> u128 {
    match l {
        0..=FINE_BITS => (1u128 << l) >> 1,
        _ => (1u128 << (l - 1)) + ((q as u128) << (l - 1 - FINE_BITS)),
    }
}

/// The values of `vals` (every one at least `m`, the smallest) per slot of `x − m`
/// ([`fine_slot`]): the smallest value's bit-length histogram, each length in parts, so
/// that [`costs_at_least`] can bound the other bases' frames. Four histograms take one
/// value each of every four in turn ([`by_fours`]), so that runs of one slot do not wait on
/// one counter.
pub(super) fn fine_lengths(vals: impl Iterator<Item = i64>, m: i64) -> FineLengths {
    let mut h = [[[0u32; FINE]; 65]; 4];
    by_fours(vals, |j, x| {
        let (l, q) = fine_slot((x as u64).wrapping_sub(m as u64));
        h[j][l][q] += 1;
    });
    let mut held = Vec::with_capacity(SLOTS + 1);
    held.push(0);
    for k in 0..SLOTS {
        let here: usize = h.iter().map(|g| g[k / FINE][k % FINE] as usize).sum();
        held.push(held[k] + here);
    }
    FineLengths { held }
}

/// [`fine_lengths`] of the ascending values `v` (`m` their smallest): the slot of a value
/// grows with the value, so each running total is where the values of the slots before it
/// end, found by a binary search.
pub(super) fn sorted_fine_lengths(v: &[i64], m: i64) -> FineLengths {
    let slot = |x: i64| {
        let (l, q) = fine_slot((x as u64).wrapping_sub(m as u64));
        l * FINE + q
    };
    let held = (0..=SLOTS)
        .map(|k| v.partition_point(|&x| slot(x) < k))
        .collect();
    FineLengths { held }
}

/// [`bit_lengths`] of the ascending values `v`: below each base come the values under it,
/// then those above it by bit length, each run found by a binary search.
pub(super) fn sorted_bit_lengths(v: &[i64], bases: &[i64]) -> (Vec<usize>, Vec<[usize; 65]>) {
    let counts = bases.iter().map(|&m| {
        // The values below `m` or within `l` bits above it.
        let upto = |l: usize| v.partition_point(|&x| x < m || length_slot(x, m) < l);
        let ends: [usize; 66] = std::array::from_fn(upto);
        let by_len = std::array::from_fn(|l| ends[l + 1] - ends[l]);
        (ends[0], by_len)
    });
    counts.unzip()
}

/// Per base `m` of `bases`: the values of `vals` below `m`, and per bit length `l` (0–64)
/// the values `x ≥ m` for which `x − m` has `l` bits. One pass for every 4 bases (the frame
/// search has at most 4, fewer when its quantiles coincide: a pass counts only as many as it
/// has); four histograms per base take one value each of every four in turn, so that runs
/// of equal lengths do not wait on one counter.
pub(super) fn bit_lengths<I: Iterator<Item = i64> + Clone>(
    vals: I,
    bases: &[i64],
) -> (Vec<usize>, Vec<[usize; 65]>) {
    let mut out = (Vec::new(), Vec::new());
    for group in bases.chunks(4) {
        let h = match *group {
            [a] => length_histograms(vals.clone(), [a]).to_vec(),
            [a, b] => length_histograms(vals.clone(), [a, b]).to_vec(),
            [a, b, c] => length_histograms(vals.clone(), [a, b, c]).to_vec(),
            [a, b, c, d, ..] => length_histograms(vals.clone(), [a, b, c, d]).to_vec(),
            [] => Vec::new(),
        };
        for h in h {
            let total = |l: usize| h.iter().map(|g| g[l] as usize).sum::<usize>();
            out.0.push(total(65));
            out.1.push(std::array::from_fn(total));
        }
    }
    out
}

/// Per base `m[b]`, four histograms of the slot of [`length_slot`] (value `i` of `vals` in
/// histogram `i % 4`, [`by_fours`]). `K` is a constant, so the loop over the bases has a
/// fixed length.
fn length_histograms<const K: usize>(
    vals: impl Iterator<Item = i64>,
    m: [i64; K],
) -> [[[u32; 66]; 4]; K] {
    let mut h = [[[0u32; 66]; 4]; K];
    by_fours(vals, |j, x| {
        for (h, &m) in h.iter_mut().zip(&m) {
            h[j][length_slot(x, m)] += 1;
        }
    });
    h
}

/// The slot of `x` in a histogram of bit lengths above the base `m`: 65 below `m`, else
/// the bit length of `x − m` (0–64).
#[inline]
fn length_slot(x: i64, m: i64) -> usize {
    if x < m {
        65
    } else {
        (64 - (x as u64).wrapping_sub(m as u64).leading_zeros()) as usize
    }
}

/// Calls `f(i % 4, x)` for value `i` of `vals`, in order, four values at a time: inlined,
/// `f`'s first argument is a constant for all but the last one to three values.
#[inline(always)]
fn by_fours(mut vals: impl Iterator<Item = i64>, mut f: impl FnMut(usize, i64)) {
    while let Some(x0) = vals.next() {
        let rest = (vals.next(), vals.next(), vals.next());
        let (Some(x1), Some(x2), Some(x3)) = rest else {
            // The last one to three values: up to the first missing one.
            let tail = [Some(x0), rest.0, rest.1, rest.2];
            for (j, x) in tail.into_iter().map_while(|x| x).enumerate() {
                f(j, x);
            }
            break;
        };
        f(0, x0);
        f(1, x1);
        f(2, x2);
        f(3, x3);
    }
}

/// The values of ranks `ranks` (each below `n`, the count of `v`) in the ascending order of
/// `v`. A short column is sorted; a long one is passed once, keeping its smallest values (as
/// many as the largest rank asks for, a hundredth of the column here): values below the
/// largest kept one are gathered until there are twice as many, then cut back to the
/// smallest half by a selection (a few cuts a column, instead of a heap update for every
/// new small value).
pub(super) fn select_ranks(v: impl Iterator<Item = i64>, n: usize, ranks: &[usize]) -> Vec<i64> {
    let keep = ranks.iter().max().map_or(0, |&r| r + 1);
    if n <= 1 << 16 || keep > n / 64 + 1 {
        let mut sorted: Vec<i64> = v.collect();
        sorted.sort_unstable();
        return ranks.iter().map(|&r| sorted[r]).collect();
    }
    let mut kept: Vec<i64> = Vec::with_capacity(2 * keep);
    // Once `kept` was cut, it holds `keep` values at most `limit`: a value not below it
    // changes none of the smallest `keep` values.
    let mut limit = None;
    for x in v {
        if limit.is_none_or(|l| x < l) {
            kept.push(x);
            if kept.len() == 2 * keep {
                kept.select_nth_unstable(keep - 1);
                kept.truncate(keep);
                limit = kept.iter().copied().max();
            }
        }
    }
    kept.sort_unstable();
    ranks.iter().map(|&r| kept[r]).collect()
}

/// Whether `x` fits the frame `[min, min + 2^w)`.
pub(super) fn in_frame(x: i64, min: i64, w: u32) -> bool {
    w == 64 || (x as i128 >= min as i128 && (x as i128) < min as i128 + (1i128 << w))
}

/// Appends `min | width | bits` of the `n` values `vals` in the frame `f` (exceptions
/// packed as 0) and returns the exceptions `(index, value)`, ascending: one pass. The
/// frame's `n_exc` only sizes the list; the writers record the list's own length.
pub(super) fn put_patched_body(
    out: &mut Vec<u8>,
    vals: impl Iterator<Item = i64>,
    n: usize,
    f: Frame,
) -> Vec<(u32, i64)> {
    out.extend_from_slice(&f.min.to_le_bytes());
    out.push(f.w as u8);
    let mut exc = Vec::with_capacity(f.n_exc);
    let (min, w) = (f.min, f.w);
    let slots = vals.enumerate().map(|(i, d)| {
        if in_frame(d, min, w) {
            (d as u64).wrapping_sub(min as u64)
        } else {
            exc.push((i as u32, d));
            0
        }
    });
    if w == 0 {
        slots.for_each(drop);
    } else {
        pack(out, slots, n, w);
    }
    exc
}

pub(super) fn put_exc_list(out: &mut Vec<u8>, exc: &[(u32, i64)]) {
    for &(i, d) in exc {
        out.extend_from_slice(&i.to_le_bytes());
        out.extend_from_slice(&d.to_le_bytes());
    }
}

/// Per block of [`DFORS_STRIDE`] values of a column of `n`, the number of exceptions (of
/// the ascending `exc`) whose index is below the block's first value.
pub(super) fn exc_starts(exc: &[usize], n: usize) -> Vec<i64> {
    (0..n.div_ceil(DFORS_STRIDE))
        .map(|k| exc.partition_point(|&i| i < k * DFORS_STRIDE) as i64)
        .collect()
}

/// [`put_dfor`], returning the exception indexes (ascending).
pub(super) fn dfor_with_exceptions(out: &mut Vec<u8>, v: &[i64]) -> Vec<usize> {
    let f = patched_frame(deltas_of(v));
    put_dfor_framed(out, v, f)
}

/// `v[i + 1] − v[i]` (mod 2^64) for every `i`, computed on each pass (a long column's
/// deltas are never held).
pub(super) fn deltas_of(v: &[i64]) -> impl ExactSizeIterator<Item = i64> + Clone + '_ {
    v.windows(2).map(|w| w[1].wrapping_sub(w[0]))
}

/// The DFOR bytes of `v` in the frame `f` of its deltas; returns the exception indexes
/// (ascending).
pub(super) fn put_dfor_framed(out: &mut Vec<u8>, v: &[i64], f: Frame) -> Vec<usize> {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    out.extend_from_slice(&v.first().copied().unwrap_or(0).to_le_bytes());
    // `n_exc` precedes the body: written once the body has counted its exceptions.
    let n_exc_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let exc = put_patched_body(out, deltas_of(v), v.len().saturating_sub(1), f);
    out[n_exc_at..n_exc_at + 4].copy_from_slice(&(exc.len() as u32).to_le_bytes());
    put_exc_list(out, &exc);
    exc.into_iter().map(|(i, _)| i as usize).collect()
}

/// Bytes of the DFOR column of `n` values whose deltas have the frame `f`.
fn dfor_len(n: usize, f: Frame) -> usize {
    // count | first | n_exc | min | width | bits | n_exc × (index, delta)
    25 + (n.saturating_sub(1) * f.w as usize).div_ceil(8) + 12 * f.n_exc
}

/// Encodes an integer column with whichever of FOR and DFOR is smaller (FOR on a tie);
/// returns the codec. Both sizes are computed first; only the smaller encoding is written.
pub fn put_int(out: &mut Vec<u8>, v: &[i64]) -> u8 {
    let f = patched_frame(deltas_of(v));
    if dfor_len(v.len(), f) < for_size(v.iter().copied()) {
        put_dfor_framed(out, v, f);
        codec::DFOR
    } else {
        put_for(out, v);
        codec::FOR
    }
}

/// DFORS codec (5): the DFOR layout, then a FOR column of the skip values `v[0], v[32],
/// v[64], …` (`ceil(count / 32)` values) and a FOR column of the exception starts (per
/// block, the number of exceptions with index below its first value), so value `i` is
/// `skip[i / 32]` plus the deltas from `(i / 32) · 32` up to `i`, the exceptions among
/// them found without a search.
pub fn put_dfors(out: &mut Vec<u8>, v: &[i64]) {
    let f = patched_frame(deltas_of(v));
    put_dfors_framed(out, v, f);
}

pub(super) fn put_dfors_framed(out: &mut Vec<u8>, v: &[i64], f: Frame) {
    let exc = put_dfor_framed(out, v, f);
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
    let f = frame_and_span_of(v).0;
    put_pfor_framed(out, v, f);
}

pub(super) fn put_pfor_framed(out: &mut Vec<u8>, v: &[i64], f: Frame) {
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    let exc = put_patched_body(out, v.iter().copied(), v.len(), f);
    out.extend_from_slice(&(exc.len() as u32).to_le_bytes());
    put_exc_list(out, &exc);
    let idx: Vec<usize> = exc.iter().map(|&(i, _)| i as usize).collect();
    put_for(out, &exc_starts(&idx, v.len()));
}

/// Bytes of a FOR column of `n` values whose smallest is `min` and largest `max`.
pub(super) fn for_len(n: usize, min: i64, max: i64) -> usize {
    let w = 64 - (max as u64).wrapping_sub(min as u64).leading_zeros() as usize;
    13 + (n * w).div_ceil(8)
}

/// Bytes of the FOR column of `vals` ([`put_for`]), from one pass.
fn for_size(vals: impl Iterator<Item = i64>) -> usize {
    let (n, lo, hi) = vals.fold((0, i64::MAX, i64::MIN), |(n, a, b), x| {
        (n + 1, a.min(x), b.max(x))
    });
    if n == 0 {
        for_len(0, 0, 0)
    } else {
        for_len(n, lo, hi)
    }
}

/// Bytes of the patched body and exception list of `n_vals` values in the frame `f`
/// (`min | width | bits | n_exc × 12`), and of the FOR column of its exception starts
/// (blocks of a column of `n`). `last` holds the values from the last block's first
/// index on: the starts column's largest value is the exceptions before that block.
pub(super) fn patched_len(
    last: impl Iterator<Item = i64>,
    n_vals: usize,
    n: usize,
    f: Frame,
) -> usize {
    let blocks = n.div_ceil(DFORS_STRIDE);
    let in_last = last.filter(|&x| !in_frame(x, f.min, f.w)).count();
    let starts = if blocks == 0 {
        for_len(0, 0, 0)
    } else {
        for_len(blocks, 0, (f.n_exc - in_last) as i64)
    };
    9 + (n_vals * f.w as usize).div_ceil(8) + 12 * f.n_exc + starts
}

/// Encodes an integer column with the smallest of FOR, DFORS and PFOR (the random-access
/// codecs of a minor-2, 3 or 4 segment; FOR on a tie, then DFORS); returns the codec. The
/// sizes are computed first and only the smallest encoding is written, so a long column
/// costs one encoding beside it (its deltas are computed on each pass, never held). FOR's
/// size comes from the PFOR frame search's histograms (`frame_and_span`).
pub fn put_int_ra(out: &mut Vec<u8>, v: &[i64]) -> u8 {
    put_int_choice(out, v, false)
}

/// [`put_int_ra`], with ARITH among the choices when `arith` (see [`put_int_image`]).
fn put_int_choice(out: &mut Vec<u8>, v: &[i64], arith: bool) -> u8 {
    let n = v.len();
    let skip_bytes = for_size(v.iter().step_by(DFORS_STRIDE).copied());
    // The values from the last block on (the exception starts' largest value counts the
    // exceptions before it).
    let last_start = (n.div_ceil(DFORS_STRIDE).max(1) - 1) * DFORS_STRIDE;
    let tail = &v[last_start.min(n)..];
    // The two patched frames are independent passes over the column: a long one takes
    // both cores (the sizes and the bytes are the same either way).
    let frames = || {
        let dfors = || {
            let f = patched_frame(deltas_of(v));
            // count | first | n_exc, then the patched body of the deltas, then the skips.
            let len = patched_len(deltas_of(tail), n.saturating_sub(1), n, f);
            (f, 16 + len + skip_bytes)
        };
        let pfor = || {
            let (f, span) = frame_and_span_of(v);
            // count | patched body | n_exc (in the list's 9 + 12 × n_exc) | starts
            let for_bytes = 13 + (n * span as usize).div_ceil(8);
            (f, 8 + patched_len(tail.iter().copied(), n, n, f), for_bytes)
        };
        if n > 1 << 16 {
            rayon::join(dfors, pfor)
        } else {
            (dfors(), pfor())
        }
    };
    let ((df, dfors_bytes), (pf, pfor_bytes, for_bytes)) = frames();
    // A DFORS frame of width 0: every delta is `df.min` but for its exceptions, which are
    // ARITH's breaks (and ARITH is then smaller than DFORS).
    let arith_bytes = ARITH_HEAD + ARITH_BREAK * df.n_exc;
    if arith
        && df.w == 0
        && df.n_exc <= ARITH_MAX_BREAKS
        && arith_bytes < for_bytes
        && arith_bytes < pfor_bytes
    {
        put_arith(out, v, df.min);
        codec::ARITH
    } else if dfors_bytes < for_bytes && dfors_bytes <= pfor_bytes {
        put_dfors_framed(out, v, df);
        codec::DFORS
    } else if pfor_bytes < for_bytes && pfor_bytes < dfors_bytes {
        put_pfor_framed(out, v, pf);
        codec::PFOR
    } else {
        put_for(out, v);
        codec::FOR
    }
}

/// ARITH codec (8, segment minor 6), a piecewise arithmetic sequence: `u32 count | i64
/// first | i64 step | u32 n_brk | n_brk × u32 index | n_brk × i64 offset`. Value `i` is
/// `first + i × step + offset` (mod 2^64), the offset being that of the last break whose
/// index is at most `i` (0 before the first break). Every delta `v[j] − v[j−1]` other
/// than `step` makes a break at `j`, so any column can be written; [`put_int_image`]
/// chooses it for columns with few such deltas.
pub fn put_arith(out: &mut Vec<u8>, v: &[i64], step: i64) {
    let mut breaks: Vec<(u32, i64)> = Vec::new();
    let mut offset = 0i64;
    for (j, w) in v.windows(2).enumerate() {
        let d = w[1].wrapping_sub(w[0]);
        if d != step {
            offset = offset.wrapping_add(d.wrapping_sub(step));
            breaks.push((j as u32 + 1, offset));
        }
    }
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    out.extend_from_slice(&v.first().copied().unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&step.to_le_bytes());
    out.extend_from_slice(&(breaks.len() as u32).to_le_bytes());
    // Indexes first, then offsets: a search reads only the indexes, 4 bytes each.
    breaks
        .iter()
        .for_each(|(i, _)| out.extend_from_slice(&i.to_le_bytes()));
    breaks
        .iter()
        .for_each(|(_, o)| out.extend_from_slice(&o.to_le_bytes()));
}

/// The most breaks a writer puts in an ARITH column: a point read searches their indexes
/// (12 steps at most, over 16 KB), where DFORS and PFOR find their exceptions through a
/// column of block starts.
pub const ARITH_MAX_BREAKS: usize = 4096;

/// [`put_int_ra`] for an image of minor `minor`: in minor 6 a column whose deltas are one
/// value but for at most [`ARITH_MAX_BREAKS`] others (the DFORS frame of width 0) is
/// ARITH when that is smaller than FOR, DFORS and PFOR; returns the codec.
pub fn put_int_image(out: &mut Vec<u8>, v: &[i64], minor: u16) -> u8 {
    put_int_choice(out, v, has_arith(minor))
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
