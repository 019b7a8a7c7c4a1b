//! Membership tests on a roaring bitmap in the portable serialization (`format-spec.md`
//! §6.4, codec ROARING), read in place from a mapped chunk: the closed rows of a full image.
//!
//! The writer serializes with the `roaring` crate; this reader parses only the headers at
//! open (`O(containers)`, one container per 65,536 rows) and answers `contains` with two
//! binary searches or one bit test, allocating nothing. It trusts the container bodies
//! (covered by the chunk's crc32); `seg::verify` deserializes the whole bitmap with the
//! crate and compares it with the close rows.

use crate::error::CorruptionKind;
use crate::format::le::{u16_at, u32_at, u64_at};
use crate::format::search::first_not_below;

/// The cookie of the portable format without run containers.
pub const COOKIE: u32 = 12346;
/// Values in a bitmap container (more than an array container may hold).
const ARRAY_MAX: usize = 4096;
/// Bytes of a bitmap container.
const BITMAP_LEN: usize = 8192;

/// A parsed bitmap: the position of its headers in the file.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RoaringView {
    /// File offset of the serialization (its cookie).
    at: usize,
    /// Number of containers.
    n: usize,
    /// Number of values.
    len: u64,
}

impl RoaringView {
    /// Parses the bitmap that fills `b[at..end]`: cookie, container count, keys strictly
    /// ascending, and every container's offset exactly where the previous one ends (an
    /// array of `cardinality` u16 values up to 4,096 values, else an 8,192-byte bitmap),
    /// the last ending at `end`.
    pub(crate) fn parse(b: &[u8], at: usize, end: usize) -> Result<RoaringView, CorruptionKind> {
        if end > b.len() || at + 8 > end {
            return Err("roaring bitmap shorter than its header".into());
        }
        if u32_at(b, at) != COOKIE {
            return Err("roaring bitmap cookie is not 12346 (no run containers)".into());
        }
        let n = u32_at(b, at + 4) as usize;
        if n > 1 << 16 || at + 8 + 8 * n > end {
            return Err(format!("roaring bitmap of {n} containers does not fit the chunk").into());
        }
        let mut expect = 8 + 8 * n;
        let mut len = 0u64;
        let mut prev_key: Option<u16> = None;
        for i in 0..n {
            let key = u16_at(b, at + 8 + 4 * i);
            let card = usize::from(u16_at(b, at + 10 + 4 * i)) + 1;
            if prev_key.is_some_and(|p| p >= key) {
                return Err(format!("roaring container {i}: keys not strictly ascending").into());
            }
            prev_key = Some(key);
            if u32_at(b, at + 8 + 4 * n + 4 * i) as usize != expect {
                return Err(format!("roaring container {i}: offset is not contiguous").into());
            }
            expect += if card > ARRAY_MAX {
                BITMAP_LEN
            } else {
                2 * card
            };
            len += card as u64;
        }
        if at + expect != end {
            return Err("roaring containers do not end at the chunk's end".into());
        }
        Ok(RoaringView { at, n, len })
    }

    /// The number of values.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// True when `x` is in the bitmap.
    pub(crate) fn contains(&self, b: &[u8], x: u32) -> bool {
        let (key, low) = ((x >> 16) as u16, x as u16);
        let key_of = |i: usize| u16_at(b, self.at + 8 + 4 * i);
        let lo = first_not_below(self.n, |i| key_of(i) < key);
        if lo == self.n || key_of(lo) != key {
            return false;
        }
        let card = usize::from(u16_at(b, self.at + 10 + 4 * lo)) + 1;
        let body = self.at + u32_at(b, self.at + 8 + 4 * self.n + 4 * lo) as usize;
        if card > ARRAY_MAX {
            let word = body + 8 * usize::from(low / 64);
            let w = u64_at(b, word);
            return w >> (low % 64) & 1 == 1;
        }
        let at = first_not_below(card, |i| u16_at(b, body + 2 * i) < low);
        at < card && u16_at(b, body + 2 * at) == low
    }
}

/// The portable serialization of the set of `rows` (ascending).
pub(crate) fn serialize(rows: impl IntoIterator<Item = u32>) -> Vec<u8> {
    let set = roaring::RoaringBitmap::from_sorted_iter(rows).unwrap_or_default();
    let mut out = Vec::with_capacity(set.serialized_size());
    // Writing into a Vec cannot fail.
    let _ = set.serialize_into(&mut out);
    out
}

/// Deserializes and fully validates a portable bitmap (`tgms check`): its values ascending.
pub(crate) fn values(b: &[u8]) -> Result<Vec<u32>, CorruptionKind> {
    roaring::RoaringBitmap::deserialize_from(b)
        .map(|s| s.into_iter().collect())
        .map_err(|e| format!("roaring bitmap does not decode: {e}").into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(vals: &[u32]) {
        let mut v = vals.to_vec();
        v.sort_unstable();
        v.dedup();
        let mut b = vec![0xAB; 3];
        b.extend(serialize(v.iter().copied()));
        let view = RoaringView::parse(&b, 3, b.len()).unwrap();
        assert_eq!(view.len(), v.len() as u64);
        assert_eq!(values(&b[3..]).unwrap(), v);
        let set: std::collections::BTreeSet<u32> = v.iter().copied().collect();
        let probes = v
            .iter()
            .flat_map(|&x| [x, x.wrapping_add(1), x.wrapping_sub(1), x ^ 0x1_0000])
            .chain([0, 1, 65_535, 65_536, u32::MAX]);
        for x in probes {
            assert_eq!(view.contains(&b, x), set.contains(&x), "{x}");
        }
    }

    #[test]
    fn array_and_bitmap_containers_answer_like_a_set() {
        check(&[]);
        check(&[0]);
        check(&[u32::MAX]);
        // 5,000 values in one container: a bitmap container; 4,096: still an array.
        check(&(0..5_000).map(|i| i * 13).collect::<Vec<_>>());
        check(&(70_000..70_000 + 4_096).collect::<Vec<_>>());
        check(&(0..200_000).step_by(3).collect::<Vec<_>>());
    }

    proptest! {
        #[test]
        fn random_sets_answer_like_a_set(v in prop::collection::vec(0u32..400_000, 0..3000)) {
            check(&v);
        }
    }

    /// Every truncation and every single-byte change of a serialized bitmap either fails to
    /// parse or still answers without panicking.
    #[test]
    fn damage_never_panics() {
        let v: Vec<u32> = (0..6_000)
            .map(|i| i * 7)
            .chain([200_000, 200_003])
            .collect();
        let b = serialize(v.iter().copied());
        for cut in 0..b.len() {
            assert!(RoaringView::parse(&b[..cut], 0, cut).is_err(), "cut {cut}");
        }
        for i in (0..b.len()).step_by(7).chain(0..40) {
            let mut d = b.clone();
            d[i] ^= 0x5A;
            if let Ok(view) = RoaringView::parse(&d, 0, d.len()) {
                for x in [0, 7, 8, 41_993, 200_000, 200_003, u32::MAX] {
                    let _ = view.contains(&d, x);
                }
            }
        }
        assert!(RoaringView::parse(&b, 0, b.len() + 1).is_err());
    }
}
