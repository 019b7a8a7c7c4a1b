//! A closing writer seals its store as one mapped image (issue 26 item 4, `Store::close`):
//! the next open maps it and replays no log; a crash at any durability point of that close
//! still recovers every acknowledged batch from the log; a writer that never closes (killed)
//! leaves a log the next open replays, a torn last record included.

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use tgms_engine::fault::set_sync_hook;
use tgms_engine::store::CLOSE_IMAGE_ROWS;
use tgms_engine::{Op, Options, Store};
use tgms_testkit::Shared;

const BATCHES: i64 = 8;
const EVENTS_PER_BATCH: i64 = 9_500;

fn opts() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

/// Batch `b` of the workload: `EVENTS_PER_BATCH` ingested events over 500 nodes.
fn batch(b: i64) -> Vec<Op> {
    let events: Vec<Value> = (0..EVENTS_PER_BATCH)
        .map(|i| {
            let k = b * EVENTS_PER_BATCH + i;
            json!({"src": format!("n{}", k % 500), "dst": format!("n{}", (k * 7 + 3) % 500),
                "rel_type": if k % 3 == 0 { "S" } else { "R" }, "vt_s": k})
        })
        .collect();
    vec![Op::from_json(
        &json!({"op": "ingest_events", "events": events}),
    )]
}

/// Writes the workload into a fresh store at `dir`; returns the open writer and the digest
/// after each batch.
fn build(dir: &Path) -> (Store, Vec<String>) {
    let mut s = Store::create_with(dir, opts()).unwrap();
    let mut digests = Vec::new();
    for b in 0..BATCHES {
        s.commit(Some(1000 + b), batch(b)).unwrap();
        digests.push(s.digest());
    }
    assert!(
        s.memtable_rows() >= CLOSE_IMAGE_ROWS,
        "the workload must be large enough to seal as an image"
    );
    (s, digests)
}

fn copy_files(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_cleanly_closed_store_reopens_mapped_without_replay() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let (s, digests) = build(&dir);
    s.close().unwrap();
    let r = Store::open_read_only(&dir).unwrap();
    assert!(
        r.is_lazy(),
        "the closed store is not served from a mapped image"
    );
    assert_eq!(r.memtable_rows(), 0, "the open replayed a log tail");
    assert_eq!(r.segments().len(), 1);
    assert_eq!(r.digest(), *digests.last().unwrap());
    drop(r);
    // A writer reopening it replays nothing either, and keeps writing.
    let mut w = Store::open_with(&dir, opts()).unwrap();
    assert_eq!(w.memtable_rows(), 0);
    w.commit(Some(2000), batch(BATCHES)).unwrap();
    let d = w.digest();
    w.close().unwrap();
    assert_eq!(Store::open_read_only(&dir).unwrap().digest(), d);
}

#[test]
fn a_crash_while_closing_recovers_every_acknowledged_batch() {
    let t = tempfile::tempdir().unwrap();
    // The durability points of a clean close (the workload itself syncs nothing: no_sync
    // skips syncs, so count with syncs on for the close only).
    let count = Shared::new(0usize);
    let c = count.clone();
    let (s, digests) = build(&t.path().join("clean"));
    let want = digests.last().unwrap().clone();
    let dir = t.path().join("clean");
    drop(s);
    let s = Store::open(&dir).unwrap();
    set_sync_hook(Some(Box::new(move |_| {
        c.set(c.get() + 1);
        Ok(())
    })));
    s.close().unwrap();
    set_sync_hook(None);
    let points = count.get();
    assert!(points >= 3, "only {points} sync points in a sealing close");
    for k in 0..points {
        let run = t.path().join(format!("run{k}"));
        let image = t.path().join(format!("image{k}"));
        let (s, _) = build(&run);
        drop(s);
        let s = Store::open(&run).unwrap();
        let n = Shared::new(0usize);
        let (n2, r2, i2) = (n.clone(), run.clone(), image.clone());
        set_sync_hook(Some(Box::new(move |_| {
            let i = n2.get();
            n2.set(i + 1);
            if i == k {
                copy_files(&r2, &i2);
                return Err(std::io::Error::other("injected crash"));
            }
            Ok(())
        })));
        let closed = s.close();
        set_sync_hook(None);
        assert!(closed.is_err(), "crash point {k} was not reached");
        let r = Store::open_read_only(&image).unwrap();
        assert_eq!(r.digest(), want, "crash point {k}: read-only open");
        drop(r);
        let w = Store::open(&image).unwrap();
        assert_eq!(w.digest(), want, "crash point {k}: writable open");
        // Its own close seals it.
        w.close().unwrap();
        let r = Store::open_read_only(&image).unwrap();
        assert!(r.is_lazy() && r.memtable_rows() == 0, "crash point {k}");
        assert_eq!(r.digest(), want);
    }
}

#[test]
fn a_killed_writer_leaves_a_log_the_next_open_replays() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let (s, digests) = build(&dir);
    // Killed: the files as they are now, no close.
    let image = t.path().join("killed");
    copy_files(&dir, &image);
    drop(s);
    let r = Store::open_read_only(&image).unwrap();
    assert_eq!(r.digest(), *digests.last().unwrap());
    assert!(r.memtable_rows() > 0, "nothing was replayed");
    drop(r);
    // Killed in the middle of appending the last batch: its record is torn.
    let torn = t.path().join("torn");
    copy_files(&dir, &torn);
    let wal = torn.join("wal.log");
    let len = fs::metadata(&wal).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    let w = Store::open(&torn).unwrap();
    assert_eq!(w.digest(), digests[digests.len() - 2]);
    assert!(
        w.memtable_rows() >= CLOSE_IMAGE_ROWS,
        "the prefix must still seal as an image"
    );
    w.close().unwrap();
    let r = Store::open_read_only(&torn).unwrap();
    assert!(r.is_lazy() && r.memtable_rows() == 0);
    assert_eq!(r.digest(), digests[digests.len() - 2]);
}
