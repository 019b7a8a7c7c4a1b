//! Structural checks of a mapped base image, run once by [`Base::open`] after the
//! checksums: every id a column holds names an entry of the dictionary or table it refers
//! to, flags and kinds lie in their domains, times are legal, offsets are monotone and
//! close rows strictly ascending, and the redundant parts of the DFORS and PFOR codecs
//! (skip values, exception starts) agree with the values. These are the invariants the
//! decoding path checks row by row (`seg::decode` and `SegData::check_at`); with them checked
//! at open, no accessor meets an out-of-range value in an image that opened, so a file
//! whose checksums and digest hold but whose values a writer could not have written is
//! refused with a named corruption error instead of answering with defaults.
//!
//! Not checked here (O(rows) with random access, left to `tgms check`, which decodes the
//! image and compares every index chunk with what the rows imply, invariants S8 and S9):
//! that the heaps hold no duplicate and their orders sort them, that postings and
//! adjacency lists name exactly the rows of their key, and the rows' segment order.

use super::{Arith, Base, Col, Exc, ForCol};
use crate::error::CorruptionKind;
use crate::format::seg::{chunk, SegErr, DFORS_STRIDE};
use crate::model::{Table, NONE};
use crate::time::OPEN_END;

/// Rows read per block by the checks that pair two columns.
const BLOCK_ROWS: usize = 1 << 16;

impl Exc {
    /// The exception starts count, per block of [`DFORS_STRIDE`] slots, the exceptions
    /// whose index lies below the block's first slot (what `first` relies on).
    fn check_starts(&self, b: &[u8]) -> Result<(), CorruptionKind> {
        let mut k = 0usize;
        for block in 0..self.starts.n {
            let first = block * DFORS_STRIDE;
            while k < self.n && self.entry(b, k).0 < first {
                k += 1;
            }
            let got = self.starts.get(b, block);
            if got != k as i64 {
                return Err(format!(
                    "exception start of block {block} is {got}, {k} exceptions lie below it"
                )
                .into());
            }
        }
        Ok(())
    }
}

/// Values per group of the fast bounds pass: 64 values of `w` bits fill exactly `w`
/// 64-bit words, so every group starts on a word of the packed body.
const GROUP: usize = 64;

/// Calls `f` with the raw packed values of each whole group in `bytes` (`8 × W` bytes
/// per group), unpacked a group at a time into a buffer the compiler vectorises.
#[inline(always)]
fn for_each_group<const W: usize>(bytes: &[u8], f: &mut impl FnMut(&[u64; GROUP])) {
    let mask = if W == 64 { u64::MAX } else { (1u64 << W) - 1 };
    for group in bytes.chunks_exact(8 * W) {
        let mut words = [0u64; W];
        for (w, c) in words.iter_mut().zip(group.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(c);
            *w = u64::from_le_bytes(le);
        }
        let mut vals = [0u64; GROUP];
        // `i = j·W/64 < W` for `j < GROUP = 64`, and `i + 1 < W` when the value straddles
        // two words (`s + W > 64`): in bounds, and indexed so that the loop vectorises.
        #[allow(clippy::indexing_slicing)]
        for (j, v) in vals.iter_mut().enumerate() {
            let (i, s) = (j * W / 64, j * W % 64);
            let mut x = words[i] >> s;
            if s + W > 64 {
                x |= words[i + 1] << (64 - s);
            }
            *v = x & mask;
        }
        f(&vals);
    }
}

impl ForCol {
    /// Calls `f` with the raw packed values of groups `g0..g1` of [`GROUP`] values
    /// (`false` when the body does not hold them: the caller reads value by value).
    fn for_each_group(
        &self,
        b: &[u8],
        g0: usize,
        g1: usize,
        mut f: impl FnMut(&[u64; GROUP]),
    ) -> bool {
        let w = self.width as usize;
        if w == 0 {
            (g0..g1).for_each(|_| f(&[0; GROUP]));
            return true;
        }
        let Some(bytes) = b.get(self.bits + 8 * w * g0..self.bits + 8 * w * g1) else {
            return false;
        };
        macro_rules! widths {
            ($($n:literal)*) => {
                match w {
                    $($n => for_each_group::<$n>(bytes, &mut f),)*
                    _ => return false,
                }
            };
        }
        widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
            30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57
            58 59 60 61 62 63 64);
        true
    }

    /// Min and max of the raw packed values `a..e` (`(u64::MAX, 0)` when empty): whole
    /// groups of [`GROUP`] values a group at a time, the ends value by value.
    fn packed_bounds(&self, b: &[u8], a: usize, e: usize) -> (u64, u64) {
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        let (g0, g1) = (a.div_ceil(GROUP), e / GROUP);
        let grouped = g0 < g1
            && self.for_each_group(b, g0, g1, |vals| {
                let (mut glo, mut ghi) = (lo, hi);
                for &x in vals {
                    glo = glo.min(x);
                    ghi = ghi.max(x);
                }
                (lo, hi) = (glo, ghi);
            });
        let mut each = |a: usize, e: usize| {
            self.for_each_packed(b, a, e, |x| {
                lo = lo.min(x);
                hi = hi.max(x);
            })
        };
        if grouped {
            each(a, g0 * GROUP);
            each(g1 * GROUP, e);
        } else {
            each(a, e);
        }
        (lo, hi)
    }
}

impl super::Dfors {
    /// Bounds `(lo, hi)` of the values (`n ≥ 1`), after checking every skip value against
    /// the running sum of the deltas (exception slots pack 0), wrapping as every reader of
    /// the column sums. Whole groups of [`GROUP`] deltas are unpacked at once and summed a
    /// [`DFORS_STRIDE`] block at a time; the rest value by value.
    fn bounds(&self, b: &[u8]) -> Result<(i128, i128), CorruptionKind> {
        const _: () = assert!(GROUP.is_multiple_of(DFORS_STRIDE));
        let nd = self.n - 1;
        let min = self.deltas.min as u64;
        let mut v = self.skip.get(b, 0);
        let (mut lo, mut hi) = (v, v);
        let (mut k, mut next) = (0usize, self.exc.entry_or_end(b, 0));
        let mut bad_skip = None;
        let mut check = |j: usize, v: i64| {
            if j.is_multiple_of(DFORS_STRIDE)
                && bad_skip.is_none()
                && self.skip.get(b, j / DFORS_STRIDE) != v
            {
                bad_skip = Some(j / DFORS_STRIDE);
            }
        };
        let mut j = 0usize;
        let groups = nd / GROUP;
        let constant = self.deltas.width == 0;
        let grouped = groups > 0
            && self.deltas.for_each_group(b, 0, groups, |vals| {
                for block in vals.chunks_exact(DFORS_STRIDE) {
                    let end = j + DFORS_STRIDE;
                    if constant && next.0 >= end {
                        // Every delta is `min`: the values move in one direction, so the
                        // block's first and last values bound it.
                        let step = min as i64 as i128;
                        let first = v as i128 + step;
                        let last = v as i128 + step * DFORS_STRIDE as i128;
                        let range = i64::MIN as i128..=i64::MAX as i128;
                        // No wrap: the intermediate values lie between the two ends.
                        if range.contains(&first) && range.contains(&last) {
                            let (first, last) = (first as i64, last as i64);
                            (lo, hi) = (lo.min(first.min(last)), hi.max(first.max(last)));
                            v = last;
                            j = end;
                            check(j, v);
                            continue;
                        }
                    }
                    let mut deltas = [0i64; DFORS_STRIDE];
                    for (d, &x) in deltas.iter_mut().zip(block) {
                        *d = min.wrapping_add(x) as i64;
                    }
                    while next.0 < end {
                        // Indexes ascend (checked when the list is parsed), so `next.0 ≥ j`.
                        if let Some(d) = next.0.checked_sub(j).and_then(|i| deltas.get_mut(i)) {
                            *d = next.1;
                        }
                        k += 1;
                        next = self.exc.entry_or_end(b, k);
                    }
                    // Locals, so the sum and bounds stay in registers.
                    let (mut bv, mut blo, mut bhi) = (v, lo, hi);
                    for d in deltas {
                        bv = bv.wrapping_add(d);
                        blo = blo.min(bv);
                        bhi = bhi.max(bv);
                    }
                    (v, lo, hi) = (bv, blo, bhi);
                    j = end;
                    check(j, v);
                }
            });
        if !grouped {
            j = 0;
        }
        self.deltas.for_each_packed(b, j, nd, |x| {
            let delta = if j == next.0 {
                k += 1;
                let e = next.1;
                next = self.exc.entry_or_end(b, k);
                e
            } else {
                min.wrapping_add(x) as i64
            };
            v = v.wrapping_add(delta);
            lo = lo.min(v);
            hi = hi.max(v);
            j += 1;
            check(j, v);
        });
        match bad_skip {
            Some(block) => Err(format!(
                "skip value of block {block} differs from the sum of the deltas"
            )
            .into()),
            None => Ok((lo as i128, hi as i128)),
        }
    }
}

/// The largest value a FOR frame can hold (as i128: `min + 2^width − 1` may pass i64).
fn frame_max(f: &ForCol) -> i128 {
    f.min as i128 + ((1i128 << f.width) - 1)
}

impl Arith {
    /// The exact values (as i128, without the mod 2^64) at the ends of each piece — the
    /// rows from one break to the next — in order; `None` when an end lies outside the i64
    /// range (a value wraps). Each piece is a line, so its values lie between its ends.
    fn pieces(&self, b: &[u8]) -> Option<Vec<(i128, i128)>> {
        let range = i128::from(i64::MIN)..=i128::from(i64::MAX);
        let line = |i: usize, off: i64| {
            i128::from(self.first) + i128::from(self.step) * i as i128 + i128::from(off)
        };
        let mut out = Vec::with_capacity(self.n_brk + 1);
        let (mut start, mut off) = (0usize, 0i64);
        for k in 0..=self.n_brk {
            let (end, next_off) = if k < self.n_brk {
                self.brk(b, k)
            } else {
                (self.n, 0)
            };
            if end > start {
                let ends = (line(start, off), line(end - 1, off));
                if !range.contains(&ends.0) || !range.contains(&ends.1) {
                    return None;
                }
                out.push(ends);
            }
            (start, off) = (end, next_off);
        }
        Some(out)
    }

    /// The values' smallest and largest, from the pieces' ends, when no value wraps;
    /// `Some(None)` for no values.
    fn exact_bounds(&self, b: &[u8]) -> Option<Option<(i128, i128)>> {
        let pieces = self.pieces(b)?;
        Some(
            pieces
                .into_iter()
                .map(|(x, y)| (x.min(y), x.max(y)))
                .reduce(|(a, z), (l, h)| (a.min(l), z.max(h))),
        )
    }

    /// True when the values never decrease, shown by the pieces alone: a step ≥ 0, each
    /// piece starting at or above where the previous ended, and no value wrapping.
    fn rising(&self, b: &[u8]) -> bool {
        self.step >= 0
            && self
                .pieces(b)
                .is_some_and(|p| p.iter().zip(p.iter().skip(1)).all(|(a, z)| z.0 >= a.1))
    }
}

impl Col {
    /// Calls `f(i, value)` for every value in order (stopping at its first error), after
    /// checking the codec's redundancy: a DFORS column's skip values equal the running sums
    /// and a DFORS or PFOR column's exception starts count its exceptions, so random
    /// access (`get`) and sequential reads (`range`) give the same values.
    fn scan(
        &self,
        b: &[u8],
        mut f: impl FnMut(usize, i64) -> Result<(), CorruptionKind>,
    ) -> Result<(), CorruptionKind> {
        let mut first_err = None;
        let mut i = 0usize;
        let mut call = |v: i64, err: &mut Option<CorruptionKind>| {
            if err.is_none() {
                if let Err(e) = f(i, v) {
                    *err = Some(e);
                }
            }
            i += 1;
        };
        match self {
            Col::For(c) => {
                let min = c.min as u64;
                c.for_each_packed(b, 0, c.n, |x| {
                    call(min.wrapping_add(x) as i64, &mut first_err)
                });
            }
            Col::Pfor(p) => {
                p.exc.check_starts(b)?;
                let min = p.vals.min as u64;
                p.exc.merge(b, &p.vals, 0, p.vals.n, |exc, x| {
                    call(exc.unwrap_or(min.wrapping_add(x) as i64), &mut first_err)
                });
            }
            Col::Dfors(d) => {
                d.exc.check_starts(b)?;
                if d.n == 0 {
                    return Ok(());
                }
                let min = d.deltas.min as u64;
                let mut v = d.skip.get(b, 0);
                call(v, &mut first_err);
                let mut j = 1usize;
                let mut bad_skip = None;
                d.exc.merge(b, &d.deltas, 0, d.n - 1, |exc, x| {
                    v = v.wrapping_add(exc.unwrap_or(min.wrapping_add(x) as i64));
                    if j.is_multiple_of(DFORS_STRIDE)
                        && bad_skip.is_none()
                        && d.skip.get(b, j / DFORS_STRIDE) != v
                    {
                        bad_skip = Some(j);
                    }
                    j += 1;
                    call(v, &mut first_err);
                });
                if let Some(j) = bad_skip {
                    return Err(format!(
                        "skip value of block {} differs from the sum of the deltas",
                        j / DFORS_STRIDE
                    )
                    .into());
                }
            }
            Col::Arith(a) => a.for_each(b, 0, a.n, |v| call(v, &mut first_err)),
        }
        first_err.map_or(Ok(()), Err)
    }

    /// The codec's redundancy holds (see [`Col::scan`]); a FOR column has none.
    pub(super) fn check_codec(&self, b: &[u8]) -> Result<(), CorruptionKind> {
        match self {
            Col::For(_) | Col::Arith(_) => Ok(()),
            Col::Pfor(p) => p.exc.check_starts(b),
            Col::Dfors(_) => self.bounds(b).map(drop),
        }
    }

    /// Bounds `(lo, hi)` that contain every value (exact for FOR, DFORS and ARITH; a PFOR frame
    /// counts its exception slots as its `min`), after checking the codec's redundancy as
    /// [`Col::scan`] does; `None` for an empty column. One tight pass, with no per-value
    /// branch on an error: the cost of an open is this pass over the id columns.
    fn bounds(&self, b: &[u8]) -> Result<Option<(i128, i128)>, CorruptionKind> {
        let fold = |f: &ForCol, a: usize, e: usize| {
            let (lo, hi) = f.packed_bounds(b, a, e);
            (f.min as i128 + lo as i128, f.min as i128 + hi as i128)
        };
        match self {
            Col::For(f) => Ok((f.n > 0).then(|| fold(f, 0, f.n))),
            Col::Pfor(p) => {
                p.exc.check_starts(b)?;
                if p.vals.n == 0 {
                    return Ok(None);
                }
                let (mut lo, mut hi) = fold(&p.vals, 0, p.vals.n);
                for k in 0..p.exc.n {
                    let v = p.exc.entry(b, k).1 as i128;
                    (lo, hi) = (lo.min(v), hi.max(v));
                }
                Ok(Some((lo, hi)))
            }
            Col::Dfors(d) => {
                d.exc.check_starts(b)?;
                if d.n == 0 {
                    return Ok(None);
                }
                d.bounds(b).map(Some)
            }
            Col::Arith(a) => match a.exact_bounds(b) {
                Some(lh) => Ok(lh),
                // A piece that leaves the i64 range wraps: bound the stored values.
                None => {
                    let mut lh: Option<(i128, i128)> = None;
                    a.for_each(b, 0, a.n, |v| {
                        let v = i128::from(v);
                        lh = Some(lh.map_or((v, v), |(l, h)| (l.min(v), h.max(v))));
                    });
                    Ok(lh)
                }
            },
        }
    }

    /// Every value lies in `lo..=hi` (`what` names the domain); returns an upper bound of
    /// the values. A FOR column whose frame lies inside the range is not read; otherwise
    /// one tight pass bounds the values, and only a column that fails it is read again
    /// to name the first value out of range.
    fn within(&self, b: &[u8], lo: i64, hi: i64, what: &str) -> Result<i64, CorruptionKind> {
        if let Col::For(f) = self {
            if f.n == 0 {
                return Ok(lo);
            }
            if f.min >= lo && frame_max(f) <= hi as i128 {
                return Ok(frame_max(f) as i64);
            }
        }
        match self.bounds(b)? {
            None => return Ok(lo),
            Some((l, h)) if l >= lo as i128 && h <= hi as i128 => return Ok(h as i64),
            Some(_) => {}
        }
        let mut max = lo;
        self.scan(b, |i, v| {
            if !(lo..=hi).contains(&v) {
                return Err(format!("value {v} at index {i} is not {what}").into());
            }
            max = max.max(v);
            Ok(())
        })?;
        Ok(max)
    }

    /// The values never decrease and lie in `lo..=hi`. A DFORS column whose deltas and
    /// exceptions are all ≥ 0 ascends, as does an ARITH column of a step ≥ 0, so its
    /// bounds decide.
    fn ascending_within(
        &self,
        b: &[u8],
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<(), CorruptionKind> {
        let rising = match self {
            Col::Dfors(d) => d.deltas.min >= 0 && (0..d.exc.n).all(|k| d.exc.entry(b, k).1 >= 0),
            Col::Arith(a) => a.rising(b),
            Col::For(_) | Col::Pfor(_) => false,
        };
        if rising {
            match self.bounds(b)? {
                None => return Ok(()),
                Some((l, h)) if l >= lo as i128 && h <= hi as i128 => return Ok(()),
                Some(_) => {}
            }
        }
        let mut prev = lo;
        self.scan(b, |i, v| {
            if v < prev || v > hi {
                return Err(format!(
                    "value {v} at index {i} is not {what} at or after the previous {prev}"
                )
                .into());
            }
            prev = v;
            Ok(())
        })
    }
}

/// `"an id below n (the image has n name)"`, the domain of an id column.
fn id_of(n: usize, name: &str) -> String {
    format!("an id below {n} (the image has {n} {name})")
}

/// One independent check of [`Base::check_structure`].
type Task<'a> = Box<dyn Fn() -> Result<(), SegErr> + Send + Sync + 'a>;

impl Base {
    /// The checks of the module doc; `err(chunk, what)` places a problem in the file.
    /// The checks are independent tasks run on all cores; the error reported is the first
    /// in the fixed task order, so the outcome does not depend on the thread count.
    pub(super) fn check_structure(
        &self,
        err: &(dyn Fn(u16, CorruptionKind) -> SegErr + Sync),
    ) -> Result<(), SegErr> {
        use rayon::prelude::*;
        let tasks = self.structure_tasks(err);
        let outcomes: Vec<Result<(), SegErr>> = tasks.par_iter().map(|t| t()).collect();
        outcomes.into_iter().collect()
    }

    /// The checks of [`Base::check_structure`], in the order their errors are reported.
    fn structure_tasks<'a>(
        &'a self,
        err: &'a (dyn Fn(u16, CorruptionKind) -> SegErr + Sync),
    ) -> Vec<Task<'a>> {
        use chunk::*;
        let m = self.marks;
        let (nu, ns, nc, ni) = (
            m.uids as usize,
            m.strings as usize,
            m.contents as usize,
            m.idents as usize,
        );
        let max_id = |n: usize| n as i64 - 1;
        // An id column: every value names one of the `n` entries of `name`.
        let ids = move |col: &'a Col, id: u16, n: usize, name: &'static str| -> Task<'a> {
            Box::new(move || {
                col.within(self.b(), 0, max_id(n), &id_of(n, name))
                    .map(drop)
                    .map_err(|e| err(id, e))
            })
        };
        // An optional string id is stored as 0 (none) or id + 1.
        let opt_strings = move |col: &'a Col, id: u16| -> Task<'a> {
            Box::new(move || {
                let what = format!("0 or a string id + 1 up to {ns}");
                col.within(self.b(), 0, ns as i64, &what)
                    .map(drop)
                    .map_err(|e| err(id, e))
            })
        };
        // Origins and closure kinds are 1..=4 (`Origin::from_u8`).
        let kinds = move |col: &'a Col, id: u16| -> Task<'a> {
            Box::new(move || {
                col.within(self.b(), 1, 4, "an origin (1 to 4)")
                    .map(drop)
                    .map_err(|e| err(id, e))
            })
        };
        let mut tasks: Vec<Task<'a>> = Vec::new();
        for (k, col) in self.content.iter().enumerate() {
            tasks.push(ids(col, CONTENT_LABEL + k as u16, ns, "strings"));
        }
        let [src, dst, rel, tag, val] = &self.ident;
        tasks.push(ids(src, IDENT_SRC, nu, "uids"));
        tasks.push(ids(dst, IDENT_DST, nu, "uids"));
        tasks.push(ids(rel, IDENT_REL, ns, "strings"));
        tasks.push(Box::new(move || {
            let b = self.b();
            let tag_max = tag
                .within(b, 0, 3, "a disc tag (0 to 3)")
                .map_err(|e| err(IDENT_DISC_TAG, e))?;
            // A string disc (tag bit 0) names a string; an ordinal disc may hold any value.
            val.check_codec(b).map_err(|e| err(IDENT_DISC_VAL, e))?;
            if tag_max > 0 {
                for a in (0..ni).step_by(BLOCK_ROWS) {
                    let e = (a + BLOCK_ROWS).min(ni);
                    let (t, v) = (tag.range(b, a, e), val.range(b, a, e));
                    for (i, (t, v)) in t.into_iter().zip(v).enumerate() {
                        if t & 1 == 1 && !(0..ns as i64).contains(&v) {
                            let what = format!(
                                "string disc {v} of identity {} is not {}",
                                a + i,
                                id_of(ns, "strings")
                            );
                            return Err(err(IDENT_DISC_VAL, what.into()));
                        }
                    }
                }
            }
            Ok(())
        }));
        // A slot names an identity or is empty (`NONE`).
        tasks.push(Box::new(move || {
            let b = self.b();
            let what = format!("{} or empty ({NONE})", id_of(ni, "identities"));
            let no_empty = self.slots.within(b, 0, max_id(ni), &what);
            no_empty
                .or_else(|_| {
                    self.slots
                        .scan(b, |i, v| {
                            if v == i64::from(NONE) || (0..ni as i64).contains(&v) {
                                return Ok(());
                            }
                            Err(format!("value {v} at index {i} is not {what}").into())
                        })
                        .map(|_| 0)
                })
                .map(drop)
                .map_err(|e| err(SLOTS, e))
        }));
        for k in Table::BOTH {
            let g = row_columns(k);
            let t = &self.rows[k];
            let (limit, name) = match k {
                Table::Nodes => (nu, "uids"),
                Table::Edges => (ni, "identities"),
            };
            tasks.push(ids(&t.ident, g + IDENT, limit, name));
            tasks.push(ids(&t.content, g + CONTENT, nc, "contents"));
            tasks.push(opt_strings(&t.reason, g + REASON));
            tasks.push(kinds(&t.origin, g + ORIGIN));
            tasks.push(Box::new(move || {
                t.alive
                    .within(self.b(), 0, 1, "an alive flag (0 or 1)")
                    .map(drop)
                    .map_err(|e| err(g + ALIVE, e))
            }));
            // Valid time: `vt_s < vt_e`, a length of 0 is an open end, and a closed end
            // lies below the open end (`OPEN_END`).
            tasks.push(Box::new(move || self.check_valid_times(t, g, err)));
            tasks.push(Box::new(move || {
                let tt = "a transaction time (0 to the open end)";
                match &t.tt_s {
                    super::TtCol::Runs(runs) => {
                        if let Some(&(row, v)) =
                            runs.iter().find(|&&(_, v)| !(0..OPEN_END).contains(&v))
                        {
                            let what = format!("the run from row {row} holds {v}, not {tt}");
                            return Err(err(g + TT_S, what.into()));
                        }
                        Ok(())
                    }
                    super::TtCol::Col(c) => c
                        .within(self.b(), 0, OPEN_END - 1, tt)
                        .map(drop)
                        .map_err(|e| err(g + TT_S, e)),
                }
            }));
            tasks.push(Box::new(move || self.check_closures(k, g, err)));
            tasks.push(kinds(&t.close_by, g + CLOSE_BY));
            tasks.push(opt_strings(&t.close_reason, g + CLOSE_REASON));
        }
        // Heaps: offsets were checked by `Base::open` (through sequential reads; here their
        // codec's redundancy, which random reads use); orders name strings.
        for (h, offs, order, name) in [
            (&self.uids, UID_OFFS, UID_ORDER, "uids"),
            (&self.strings, STR_OFFS, STR_ORDER, "strings"),
        ] {
            tasks.push(Box::new(move || {
                h.offs.check_codec(self.b()).map_err(|e| err(offs, e))
            }));
            tasks.push(ids(&h.order, order, h.n, name));
        }
        // Postings and adjacency: offsets ascending within the values, values row numbers.
        let (nn, ne) = (self.rows[Table::Nodes].n, self.rows[Table::Edges].n);
        for (p, off, vals, rows, name) in [
            (&self.node_post, NODE_POST_OFF, NODE_POST, nn, "node rows"),
            (&self.edge_post, EDGE_POST_OFF, EDGE_POST, ne, "edge rows"),
            (&self.out_adj, OUT_OFF, OUT, ne, "edge rows"),
            (&self.in_adj, IN_OFF, IN, ne, "edge rows"),
        ] {
            tasks.push(Box::new(move || {
                let what = format!("an offset up to {}", p.vals.len());
                p.off
                    .ascending_within(self.b(), 0, p.vals.len() as i64, &what)
                    .map_err(|e| err(off, e))
            }));
            tasks.push(ids(&p.vals, vals, rows, name));
        }
        tasks.push(ids(&self.mapped, MAPPED_ORDER, ni, "identities"));
        if let Some(time) = &self.time {
            let chunks = [
                (NODE_BY_START, NODE_LONG_BY_END),
                (EDGE_BY_START, EDGE_LONG_BY_END),
            ];
            for ((k, t), (s, e)) in Table::BOTH.into_iter().zip(time.iter()).zip(chunks) {
                let name = match k {
                    Table::Nodes => "node rows",
                    Table::Edges => "edge rows",
                };
                tasks.push(ids(&t.by_start, s, self.rows[k].n, name));
                tasks.push(ids(&t.by_end, e, self.rows[k].n, name));
            }
        }
        tasks
    }

    /// Valid times of table `t` (chunk group `g`): starts below the open end, lengths ≥ 0
    /// (0 for an open end), and no closed interval that reaches the open end.
    fn check_valid_times(
        &self,
        t: &super::Rows,
        g: u16,
        err: &(dyn Fn(u16, CorruptionKind) -> SegErr + Sync),
    ) -> Result<(), SegErr> {
        use chunk::*;
        let b = self.b();
        let vt_s_max = t
            .vt_s
            .within(b, i64::MIN, OPEN_END - 1, "a start below the open end")
            .map_err(|e| err(g + VT_S, e))?;
        let len_max = t
            .vt_len
            .within(b, 0, i64::MAX, "a length (0 for an open end)")
            .map_err(|e| err(g + VT_LEN, e))?;
        if vt_s_max as i128 + len_max as i128 >= OPEN_END as i128 {
            for a in (0..t.n).step_by(BLOCK_ROWS) {
                let e = (a + BLOCK_ROWS).min(t.n);
                let (s, l) = (t.vt_s.range(b, a, e), t.vt_len.range(b, a, e));
                for (i, (s, l)) in s.into_iter().zip(l).enumerate() {
                    if l > 0 && s as i128 + l as i128 >= OPEN_END as i128 {
                        let what = format!(
                            "row {}: valid time from {s} for {l} reaches the open end",
                            a + i
                        );
                        return Err(err(g + VT_LEN, what.into()));
                    }
                }
            }
        }
        Ok(())
    }

    /// The closures of table `k` (chunk group `g`): close rows strictly ascending row
    /// numbers of the table, each closure's end legal and after its alive row's start
    /// (invariant S5), and the closed-row set (minor 4) holding exactly the close rows.
    fn check_closures(
        &self,
        k: Table,
        g: u16,
        err: &(dyn Fn(u16, CorruptionKind) -> SegErr + Sync),
    ) -> Result<(), SegErr> {
        use chunk::*;
        let b = self.b();
        let t = &self.rows[k];
        let tt = "a transaction time (0 to the open end)";
        let mut prev = -1i64;
        t.close_row
            .scan(b, |i, r| {
                if r <= prev || r >= t.n as i64 {
                    return Err(format!(
                        "close row {r} at index {i} is not a row below {} after {prev}",
                        t.n
                    )
                    .into());
                }
                prev = r;
                Ok(())
            })
            .map_err(|e| err(g + CLOSE_ROW, e))?;
        t.close_tt_e
            .within(b, 0, OPEN_END - 1, tt)
            .map_err(|e| err(g + CLOSE_TT_E, e))?;
        for a in (0..t.n_close).step_by(BLOCK_ROWS) {
            let e = (a + BLOCK_ROWS).min(t.n_close);
            let (rows, ends) = (t.close_row.range(b, a, e), t.close_tt_e.range(b, a, e));
            for (i, (r, tt_e)) in rows.into_iter().zip(ends).enumerate() {
                let r = r as u32;
                let tt_s = self.row_tt_s(k, r);
                if !self.row_alive(k, r) || tt_e <= tt_s {
                    let what = format!(
                        "closure {} at {tt_e} closes row {r}, which is not alive or \
                         starts at {tt_s}, not before (invariant S5)",
                        a + i
                    );
                    return Err(err(g + CLOSE_TT_E, what.into()));
                }
            }
        }
        if let Some(set) = t.closed {
            let id = closed_rows(k);
            t.close_row
                .scan(b, |i, r| match set.contains(b, r as u32) {
                    true => Ok(()),
                    false => Err(format!("close row {r} (closure {i}) is not in the set").into()),
                })
                .map_err(|e| err(id, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::seg::{codec, put_dfors, put_for, put_pfor};
    use proptest::prelude::*;

    /// Columns long enough for whole groups: runs of one delta (DFORS width 0), small
    /// deltas, descending stretches and random spikes (exceptions), from any start.
    fn arb_values() -> impl Strategy<Value = Vec<i64>> {
        let delta = prop_oneof![
            6 => Just(1i64),
            3 => 0..40i64,
            1 => -40..0i64,
            1 => any::<i64>(),
        ];
        let n = prop_oneof![Just(0usize), Just(1), 60..70usize, 0..3000usize];
        (any::<i64>(), any::<bool>(), n).prop_flat_map(move |(start, constant, n)| {
            let d = if constant {
                Just(3i64).boxed()
            } else {
                delta.clone().boxed()
            };
            prop::collection::vec(d, n).prop_map(move |ds| {
                let mut cur = start;
                ds.into_iter()
                    .map(|d| {
                        cur = cur.wrapping_add(d);
                        cur
                    })
                    .collect()
            })
        })
    }

    proptest! {
        /// The grouped bounds pass gives the values' min and max (exact for FOR and DFORS;
        /// a PFOR frame counts its exception slots as its `min`, so its bounds contain
        /// them), for every width the encoders choose.
        #[test]
        fn bounds_are_the_values_extremes(v in arb_values()) {
            let want = v.iter().min().zip(v.iter().max()).map(|(&l, &h)| (l as i128, h as i128));
            for (c, enc) in [
                (codec::DFORS, put_dfors as fn(&mut Vec<u8>, &[i64])),
                (codec::PFOR, put_pfor),
                (codec::FOR, put_for),
            ] {
                let mut b = vec![0xAA; 5]; // the column need not start on a word
                enc(&mut b, &v);
                let col = Col::parse(&b, 5, b.len(), c).unwrap();
                let got = col.bounds(&b).unwrap();
                if c == codec::FOR {
                    // An arithmetic column as ARITH too (minor 6).
                    let mut a = Vec::new();
                    if crate::format::seg::put_int_image(&mut a, &v, crate::format::seg::SEG_MINOR_ARITH)
                        == codec::ARITH
                    {
                        let col = Col::parse(&a, 0, a.len(), codec::ARITH).unwrap();
                        prop_assert_eq!(col.bounds(&a).unwrap(), want);
                    }
                }
                match (c, got, want) {
                    (codec::PFOR, Some((l, h)), Some((wl, wh))) => {
                        prop_assert!(l <= wl && h >= wh, "pfor {got:?} {want:?}");
                    }
                    _ => prop_assert_eq!(got, want, "codec {}", c),
                }
            }
        }
    }
}
