//! The check record of a base image (`format-spec.md` §6.6): a 64-byte file
//! `seg-NNNNNNNN.checked` beside a full image, saying that an image of exactly this length
//! and BLAKE3 digest passed the structural checks of `base/structure.rs` (and its chunk
//! crcs) in a writer's open. A later open whose manifest record gives the same length and
//! digest, and whose bytes hash to it, maps the image without running those checks again:
//! the checks are a function of the bytes, so they would pass again.
//!
//! The record is a cache, never state: a missing, torn or foreign one (another length,
//! digest, sequence number or [`CHECKS_VERSION`]) only means the checks run.

use crate::format::le::{u16_at, u32_at, u64_at};

/// Bumped whenever the structural checks (or the chunk checks they rely on) change, so a
/// record written by an older checker is not trusted by a newer one.
pub const CHECKS_VERSION: u16 = 1;

/// The record's magic.
const MAGIC: &[u8; 8] = b"TGMSCHK\0";

/// Bytes of a record: magic (8), [`CHECKS_VERSION`] (u16 LE), 6 zero bytes, the
/// sequence number and the file length (u64 LE each), the BLAKE3 digest (32), then the
/// crc32 of the 64 bytes before it (u32 LE).
pub const RECORD_LEN: usize = 68;

/// The file name of the check record of segment `seq`. Not a segment name (`seg_seq` is
/// `None` for it), so readers that predate it ignore it.
pub fn record_name(seq: u64) -> String {
    format!("seg-{seq:08}.checked")
}

/// The sequence number a check record's file name encodes, if it is one.
pub fn record_seq(name: &str) -> Option<u64> {
    crate::format::manifest::seq_in(name, ".checked")
}

/// The record of an image `(seq, file_len, blake3)` whose checks passed.
pub fn encode(seq: u64, file_len: u64, blake3: &[u8; 32]) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[..8].copy_from_slice(MAGIC);
    r[8..10].copy_from_slice(&CHECKS_VERSION.to_le_bytes());
    r[16..24].copy_from_slice(&seq.to_le_bytes());
    r[24..32].copy_from_slice(&file_len.to_le_bytes());
    r[32..64].copy_from_slice(blake3);
    let crc = crc32fast::hash(&r[..64]);
    r[64..].copy_from_slice(&crc.to_le_bytes());
    r
}

/// True when `bytes` is the record [`encode`] gives for `(seq, file_len, blake3)` under
/// this [`CHECKS_VERSION`]; anything else (short, torn, another image or checker) is false.
pub fn holds(bytes: &[u8], seq: u64, file_len: u64, blake3: &[u8; 32]) -> bool {
    bytes.len() == RECORD_LEN
        && bytes.get(..8) == Some(MAGIC.as_slice())
        && u16_at(bytes, 8) == CHECKS_VERSION
        && u32_at(bytes, 64) == crc32fast::hash(bytes.get(..64).unwrap_or_default())
        && u64_at(bytes, 16) == seq
        && u64_at(bytes, 24) == file_len
        && bytes.get(32..64) == Some(blake3.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_holds_for_its_image_only() {
        let d = [7u8; 32];
        let r = encode(2, 1000, &d);
        assert!(holds(&r, 2, 1000, &d));
        assert!(!holds(&r, 3, 1000, &d));
        assert!(!holds(&r, 2, 1001, &d));
        assert!(!holds(&r, 2, 1000, &[8u8; 32]));
        assert!(!holds(&r[..RECORD_LEN - 1], 2, 1000, &d));
        // Any flipped bit: the crc (or a field) refuses it.
        for byte in 0..RECORD_LEN {
            let mut f = r;
            f[byte] ^= 0x10;
            assert!(!holds(&f, 2, 1000, &d), "byte {byte}");
        }
        // Another checker version.
        let mut v = r;
        v[8..10].copy_from_slice(&(CHECKS_VERSION + 1).to_le_bytes());
        let crc = crc32fast::hash(&v[..64]);
        v[64..].copy_from_slice(&crc.to_le_bytes());
        assert!(!holds(&v, 2, 1000, &d));
    }

    #[test]
    fn record_names_are_not_segment_names() {
        assert_eq!(record_name(2), "seg-00000002.checked");
        assert_eq!(record_seq("seg-00000002.checked"), Some(2));
        assert_eq!(
            crate::format::manifest::seg_seq("seg-00000002.checked"),
            None
        );
        assert_eq!(record_seq("seg-00000002.tgs"), None);
        assert_eq!(record_seq("seg-2.checked"), None);
    }
}
