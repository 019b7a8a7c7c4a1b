//! [`Base::open`]: a full image's header, trailer, footer, checksums and column headers
//! verified and indexed, then its structure checked (`structure.rs`); and
//! [`open_image`], which opens an image that way and reads every row through it.

use super::*;

impl Base {
    /// Verifies and indexes a minor-2, 3, 4 or 6 full-image segment (see the module doc), then
    /// runs the structural checks of [`structure`] over every value, on all cores. Errors
    /// are `(file offset, what)` like [`seg::decode`]'s. Every open of an image goes this
    /// way (a store's mapped open, `tgms check`, the fuzz targets), so no read meets a value
    /// a writer could not have written; a store's open of an image that passed them before
    /// (its check record, `format/checked.rs`) takes [`Base::open_checked_before`].
    pub(crate) fn open(bytes: SegBytes) -> Result<Base, SegErr> {
        Self::open_with(bytes, true)
    }

    /// [`Base::open`] of bytes that passed its checks before: the caller checked that
    /// they are, byte for byte, an image an earlier [`Base::open`] accepted (their BLAKE3
    /// digest is the one of a check record, `format/checked.rs`). The header, trailer,
    /// footer, directory and column headers are read and checked as by [`Base::open`]; the
    /// chunk crcs and the structural checks, functions of the same bytes, are not run again.
    pub(crate) fn open_checked_before(bytes: SegBytes) -> Result<Base, SegErr> {
        Self::open_with(bytes, false)
    }

    fn open_with(bytes: SegBytes, full_checks: bool) -> Result<Base, SegErr> {
        use chunk::*;
        let b = bytes.bytes();
        // Without the checks the open reads only headers, scattered over the file: no
        // readahead around them (`SegBytes::read_at_random`) until the store's open is done
        // (`Base::read_at_random`).
        bytes.read_at_random(!full_checks);
        // The checksum pass reads every chunk; the pages it is done with are released as it
        // goes (reads fault back in what they touch), so an open never holds the whole file.
        let mut released = 0;
        let dir = seg::read_dir_with(b, full_checks, &mut |end| {
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
        // The layout of the minor was checked: every chunk named here has its entry (a
        // missing one reads as an empty span, which its decoder refuses).
        let offset = |id: u16| dir.offsets.get(pos(id)).copied().unwrap_or(0);
        let codec = |id: u16| dir.codecs.get(pos(id)).copied().unwrap_or(0);
        let span = |id: u16| {
            let at = offset(id) as usize;
            (
                at,
                at + dir.lens.get(pos(id)).copied().unwrap_or(0),
                codec(id),
            )
        };
        let err = |id: u16, what: CorruptionKind| (offset(id), what.in_chunk(id));
        // An integer column of chunk `id` holding `want` values (None: any count).
        let col = |id: u16, want: Option<usize>| -> Result<Col, SegErr> {
            let (at, end, c) = span(id);
            let entries = match full_checks {
                true => col::Entries::Check,
                false => col::Entries::Trust,
            };
            let col = Col::parse_with(b, at, end, c, entries).map_err(|k| err(id, k))?;
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
            let offs = col(offs_id, Some(n + 1))?;
            if full_checks {
                // Reads check each string they read again (`heap.rs`): an open of bytes
                // checked before skips this pass over the whole heap.
                let text = b
                    .get(data..end)
                    .and_then(|s| std::str::from_utf8(s).ok())
                    .ok_or_else(|| err(id, "string heap is not UTF-8".into()))?;
                check_heap_offsets(b, &lens, &offs, text, n).map_err(|k| err(offs_id, k))?;
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
        let mut rows: PerTable<Rows> = Default::default();
        for k in Table::BOTH {
            let g = row_columns(k);
            let id_col = col(g + IDENT, None)?;
            let n = id_col.len();
            let tt_s = if codec(g + TT_S) == codec::RUNS {
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
        let (nn, ne) = (rows[Table::Nodes].n, rows[Table::Edges].n);
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
            let mut t: PerTable<TimeIndex> = Default::default();
            for (k, (s, e)) in Table::BOTH.into_iter().zip([
                (NODE_BY_START, NODE_LONG_BY_END),
                (EDGE_BY_START, EDGE_LONG_BY_END),
            ]) {
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
            for k in Table::BOTH {
                let id = closed_rows(k);
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
        if full_checks {
            base.check_structure(&err)?;
        }
        Ok(base)
    }
}

/// The heap offsets `offs` (of `n` strings of `text`) are valid (from 0, monotone, on
/// character boundaries, ending at the heap's end) and agree with the heap's own length
/// column `lens` (what the decoding path reads; the accessors read the offsets).
fn check_heap_offsets(
    b: &[u8],
    lens: &ForCol,
    offs: &Col,
    text: &str,
    n: usize,
) -> Result<(), CorruptionKind> {
    let mut prev = 0i64;
    let mut len_of = Vec::with_capacity(n.min(1 << 16));
    for (i, o) in offs.range(b, 0, n + 1).into_iter().enumerate() {
        let ok = (i > 0 || o == 0)
            && o >= prev
            && usize::try_from(o).is_ok_and(|o| text.is_char_boundary(o));
        if !ok {
            return Err(format!("heap offset {i} is not valid").into());
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
                return Err(format!(
                    "string {} is {} bytes by its offsets, {len} by the heap",
                    i - 1,
                    o - prev
                )
                .into());
            }
        }
        prev = o;
    }
    if prev as usize != text.len() {
        return Err("heap offsets do not end at the heap's end".into());
    }
    Ok(())
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
    let nruns = u32_at(b, at) as usize;
    if nruns > n || (nruns as u128) * 12 != (end - at - 4) as u128 {
        return Err("run count does not match the chunk".into());
    }
    let mut runs = Vec::with_capacity(nruns);
    let mut row = 0usize;
    for r in 0..nruns {
        let p = at + 4 + 12 * r;
        let (v, len) = (i64_at(b, p), u32_at(b, p + 8) as usize);
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

/// Opens a full image the way a store's mapped open does (checksums, directory, column
/// headers, then the structural checks of `base/structure.rs`) and reads every row, content
/// and identity through it: `Err((file offset, what))` on the first problem. Fuzz targets
/// hold it to [`seg::decode_structure`]: what it accepts, the decoding path accepts too.
pub fn open_image(b: &[u8]) -> Result<(), SegErr> {
    let base = Base::open(SegBytes::Heap(b.to_vec()))?;
    for k in crate::model::Table::BOTH {
        for r in 0..base.n_rows(k) as u32 {
            let row = base.row(k, r);
            let _ = base.content(row.content);
            if k == Table::Edges {
                let _ = base.ident(row.ident);
            }
        }
    }
    Ok(())
}
