//! A monotone priority queue (radix heap, Ahuja, Mehlhorn, Orlin and Tarjan 1990) for the
//! label-setting reachability searches ([`super::reach`]): every key pushed is at least
//! the last key popped, as in Dijkstra's algorithm, so entries can sit in 65 buckets by the
//! highest bit in which their key differs from the last popped one. A pop takes from bucket
//! 0 (keys equal to the last) or redistributes the lowest non-empty bucket around its
//! minimum; each entry moves to a lower bucket at most 64 times, and the buckets are
//! sequential vectors. On a million-node search at 10^8 events it replaced a binary heap
//! whose pops were a fifth of the call (bench/RESULTS.md, thirty-fourth session).
//!
//! Entries of equal key pop in no particular order: the searches' labels do not depend on
//! it (each node is expanded once, at its final label).

/// Monotone min-queue of `(key, value)` entries.
pub struct RadixHeap {
    /// The last key popped (0 before the first pop).
    last: u64,
    len: usize,
    /// Bucket `i > 0` holds keys whose highest bit differing from `last` is bit `i − 1`;
    /// bucket 0 holds keys equal to `last`.
    buckets: [Vec<(u64, u32)>; 65],
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            len: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
        }
    }
}

fn bucket(key: u64, last: u64) -> usize {
    (u64::BITS - (key ^ last).leading_zeros()) as usize
}

impl RadixHeap {
    /// Adds `value` with `key`; `key` must not be below the last key popped.
    pub fn push(&mut self, key: u64, value: u32) {
        debug_assert!(key >= self.last, "radix heap: key below the last popped");
        self.buckets[bucket(key, self.last)].push((key, value));
        self.len += 1;
    }

    /// Removes an entry of the least key.
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty())?;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            self.last = moved.iter().map(|e| e.0).min()?;
            for e in &moved {
                self.buckets[bucket(e.0, self.last)].push(*e);
            }
            // Keep the allocation for the next time this bucket fills.
            moved.clear();
            self.buckets[i] = moved;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

/// The order-preserving map of `i64` onto `u64` (the sign bit flipped).
pub fn key_of(t: i64) -> u64 {
    (t as u64) ^ (1 << 63)
}

/// The inverse of [`key_of`].
pub fn time_of(k: u64) -> i64 {
    (k ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_in_the_order_of_a_binary_heap_under_monotone_pushes() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for spread in [1u64, 7, 1 << 20, u64::MAX / 4] {
            let mut r = RadixHeap::default();
            let mut b = BinaryHeap::new();
            let mut last = 0u64;
            for step in 0..20_000u32 {
                // Pushes above the last pop; pops interleaved, sometimes in runs.
                if next() % 3 != 0 || step < 10 {
                    let key = last.saturating_add(next() % spread);
                    r.push(key, step);
                    b.push(std::cmp::Reverse(key));
                } else {
                    let got = r.pop().map(|e| e.0);
                    assert_eq!(got, b.pop().map(|k| k.0), "spread {spread} step {step}");
                    last = got.unwrap_or(last);
                }
            }
            while let Some(std::cmp::Reverse(k)) = b.pop() {
                assert_eq!(r.pop().map(|e| e.0), Some(k));
            }
            assert_eq!(r.pop(), None);
        }
    }

    #[test]
    fn keys_keep_the_order_of_times() {
        let ts = [i64::MIN, -5, -1, 0, 1, 42, i64::MAX];
        for w in ts.windows(2) {
            assert!(key_of(w[0]) < key_of(w[1]));
        }
        for t in ts {
            assert_eq!(time_of(key_of(t)), t);
        }
    }
}
