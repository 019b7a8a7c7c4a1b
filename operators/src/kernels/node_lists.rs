//! Per-node incidence lists of a ranked event sequence (the lists of
//! [`super::motif_local::Incidence`]): node `x`'s list holds the ranks of its events in
//! ascending order, self loops left out.
//!
//! **Why not one counting sort.** Scattering every event's rank straight into its two
//! endpoints' lists writes at one cursor per node: with 10^6 nodes those cursors span far
//! more cache than a core has, so nearly every write misses (about 8 s for 10^8 events on
//! the development VM). The build here partitions first: each pass over
//! `PASS_EVENTS` events sorts its `(node, rank)` entries into buckets of
//! 2^`BUCKET_LOG2` consecutive nodes (a few hundred sequential output streams), then
//! fills each bucket's lists from its entries, whose cursors fit in cache (about 3.5 s on
//! the same VM and input, both cores). Graphs of up to `DIRECT_MAX_NODES` nodes take the
//! counting sort, whose cursors fit in cache there.
//!
//! **Determinism.** Entries reach a bucket in rank order (passes in order, the parts of a
//! pass in order, each part in order), so every list is the same for any thread count and
//! equal to the counting sort's.

use super::motifs::MotifEvent;
use rayon::prelude::*;

/// Nodes per bucket, log2: 4,096 nodes, whose write cursors take 256 KiB of cache lines.
const BUCKET_LOG2: u32 = 12;
/// Events per pass: bounds the partitioned entries to 2 · 8 bytes per event (256 MiB).
const PASS_EVENTS: usize = 1 << 24;
/// Up to this many nodes the counting sort is as fast (their cursors fit in a core's cache;
/// on the development VM, 10^7 events over 10^4 nodes: 0.22 s either way, over 3 · 10^4
/// nodes the partitioned build takes 0.65 of its time) and needs no partitioned copy.
const DIRECT_MAX_NODES: usize = 1 << 14;

/// `(off, inc)`: node `x`'s list is `inc[off[x]..off[x + 1]]` (`off` has `n + 1` entries).
/// Node ids must be below `n` and there must be fewer than 2^32 events.
pub fn node_lists(ev: &[MotifEvent], n: usize) -> (Vec<usize>, Vec<u32>) {
    if n <= DIRECT_MAX_NODES {
        counting_sort(ev, n)
    } else {
        partitioned(ev, n, PASS_EVENTS, BUCKET_LOG2)
    }
}

/// The endpoints of a non-loop event (a self loop has none: it is in no list).
fn ends(e: &MotifEvent) -> Option<[u32; 2]> {
    (e.src != e.dst).then_some([e.src, e.dst])
}

/// The list offsets: the degrees counted per worker over its share of the events, summed.
fn offsets(ev: &[MotifEvent], n: usize) -> Vec<usize> {
    let share = ev
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1);
    let degrees: Vec<Vec<u32>> = ev
        .par_chunks(share)
        .map(|part| {
            let mut d = vec![0u32; n];
            for [a, b] in part.iter().filter_map(ends) {
                d[a as usize] += 1;
                d[b as usize] += 1;
            }
            d
        })
        .collect();
    let mut off = vec![0usize; n + 1];
    for x in 0..n {
        off[x + 1] = off[x] + degrees.iter().map(|d| d[x] as usize).sum::<usize>();
    }
    off
}

/// Every rank written straight to its endpoints' lists.
fn counting_sort(ev: &[MotifEvent], n: usize) -> (Vec<usize>, Vec<u32>) {
    let off = offsets(ev, n);
    let mut inc = vec![0u32; off[n]];
    let mut cursor = off.clone();
    for (r, e) in ev.iter().enumerate() {
        for x in ends(e).into_iter().flatten() {
            inc[cursor[x as usize]] = r as u32;
            cursor[x as usize] += 1;
        }
    }
    (off, inc)
}

/// Passes of `pass_events` events, partitioned into buckets of `2^log2` nodes.
fn partitioned(
    ev: &[MotifEvent],
    n: usize,
    pass_events: usize,
    log2: u32,
) -> (Vec<usize>, Vec<u32>) {
    let workers = rayon::current_num_threads().max(1);
    let off = offsets(ev, n);
    let mut inc = vec![0u32; off[n]];
    let buckets = (n >> log2) + 1;
    // Each bucket's slice of `inc` and the write cursors of its nodes within that slice.
    let mut lists: Vec<(&mut [u32], Vec<usize>)> = Vec::with_capacity(buckets);
    let mut rest: &mut [u32] = &mut inc;
    for b in 0..buckets {
        let (lo, hi) = ((b << log2).min(n), ((b + 1) << log2).min(n));
        let (slice, tail) = std::mem::take(&mut rest).split_at_mut(off[hi] - off[lo]);
        rest = tail;
        lists.push((slice, (lo..hi).map(|x| off[x] - off[lo]).collect()));
    }
    for (p, pass) in ev.chunks(pass_events.max(1)).enumerate() {
        let part_len = pass.len().div_ceil(workers).max(1);
        let parts: Vec<Partitioned> = pass
            .par_chunks(part_len)
            .enumerate()
            .map(|(k, part)| partition(part, p * pass_events + k * part_len, buckets, log2))
            .collect();
        lists
            .par_iter_mut()
            .enumerate()
            .for_each(|(b, (slice, cursor))| {
                let first = (b << log2) as u32;
                for part in &parts {
                    for &(x, r) in &part.entries[part.start[b]..part.start[b + 1]] {
                        let c = &mut cursor[(x - first) as usize];
                        slice[*c] = r;
                        *c += 1;
                    }
                }
            });
    }
    drop(lists);
    (off, inc)
}

/// A part of a pass with its `(node, rank)` entries grouped by bucket, in rank order within
/// each: bucket `b`'s are `entries[start[b]..start[b + 1]]`.
struct Partitioned {
    entries: Vec<(u32, u32)>,
    start: Vec<usize>,
}

/// Partitions `part`, whose first event has rank `first_rank`, into `buckets` buckets.
fn partition(part: &[MotifEvent], first_rank: usize, buckets: usize, log2: u32) -> Partitioned {
    let mut start = vec![0usize; buckets + 1];
    for x in part.iter().filter_map(ends).flatten() {
        start[(x >> log2) as usize + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut entries = vec![(0u32, 0u32); start[buckets]];
    let mut cursor = start.clone();
    for (i, e) in part.iter().enumerate() {
        for x in ends(e).into_iter().flatten() {
            let c = &mut cursor[(x >> log2) as usize];
            // Fewer than 2^32 events (the caller's contract).
            entries[*c] = (x, (first_rank + i) as u32);
            *c += 1;
        }
    }
    Partitioned { entries, start }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists by the plain counting sort.
    fn reference(ev: &[MotifEvent], n: usize) -> (Vec<usize>, Vec<u32>) {
        let mut lists = vec![Vec::new(); n];
        for (r, e) in ev.iter().enumerate().filter(|(_, e)| e.src != e.dst) {
            lists[e.src as usize].push(r as u32);
            lists[e.dst as usize].push(r as u32);
        }
        let mut off = vec![0];
        for l in &lists {
            off.push(off.last().unwrap() + l.len());
        }
        (off, lists.concat())
    }

    fn events(m: usize, n: u32, seed: u64) -> Vec<MotifEvent> {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % u64::from(n)) as u32
        };
        (0..m)
            .map(|i| MotifEvent {
                t: i as i64,
                src: next(),
                dst: next(),
            })
            .collect()
    }

    #[test]
    fn the_lists_equal_the_counting_sort_for_every_pass_and_bucket_size() {
        for (m, n, seed) in [(0, 0, 1), (0, 5, 1), (1, 1, 2), (50, 3, 3), (5_000, 700, 4)] {
            let ev = events(m, n.max(1), seed);
            let want = reference(&ev, n as usize);
            assert_eq!(node_lists(&ev, n as usize), want, "m={m} n={n}");
            assert_eq!(counting_sort(&ev, n as usize), want, "m={m} n={n}");
            // Several passes, uneven parts and buckets, a bucket per node, one bucket.
            for (pass, log2) in [(1, 0), (7, 2), (64, 3), (1_000, 12)] {
                let got = partitioned(&ev, n as usize, pass, log2);
                assert_eq!(got, want, "m={m} n={n} pass={pass} log2={log2}");
            }
        }
    }

    #[test]
    fn self_loops_are_in_no_list_and_thread_counts_agree() {
        let mut ev = events(3_000, 50, 9);
        for e in ev.iter_mut().step_by(3) {
            e.dst = e.src;
        }
        let want = reference(&ev, 50);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert_eq!(pool.install(|| partitioned(&ev, 50, 500, 2)), want);
            assert_eq!(pool.install(|| counting_sort(&ev, 50)), want);
        }
    }
}
