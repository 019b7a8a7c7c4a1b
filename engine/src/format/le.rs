//! The format's one little-endian reader, in two forms every decoder uses (`wal`,
//! `manifest`, `seg`, `base`, `bitmap`):
//!
//! - fixed-width reads at a byte offset (`u32_at`, …, random access into mapped columns).
//!   A read whose bytes run past the end gives 0 (`u128_at` reads the bytes there are):
//!   decoders check lengths first, so only a damaged file reaches that, and it decodes to
//!   a value the checks refuse instead of a panic;
//! - [`Cursor`], a bounds-checked cursor over one record, payload or chunk (sequential
//!   decodes), whose every read either succeeds or names the byte where the bytes ran out.

use crate::error::CorruptionKind;

/// The `N` bytes at `at`, or zeros when the bytes end first.
#[inline]
fn bytes_at<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..at.wrapping_add(N))
        .and_then(|s| s.try_into().ok())
        .unwrap_or([0; N])
}

/// The byte at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u8_at(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

/// The `u16` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes_at(b, at))
}

/// The `u32` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes_at(b, at))
}

/// The `u64` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(b, at))
}

/// The `i64` at `at`, or 0 when the bytes end first.
#[inline]
pub(crate) fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(bytes_at(b, at))
}

/// Up to 16 bytes at `at` as a `u128`, bytes past the end read as 0 (the bit-unpacking of
/// a column's last values reads past them).
#[inline]
pub(crate) fn u128_at(b: &[u8], at: usize) -> u128 {
    if b.len() >= at.saturating_add(16) {
        // One unaligned load (the usual case: not within 16 bytes of the end).
        return u128::from_le_bytes(bytes_at(b, at));
    }
    let mut buf = [0u8; 16];
    if let Some(s) = b.get(at..) {
        buf.iter_mut().zip(s).for_each(|(d, &x)| *d = x);
    }
    u128::from_le_bytes(buf)
}

/// A decode error at byte offset `.0` of the bytes a [`Cursor`] reads.
pub(crate) type AtErr = (usize, CorruptionKind);

/// The error of a payload decoder from a cursor's: the problem with its byte offset.
impl From<AtErr> for CorruptionKind {
    fn from((at, kind): AtErr) -> Self {
        CorruptionKind::AtByte {
            at,
            kind: Box::new(kind),
        }
    }
}

/// A bounds-checked little-endian cursor over `b`, at byte `pos`. A read that needs more
/// bytes than are left fails with [`CorruptionKind::Truncated`] at the read's start and
/// moves nothing.
pub(crate) struct Cursor<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `b`.
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor { b, pos: 0 }
    }
    /// The bytes not read yet.
    pub(crate) fn left(&self) -> usize {
        self.b.len().saturating_sub(self.pos)
    }
    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], AtErr> {
        let left = self.left();
        match self.b.get(self.pos..self.pos.saturating_add(n)) {
            Some(s) if n <= left => {
                self.pos += n;
                Ok(s)
            }
            _ => Err((self.pos, CorruptionKind::Truncated { need: n, left })),
        }
    }
    pub(crate) fn u8(&mut self) -> Result<u8, AtErr> {
        let [x] = *self.array::<1>()?;
        Ok(x)
    }
    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], AtErr> {
        let at = self.pos;
        let s = self.take(N)?;
        s.try_into().map_err(|_| {
            (
                at,
                CorruptionKind::Truncated {
                    need: N,
                    left: s.len(),
                },
            )
        })
    }
    pub(crate) fn u32(&mut self) -> Result<u32, AtErr> {
        Ok(u32_at(self.take(4)?, 0))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, AtErr> {
        Ok(u64_at(self.take(8)?, 0))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, AtErr> {
        Ok(i64_at(self.take(8)?, 0))
    }
    /// An unsigned LEB128 varint of at most 10 bytes.
    pub(crate) fn varint(&mut self) -> Result<u64, AtErr> {
        let at = self.pos;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err((at, "varint longer than 10 bytes".into()))
    }
    /// Succeeds when every byte was read.
    pub(crate) fn done(&self) -> Result<(), AtErr> {
        match self.left() {
            0 => Ok(()),
            left => Err((self.pos, CorruptionKind::LeftOver { left })),
        }
    }
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

    #[test]
    fn the_cursor_names_where_the_bytes_ran_out() {
        let b = [0x2a, 1, 0, 0, 0, 0x96, 0x01, 9];
        let mut c = Cursor::new(&b);
        assert_eq!(c.u8(), Ok(0x2a));
        assert_eq!(c.u32(), Ok(1));
        assert_eq!(c.varint(), Ok(150));
        let short = Err((7, CorruptionKind::Truncated { need: 8, left: 1 }));
        assert_eq!(c.i64(), short, "a failed read moves nothing");
        assert_eq!(c.pos, 7);
        assert_eq!(c.done(), Err((7, CorruptionKind::LeftOver { left: 1 })));
        assert_eq!(c.u8(), Ok(9));
        assert_eq!(c.done(), Ok(()));
        assert_eq!(c.take(usize::MAX).map_err(|e| e.0), Err(8), "no overflow");
        let long = [0x80u8; 11];
        assert_eq!(Cursor::new(&long).varint().map_err(|e| e.0), Err(0));
        let k: CorruptionKind = (3, CorruptionKind::LeftOver { left: 2 }).into();
        assert_eq!(k.to_string(), "at payload byte 3: 2 bytes left over");
    }
}
