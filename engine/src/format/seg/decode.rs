//! The verifying decoders: the bounds-checked column reader over one chunk, the
//! segment's directory, and the decode of a whole segment into a `SegData` with its
//! checks (crcs, layout, counts, and for [`verify`] the index chunks and segment order).

use super::*;
use crate::format::le::{u16_at, u32_at, u64_at, u8_at, AtErr, Cursor};

/// The column codecs' decoders, read through the format's cursor over one chunk.
impl Cursor<'_> {
    /// A column's `u32` count, which must be `want` (the table's).
    fn count(&mut self, want: usize) -> Result<usize, AtErr> {
        let at = self.pos;
        let n = self.u32()? as usize;
        if n != want {
            return Err((
                at,
                format!("column holds {n} values, {want} expected").into(),
            ));
        }
        Ok(n)
    }

    pub(super) fn for_col(&mut self, want: usize) -> Result<Vec<i64>, AtErr> {
        let n = self.count(want)?;
        self.for_body(n)
    }

    /// A FOR body (`min | width | bits`) of `n` values.
    pub(super) fn for_body(&mut self, n: usize) -> Result<Vec<i64>, AtErr> {
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
    pub(super) fn exc_starts(&mut self, n: usize, exc: &[usize]) -> Result<(), AtErr> {
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
    pub(super) fn exc_list(&mut self, n_exc: usize, vals: &mut [i64]) -> Result<Vec<usize>, AtErr> {
        let mut exc: Vec<usize> = Vec::with_capacity(n_exc);
        for _ in 0..n_exc {
            let at = self.pos;
            let i = self.u32()? as usize;
            let d = self.i64()?;
            match vals.get_mut(i) {
                Some(v) if exc.last().is_none_or(|&p| i > p) => *v = d,
                _ => {
                    return Err((
                        at,
                        format!("exception index {i} out of order or range").into(),
                    ))
                }
            }
            exc.push(i);
        }
        Ok(exc)
    }

    /// An integer column in codec `codec` (FOR, DFOR, DFORS, PFOR or ARITH) holding `want`
    /// values.
    pub(super) fn int_col(&mut self, codec: u8, want: usize) -> Result<Vec<i64>, AtErr> {
        if codec == codec::FOR {
            return self.for_col(want);
        }
        if codec == codec::ARITH {
            return self.arith_col(want);
        }
        if codec == codec::PFOR {
            let n = self.count(want)?;
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
        let n = self.count(want)?;
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
                if out.get(k * DFORS_STRIDE) != Some(&s) {
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

    /// An ARITH column of `want` values: the line, then the break indexes (strictly
    /// ascending, below the count) and their offsets.
    fn arith_col(&mut self, want: usize) -> Result<Vec<i64>, AtErr> {
        let n = self.count(want)?;
        let (first, step) = (self.i64()?, self.i64()?);
        let n_brk = self.u32()? as usize;
        if n_brk > n {
            return Err((
                self.pos - 4,
                format!("{n_brk} breaks for {n} values").into(),
            ));
        }
        let mut breaks: Vec<usize> = Vec::with_capacity(n_brk);
        for _ in 0..n_brk {
            let at = self.pos;
            let i = self.u32()? as usize;
            if i >= n || breaks.last().is_some_and(|&p| i <= p) {
                return Err((at, format!("break index {i} out of order or range").into()));
            }
            breaks.push(i);
        }
        let mut offs = Vec::with_capacity(n_brk);
        for _ in 0..n_brk {
            offs.push(self.i64()?);
        }
        let mut next = breaks.iter().zip(offs).peekable();
        let mut off = 0i64;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            if let Some((_, o)) = next.next_if(|&(&j, _)| j == i) {
                off = o;
            }
            let line = first.wrapping_add(step.wrapping_mul(i as i64));
            out.push(line.wrapping_add(off));
        }
        Ok(out)
    }

    pub(super) fn runs(&mut self, want: usize) -> Result<Vec<i64>, AtErr> {
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

    pub(super) fn heap(&mut self, want: usize) -> Result<Vec<String>, AtErr> {
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

/// Fully decodes one integer column (FOR, DFOR, DFORS, PFOR or ARITH) of `want` values that
/// fills `b`.
#[cfg(test)]
pub(crate) fn decode_int(b: &[u8], codec: u8, want: usize) -> Result<Vec<i64>, CorruptionKind> {
    let mut r = Cursor::new(b);
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
    read_dir_with(b, true, &mut |_| {})
}

/// [`read_dir`], calling `checked(end)` after each chunk's crc check with the offset where
/// the chunk ends (the caller may release the pages before it). With `chunk_crcs` false the
/// chunk bodies' crcs are not computed (the caller checked a digest of the whole file that
/// a checked open accepted, `format/checked.rs`); the header, trailer, footer and directory
/// are checked either way.
pub(crate) fn read_dir_with(
    b: &[u8],
    chunk_crcs: bool,
    checked: &mut dyn FnMut(usize),
) -> Result<Dir, SegErr> {
    if b.len() < SEG_HEADER_LEN + SEG_TRAILER_LEN {
        return Err((
            0,
            format!("file of {} bytes is too short for a segment", b.len()).into(),
        ));
    }
    if b.get(..8) != Some(SEG_MAGIC.as_slice()) {
        let format = "segment";
        return Err((0, CorruptionKind::BadMagic { format }));
    }
    let hcrc = u32_at(b, 80);
    if crc32fast::hash(b.get(..80).unwrap_or_default()) != hcrc {
        let what = "header".into();
        return Err((80, CorruptionKind::ChecksumMismatch { what }));
    }
    if u32_at(b, 84) != 0 {
        return Err((84, "header padding is not zero".into()));
    }
    let major = u16_at(b, 8);
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
    let seq = u64_at(b, 16);
    let mut base = [0u64; 7];
    for (k, m) in base.iter_mut().enumerate() {
        *m = u64_at(b, 24 + 8 * k);
    }
    let t = b.len() - SEG_TRAILER_LEN;
    if b.get(t + 20..) != Some(SEG_TRAILER_MAGIC.as_slice()) {
        return Err((t as u64 + 20, "bad trailer magic (file truncated?)".into()));
    }
    let (f_off, f_len, f_crc) = (u64_at(b, t), u64_at(b, t + 8), u32_at(b, t + 16));
    if f_off.checked_add(f_len) != Some(t as u64) || f_off < SEG_HEADER_LEN as u64 {
        return Err((
            t as u64,
            "footer position inconsistent with file length".into(),
        ));
    }
    let footer = b.get(f_off as usize..t).unwrap_or_default();
    if crc32fast::hash(footer) != f_crc {
        let what = "footer".into();
        return Err((f_off, CorruptionKind::ChecksumMismatch { what }));
    }
    let minor = u16_at(b, MINOR_AT);
    if minor > SEG_MINOR_MAX {
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
        || u32_at(footer, 0) as usize != layout.len()
    {
        return Err((
            f_off,
            format!("chunk directory does not list the chunks of segment minor {minor}").into(),
        ));
    }
    if is_indexed(minor) && base != [0; 7] {
        return Err((
            24,
            "an indexed (minor 2, 3, 4 or 6) segment must be a full image".into(),
        ));
    }
    let mut codecs: Vec<u8> = Vec::with_capacity(layout.len());
    let mut offsets: Vec<u64> = Vec::with_capacity(layout.len());
    let mut lens: Vec<usize> = Vec::with_capacity(layout.len());
    let mut expect_off = SEG_HEADER_LEN as u64;
    let entries = footer
        .get(4..)
        .unwrap_or_default()
        .chunks_exact(DIR_ENTRY_LEN);
    for (k, (&(id, codec), e)) in layout.iter().zip(entries).enumerate() {
        let at = f_off + 4 + (DIR_ENTRY_LEN * k) as u64;
        let (eid, off, entry_codec) = (u16_at(e, 0), u64_at(e, 4), u8_at(e, 2));
        let (len, crc) = (u64::from(u32_at(e, 12)), u32_at(e, 16));
        // The integer codecs a FOR chunk may use instead: DFOR in flush segments (minors
        // 1 and 5), the random-access ones in full images (2–4, and ARITH in 6); a sorted
        // segment (4–6) may store `tt_s` (RUNS) as such an integer column too.
        let ints: &[u8] = match minor {
            0 => &[],
            1 | SEG_MINOR_FLUSH => &[codec::FOR, codec::DFOR],
            SEG_MINOR_ARITH => &[codec::FOR, codec::DFORS, codec::PFOR, codec::ARITH],
            _ => &[codec::FOR, codec::DFORS, codec::PFOR],
        };
        let codec_ok = entry_codec == codec
            || (codec == codec::FOR && ints.contains(&entry_codec))
            || (codec == codec::RUNS && is_sorted(minor) && ints.contains(&entry_codec));
        if eid != id || !codec_ok || off != expect_off || off + len > f_off {
            return Err((
                at,
                format!("directory entry {k} (chunk {eid}) is inconsistent").into(),
            ));
        }
        codecs.push(entry_codec);
        let body = b
            .get(off as usize..(off + len) as usize)
            .unwrap_or_default();
        if chunk_crcs && crc32fast::hash(body) != crc {
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

/// Value `i` of a column decoded with its table's count (`col(id, n)` refuses any other), so
/// `i` is in range; a default otherwise, never a panic.
#[inline]
fn at<T: Copy + Default>(v: &[T], i: usize) -> T {
    v.get(i).copied().unwrap_or_default()
}

pub(super) fn decode_with(b: &[u8], check_indexes: bool) -> Result<(u64, SegData), SegErr> {
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
    // Chunk `id`'s bytes, file offset and stored codec. `read_dir` checked the layout of the
    // minor and every chunk's place in the file; a missing one reads as empty.
    let chunk = |id: u16| {
        let k = layout
            .iter()
            .position(|&(c, _)| c == id)
            .unwrap_or(usize::MAX);
        let off = offsets.get(k).copied().unwrap_or(0);
        let len = lens.get(k).copied().unwrap_or(0);
        let bytes = b.get(off as usize..off as usize + len).unwrap_or_default();
        (bytes, off, codecs.get(k).copied().unwrap_or(0))
    };
    let offset = |id: u16| chunk(id).1;
    // Decode. Counts come from the directory's chunks themselves; every column of a table
    // must agree with the first.
    let count_of = |id: u16| -> Result<usize, SegErr> {
        let (c, off, _) = chunk(id);
        if layout
            .iter()
            .any(|&(x, codec)| x == id && codec == codec::RUNS)
        {
            return Err((off, "count of a runs chunk".into()));
        }
        if c.len() < 4 {
            return Err((off, "chunk too short".into()));
        }
        Ok(u32_at(c, 0) as usize)
    };
    let col = |id: u16, want: usize| -> Result<Vec<i64>, SegErr> {
        let (c, off, codec) = chunk(id);
        let mut r = Cursor::new(c);
        let v = r.int_col(codec, want).and_then(|v| r.done().map(|_| v));
        v.map_err(|(o, k)| (off + o as u64, k.in_chunk(id)))
    };
    let heap = |id: u16| -> Result<Vec<String>, SegErr> {
        let want = count_of(id)?;
        let (c, off, _) = chunk(id);
        let mut r = Cursor::new(c);
        let v = r.heap(want).and_then(|v| r.done().map(|_| v));
        v.map_err(|(o, k)| (off + o as u64, k.in_chunk(id)))
    };
    let as_u32 = |id: u16, v: Vec<i64>| -> Result<Vec<u32>, SegErr> {
        v.into_iter()
            .map(|x| {
                u32::try_from(x).map_err(|_| {
                    (
                        offset(id),
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
                    offset(id),
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
    let content_col = |id: u16| col(id, nc).and_then(|v| as_u32(id, v));
    let (label, props) = (content_col(CONTENT_LABEL)?, content_col(CONTENT_PROPS)?);
    let (source, prov) = (content_col(CONTENT_SOURCE)?, content_col(CONTENT_PROV)?);
    d.contents = (0..nc)
        .map(|i| Content {
            label: at(&label, i),
            props: at(&props, i),
            source: at(&source, i),
            provenance: at(&prov, i),
        })
        .collect();
    let ni = count_of(IDENT_SRC)?;
    let src = as_u32(IDENT_SRC, col(IDENT_SRC, ni)?)?;
    let dst = as_u32(IDENT_DST, col(IDENT_DST, ni)?)?;
    let rel = as_u32(IDENT_REL, col(IDENT_REL, ni)?)?;
    let tag = col(IDENT_DISC_TAG, ni)?;
    let val = col(IDENT_DISC_VAL, ni)?;
    for i in 0..ni {
        let (tag, val) = (at(&tag, i), at(&val, i));
        let disc = match tag & 1 {
            0 => Disc::Ordinal(val as u64),
            _ => Disc::Str(
                u32::try_from(val)
                    .map_err(|_| (offset(IDENT_DISC_VAL), "disc string id out of range".into()))?,
            ),
        };
        if tag & !3 != 0 {
            return Err((
                offset(IDENT_DISC_TAG),
                format!("unknown disc tag {tag}").into(),
            ));
        }
        d.idents.push(IdentRec {
            src: at(&src, i),
            dst: at(&dst, i),
            rel: at(&rel, i),
            disc,
            mapped: tag & 2 != 0,
        });
    }
    let ns = count_of(SLOTS)?;
    d.slots = as_u32(SLOTS, col(SLOTS, ns)?)?;
    for k in Table::BOTH {
        let g = row_columns(k);
        let n = count_of(g + IDENT)?;
        let ident = as_u32(g + IDENT, col(g + IDENT, n)?)?;
        let content = as_u32(g + CONTENT, col(g + CONTENT, n)?)?;
        let vt_s = col(g + VT_S, n)?;
        let vt_len = col(g + VT_LEN, n)?;
        let tt_s = {
            let id = g + TT_S;
            let (c, off, codec) = chunk(id);
            let mut r = Cursor::new(c);
            if codec == codec::RUNS {
                r.runs(n)
                    .and_then(|v| r.done().map(|_| v))
                    .map_err(|(o, kd)| (off + o as u64, kd.in_chunk(id)))?
            } else {
                col(id, n)?
            }
        };
        let reason = opt_u32(g + REASON, col(g + REASON, n)?)?;
        let origin = col(g + ORIGIN, n)?;
        let alive = col(g + ALIVE, n)?;
        let mut rows = Vec::with_capacity(n);
        for i in 0..n {
            let bad = |id: u16, what: &str| (offset(g + id), format!("row {i}: {what}").into());
            let (vt_s, alive) = (at(&vt_s, i), at(&alive, i));
            let vt_e = match at(&vt_len, i) {
                0 => OPEN_END,
                l if l > 0 && vt_s.checked_add(l).is_some_and(|e| e < OPEN_END) => vt_s + l,
                _ => return Err(bad(VT_LEN, "illegal valid-time length")),
            };
            let origin = u8::try_from(at(&origin, i))
                .ok()
                .and_then(Origin::from_u8)
                .ok_or_else(|| bad(ORIGIN, "unknown origin"))?;
            if !(0..=1).contains(&alive) {
                return Err(bad(ALIVE, "alive flag is not 0 or 1"));
            }
            rows.push(Row {
                ident: at(&ident, i),
                content: at(&content, i),
                vt_s,
                vt_e,
                tt_s: at(&tt_s, i),
                tt_e: OPEN_END,
                reason: at(&reason, i),
                close_reason: NONE,
                origin,
                closed_by: None,
                alive: alive == 1,
            });
        }
        let nclose = count_of(g + CLOSE_ROW)?;
        let crow = as_u32(g + CLOSE_ROW, col(g + CLOSE_ROW, nclose)?)?;
        let ctt = col(g + CLOSE_TT_E, nclose)?;
        let cby = col(g + CLOSE_BY, nclose)?;
        let creason = opt_u32(g + CLOSE_REASON, col(g + CLOSE_REASON, nclose)?)?;
        let mut closes = Vec::with_capacity(nclose);
        for i in 0..nclose {
            let closed_by = u8::try_from(at(&cby, i))
                .ok()
                .and_then(Origin::from_u8)
                .ok_or_else(|| {
                    (
                        offset(g + CLOSE_BY),
                        format!("closure {i}: unknown kind").into(),
                    )
                })?;
            let row = at(&crow, i);
            if i > 0 && row <= at(&crow, i - 1) {
                return Err((
                    offset(g + CLOSE_ROW),
                    "closure rows not strictly ascending".into(),
                ));
            }
            closes.push(Closure {
                row,
                tt_e: at(&ctt, i),
                closed_by,
                close_reason: at(&creason, i),
            });
        }
        match k {
            Table::Nodes => d.nodes = rows,
            Table::Edges => d.edges = rows,
        }
        d.closes[k] = closes;
    }
    if check_indexes && is_sorted(minor) {
        segment_order_holds(&d).map_err(|(k, row)| {
            let name = match k {
                Table::Nodes => "node",
                Table::Edges => "edge",
            };
            let g = row_columns(k);
            (
                offset(g + VT_S),
                format!("row {row} of the {name} table is out of segment order (invariant S9)")
                    .into(),
            )
        })?;
        for k in Table::BOTH {
            let id = closed_rows(k);
            let (c, off, _) = chunk(id);
            let rows = crate::format::bitmap::values(c).map_err(|e| (off, e))?;
            if !rows.iter().eq(d.closes[k].iter().map(|c| &c.row)) {
                return Err((
                    off,
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
                    offset(id),
                    format!("index chunk {id} disagrees with the rows (invariant S8)").into(),
                ));
            }
        }
    }
    Ok((seq, d))
}

/// `Err((table, row))` for the first row of a full image that sorts before its predecessor
/// in segment order `(vt_s, ident, tt_s)` (invariant S9).
pub(super) fn segment_order_holds(d: &SegData) -> Result<(), (Table, usize)> {
    for (k, rows) in Table::BOTH.into_iter().zip([&d.nodes, &d.edges]) {
        let key = |r: &crate::model::Row| (r.vt_s, r.ident, r.tt_s);
        if let Some(i) = rows
            .iter()
            .zip(rows.iter().skip(1))
            .position(|(a, b)| key(a) > key(b))
        {
            return Err((k, i + 1));
        }
    }
    Ok(())
}

/// Decodes a segment and checks what loading it into a store checks of its values (ids
/// within the dictionaries, legal times: `SegData::check_at`), without the index comparisons
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
