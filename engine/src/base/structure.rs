//! Structural checks of a mapped base image, run once by [`Base::open`] after the
//! checksums: every id a column holds names an entry of the dictionary or table it refers
//! to, flags and kinds lie in their domains, times are legal, offsets are monotone and
//! close rows strictly ascending, and the redundant parts of the DFORS and PFOR codecs
//! (skip values, exception starts) agree with the values. These are the invariants the
//! decoding path checks row by row (`seg::decode` and `State::check_at`); with them checked
//! at open, no accessor meets an out-of-range value in an image that opened, so a file
//! whose checksums and digest hold but whose values a writer could not have written is
//! refused with a named corruption error instead of answering with defaults.
//!
//! Not checked here (O(rows) with random access, left to `tgms check`, which decodes the
//! image and compares every index chunk with what the rows imply, invariants S8 and S9):
//! that the heaps hold no duplicate and their orders sort them, that postings and
//! adjacency lists name exactly the rows of their key, and the rows' segment order.

use super::{Base, Col, Exc, ForCol};
use crate::seg::{chunk, SegErr, DFORS_STRIDE};
use crate::state::NONE;
use crate::time::OPEN_END;

/// Rows read per block by the checks that pair two columns.
const BLOCK_ROWS: usize = 1 << 16;

impl Exc {
    /// The exception starts count, per block of [`DFORS_STRIDE`] slots, the exceptions
    /// whose index lies below the block's first slot (what `first` relies on).
    fn check_starts(&self, b: &[u8]) -> Result<(), String> {
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
                ));
            }
        }
        Ok(())
    }
}

/// The largest value a FOR frame can hold (as i128: `min + 2^width − 1` may pass i64).
fn frame_max(f: &ForCol) -> i128 {
    f.min as i128 + ((1i128 << f.width) - 1)
}

impl Col {
    /// Calls `f(i, value)` for every value in order (stopping at its first error), after
    /// checking the codec's redundancy: a DFORS column's skip values equal the running sums
    /// and a DFORS or PFOR column's exception starts count its exceptions, so random
    /// access (`get`) and sequential reads (`range`) give the same values.
    fn scan(
        &self,
        b: &[u8],
        mut f: impl FnMut(usize, i64) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut first_err = None;
        let mut i = 0usize;
        let mut call = |v: i64, err: &mut Option<String>| {
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
                    ));
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// The codec's redundancy holds (see [`Col::scan`]); a FOR column has none.
    pub(super) fn check_codec(&self, b: &[u8]) -> Result<(), String> {
        match self {
            Col::For(_) => Ok(()),
            Col::Pfor(p) => p.exc.check_starts(b),
            Col::Dfors(_) => self.bounds(b).map(drop),
        }
    }

    /// Bounds `(lo, hi)` that contain every value (exact for FOR and DFORS; a PFOR frame
    /// counts its exception slots as its `min`), after checking the codec's redundancy as
    /// [`Col::scan`] does; `None` for an empty column. One tight pass, with no per-value
    /// branch on an error: the cost of an open is this pass over the id columns.
    fn bounds(&self, b: &[u8]) -> Result<Option<(i128, i128)>, String> {
        let fold = |f: &ForCol, a: usize, e: usize| {
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            f.for_each_packed(b, a, e, |x| {
                lo = lo.min(x);
                hi = hi.max(x);
            });
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
                // The running sum over the deltas (exception slots pack 0), checked against
                // every skip value; wrapping as every reader of the column sums.
                let min = d.deltas.min as u64;
                let mut v = d.skip.get(b, 0);
                let (mut lo, mut hi) = (v, v);
                let (mut k, mut j) = (0usize, 0usize);
                let mut next = d.exc.entry_or_end(b, 0);
                let mut bad_skip = None;
                d.deltas.for_each_packed(b, 0, d.n - 1, |x| {
                    let delta = if j == next.0 {
                        k += 1;
                        let e = next.1;
                        next = d.exc.entry_or_end(b, k);
                        e
                    } else {
                        min.wrapping_add(x) as i64
                    };
                    v = v.wrapping_add(delta);
                    j += 1;
                    if j.is_multiple_of(DFORS_STRIDE)
                        && bad_skip.is_none()
                        && d.skip.get(b, j / DFORS_STRIDE) != v
                    {
                        bad_skip = Some(j / DFORS_STRIDE);
                    }
                    lo = lo.min(v);
                    hi = hi.max(v);
                });
                let (lo, hi) = (lo as i128, hi as i128);
                match bad_skip {
                    Some(block) => Err(format!(
                        "skip value of block {block} differs from the sum of the deltas"
                    )),
                    None => Ok(Some((lo, hi))),
                }
            }
        }
    }

    /// Every value lies in `lo..=hi` (`what` names the domain); returns an upper bound of
    /// the values. A FOR column whose frame lies inside the range is not read; otherwise
    /// one tight pass bounds the values, and only a column that fails it is read again
    /// to name the first value out of range.
    fn within(&self, b: &[u8], lo: i64, hi: i64, what: &str) -> Result<i64, String> {
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
                return Err(format!("value {v} at index {i} is not {what}"));
            }
            max = max.max(v);
            Ok(())
        })?;
        Ok(max)
    }

    /// The values never decrease and lie in `lo..=hi`. A DFORS column whose deltas and
    /// exceptions are all ≥ 0 ascends, so its bounds decide.
    fn ascending_within(&self, b: &[u8], lo: i64, hi: i64, what: &str) -> Result<(), String> {
        if let Col::Dfors(d) = self {
            let rising = d.deltas.min >= 0 && (0..d.exc.n).all(|k| d.exc.entry(b, k).1 >= 0);
            if rising {
                match self.bounds(b)? {
                    None => return Ok(()),
                    Some((l, h)) if l >= lo as i128 && h <= hi as i128 => return Ok(()),
                    Some(_) => {}
                }
            }
        }
        let mut prev = lo;
        self.scan(b, |i, v| {
            if v < prev || v > hi {
                return Err(format!(
                    "value {v} at index {i} is not {what} at or after the previous {prev}"
                ));
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

impl Base {
    /// The checks of the module doc; `err(chunk, what)` places a problem in the file.
    pub(super) fn check_structure(
        &self,
        err: &dyn Fn(u16, String) -> SegErr,
    ) -> Result<(), SegErr> {
        use chunk::*;
        let b = self.b();
        let m = self.marks;
        let (nu, ns, nc, ni) = (
            m.uids as usize,
            m.strings as usize,
            m.contents as usize,
            m.idents as usize,
        );
        let max_id = |n: usize| n as i64 - 1;
        let ids = |col: &Col, id: u16, n: usize, name: &str| {
            col.within(b, 0, max_id(n), &id_of(n, name))
                .map(drop)
                .map_err(|e| err(id, e))
        };
        // An optional string id is stored as 0 (none) or id + 1.
        let opt_strings = |col: &Col, id: u16| {
            let what = format!("0 or a string id + 1 up to {ns}");
            col.within(b, 0, ns as i64, &what)
                .map(drop)
                .map_err(|e| err(id, e))
        };
        // Origins and closure kinds are 1..=4 (`Origin::from_u8`).
        let kinds = |col: &Col, id: u16| {
            col.within(b, 1, 4, "an origin (1 to 4)")
                .map(drop)
                .map_err(|e| err(id, e))
        };
        for (k, col) in self.content.iter().enumerate() {
            ids(col, CONTENT_LABEL + k as u16, ns, "strings")?;
        }
        let [src, dst, rel, tag, val] = &self.ident;
        ids(src, IDENT_SRC, nu, "uids")?;
        ids(dst, IDENT_DST, nu, "uids")?;
        ids(rel, IDENT_REL, ns, "strings")?;
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
                        return Err(err(IDENT_DISC_VAL, what));
                    }
                }
            }
        }
        // A slot names an identity or is empty (`NONE`).
        let what = format!("{} or empty ({NONE})", id_of(ni, "identities"));
        let no_empty = self.slots.within(b, 0, max_id(ni), &what);
        no_empty
            .or_else(|_| {
                self.slots
                    .scan(b, |i, v| {
                        if v == i64::from(NONE) || (0..ni as i64).contains(&v) {
                            return Ok(());
                        }
                        Err(format!("value {v} at index {i} is not {what}"))
                    })
                    .map(|_| 0)
            })
            .map_err(|e| err(SLOTS, e))?;
        for (k, g) in [ROWS_NODE, ROWS_EDGE].into_iter().enumerate() {
            let t = &self.rows[k];
            let (limit, name) = [(nu, "uids"), (ni, "identities")][k];
            ids(&t.ident, g + IDENT, limit, name)?;
            ids(&t.content, g + CONTENT, nc, "contents")?;
            opt_strings(&t.reason, g + REASON)?;
            kinds(&t.origin, g + ORIGIN)?;
            t.alive
                .within(b, 0, 1, "an alive flag (0 or 1)")
                .map_err(|e| err(g + ALIVE, e))?;
            // Valid time: `vt_s < vt_e`, a length of 0 is an open end, and a closed end
            // lies below the open end (`OPEN_END`).
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
                            return Err(err(g + VT_LEN, what));
                        }
                    }
                }
            }
            let tt = "a transaction time (0 to the open end)";
            match &t.tt_s {
                super::TtCol::Runs(runs) => {
                    if let Some(&(row, v)) =
                        runs.iter().find(|&&(_, v)| !(0..OPEN_END).contains(&v))
                    {
                        let what = format!("the run from row {row} holds {v}, not {tt}");
                        return Err(err(g + TT_S, what));
                    }
                }
                super::TtCol::Col(c) => {
                    c.within(b, 0, OPEN_END - 1, tt)
                        .map_err(|e| err(g + TT_S, e))?;
                }
            }
            // Close rows: strictly ascending row numbers of the table; each closure's end,
            // kind and reason legal; the closed-row set (minor 4) holds exactly them.
            let mut prev = -1i64;
            t.close_row
                .scan(b, |i, r| {
                    if r <= prev || r >= t.n as i64 {
                        return Err(format!(
                            "close row {r} at index {i} is not a row below {} after {prev}",
                            t.n
                        ));
                    }
                    prev = r;
                    Ok(())
                })
                .map_err(|e| err(g + CLOSE_ROW, e))?;
            t.close_tt_e
                .within(b, 0, OPEN_END - 1, tt)
                .map_err(|e| err(g + CLOSE_TT_E, e))?;
            // S5: a closure closes an alive row after the row's start.
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
                        return Err(err(g + CLOSE_TT_E, what));
                    }
                }
            }
            kinds(&t.close_by, g + CLOSE_BY)?;
            opt_strings(&t.close_reason, g + CLOSE_REASON)?;
            if let Some(set) = t.closed {
                let id = [NODE_CLOSED, EDGE_CLOSED][k];
                t.close_row
                    .scan(b, |i, r| match set.contains(b, r as u32) {
                        true => Ok(()),
                        false => Err(format!("close row {r} (closure {i}) is not in the set")),
                    })
                    .map_err(|e| err(id, e))?;
            }
        }
        // Heaps: offsets were checked by `Base::open` (through sequential reads; here their
        // codec's redundancy, which random reads use); orders name strings.
        for (h, offs, order, name) in [
            (&self.uids, UID_OFFS, UID_ORDER, "uids"),
            (&self.strings, STR_OFFS, STR_ORDER, "strings"),
        ] {
            h.offs.check_codec(b).map_err(|e| err(offs, e))?;
            ids(&h.order, order, h.n, name)?;
        }
        // Postings and adjacency: offsets ascending within the values, values row numbers.
        let (nn, ne) = (self.rows[0].n, self.rows[1].n);
        for (p, off, vals, rows, name) in [
            (&self.node_post, NODE_POST_OFF, NODE_POST, nn, "node rows"),
            (&self.edge_post, EDGE_POST_OFF, EDGE_POST, ne, "edge rows"),
            (&self.out_adj, OUT_OFF, OUT, ne, "edge rows"),
            (&self.in_adj, IN_OFF, IN, ne, "edge rows"),
        ] {
            let what = format!("an offset up to {}", p.vals.len());
            p.off
                .ascending_within(b, 0, p.vals.len() as i64, &what)
                .map_err(|e| err(off, e))?;
            ids(&p.vals, vals, rows, name)?;
        }
        ids(&self.mapped, MAPPED_ORDER, ni, "identities")?;
        if let Some(time) = &self.time {
            let chunks = [
                (NODE_BY_START, NODE_LONG_BY_END),
                (EDGE_BY_START, EDGE_LONG_BY_END),
            ];
            for (k, (t, (s, e))) in time.iter().zip(chunks).enumerate() {
                let name = ["node rows", "edge rows"][k];
                ids(&t.by_start, s, self.rows[k].n, name)?;
                ids(&t.by_end, e, self.rows[k].n, name)?;
            }
        }
        Ok(())
    }
}
