//! What a salvaging read of a damaged log reports (`format-spec.md` §4.2, issue 19): the
//! batches below the manifest's checkpoint that the readable log lacks, by sequence number;
//! the intact batches after the checkpoint, counted from its record boundary; and the offset
//! beyond which the loss cannot be counted. Expected values come from the write sequence
//! of each test, not from the reader.

use serde_json::json;
use std::path::Path;
use tgms_engine::format::wal::{self, Record};
use tgms_engine::store::{read_log_with, LogMode, Salvage, WAL_FILE};
use tgms_engine::{Op, Options, Store};

/// A store with `before` batches, a flush (the checkpoint), then `after` more batches;
/// returns the byte offset of every batch record, in order.
fn store(dir: &Path, before: usize, after: usize) -> Vec<u64> {
    let mut s = Store::create_with(
        dir,
        Options {
            flush_rows: Some(0),
            compact_segments: Some(0),
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..before + after {
        if i == before {
            assert!(s.flush().unwrap());
        }
        let op = json!({"op": "assert_edge", "src": format!("a{i}"), "dst": "b",
            "rel_type": "R", "vt_s": i});
        s.write(vec![Op::from_json(&op)]).unwrap();
    }
    drop(s);
    let mut at = Vec::new();
    wal::scan(&dir.join(WAL_FILE), |_, offset, rec| {
        if matches!(rec, Record::Batch { .. }) {
            at.push(offset);
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(at.len(), before + after);
    at
}

/// Flips a payload byte of the record at `offset` (its frame stays valid, its payload
/// checksum fails, and valid records follow: damage, not a torn tail).
fn damage(dir: &Path, offset: u64) {
    let path = dir.join(WAL_FILE);
    let mut b = std::fs::read(&path).unwrap();
    b[(offset + wal::FRAME_LEN) as usize + 2] ^= 0x40;
    std::fs::write(&path, b).unwrap();
}

fn salvage(dir: &Path) -> (Vec<i64>, Salvage) {
    let mut tts = Vec::new();
    let rep = read_log_with(dir, LogMode::Salvage, |b| {
        tts.push(b.tt);
        Ok(())
    })
    .unwrap();
    (tts, rep)
}

#[test]
fn damage_below_the_checkpoint_names_the_lost_batches_and_counts_the_ones_after_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let at = store(&dir, 5, 3);
    damage(&dir, at[2]);
    let (tts, rep) = salvage(&dir);
    assert_eq!(tts.len(), 2, "batches 0 and 1 are read");
    assert_eq!(rep.good_bytes, at[2]);
    assert_eq!(rep.lost_batch_seqs(), Some((2, 5)));
    assert_eq!(rep.batches_after_checkpoint, 3);
    assert_eq!(rep.unknown_beyond_offset, None);
    assert_eq!(rep.batches_lost(), 6);
    let v = rep.to_json();
    assert_eq!(v["lost_batch_seqs"], json!({"first": 2, "end": 5}));
    assert_eq!(v["lost_count_exact"], true);
    assert_eq!(v["batches_lost_at_least"], 6);
}

#[test]
fn damage_after_the_checkpoint_too_makes_the_count_a_lower_bound() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let at = store(&dir, 4, 4);
    damage(&dir, at[1]);
    damage(&dir, at[6]);
    let (tts, rep) = salvage(&dir);
    assert_eq!(tts.len(), 1);
    assert_eq!(rep.lost_batch_seqs(), Some((1, 4)));
    // Batches 4 and 5 lie intact after the checkpoint; batch 6 is damaged.
    assert_eq!(rep.batches_after_checkpoint, 2);
    assert_eq!(rep.unknown_beyond_offset, Some(at[6]));
    assert_eq!(rep.to_json()["lost_count_exact"], false);
}

#[test]
fn a_log_cut_below_the_checkpoint_cannot_count_what_followed_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let at = store(&dir, 4, 2);
    let ckpt = tgms_engine::store::checkpoint(&dir).unwrap().unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join(WAL_FILE))
        .unwrap()
        .set_len(at[3])
        .unwrap();
    let (tts, rep) = salvage(&dir);
    assert_eq!(tts.len(), 3);
    assert_eq!(rep.lost_batch_seqs(), Some((3, 4)));
    assert_eq!(rep.batches_after_checkpoint, 0);
    assert_eq!(rep.unknown_beyond_offset, Some(ckpt.wal_offset));
}

#[test]
fn damage_after_an_intact_checkpoint_is_an_unknown_count_from_the_damage() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let at = store(&dir, 2, 4);
    damage(&dir, at[3]);
    let (tts, rep) = salvage(&dir);
    assert_eq!(tts.len(), 3);
    assert_eq!(rep.lost_batch_seqs(), None);
    assert_eq!(rep.unknown_beyond_offset, Some(at[3]));
    assert!(!rep.is_complete());
}
