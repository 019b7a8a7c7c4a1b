//! One writer committing, flushing and compacting while readers open the store read-only
//! and query it (`format-spec.md` §9.4–§9.5): every reader sees a whole prefix of the
//! batches (never a half-published generation), and the prefixes a reader sees never go
//! backwards. A second writer is refused with the holder named.

use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tgms_engine::{Op, Options, Store};

fn batch(k: i64) -> Vec<Op> {
    let ops = if k % 7 == 3 {
        // A correction of a row that is usually sealed by now.
        vec![
            json!({"op":"correct","ref":{"kind":"node","uid":"n0"},"props":{"k":k},"vt_s":0,"vt_e":5,"reason":"fix"}),
        ]
    } else {
        vec![json!({"op":"ingest_events","events":[
            {"src": format!("n{}", k % 5), "dst": format!("n{}", (k + 1) % 5), "rel_type":"MSG","vt_s": k},
            {"src": format!("n{}", k % 3), "dst": "n0", "rel_type":"R","vt_s": k, "vt_e": k + 10}]})]
    };
    ops.iter().map(Op::from_json).collect()
}

fn opts() -> Options {
    Options {
        flush_rows: Some(6),
        compact_segments: Some(3),
        ..Options::default()
    }
}

#[test]
fn readers_see_only_whole_generations() {
    whole_generations(false);
}

/// The same with a flush after every batch, so that readers mostly find no log tail and
/// serve the store from the mapped image and the decoded flush segments above it.
#[test]
fn readers_of_image_and_flush_segments_see_only_whole_generations() {
    whole_generations(true);
}

fn whole_generations(flush_each: bool) {
    const N: i64 = 60;
    let t = tempfile::tempdir().unwrap();
    let mut prefix = Vec::new();
    {
        let mut s = Store::create_with(&t.path().join("plain"), opts()).unwrap();
        prefix.push(s.digest());
        for k in 0..N {
            s.write_at(1000 + k, batch(k)).unwrap();
            prefix.push(s.digest());
        }
    }
    let dir = t.path().join("s");
    let mut w = Store::create_with(&dir, opts()).unwrap();
    let e = Store::open(&dir).err().expect("second writer refused");
    let tgms_engine::Error::State {
        about: tgms_engine::StateAbout::Locked { holder_pid, .. },
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*holder_pid, Some(u64::from(std::process::id())));
    let done = Arc::new(AtomicBool::new(false));
    let prefix = Arc::new(prefix);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (done, prefix, dir) = (done.clone(), prefix.clone(), dir.clone());
            std::thread::spawn(move || {
                let mut last = 0;
                let mut seen = 0;
                while !done.load(Ordering::Relaxed) || seen == 0 {
                    let r = Store::open_read_only(&dir).unwrap();
                    let d = r.digest();
                    let k = prefix
                        .iter()
                        .position(|p| *p == d)
                        .expect("reader saw a state that is no prefix");
                    assert!(k >= last, "reader went back from {last} to {k}");
                    assert_eq!(r.stats().n_batches as usize, k);
                    last = k;
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for k in 0..N {
        w.write_at(1000 + k, batch(k)).unwrap();
        if flush_each {
            w.flush().unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert!(flush_each || w.segments().len() <= 3);
    assert_eq!(w.digest(), *prefix.last().unwrap());
}
