//! Crash injection at every fsync point (`format-spec.md` §9.6): a mixed workload (asserts,
//! ingest, a failed batch, corrections and retractions of sealed rows, flushes, a
//! compaction, a closing writer) runs with a sync hook that, at its k-th durability point,
//! copies the store files as they are (the crash image) and fails the sync. The image, opened
//! read-only (served from the mapped image and the flush segments above it where the layout
//! allows) and reopened for writing, must equal the store after some prefix of the batches
//! that includes every acknowledged one.

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use tgms_engine::fault::set_sync_hook;
use tgms_engine::store::check;
use tgms_engine::{Op, Options, Store};
use tgms_testkit::Shared;

enum Step {
    Batch(i64, Vec<Value>),
    Flush,
    Compact,
    /// Close the writer (sealing the log tail); the workload's last step.
    Close,
}

fn workload() -> Vec<Step> {
    use Step::*;
    vec![
        Batch(
            1000,
            vec![
                json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
            ],
        ),
        Batch(
            1001,
            vec![
                json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","vt_s":10,"vt_e":20}),
            ],
        ),
        Flush,
        Batch(
            1002,
            vec![json!({"op":"ingest_events","events":[
                {"src":"a","dst":"c","rel_type":"MSG","vt_s":30},
                {"src":"c","dst":"a","rel_type":"MSG","vt_s":31,"vt_e":40}]})],
        ),
        Batch(
            1003,
            vec![json!({"op":"retract","ref":{"kind":"node","uid":"nope"},"t":1,"reason":"x"})],
        ),
        Batch(
            1004,
            vec![
                json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix"}),
            ],
        ),
        Flush,
        Batch(
            1005,
            vec![
                json!({"op":"retract","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"t":15,"reason":"gone"}),
            ],
        ),
        Compact,
        Batch(
            1006,
            vec![json!({"op":"assert_node","uid":"d","label":"M","vt_s":3,"vt_e":4})],
        ),
        Flush,
        Batch(
            1007,
            vec![
                json!({"op":"correct","ref":{"kind":"node","uid":"d"},"props":{"q":1},"vt_s":3,"vt_e":4,"reason":"r"}),
            ],
        ),
        Close,
    ]
}

fn opts() -> Options {
    Options {
        flush_rows: Some(0),
        compact_segments: Some(0),
        ..Options::default()
    }
}

/// Runs the workload; returns how many batches were acknowledged (logged) before the
/// first error.
fn run(dir: &Path) -> usize {
    let mut acked = 0;
    let Ok(mut s) = Store::create_with(dir, opts()) else {
        return 0;
    };
    for st in workload() {
        let r = match st {
            Step::Batch(tt, b) => {
                let ops: Vec<Op> = b.iter().map(Op::from_json).collect();
                s.commit(Some(tt), ops).map(|_| acked += 1)
            }
            Step::Flush => s.flush().map(|_| ()),
            Step::Compact => s.compact().map(|_| ()),
            Step::Close => {
                let _ = s.close();
                return acked;
            }
        };
        if r.is_err() {
            break;
        }
    }
    acked
}

fn copy_files(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    if let Ok(rd) = fs::read_dir(src) {
        for e in rd {
            let e = e.unwrap();
            if e.file_name() != "LOCK" {
                fs::copy(e.path(), dst.join(e.file_name())).unwrap();
            }
        }
    }
}

#[test]
fn crash_at_every_fsync_point_recovers_an_acknowledged_prefix() {
    let t = tempfile::tempdir().unwrap();
    // Digests after each prefix of the batches, from a plain store (no flushes).
    let mut prefix = vec![];
    {
        let mut s = Store::create_with(&t.path().join("plain"), opts()).unwrap();
        prefix.push(s.digest());
        for st in workload() {
            if let Step::Batch(tt, b) = st {
                let _ = s.commit(Some(tt), b.iter().map(Op::from_json).collect());
                prefix.push(s.digest());
            }
        }
    }
    // Count the durability points of a clean run.
    let count = Shared::new(0usize);
    let c = count.clone();
    set_sync_hook(Some(Box::new(move |_| {
        c.set(c.get() + 1);
        Ok(())
    })));
    assert_eq!(run(&t.path().join("clean")), prefix.len() - 1);
    let points = count.get();
    assert!(points > 20, "only {points} sync points");
    let (mut outcomes, mut overlays) = (std::collections::BTreeMap::new(), 0);
    for k in 0..points {
        for lose_unsynced in [false, true] {
            let got_acked = crash_at(t.path(), k, lose_unsynced, &prefix, &mut overlays);
            if let Some(d) = got_acked {
                *outcomes.entry(d).or_insert(0) += 1;
            }
        }
    }
    // Crash images of an image with a flush segment above it and no log tail are read
    // without decoding the image (the workload leaves several).
    assert!(overlays >= 2, "only {overlays} crash images served lazily");
    // Both outcomes occur: a crash before the batch sync (batch lost, never acknowledged)
    // and after its write (replayed).
    assert!(
        outcomes.contains_key(&0) && outcomes.contains_key(&1),
        "{outcomes:?}"
    );
    eprintln!("{points} crash points, outcomes (prefix − acknowledged → count): {outcomes:?}");
}

/// Runs the workload crashing at durability point `k`; reopens the crash image and checks
/// it. With `lose_unsynced`, the image's log also loses every byte appended after its last
/// sync (outcome records, a batch record whose sync was the crash point) — the pessimistic
/// crash. Returns `reopened prefix − acknowledged`, or `None` when no log existed yet.
fn crash_at(
    root: &Path,
    k: usize,
    lose_unsynced: bool,
    prefix: &[String],
    overlays: &mut usize,
) -> Option<usize> {
    let dir = root.join(format!("run{k}-{lose_unsynced}"));
    let image = root.join(format!("image{k}-{lose_unsynced}"));
    let n = Shared::new(0usize);
    let wal_synced = Shared::new(0u64);
    let (n2, d2, i2, ws) = (n.clone(), dir.clone(), image.clone(), wal_synced.clone());
    set_sync_hook(Some(Box::new(move |path| {
        let i = n2.get();
        n2.set(i + 1);
        if i == k {
            copy_files(&d2, &i2);
            if lose_unsynced {
                let wal = i2.join("wal.log");
                if let Ok(f) = fs::OpenOptions::new().write(true).open(&wal) {
                    f.set_len(ws.get()).unwrap();
                }
            }
            return Err(std::io::Error::other("injected crash"));
        }
        if path.ends_with("wal.log") {
            ws.set(fs::metadata(path).map(|m| m.len()).unwrap_or(0));
        }
        Ok(())
    })));
    let acked = run(&dir);
    set_sync_hook(None);
    let ctx = format!("crash point {k} (lose unsynced: {lose_unsynced})");
    let wal_ok = fs::metadata(image.join("wal.log")).is_ok_and(|m| m.len() >= 16);
    if !wal_ok {
        // Crash before the log's header was durable: nothing was acknowledged.
        assert_eq!(acked, 0, "{ctx}");
        let _ = fs::remove_dir_all(&image);
        let _ = fs::remove_dir_all(&dir);
        return None;
    }
    // Read-only first (it modifies nothing): the same prefix rules.
    let ro = Store::open_read_only(&image)
        .unwrap_or_else(|e| panic!("{ctx}: read-only open failed: {e:?}"));
    let got = ro.stats().n_batches as usize;
    assert_eq!(
        ro.digest(),
        prefix[got],
        "{ctx}: read-only state is not prefix {got}"
    );
    assert!(
        got == acked || got == acked + 1,
        "{ctx}: read-only at prefix {got}"
    );
    *overlays += usize::from(ro.is_lazy() && ro.segments().len() > 1);
    drop(ro);
    let s =
        Store::open_with(&image, opts()).unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e:?}"));
    // Failed batches leave the rows unchanged, so the digest alone cannot tell prefixes
    // apart: the batch count says which prefix this is, the digest must then match it.
    let got = s.stats().n_batches as usize;
    assert_eq!(s.digest(), prefix[got], "{ctx}: state is not prefix {got}");
    assert!(
        got == acked || got == acked + 1,
        "{ctx}: {acked} acknowledged, reopened at prefix {got}"
    );
    drop(s);
    let rep = check(&image).unwrap();
    assert!(rep.problems.is_empty(), "{ctx}: {:?}", rep.problems);
    fs::remove_dir_all(&image).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    Some(got - acked)
}
