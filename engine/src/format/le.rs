//! Little-endian fixed-width reads at a byte offset, the one reader every decoder of the
//! format uses (`wal`, `manifest`, `seg`, `base`, `bitmap`). A read whose bytes run past
//! the end gives 0 (`u128_at` reads the bytes there are): decoders check lengths first, so
//! only a damaged file reaches that, and it decodes to a value the checks refuse instead of
//! a panic.

/// The `u16` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at.wrapping_add(2))
        .and_then(|s| s.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}

/// The `u32` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at.wrapping_add(4))
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The `u64` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at.wrapping_add(8))
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// The `i64` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn i64_at(b: &[u8], at: usize) -> i64 {
    u64_at(b, at) as i64
}

/// Up to 16 bytes at `at` as a `u128`, bytes past the end read as 0 (the bit-unpacking of
/// a column's last values reads past them).
#[inline]
pub(crate) fn u128_at(b: &[u8], at: usize) -> u128 {
    if let Some(w) = b.get(at..at.wrapping_add(16)) {
        // One unaligned load (the usual case: not within 16 bytes of the end).
        return u128::from_le_bytes(w.try_into().unwrap_or([0; 16]));
    }
    let mut buf = [0u8; 16];
    if let Some(s) = b.get(at..) {
        let n = s.len().min(16);
        buf[..n].copy_from_slice(&s[..n]);
    }
    u128::from_le_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_little_endian_and_zero_past_the_end() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u16_at(&b, 0), 0x0201);
        assert_eq!(u32_at(&b, 1), 0x05040302);
        assert_eq!(u64_at(&b, 1), 0x0908070605040302);
        assert_eq!(i64_at(&[0xff; 8], 0), -1);
        assert_eq!(u32_at(&b, 6), 0, "3 bytes left");
        assert_eq!(u64_at(&b, usize::MAX), 0, "no overflow");
        assert_eq!(u128_at(&b, 7), 0x0908, "the bytes there are");
        assert_eq!(u128_at(&b, 20), 0);
    }
}
