//! Compaction over a mapped image (`format-spec.md` §9.3): the rows of the image and those
//! above it (the delta: the decoded flush segments and the memtable) are merged into the
//! new full image in segment order, a column per thread at a time (a grouping's offsets
//! and list together, from one count of its keys), and the file is written chunk by chunk
//! in layout order. Nothing is decoded into an in-memory state: the peak is the delta, the
//! places of its rows among the image's, the edge rows' identities (4 bytes a row) and per
//! thread a column and its encoding (for an adjacency, also one end of the image's
//! identities, 4 bytes each), not the store.
//!
//! The file is byte for byte the one written over the image of no rows with every segment
//! decoded into the delta (an eager writer's; tested): ids continue the image's in both,
//! the image's rows are in segment order already, and the merge keeps ties in their
//! previous order (image rows before the delta's, the delta's in their store order).

use crate::format::base::Base;
use crate::format::search::first_not_below;
use crate::format::seg::{self, chunk::*, ZoneMap, SEG_MINOR_ARITH};
use crate::model::{closure_of, Closure, IdentPart, Marks, PerTable, Table, NONE};
use crate::op::Origin;
use crate::rows::delta::Delta;
use crate::rows::Rows;
use crate::time::OPEN_END;
use rayon::prelude::*;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// Rows whose grouping keys [`Merge::grouping`] reads at a time.
const KEY_BLOCK: usize = 4096;

/// Image rows decoded at a time when a column is walked in merge order.
const STRETCH: usize = 1 << 16;

/// What [`write_image`] wrote: the file's length and BLAKE3 digest, its zone map and its
/// end marks.
pub(crate) struct Written {
    pub(crate) len: u64,
    pub(crate) blake3: [u8; 32],
    pub(crate) zone: ZoneMap,
    pub(crate) end: Marks,
}

/// Writes the full image of `l` (its memtable included) as segment `seq` (minor 4) to `w`.
/// `l`'s image must be of minor 4 (rows in segment order); an older image is decoded with
/// the segments above it into a delta over the image of no rows first (`Store::compact`).
pub(crate) fn write_image<W: Write>(l: &Rows, seq: u64, w: W) -> std::io::Result<(W, Written)> {
    let m = Merge::new(&l.base, &l.delta);
    let mut sw = seg::SegWriter::new(w, seq, SEG_MINOR_ARITH, Marks::default());
    // The chunks are built a window of tasks at a time, one task per thread, and written in
    // layout order: the peak holds a window's columns and encodings, not the image.
    let layout = seg::chunk_layout_for(SEG_MINOR_ARITH);
    let window = rayon::current_num_threads().max(1);
    for tasks in tasks(&layout).chunks(window) {
        let built: Vec<Vec<(u16, u8, Vec<u8>)>> =
            tasks.par_iter().map(|task| m.build(task)).collect();
        for (id, used, body) in built.iter().flatten() {
            sw.chunk(*id, *used, body);
        }
        // The image's pages are read about once; they need not stay resident.
        l.base.release_resident();
    }
    let (w, len, blake3) = sw.finish_io()?;
    let written = Written {
        len,
        blake3,
        zone: m.zone(),
        end: l.delta.end(),
    };
    Ok((w, written))
}

/// The shortest column buffer kept for the next chunk ([`Merge::recycle`]): a shorter one
/// costs the system little to give anew. One value in the unit tests, so that their small
/// images reuse buffers too (`merged_image_equals_the_decoded_image`).
const RECYCLED_VALUES: usize = if cfg!(test) { 1 } else { 1 << 16 };

/// The groupings (offsets chunk, list chunk) built together by one count of their keys
/// ([`seg::group_both`]): node and edge postings, out- and in-adjacency.
const GROUPINGS: [(u16, u16); 4] = [
    (NODE_POST_OFF, NODE_POST),
    (EDGE_POST_OFF, EDGE_POST),
    (OUT_OFF, OUT),
    (IN_OFF, IN),
];

/// The layout cut into build tasks, in layout order: one chunk, or a grouping's two chunks
/// (adjacent in the layout).
fn tasks(layout: &[(u16, u8)]) -> Vec<&[(u16, u8)]> {
    let mut out = Vec::with_capacity(layout.len());
    let mut i = 0;
    while i < layout.len() {
        let paired = layout
            .get(i + 1)
            .is_some_and(|next| GROUPINGS.contains(&(layout[i].0, next.0)));
        let n = if paired { 2 } else { 1 };
        out.push(&layout[i..i + n]);
        i += n;
    }
    out
}

/// The image and the delta, with the new order of every row and the closures renumbered.
struct Merge<'a> {
    b: &'a Base,
    d: &'a Delta,
    /// Per table, the merged order of the image's rows and the delta's.
    order: PerTable<Order>,
    /// Per table, every closure (the image's, the delta's of image rows and of its own
    /// rows) with its row's new number, ascending.
    closes: PerTable<Vec<Closure>>,
    /// The identity of every edge row in new order (4 bytes an edge row), decoded once for
    /// the edge postings, both adjacencies and the zone map.
    edge_idents: OnceLock<Vec<u32>>,
    /// Column buffers of finished chunks, for the next ones ([`Merge::buffer`]).
    spare: Mutex<Vec<Vec<i64>>>,
}

impl<'a> Merge<'a> {
    fn new(b: &'a Base, d: &'a Delta) -> Merge<'a> {
        let order = PerTable::from_fn(|k| Order::new(b, d, k));
        let closes = PerTable::from_fn(|k| closures(b, d, k, &order[k]));
        Merge {
            b,
            d,
            order,
            closes,
            edge_idents: OnceLock::new(),
            spare: Mutex::new(Vec::new()),
        }
    }

    /// An empty column buffer, one a finished chunk gave back ([`Merge::recycle`]) when
    /// there is one. A long column taken fresh from the system each time (80 MB at 10M
    /// rows) has every page faulted in and zeroed by the kernel: in a 10M-event load that
    /// was a sixth of the image write's time. At most one spare per thread is kept
    /// ([`Merge::recycle`]): unbounded, the spares raised that load's peak by 0.26 GB.
    fn buffer(&self) -> Vec<i64> {
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut v = spare.unwrap_or_default();
        v.clear();
        v
    }

    /// Gives the buffer of an encoded column back for the next ([`Merge::buffer`]), unless
    /// it is short or a spare per thread is already kept.
    fn recycle(&self, v: Vec<i64>) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if v.capacity() >= RECYCLED_VALUES && spare.len() < rayon::current_num_threads() {
            spare.push(v);
        }
    }

    /// The chunks of one build task ([`tasks`]): id, codec used and body of each.
    fn build(&self, task: &[(u16, u8)]) -> Vec<(u16, u8, Vec<u8>)> {
        match task {
            [(off_id, _), _] => {
                let cols = self.grouping(*off_id);
                task.iter()
                    .zip(cols)
                    .map(|(&(id, codec), col)| {
                        let mut body = Vec::new();
                        let used = seg::put_int_chunk(&mut body, id, codec, SEG_MINOR_ARITH, &col);
                        self.recycle(col);
                        (id, used, body)
                    })
                    .collect()
            }
            _ => task
                .iter()
                .map(|&(id, codec)| {
                    let (used, body) = self.chunk(id, codec);
                    (id, used, body)
                })
                .collect(),
        }
    }

    /// The two columns (offsets, list) of the grouping whose offsets chunk is `off_id`.
    fn grouping(&self, off_id: u16) -> [Vec<i64>; 2] {
        let d = self.d;
        let uids = d.end().uids as usize;
        match off_id {
            NODE_POST_OFF => {
                let idents: Vec<u32> = self.idents(Table::Nodes).collect();
                seg::group_both(uids, idents.chunks(KEY_BLOCK), self.buffers())
            }
            EDGE_POST_OFF => seg::group_both(
                d.end().idents as usize,
                self.edge_idents().chunks(KEY_BLOCK),
                self.buffers(),
            ),
            _ => {
                // Rows grouped by their identity's source (out) or destination (in).
                let part = IdentPart::end(off_id != IN_OFF);
                let image = self.image_ident_ends(part);
                // Read a block at a time by each of the grouping's two passes: a short
                // loop per block, and no list of every row's key held beside the grouping.
                let keys = self
                    .edge_idents()
                    .chunks(KEY_BLOCK)
                    .map(|ids| d.ident_parts(&image, ids, part));
                seg::group_both(uids, keys, self.buffers())
            }
        }
    }

    /// Two buffers of [`Merge::buffer`].
    fn buffers(&self) -> [Vec<i64>; 2] {
        [self.buffer(), self.buffer()]
    }

    /// [`Merge::edge_idents`], decoded by the first caller.
    fn edge_idents(&self) -> &[u32] {
        self.edge_idents
            .get_or_init(|| self.idents(Table::Edges).collect())
    }

    /// Part `part` (an end) of every identity of the image, by identity id, decoded a
    /// stretch at a time (the image reads one by random access).
    fn image_ident_ends(&self, part: IdentPart) -> Vec<u32> {
        let nb = self.d.base.idents as usize;
        let mut v = Vec::with_capacity(nb);
        for a in (0..nb).step_by(STRETCH) {
            v.extend(self.b.ident_part_range(part, a, (a + STRETCH).min(nb)));
        }
        v
    }

    /// Chunk `id` of the new image, encoded (by `codec`, or the codec the column chooses):
    /// the codec used and the body.
    fn chunk(&self, id: u16, codec: u8) -> (u8, Vec<u8>) {
        let mut body = Vec::new();
        let used = match id {
            UIDS | STRINGS => {
                self.heap(id == UIDS, &mut body);
                codec
            }
            NODE_CLOSED | EDGE_CLOSED => {
                let k = Table::of(id == EDGE_CLOSED);
                body = crate::format::bitmap::serialize(self.closes[k].iter().map(|c| c.row));
                codec
            }
            _ => {
                let col = self.column(id);
                let used = seg::put_int_chunk(&mut body, id, codec, SEG_MINOR_ARITH, &col);
                self.recycle(col);
                used
            }
        };
        (used, body)
    }

    /// The values of integer chunk `id` of the new image.
    fn column(&self, id: u16) -> Vec<i64> {
        let (b, d) = (self.b, self.d);
        match id {
            CONTENT_LABEL..=CONTENT_PROV => self.above(id, d.contents.len(), |i| {
                seg::content_value(id, &d.contents[i])
            }),
            // Each arm's column is a constant, which folds `ident_value`'s match.
            IDENT_SRC => self.ident_column::<IDENT_SRC>(),
            IDENT_DST => self.ident_column::<IDENT_DST>(),
            IDENT_REL => self.ident_column::<IDENT_REL>(),
            IDENT_DISC_TAG => self.ident_column::<IDENT_DISC_TAG>(),
            IDENT_DISC_VAL => self.ident_column::<IDENT_DISC_VAL>(),
            SLOTS => self.above(id, d.n_slots_above(), |i| i64::from(d.slot_above(i))),
            ROWS_NODE..=43 => {
                let (k, c) = if id < ROWS_EDGE {
                    (Table::Nodes, id - ROWS_NODE)
                } else {
                    (Table::Edges, id - ROWS_EDGE)
                };
                if c >= CLOSE_ROW {
                    return self.closes[k]
                        .iter()
                        .map(|x| seg::close_value(c, x))
                        .collect();
                }
                let mut v = self.buffer();
                v.reserve(self.order[k].len());
                self.walk(k, [c], |[x], _| v.push(x));
                v
            }
            UID_OFFS | STR_OFFS => {
                let mut v = b.chunk_range(id, 0, usize::MAX);
                let mut at = v.last().copied().unwrap_or(0);
                let names = if id == UID_OFFS { &d.uids } else { &d.strings };
                for j in 0..names.len() as u32 {
                    at += names.name(j).len() as i64;
                    v.push(at);
                }
                v
            }
            UID_ORDER | STR_ORDER => self.name_order(id == UID_ORDER),
            // Built with their pair by `build`; alone only if a layout split a grouping.
            NODE_POST_OFF..=IN => {
                let off_id = id - (id - NODE_POST_OFF) % 2;
                let [offsets, list] = self.grouping(off_id);
                if id == off_id {
                    offsets
                } else {
                    list
                }
            }
            MAPPED_ORDER => self.mapped_order(),
            // The rows are in `vt_s` order.
            NODE_BY_START | EDGE_BY_START => {
                let k = Table::of(id == EDGE_BY_START);
                (0..self.order[k].len() as i64).collect()
            }
            NODE_LONG_BY_END | EDGE_LONG_BY_END => {
                self.long_order(Table::of(id == EDGE_LONG_BY_END))
            }
            _ => Vec::new(),
        }
    }

    /// Chunk `id`'s values in the image, then `f(i)` of the delta's `n` entries above them.
    fn above(&self, id: u16, n: usize, f: impl Fn(usize) -> i64) -> Vec<i64> {
        let mut v = self.b.chunk_range(id, 0, usize::MAX);
        if v.is_empty() {
            v = self.buffer();
        }
        v.reserve(n);
        v.extend((0..n).map(f));
        v
    }

    /// Identity chunk `C` (`IDENT_SRC` … `IDENT_DISC_VAL`) of the new image.
    fn ident_column<const C: u16>(&self) -> Vec<i64> {
        let d = self.d;
        self.above(C, d.n_idents_above(), |i| {
            seg::ident_value(C, &d.ident_above(i))
        })
    }

    /// Chunk 78 or 80 of table `k`: the long rows by `(vt_e, row)`. The image's list keeps
    /// its order under the new numbers (the merge keeps the image's rows in order), so the
    /// delta's long rows, sorted, are merged into it: each finds its place by a galloping
    /// search of the image's list, whose keys are read from the image, and the stretches
    /// between are copied renumbered. The delta's rows of a load in time order sort at the
    /// end, so few keys are read.
    fn long_order(&self, k: Table) -> Vec<i64> {
        let (b, d) = (self.b, self.d);
        let new_of = &self.order[k];
        let nb = d.n_base(k);
        let mut above: Vec<(i64, u32)> = (0..d.n_above(k))
            .map(|j| (j, d.row_above(k, j)))
            .filter(|(_, r)| r.vt_e != r.vt_s.saturating_add(1))
            .map(|(j, r)| (r.vt_e, new_of.of(nb + j as u32)))
            .collect();
        above.sort_unstable();
        let n_image = b.n_long(k);
        let key = |i: usize| {
            let old = b.long_row(k, i);
            (b.row_vt(k, old).1, new_of.of(old))
        };
        let mut out = Vec::with_capacity(n_image + above.len());
        let copy = |out: &mut Vec<i64>, a: usize, e: usize| {
            out.extend(
                b.chunk_range(self.long_chunk(k), a, e)
                    .into_iter()
                    .map(|old| i64::from(new_of.of(old as u32))),
            );
        };
        let mut at = 0;
        for &(vt_e, row) in &above {
            // The first image entry at or after `at` whose key is above `(vt_e, row)`.
            let mut step = 1;
            let mut lo = at;
            while lo + step <= n_image && key(lo + step - 1) < (vt_e, row) {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(n_image + 1) - 1;
            let place = lo + first_not_below(hi - lo, |i| key(lo + i) < (vt_e, row));
            copy(&mut out, at, place);
            out.push(i64::from(row));
            at = place;
        }
        copy(&mut out, at, n_image);
        out
    }

    fn long_chunk(&self, k: Table) -> u16 {
        long_by_end(k)
    }

    /// Calls `f` with the stored values of row columns `cols` of every row of table `k`, in
    /// new order, and the row's new number. The image's rows come in ascending order, so
    /// its columns are decoded a stretch at a time. The delta's values are read a block of
    /// rows at a time, before the block is passed on: a delta out of its own order (a
    /// Parquet export read back) is read at random, and independent loads in a short loop
    /// overlap their cache misses where one load between calls of `f` waits for each.
    fn walk<const N: usize>(&self, k: Table, cols: [u16; N], mut f: impl FnMut([i64; N], u32)) {
        /// Rows of new order per block.
        const BLOCK: usize = 1024;
        let g = row_columns(k);
        let d = self.d;
        let nb = d.n_base(k) as usize;
        let mut at = 0;
        let mut bufs: [Vec<i64>; N] = std::array::from_fn(|_| Vec::new());
        let mut above: [Vec<i64>; N] = std::array::from_fn(|_| Vec::with_capacity(BLOCK));
        let mut olds: Vec<usize> = Vec::with_capacity(BLOCK);
        let mut order = self.order[k].iter();
        let mut new = 0u32;
        loop {
            olds.clear();
            olds.extend(order.by_ref().take(BLOCK).map(|old| old as usize));
            if olds.is_empty() {
                return;
            }
            for (vals, c) in above.iter_mut().zip(cols) {
                vals.clear();
                let rows = olds.iter().filter_map(|old| old.checked_sub(nb));
                d.values_above(k, c, rows, vals);
            }
            let mut next = 0;
            for &old in &olds {
                if old >= nb {
                    f(std::array::from_fn(|i| above[i][next]), new);
                    next += 1;
                } else {
                    if bufs.first().is_some_and(|b| old >= at + b.len()) {
                        at = old;
                        let e = (old + STRETCH).min(nb);
                        for (buf, c) in bufs.iter_mut().zip(cols) {
                            *buf = self.b.chunk_range(g + c, old, e);
                        }
                    }
                    f(
                        std::array::from_fn(|i| bufs[i].get(old - at).copied().unwrap_or(0)),
                        new,
                    );
                }
                new += 1;
            }
        }
    }

    /// The identity (edges) or uid (nodes) column of table `k`, in new order, as an
    /// iterator that decodes the image a stretch at a time (the node postings collect it, 4
    /// bytes a node row, to pass it twice in blocks; the edge table's is held,
    /// [`Merge::edge_idents`]).
    fn idents(&self, k: Table) -> Idents<'_> {
        Idents {
            m: self,
            k,
            rows: self.order[k].iter(),
            at: 0,
            buf: Vec::new(),
        }
    }

    /// The UIDS or STRINGS heap chunk: the image's lengths and bytes, then the delta's.
    fn heap(&self, uids: bool, body: &mut Vec<u8>) {
        let (b, d) = (self.b, self.d);
        let names = if uids { &d.uids } else { &d.strings };
        let offs = b.chunk_range(if uids { UID_OFFS } else { STR_OFFS }, 0, usize::MAX);
        let mut lens: Vec<i64> = offs.windows(2).map(|w| w[1] - w[0]).collect();
        lens.extend((0..names.len() as u32).map(|j| names.name(j).len() as i64));
        seg::put_for(body, &lens);
        body.extend_from_slice(b.heap_bytes(uids));
        for j in 0..names.len() as u32 {
            body.extend_from_slice(names.name(j).as_bytes());
        }
    }

    /// Chunk 66 or 67: the image's order merged with the delta's names, sorted.
    fn name_order(&self, uids: bool) -> Vec<i64> {
        let (b, d) = (self.b, self.d);
        let names = if uids { &d.uids } else { &d.strings };
        let first = if uids { d.base.uids } else { d.base.strings } as u32;
        let image_name = |id: u32| if uids { b.uid_name(id) } else { b.string(id) };
        // By the names' first 8 bytes, then (rarely, for long names) the whole names: the
        // sort compares keys in the list instead of reading two names per comparison. The
        // names are distinct, so the order is the names' whatever the sort.
        let mut above: Vec<(u64, u32)> = (0..names.len() as u32)
            .map(|j| (name_prefix(names.name(j)), j))
            .collect();
        above.par_sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then_with(|| names.name(x.1).cmp(names.name(y.1)))
        });
        let image = b.chunk_range(if uids { UID_ORDER } else { STR_ORDER }, 0, usize::MAX);
        merge_by(
            image.into_iter().map(|x| x as u32),
            above.into_iter().map(|(_, j)| first + j),
            |&x, &y| image_name(x) <= names.name(y - first),
        )
    }

    /// Chunk 76: the image's mapped identities merged with the delta's, by identity key.
    fn mapped_order(&self) -> Vec<i64> {
        let (b, d) = (self.b, self.d);
        let first = d.base.idents as u32;
        let key_above = |id: u32| seg::ident_key(&d.ident_above((id - first) as usize));
        let mut above: Vec<u32> = (0..d.n_idents_above() as u32)
            .filter(|&j| d.ident_above(j as usize).mapped)
            .map(|j| first + j)
            .collect();
        above.sort_unstable_by_key(|&id| key_above(id));
        let image = b.chunk_range(MAPPED_ORDER, 0, usize::MAX);
        merge_by(
            image.into_iter().map(|x| x as u32),
            above.into_iter(),
            |&x, &y| seg::ident_key(&b.ident(x)) <= key_above(y),
        )
    }

    /// The zone map of the new image (as `seg::encode` computes it from the rows).
    fn zone(&self) -> ZoneMap {
        let mut z = ZoneMap {
            node_rows: self.order[Table::Nodes].len() as u64,
            edge_rows: self.order[Table::Edges].len() as u64,
            ..ZoneMap::default()
        };
        let (mut vt_min, mut vt_max, mut max_vt_e) = (i64::MAX, i64::MIN, 0);
        self.walk(Table::Edges, [VT_S, VT_LEN], |[s, len], _| {
            vt_min = vt_min.min(s);
            vt_max = vt_max.max(s);
            max_vt_e = max_vt_e.max(vt_end(s, len));
        });
        if z.edge_rows > 0 {
            (z.vt_min, z.vt_max, z.max_vt_e) = (vt_min, vt_max, max_vt_e);
        }
        let (mut tt_min, mut tt_max) = (i64::MAX, i64::MIN);
        for k in Table::BOTH {
            self.walk(k, [TT_S], |[t], _| {
                tt_min = tt_min.min(t);
                tt_max = tt_max.max(t);
            });
        }
        if z.node_rows + z.edge_rows > 0 {
            (z.tt_min, z.tt_max) = (tt_min, tt_max);
        }
        let mut used = vec![false; self.d.end().idents as usize];
        for &i in self.edge_idents() {
            if let Some(u) = used.get_mut(i as usize) {
                *u = true;
            }
        }
        z.rels = (0..used.len() as u32)
            .filter(|&i| used[i as usize])
            .map(|i| self.d.ident_part(self.b, i, IdentPart::Rel))
            .collect();
        z.rels.sort_unstable();
        z.rels.dedup();
        z
    }
}

/// The ident column of one table in new order ([`Merge::idents`]).
#[derive(Clone)]
struct Idents<'a> {
    m: &'a Merge<'a>,
    k: Table,
    /// The old rows in new order, from the next one on.
    rows: OrderIter<'a>,
    /// The image rows `[at, at + buf.len())`, decoded.
    at: usize,
    buf: Vec<i64>,
}

impl Iterator for Idents<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let (m, k) = (self.m, self.k);
        let old = self.rows.next()? as usize;
        let nb = m.d.n_base(k) as usize;
        let x = match old.checked_sub(nb) {
            Some(j) => return Some(m.d.value_above(k, IDENT, j) as u32),
            None if old < self.at + self.buf.len() => self.buf[old - self.at],
            None => {
                let g = row_columns(k);
                self.at = old;
                self.buf = m.b.chunk_range(g + IDENT, old, (old + STRETCH).min(nb));
                self.buf.first().copied().unwrap_or(0)
            }
        };
        Some(u32::try_from(x).unwrap_or(NONE))
    }
}

/// `vt_e` of a row stored as `(vt_s, vt_len)` (§6.3: length 0 is an open end).
fn vt_end(vt_s: i64, len: i64) -> i64 {
    if len == 0 {
        OPEN_END
    } else {
        vt_s.saturating_add(len)
    }
}

/// The first 8 bytes of `name`, zero-padded, as a big-endian number: two names with
/// different numbers are in byte order by their numbers; equal numbers (the same first 8
/// bytes, or a short name and itself followed by zero bytes) say nothing.
fn name_prefix(name: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = name.len().min(8);
    b[..n].copy_from_slice(&name.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

/// Merges two sorted id lists (`first_wins(x, y)`: `x` goes before `y`) into a column.
fn merge_by(
    a: impl Iterator<Item = u32>,
    b: impl Iterator<Item = u32>,
    first_wins: impl Fn(&u32, &u32) -> bool,
) -> Vec<i64> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out = Vec::with_capacity(a.size_hint().0 + b.size_hint().0);
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if first_wins(x, y) => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        match next {
            Some(x) => out.push(i64::from(x)),
            None => return out,
        }
    }
}

/// The rows of one table in segment order (§6.1): the image's rows (already in that order)
/// merged with the delta's, sorted stably by `(vt_s, ident, tt_s)`; on equal keys the
/// image's row goes first, as the older one. Only the delta's placements are held (12 bytes
/// a delta row), not a number per row of the table: the image's rows keep their order. A
/// delta in its own order (a load of increasing times) placed as one stretch (after the
/// image's rows, or into an image of none) holds nothing per row.
struct Order {
    /// The image's row count.
    nb: u32,
    /// The delta's row count.
    n: u32,
    /// The delta's rows (local numbers) in new order; `None` when in their own order.
    above: Option<Vec<u32>>,
    /// Per entry of `above`: the image rows placed before it (ascending); `None` when every
    /// delta row goes after all of them.
    image_before: Option<Vec<u32>>,
    /// Per delta row (local number): its new number; `None` when `above` is.
    delta_new: Option<Vec<u32>>,
}

impl Order {
    fn new(b: &Base, d: &Delta, k: Table) -> Order {
        let g = row_columns(k);
        let n = d.n_above(k);
        let key = |j: usize| d.key_above(k, j);
        // Sorted stably: equal keys keep the delta's order. The keys are sorted with their
        // row numbers (24 bytes a row, the number breaking ties), not row numbers by a key
        // read through them: a comparison then reads no row, which for rows in random
        // order (a Parquet export read back) was a cache miss each. Rows already in order
        // (a load of increasing times) are not sorted.
        let above: Option<Vec<u32>> = if (1..n).all(|j| key(j - 1) <= key(j)) {
            None
        } else {
            let mut keyed: Vec<(i64, u32, i64, u32)> = (0..n)
                .map(|j| {
                    let (vt_s, ident, tt_s) = key(j);
                    (vt_s, ident, tt_s, j as u32)
                })
                .collect();
            keyed.par_sort_unstable();
            Some(keyed.into_iter().map(|k| k.3).collect())
        };
        let at = |p: usize| above.as_ref().map_or(p, |a| a[p] as usize);
        let nb = d.n_base(k);
        let mut image_before = Vec::new();
        for a in (0..nb as usize).step_by(STRETCH) {
            let e = (a + STRETCH).min(nb as usize);
            let vt_s = b.chunk_range(g + VT_S, a, e);
            let ident = b.chunk_range(g + IDENT, a, e);
            let tt_s = b.chunk_range(g + TT_S, a, e);
            for i in 0..e - a {
                let v = |v: &[i64]| v.get(i).copied().unwrap_or(0);
                let here = (v(&vt_s), v(&ident) as u32, v(&tt_s));
                // The delta rows that sort before image row `a + i`.
                while image_before.len() < n && key(at(image_before.len())) < here {
                    image_before.push((a + i) as u32);
                }
            }
        }
        let image_before = (!image_before.is_empty()).then(|| {
            image_before.resize(n, nb);
            image_before
        });
        let mut o = Order {
            nb,
            n: n as u32,
            above,
            image_before,
            delta_new: None,
        };
        o.delta_new = o.above.as_ref().map(|a| {
            let mut new = vec![0; n];
            for (p, &j) in a.iter().enumerate() {
                new[j as usize] = o.before(p) + p as u32;
            }
            new
        });
        o
    }

    /// The image rows placed before the delta's `p`th row in new order.
    #[inline]
    fn before(&self, p: usize) -> u32 {
        self.image_before.as_ref().map_or(self.nb, |v| v[p])
    }

    /// The table's row count.
    fn len(&self) -> usize {
        self.nb as usize + self.n as usize
    }

    /// The old row numbers in new order.
    fn iter(&self) -> OrderIter<'_> {
        OrderIter {
            o: self,
            image: 0,
            delta: 0,
        }
    }

    /// The new number of old row `old` (`NONE` when out of range): an image row moves up
    /// by the delta rows placed before it.
    fn of(&self, old: u32) -> u32 {
        match old.checked_sub(self.nb) {
            Some(j) if j >= self.n => NONE,
            Some(j) => match &self.delta_new {
                Some(new) => new[j as usize],
                None => self.before(j as usize) + j,
            },
            None => {
                let placed = self.image_before.as_ref();
                old + placed.map_or(0, |v| v.partition_point(|&b| b <= old) as u32)
            }
        }
    }
}

/// [`Order::iter`].
#[derive(Clone)]
struct OrderIter<'a> {
    o: &'a Order,
    /// The next image row and the next delta row in new order.
    image: u32,
    delta: u32,
}

impl Iterator for OrderIter<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let o = self.o;
        if self.delta < o.n && o.before(self.delta as usize) <= self.image {
            let p = self.delta as usize;
            self.delta += 1;
            return Some(o.nb + o.above.as_ref().map_or(p as u32, |a| a[p]));
        }
        if self.image < o.nb {
            self.image += 1;
            return Some(self.image - 1);
        }
        None
    }
}

/// Every closure of table `k`, its row renumbered by `order`, ascending by row.
fn closures(b: &Base, d: &Delta, k: Table, order: &Order) -> Vec<Closure> {
    let g = row_columns(k);
    let n = b.n_close(k);
    let col = |c: u16| b.chunk_range(g + c, 0, n);
    let (rows, tt_e, by, reason) = (
        col(CLOSE_ROW),
        col(CLOSE_TT_E),
        col(CLOSE_BY),
        col(CLOSE_REASON),
    );
    let renumber = |r: u32| order.of(r);
    let origin = |x: i64| {
        u8::try_from(x)
            .ok()
            .and_then(Origin::from_u8)
            .unwrap_or(Origin::Assert)
    };
    let mut v: Vec<Closure> = (0..n)
        .map(|i| Closure {
            row: renumber(rows[i] as u32),
            tt_e: tt_e[i],
            closed_by: origin(by[i]),
            close_reason: if reason[i] == 0 {
                NONE
            } else {
                (reason[i] - 1) as u32
            },
        })
        .collect();
    for (&r, &(tt_e, by, reason)) in &d.closed[k] {
        v.push(Closure {
            row: renumber(r),
            tt_e,
            closed_by: by.unwrap_or(Origin::Assert),
            close_reason: reason,
        });
    }
    let nb = d.n_base(k);
    for j in 0..d.n_above(k) {
        if let Some(c) = closure_of(renumber(nb + j as u32), &d.row_above(k, j)) {
            v.push(c);
        }
    }
    v.sort_unstable_by_key(|c| c.row);
    v
}

#[cfg(test)]
mod tests {
    use crate::format::base::tests::{random_op, Rng};
    use crate::store::{Options, Store};
    use crate::Op;
    use std::path::Path;

    fn opts(eager: bool) -> Options {
        Options {
            flush_rows: Some(0),
            compact_segments: Some(0),
            eager,
            ..Options::default()
        }
    }

    /// Random batches at tt after `tt`, flushing now and then; returns the last tt.
    fn write_random(s: &mut Store, r: &mut Rng, mut tt: i64, batches: usize) -> i64 {
        for k in 0..batches {
            let n = 1 + r.below(3);
            let ops: Vec<Op> = (0..n).map(|_| Op::from_json(&random_op(r))).collect();
            tt += 1 + r.below(3) as i64;
            let _ = s.write_at(tt, ops);
            if r.below(9) == 0 || k + 1 == batches {
                s.flush().unwrap();
            }
        }
        tt
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }

    /// The manifest text and the only segment's bytes after `dir` is compacted by a
    /// writer opened with `eager` (decodes) or not (merges over the mapped image).
    fn compacted(dir: &Path, eager: bool) -> (Vec<u8>, Vec<u8>, String) {
        let mut s = Store::open_with(dir, opts(eager)).unwrap();
        s.compact().unwrap();
        let digest = s.digest();
        let entries = format!("{:?}", s.segments());
        drop(s);
        (
            crate::format::seg::only_segment(dir),
            digest.into_bytes(),
            entries,
        )
    }

    /// Compaction over the mapped image writes exactly the bytes (and manifest record) a
    /// writer that decoded every segment writes, on random stores whose flush segments
    /// add rows, dictionary entries and identities above the image and close image rows, and
    /// whose log holds a tail (the lazy writer's memtable, merged with the rest).
    #[test]
    fn merged_image_equals_the_decoded_image() {
        for seed in 1..=24u64 {
            let t = tempfile::tempdir().unwrap();
            let base = t.path().join("s");
            let mut r = Rng::new(seed);
            let mut s = Store::create_with(&base, opts(true)).unwrap();
            let first = 10 + r.below(40) as usize;
            let tt = write_random(&mut s, &mut r, 1000, first);
            s.compact().unwrap();
            let above = r.below(40) as usize;
            let mut tt = write_random(&mut s, &mut r, tt, above);
            // A log tail: the lazy writer merges its memtable too (no flush first).
            for _ in 0..r.below(6) {
                tt += 1 + r.below(3) as i64;
                let ops: Vec<Op> = (0..2).map(|_| Op::from_json(&random_op(&mut r))).collect();
                let _ = s.write_at(tt, ops);
            }
            drop(s);
            let (lazy, eager) = (t.path().join("lazy"), t.path().join("eager"));
            copy_dir(&base, &lazy);
            copy_dir(&base, &eager);
            let a = compacted(&lazy, false);
            let b = compacted(&eager, true);
            assert_eq!(a.2, b.2, "seed {seed}: manifest records differ");
            assert_eq!(a.1, b.1, "seed {seed}: digests differ");
            assert!(a.0 == b.0, "seed {seed}: image bytes differ");
        }
    }
}
