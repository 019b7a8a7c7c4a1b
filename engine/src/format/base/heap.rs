//! The string heaps of a base image (uids, strings) and the hash tables over the heaps
//! and the contents that writers look names and contents up in.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

/// A string heap: its string bytes `[data, data + len)` and the offsets column.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Heap {
    pub(super) n: usize,
    pub(super) data: usize,
    pub(super) len: usize,
    pub(super) offs: Col,
    pub(super) order: Col,
}

/// What the reads of a heap decode once they are many: its offsets and its order (chunks
/// 66, 67), when small enough (see [`Base::cached_str`]; empty otherwise), and the hash
/// table of its ids (`Base::find_hashed`), built for writers.
#[derive(Default)]
pub(super) struct HeapCaches {
    offs: Warm<Vec<u32>>,
    order: Warm<Vec<u32>>,
    hash: OnceLock<Vec<u64>>,
}

/// A decoding of a column that is built once enough reads of the column were counted
/// ([`warm_after`]): until then reads go to the column in place. A fresh process's point
/// query reads a few dozen values of a heap; decoding all of them first (10^7 offsets at
/// 10^8 events) cost it 10 ms.
#[derive(Default)]
struct Warm<T> {
    reads: AtomicUsize,
    cell: OnceLock<T>,
}

impl<T> Warm<T> {
    /// The decoding, once built; counts this read and builds it when `after` reads were
    /// counted before.
    fn get(&self, after: usize, build: impl FnOnce() -> T) -> Option<&T> {
        if let Some(v) = self.cell.get() {
            return Some(v);
        }
        if self.reads.fetch_add(1, AtomicOrdering::Relaxed) < after {
            return None;
        }
        Some(self.cell.get_or_init(build))
    }

    /// The decoding, built now if it was not.
    fn force(&self, build: impl FnOnce() -> T) -> &T {
        self.cell.get_or_init(build)
    }
}

/// The reads of a heap of `n` strings that go in place before its decodings are built:
/// a read in place costs a few random accesses, about what decoding 64 values costs, so
/// the reads before the decoding cost at most about as much as the decoding itself.
fn warm_after(n: usize) -> usize {
    n / 64 + 1024
}

/// An open-addressing hash table of the ids `0..n` (given their hashes in id order):
/// linear probing, at most two thirds full. Each slot holds an id with its hash tag
/// (`tag << 32 | id`, the tag the high 32 bits of the hash; `u64::MAX` an empty slot), so a
/// probe compares the names or contents of equal tags only, not of every id along its
/// sequence (8 to 16 bytes an id). An id is found by [`probe`]; ids inserted earlier come
/// first along a probe sequence.
fn id_table(n: usize, hashes: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut t = vec![u64::MAX; (n + n / 2).next_power_of_two().max(16)];
    let mask = t.len() - 1;
    for (id, h) in hashes.enumerate() {
        // At most two thirds full: the probe finds an empty slot.
        let mut at = h & mask;
        while let Some(slot) = t.get_mut(at) {
            if *slot == u64::MAX {
                *slot = (h as u64 >> 32) << 32 | id as u64;
                break;
            }
            at = (at + 1) & mask;
        }
    }
    t
}

/// The first id of table `t` along the probe sequence of hash `h` whose tag is `h`'s and
/// that `is` accepts.
fn probe(t: &[u64], h: usize, is: impl Fn(u32) -> bool) -> Option<u32> {
    let mask = t.len().checked_sub(1)?;
    let tag = h as u64 >> 32;
    let mut at = h & mask;
    loop {
        match *t.get(at)? {
            u64::MAX => return None,
            e if e >> 32 == tag && is(e as u32) => return Some(e as u32),
            _ => at = (at + 1) & mask,
        }
    }
}

fn hash_bytes(b: &[u8]) -> usize {
    use std::hash::Hasher;
    let mut x = rustc_hash::FxHasher::default();
    x.write(b);
    x.finish() as usize
}

fn hash_content(c: &Content) -> usize {
    use std::hash::{Hash, Hasher};
    let mut x = rustc_hash::FxHasher::default();
    c.hash(&mut x);
    x.finish() as usize
}

/// The most strings a heap may hold for its offsets to be decoded into memory (16 MB).
const CACHED_HEAP_STRINGS: usize = 1 << 22;

impl Base {
    fn heap_str<'a>(&'a self, h: &Heap, id: u32) -> &'a str {
        let b = self.b();
        let i = id as usize;
        if i >= h.n {
            return "";
        }
        let (a, e) = h.offs.pair(b, i);
        let (Ok(a), Ok(e)) = (usize::try_from(a), usize::try_from(e)) else {
            return "";
        };
        if a > e || e > h.len {
            return "";
        }
        b.get(h.data + a..h.data + e)
            .and_then(|s| std::str::from_utf8(s).ok())
            .unwrap_or("")
    }

    /// Dictionary `d`'s heap and its decodings.
    fn heap(&self, d: Dict) -> (&Heap, &HeapCaches) {
        match d {
            Dict::Uids => (&self.uids, &self.caches.uid_heap),
            Dict::Strings => (&self.strings, &self.caches.string_heap),
        }
    }

    fn heap_find(&self, d: Dict, s: &str) -> Option<u32> {
        let b = self.b();
        let (h, caches) = self.heap(d);
        let cache = &caches.offs;
        // The order, decoded beside the offsets (4 bytes a string) once reads are many.
        let order = caches.order.get(warm_after(h.n), || {
            if h.n > CACHED_HEAP_STRINGS {
                return Vec::new();
            }
            id_list(h.order.range(b, 0, h.n))
        });
        let (mut lo, mut hi) = (0usize, h.n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = order
                .and_then(|o| o.get(mid))
                .copied()
                .unwrap_or_else(|| h.order.id(b, mid));
            match self.cached_bytes(h, cache, id).cmp(s.as_bytes()) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return ((id as usize) < h.n).then_some(id),
            }
        }
        None
    }

    /// The uid string of uid id `id` ("" when out of range).
    pub(crate) fn uid_name(&self, id: u32) -> &str {
        self.cached_str(&self.uids, &self.caches.uid_heap.offs, id)
    }

    /// Heap string `id` through the heap's offsets decoded into `cache` once reads are many
    /// ([`Warm`]; 4 bytes per string, for heaps of at most [`CACHED_HEAP_STRINGS`] strings
    /// under 4 GiB: every edge read names two uids, and a random read of a DFORS offset
    /// costs several cache misses); larger heaps are read in place.
    fn cached_str<'a>(&'a self, h: &Heap, cache: &'a Warm<Vec<u32>>, id: u32) -> &'a str {
        std::str::from_utf8(self.cached_bytes(h, cache, id)).unwrap_or("")
    }

    /// The bytes of heap string `id` (see [`Base::cached_str`]); searches compare these
    /// (the heap was checked to be UTF-8 at open).
    fn cached_bytes<'a>(&'a self, h: &Heap, cache: &'a Warm<Vec<u32>>, id: u32) -> &'a [u8] {
        let offs = cache
            .get(warm_after(h.n), || self.offsets(h))
            .map_or(&[][..], |v| v);
        self.bytes_through(h, offs, id)
    }

    /// Heap `h`'s offsets as `u32` (empty for a heap too large for them, which is read in
    /// place).
    fn offsets(&self, h: &Heap) -> Vec<u32> {
        if h.n > CACHED_HEAP_STRINGS || h.len >= u32::MAX as usize {
            return Vec::new();
        }
        let v = h.offs.range(self.b(), 0, h.n + 1);
        v.into_iter()
            .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
            .collect()
    }

    /// The bytes of heap string `id` through its decoded offsets `offs` (in place where
    /// they do not hold it).
    fn bytes_through<'a>(&'a self, h: &Heap, offs: &[u32], id: u32) -> &'a [u8] {
        let i = id as usize;
        match (offs.get(i), offs.get(i + 1)) {
            (Some(&a), Some(&e)) if a <= e && e as usize <= h.len => self
                .b()
                .get(h.data + a as usize..h.data + e as usize)
                .unwrap_or(&[]),
            _ => self.heap_str(h, id).as_bytes(),
        }
    }

    /// The id of name `s` of dictionary `d` through a hash table of the
    /// heap's ids ([`id_table`]), built by the first call; a heap too large for its offsets
    /// to be cached is searched in its order instead. Writers look up every name they write
    /// (two uids an event); reads keep the binary search, which needs no table and so costs
    /// a fresh process nothing.
    pub(crate) fn find_hashed(&self, d: Dict, s: &str) -> Option<u32> {
        let (h, caches) = self.heap(d);
        let table = caches.hash.get_or_init(|| {
            if h.n > CACHED_HEAP_STRINGS {
                return Vec::new();
            }
            // Every string is read to hash it: the offsets are decoded first.
            let offs = caches.offs.force(|| self.offsets(h));
            let hashes = (0..h.n as u32).map(|id| hash_bytes(self.bytes_through(h, offs, id)));
            id_table(h.n, hashes)
        });
        if table.is_empty() {
            return self.heap_find(d, s);
        }
        let offs = caches.offs.force(|| self.offsets(h));
        probe(table, hash_bytes(s.as_bytes()), |id| {
            self.bytes_through(h, offs, id) == s.as_bytes()
        })
    }

    /// The id of the image's content `c` (the first, were it stored twice), through a hash
    /// table of the content ids built by the first call ([`id_table`]: 8 to 16 bytes a
    /// content, the columns read a stretch at a time). Writers look up every content they
    /// add, so that the store keeps one record per content (invariant S4).
    pub(crate) fn find_content(&self, c: Content) -> Option<u32> {
        use chunk::*;
        let n = self.marks.contents as usize;
        let table = self.caches.content_hash.get_or_init(|| {
            let mut hashes = Vec::with_capacity(n);
            for a in (0..n).step_by(1 << 16) {
                let e = (a + (1 << 16)).min(n);
                let [l, p, s, v] = [CONTENT_LABEL, CONTENT_PROPS, CONTENT_SOURCE, CONTENT_PROV]
                    .map(|id| self.chunk_range(id, a, e));
                for i in 0..e - a {
                    let at = |col: &[i64]| col.get(i).map_or(NONE, |&x| x as u32);
                    hashes.push(hash_content(&Content {
                        label: at(&l),
                        props: at(&p),
                        source: at(&s),
                        provenance: at(&v),
                    }));
                }
            }
            id_table(n, hashes.into_iter())
        });
        probe(table, hash_content(&c), |id| self.content(id) == c)
    }

    /// The id of uid `s`, by binary search in the uid order.
    pub(crate) fn uid_id(&self, s: &str) -> Option<u32> {
        self.heap_find(Dict::Uids, s)
    }

    /// Heap string `id` ("" when out of range).
    pub(crate) fn string(&self, id: u32) -> &str {
        self.cached_str(&self.strings, &self.caches.string_heap.offs, id)
    }

    /// The id of heap string `s`.
    pub(crate) fn string_id(&self, s: &str) -> Option<u32> {
        self.heap_find(Dict::Strings, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_compares_only_equal_tags() {
        // Five ids on one probe sequence (equal low bits), two tags.
        let hashes = [
            0x1_0000_0007usize,
            0x2_0000_0007,
            0x1_0000_0007,
            0x2_0000_0007,
            7,
        ];
        let t = id_table(hashes.len(), hashes.iter().copied());
        assert_eq!(t.len(), 16);
        let seen = std::cell::RefCell::new(Vec::new());
        let find = |h: usize, want: u32| {
            seen.borrow_mut().clear();
            probe(&t, h, |id| {
                seen.borrow_mut().push(id);
                id == want
            })
        };
        assert_eq!(find(0x2_0000_0007, 3), Some(3));
        assert_eq!(*seen.borrow(), [1, 3], "ids 0, 2 and 4 have other tags");
        assert_eq!(find(0x1_0000_0007, 2), Some(2));
        assert_eq!(*seen.borrow(), [0, 2]);
        assert_eq!(find(7, 9), None);
        assert_eq!(*seen.borrow(), [4]);
        assert_eq!(find(0x3_0000_0007, 0), None, "no id has tag 3");
        assert!(seen.borrow().is_empty());
        assert_eq!(find(0x1_0000_0008, 0), None, "another sequence");
    }
}
