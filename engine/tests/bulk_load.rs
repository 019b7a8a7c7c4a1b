//! A bulk load into a fresh store (`Store::bulk_load`, `engine/src/bulk.rs`) builds its
//! rows in bulk and writes them as one sorted image: the store it leaves must be the one the
//! same logged batches give through the per-event write rules (its log replayed into a
//! fresh store): the same digest, statistics and image bytes, with merges inside the load,
//! with batches that end the bulk build (discriminators), with failed batches, and after a
//! failed merge.

use std::path::Path;
use tgms_engine::op::{EventEnd, IngestEvents};
use tgms_engine::store::replay;
use tgms_engine::{Event, Op, Options, Store};
use tgms_testkit::Rng;

fn opts() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

/// `n` random events over `nodes` uids (names of mixed length, so name order is not id
/// order), three rel types, times in no order, some with an explicit end or props (runs
/// of equal props), repeated events, and with `disc` a discriminator on one event.
fn events(g: &mut Rng, n: usize, nodes: u64, disc: bool) -> Vec<Event> {
    let mut out = Vec::with_capacity(n);
    let mut props = None;
    for i in 0..n {
        let name = |g: &mut Rng| format!("u{}", g.below(nodes) * 7 % 1000);
        let mut e = Event::instant(
            name(g),
            name(g),
            ["rt", "msg", "likes"][g.below(3) as usize].to_string(),
            1_000 + g.below(5_000) as i64,
        );
        match g.below(10) {
            0 => e.vt_e = EventEnd::At(e.vt_s + 1 + g.below(300) as i64),
            1 => e.vt_e = EventEnd::Null,
            _ => {}
        }
        if g.below(4) == 0 {
            if g.below(3) == 0 {
                props = Some(format!("{{\"w\":{}}}", g.below(4)));
            }
            e.props = props.clone();
        }
        if g.below(20) == 0 {
            if let Some(prev) = out.last() {
                e = Event::clone(prev);
            }
        }
        if disc && i == n / 2 {
            e.disc = Some("d1".into());
        }
        out.push(e);
    }
    out
}

/// The only segment file of `dir`.
fn image(dir: &Path) -> Vec<u8> {
    let segs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tgs"))
        .collect();
    assert_eq!(segs.len(), 1, "{}: {segs:?}", dir.display());
    std::fs::read(&segs[0]).unwrap()
}

/// Replays `from`'s log into a fresh store `to` (the per-event path, at the logged
/// times), compacts both and checks that it equals `from`: digest, statistics, and the
/// image's bytes after the header (which holds the segment's sequence number).
fn same_as_replayed(from: &Path, to: &Path) {
    let mut a = Store::open_with(from, opts()).unwrap();
    // A no-op on the image a bulk build leaves (one current image covering the log); a
    // load whose build ended early also holds a flush segment.
    a.compact().unwrap();
    let mut b = Store::create_with(to, opts()).unwrap();
    replay(from, &mut b, &mut |_| {}).unwrap();
    b.compact().unwrap();
    assert_eq!(a.digest(), b.digest());
    assert_eq!(a.stats(), b.stats());
    drop((a, b));
    let (x, y) = (image(from), image(to));
    const HEADER: usize = tgms_engine::format::seg::SEG_HEADER_LEN;
    assert!(
        x.len() == y.len() && x[HEADER..] == y[HEADER..],
        "images differ"
    );
    assert!(tgms_engine::store::check(from).unwrap().problems.is_empty());
}

/// Loads `chunks` into a fresh store at `dir` in one bulk load of bound `bound`; returns
/// whether each chunk was built in bulk, and the chunks' results.
fn load(dir: &Path, bound: u64, chunks: Vec<Vec<Event>>) -> (Vec<bool>, Vec<bool>) {
    let mut s = Store::create_with(dir, opts()).unwrap();
    let (mut bulk, mut ok) = (Vec::new(), Vec::new());
    s.bulk_load(bound, |ld| {
        for c in chunks {
            bulk.push(ld.is_bulk_build());
            ok.push(ld.ingest_events(c, "Node", &mut |_| {}).is_ok());
        }
    })
    .unwrap();
    s.close().unwrap();
    (bulk, ok)
}

#[test]
fn a_bulk_load_writes_the_store_the_write_rules_write() {
    for seed in 1..=12u64 {
        let t = tempfile::tempdir().unwrap();
        let mut g = Rng::new(seed);
        let chunks: Vec<Vec<Event>> = (0..1 + g.below(8))
            .map(|_| {
                let (n, nodes) = (1 + g.below(400) as usize, 50 + g.below(400));
                events(&mut g, n, nodes, false)
            })
            .collect();
        // Bounds from "merge after every batch" to "one build".
        let bound = [1, 150, 100_000][seed as usize % 3];
        let (bulk, ok) = load(&t.path().join("a"), bound, chunks);
        assert!(bulk.iter().all(|&b| b), "seed {seed}: {bulk:?}");
        assert!(ok.iter().all(|&b| b));
        same_as_replayed(&t.path().join("a"), &t.path().join("b"));
    }
}

/// A load in time order (SNAP files, most exports): each merge places the rows built
/// after the image's, in their own order (`compact.rs` `Order` holds no placement per row
/// then), and the first into the image of no rows; a chunk out of order among them takes
/// the sorted placement. Both write the store the write rules write.
#[test]
fn a_load_in_time_order_writes_the_store_the_write_rules_write() {
    for (seed, bound) in [(21u64, 1u64), (22, 150), (23, 100_000)] {
        let t = tempfile::tempdir().unwrap();
        let mut g = Rng::new(seed);
        let mut at = 1_000;
        let chunks: Vec<Vec<Event>> = (0..6)
            .map(|c| {
                let n = 1 + g.below(300) as usize;
                let mut es = events(&mut g, n, 80, false);
                // Every chunk but the fifth in increasing times, after the one before.
                if c != 4 {
                    for e in &mut es {
                        at += g.below(3) as i64;
                        e.vt_s = at;
                        if let EventEnd::At(end) = &mut e.vt_e {
                            *end = at + 1 + g.below(50) as i64;
                        }
                    }
                }
                es
            })
            .collect();
        let (bulk, ok) = load(&t.path().join("a"), bound, chunks);
        assert!(
            bulk.iter().all(|&b| b) && ok.iter().all(|&b| b),
            "seed {seed}"
        );
        same_as_replayed(&t.path().join("a"), &t.path().join("b"));
    }
}

/// A chunk with a discriminator ends the bulk build: it and the chunks after it take the
/// write rules (the discriminated event may carve an earlier one), over the image the
/// build merged.
#[test]
fn a_batch_that_is_not_pure_ends_the_bulk_build() {
    let t = tempfile::tempdir().unwrap();
    let mut g = Rng::new(77);
    let chunks = vec![
        events(&mut g, 300, 80, false),
        events(&mut g, 300, 80, true),
        events(&mut g, 300, 80, false),
    ];
    let (bulk, _) = load(&t.path().join("a"), 1_000, chunks);
    assert_eq!(bulk, [true, true, false]);
    same_as_replayed(&t.path().join("a"), &t.path().join("b"));
}

/// A batch that fails validation changes nothing but the batch counts, in the build as
/// in the write rules; the load goes on.
#[test]
fn a_failed_batch_inside_a_bulk_build_is_counted_and_undone() {
    let t = tempfile::tempdir().unwrap();
    let mut g = Rng::new(5);
    let mut bad = events(&mut g, 50, 40, false);
    bad[20].src = String::new();
    let chunks = vec![
        events(&mut g, 200, 40, false),
        bad,
        events(&mut g, 200, 40, false),
    ];
    let (bulk, ok) = load(&t.path().join("a"), 1_000, chunks);
    assert_eq!(bulk, [true, true, true]);
    assert_eq!(ok, [true, false, true]);
    let s = Store::open(&t.path().join("a")).unwrap();
    assert_eq!(s.stats().n_failed_batches, 1);
    assert_eq!(s.stats().n_batches, 3);
    drop(s);
    same_as_replayed(&t.path().join("a"), &t.path().join("b"));
}

/// Only a fresh store is built in bulk: a second load (or any store with a logged batch)
/// takes the write rules, and a load without a bound never builds in bulk.
#[test]
fn only_a_fresh_store_is_built_in_bulk() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a");
    let mut g = Rng::new(9);
    let mut s = Store::create_with(&p, opts()).unwrap();
    let first = events(&mut g, 100, 30, false);
    s.bulk_load(0, |ld| {
        assert!(!ld.is_bulk_build());
        ld.ingest_events(first, "Node", &mut |_| {}).unwrap();
    })
    .unwrap();
    let more = events(&mut g, 100, 30, false);
    s.bulk_load(1_000, |ld| {
        assert!(!ld.is_bulk_build());
        ld.ingest_events(more, "Node", &mut |_| {}).unwrap();
    })
    .unwrap();
    s.close().unwrap();
    let b = t.path().join("b");
    let mut r = Store::create_with(&b, opts()).unwrap();
    replay(&p, &mut r, &mut |_| {}).unwrap();
    assert_eq!(Store::open(&p).unwrap().digest(), r.digest());
}

/// A load that writes nothing leaves a store that takes ordinary writes (an empty ingest
/// batch, a load of events) as a store that never loaded does.
#[test]
fn an_empty_bulk_load_leaves_an_ordinary_store() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a");
    let mut s = Store::create_with(&p, opts()).unwrap();
    s.bulk_load(1_000, |ld| assert!(ld.is_bulk_build()))
        .unwrap();
    let op = Op::IngestEvents(IngestEvents {
        events: vec![],
        ordinal_base: 0,
        node_label: "Node".into(),
        audit: Default::default(),
    });
    s.write(vec![op]).unwrap();
    let mut g = Rng::new(3);
    s.ingest_events(events(&mut g, 50, 20, false), "Node", &mut |_| {})
        .unwrap();
    s.close().unwrap();
    let mut r = Store::create_with(&t.path().join("b"), opts()).unwrap();
    replay(&p, &mut r, &mut |_| {}).unwrap();
    let s = Store::open(&p).unwrap();
    assert_eq!(s.digest(), r.digest());
    assert_eq!(s.stats(), r.stats());
}

/// When the final merge fails (the segment cannot be written), the load's error says so,
/// the handle is poisoned but still reads every committed batch (its rows are indexed in
/// memory instead), and a reopen replays the log to the same store.
#[test]
fn a_failed_final_merge_loses_nothing() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a");
    let mut g = Rng::new(11);
    let chunks = vec![
        events(&mut g, 300, 60, false),
        events(&mut g, 300, 60, false),
    ];
    let mut s = Store::create_with(&p, opts()).unwrap();
    let r = s.bulk_load(1_000_000, |ld| {
        for c in chunks {
            ld.ingest_events(c, "Node", &mut |_| {}).unwrap();
        }
        tgms_engine::fault::set_write_hook(Some(Box::new(|path, _| {
            if path.extension().is_some_and(|x| x == "tgs") {
                Err(std::io::Error::other("injected: no space left"))
            } else {
                Ok(())
            }
        })));
    });
    tgms_engine::fault::set_write_hook(None);
    assert!(r.is_err());
    let mut b = Store::create_with(&t.path().join("b"), opts()).unwrap();
    replay(&p, &mut b, &mut |_| {}).unwrap();
    assert_eq!(
        s.digest(),
        b.digest(),
        "the poisoned handle reads what was committed"
    );
    assert_eq!(s.stats(), b.stats());
    drop(s);
    let reopened = Store::open(&p).unwrap();
    assert_eq!(reopened.digest(), b.digest());
}

/// A batch whose log record cannot be written is not in the store, though a large batch of
/// a bulk build is built while its record is written (`store/bulk.rs` `log_and_apply`):
/// its outcome is reported unknown, the handle is poisoned, and the handle reads the
/// batches before it, as a reopen (a replay of the log) does.
#[test]
fn a_batch_whose_log_write_fails_is_not_built() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a");
    let mut g = Rng::new(13);
    // Batches large enough to be logged on a second thread while they are built.
    let chunks: Vec<Vec<Event>> = (0..3).map(|_| events(&mut g, 5_000, 800, false)).collect();
    let mut s = Store::create_with(&p, opts()).unwrap();
    let mut outcomes = Vec::new();
    let r = s.bulk_load(1_000_000, |ld| {
        for (i, c) in chunks.into_iter().enumerate() {
            if i == 1 {
                tgms_engine::fault::set_write_hook(Some(Box::new(|path, _| {
                    if path.ends_with(tgms_engine::store::WAL_FILE) {
                        Err(std::io::Error::other("injected: no space left"))
                    } else {
                        Ok(())
                    }
                })));
            }
            let r = ld.ingest_events(c, "Node", &mut |_| {});
            // Ok, or whether the error says the outcome is unknown.
            outcomes.push(
                r.map(|_| ())
                    .map_err(|e| matches!(e, tgms_engine::Error::OutcomeUnknown { .. })),
            );
        }
    });
    tgms_engine::fault::set_write_hook(None);
    assert!(r.is_err(), "the load ends with the poisoned handle's error");
    assert_eq!(outcomes, [Ok(()), Err(true), Err(false)]);
    let mut b = Store::create_with(&t.path().join("b"), opts()).unwrap();
    replay(&p, &mut b, &mut |_| {}).unwrap();
    assert_eq!(
        b.stats().n_edge_versions,
        5_000,
        "the log holds the first batch"
    );
    assert_eq!(
        s.digest(),
        b.digest(),
        "the handle reads what the log holds"
    );
    assert_eq!(s.stats(), b.stats());
    drop(s);
    assert_eq!(Store::open(&p).unwrap().digest(), b.digest());
}
