//! The store digest (`data-model.md` §10): BLAKE3 over the canonical line of every stored
//! row, the nodes by `(uid, tt_s, vt_s)`, then the edges by `(eid, tt_s, vt_s)`.
//!
//! Lines are rendered in parallel, a bounded group at a time, and hashed in order, so the
//! digest does not depend on the thread count. Edge identities come a bounded group at a
//! time in eid order ([`Src::digest_groups`]). The eid order is random against the storage
//! order, so a group's identities, postings and rows are read in storage order first and
//! only then put in digest order: read in eid order, every value of a large image's
//! columns was a cache miss (a 10M-row digest took 1.5 times as long, a 10^8-row one 1.8
//! times; `bench/RESULTS.md`, thirty-sixth session).

use super::version::write_edge_line;
use super::*;

/// Rows rendered into one text buffer (one parallel task).
const CHUNK: usize = 16_384;

impl Snapshot<'_> {
    /// The store digest of `data-model.md` §10, 64 hex characters.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        let mut bufs = Vec::new();
        feed(&mut h, &mut bufs, &self.all_nodes(), |n, s| n.write_line(s));
        let src = self.src();
        src.digest_groups(|g| {
            let (idents, rows) = group_rows(src, g);
            feed(&mut h, &mut bufs, &rows, |(at, _, r), s| {
                let at = *at as usize;
                write_edge_line(s, src, r, &idents[at], &g[at].0)
            });
        });
        h.finalize().to_hex().to_string()
    }
}

/// Hashes the lines of `rows` in order, rendered a chunk per task. `bufs` holds one text
/// buffer per chunk of a round, kept from call to call (a buffer allocated afresh for
/// every chunk cost a page fault every 4 KiB of text).
fn feed<T: Sync>(
    h: &mut blake3::Hasher,
    bufs: &mut Vec<String>,
    rows: &[T],
    line: impl Fn(&T, &mut String) + Sync,
) {
    let round = CHUNK * rayon::current_num_threads().max(1) * 2;
    for g in rows.chunks(round) {
        let chunks: Vec<&[T]> = g.chunks(CHUNK).collect();
        if bufs.len() < chunks.len() {
            bufs.resize_with(chunks.len(), String::new);
        }
        let bufs = &mut bufs[..chunks.len()];
        bufs.par_iter_mut().zip(&chunks).for_each(|(s, c)| {
            s.clear();
            c.iter().for_each(|r| line(r, s));
        });
        bufs.iter().for_each(|s| {
            h.update(s.as_bytes());
        });
    }
}

/// The identities of group `g` (by place in `g`) and the alive rows of all of them in
/// digest order: `(place, row number, row)` by place, then by `(tt_s, vt_s, row number)`.
/// Identities and rows are read in ascending storage order.
pub(super) fn group_rows(src: Src<'_>, g: &[(Id12, u32)]) -> (Vec<IdentRec>, Vec<(u32, u32, Row)>) {
    let mut by_id: Vec<(u32, u32)> = (0..g.len() as u32)
        .map(|at| (g[at as usize].1, at))
        .collect();
    by_id.par_sort_unstable();
    type Read = (Vec<(u32, IdentRec)>, Vec<(u32, u32)>);
    let read: Vec<Read> = by_id
        .par_chunks(CHUNK)
        .map(|c| {
            let mut idents = Vec::with_capacity(c.len());
            let mut places = Vec::with_capacity(c.len());
            for &(id, at) in c {
                idents.push((at, src.ident(id)));
                places.extend(src.edge_postings(id).iter().map(|&row| (row, at)));
            }
            (idents, places)
        })
        .collect();
    // Every place is in `by_id` once, so every slot is set below.
    let none = IdentRec {
        src: NONE,
        dst: NONE,
        rel: NONE,
        disc: Disc::Ordinal(0),
        mapped: false,
    };
    let mut idents = vec![none; g.len()];
    let mut places = Vec::with_capacity(g.len());
    for (ids, ps) in read {
        for (at, rec) in ids {
            idents[at as usize] = rec;
        }
        places.extend(ps);
    }
    places.par_sort_unstable();
    let mut rows: Vec<(u32, u32, Row)> = places
        .par_chunks(CHUNK)
        .flat_map_iter(|c| {
            c.iter()
                .filter(|&&(row, _)| src.row_alive(Table::Edges, row))
                .map(|&(row, at)| (at, row, src.row(Table::Edges, row)))
                .collect::<Vec<_>>()
        })
        .collect();
    rows.par_sort_unstable_by_key(|&(at, row, r)| (at, r.tt_s, r.vt_s, row));
    (idents, rows)
}
