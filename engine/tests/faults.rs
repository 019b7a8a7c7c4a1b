//! I/O-error injection at the engine's fault hooks (issue 19 item 3, `format-spec.md` W6):
//! a batch whose record write or sync fails has an unknown outcome and poisons the handle;
//! a failure after the record is synced does not unsay the commit; batch keys make a retry
//! idempotent across reopen, flush, compaction and replay; and at every sync point of a
//! keyed workload with flushes and compactions, retrying with the same keys leaves every
//! batch in the store exactly once.

use serde_json::json;
use std::path::Path;
use tgms_engine::fault::{set_sync_hook, set_write_hook};
use tgms_engine::store::replay;
use tgms_engine::{Error, Op, Options, Store};
use tgms_testkit::Shared;

fn batch(i: u64) -> Vec<Op> {
    vec![Op::from_json(
        &json!({"op":"assert_node","uid":format!("n{i}"),"label":"N","props":{"i":i},"vt_s":0}),
    )]
}

fn key(i: u64) -> Option<String> {
    Some(format!("k{i}"))
}

/// Versions of node `n{i}` in the store (all belief states).
fn copies(s: &Store, i: u64) -> usize {
    s.snapshot()
        .history_of(&tgms_engine::Identity::Node(format!("n{i}")))
        .len()
}

/// Fails the `n`-th sync of this thread (1-based) with EIO; counts every sync.
fn fail_sync_at(n: u64) -> Shared<u64> {
    let seen = Shared::new(0);
    let s = seen.clone();
    set_sync_hook(Some(Box::new(move |_| {
        s.set(s.get() + 1);
        if s.get() == n {
            Err(std::io::Error::from_raw_os_error(5))
        } else {
            Ok(())
        }
    })));
    seen
}

#[test]
fn a_failed_batch_sync_has_an_unknown_outcome_and_a_keyed_retry_is_idempotent() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let mut s = Store::create(&dir).unwrap();
    s.write_keyed(batch(0), key(0)).unwrap();
    let seen = fail_sync_at(1);
    let e = s.write_keyed(batch(1), key(1)).err().unwrap();
    let Error::OutcomeUnknown {
        seq, tt, batch_key, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!((*seq, batch_key.as_deref()), (1, Some("k1")));
    let tt = *tt;
    // Poisoned: no more work, and no further sync on the same descriptor.
    let after = seen.get();
    assert!(matches!(s.write(batch(2)), Err(Error::Poisoned)));
    assert!(matches!(s.flush(), Err(Error::Poisoned)));
    assert_eq!(seen.get(), after, "a poisoned handle synced again");
    drop(s);
    set_sync_hook(None);
    // The record reached the file (only its sync failed): the reopened store applied it.
    let mut s = Store::open(&dir).unwrap();
    assert_eq!((s.stats().n_batches, copies(&s, 1)), (2, 1));
    let c = s.write_keyed(batch(1), key(1)).unwrap();
    assert!(c.duplicate);
    assert_eq!((c.tt, c.seq), (tt, 1));
    assert_eq!((s.stats().n_batches, copies(&s, 1)), (2, 1));
}

#[test]
fn a_failed_record_write_commits_nothing_and_the_retry_applies() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let mut s = Store::create(&dir).unwrap();
    s.write_keyed(batch(0), key(0)).unwrap();
    set_write_hook(Some(Box::new(|_, _| {
        Err(std::io::Error::from_raw_os_error(28))
    })));
    let e = s.write_keyed(batch(1), key(1)).err().unwrap();
    set_write_hook(None);
    assert!(matches!(e, Error::OutcomeUnknown { seq: 1, .. }), "{e:?}");
    drop(s);
    let mut s = Store::open(&dir).unwrap();
    assert_eq!(copies(&s, 1), 0);
    let c = s.write_keyed(batch(1), key(1)).unwrap();
    assert!(!c.duplicate);
    assert_eq!((s.stats().n_batches, copies(&s, 1)), (2, 1));
}

#[test]
fn keys_survive_flush_compaction_reopen_and_replay() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let mut s = Store::create(&dir).unwrap();
    for i in 0..4 {
        s.write_keyed(batch(i), key(i)).unwrap();
        s.flush().unwrap();
    }
    s.compact().unwrap();
    s.write_keyed(batch(4), key(4)).unwrap();
    s.close().unwrap();
    // A lazy open replays only what follows the checkpoint; the keys before it come from
    // the log.
    let mut s = Store::open(&dir).unwrap();
    for i in 0..5 {
        assert!(s.write_keyed(batch(i), key(i)).unwrap().duplicate, "k{i}");
    }
    assert_eq!(s.stats().n_batches, 5);
    // A failed batch's key acknowledges its failure again.
    let bad = vec![Op::from_json(
        &json!({"op":"retract","ref":{"kind":"node","uid":"zz"},"t":1,"reason":"r"}),
    )];
    let first = s.write_keyed(bad.clone(), key(9)).unwrap();
    let again = s.write_keyed(bad, key(9)).unwrap();
    assert!(first.result.is_err() && again.result.is_err() && again.duplicate);
    assert_eq!(
        first.result.err().unwrap().message(),
        again.result.err().unwrap().message()
    );
    drop(s);
    let out = d.path().join("copy");
    let mut r = Store::create(&out).unwrap();
    replay(&dir, &mut r, &mut |_| {}).unwrap();
    assert!(r.write_keyed(batch(3), key(3)).unwrap().duplicate);
    assert!(s_digest(&dir) == r.digest());
}

fn s_digest(dir: &Path) -> String {
    Store::open_read_only(dir).unwrap().digest()
}

/// The keyed workload: 12 batches, a flush after every third, compaction after every 6th.
fn keyed_workload(dir: &Path, acked: &mut Vec<u64>) -> Result<(), Error> {
    let opts = Options {
        flush_rows: Some(0),
        compact_segments: Some(0),
        ..Options::default()
    };
    let mut s = Store::open_with(dir, opts)?;
    for i in 0..12 {
        if acked.contains(&i) {
            continue;
        }
        let c = s.write_keyed(batch(i), key(i))?;
        c.into_result()?;
        acked.push(i);
        if i % 3 == 2 {
            s.flush()?;
        }
        if i % 6 == 5 {
            s.compact()?;
        }
    }
    s.close()
}

/// Fails the `n`-th write or rename of this thread (1-based) with ENOSPC; counts them all.
fn fail_write_at(n: u64) -> Shared<u64> {
    let seen = Shared::new(0);
    let s = seen.clone();
    set_write_hook(Some(Box::new(move |_, _| {
        s.set(s.get() + 1);
        if s.get() == n {
            Err(std::io::Error::from_raw_os_error(28))
        } else {
            Ok(())
        }
    })));
    seen
}

#[test]
fn at_every_write_and_rename_keyed_retries_leave_each_batch_exactly_once() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    Store::create(&dir).unwrap();
    let seen = fail_write_at(0);
    keyed_workload(&dir, &mut Vec::new()).unwrap();
    let points = seen.get();
    set_write_hook(None);
    // 12 log appends of batches and 12 of outcomes, 4 flush segments with their manifest
    // records, 2 compactions (image, fresh manifest, rename), the first manifest.
    assert!(points > 30, "{points} write points");
    let mut unknown = 0;
    for k in 1..=points {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("s");
        Store::create(&dir).unwrap();
        let mut acked = Vec::new();
        fail_write_at(k);
        let r = keyed_workload(&dir, &mut acked);
        set_write_hook(None);
        unknown += u32::from(matches!(r, Err(Error::OutcomeUnknown { .. })));
        let s = Store::open_read_only(&dir).unwrap_or_else(|e| panic!("write {k}: {e}"));
        for &i in &acked {
            assert_eq!(copies(&s, i), 1, "write {k}: acknowledged batch {i}");
        }
        drop(s);
        keyed_workload(&dir, &mut acked).unwrap_or_else(|e| panic!("write {k}: retry: {e}"));
        let s = Store::open_read_only(&dir).unwrap();
        for i in 0..12 {
            assert_eq!(copies(&s, i), 1, "write {k}: batch {i} after the retry");
        }
    }
    assert_eq!(unknown, 12, "one unknown outcome per batch append");
}

#[test]
fn at_every_sync_point_keyed_retries_leave_each_batch_exactly_once() {
    // Count the sync points of a clean run.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    Store::create(&dir).unwrap();
    let seen = fail_sync_at(0);
    keyed_workload(&dir, &mut Vec::new()).unwrap();
    let points = seen.get();
    set_sync_hook(None);
    assert!(points > 20, "{points} sync points");
    let (mut unknown, mut after_commit) = (0, 0);
    for k in 1..=points {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("s");
        Store::create(&dir).unwrap();
        let mut acked = Vec::new();
        fail_sync_at(k);
        let r = keyed_workload(&dir, &mut acked);
        set_sync_hook(None);
        match &r {
            Err(Error::OutcomeUnknown { .. }) => unknown += 1,
            Err(_) => after_commit += 1,
            Ok(()) => {}
        }
        // Every acknowledged batch survived the failure.
        let s = Store::open_read_only(&dir).unwrap();
        for &i in &acked {
            assert_eq!(copies(&s, i), 1, "sync {k}: acknowledged batch {i}");
        }
        drop(s);
        // The client retries everything not acknowledged, with the same keys.
        keyed_workload(&dir, &mut acked).unwrap_or_else(|e| panic!("sync {k}: retry: {e}"));
        let s = Store::open_read_only(&dir).unwrap();
        for i in 0..12 {
            assert_eq!(copies(&s, i), 1, "sync {k}: batch {i} after the retry");
        }
        assert_eq!(s.stats().n_batches, 12, "sync {k}");
    }
    assert!(
        unknown >= 12 && after_commit > 0,
        "{unknown} unknown, {after_commit} later"
    );
}
