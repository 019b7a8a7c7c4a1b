//! The column codecs of a base image as random-access readers over the mapped bytes
//! (`format-spec.md` §5): FOR, DFORS (with its skip list), PFOR and their exception lists,
//! and ARITH, behind one [`Col`]; values are read in place, by position or by range, never decoded
//! whole at open. Reads past the bytes give 0 (the structural checks at open rule out
//! such a read in an image that opened).

use crate::error::CorruptionKind;
use crate::format::le::{i64_at, u128_at, u32_at};
use crate::format::search::first_not_below;
use crate::format::seg::{codec, ARITH_BREAK, ARITH_HEAD, DFORS_STRIDE};
use crate::model::NONE;

/// A FOR body: `n` values of `width` bits from file offset `bits`, plus `min`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ForCol {
    pub(super) n: usize,
    pub(super) min: i64,
    pub(super) width: u32,
    pub(super) bits: usize,
}

impl ForCol {
    /// Parses `u32 count | i64 min | u8 width | bits` at `at`; returns the column and the
    /// offset after it. `end` bounds the chunk.
    pub(super) fn parse(
        b: &[u8],
        at: usize,
        end: usize,
        with_count: Option<usize>,
    ) -> Result<(ForCol, usize), CorruptionKind> {
        let (n, at) = match with_count {
            Some(n) => (n, at),
            None => {
                if at + 4 > end {
                    return Err("column header cut short".into());
                }
                (u32_at(b, at) as usize, at + 4)
            }
        };
        if at + 9 > end {
            return Err("column header cut short".into());
        }
        let min = i64_at(b, at);
        let Some(&width) = b.get(at + 8) else {
            return Err("column header cut short".into());
        };
        let width = u32::from(width);
        if width > 64 {
            return Err(format!("bit width {width} exceeds 64").into());
        }
        let nbytes = (n as u128 * width as u128).div_ceil(8);
        let bits = at + 9;
        if nbytes > (end - bits) as u128 {
            return Err(format!("{n} values of {width} bits do not fit the chunk").into());
        }
        Ok((
            ForCol {
                n,
                min,
                width,
                bits,
            },
            bits + nbytes as usize,
        ))
    }

    /// The raw packed value `i` (without `min`).
    #[inline]
    pub(super) fn packed(&self, b: &[u8], i: usize) -> u64 {
        if self.width == 0 {
            return 0;
        }
        let bit = i as u128 * self.width as u128;
        let at = self.bits + (bit / 8) as usize;
        let acc = u128_at(b, at) >> (bit % 8);
        let mask: u128 = if self.width == 64 {
            u64::MAX as u128
        } else {
            (1u128 << self.width) - 1
        };
        (acc & mask) as u64
    }

    #[inline]
    pub(super) fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.n {
            return 0;
        }
        (self.min as u64).wrapping_add(self.packed(b, i)) as i64
    }

    /// Calls `f` with the raw packed values `a..e` in order (one 16-byte load per
    /// `⌊121 / width⌋` values).
    pub(super) fn for_each_packed(&self, b: &[u8], a: usize, e: usize, mut f: impl FnMut(u64)) {
        let w = self.width as usize;
        if w == 0 {
            (a..e).for_each(|_| f(0));
            return;
        }
        let mask: u128 = if w == 64 {
            u64::MAX as u128
        } else {
            (1u128 << w) - 1
        };
        let mut i = a;
        while i < e {
            let bit = i as u128 * w as u128;
            let mut acc = u128_at(b, self.bits + (bit / 8) as usize) >> (bit % 8);
            let k = ((128 - (bit % 8) as usize) / w).min(e - i);
            for _ in 0..k {
                f((acc & mask) as u64);
                acc >>= w;
            }
            i += k;
        }
    }
}

/// The exception list of a DFORS or PFOR column: `n × (u32 index, i64 value)` from file
/// offset `at`, indexes strictly ascending, and per block of `DFORS_STRIDE` values the
/// number of exceptions whose index is below the block's first value (`starts`), so the
/// exceptions near an index are found without a search.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Exc {
    pub(super) n: usize,
    pub(super) at: usize,
    pub(super) starts: ForCol,
}

impl Exc {
    /// Parses `n` entries at `at` (indexes below `limit`) directly followed by the starts
    /// column of `blocks` values (PFOR); returns the list and the offset after it.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parse(
        b: &[u8],
        at: usize,
        end: usize,
        n: usize,
        limit: usize,
        blocks: usize,
        entries: Entries,
    ) -> Result<(Exc, usize), CorruptionKind> {
        let starts_at = at.saturating_add(n.saturating_mul(12));
        Exc::parse_split(b, at, starts_at, end, n, limit, blocks, entries)
    }

    /// Parses `n` entries at `at` (indexes below `limit`) and the starts column of `blocks`
    /// values at `starts_at` (DFORS puts its skip column between them); returns the list and
    /// the offset after the starts. With [`Entries::Check`] checks the entries (order,
    /// range) — O(n); their fit is always checked, and the starts are checked by the full
    /// decoder (`tgms check`), so an open stays O(exceptions), and a forged start gives
    /// wrong values, never a panic.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parse_split(
        b: &[u8],
        at: usize,
        starts_at: usize,
        end: usize,
        n: usize,
        limit: usize,
        blocks: usize,
        entries: Entries,
    ) -> Result<(Exc, usize), CorruptionKind> {
        if n > limit {
            return Err(format!("{n} exceptions for {limit} slots").into());
        }
        if at.saturating_add(n.saturating_mul(12)) > starts_at.min(end) {
            return Err("exception list does not fit the chunk".into());
        }
        let (starts, after) = ForCol::parse(b, starts_at, end, None)?;
        if starts.n != blocks {
            return Err(format!("{} exception starts for {blocks} blocks", starts.n).into());
        }
        let x = Exc { n, at, starts };
        if entries == Entries::Trust {
            return Ok((x, after));
        }
        let mut prev = None;
        for k in 0..n {
            let (i, _) = x.entry(b, k);
            if i >= limit || prev.is_some_and(|p| i <= p) {
                return Err(format!("exception index {i} out of order or range").into());
            }
            prev = Some(i);
        }
        Ok((x, after))
    }

    /// Entry `k`: (index, value).
    #[inline]
    pub(super) fn entry(&self, b: &[u8], k: usize) -> (usize, i64) {
        let at = self.at + 12 * k;
        (u32_at(b, at) as usize, i64_at(b, at + 4))
    }

    /// Entry `k`, or an index past every slot when `k` is past the list.
    #[inline]
    pub(super) fn entry_or_end(&self, b: &[u8], k: usize) -> (usize, i64) {
        if k < self.n {
            self.entry(b, k)
        } else {
            (usize::MAX, 0)
        }
    }

    /// The first entry with index ≥ `i`: from the exception start of `i`'s block, past the
    /// (at most 31) entries of the block below `i`.
    #[inline]
    pub(super) fn first(&self, b: &[u8], i: usize) -> usize {
        let mut k = usize::try_from(self.starts.get(b, i / DFORS_STRIDE)).unwrap_or(usize::MAX);
        let end = self.n.min(k.saturating_add(i % DFORS_STRIDE));
        while k < end && self.entry(b, k).0 < i {
            k += 1;
        }
        k.min(self.n)
    }

    /// The value of entry with index exactly `i`, if there is one.
    #[inline]
    pub(super) fn at_index(&self, b: &[u8], i: usize) -> Option<i64> {
        let (j, v) = self.entry_or_end(b, self.first(b, i));
        (j == i).then_some(v)
    }

    /// Calls `f(i, value)` for `i` in `a..e`: the exception's value where there is one,
    /// `packed(i)` otherwise (`packed` gets the raw packed slots in order).
    pub(super) fn merge(
        &self,
        b: &[u8],
        slots: &ForCol,
        a: usize,
        e: usize,
        mut f: impl FnMut(Option<i64>, u64),
    ) {
        let mut k = self.first(b, a);
        let mut next = self.entry_or_end(b, k);
        let mut j = a;
        slots.for_each_packed(b, a, e, |x| {
            if j == next.0 {
                f(Some(next.1), x);
                k += 1;
                next = self.entry_or_end(b, k);
            } else {
                f(None, x);
            }
            j += 1;
        });
    }
}

/// A DFORS column (codec 5): DFOR deltas with exceptions, plus every 32nd value.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Dfors {
    pub(super) n: usize,
    /// The `n − 1` deltas (exception slots hold 0).
    pub(super) deltas: ForCol,
    pub(super) exc: Exc,
    pub(super) skip: ForCol,
}

impl Dfors {
    pub(super) fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.n {
            return 0;
        }
        let start = i / DFORS_STRIDE * DFORS_STRIDE;
        let mut v = self.skip.get(b, i / DFORS_STRIDE);
        if i == start {
            return v;
        }
        // Σ deltas[start..i] = Σ packed + (i − start)·min, then patch the exceptions (whose
        // packed slot is 0, so they contributed `min`).
        let mut packed: u64 = 0;
        self.deltas
            .for_each_packed(b, start, i, |x| packed = packed.wrapping_add(x));
        v = v
            .wrapping_add(packed as i64)
            .wrapping_add(self.deltas.min.wrapping_mul((i - start) as i64));
        let mut k = self.exc.first(b, start);
        while k < self.exc.n {
            let (j, d) = self.exc.entry(b, k);
            if j >= i {
                break;
            }
            v = v.wrapping_add(d.wrapping_sub(self.deltas.min));
            k += 1;
        }
        v
    }

    /// Delta `j` (`v[j+1] − v[j]`), exceptions applied.
    #[inline]
    pub(super) fn delta(&self, b: &[u8], j: usize) -> i64 {
        self.exc.at_index(b, j).unwrap_or_else(|| {
            (self.deltas.min as u64).wrapping_add(self.deltas.packed(b, j)) as i64
        })
    }

    /// Values `a..e` (clamped to the column).
    #[inline]
    pub(super) fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
        let e = e.min(self.n);
        if a >= e {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(e - a);
        let mut v = self.get(b, a);
        out.push(v);
        let min = self.deltas.min as u64;
        self.exc.merge(b, &self.deltas, a, e - 1, |exc, x| {
            v = v.wrapping_add(exc.unwrap_or(min.wrapping_add(x) as i64));
            out.push(v);
        });
        out
    }
}

/// A PFOR column (codec 6): values packed in a frame, exceptions listed, plus per block of
/// 32 values the position of its first exception.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pfor {
    /// The values (exception slots hold 0).
    pub(super) vals: ForCol,
    pub(super) exc: Exc,
}

impl Pfor {
    #[inline]
    pub(super) fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.vals.n {
            return 0;
        }
        self.exc
            .at_index(b, i)
            .unwrap_or_else(|| self.vals.get(b, i))
    }

    /// Values `a..e` (clamped to the column).
    #[inline]
    pub(super) fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
        let e = e.min(self.vals.n);
        if a >= e {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(e - a);
        let min = self.vals.min as u64;
        self.exc.merge(b, &self.vals, a, e, |exc, x| {
            out.push(exc.unwrap_or(min.wrapping_add(x) as i64));
        });
        out
    }
}

/// An ARITH column (codec 8): value `i` is `first + i × step` plus the offset of the last
/// break at or before `i` (mod 2^64); the `n_brk` break indexes (`u32`, strictly
/// ascending) from file offset `at`, then their offsets (`i64`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Arith {
    pub(super) n: usize,
    pub(super) first: i64,
    pub(super) step: i64,
    pub(super) n_brk: usize,
    pub(super) at: usize,
}

impl Arith {
    /// Break `k`'s index.
    #[inline]
    fn index(&self, b: &[u8], k: usize) -> usize {
        u32_at(b, self.at + 4 * k) as usize
    }

    /// Break `k`: (index, offset).
    #[inline]
    pub(super) fn brk(&self, b: &[u8], k: usize) -> (usize, i64) {
        let offset = i64_at(b, self.at + 4 * self.n_brk + 8 * k);
        (self.index(b, k), offset)
    }

    /// The number of breaks whose index is at most `i` (a search of the indexes alone,
    /// without a branch on the comparison).
    #[inline]
    fn breaks_to(&self, b: &[u8], i: usize) -> usize {
        let (mut lo, mut len) = (0usize, self.n_brk);
        while len > 1 {
            let half = len / 2;
            lo = if self.index(b, lo + half - 1) <= i {
                lo + half
            } else {
                lo
            };
            len -= half;
        }
        lo + usize::from(len == 1 && self.index(b, lo) <= i)
    }

    /// The offset of the line from break count `k` on (0 before the first break).
    #[inline]
    fn offset_after(&self, b: &[u8], k: usize) -> i64 {
        if k == 0 {
            0
        } else {
            self.brk(b, k - 1).1
        }
    }

    /// The value at `i` on the line, moved by `offset`.
    #[inline]
    fn on_line(&self, i: usize, offset: i64) -> i64 {
        self.first
            .wrapping_add(self.step.wrapping_mul(i as i64))
            .wrapping_add(offset)
    }

    #[inline]
    pub(super) fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.n {
            return 0;
        }
        let k = self.breaks_to(b, i);
        self.on_line(i, self.offset_after(b, k))
    }

    /// Values `i` and `i + 1` (a postings offset pair): one search.
    #[inline]
    pub(super) fn pair(&self, b: &[u8], i: usize) -> (i64, i64) {
        if i + 1 >= self.n {
            return (self.get(b, i), self.get(b, i + 1));
        }
        let k = self.breaks_to(b, i);
        let v = self.on_line(i, self.offset_after(b, k));
        let next = if k < self.n_brk && self.index(b, k) == i + 1 {
            self.on_line(i + 1, self.brk(b, k).1)
        } else {
            v.wrapping_add(self.step)
        };
        (v, next)
    }

    /// The first index whose value `v` has `!below(v)`, for a `below` that holds on a
    /// prefix of the indexes: a search of the values at the breaks finds the piece, then a
    /// search of that piece's line (no search of the breaks per step).
    pub(super) fn first_not_below_by(&self, b: &[u8], below: impl Fn(i64) -> bool) -> usize {
        let below_at = first_not_below(self.n_brk, |k| {
            let (i, offset) = self.brk(b, k);
            below(self.on_line(i, offset))
        });
        let (lo, offset) = match below_at.checked_sub(1) {
            None => (0, 0),
            Some(k) => self.brk(b, k),
        };
        let hi = if below_at < self.n_brk {
            self.index(b, below_at)
        } else {
            self.n
        };
        let lo = lo.min(hi);
        lo + first_not_below(hi - lo, |j| below(self.on_line(lo + j, offset)))
    }

    /// Values `a..e` (clamped): one search, then the breaks in order.
    pub(super) fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(e.min(self.n).saturating_sub(a));
        self.for_each(b, a, e, |v| out.push(v));
        out
    }

    /// Calls `f` with values `a..e` (clamped) in order, without a copy of them.
    pub(super) fn for_each(&self, b: &[u8], a: usize, e: usize, mut f: impl FnMut(i64)) {
        let e = e.min(self.n);
        if a >= e {
            return;
        }
        let mut k = self.breaks_to(b, a);
        let mut offset = self.offset_after(b, k);
        let mut next = if k < self.n_brk {
            self.index(b, k)
        } else {
            usize::MAX
        };
        for i in a..e {
            if i == next {
                offset = self.brk(b, k).1;
                k += 1;
                next = if k < self.n_brk {
                    self.index(b, k)
                } else {
                    usize::MAX
                };
            }
            f(self.on_line(i, offset));
        }
    }
}

/// A random-access integer column (FOR, DFORS, PFOR or ARITH).
#[derive(Clone, Copy, Debug)]
pub(super) enum Col {
    For(ForCol),
    Dfors(Dfors),
    Pfor(Pfor),
    Arith(Arith),
}

impl Default for Col {
    #[inline]
    fn default() -> Col {
        Col::For(ForCol::default())
    }
}

/// Whether a column's parse checks its exception entries' order and range (O(exceptions)):
/// an open of bytes that passed [`Base::open`]'s checks before trusts them
/// (`Base::open_checked_before`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Entries {
    /// Check them.
    Check,
    /// These very bytes passed the check before.
    Trust,
}

impl Col {
    /// Parses the column of chunk bytes `[at, end)` in codec `c`; the column must fill the
    /// chunk exactly.
    #[cfg(test)]
    pub(super) fn parse(b: &[u8], at: usize, end: usize, c: u8) -> Result<Col, CorruptionKind> {
        Col::parse_with(b, at, end, c, Entries::Check)
    }

    /// [`Col::parse`], checking the exception entries or trusting them.
    pub(super) fn parse_with(
        b: &[u8],
        at: usize,
        end: usize,
        c: u8,
        entries: Entries,
    ) -> Result<Col, CorruptionKind> {
        match c {
            codec::FOR => {
                let (f, after) = ForCol::parse(b, at, end, None)?;
                if after != end {
                    return Err(CorruptionKind::LeftOver { left: end - after });
                }
                Ok(Col::For(f))
            }
            codec::DFORS => {
                if at + 16 > end {
                    return Err("column header cut short".into());
                }
                let n = u32_at(b, at) as usize;
                let first = i64_at(b, at + 4);
                let n_exc = u32_at(b, at + 12) as usize;
                let nd = n.saturating_sub(1);
                let (deltas, after) = ForCol::parse(b, at + 16, end, Some(nd))?;
                // The exception list sits between the deltas and the skip column.
                let skip_at = after.saturating_add(n_exc.saturating_mul(12));
                if skip_at > end {
                    return Err("exception list does not fit the chunk".into());
                }
                let (skip, starts_at) = ForCol::parse(b, skip_at, end, None)?;
                let blocks = n.div_ceil(DFORS_STRIDE);
                if skip.n != blocks {
                    return Err(format!("{} skip values for {n} values", skip.n).into());
                }
                let (exc, done) =
                    Exc::parse_split(b, after, starts_at, end, n_exc, nd, blocks, entries)?;
                if done != end {
                    return Err(CorruptionKind::LeftOver { left: end - done });
                }
                if n > 0 && skip.get(b, 0) != first {
                    return Err("first skip value differs from the first value".into());
                }
                Ok(Col::Dfors(Dfors {
                    n,
                    deltas,
                    exc,
                    skip,
                }))
            }
            codec::PFOR => {
                if at + 4 > end {
                    return Err("column header cut short".into());
                }
                let n = u32_at(b, at) as usize;
                let (vals, after) = ForCol::parse(b, at + 4, end, Some(n))?;
                if after + 4 > end {
                    return Err("exception count cut short".into());
                }
                let n_exc = u32_at(b, after) as usize;
                let blocks = n.div_ceil(DFORS_STRIDE);
                let (exc, done) = Exc::parse(b, after + 4, end, n_exc, n, blocks, entries)?;
                if done != end {
                    return Err(CorruptionKind::LeftOver { left: end - done });
                }
                Ok(Col::Pfor(Pfor { vals, exc }))
            }
            codec::ARITH => {
                if at + ARITH_HEAD > end {
                    return Err("column header cut short".into());
                }
                let n = u32_at(b, at) as usize;
                let (first, step) = (i64_at(b, at + 4), i64_at(b, at + 12));
                let n_brk = u32_at(b, at + 20) as usize;
                let list = at + ARITH_HEAD;
                if n_brk > n || n_brk * ARITH_BREAK > end - list {
                    return Err("break list does not fit the chunk".into());
                }
                if list + n_brk * ARITH_BREAK != end {
                    return Err(CorruptionKind::LeftOver {
                        left: end - list - n_brk * ARITH_BREAK,
                    });
                }
                let a = Arith {
                    n,
                    first,
                    step,
                    n_brk,
                    at: list,
                };
                if entries == Entries::Check {
                    let mut prev = None;
                    for k in 0..n_brk {
                        let i = a.index(b, k);
                        if i >= n || prev.is_some_and(|p| i <= p) {
                            return Err(format!("break index {i} out of order or range").into());
                        }
                        prev = Some(i);
                    }
                }
                Ok(Col::Arith(a))
            }
            c => Err(format!("codec {c} is not a random-access integer codec").into()),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        match self {
            Col::For(f) => f.n,
            Col::Dfors(d) => d.n,
            Col::Pfor(p) => p.vals.n,
            Col::Arith(a) => a.n,
        }
    }

    /// Value `i`, 0 when out of range.
    #[inline]
    pub(super) fn get(&self, b: &[u8], i: usize) -> i64 {
        match self {
            Col::For(f) => f.get(b, i),
            Col::Dfors(d) => d.get(b, i),
            Col::Pfor(p) => p.get(b, i),
            Col::Arith(a) => a.get(b, i),
        }
    }

    /// The first index whose value is ≥ `x`, for a column of ascending values. A DFORS
    /// column is searched through its skip values first, then one block is decoded, so a
    /// lookup costs O(log n) cheap reads instead of O(log n) delta sums; an ARITH column
    /// through its breaks, then one piece's line.
    pub(super) fn lower_bound(&self, b: &[u8], x: i64) -> usize {
        match self {
            Col::For(_) | Col::Pfor(_) | Col::Arith(_) => self.first_not_below_by(b, |v| v < x),
            Col::Dfors(d) => {
                // Blocks start at skip values; the answer lies in the last block whose
                // first value is < x (or is 0 when there is none).
                let blocks = first_not_below(d.skip.n, |i| d.skip.get(b, i) < x);
                let Some(block) = blocks.checked_sub(1) else {
                    return 0;
                };
                let start = block * DFORS_STRIDE;
                let vals = d.range(b, start, start + DFORS_STRIDE);
                start + vals.partition_point(|&v| v < x)
            }
        }
    }

    /// The first index whose value `v` has `!below(v)`, for a `below` that holds on a
    /// prefix of the indexes (e.g. an order column searched by a key of the row it names).
    /// An ARITH column is searched through its breaks, then one piece's line, so no step
    /// searches the breaks; other codecs read one value per step.
    pub(super) fn first_not_below_by(&self, b: &[u8], below: impl Fn(i64) -> bool) -> usize {
        match self {
            Col::Arith(a) => a.first_not_below_by(b, below),
            _ => first_not_below(self.len(), |i| below(self.get(b, i))),
        }
    }

    /// Value `i` as a u32 id; `NONE` when out of range (of the column or of u32).
    #[inline]
    pub(super) fn id(&self, b: &[u8], i: usize) -> u32 {
        if i >= self.len() {
            return NONE;
        }
        u32::try_from(self.get(b, i)).unwrap_or(NONE)
    }

    /// Values `i` and `i + 1` (0 for a value out of range).
    #[inline]
    pub(super) fn pair(&self, b: &[u8], i: usize) -> (i64, i64) {
        match self {
            Col::Dfors(d) if i + 1 < d.n => {
                let v = d.get(b, i);
                (v, v.wrapping_add(d.delta(b, i)))
            }
            Col::Arith(a) => a.pair(b, i),
            _ => (self.get(b, i), self.get(b, i + 1)),
        }
    }

    /// Values `a..e` (clamped).
    #[inline]
    pub(super) fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
        match self {
            Col::For(f) => {
                let e = e.min(f.n);
                let mut out = Vec::with_capacity(e.saturating_sub(a));
                f.for_each_packed(b, a, e, |x| out.push((f.min as u64).wrapping_add(x) as i64));
                out
            }
            Col::Dfors(d) => d.range(b, a, e),
            Col::Pfor(p) => p.range(b, a, e),
            Col::Arith(c) => c.range(b, a, e),
        }
    }
}
