//! The writer: the manifest's zone map of a segment, the column values of rows, contents
//! and identities, the index columns, and [`SegWriter`], which streams chunks and
//! finishes the directory, footer and trailer.
//!
//! Writers index only what they built and sized themselves (the values they encode, the
//! offsets they count); the format layer's ban on indexing guards its readers of
//! untrusted bytes.
#![allow(clippy::indexing_slicing)]

use super::*;

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

pub(super) fn u32s(v: impl Iterator<Item = u32>) -> Vec<i64> {
    v.map(|x| x as i64).collect()
}

/// An optional id as stored: `0` for none, else the id + 1.
pub(super) fn opt_id(x: u32) -> i64 {
    if x == NONE {
        0
    } else {
        x as i64 + 1
    }
}

/// Encodes a flush segment (minor 5), its rows already in segment order (§6.1). `rel_of`
/// maps an edge identity id to its rel string id (for the zone map). Full images are
/// written by compaction (`store/compact.rs`), which merges the image with the rows above it.
pub(crate) fn encode(seq: u64, d: &SegData, rel_of: &dyn Fn(u32) -> u32) -> (Vec<u8>, ZoneMap) {
    encode_as(seq, d, rel_of, SEG_MINOR_FLUSH)
}

/// [`encode`] as segment minor `minor`: 1 or 5, or (a full image only) 2, 3 or 4, with the
/// index chunks 64–80 from [`index_column`]. Minors 4 and 5 expect rows in segment order.
/// Besides flush segments, this writes the image of no rows (`mapscan::Image::empty`) and
/// the images of older minors that tests open.
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
                let k = Table::of(id == EDGE_CLOSED);
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
/// returns the codec used. A minor-2, 3, 4 or 6 segment takes the smallest random-access
/// codec for every chunk (ARITH among them in minor 6); a flush segment packs the small
/// columns with FOR and the others with the smaller of FOR and DFOR; a `tt_s` chunk is RUNS
/// unless (minors 4–6) an integer column is smaller.
pub(crate) fn put_int_chunk(body: &mut Vec<u8>, id: u16, codec: u8, minor: u16, v: &[i64]) -> u8 {
    use chunk::*;
    let indexed = is_indexed(minor);
    let put = |out: &mut Vec<u8>| {
        if indexed {
            put_int_image(out, v, minor)
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
pub(super) fn int_chunk(d: &SegData, id: u16) -> Vec<i64> {
    use chunk::*;
    match id {
        UID_OFFS..=EDGE_LONG_BY_END => index_column(d, id),
        CONTENT_LABEL..=CONTENT_PROV => d.contents.iter().map(|c| content_value(id, c)).collect(),
        IDENT_SRC..=IDENT_DISC_VAL => d.idents.iter().map(|e| ident_value(id, e)).collect(),
        SLOTS => u32s(d.slots.iter().copied()),
        _ => {
            let (g, rows, closes) = if id < ROWS_EDGE {
                (ROWS_NODE, &d.nodes, &d.closes[Table::Nodes])
            } else {
                (ROWS_EDGE, &d.edges, &d.closes[Table::Edges])
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
/// a decoded delta builds (postings, adjacency) plus heap offsets, sort orders and the
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
/// are dropped): the n + 1 offsets, or (`vals`) the grouped positions. The keys are
/// collected once and the offsets counted as u32 (a segment's counts are): 4 bytes a key
/// and 4 a group beside the column.
pub(crate) fn group(n: usize, keys: impl Iterator<Item = u32>, vals: bool) -> Vec<i64> {
    let keys: Vec<u32> = keys.collect();
    let blocks = std::iter::once(keys.as_slice());
    let off = group_offsets(n, blocks.clone());
    if vals {
        group_list(off, blocks, Vec::new())
    } else {
        off.into_iter().map(i64::from).collect()
    }
}

/// [`group`]'s offsets and positions both, from one count of the keys: a grouping's two
/// chunks (offsets, list) built together, in the buffers `into` (their contents dropped;
/// a writer passes buffers it reuses). The keys come in blocks (read twice, once per
/// pass), so each pass is a short loop over a slice whose random reads and writes overlap
/// their cache misses.
pub(crate) fn group_both<B: AsRef<[u32]>>(
    n: usize,
    blocks: impl Iterator<Item = B> + Clone,
    into: [Vec<i64>; 2],
) -> [Vec<i64>; 2] {
    let [mut offsets, list] = into;
    let off = group_offsets(n, blocks.clone());
    offsets.clear();
    offsets.extend(off.iter().map(|&o| i64::from(o)));
    [offsets, group_list(off, blocks, list)]
}

/// The n + 1 start offsets of the keys below `n` (given in blocks), counted.
pub(super) fn group_offsets<B: AsRef<[u32]>>(
    n: usize,
    blocks: impl Iterator<Item = B>,
) -> Vec<u32> {
    let mut off = vec![0u32; n + 1];
    for b in blocks {
        for &k in b.as_ref() {
            if (k as usize) < n {
                off[k as usize + 1] += 1;
            }
        }
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    off
}

/// The positions of the keys below `n` (given in blocks) grouped by key, placed from the
/// start offsets `off`, in the buffer `out` (its contents dropped).
pub(super) fn group_list<B: AsRef<[u32]>>(
    mut off: Vec<u32>,
    blocks: impl Iterator<Item = B>,
    mut out: Vec<i64>,
) -> Vec<i64> {
    let n = off.len() - 1;
    out.clear();
    out.resize(off[n] as usize, 0);
    let mut r = 0i64;
    for b in blocks {
        for &k in b.as_ref() {
            if (k as usize) < n {
                let at = &mut off[k as usize];
                out[*at as usize] = r;
                *at += 1;
            }
            r += 1;
        }
    }
    out
}

/// Chunk 77 or 79 (the valid-time index, §6.5): every row number sorted by `(vt_s, row)` —
/// the rows themselves when they are in `vt_s` order already (a minor-4 image).
pub(super) fn start_order(rows: &[crate::model::Row]) -> Vec<i64> {
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
pub(super) fn long_end_order(rows: &[crate::model::Row]) -> Vec<i64> {
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
