//! Log tails after power loss (`format-spec.md` §4, issue 19 item 5): zeros or garbage after
//! the last valid record are the end of the log — ignored by a read-only open, truncated by
//! a writable one, a note for `check` — while damage that a valid record follows, or a final
//! record whose length field is damaged, stays an error.

use serde_json::json;
use std::fs;
use std::path::Path;
use tgms_engine::store::{check, WAL_FILE};
use tgms_engine::{Error, Op, Store};

fn build(dir: &Path, n: i64) -> Store {
    let mut s = Store::create(dir).unwrap();
    for i in 0..n {
        let op = Op::from_json(&json!({"op":"assert_edge","src":format!("a{i}"),"dst":"b",
            "rel_type":"R","vt_s":i,"props":{"i":i}}));
        s.write_at(1000 + i, vec![op]).unwrap();
    }
    s
}

/// `(start, end)` of every record in a log image.
fn spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut at = 16;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        v.push((at, at + 12 + len));
        at += 12 + len;
    }
    v
}

/// A deterministic byte stream for garbage tails.
fn garbage(n: usize, seed: u64) -> Vec<u8> {
    let mut r = tgms_testkit::Rng::new(seed);
    (0..n).map(|_| r.next_u64() as u8).collect()
}

#[test]
fn zero_and_garbage_tails_end_the_log() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let s = build(&dir, 5);
    let digest = s.digest();
    drop(s);
    let wal = dir.join(WAL_FILE);
    let clean = fs::read(&wal).unwrap();
    let sizes = [1usize, 11, 12, 13, 100, 4096, (1 << 20) + 7];
    for (k, &n) in sizes.iter().enumerate() {
        for tail in [vec![0u8; n], garbage(n, 7 + k as u64)] {
            let mut b = clean.clone();
            b.extend_from_slice(&tail);
            fs::write(&wal, &b).unwrap();
            let zeros = tail.iter().all(|&x| x == 0);
            let ctx = format!("{n} bytes of {}", if zeros { "zeros" } else { "garbage" });
            let ro = Store::open_read_only(&dir).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(ro.digest(), digest, "{ctx}");
            assert_eq!(
                fs::read(&wal).unwrap(),
                b,
                "{ctx}: read-only open changed the log"
            );
            let rep = check(&dir).unwrap();
            assert!(rep.problems.is_empty(), "{ctx}: {:?}", rep.problems);
            assert!(
                rep.notes.iter().any(|n| n.contains("torn final record")),
                "{ctx}: {:?}",
                rep.notes
            );
            let rw = Store::open(&dir).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(rw.digest(), digest, "{ctx}");
            drop(rw);
            assert_eq!(fs::read(&wal).unwrap(), clean, "{ctx}: tail not truncated");
        }
    }
}

#[test]
fn a_record_torn_into_preallocated_zeros_is_dropped() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let s = build(&dir, 4);
    let before_last = {
        let t = tempfile::tempdir().unwrap();
        build(&t.path().join("s"), 3).digest()
    };
    drop(s);
    let wal = dir.join(WAL_FILE);
    let bytes = fs::read(&wal).unwrap();
    let sp = spans(&bytes);
    // The last batch record (second to last record) written only partly, the rest of the
    // preallocated extent zeros: the frame may be whole, the payload is not.
    let (start, end) = sp[sp.len() - 2];
    for keep in [start + 3, start + 12, start + 20, end - 1] {
        let mut b = bytes[..keep].to_vec();
        b.resize(end + 4096, 0);
        fs::write(&wal, &b).unwrap();
        let ro = Store::open_read_only(&dir).unwrap_or_else(|e| panic!("keep {keep}: {e}"));
        assert_eq!(ro.digest(), before_last, "keep {keep}");
    }
}

#[test]
fn damage_followed_by_a_valid_record_stays_an_error() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    drop(build(&dir, 5));
    let wal = dir.join(WAL_FILE);
    let bytes = fs::read(&wal).unwrap();
    let sp = spans(&bytes);
    for (rec, &(start, end)) in sp.iter().enumerate().take(sp.len() - 1) {
        // The record zero-filled (frame and payload), and only its frame zero-filled.
        for zero_to in [end, start + 12] {
            let mut b = bytes.clone();
            b[start..zero_to].fill(0);
            fs::write(&wal, &b).unwrap();
            for e in [Store::open_read_only(&dir).err(), Store::open(&dir).err()] {
                match e {
                    Some(Error::LogDamaged { record, offset, .. }) => {
                        assert_eq!((record, offset), (rec as u64, start as u64));
                    }
                    other => panic!("record {rec} zeroed to {zero_to}: {other:?}"),
                }
            }
            assert_eq!(fs::read(&wal).unwrap(), b, "a refused open changed the log");
            assert!(!check(&dir).unwrap().problems.is_empty());
        }
    }
}

#[test]
fn a_final_record_with_a_damaged_length_is_an_error_not_a_tail() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    drop(build(&dir, 3));
    let wal = dir.join(WAL_FILE);
    let bytes = fs::read(&wal).unwrap();
    let (start, _) = *spans(&bytes).last().unwrap();
    // Every single-bit flip of the final record's length and length checksum.
    for bit in 0..64 {
        let mut b = bytes.clone();
        b[start + bit / 8] ^= 1 << (bit % 8);
        fs::write(&wal, &b).unwrap();
        let e = Store::open(&dir).err();
        assert!(
            matches!(e, Some(Error::LogDamaged { .. })),
            "bit {bit}: {e:?}"
        );
        assert_eq!(
            fs::read(&wal).unwrap(),
            b,
            "bit {bit}: the log was truncated"
        );
    }
}
