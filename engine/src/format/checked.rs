//! The check record of a base image (`format-spec.md` §6.6): a 100-byte file
//! `seg-NNNNNNNN.checked` beside a full image, saying that an image of exactly this length
//! and BLAKE3 digest passed the structural checks of `base/structure.rs` (and its chunk
//! crcs) in a writer's open, and, when the writer could tell, which file held those bytes
//! ([`FileIdentity`]). A later open whose manifest record gives the same length and digest
//! maps the image without running those checks again: the checks are a function of the
//! bytes, so they would pass again. When the image file is still the one the record names
//! (same device, inode, length, modification and change times), the open does not hash it
//! either: any write to the file since would have changed its change time.
//!
//! The record is a cache, never state: a missing, torn or foreign one (another length,
//! digest, sequence number or [`CHECKS_VERSION`]) only means the checks run.

use crate::format::le::{u16_at, u32_at, u64_at};
use std::fs::Metadata;

/// Bumped whenever the structural checks (or the chunk checks they rely on) change, so a
/// record written by an older checker is not trusted by a newer one.
pub const CHECKS_VERSION: u16 = 1;

/// The record's magic.
const MAGIC: &[u8; 8] = b"TGMSCHK\0";

/// Bytes of a record: magic (8), [`CHECKS_VERSION`] (u16 LE), 6 zero bytes, the sequence
/// number and the file length (u64 LE each), the BLAKE3 digest (32), the file's identity
/// (device, inode, then modification and change times in ns since 1970, u64 / i64 LE each;
/// all zero for none), then the crc32 of the 96 bytes before it (u32 LE). A 68-byte record
/// of format 1.7 (no identity) is not one.
pub const RECORD_LEN: usize = 100;

/// Where the crc32 of a record sits (it covers the bytes before it).
const CRC_AT: usize = 96;

/// What the filesystem says about a file that changes whenever its bytes do: where it is
/// (device and inode), its length, and its modification and change times (ns since 1970).
/// The change time cannot be set by a program: any write, truncation or rename onto the
/// path moves it (or the inode) on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    /// The device the file is on.
    pub dev: u64,
    /// Its inode number.
    pub ino: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Its modification time, ns since 1970-01-01 UTC.
    pub mtime_ns: i64,
    /// Its change time (of its bytes or its metadata), ns since 1970-01-01 UTC.
    pub ctime_ns: i64,
}

impl FileIdentity {
    /// The identity of the file `m` describes; `None` where the platform has no inode and
    /// change time (then every open hashes the image).
    pub fn of(m: &Metadata) -> Option<FileIdentity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
            Some(FileIdentity {
                dev: m.dev(),
                ino: m.ino(),
                len: m.len(),
                mtime_ns: ns(m.mtime(), m.mtime_nsec()),
                ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = m;
            None
        }
    }

    /// The identity to record for a file whose identity was `self` when its bytes were
    /// read and hashed, given `marker_ns`, the modification time the filesystem gave a file
    /// created just before `self` was taken: the identity when the file's last change is
    /// strictly older than the marker, else `None`. A file changed in the same clock tick
    /// as the marker could be changed again within that tick after it was read without its
    /// times moving (filesystem clocks are coarse: a few ms here), so its identity proves
    /// nothing; a later writable open records it (git's "racily clean" rule).
    pub fn settled(self, marker_ns: i64) -> Option<FileIdentity> {
        (self.ctime_ns < marker_ns && self.mtime_ns < marker_ns).then_some(self)
    }
}

/// The file name of the check record of segment `seq`. Not a segment name (`seg_seq` is
/// `None` for it), so readers that predate it ignore it.
pub fn record_name(seq: u64) -> String {
    format!("seg-{seq:08}.checked")
}

/// The sequence number a check record's file name encodes, if it is one.
pub fn record_seq(name: &str) -> Option<u64> {
    crate::format::manifest::seq_in(name, ".checked")
}

/// The record of an image `(seq, file_len, blake3)` whose checks passed, held in the file
/// `identity` names when there is one.
pub fn encode(
    seq: u64,
    file_len: u64,
    blake3: &[u8; 32],
    identity: Option<FileIdentity>,
) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[..8].copy_from_slice(MAGIC);
    r[8..10].copy_from_slice(&CHECKS_VERSION.to_le_bytes());
    r[16..24].copy_from_slice(&seq.to_le_bytes());
    r[24..32].copy_from_slice(&file_len.to_le_bytes());
    r[32..64].copy_from_slice(blake3);
    if let Some(f) = identity {
        r[64..72].copy_from_slice(&f.dev.to_le_bytes());
        r[72..80].copy_from_slice(&f.ino.to_le_bytes());
        r[80..88].copy_from_slice(&f.mtime_ns.to_le_bytes());
        r[88..96].copy_from_slice(&f.ctime_ns.to_le_bytes());
    }
    let crc = crc32fast::hash(&r[..CRC_AT]);
    r[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    r
}

/// What a record that holds says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holds {
    /// The file that held the checked bytes, when the writer could tell.
    pub identity: Option<FileIdentity>,
}

/// `Some` when `bytes` is a record [`encode`] gives for `(seq, file_len, blake3)` under
/// this [`CHECKS_VERSION`], with the identity it names; `None` for anything else (short,
/// torn, of format 1.7, another image or checker).
pub fn holds(bytes: &[u8], seq: u64, file_len: u64, blake3: &[u8; 32]) -> Option<Holds> {
    let ok = bytes.len() == RECORD_LEN
        && bytes.get(..8) == Some(MAGIC.as_slice())
        && u16_at(bytes, 8) == CHECKS_VERSION
        && u32_at(bytes, CRC_AT) == crc32fast::hash(bytes.get(..CRC_AT).unwrap_or_default())
        && u64_at(bytes, 16) == seq
        && u64_at(bytes, 24) == file_len
        && bytes.get(32..64) == Some(blake3.as_slice());
    if !ok {
        return None;
    }
    let named = bytes
        .get(64..CRC_AT)
        .is_some_and(|b| b.iter().any(|&x| x != 0));
    let identity = named.then(|| FileIdentity {
        dev: u64_at(bytes, 64),
        ino: u64_at(bytes, 72),
        len: file_len,
        mtime_ns: u64_at(bytes, 80) as i64,
        ctime_ns: u64_at(bytes, 88) as i64,
    });
    Some(Holds { identity })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: FileIdentity = FileIdentity {
        dev: 64769,
        ino: 1234567,
        len: 1000,
        mtime_ns: 1_796_000_000_123_456_789,
        ctime_ns: 1_796_000_000_223_456_789,
    };

    #[test]
    fn a_record_holds_for_its_image_only() {
        let d = [7u8; 32];
        for identity in [None, Some(FILE)] {
            let r = encode(2, 1000, &d, identity);
            assert_eq!(holds(&r, 2, 1000, &d), Some(Holds { identity }));
            assert_eq!(holds(&r, 3, 1000, &d), None);
            assert_eq!(holds(&r, 2, 1001, &d), None);
            assert_eq!(holds(&r, 2, 1000, &[8u8; 32]), None);
            assert_eq!(holds(&r[..RECORD_LEN - 1], 2, 1000, &d), None);
            // Any flipped bit: the crc (or a field) refuses it.
            for byte in 0..RECORD_LEN {
                let mut f = r;
                f[byte] ^= 0x10;
                assert_eq!(holds(&f, 2, 1000, &d), None, "byte {byte}");
            }
            // Another checker version.
            let mut v = r;
            v[8..10].copy_from_slice(&(CHECKS_VERSION + 1).to_le_bytes());
            let crc = crc32fast::hash(&v[..CRC_AT]);
            v[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(holds(&v, 2, 1000, &d), None);
        }
        // A record of format 1.7: magic, version, seq, length and digest, crc at 64.
        let mut old = [0u8; 68];
        old[..8].copy_from_slice(MAGIC);
        old[8..10].copy_from_slice(&CHECKS_VERSION.to_le_bytes());
        old[16..24].copy_from_slice(&2u64.to_le_bytes());
        old[24..32].copy_from_slice(&1000u64.to_le_bytes());
        old[32..64].copy_from_slice(&d);
        let crc = crc32fast::hash(&old[..64]);
        old[64..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(holds(&old, 2, 1000, &d), None);
    }

    #[test]
    fn an_identity_is_recorded_only_when_older_than_the_marker() {
        let later = FILE.ctime_ns + 1;
        assert_eq!(FILE.settled(later), Some(FILE));
        // Changed in the marker's tick (or after it): nothing is recorded.
        assert_eq!(FILE.settled(FILE.ctime_ns), None);
        assert_eq!(FILE.settled(FILE.mtime_ns), None);
        let odd = FileIdentity {
            mtime_ns: later,
            ..FILE
        };
        assert_eq!(odd.settled(later), None);
    }

    #[test]
    fn a_file_identity_follows_writes() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        let id = |p: &std::path::Path| FileIdentity::of(&std::fs::metadata(p).unwrap());
        let a = id(&p);
        assert_eq!(a, id(&p));
        if let Some(a) = a {
            assert_eq!(a.len, 3);
            // A file put in its place is another inode.
            let q = t.path().join("g");
            std::fs::write(&q, b"abc").unwrap();
            std::fs::rename(&q, &p).unwrap();
            assert_ne!(id(&p), Some(a));
        }
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
