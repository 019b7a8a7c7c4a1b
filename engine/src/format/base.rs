//! A mapped **base image**: random access to a compacted, minor-2, 3 or 4 segment
//! (`format-spec.md` §6.5) without decoding it into the in-memory [`State`].
//!
//! [`Base::open`] verifies the header, trailer, footer and every chunk's crc32, the
//! directory layout of its minor, every column header (counts agree with the table counts,
//! lengths are exact), the UTF-8 of both string heaps and their offset columns. It then
//! keeps only the file's bytes and, per column, a few header fields and file offsets;
//! every accessor reads the values it needs straight from the bytes. Only the `tt_s` runs
//! (a few per batch) are decoded at open.
//!
//! It then checks the image's structure once ([`structure`]): ids within the dictionaries
//! and tables they name, flags and kinds in their domains, legal times, monotone offsets,
//! and the codecs' redundancy, so a file whose checksums hold but whose values a writer
//! could not have written is refused with a named error, not answered with defaults.
//! Accessors never panic: an id a caller passes out of range gives the documented default
//! (empty string, empty list, `None`, or a row / content / identity of `NONE` ids), and
//! values are read with checked slicing.
//!
//! [`State`]: crate::state::State

use crate::error::CorruptionKind;
use crate::format::bitmap::RoaringView;
use crate::format::mmap::SegBytes;
use crate::format::search::first_not_below;
use crate::format::seg::{self, chunk, codec, SegErr, DFORS_STRIDE, SEG_MINOR_TIME_INDEX};
use crate::model::{Content, Disc, IdentRec, Marks, Row, NONE};
use crate::op::Origin;
use crate::time::OPEN_END;
use std::cmp::Ordering;
use std::sync::OnceLock;

mod structure;

/// Reads up to 16 bytes at `at` as a little-endian u128 (missing bytes read as 0).
fn le_u128(b: &[u8], at: usize) -> u128 {
    if let Some(w) = b.get(at..at + 16) {
        // One unaligned load (the usual case: not within 16 bytes of the file's end).
        return u128::from_le_bytes(w.try_into().unwrap_or([0; 16]));
    }
    let mut buf = [0u8; 16];
    if let Some(s) = b.get(at..) {
        let n = s.len().min(16);
        buf[..n].copy_from_slice(&s[..n]);
    }
    u128::from_le_bytes(buf)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn le_i64(b: &[u8], at: usize) -> i64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, i64::from_le_bytes)
}

/// A FOR body: `n` values of `width` bits from file offset `bits`, plus `min`.
#[derive(Clone, Copy, Debug, Default)]
struct ForCol {
    n: usize,
    min: i64,
    width: u32,
    bits: usize,
}

impl ForCol {
    /// Parses `u32 count | i64 min | u8 width | bits` at `at`; returns the column and the
    /// offset after it. `end` bounds the chunk.
    fn parse(
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
                (le_u32(b, at) as usize, at + 4)
            }
        };
        if at + 9 > end {
            return Err("column header cut short".into());
        }
        let min = le_i64(b, at);
        let width = b[at + 8] as u32;
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
    fn packed(&self, b: &[u8], i: usize) -> u64 {
        if self.width == 0 {
            return 0;
        }
        let bit = i as u128 * self.width as u128;
        let at = self.bits + (bit / 8) as usize;
        let acc = le_u128(b, at) >> (bit % 8);
        let mask: u128 = if self.width == 64 {
            u64::MAX as u128
        } else {
            (1u128 << self.width) - 1
        };
        (acc & mask) as u64
    }

    fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.n {
            return 0;
        }
        (self.min as u64).wrapping_add(self.packed(b, i)) as i64
    }

    /// Calls `f` with the raw packed values `a..e` in order (one 16-byte load per
    /// `⌊121 / width⌋` values).
    fn for_each_packed(&self, b: &[u8], a: usize, e: usize, mut f: impl FnMut(u64)) {
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
            let mut acc = le_u128(b, self.bits + (bit / 8) as usize) >> (bit % 8);
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
struct Exc {
    n: usize,
    at: usize,
    starts: ForCol,
}

impl Exc {
    /// Parses `n` entries at `at` (indexes below `limit`) directly followed by the starts
    /// column of `blocks` values (PFOR); returns the list and the offset after it.
    fn parse(
        b: &[u8],
        at: usize,
        end: usize,
        n: usize,
        limit: usize,
        blocks: usize,
    ) -> Result<(Exc, usize), CorruptionKind> {
        let starts_at = at.saturating_add(n.saturating_mul(12));
        Exc::parse_split(b, at, starts_at, end, n, limit, blocks)
    }

    /// Parses `n` entries at `at` (indexes below `limit`) and the starts column of `blocks`
    /// values at `starts_at` (DFORS puts its skip column between them); returns the list and
    /// the offset after the starts. Checks the entries (fit, order, range) — O(n); the
    /// starts are checked by the full decoder (`tgms check`), so an open stays
    /// O(exceptions), and a forged start gives wrong values, never a panic.
    fn parse_split(
        b: &[u8],
        at: usize,
        starts_at: usize,
        end: usize,
        n: usize,
        limit: usize,
        blocks: usize,
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
    fn entry(&self, b: &[u8], k: usize) -> (usize, i64) {
        let at = self.at + 12 * k;
        (le_u32(b, at) as usize, le_i64(b, at + 4))
    }

    /// Entry `k`, or an index past every slot when `k` is past the list.
    fn entry_or_end(&self, b: &[u8], k: usize) -> (usize, i64) {
        if k < self.n {
            self.entry(b, k)
        } else {
            (usize::MAX, 0)
        }
    }

    /// The first entry with index ≥ `i`: from the exception start of `i`'s block, past the
    /// (at most 31) entries of the block below `i`.
    fn first(&self, b: &[u8], i: usize) -> usize {
        let mut k = usize::try_from(self.starts.get(b, i / DFORS_STRIDE)).unwrap_or(usize::MAX);
        let end = self.n.min(k.saturating_add(i % DFORS_STRIDE));
        while k < end && self.entry(b, k).0 < i {
            k += 1;
        }
        k.min(self.n)
    }

    /// The value of entry with index exactly `i`, if there is one.
    fn at_index(&self, b: &[u8], i: usize) -> Option<i64> {
        let (j, v) = self.entry_or_end(b, self.first(b, i));
        (j == i).then_some(v)
    }

    /// Calls `f(i, value)` for `i` in `a..e`: the exception's value where there is one,
    /// `packed(i)` otherwise (`packed` gets the raw packed slots in order).
    fn merge(
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
struct Dfors {
    n: usize,
    /// The `n − 1` deltas (exception slots hold 0).
    deltas: ForCol,
    exc: Exc,
    skip: ForCol,
}

impl Dfors {
    fn get(&self, b: &[u8], i: usize) -> i64 {
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
    fn delta(&self, b: &[u8], j: usize) -> i64 {
        self.exc.at_index(b, j).unwrap_or_else(|| {
            (self.deltas.min as u64).wrapping_add(self.deltas.packed(b, j)) as i64
        })
    }

    /// Values `a..e` (clamped to the column).
    fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
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
struct Pfor {
    /// The values (exception slots hold 0).
    vals: ForCol,
    exc: Exc,
}

impl Pfor {
    fn get(&self, b: &[u8], i: usize) -> i64 {
        if i >= self.vals.n {
            return 0;
        }
        self.exc
            .at_index(b, i)
            .unwrap_or_else(|| self.vals.get(b, i))
    }

    /// Values `a..e` (clamped to the column).
    fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
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

/// A random-access integer column (FOR, DFORS or PFOR).
#[derive(Clone, Copy, Debug)]
enum Col {
    For(ForCol),
    Dfors(Dfors),
    Pfor(Pfor),
}

impl Default for Col {
    fn default() -> Col {
        Col::For(ForCol::default())
    }
}

impl Col {
    /// Parses the column of chunk bytes `[at, end)` in codec `c`; the column must fill the
    /// chunk exactly.
    fn parse(b: &[u8], at: usize, end: usize, c: u8) -> Result<Col, CorruptionKind> {
        match c {
            codec::FOR => {
                let (f, after) = ForCol::parse(b, at, end, None)?;
                if after != end {
                    return Err(format!("{} bytes left over", end - after).into());
                }
                Ok(Col::For(f))
            }
            codec::DFORS => {
                if at + 16 > end {
                    return Err("column header cut short".into());
                }
                let n = le_u32(b, at) as usize;
                let first = le_i64(b, at + 4);
                let n_exc = le_u32(b, at + 12) as usize;
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
                let (exc, done) = Exc::parse_split(b, after, starts_at, end, n_exc, nd, blocks)?;
                if done != end {
                    return Err(format!("{} bytes left over", end - done).into());
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
                let n = le_u32(b, at) as usize;
                let (vals, after) = ForCol::parse(b, at + 4, end, Some(n))?;
                if after + 4 > end {
                    return Err("exception count cut short".into());
                }
                let n_exc = le_u32(b, after) as usize;
                let (exc, done) =
                    Exc::parse(b, after + 4, end, n_exc, n, n.div_ceil(DFORS_STRIDE))?;
                if done != end {
                    return Err(format!("{} bytes left over", end - done).into());
                }
                Ok(Col::Pfor(Pfor { vals, exc }))
            }
            c => Err(format!("codec {c} is not a random-access integer codec").into()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Col::For(f) => f.n,
            Col::Dfors(d) => d.n,
            Col::Pfor(p) => p.vals.n,
        }
    }

    /// Value `i`, 0 when out of range.
    fn get(&self, b: &[u8], i: usize) -> i64 {
        match self {
            Col::For(f) => f.get(b, i),
            Col::Dfors(d) => d.get(b, i),
            Col::Pfor(p) => p.get(b, i),
        }
    }

    /// The first index whose value is ≥ `x`, for a column of ascending values. A DFORS
    /// column is searched through its skip values first, then one block is decoded, so a
    /// lookup costs O(log n) cheap reads instead of O(log n) delta sums.
    fn lower_bound(&self, b: &[u8], x: i64) -> usize {
        match self {
            Col::For(_) | Col::Pfor(_) => first_not_below(self.len(), |i| self.get(b, i) < x),
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

    /// Value `i` as a u32 id; `NONE` when out of range (of the column or of u32).
    fn id(&self, b: &[u8], i: usize) -> u32 {
        if i >= self.len() {
            return NONE;
        }
        u32::try_from(self.get(b, i)).unwrap_or(NONE)
    }

    /// Values `i` and `i + 1` (0 for a value out of range).
    fn pair(&self, b: &[u8], i: usize) -> (i64, i64) {
        match self {
            Col::Dfors(d) if i + 1 < d.n => {
                let v = d.get(b, i);
                (v, v.wrapping_add(d.delta(b, i)))
            }
            _ => (self.get(b, i), self.get(b, i + 1)),
        }
    }

    /// Values `a..e` (clamped).
    fn range(&self, b: &[u8], a: usize, e: usize) -> Vec<i64> {
        match self {
            Col::For(f) => {
                let e = e.min(f.n);
                let mut out = Vec::with_capacity(e.saturating_sub(a));
                f.for_each_packed(b, a, e, |x| out.push((f.min as u64).wrapping_add(x) as i64));
                out
            }
            Col::Dfors(d) => d.range(b, a, e),
            Col::Pfor(p) => p.range(b, a, e),
        }
    }
}

/// A string heap: its string bytes `[data, data + len)` and the offsets column.
#[derive(Clone, Copy, Debug, Default)]
struct Heap {
    n: usize,
    data: usize,
    len: usize,
    offs: Col,
    order: Col,
}

/// The columns of one row table (nodes or edges).
#[derive(Debug, Default)]
struct Rows {
    n: usize,
    ident: Col,
    content: Col,
    vt_s: Col,
    vt_len: Col,
    tt_s: TtCol,
    /// The largest `tt_s` (`i64::MIN` without rows), found by the first caller.
    tt_max: OnceLock<i64>,
    reason: Col,
    origin: Col,
    alive: Col,
    n_close: usize,
    /// The closed rows as a set (chunks 81–82, minor 4).
    closed: Option<RoaringView>,
    close_row: Col,
    close_tt_e: Col,
    close_by: Col,
    close_reason: Col,
}

/// The `tt_s` column of a row table: runs (`format-spec.md` §6.3), or — in a minor-4 image
/// where that is smaller (rows sorted by `vt_s` from a log that arrived out of time order)
/// — a random-access integer column.
#[derive(Debug)]
enum TtCol {
    /// `(first row, tt_s)` of every run, rows ascending.
    Runs(Vec<(usize, i64)>),
    Col(Col),
}

impl Default for TtCol {
    fn default() -> Self {
        TtCol::Runs(Vec::new())
    }
}

/// Columns of a run of rows (see [`Base::row_block`]); `ident` and `vt_e` are empty unless
/// asked for, `tt_s` and `alive` are empty when they cannot fail a belief test.
pub(crate) struct RowBlock {
    pub(crate) vt_s: Vec<i64>,
    pub(crate) vt_e: Vec<i64>,
    pub(crate) alive: Vec<bool>,
    pub(crate) tt_s: Vec<i64>,
    pub(crate) tt_e: Vec<i64>,
    pub(crate) ident: Vec<u32>,
}

impl RowBlock {
    /// Row `j` of the block is believed at `as_of` (the clamped `as_of` the block was
    /// decoded for).
    #[inline]
    pub(crate) fn believed(&self, j: usize, as_of: i64) -> bool {
        as_of < self.tt_e[j]
            && self.alive.get(j).is_none_or(|&x| x)
            && self.tt_s.get(j).is_none_or(|&x| x <= as_of)
    }
}

/// Caches of a base image's own decoding that the first read needing them builds; the
/// image itself never changes, so they never go stale.
#[derive(Default)]
pub(crate) struct Caches {
    /// The offsets of the uid heap (0) and of the string heap (1), decoded when small
    /// enough (see [`Base::cached_str`]; empty otherwise).
    heap_offs: [OnceLock<Vec<u32>>; 2],
    /// The uid and string orders (chunks 66, 67), decoded under the same condition.
    heap_order: [OnceLock<Vec<u32>>; 2],
    /// Hash tables of the uid and string ids (`Base::find_hashed`), built for writers.
    heap_hash: [OnceLock<Vec<u32>>; 2],
    /// Hash table of the content ids (`Base::find_content`), built for writers.
    content_hash: OnceLock<Vec<u32>>,
    /// Per table, a bit per row: set when the row is closed (1 bit per row), so a point
    /// read of an open row skips the search in the close rows (images before minor 4,
    /// which carry no closed-row set).
    closed: [OnceLock<Vec<u64>>; 2],
}

/// A grouped index: `off` (n + 1 offsets) into `vals`.
#[derive(Clone, Copy, Debug, Default)]
struct Postings {
    off: Col,
    vals: Col,
}

impl Postings {
    fn get(&self, b: &[u8], k: u32) -> Vec<u32> {
        let k = k as usize;
        if k + 1 >= self.off.len() {
            return Vec::new();
        }
        let (a, e) = self.off.pair(b, k);
        let (Ok(a), Ok(e)) = (usize::try_from(a), usize::try_from(e)) else {
            return Vec::new();
        };
        self.vals
            .range(b, a, e)
            .into_iter()
            .filter_map(|x| u32::try_from(x).ok())
            .collect()
    }
}

/// Random access to a compacted (minor-2, 3 or 4, full-image) segment.
pub(crate) struct Base {
    bytes: SegBytes,
    seq: u64,
    marks: Marks,
    uids: Heap,
    strings: Heap,
    content: [Col; 4],
    /// src, dst, rel, disc tag, disc value.
    ident: [Col; 5],
    slots: Col,
    rows: [Rows; 2],
    node_post: Postings,
    edge_post: Postings,
    out_adj: Postings,
    in_adj: Postings,
    mapped: Col,
    /// The valid-time index of each row table (minor ≥ 3).
    time: Option<[TimeIndex; 2]>,
    pub(crate) caches: Caches,
}

/// The valid-time index of a row table (chunks 77–80): row numbers by `(vt_s, row)`, and
/// the long rows by `(vt_e, row)`.
#[derive(Debug, Default)]
struct TimeIndex {
    by_start: Col,
    by_end: Col,
}

impl TimeIndex {
    fn col(&self, by_end: bool) -> &Col {
        if by_end {
            &self.by_end
        } else {
            &self.by_start
        }
    }
}

/// An open-addressing hash table of the ids `0..n` (given their hashes in id order):
/// linear probing, `NONE` for an empty slot, at most two thirds full (4 to 8 bytes an id).
/// An id is found by [`probe`]; ids inserted earlier come first along a probe sequence.
fn id_table(n: usize, hashes: impl Iterator<Item = usize>) -> Vec<u32> {
    let mut t = vec![NONE; (n + n / 2).next_power_of_two().max(16)];
    let mask = t.len() - 1;
    for (id, h) in hashes.enumerate() {
        let mut at = h & mask;
        while t[at] != NONE {
            at = (at + 1) & mask;
        }
        t[at] = id as u32;
    }
    t
}

/// The first id of table `t` along the probe sequence of hash `h` that `is` accepts.
fn probe(t: &[u32], h: usize, is: impl Fn(u32) -> bool) -> Option<u32> {
    let mask = t.len().checked_sub(1)?;
    let mut at = h & mask;
    loop {
        match t[at] {
            NONE => return None,
            id if is(id) => return Some(id),
            _ => at = (at + 1) & mask,
        }
    }
}

fn hash_bytes(b: &[u8]) -> usize {
    use std::hash::Hasher;
    let mut x = rustc_hash::FxHasher::default();
    x.write(b);
    x.finish() as usize
}

fn hash_content(c: &Content) -> usize {
    use std::hash::{Hash, Hasher};
    let mut x = rustc_hash::FxHasher::default();
    c.hash(&mut x);
    x.finish() as usize
}

/// The most strings a heap may hold for its offsets to be decoded into memory (16 MB).
const CACHED_HEAP_STRINGS: usize = 1 << 22;

/// A row of `NONE` ids returned for an out-of-range row number.
fn missing_row() -> Row {
    Row {
        ident: NONE,
        content: NONE,
        vt_s: 0,
        vt_e: OPEN_END,
        tt_s: 0,
        tt_e: OPEN_END,
        reason: NONE,
        close_reason: NONE,
        origin: Origin::Assert,
        closed_by: None,
        alive: false,
    }
}

/// Values as u32 ids (`NONE` for a value out of range).
fn id_list(v: Vec<i64>) -> Vec<u32> {
    v.into_iter()
        .map(|x| u32::try_from(x).unwrap_or(NONE))
        .collect()
}

/// The runs of a RUNS chunk at `(at, end)` of a table of `n` rows, as `(first row, tt_s)`.
fn tt_runs(
    b: &[u8],
    (at, end, _): (usize, usize, u8),
    n: usize,
) -> Result<Vec<(usize, i64)>, CorruptionKind> {
    if at + 4 > end {
        return Err("runs chunk too short".into());
    }
    let nruns = le_u32(b, at) as usize;
    if nruns > n || (nruns as u128) * 12 != (end - at - 4) as u128 {
        return Err("run count does not match the chunk".into());
    }
    let mut runs = Vec::with_capacity(nruns);
    let mut row = 0usize;
    for r in 0..nruns {
        let p = at + 4 + 12 * r;
        let (v, len) = (le_i64(b, p), le_u32(b, p + 8) as usize);
        if len == 0 || row + len > n {
            return Err("run does not fit the rows".into());
        }
        runs.push((row, v));
        row += len;
    }
    if row != n {
        return Err("runs do not cover the rows".into());
    }
    Ok(runs)
}

/// `vt_e` of rows from their `vt_s` and stored lengths (0 = open end).
fn vt_ends(vt_s: &[i64], len: Vec<i64>) -> Vec<i64> {
    vt_s.iter()
        .zip(len)
        .map(|(&s, l)| match l {
            0 => OPEN_END,
            l => s.saturating_add(l),
        })
        .collect()
}

fn opt_id(x: i64) -> u32 {
    match x {
        x if x > 0 && x <= u32::MAX as i64 => (x - 1) as u32,
        _ => NONE,
    }
}

impl Base {
    /// Verifies and indexes a minor-2, 3 or 4 full-image segment (see the module doc), then
    /// runs the structural checks of [`structure`] over every value, on all cores. Errors
    /// are `(file offset, what)` like [`seg::decode`]'s. Every open of an image goes this
    /// way (a store's mapped open, `tgms check`, the fuzz targets), so no read meets a value
    /// a writer could not have written.
    pub(crate) fn open(bytes: SegBytes) -> Result<Base, SegErr> {
        use chunk::*;
        let b = bytes.bytes();
        // The checksum pass reads every chunk; the pages it is done with are released as it
        // goes (reads fault back in what they touch), so an open never holds the whole file.
        let mut released = 0;
        let dir = seg::read_dir_with(b, &mut |end| {
            if end - released >= crate::format::mmap::RELEASE_BYTES {
                bytes.release(released, end - released);
                released = end;
            }
        })?;
        bytes.release(released, b.len() - released);
        if !seg::is_indexed(dir.minor) {
            return Err((
                10,
                format!("segment minor {} has no index chunks", dir.minor).into(),
            ));
        }
        if dir.base != [0; 7] {
            return Err((24, "a base image must start at zero marks".into()));
        }
        let pos = |id: u16| dir.layout.iter().position(|&(c, _)| c == id).unwrap_or(0);
        let span = |id: u16| {
            let k = pos(id);
            let at = dir.offsets[k] as usize;
            (at, at + dir.lens[k], dir.codecs[k])
        };
        let err = |id: u16, what: CorruptionKind| (dir.offsets[pos(id)], what.in_chunk(id));
        // An integer column of chunk `id` holding `want` values (None: any count).
        let col = |id: u16, want: Option<usize>| -> Result<Col, SegErr> {
            let (at, end, c) = span(id);
            let col = Col::parse(b, at, end, c).map_err(|k| err(id, k))?;
            if let Some(w) = want {
                if col.len() != w {
                    return Err(err(
                        id,
                        format!("column holds {} values, {w} expected", col.len()).into(),
                    ));
                }
            }
            Ok(col)
        };
        let heap = |id: u16, offs_id: u16, order_id: u16| -> Result<Heap, SegErr> {
            let (at, end, _) = span(id);
            let (lens, data) = ForCol::parse(b, at, end, None).map_err(|k| err(id, k))?;
            let n = lens.n;
            let text = std::str::from_utf8(&b[data..end])
                .map_err(|_| err(id, "string heap is not UTF-8".into()))?;
            let offs = col(offs_id, Some(n + 1))?;
            let mut prev = 0i64;
            // The heap's own lengths (what the decoding path reads) agree with the offsets
            // (what the accessors read).
            let mut len_of = Vec::with_capacity(n.min(1 << 16));
            for (i, o) in offs.range(b, 0, n + 1).into_iter().enumerate() {
                let ok = (i > 0 || o == 0)
                    && o >= prev
                    && usize::try_from(o).is_ok_and(|o| text.is_char_boundary(o));
                if !ok {
                    return Err(err(offs_id, format!("heap offset {i} is not valid").into()));
                }
                if i > 0 {
                    if len_of.is_empty() {
                        let e = (i - 1 + (1 << 16)).min(n);
                        lens.for_each_packed(b, i - 1, e, |x| len_of.push(x));
                        len_of.reverse();
                    }
                    let packed = len_of.pop().unwrap_or(0);
                    let len = (lens.min as u64).wrapping_add(packed) as i64;
                    if len != o - prev {
                        return Err(err(
                            offs_id,
                            format!(
                                "string {} is {} bytes by its offsets, {len} by the heap",
                                i - 1,
                                o - prev
                            )
                            .into(),
                        ));
                    }
                }
                prev = o;
            }
            if prev as usize != text.len() {
                return Err(err(
                    offs_id,
                    "heap offsets do not end at the heap's end".into(),
                ));
            }
            Ok(Heap {
                n,
                data,
                len: end - data,
                offs,
                order: col(order_id, Some(n))?,
            })
        };
        let uids = heap(UIDS, UID_OFFS, UID_ORDER)?;
        let strings = heap(STRINGS, STR_OFFS, STR_ORDER)?;
        let content_first = col(CONTENT_LABEL, None)?;
        let nc = content_first.len();
        let content = [
            content_first,
            col(CONTENT_PROPS, Some(nc))?,
            col(CONTENT_SOURCE, Some(nc))?,
            col(CONTENT_PROV, Some(nc))?,
        ];
        let src = col(IDENT_SRC, None)?;
        let ni = src.len();
        let ident = [
            src,
            col(IDENT_DST, Some(ni))?,
            col(IDENT_REL, Some(ni))?,
            col(IDENT_DISC_TAG, Some(ni))?,
            col(IDENT_DISC_VAL, Some(ni))?,
        ];
        let slots = col(SLOTS, None)?;
        let mut rows: [Rows; 2] = Default::default();
        for (k, g) in [ROWS_NODE, ROWS_EDGE].into_iter().enumerate() {
            let id_col = col(g + IDENT, None)?;
            let n = id_col.len();
            let tt_s = if dir.codecs[pos(g + TT_S)] == codec::RUNS {
                TtCol::Runs(tt_runs(b, span(g + TT_S), n).map_err(|k| err(g + TT_S, k))?)
            } else {
                TtCol::Col(col(g + TT_S, Some(n))?)
            };
            let close_row = col(g + CLOSE_ROW, None)?;
            let nclose = close_row.len();
            rows[k] = Rows {
                n,
                ident: id_col,
                content: col(g + CONTENT, Some(n))?,
                vt_s: col(g + VT_S, Some(n))?,
                vt_len: col(g + VT_LEN, Some(n))?,
                tt_s,
                tt_max: OnceLock::new(),
                reason: col(g + REASON, Some(n))?,
                origin: col(g + ORIGIN, Some(n))?,
                alive: col(g + ALIVE, Some(n))?,
                n_close: nclose,
                closed: None,
                close_row,
                close_tt_e: col(g + CLOSE_TT_E, Some(nclose))?,
                close_by: col(g + CLOSE_BY, Some(nclose))?,
                close_reason: col(g + CLOSE_REASON, Some(nclose))?,
            };
        }
        let (nn, ne) = (rows[0].n, rows[1].n);
        let nu = uids.n;
        let postings = |off: u16, vals: u16, keys: usize, n: usize| -> Result<Postings, SegErr> {
            let off_col = col(off, Some(keys + 1))?;
            let vals = col(vals, Some(n))?;
            if off_col.get(b, 0) != 0 || off_col.get(b, keys) != n as i64 {
                return Err(err(off, "offsets do not span the values".into()));
            }
            Ok(Postings { off: off_col, vals })
        };
        let marks = Marks {
            uids: nu as u64,
            strings: strings.n as u64,
            contents: nc as u64,
            idents: ni as u64,
            slots: slots.len() as u64,
            nodes: nn as u64,
            edges: ne as u64,
        };
        let node_post = postings(NODE_POST_OFF, NODE_POST, nu, nn)?;
        let edge_post = postings(EDGE_POST_OFF, EDGE_POST, ni, ne)?;
        let out_adj = postings(OUT_OFF, OUT, nu, ne)?;
        let in_adj = postings(IN_OFF, IN, nu, ne)?;
        let mapped = col(MAPPED_ORDER, None)?;
        if mapped.len() > ni {
            return Err(err(
                MAPPED_ORDER,
                "more mapped identities than identities".into(),
            ));
        }
        let time = if dir.minor >= SEG_MINOR_TIME_INDEX {
            let mut t: [TimeIndex; 2] = Default::default();
            for (k, (s, e)) in [
                (NODE_BY_START, NODE_LONG_BY_END),
                (EDGE_BY_START, EDGE_LONG_BY_END),
            ]
            .into_iter()
            .enumerate()
            {
                let by_end = col(e, None)?;
                if by_end.len() > rows[k].n {
                    return Err(err(e, "more long rows than rows".into()));
                }
                t[k] = TimeIndex {
                    by_start: col(s, Some(rows[k].n))?,
                    by_end,
                };
            }
            Some(t)
        } else {
            None
        };
        if seg::is_sorted(dir.minor) {
            for (k, id) in [NODE_CLOSED, EDGE_CLOSED].into_iter().enumerate() {
                let (at, end, _) = span(id);
                let set = RoaringView::parse(b, at, end).map_err(|e| err(id, e))?;
                if set.len() != rows[k].n_close as u64 {
                    return Err(err(
                        id,
                        "closed-row set size differs from the closures".into(),
                    ));
                }
                rows[k].closed = Some(set);
            }
        }
        let seq = dir.seq;
        let base = Base {
            seq,
            time,
            marks,
            uids,
            strings,
            content,
            ident,
            slots,
            rows,
            node_post,
            edge_post,
            out_adj,
            in_adj,
            mapped,
            bytes,
            caches: Caches::default(),
        };
        base.check_structure(&err)?;
        Ok(base)
    }

    fn b(&self) -> &[u8] {
        self.bytes.bytes()
    }

    /// Releases the image's resident pages ([`SegBytes::release`]): compaction, which
    /// reads every column once, does so after each chunk it writes.
    pub(crate) fn release_resident(&self) {
        self.bytes.release(0, self.b().len());
    }

    /// The segment's sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// The table counts (the image's end marks; its base marks are zero).
    pub(crate) fn marks(&self) -> Marks {
        self.marks
    }

    fn heap_str<'a>(&'a self, h: &Heap, id: u32) -> &'a str {
        let b = self.b();
        let i = id as usize;
        if i >= h.n {
            return "";
        }
        let (a, e) = h.offs.pair(b, i);
        let (Ok(a), Ok(e)) = (usize::try_from(a), usize::try_from(e)) else {
            return "";
        };
        if a > e || e > h.len {
            return "";
        }
        b.get(h.data + a..h.data + e)
            .and_then(|s| std::str::from_utf8(s).ok())
            .unwrap_or("")
    }

    fn heap_find(&self, h: &Heap, k: usize, s: &str) -> Option<u32> {
        let b = self.b();
        let cache = &self.caches.heap_offs[k];
        // The order, decoded once beside the offsets (4 bytes a string) when they are.
        let order = self.caches.heap_order[k].get_or_init(|| {
            if h.n > CACHED_HEAP_STRINGS {
                return Vec::new();
            }
            id_list(h.order.range(b, 0, h.n))
        });
        let (mut lo, mut hi) = (0usize, h.n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = order
                .get(mid)
                .copied()
                .unwrap_or_else(|| h.order.id(b, mid));
            match self.cached_bytes(h, cache, id).cmp(s.as_bytes()) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return ((id as usize) < h.n).then_some(id),
            }
        }
        None
    }

    /// The uid string of uid id `id` ("" when out of range).
    pub(crate) fn uid_name(&self, id: u32) -> &str {
        self.cached_str(&self.uids, &self.caches.heap_offs[0], id)
    }

    /// Heap string `id` through the heap's offsets decoded once into `cache` (4 bytes per
    /// string, for heaps of at most [`CACHED_HEAP_STRINGS`] strings under 4 GiB: every edge
    /// read names two uids, and a random read of a DFORS offset costs several cache misses);
    /// larger heaps are read in place.
    fn cached_str<'a>(&'a self, h: &Heap, cache: &'a OnceLock<Vec<u32>>, id: u32) -> &'a str {
        std::str::from_utf8(self.cached_bytes(h, cache, id)).unwrap_or("")
    }

    /// The bytes of heap string `id` (see [`Base::cached_str`]); searches compare these
    /// (the heap was checked to be UTF-8 at open).
    fn cached_bytes<'a>(&'a self, h: &Heap, cache: &'a OnceLock<Vec<u32>>, id: u32) -> &'a [u8] {
        let offs = cache.get_or_init(|| {
            if h.n > CACHED_HEAP_STRINGS || h.len >= u32::MAX as usize {
                return Vec::new();
            }
            let v = h.offs.range(self.b(), 0, h.n + 1);
            v.into_iter()
                .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
                .collect()
        });
        let i = id as usize;
        match (offs.get(i), offs.get(i + 1)) {
            (Some(&a), Some(&e)) if a <= e && e as usize <= h.len => self
                .b()
                .get(h.data + a as usize..h.data + e as usize)
                .unwrap_or(&[]),
            _ => self.heap_str(h, id).as_bytes(),
        }
    }

    /// The id of string `s` of heap `k` (0 uids, 1 strings) through a hash table of the
    /// heap's ids ([`id_table`]), built by the first call; a heap too large for its offsets
    /// to be cached is searched in its order instead. Writers look up every name they write
    /// (two uids an event); reads keep the binary search, which needs no table and so costs
    /// a fresh process nothing.
    pub(crate) fn find_hashed(&self, k: usize, s: &str) -> Option<u32> {
        let h = [&self.uids, &self.strings][k];
        let cache = &self.caches.heap_offs[k];
        let table = self.caches.heap_hash[k].get_or_init(|| {
            if h.n > CACHED_HEAP_STRINGS {
                return Vec::new();
            }
            let hashes = (0..h.n as u32).map(|id| hash_bytes(self.cached_bytes(h, cache, id)));
            id_table(h.n, hashes)
        });
        if table.is_empty() {
            return self.heap_find(h, k, s);
        }
        probe(table, hash_bytes(s.as_bytes()), |id| {
            self.cached_bytes(h, cache, id) == s.as_bytes()
        })
    }

    /// The id of the image's content `c` (the first, were it stored twice), through a hash
    /// table of the content ids built by the first call ([`id_table`]: 4 to 8 bytes a
    /// content, the columns read a stretch at a time). Writers look up every content they
    /// add, so that the store keeps one record per content (invariant S4).
    pub(crate) fn find_content(&self, c: Content) -> Option<u32> {
        use chunk::*;
        let n = self.marks.contents as usize;
        let table = self.caches.content_hash.get_or_init(|| {
            let mut hashes = Vec::with_capacity(n);
            for a in (0..n).step_by(1 << 16) {
                let e = (a + (1 << 16)).min(n);
                let [l, p, s, v] = [CONTENT_LABEL, CONTENT_PROPS, CONTENT_SOURCE, CONTENT_PROV]
                    .map(|id| self.chunk_range(id, a, e));
                for i in 0..e - a {
                    let at = |col: &[i64]| col.get(i).map_or(NONE, |&x| x as u32);
                    hashes.push(hash_content(&Content {
                        label: at(&l),
                        props: at(&p),
                        source: at(&s),
                        provenance: at(&v),
                    }));
                }
            }
            id_table(n, hashes.into_iter())
        });
        probe(table, hash_content(&c), |id| self.content(id) == c)
    }

    /// The id of uid `s`, by binary search in the uid order.
    pub(crate) fn uid_id(&self, s: &str) -> Option<u32> {
        self.heap_find(&self.uids, 0, s)
    }

    /// Heap string `id` ("" when out of range).
    pub(crate) fn string(&self, id: u32) -> &str {
        self.cached_str(&self.strings, &self.caches.heap_offs[1], id)
    }

    /// The id of heap string `s`.
    pub(crate) fn string_id(&self, s: &str) -> Option<u32> {
        self.heap_find(&self.strings, 1, s)
    }

    /// Content `id` (all fields `NONE` when out of range).
    pub(crate) fn content(&self, id: u32) -> Content {
        let (b, i) = (self.b(), id as usize);
        let [l, p, s, v] = &self.content;
        Content {
            label: l.id(b, i),
            props: p.id(b, i),
            source: s.id(b, i),
            provenance: v.id(b, i),
        }
    }

    /// Edge identity `id` (src, dst, rel `NONE`, disc `#0`, not mapped when out of range).
    pub(crate) fn ident(&self, id: u32) -> IdentRec {
        let (b, i) = (self.b(), id as usize);
        let [src, dst, rel, tag, val] = &self.ident;
        if i >= src.len() {
            return IdentRec {
                src: NONE,
                dst: NONE,
                rel: NONE,
                disc: Disc::Ordinal(0),
                mapped: false,
            };
        }
        let t = tag.get(b, i);
        let v = val.get(b, i);
        IdentRec {
            src: src.id(b, i),
            dst: dst.id(b, i),
            rel: rel.id(b, i),
            disc: if t & 1 == 0 {
                Disc::Ordinal(v as u64)
            } else {
                Disc::Str(u32::try_from(v).unwrap_or(NONE))
            },
            mapped: t & 2 != 0,
        }
    }

    /// The identity created by ingest ordinal `k` (None when out of range or none).
    pub(crate) fn slot(&self, k: u64) -> Option<u32> {
        let i = usize::try_from(k).ok()?;
        if i >= self.slots.len() {
            return None;
        }
        let id = self.slots.id(self.b(), i);
        (id != NONE).then_some(id)
    }

    /// The explicit (mapped) identity `(src, dst, rel, disc)`, by binary search in the
    /// mapped-identity order.
    pub(crate) fn find_mapped_ident(
        &self,
        src: u32,
        dst: u32,
        rel: u32,
        disc: Disc,
    ) -> Option<u32> {
        let b = self.b();
        let (tag, val) = seg::disc_parts(disc);
        let key = (src, dst, rel, tag, val);
        let (mut lo, mut hi) = (0usize, self.mapped.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = self.mapped.id(b, mid);
            let e = self.ident(id);
            match seg::ident_key(&e).cmp(&key) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return (e.mapped && e.src != NONE).then_some(id),
            }
        }
        None
    }

    /// Row `r` of table `k` (0 nodes, 1 edges) with its closure applied; a row of `NONE`
    /// ids, not alive, when out of range.
    pub(crate) fn row(&self, k: usize, r: u32) -> Row {
        if r as usize >= self.rows[k].n {
            return missing_row();
        }
        let (vt_s, vt_e) = self.row_vt(k, r);
        let (tt_e, closed_by, close_reason) = self.row_close(k, r);
        Row {
            ident: self.row_ident(k, r),
            content: self.row_content(k, r),
            vt_s,
            vt_e,
            tt_s: self.row_tt_s(k, r),
            tt_e,
            reason: self.row_reason(k, r),
            close_reason,
            origin: self.row_origin(k, r),
            closed_by,
            alive: self.row_alive(k, r),
        }
    }

    // One field of row `r` of table `k`, read from its column alone (accessors that need
    // one field skip the rest of the row). Out of range: the `missing_row` value.

    pub(crate) fn row_ident(&self, k: usize, r: u32) -> u32 {
        self.rows[k].ident.id(self.b(), r as usize)
    }

    pub(crate) fn row_content(&self, k: usize, r: u32) -> u32 {
        self.rows[k].content.id(self.b(), r as usize)
    }

    /// The content ids of rows `[a, e)` of table `k` (clamped), decoded in one sequential
    /// pass.
    pub(crate) fn row_content_range(&self, k: usize, a: usize, e: usize) -> Vec<u32> {
        let e = e.min(self.rows[k].n);
        id_list(self.rows[k].content.range(self.b(), a.min(e), e))
    }

    /// `vt_s` alone (0 out of range), without reading the length column.
    pub(crate) fn row_vt_s(&self, k: usize, r: u32) -> i64 {
        let t = &self.rows[k];
        if r as usize >= t.n {
            return 0;
        }
        t.vt_s.get(self.b(), r as usize)
    }

    /// `[vt_s, vt_e)`.
    pub(crate) fn row_vt(&self, k: usize, r: u32) -> (i64, i64) {
        let (t, b, i) = (&self.rows[k], self.b(), r as usize);
        if i >= t.n {
            return (0, OPEN_END);
        }
        let vt_s = t.vt_s.get(b, i);
        let vt_e = match t.vt_len.get(b, i) {
            0 => OPEN_END,
            l => vt_s.saturating_add(l),
        };
        (vt_s, vt_e)
    }

    /// The belief and start columns of rows `[a, e)` of table `k` (clamped), each decoded in
    /// one sequential pass, closures merged in: the unit of a scan over the image.
    /// `tt_s` is decoded only when `as_of` precedes some row's `tt_s` (otherwise every row
    /// passes `tt_s <= as_of`, and `tt_s` is empty); `alive` is empty when every row of the
    /// table is alive.
    pub(crate) fn row_block(
        &self,
        k: usize,
        a: usize,
        e: usize,
        as_of: i64,
        with_ident: bool,
        with_vt_e: bool,
    ) -> RowBlock {
        let (t, b) = (&self.rows[k], self.b());
        let e = e.min(t.n);
        let a = a.min(e);
        let len = e - a;
        let tt_s = if self.max_tt_s(k) > as_of {
            self.tt_s_range(k, a, e)
        } else {
            Vec::new()
        };
        let all_alive = matches!(t.alive, Col::For(f) if f.width == 0 && f.min == 1);
        let mut tt_e = vec![OPEN_END; len];
        let mut c = t.close_row.lower_bound(b, a as i64);
        while c < t.n_close {
            let r = t.close_row.get(b, c);
            if r < a as i64 || r >= e as i64 {
                break;
            }
            tt_e[r as usize - a] = t.close_tt_e.get(b, c);
            c += 1;
        }
        let vt_s = t.vt_s.range(b, a, e);
        let vt_e = if with_vt_e {
            vt_ends(&vt_s, t.vt_len.range(b, a, e))
        } else {
            Vec::new()
        };
        RowBlock {
            vt_s,
            vt_e,
            alive: if all_alive {
                Vec::new()
            } else {
                t.alive.range(b, a, e).into_iter().map(|x| x == 1).collect()
            },
            tt_s,
            tt_e,
            ident: if with_ident {
                id_list(t.ident.range(b, a, e))
            } else {
                Vec::new()
            },
        }
    }

    /// The `tt_s` column of rows `[a, e)` of table `k` (clamped), runs expanded.
    fn tt_s_range(&self, k: usize, a: usize, e: usize) -> Vec<i64> {
        let t = &self.rows[k];
        let e = e.min(t.n);
        let a = a.min(e);
        match &t.tt_s {
            TtCol::Runs(runs) => {
                let mut tt_s = Vec::with_capacity(e - a);
                let mut run = runs
                    .partition_point(|&(start, _)| start <= a)
                    .saturating_sub(1);
                for r in a..e {
                    while runs.get(run + 1).is_some_and(|&(start, _)| start <= r) {
                        run += 1;
                    }
                    tt_s.push(runs.get(run).map_or(0, |&(_, v)| v));
                }
                tt_s
            }
            TtCol::Col(c) => c.range(self.b(), a, e),
        }
    }

    /// Values `[a, e)` (clamped) of integer chunk `id` as the file stores them
    /// (`format-spec.md` §6.3, §6.5; a `tt_s` chunk's runs expanded): the dictionary
    /// columns 3–12, the row and close columns, the heap offsets and orders (64–67), the
    /// mapped-identity order (76) and the long-row end orders (78, 80). Empty for any
    /// other chunk. Compaction over the image reads it through this, a stretch of one
    /// column at a time.
    pub(crate) fn chunk_range(&self, id: u16, a: usize, e: usize) -> Vec<i64> {
        use chunk::*;
        let col = match id {
            CONTENT_LABEL..=CONTENT_PROV => &self.content[usize::from(id - CONTENT_LABEL)],
            IDENT_SRC..=IDENT_DISC_VAL => &self.ident[usize::from(id - IDENT_SRC)],
            SLOTS => &self.slots,
            ROWS_NODE..=43 => {
                let (k, c) = if id < ROWS_EDGE {
                    (0, id - ROWS_NODE)
                } else {
                    (1, id - ROWS_EDGE)
                };
                let t = &self.rows[k];
                match c {
                    IDENT => &t.ident,
                    CONTENT => &t.content,
                    VT_S => &t.vt_s,
                    VT_LEN => &t.vt_len,
                    TT_S => return self.tt_s_range(k, a, e),
                    REASON => &t.reason,
                    ORIGIN => &t.origin,
                    ALIVE => &t.alive,
                    CLOSE_ROW => &t.close_row,
                    CLOSE_TT_E => &t.close_tt_e,
                    CLOSE_BY => &t.close_by,
                    CLOSE_REASON => &t.close_reason,
                    _ => return Vec::new(),
                }
            }
            UID_OFFS => &self.uids.offs,
            STR_OFFS => &self.strings.offs,
            UID_ORDER => &self.uids.order,
            STR_ORDER => &self.strings.order,
            MAPPED_ORDER => &self.mapped,
            NODE_LONG_BY_END | EDGE_LONG_BY_END => match &self.time {
                Some(t) => &t[usize::from(id == EDGE_LONG_BY_END)].by_end,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let e = e.min(col.len());
        col.range(self.b(), a.min(e), e)
    }

    /// The number of closures of table `k`.
    pub(crate) fn n_close(&self, k: usize) -> usize {
        self.rows[k].n_close
    }

    /// The string bytes of the uid heap (`uids`) or of the string heap, back to back.
    pub(crate) fn heap_bytes(&self, uids: bool) -> &[u8] {
        let h = if uids { &self.uids } else { &self.strings };
        &self.b()[h.data..h.data + h.len]
    }

    /// True for an image of segment minor 4: rows in segment order (§6.1), with the
    /// valid-time index and the closed-row sets.
    pub(crate) fn is_sorted(&self) -> bool {
        self.time.is_some() && self.rows[0].closed.is_some()
    }

    /// `(vt_s, vt_e)` columns of rows `[a, e)` of table `k` (clamped).
    pub(crate) fn vt_cols(&self, k: usize, a: usize, e: usize) -> (Vec<i64>, Vec<i64>) {
        let (t, b) = (&self.rows[k], self.b());
        let vt_s = t.vt_s.range(b, a, e);
        let vt_e = vt_ends(&vt_s, t.vt_len.range(b, a, e));
        (vt_s, vt_e)
    }

    /// The `vt_s` column of rows `[a, e)` of table `k` (clamped).
    pub(crate) fn vt_s_col(&self, k: usize, a: usize, e: usize) -> Vec<i64> {
        self.rows[k].vt_s.range(self.b(), a, e)
    }

    /// Identity ids of edge rows (`k` = 1) or uid ids of node rows (`k` = 0) `[a, e)`
    /// (clamped).
    pub(crate) fn ident_col(&self, k: usize, a: usize, e: usize) -> Vec<u32> {
        id_list(self.rows[k].ident.range(self.b(), a, e))
    }

    /// Column `c` (0 src, 1 dst, 2 rel) of edge identities `[a, e)` (clamped).
    pub(crate) fn ident_part_range(&self, c: usize, a: usize, e: usize) -> Vec<u32> {
        id_list(self.ident[c].range(self.b(), a, e))
    }

    /// The number of rows of table `k`.
    pub(crate) fn n_rows(&self, k: usize) -> usize {
        self.rows[k].n
    }

    /// The largest `tt_s` or closure `tt_e` of table `k` (`i64::MIN` when it has no rows):
    /// at every belief state at or after it, a row is believed exactly when it is alive
    /// and not closed.
    pub(crate) fn max_tt(&self, k: usize) -> i64 {
        let t = &self.rows[k];
        let ends = t.close_tt_e.range(self.b(), 0, t.n_close);
        ends.into_iter().fold(self.max_tt_s(k), i64::max)
    }

    /// The largest `tt_s` of table `k` (`i64::MIN` when it has no rows).
    fn max_tt_s(&self, k: usize) -> i64 {
        let t = &self.rows[k];
        *t.tt_max.get_or_init(|| {
            match &t.tt_s {
                TtCol::Runs(runs) => runs.iter().map(|&(_, v)| v).max(),
                TtCol::Col(c) => c.range(self.b(), 0, t.n).into_iter().max(),
            }
            .unwrap_or(i64::MIN)
        })
    }

    /// True when the image holds the valid-time index (segment minor ≥ 3).
    pub(crate) fn has_time_index(&self) -> bool {
        self.time.is_some()
    }

    /// In the valid-time index of table `k`: the number of rows with `vt_s < t` (`by_end`:
    /// of long rows with `vt_e < t`), by binary search through the rows' columns; 0
    /// without an index.
    pub(crate) fn time_rank(&self, k: usize, by_end: bool, t: i64) -> usize {
        let Some(ti) = &self.time else { return 0 };
        let (c, b) = (ti[k].col(by_end), self.b());
        let key = |p: usize| {
            let (s, e) = self.row_vt(k, c.id(b, p));
            if by_end {
                e
            } else {
                s
            }
        };
        first_not_below(c.len(), |p| key(p) < t)
    }

    /// Entries `[a, e)` of the valid-time index of table `k` (`by_end`: the long rows by
    /// `vt_e`), as row numbers.
    pub(crate) fn time_rows(&self, k: usize, by_end: bool, a: usize, e: usize) -> Vec<u32> {
        match &self.time {
            None => Vec::new(),
            Some(ti) => id_list(ti[k].col(by_end).range(self.b(), a, e)),
        }
    }

    /// Entry `i` of the long-row end order of table `k` (chunk 78 or 80), a row number;
    /// `NONE` when out of range or without the index.
    pub(crate) fn long_row(&self, k: usize, i: usize) -> u32 {
        match &self.time {
            Some(t) => t[k].by_end.id(self.b(), i),
            None => NONE,
        }
    }

    /// The number of long rows of table `k` in the valid-time index.
    pub(crate) fn n_long(&self, k: usize) -> usize {
        self.time.as_ref().map_or(0, |t| t[k].by_end.len())
    }

    /// The `i`-th uid id in uid byte order (`NONE` when out of range).
    pub(crate) fn uid_by_rank(&self, i: usize) -> u32 {
        self.uids.order.id(self.b(), i)
    }

    pub(crate) fn row_tt_s(&self, k: usize, r: u32) -> i64 {
        match &self.rows[k].tt_s {
            TtCol::Runs(runs) => {
                let run = runs.partition_point(|&(start, _)| start <= r as usize);
                run.checked_sub(1)
                    .and_then(|k| runs.get(k))
                    .map_or(0, |&(_, v)| v)
            }
            TtCol::Col(c) => c.get(self.b(), r as usize),
        }
    }

    /// `(tt_e, closed_by, close_reason)`: the closure of the row, by search in the
    /// (strictly ascending) close rows; `(OPEN_END, None, NONE)` for an open row. The
    /// image's closed-row set (minor 4; else a bitset built at first use) answers first,
    /// and a table without closures has nothing to test.
    pub(crate) fn row_close(&self, k: usize, r: u32) -> (i64, Option<Origin>, u32) {
        let (t, b) = (&self.rows[k], self.b());
        let closed = t.n_close > 0
            && match t.closed {
                Some(set) => set.contains(b, r),
                None => {
                    let bits = self.caches.closed[k].get_or_init(|| {
                        let mut bits = vec![0u64; t.n.div_ceil(64)];
                        for x in t.close_row.range(b, 0, t.n_close) {
                            let w = usize::try_from(x).ok().and_then(|x| bits.get_mut(x / 64));
                            if let Some(w) = w {
                                *w |= 1 << (x % 64);
                            }
                        }
                        bits
                    });
                    bits.get(r as usize / 64)
                        .is_some_and(|w| w & (1 << (r % 64)) != 0)
                }
            };
        if !closed {
            return (OPEN_END, None, NONE);
        }
        let c = t.close_row.lower_bound(b, i64::from(r));
        if c >= t.n_close || t.close_row.get(b, c) != i64::from(r) {
            return (OPEN_END, None, NONE);
        }
        let by = u8::try_from(t.close_by.get(b, c))
            .ok()
            .and_then(Origin::from_u8)
            .unwrap_or(Origin::Assert);
        (
            t.close_tt_e.get(b, c),
            Some(by),
            opt_id(t.close_reason.get(b, c)),
        )
    }

    pub(crate) fn row_reason(&self, k: usize, r: u32) -> u32 {
        opt_id(self.rows[k].reason.get(self.b(), r as usize))
    }

    pub(crate) fn row_origin(&self, k: usize, r: u32) -> Origin {
        u8::try_from(self.rows[k].origin.get(self.b(), r as usize))
            .ok()
            .and_then(Origin::from_u8)
            .unwrap_or(Origin::Assert)
    }

    pub(crate) fn row_alive(&self, k: usize, r: u32) -> bool {
        (r as usize) < self.rows[k].n && self.rows[k].alive.get(self.b(), r as usize) == 1
    }

    /// Column `c` (0 src, 1 dst, 2 rel) of edge identity `id`; `NONE` when out of range.
    pub(crate) fn ident_part(&self, id: u32, c: usize) -> u32 {
        self.ident[c].id(self.b(), id as usize)
    }

    /// Node rows of uid `uid`, ascending (every row, alive or not); empty when out of range.
    pub(crate) fn node_postings(&self, uid: u32) -> Vec<u32> {
        self.node_post.get(self.b(), uid)
    }

    /// Edge rows of identity `ident`, ascending.
    pub(crate) fn edge_postings(&self, ident: u32) -> Vec<u32> {
        self.edge_post.get(self.b(), ident)
    }

    /// Edge rows whose identity has src `uid`, ascending.
    pub(crate) fn out_adj(&self, uid: u32) -> Vec<u32> {
        self.out_adj.get(self.b(), uid)
    }

    /// Edge rows whose identity has dst `uid`, ascending.
    pub(crate) fn in_adj(&self, uid: u32) -> Vec<u32> {
        self.in_adj.get(self.b(), uid)
    }
}

/// Opens a full image the way a store's mapped open does (checksums, directory, column
/// headers, then the structural checks of `base/structure.rs`) and reads every row, content
/// and identity through it: `Err((file offset, what))` on the first problem. Fuzz targets
/// hold it to [`seg::decode_structure`]: what it accepts, the decoding path accepts too.
pub fn open_image(b: &[u8]) -> Result<(), SegErr> {
    let base = Base::open(SegBytes::Heap(b.to_vec()))?;
    for k in 0..2 {
        for r in 0..base.n_rows(k) as u32 {
            let row = base.row(k, r);
            let _ = base.content(row.content);
            if k == 1 {
                let _ = base.ident(row.ident);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::seg::{put_dfors, put_for, put_pfor};
    use crate::state::State;
    use crate::store::{Options, Store};
    use crate::Op;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// Random access (get, range) of a codec-5, a codec-6 and a FOR column equals the full
    /// decode.
    fn check_random_access(v: &[i64]) {
        for (c, enc) in [
            (codec::DFORS, put_dfors as fn(&mut Vec<u8>, &[i64])),
            (codec::PFOR, put_pfor),
            (codec::FOR, put_for),
        ] {
            let mut b = vec![0xAA; 3]; // the column need not start at 0
            enc(&mut b, v);
            let full = seg::decode_int(&b[3..], c, v.len()).unwrap();
            assert_eq!(full, v);
            let col = Col::parse(&b, 3, b.len(), c).unwrap();
            assert_eq!(col.len(), v.len());
            for (i, &x) in v.iter().enumerate() {
                assert_eq!(col.get(&b, i), x, "codec {c} value {i} of {}", v.len());
            }
            assert_eq!(col.get(&b, v.len()), 0);
            assert_eq!(col.range(&b, 0, v.len()), v);
            for (a, e) in [(1, 2), (100, 300), (127, 129), (5, 5), (200, 10_000)] {
                let (a2, e2) = (a.min(v.len()), e.min(v.len()).max(a.min(v.len())));
                assert_eq!(col.range(&b, a, e), v[a2..e2], "range {a}..{e}");
            }
        }
    }

    fn arb_column() -> impl Strategy<Value = Vec<i64>> {
        let len = prop_oneof![
            Just(0usize),
            Just(1),
            126..=130usize,
            254..=258usize,
            0..700usize
        ];
        (len, any::<u64>()).prop_flat_map(|(n, _)| {
            prop::collection::vec(
                prop_oneof![
                    6 => 0..4i64,
                    2 => 0..1000i64,
                    1 => -5..0i64,
                    1 => any::<i64>(),
                ],
                n,
            )
            .prop_map(|deltas| {
                // Mostly growing columns (so DFORS has a small width and exceptions).
                let mut cur = 0i64;
                deltas
                    .into_iter()
                    .map(|d| {
                        cur = cur.wrapping_add(d);
                        cur
                    })
                    .collect()
            })
        })
    }

    /// Sparse columns: mostly small values (or one repeated value), with random spikes.
    fn arb_sparse() -> impl Strategy<Value = Vec<i64>> {
        let len = prop_oneof![
            Just(0usize),
            Just(1),
            30..=34usize,
            62..=66usize,
            95..=97usize,
            0..400usize
        ];
        (len, 0..4u8).prop_flat_map(|(n, kind)| {
            let val = match kind {
                0 => prop_oneof![Just(7i64)].boxed(),
                1 => prop_oneof![20 => Just(0i64), 1 => 1..100_000i64].boxed(),
                2 => prop_oneof![
                    12 => 0..4i64,
                    1 => any::<i64>(),
                    1 => 1_000..1_000_000i64
                ]
                .boxed(),
                _ => prop_oneof![3 => 0..3i64, 1 => 0..1i64 << 40].boxed(),
            };
            prop::collection::vec(val, n)
        })
    }

    /// Random access, plus `lower_bound` on the sorted column, of a PFOR column.
    fn check_pfor(v: &[i64]) {
        check_random_access(v);
        let mut sorted = v.to_vec();
        sorted.sort_unstable();
        let mut b = Vec::new();
        put_pfor(&mut b, &sorted);
        let col = Col::parse(&b, 0, b.len(), codec::PFOR).unwrap();
        for x in sorted.iter().copied().chain([i64::MIN, i64::MAX, 0, 5]) {
            assert_eq!(col.lower_bound(&b, x), sorted.partition_point(|&y| y < x));
        }
    }

    proptest! {
        #[test]
        fn pfor_random_access_equals_full_decode(v in arb_sparse()) {
            check_pfor(&v);
        }
        #[test]
        fn dfors_random_access_equals_full_decode(v in arb_column()) {
            check_random_access(&v);
        }
        #[test]
        fn dfors_random_access_of_arbitrary_values(
            v in prop::collection::vec(any::<i64>(), 0..300)) {
            check_random_access(&v);
        }
    }

    #[test]
    fn dfors_exceptions_and_block_boundaries() {
        let mut v: Vec<i64> = (0..1000).collect();
        check_random_access(&v);
        v[127] = i64::MIN;
        v[128] = 3;
        v[256] = i64::MAX;
        v[999] = -1;
        check_random_access(&v);
        let mut b = Vec::new();
        put_dfors(&mut b, &v);
        let Col::Dfors(d) = Col::parse(&b, 0, b.len(), codec::DFORS).unwrap() else {
            panic!("not dfors");
        };
        assert!(d.exc.n >= 4 && d.deltas.width == 0, "{d:?}");
        for n in [127usize, 128, 129, 256, 257] {
            check_random_access(&v[..n]);
            check_random_access(&v[1..n]);
        }
    }

    #[test]
    fn pfor_exceptions_and_block_boundaries() {
        for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 200] {
            check_pfor(&vec![0; n]);
            check_pfor(&vec![-3; n]);
            let mut v = vec![0i64; n];
            for i in (0..n).filter(|i| i % 31 == 0 || i % 32 == 31) {
                v[i] = 1_000_000 + i as i64;
            }
            check_pfor(&v);
            // Every value an exception of one block, the next without any.
            let v: Vec<i64> = (0..n as i64)
                .map(|i| if i % 64 < 32 { i64::MAX - i } else { 1 })
                .collect();
            check_pfor(&v);
        }
    }

    #[test]
    fn put_int_ra_picks_pfor_for_sparse_columns() {
        // A `reason` column: 0 for most rows, a string id + 1 for corrections.
        let v: Vec<i64> = (0..10_000)
            .map(|i| if i % 97 == 0 { 400 + i % 300 } else { 0 })
            .collect();
        let mut b = Vec::new();
        assert_eq!(seg::put_int_ra(&mut b, &v), codec::PFOR);
        let (mut f, mut d) = (Vec::new(), Vec::new());
        put_for(&mut f, &v);
        put_dfors(&mut d, &v);
        assert!(b.len() < f.len() && b.len() < d.len());
        assert_eq!(seg::decode_int(&b, codec::PFOR, v.len()).unwrap(), v);
        let Col::Pfor(p) = Col::parse(&b, 0, b.len(), codec::PFOR).unwrap() else {
            panic!("not pfor");
        };
        assert_eq!((p.vals.min, p.vals.width, p.exc.n), (0, 0, 104));
        // Dense ascending and small-width columns keep DFORS and FOR.
        let asc: Vec<i64> = (0..1000).map(|i| i * 3).collect();
        assert_eq!(seg::put_int_ra(&mut Vec::new(), &asc), codec::DFORS);
        let small: Vec<i64> = (0..1000).map(|i| i % 4).collect();
        assert_eq!(seg::put_int_ra(&mut Vec::new(), &small), codec::FOR);
    }

    #[test]
    fn pfor_corruption_is_refused() {
        let mut v = vec![0i64; 200];
        for i in [3usize, 40, 41, 100, 199] {
            v[i] = 5_000 + i as i64;
        }
        let mut b = Vec::new();
        put_pfor(&mut b, &v);
        // The full decoder refuses every damage below; the open-time parse refuses damage to
        // the list and the lengths, and reads through a damaged start without panicking
        // (starts are checked by the full decoder only, keeping an open O(exceptions)).
        let refused = |b: &[u8]| {
            if let Ok(c) = Col::parse(b, 0, b.len(), codec::PFOR) {
                (0..v.len()).for_each(|i| {
                    let _ = c.get(b, i);
                });
                drop(c.range(b, 0, v.len()));
            }
            seg::decode_int(b, codec::PFOR, v.len()).is_err()
        };
        assert!(!refused(&b));
        // Layout: count 4 | min 8 | width 1 (0: all non-exceptions are 0) | n_exc 4 | list.
        assert_eq!(b[12], 0);
        let list = 17;
        assert_eq!(u32::from_le_bytes(b[13..17].try_into().unwrap()), 5);
        // The starts column ends the chunk: count 4 | min 8 | width 1 | bits.
        let starts = list + 5 * 12;
        let want = [0i64, 1, 3, 3, 4, 4, 4];
        let mut tail = Vec::new();
        put_for(&mut tail, &want);
        assert_eq!(&b[starts..], &tail[..]);
        // Flip every bit of the starts column's min and packed bits (7 values of 3 bits;
        // the padding bits after them are not read).
        for at in starts + 4..b.len() {
            if at == starts + 12 {
                continue; // the width: a length mismatch, refused too (below)
            }
            let bits = if at == b.len() - 1 { 21 - 16 } else { 8 };
            for bit in 0..bits {
                let mut bad = b.clone();
                bad[at] ^= 1 << bit;
                assert!(refused(&bad), "byte {at} bit {bit}");
            }
        }
        let mut bad = b.clone();
        bad[starts + 12] ^= 1;
        assert!(refused(&bad));
        // Out-of-order indexes (swap entries 1 and 2), a repeated index, one out of range.
        let mut bad = b.clone();
        let (e1, e2) = (list + 12, list + 24);
        let x = bad[e1..e1 + 12].to_vec();
        bad.copy_within(e2..e2 + 12, e1);
        bad[e2..e2 + 12].copy_from_slice(&x);
        assert!(refused(&bad));
        let mut bad = b.clone();
        bad[e2..e2 + 4].copy_from_slice(&40u32.to_le_bytes());
        assert!(refused(&bad));
        let mut bad = b.clone();
        bad[list + 48..list + 52].copy_from_slice(&200u32.to_le_bytes());
        assert!(refused(&bad));
        // Too many exceptions, a byte left over, a byte missing.
        let mut bad = b.clone();
        bad[13..17].copy_from_slice(&201u32.to_le_bytes());
        assert!(refused(&bad));
        let mut bad = b.clone();
        bad.push(0);
        assert!(refused(&bad));
        assert!(refused(&b[..b.len() - 1]));
        // PFOR in a minor-0/1 position is refused by the directory check (see
        // codec_and_minor_rules_of_the_directory).
    }

    #[test]
    fn dfors_full_decode_checks_the_skip_values() {
        let v: Vec<i64> = (0..300).map(|i| i * 3).collect();
        let mut b = Vec::new();
        put_dfors(&mut b, &v);
        // The skip column (every DFORS_STRIDE-th value) and the exception starts (all 0:
        // no exceptions) end the chunk; the skip column's min is the first skip value, the
        // starts' min is 0: change either.
        let skips: Vec<i64> = v.iter().step_by(DFORS_STRIDE).copied().collect();
        let mut tail = Vec::new();
        put_for(&mut tail, &skips);
        let skip_len = tail.len();
        put_for(&mut tail, &vec![0; skips.len()]);
        let at = b.len() - tail.len();
        assert_eq!(&b[at..], &tail[..]);
        assert!(seg::decode_int(&b, codec::DFORS, v.len()).is_ok());
        for flip in [at + 4, at + skip_len + 4] {
            let mut bad = b.clone();
            bad[flip] ^= 1;
            assert!(seg::decode_int(&bad, codec::DFORS, v.len()).is_err());
        }
        b[at + 4] ^= 1;
        // The DFOR part alone is not a valid DFORS column (the skip column is missing).
        let mut d = Vec::new();
        seg::put_dfor(&mut d, &v);
        assert!(seg::decode_int(&d, codec::DFORS, v.len()).is_err());
        assert!(Col::parse(&d, 0, d.len(), codec::DFORS).is_err());
    }

    // ---------------------------------------------------------------- randomized stores

    /// The seeded generator of the randomized stores (shared with `compact`'s tests).
    pub(crate) use tgms_testkit::Rng;

    const UIDS: &[&str] = &["a", "b", "c", "d", "é", "日本", "zz", "a\u{0}b", "B", "ab"];
    const RELS: &[&str] = &["R", "S", "knows", "É"];
    const DISCS: &[&str] = &["x", "#3", "#0", "y", "ü"];

    pub(crate) fn random_op(r: &mut Rng) -> Value {
        let u = |r: &mut Rng| r.pick(UIDS);
        let vt = |r: &mut Rng| {
            let s = r.below(100) as i64;
            (s, s + 1 + r.below(50) as i64)
        };
        match r.below(8) {
            0 => {
                let (s, e) = vt(r);
                json!({"op":"assert_node","uid":u(r),"label":r.pick(&["N","M"]),
                       "props":{"p": r.below(3)},"vt_s":s,"vt_e":e})
            }
            1 | 2 => {
                let (s, e) = vt(r);
                let mut o = json!({"op":"assert_edge","src":u(r),"dst":u(r),"rel_type":r.pick(RELS),
                       "props":{"w": r.below(4)},"vt_s":s,"vt_e":e});
                if r.below(2) == 0 {
                    o["disc"] = json!(r.pick(DISCS));
                }
                if r.below(3) == 0 {
                    o["reason"] = json!(r.pick(&["seen", "told"]));
                }
                o
            }
            3 | 4 => {
                let n = 1 + r.below(6);
                let events: Vec<Value> = (0..n)
                    .map(|_| {
                        let mut e = json!({"src":u(r),"dst":u(r),"rel_type":r.pick(RELS),
                                           "vt_s": r.below(100)});
                        if r.below(3) == 0 {
                            e["vt_e"] = json!(200 + r.below(10));
                        }
                        if r.below(4) == 0 {
                            e["props"] = json!({"k": r.below(3)});
                        }
                        e
                    })
                    .collect();
                json!({"op":"ingest_events","events":events})
            }
            5 => json!({"op":"retract","ref":{"kind":"node","uid":u(r)},
                        "t": r.below(120), "reason":"gone"}),
            6 => {
                let mut rf = json!({"kind":"edge","src":u(r),"dst":u(r),"rel_type":r.pick(RELS)});
                if r.below(2) == 0 {
                    rf["disc"] = json!(r.pick(DISCS));
                }
                json!({"op":"retract","ref":rf,"t": r.below(120),"reason":"x"})
            }
            _ => {
                let (s, e) = vt(r);
                json!({"op":"correct","ref":{"kind":"node","uid":u(r)},
                       "props":{"p": 9},"vt_s":s,"vt_e":e,"reason":"fix"})
            }
        }
    }

    /// Builds a random store, flushing now and then, compacts it and returns the compacted
    /// segment's bytes.
    fn random_compacted(seed: u64, batches: usize) -> Vec<u8> {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut s = manual_store(&dir);
        let mut r = Rng::new(seed);
        let mut tt = 1000;
        for k in 0..batches {
            let n = 1 + r.below(3);
            let ops: Vec<Op> = (0..n).map(|_| Op::from_json(&random_op(&mut r))).collect();
            tt += 1 + r.below(3) as i64;
            let _ = s.write_at(tt, ops);
            if k % 7 == 3 || k == 0 {
                s.flush().unwrap();
            }
        }
        s.compact().unwrap();
        seg::only_segment(&dir)
    }

    fn row_eq(a: &Row, b: &Row) -> bool {
        (
            a.ident,
            a.content,
            a.vt_s,
            a.vt_e,
            a.tt_s,
            a.tt_e,
            a.reason,
            a.close_reason,
            a.origin,
            a.closed_by,
            a.alive,
        ) == (
            b.ident,
            b.content,
            b.vt_s,
            b.vt_e,
            b.tt_s,
            b.tt_e,
            b.reason,
            b.close_reason,
            b.origin,
            b.closed_by,
            b.alive,
        )
    }

    /// Compares every accessor of `Base` with the state loaded from the same bytes; returns
    /// how many closed rows, retired rows, mapped identities, string discs and empty slots
    /// it saw.
    fn compare(bytes: &[u8]) -> [usize; 5] {
        assert_eq!(
            u16::from_le_bytes([bytes[10], bytes[11]]),
            seg::SEG_MINOR_SORTED
        );
        seg::verify(bytes).unwrap();
        let (seq, d) = seg::decode(bytes).unwrap();
        // Every name is found by the search and by the writers' hash tables; others by
        // neither.
        {
            let b = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
            for (k, names) in [&d.uids, &d.strings].into_iter().enumerate() {
                for (id, name) in names.iter().enumerate() {
                    assert_eq!(b.find_hashed(k, name), Some(id as u32), "{name:?}");
                    let found = if k == 0 {
                        b.uid_id(name)
                    } else {
                        b.string_id(name)
                    };
                    assert_eq!(found, Some(id as u32), "{name:?}");
                }
                for absent in ["", "absent", "a\u{0}", "日"] {
                    if !names.iter().any(|n| n == absent) {
                        assert_eq!(b.find_hashed(k, absent), None, "{absent:?}");
                    }
                }
            }
            // Every content is found (the first id holding it); a content no id holds is not.
            for (id, c) in d.contents.iter().enumerate() {
                let first = d.contents.iter().position(|x| x == c).unwrap() as u32;
                assert_eq!(b.find_content(*c), Some(first), "content {id}");
            }
            let absent = Content {
                label: NONE,
                props: 0,
                source: 0,
                provenance: 0,
            };
            if !d.contents.contains(&absent) {
                assert_eq!(b.find_content(absent), None);
            }
        }
        // The valid-time index against a brute-force sort of the rows.
        {
            let b = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
            for (k, rows) in [&d.nodes, &d.edges].into_iter().enumerate() {
                let mut by_start: Vec<(i64, u32)> =
                    (0..rows.len()).map(|r| (rows[r].vt_s, r as u32)).collect();
                by_start.sort();
                let mut by_end: Vec<(i64, u32)> = (0..rows.len())
                    .filter(|&r| rows[r].vt_e != rows[r].vt_s + 1)
                    .map(|r| (rows[r].vt_e, r as u32))
                    .collect();
                by_end.sort();
                let ids = |v: &[(i64, u32)]| v.iter().map(|p| p.1).collect::<Vec<u32>>();
                assert_eq!(b.time_rows(k, false, 0, rows.len()), ids(&by_start));
                assert_eq!(b.n_long(k), by_end.len());
                assert_eq!(b.time_rows(k, true, 0, by_end.len()), ids(&by_end));
                for t in [
                    i64::MIN,
                    -1,
                    0,
                    1,
                    5,
                    50,
                    120,
                    199,
                    200,
                    250,
                    OPEN_END,
                    i64::MAX,
                ] {
                    let below = |v: &[(i64, u32)]| v.iter().filter(|p| p.0 < t).count();
                    assert_eq!(b.time_rank(k, false, t), below(&by_start), "start rank {t}");
                    assert_eq!(b.time_rank(k, true, t), below(&by_end), "end rank {t}");
                }
            }
        }
        let mut st = State::default();
        st.load_seg(d).unwrap();
        let base = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
        assert_eq!(base.seq(), seq);
        let m = st.marks();
        assert_eq!(base.marks(), m);
        for id in 0..m.uids as u32 {
            let name = st.uids.name(id);
            assert_eq!(base.uid_name(id), name);
            assert_eq!(base.uid_id(name), Some(id));
            let u = id as usize;
            assert_eq!(base.node_postings(id), st.node_postings[u].to_vec());
            assert_eq!(base.out_adj(id), st.out_adj[u]);
            assert_eq!(base.in_adj(id), st.in_adj[u]);
        }
        for id in 0..m.strings as u32 {
            let s = st.strings.name(id);
            assert_eq!(base.string(id), s);
            assert_eq!(base.string_id(s), Some(id));
        }
        for absent in ["", "nope", "a\u{1}", "日", "zzz", "\u{10FFFF}"] {
            assert_eq!(base.uid_id(absent), st.uids.get(absent), "{absent:?}");
            assert_eq!(base.string_id(absent), st.strings.get(absent), "{absent:?}");
        }
        for id in 0..m.contents as u32 {
            assert!(base.content(id) == st.contents[id as usize]);
        }
        for id in 0..m.idents as u32 {
            let e = &st.idents[id as usize];
            let b = base.ident(id);
            assert_eq!(
                b,
                IdentRec {
                    src: e.src,
                    dst: e.dst,
                    rel: e.rel,
                    disc: e.disc,
                    mapped: e.mapped
                }
            );
            assert_eq!(
                base.edge_postings(id),
                st.edge_postings[id as usize].to_vec()
            );
            let found = base.find_mapped_ident(e.src, e.dst, e.rel, e.disc);
            assert_eq!(found, e.mapped.then_some(id), "identity {id}");
            // Absent keys: another disc, another rel.
            for disc in [Disc::Ordinal(987_654), Disc::Str(NONE - 1)] {
                assert_eq!(base.find_mapped_ident(e.src, e.dst, e.rel, disc), None);
            }
            assert_eq!(base.find_mapped_ident(e.src, e.dst, NONE - 1, e.disc), None);
        }
        for k in 0..m.slots {
            let s = st.ordinal_slots[k as usize];
            assert_eq!(base.slot(k), (s != NONE).then_some(s));
        }
        for r in 0..m.nodes as u32 {
            assert!(
                row_eq(&base.row(0, r), &st.nodes[r as usize]),
                "node row {r}"
            );
        }
        for r in 0..m.edges as u32 {
            assert!(
                row_eq(&base.row(1, r), &st.edges[r as usize]),
                "edge row {r}"
            );
        }
        // Out of range: defaults, no panic.
        let (nu, ns) = (m.uids as u32, m.strings as u32);
        assert_eq!(base.uid_name(nu), "");
        assert_eq!(base.uid_name(u32::MAX), "");
        assert_eq!(base.string(ns), "");
        assert!(base.node_postings(nu).is_empty() && base.out_adj(u32::MAX).is_empty());
        assert!(base.in_adj(nu).is_empty());
        assert!(base.edge_postings(m.idents as u32).is_empty());
        assert_eq!(base.slot(m.slots), None);
        assert_eq!(base.slot(u64::MAX), None);
        assert_eq!(base.content(m.contents as u32).label, NONE);
        assert_eq!(base.ident(m.idents as u32).src, NONE);
        assert_eq!(base.row(0, m.nodes as u32).ident, NONE);
        assert!(!base.row(1, u32::MAX).alive);
        let rows = || st.nodes.iter().chain(st.edges.iter());
        [
            rows().filter(|r| r.tt_e != OPEN_END).count(),
            rows().filter(|r| !r.alive).count(),
            st.idents.iter().filter(|e| e.mapped).count(),
            st.idents
                .iter()
                .filter(|e| matches!(e.disc, Disc::Str(_)))
                .count(),
            st.ordinal_slots.iter().filter(|&&s| s == NONE).count(),
        ]
    }

    #[test]
    fn base_accessors_equal_the_loaded_state_on_random_stores() {
        let mut seen = [0usize; 5];
        for seed in 1..=12u64 {
            let bytes = random_compacted(seed, 20 + 10 * seed as usize);
            let c = compare(&bytes);
            seen.iter_mut().zip(c).for_each(|(a, b)| *a += b);
        }
        // The workload exercises closures, retired rows, mapped identities, string discs.
        assert!(seen[..4].iter().all(|&n| n > 0), "{seen:?}");
        eprintln!("closed, retired, mapped, string discs, empty slots: {seen:?}");
    }

    /// A store that flushes and compacts only when told to.
    fn manual_store(dir: &std::path::Path) -> Store {
        Store::create_with(
            dir,
            Options {
                flush_rows: Some(0),
                compact_segments: Some(0),
                ..Options::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn base_of_a_larger_store_with_long_columns() {
        // Enough rows for DFORS columns with several skip blocks.
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut s = manual_store(&dir);
        let mut r = Rng::new(7);
        for k in 0..6 {
            let events: Vec<Value> = (0..700)
                .map(|i| {
                    json!({"src": format!("u{}", r.below(90)), "dst": format!("u{}", r.below(90)),
                           "rel_type": RELS[(i % 3) as usize], "vt_s": k * 1000 + i})
                })
                .collect();
            s.write_at(
                1000 + 2 * k,
                vec![Op::from_json(
                    &json!({"op":"ingest_events","events":events}),
                )],
            )
            .unwrap();
            let ops: Vec<Op> = (0..5).map(|_| Op::from_json(&random_op(&mut r))).collect();
            let _ = s.write_at(1001 + 2 * k, ops);
            s.flush().unwrap();
        }
        s.compact().unwrap();
        let bytes = seg::only_segment(&dir);
        let dir = seg::read_dir(&bytes).unwrap();
        assert!(dir.codecs.contains(&codec::DFORS));
        assert!(!dir.codecs.contains(&codec::DFOR));
        compare(&bytes);
    }

    #[test]
    fn flush_segments_stay_minor_1_and_compaction_writes_minor_3() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut s = manual_store(&dir);
        let mut r = Rng::new(99);
        for k in 0..3 {
            let ops: Vec<Op> = (0..4).map(|_| Op::from_json(&random_op(&mut r))).collect();
            let _ = s.write_at(1000 + k, ops);
            s.flush().unwrap();
        }
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "tgs") {
                let b = std::fs::read(&p).unwrap();
                assert_eq!(u16::from_le_bytes([b[10], b[11]]), seg::SEG_MINOR_FLUSH);
                let err = Base::open(SegBytes::Heap(b)).err().unwrap();
                assert!(err.1.to_string().contains("no index chunks"), "{err:?}");
            }
        }
        let minors = |dir: &std::path::Path| -> Vec<u16> {
            let mut v: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "tgs"))
                .map(|p| {
                    let b = std::fs::read(p).unwrap();
                    u16::from_le_bytes([b[10], b[11]])
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(minors(&dir), [5, 5, 5]);
        assert_eq!(s.compact().unwrap(), 3);
        assert_eq!(minors(&dir), [seg::SEG_MINOR_SORTED]);
        // An indexed image is not rewritten again.
        assert_eq!(s.compact().unwrap(), 0);
        // A store with a single (first-flush, minor-1) segment: compaction rewrites it as
        // an indexed image.
        let dir2 = t.path().join("s2");
        let mut s2 = Store::create_with(&dir2, Options::default()).unwrap();
        let ops: Vec<Op> = (0..6).map(|_| Op::from_json(&random_op(&mut r))).collect();
        let _ = s2.write_at(1000, ops);
        s2.flush().unwrap();
        assert_eq!(minors(&dir2), [5]);
        assert_eq!(s2.compact().unwrap(), 1);
        assert_eq!(minors(&dir2), [seg::SEG_MINOR_SORTED]);
        drop(s2);
        let mut s3 = Store::create_with(&t.path().join("s3"), Options::default()).unwrap();
        assert_eq!(s3.compact().unwrap(), 0);
        assert!(minors(&t.path().join("s3")).is_empty());
        // Without segments, compaction's flush writes the indexed image directly.
        let ops: Vec<Op> = (0..6).map(|_| Op::from_json(&random_op(&mut r))).collect();
        let _ = s3.write_at(1000, ops);
        assert_eq!(s3.compact().unwrap(), 0);
        assert_eq!(minors(&t.path().join("s3")), [seg::SEG_MINOR_SORTED]);
        assert!(t.path().join("s3/seg-00000001.tgs").exists());
    }

    #[test]
    fn corruption_of_any_byte_is_caught_by_open() {
        let bytes = random_compacted(5, 25);
        let dir = seg::read_dir(&bytes).unwrap();
        // Every index chunk: a flipped byte fails the open (its crc).
        for (k, &(id, _)) in dir.layout.iter().enumerate() {
            if id < chunk::UID_OFFS || dir.lens[k] == 0 {
                continue;
            }
            let mut b = bytes.clone();
            let at = dir.offsets[k] as usize + dir.lens[k] / 2;
            b[at] ^= 0x10;
            let err = Base::open(SegBytes::Heap(b))
                .err()
                .expect("corruption caught");
            assert!(
                err.1.to_string().contains("checksum"),
                "chunk {id}: {err:?}"
            );
        }
        // Every byte of the file: never a panic, always an error.
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x01;
            assert!(Base::open(SegBytes::Heap(b)).is_err(), "byte {at}");
        }
        // Truncations.
        for n in [0, 10, 88, bytes.len() / 2, bytes.len() - 1] {
            assert!(Base::open(SegBytes::Heap(bytes[..n].to_vec())).is_err());
        }
    }

    /// A file whose crcs hold but whose index chunks lie: `verify` reports it, `Base::open`
    /// validates what it can cheaply (offsets, counts) and never panics on access.
    #[test]
    fn forged_index_chunks_with_valid_crcs() {
        let bytes = random_compacted(3, 30);
        let (seq, d) = seg::decode(&bytes).unwrap();
        let good = seg::encode(seq, &d, &|_| 0, true).0;
        assert_eq!(good, bytes);
        // Rewrite with a wrong uid order (reversed): crcs recomputed, so only the
        // content check of `verify` notices; Base still answers without panicking.
        let forged = forge(&bytes, chunk::UID_ORDER, |v| v.reverse());
        assert!(seg::decode(&forged).is_ok());
        assert!(seg::verify(&forged)
            .unwrap_err()
            .1
            .to_string()
            .contains("S8"));
        let b = Base::open(SegBytes::Heap(forged)).unwrap();
        for id in 0..b.marks().uids as u32 {
            let _ = b.uid_id(b.uid_name(id));
        }
        // Offsets that do not end at the heap's end are refused by open.
        let forged = forge(&bytes, chunk::UID_OFFS, |v| {
            if let Some(x) = v.last_mut() {
                *x += 1
            }
        });
        assert!(Base::open(SegBytes::Heap(forged)).is_err());
        // Postings naming no row: refused at open (`structure`), naming chunk and value.
        let forged = forge(&bytes, chunk::OUT, |v| v.iter_mut().for_each(|x| *x = -7));
        let e = Base::open(SegBytes::Heap(forged))
            .err()
            .unwrap()
            .1
            .to_string();
        assert!(e.contains("chunk 73: value -7 at index 0"), "{e}");
        // A closed-row set naming other rows than the closures: `verify` notices, and so
        // does open (a close row missing from the set); one of another size is refused.
        let (bytes, d) = (3..)
            .map(|seed| {
                let b = random_compacted(seed, 60);
                let d = seg::decode(&b).unwrap().1;
                (b, d)
            })
            .find(|(_, d)| !d.closes[1].is_empty())
            .unwrap();
        let first = i64::from(d.closes[1][0].row);
        let other = (0..d.edges.len() as i64)
            .find(|r| d.closes[1].iter().all(|c| i64::from(c.row) != *r))
            .unwrap();
        let swapped = forge(&bytes, chunk::EDGE_CLOSED, |v| {
            v.retain(|&x| x != first);
            v.push(other);
            v.sort();
        });
        assert!(seg::decode(&swapped).is_ok());
        let e = seg::verify(&swapped).unwrap_err().1.to_string();
        assert!(e.contains("closed-row set 82") && e.contains("S8"), "{e}");
        let e = Base::open(SegBytes::Heap(swapped))
            .err()
            .unwrap()
            .1
            .to_string();
        assert!(e.contains(&format!("chunk 82: close row {first} ")), "{e}");
        let grown = forge(&bytes, chunk::EDGE_CLOSED, |v| {
            v.push(other);
            v.sort();
        });
        let e = Base::open(SegBytes::Heap(grown))
            .err()
            .unwrap()
            .1
            .to_string();
        assert!(e.contains("chunk 82") && e.contains("size"), "{e}");
    }

    /// A random compacted image with edge closures, slots, mapped identities and long
    /// rows, so every forgery below has a value to change.
    fn rich_compacted() -> Vec<u8> {
        (3..)
            .map(|seed| random_compacted(seed, 60))
            .find(|b| {
                let (_, d) = seg::decode(b).unwrap();
                !d.closes[1].is_empty()
                    && !d.slots.is_empty()
                    && d.idents.iter().any(|i| i.mapped)
                    && d.edges.iter().any(|r| r.vt_e != r.vt_s + 1)
                    && !d.nodes.is_empty()
            })
            .unwrap()
    }

    /// Values a writer could not have written, in files whose checksums hold (`forge`
    /// recomputes them): every one is refused by `Base::open` with an error naming the
    /// chunk and the value, where the open used to succeed and the accessors answered with
    /// defaults (an empty adjacency list, a row of `NONE` ids, `Origin::Assert`, …).
    #[test]
    fn forged_values_with_valid_crcs_are_refused_at_open() {
        use chunk::*;
        let bytes = rich_compacted();
        let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
        let (nu, ns, nc, ni) = (
            m.uids as i64,
            m.strings as i64,
            m.contents as i64,
            m.idents as i64,
        );
        let (nn, ne) = (m.nodes as i64, m.edges as i64);
        type Edit = Box<dyn Fn(&mut Vec<i64>)>;
        type Forgery = (u16, Edit, String);
        let first = |x: i64| -> Edit { Box::new(move |v| v[0] = x) };
        let last = |x: i64| -> Edit { Box::new(move |v| *v.last_mut().unwrap() = x) };
        let cases: Vec<Forgery> = vec![
            (CONTENT_LABEL, first(ns), format!("value {ns} at index 0")),
            (CONTENT_PROPS, last(-1), "value -1".into()),
            (CONTENT_SOURCE, first(ns + 5), format!("value {}", ns + 5)),
            (IDENT_SRC, first(nu), format!("value {nu} at index 0")),
            (IDENT_DST, last(nu + 1), format!("value {}", nu + 1)),
            (IDENT_REL, first(ns), format!("value {ns}")),
            (IDENT_DISC_TAG, first(4), "value 4".into()),
            (SLOTS, first(ni), format!("value {ni}")),
            (ROWS_NODE + IDENT, first(nu), format!("value {nu}")),
            (ROWS_EDGE + IDENT, first(ni), format!("value {ni}")),
            (ROWS_EDGE + CONTENT, last(nc), format!("value {nc}")),
            (
                ROWS_EDGE + VT_S,
                first(OPEN_END),
                format!("value {OPEN_END}"),
            ),
            (ROWS_EDGE + VT_LEN, first(-3), "value -3".into()),
            (
                ROWS_EDGE + REASON,
                first(ns + 1),
                format!("value {}", ns + 1),
            ),
            (ROWS_EDGE + ORIGIN, first(0), "value 0".into()),
            (ROWS_NODE + ORIGIN, first(5), "value 5".into()),
            (ROWS_EDGE + ALIVE, first(2), "value 2".into()),
            (ROWS_EDGE + CLOSE_ROW, last(ne), format!("close row {ne}")),
            (ROWS_EDGE + CLOSE_TT_E, first(-1), "value -1".into()),
            (ROWS_EDGE + CLOSE_BY, first(9), "value 9".into()),
            (ROWS_EDGE + CLOSE_REASON, first(-1), "value -1".into()),
            (UID_ORDER, first(nu), format!("value {nu}")),
            (STR_ORDER, last(-2), "value -2".into()),
            (NODE_POST, first(nn), format!("value {nn}")),
            (EDGE_POST, last(ne), format!("value {ne}")),
            (
                EDGE_POST_OFF,
                Box::new(move |v| v[1] = ne + 1),
                format!("value {}", ne + 1),
            ),
            (OUT, first(-7), "value -7".into()),
            (IN, last(ne), format!("value {ne}")),
            (MAPPED_ORDER, first(ni), format!("value {ni}")),
            (NODE_BY_START, first(nn), format!("value {nn}")),
            (EDGE_BY_START, last(ne), format!("value {ne}")),
            (EDGE_LONG_BY_END, first(-1), "value -1".into()),
        ];
        for (id, f, want) in cases {
            let forged = forge(&bytes, id, f);
            assert!(seg::read_dir(&forged).is_ok(), "chunk {id}: crcs hold");
            let e = Base::open(SegBytes::Heap(forged.clone()))
                .err()
                .unwrap_or_else(|| panic!("chunk {id}: the forgery opened"))
                .1
                .to_string();
            assert!(
                e.starts_with(&format!("chunk {id}: ")) && e.contains(&want),
                "chunk {id}: {e}"
            );
            assert!(open_image(&forged).is_err());
        }
        // A valid time that runs past the open end (start and length each legal).
        let near = OPEN_END - 2;
        let forged = forge(&bytes, ROWS_EDGE + VT_S, |v| v[0] = near);
        let forged = forge(&forged, ROWS_EDGE + VT_LEN, |v| v[0] = 5);
        let e = Base::open(SegBytes::Heap(forged))
            .err()
            .unwrap()
            .1
            .to_string();
        assert!(e.contains("row 0: valid time from"), "{e}");
        // A string disc naming no string: find an identity with a string disc.
        let (_, d) = seg::decode(&bytes).unwrap();
        if let Some(i) = d.idents.iter().position(|e| matches!(e.disc, Disc::Str(_))) {
            let forged = forge(&bytes, IDENT_DISC_VAL, |v| v[i] = ns);
            let e = Base::open(SegBytes::Heap(forged))
                .err()
                .unwrap()
                .1
                .to_string();
            assert!(
                e.contains(&format!("string disc {ns} of identity {i}")),
                "{e}"
            );
        }
        // The unforged image opens and reads.
        open_image(&bytes).unwrap();
    }

    /// The checks at open make random access agree with the full decoder: for every bit
    /// flip of a DFORS and a PFOR column with exceptions (their skip values and exception
    /// starts are redundant, and random reads go through them), the open-time parse and
    /// checks accept exactly what the full decoder accepts, and then `get` and `range`
    /// give the decoder's values.
    #[test]
    fn open_checks_make_random_access_agree_with_the_full_decoder() {
        let mut dv: Vec<i64> = (0..150).map(|i| i * 3).collect();
        for i in [5usize, 40, 41, 99] {
            dv[i] += 1_000_000 + i as i64;
        }
        for i in 100..150 {
            dv[i] = dv[i - 1] + 2;
        }
        let mut pv = vec![7i64; 150];
        for i in [3usize, 40, 41, 100, 149] {
            pv[i] = 5_000_000 + i as i64;
        }
        // A DFORS column of one repeated delta packs its deltas at width 0 (the check sums
        // its blocks in closed form).
        let cv: Vec<i64> = (0..300).map(|i| 10 + i * 3).collect();
        for (v, c) in [(dv, codec::DFORS), (pv, codec::PFOR), (cv, codec::DFORS)] {
            let mut b = Vec::new();
            if c == codec::DFORS {
                put_dfors(&mut b, &v);
            } else {
                put_pfor(&mut b, &v);
            }
            // What `Base::open` does with a column: parse, count against its table, check.
            let open = |b: &[u8]| {
                Col::parse(b, 0, b.len(), c)
                    .and_then(|col| match col.len() == v.len() {
                        true => Ok(col),
                        false => Err("count".into()),
                    })
                    .and_then(|col| col.check_codec(b).map(|_| col))
            };
            assert!(open(&b).is_ok());
            for at in 0..b.len() {
                for bit in 0..8 {
                    let mut bad = b.clone();
                    bad[at] ^= 1 << bit;
                    let full = seg::decode_int(&bad, c, v.len());
                    match (open(&bad), full) {
                        (Ok(col), Ok(want)) => {
                            let got: Vec<i64> = (0..v.len()).map(|i| col.get(&bad, i)).collect();
                            assert_eq!(got, want, "codec {c} byte {at} bit {bit}: get");
                            assert_eq!(col.range(&bad, 0, v.len()), want, "range");
                        }
                        (Err(_), Err(_)) => {}
                        (o, f) => panic!(
                            "codec {c} byte {at} bit {bit}: open {:?}, full decoder {:?}",
                            o.map(|_| ()),
                            f.map(|_| ())
                        ),
                    }
                }
            }
        }
    }

    /// End to end: a store whose compacted image is forged, with the chunk crcs, the file
    /// length and the BLAKE3 digest in the manifest recomputed so that no checksum layer
    /// notices. The store's open refuses it and `check` reports it, both naming the chunk
    /// and the value (the open used to read from it).
    #[test]
    fn a_store_with_a_forged_image_and_matching_digests_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut s = manual_store(&dir);
        let mut r = Rng::new(77);
        for k in 0..40 {
            let ops: Vec<Op> = (0..2).map(|_| Op::from_json(&random_op(&mut r))).collect();
            let _ = s.write_at(1000 + k, ops);
        }
        s.compact().unwrap();
        drop(s);
        let bytes = seg::only_segment(&dir);
        let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
        let forged = forge(&bytes, chunk::ROWS_EDGE + chunk::IDENT, |v| {
            v[0] = m.idents as i64 + 3
        });
        let (mut entries, _) = crate::format::manifest::read(&dir.join("MANIFEST")).unwrap();
        let path = dir.join(crate::format::manifest::seg_name(entries[0].seq));
        std::fs::write(&path, &forged).unwrap();
        entries[0].file_len = forged.len() as u64;
        entries[0].blake3 = *blake3::hash(&forged).as_bytes();
        crate::format::manifest::write_fresh(&dir, &entries, true).unwrap();
        // The store's open refuses it, naming the chunk, the index and the value…
        let want = format!("chunk 32: value {} at index 0", m.idents + 3);
        match crate::store::Store::open(&dir) {
            Err(crate::Error::Corruption { kind, .. }) => assert!(kind.to_string().contains(&want)),
            other => panic!("a forged image opened: {:?}", other.map(|_| ())),
        }
        // …and `check` reports it.
        let report = crate::store::check(&dir).unwrap();
        let found = format!("{:?}", report.problems);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.kind.to_string().contains(&want)),
            "{found}"
        );
    }

    /// Manual measurement: `TGMS_BASE_SEG=path cargo test --release -p tgms-engine --lib
    /// base_open_timing -- --ignored --nocapture` opens a compacted segment as a base and
    /// times the open (mapped), a decode + load_seg of the same file, and point lookups.
    #[test]
    #[ignore]
    fn base_open_timing() {
        let Ok(p) = std::env::var("TGMS_BASE_SEG") else {
            return;
        };
        let path = std::path::Path::new(&p);
        let t = std::time::Instant::now();
        let bytes = SegBytes::open(path, crate::format::mmap::IoMode::Mmap).unwrap();
        let crc_only = {
            let t = std::time::Instant::now();
            seg::read_dir(bytes.bytes()).unwrap();
            t.elapsed()
        };
        let base = Base::open(bytes).unwrap();
        let open = t.elapsed();
        let m = base.marks();
        // The structural checks alone (part of `open` above), run again a few times.
        let structure: Vec<_> = (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                base.check_structure(&|id, w| (u64::from(id), w)).unwrap();
                t.elapsed()
            })
            .collect();
        eprintln!("structure checks, 5 runs: {structure:?}");
        let t = std::time::Instant::now();
        let mut hits = 0usize;
        for k in 0..10_000u32 {
            let u = (k as u64 * 7919 % m.uids.max(1)) as u32;
            hits += base.uid_id(base.uid_name(u)).is_some() as usize;
            hits += base.out_adj(u).len() + base.node_postings(u).len();
            let r = (k as u64 * 104_729 % m.edges.max(1)) as u32;
            hits += base.row(1, r).alive as usize;
        }
        let lookups = t.elapsed();
        let time = |what: &str, f: &dyn Fn(u32) -> usize| {
            let t = std::time::Instant::now();
            let n: usize = (0..10_000u32).map(f).sum();
            eprintln!("  10k × {what}: {:?} ({n})", t.elapsed());
        };
        let uid = |k: u32| (k as u64 * 7919 % m.uids.max(1)) as u32;
        let row = |k: u32| (k as u64 * 104_729 % m.edges.max(1)) as u32;
        time("uid_name", &|k| base.uid_name(uid(k)).len());
        time("uid_id", &|k| {
            base.uid_id(base.uid_name(uid(k))).is_some() as usize
        });
        time("out_adj", &|k| base.out_adj(uid(k)).len());
        time("node_postings", &|k| base.node_postings(uid(k)).len());
        time("edge_row", &|k| base.row(1, row(k)).alive as usize);
        time("ident", &|k| base.ident(row(k)).src as usize);
        let t = std::time::Instant::now();
        let all = std::fs::read(path).unwrap();
        let (_, d) = seg::decode(&all).unwrap();
        let mut st = State::default();
        st.load_seg(d).unwrap();
        let full = t.elapsed();
        let (seq, d) = seg::decode(&all).unwrap();
        let plain = seg::encode(seq, &d, &|_| 0, false).0.len();
        let dir = seg::read_dir(&all).unwrap();
        let index_bytes: usize = dir
            .layout
            .iter()
            .zip(&dir.lens)
            .filter(|((id, _), _)| *id >= chunk::UID_OFFS)
            .map(|(_, l)| l)
            .sum();
        eprintln!(
            "file {} bytes, index chunks {index_bytes} bytes ({:.2} per edge row); the same \
             image as minor 1: {plain} bytes",
            all.len(),
            index_bytes as f64 / m.edges.max(1) as f64
        );
        eprintln!(
            "{m:?}\nBase::open {open:?} (crc pass {crc_only:?}); 10k × (uid name+id, out_adj, \
             node postings, edge row) {lookups:?} ({hits}); decode+load_seg {full:?}"
        );
    }

    /// An image directory naming codec 4 (DFOR) is refused; so is a minor-1 directory
    /// naming codec 5 or 6, an image header with non-zero base marks, an unknown minor, an
    /// image directory under the flush minor 5, and a minor-3 `tt_s` chunk that is not runs;
    /// a minor-4 image whose rows are out of segment order fails `verify` (S9).
    #[test]
    fn codec_and_minor_rules_of_the_directory() {
        let bytes = random_compacted(11, 40);
        let dir = seg::read_dir(&bytes).unwrap();
        let k = dir.codecs.iter().position(|&c| c == codec::DFORS).unwrap();
        let err = |b: &[u8]| seg::decode(b).err().expect("refused").1.to_string();
        let recrc = |b: &mut Vec<u8>| {
            let h = crc32fast::hash(&b[..80]);
            b[80..84].copy_from_slice(&h.to_le_bytes());
        };
        let b = with_codec(&bytes, k, codec::DFOR);
        assert!(err(&b).contains("inconsistent"), "{}", err(&b));
        assert!(Base::open(SegBytes::Heap(b)).is_err());
        let mut b = bytes.clone();
        b[24] = 1; // base uids = 1
        recrc(&mut b);
        assert!(err(&b).contains("full image"), "{}", err(&b));
        assert!(Base::open(SegBytes::Heap(b)).is_err());
        let mut b = bytes.clone();
        b[10] = 6; // minor 6
        recrc(&mut b);
        assert!(err(&b).contains("not supported"), "{}", err(&b));
        // An image's directory is not a flush segment's (minor 5: no index chunks).
        let mut b = bytes.clone();
        b[10] = 5;
        recrc(&mut b);
        assert!(err(&b).contains("chunks of segment minor 5"), "{}", err(&b));
        // `tt_s` may be an integer column in a minor-4 image, never in a minor-3 one.
        let (seq, d) = seg::decode(&bytes).unwrap();
        let b3 = seg::encode_as(seq, &d, &|_| 0, SEG_MINOR_TIME_INDEX).0;
        let dir3 = seg::read_dir(&b3).unwrap();
        let k = dir3.layout.iter().position(|c| c.0 == 36).unwrap();
        assert_eq!(dir3.codecs[k], codec::RUNS);
        let b = with_codec(&b3, k, codec::PFOR);
        assert!(err(&b).contains("inconsistent"), "{}", err(&b));
        // Rows out of segment order: a minor-4 image fails S9, the same rows as minor 3 pass.
        let mut d = d;
        let i = (1..d.edges.len())
            .find(|&i| d.edges[i].vt_s != d.edges[i - 1].vt_s)
            .unwrap();
        d.edges.swap(i - 1, i);
        let (a, z) = (i as u32 - 1, i as u32);
        for c in &mut d.closes[1] {
            c.row = if c.row == a {
                z
            } else if c.row == z {
                a
            } else {
                c.row
            };
        }
        d.closes[1].sort_by_key(|c| c.row);
        seg::verify(&seg::encode_as(seq, &d, &|_| 0, SEG_MINOR_TIME_INDEX).0).unwrap();
        let e = seg::verify(&seg::encode_as(seq, &d, &|_| 0, seg::SEG_MINOR_SORTED).0)
            .unwrap_err()
            .1
            .to_string();
        assert!(
            e.contains("invariant S9") && e.contains(&format!("row {i} ")),
            "{e}"
        );
        // A minor-1 file with a codec-5 directory entry.
        let (seq, d) = seg::decode(&bytes).unwrap();
        let plain = seg::encode(seq, &d, &|_| 0, false).0;
        assert!(seg::decode(&plain).is_ok());
        let pdir = seg::read_dir(&plain).unwrap();
        let k = pdir
            .layout
            .iter()
            .position(|&(_, c)| c == codec::FOR)
            .unwrap();
        let b = with_codec(&plain, k, codec::DFORS);
        assert!(err(&b).contains("inconsistent"), "{}", err(&b));
        // Nor codec 6 (PFOR) in a minor-1 file.
        let b = with_codec(&plain, k, codec::PFOR);
        assert!(err(&b).contains("inconsistent"), "{}", err(&b));
    }

    /// `bytes` with directory entry `k` naming codec `c` (footer crc recomputed).
    fn with_codec(bytes: &[u8], k: usize, c: u8) -> Vec<u8> {
        let t = bytes.len() - seg::SEG_TRAILER_LEN;
        let f_off = u64::from_le_bytes(bytes[t..t + 8].try_into().unwrap()) as usize;
        let mut b = bytes.to_vec();
        b[f_off + 4 + seg::DIR_ENTRY_LEN * k + 2] = c;
        let crc = crc32fast::hash(&b[f_off..t]);
        b[t + 16..t + 20].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Re-encodes `bytes` with index chunk `id`'s values (or set, for a closed-row set)
    /// changed by `f` (crcs recomputed).
    fn forge(bytes: &[u8], id: u16, f: impl Fn(&mut Vec<i64>)) -> Vec<u8> {
        let dir = seg::read_dir(bytes).unwrap();
        let mut out = bytes[..seg::SEG_HEADER_LEN].to_vec();
        let mut entries = Vec::new();
        for (k, &(cid, _)) in dir.layout.iter().enumerate() {
            let (o, l) = (dir.offsets[k] as usize, dir.lens[k]);
            let mut body = bytes[o..o + l].to_vec();
            let mut c = dir.codecs[k];
            if cid == id && c == codec::ROARING {
                let mut v: Vec<i64> = crate::format::bitmap::values(&body)
                    .unwrap()
                    .into_iter()
                    .map(i64::from)
                    .collect();
                f(&mut v);
                body = crate::format::bitmap::serialize(v.into_iter().map(|x| x as u32));
            } else if cid == id {
                let n = u32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
                let mut v = seg::decode_int(&body, c, n).unwrap();
                f(&mut v);
                body.clear();
                c = seg::put_int_ra(&mut body, &v);
            }
            entries.push((
                cid,
                c,
                out.len() as u64,
                body.len() as u32,
                crc32fast::hash(&body),
            ));
            out.extend_from_slice(&body);
        }
        let f_off = out.len() as u64;
        let mut footer = (entries.len() as u32).to_le_bytes().to_vec();
        for (cid, c, o, l, crc) in entries {
            footer.extend_from_slice(&cid.to_le_bytes());
            footer.extend_from_slice(&[c, 0]);
            footer.extend_from_slice(&o.to_le_bytes());
            footer.extend_from_slice(&l.to_le_bytes());
            footer.extend_from_slice(&crc.to_le_bytes());
            footer.extend_from_slice(&0u32.to_le_bytes());
        }
        out.extend_from_slice(&footer);
        out.extend_from_slice(&f_off.to_le_bytes());
        out.extend_from_slice(&(footer.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&footer).to_le_bytes());
        out.extend_from_slice(seg::SEG_TRAILER_MAGIC);
        out
    }
}

#[cfg(test)]
mod structure_timing {
    /// Manual measurement: `TGMS_BASE_SEG=path TGMS_RUNS=n cargo test --release -p
    /// tgms-engine --lib structure_timing -- --ignored --nocapture` opens a compacted image
    /// and runs its structural pass `n` more times (CPU time: `perf stat`).
    #[test]
    #[ignore]
    fn structure_timing() {
        use super::*;
        let Ok(p) = std::env::var("TGMS_BASE_SEG") else {
            return;
        };
        let runs: usize = std::env::var("TGMS_RUNS").map_or(5, |v| v.parse().unwrap());
        let bytes =
            SegBytes::open(std::path::Path::new(&p), crate::format::mmap::IoMode::Mmap).unwrap();
        let base = Base::open(bytes).unwrap();
        let t = std::time::Instant::now();
        for _ in 0..runs {
            base.check_structure(&|id, w| (u64::from(id), w)).unwrap();
        }
        eprintln!("{runs} structural passes: {:?}", t.elapsed());
    }
}
