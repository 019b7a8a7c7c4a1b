//! The two-event δ-motif `M_2event_reciprocal` (issue 21 item 5, ours): ordered pairs of
//! events `(e1, e2)` with `e1 = u→v`, `e2 = v→u`, `u ≠ v`, `e1` before `e2` and
//! `t(e2) − t(e1) <= delta` ("A wrote to B, then B wrote back within δ"). Counted per directed
//! pair by two pointers over the pair's events, in O(events) after grouping; no pair of
//! events is enumerated.

use super::motifs::MotifEvent;
use super::TieMode;
use std::collections::HashMap;

/// The number of reciprocal pairs among `ev`, which is in the total event order `(t, eid)`.
/// `Ordered`: `e1` precedes `e2` in that order (equal times allowed); `Strict`: `t(e1) < t(e2)`.
pub fn count_reciprocal(ev: &[MotifEvent], delta: i64, tie: TieMode) -> u64 {
    // Positions of each directed pair's events, ascending (so their times ascend too).
    let mut by_pair: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (i, e) in ev.iter().enumerate() {
        if e.src != e.dst {
            by_pair.entry((e.src, e.dst)).or_default().push(i);
        }
    }
    let mut total = 0u64;
    for (&(u, v), first) in &by_pair {
        let Some(second) = by_pair.get(&(v, u)) else {
            continue;
        };
        // For each e2 of v→u: the e1 of u→v with t(e1) >= t(e2) − delta (from `lo`) that
        // precede it (before `hi`).
        let (mut lo, mut hi) = (0usize, 0usize);
        for &j in second {
            let t2 = ev[j].t;
            while hi < first.len()
                && match tie {
                    TieMode::Ordered => first[hi] < j,
                    TieMode::Strict => ev[first[hi]].t < t2,
                }
            {
                hi += 1;
            }
            while lo < hi && (t2 as i128 - ev[first[lo]].t as i128) > delta as i128 {
                lo += 1;
            }
            total = total.saturating_add((hi - lo) as u64);
        }
    }
    total
}
