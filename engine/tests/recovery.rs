//! Crash and log tests (`data-model.md` §6.1, §7, §8, §9; `format-spec.md` §3–§5): replay
//! determinism, failed batches in the log, torn tails at every byte offset, bit flips at
//! every byte, the writer lock, read-only handles and the transaction clock across reopen.

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use tgms_engine::clock::scripted_clock;
use tgms_engine::format::wal::{self, Record, FRAME_LEN, HEADER_LEN};
use tgms_engine::store::{read_log, replay, WAL_FILE};
use tgms_engine::{Error, Op, Options, Stats, Store};

fn op(v: Value) -> Op {
    Op::from_json(&v)
}

fn ops(vs: &[Value]) -> Vec<Op> {
    vs.iter().map(Op::from_json).collect()
}

/// A workload with every op kind, failed batches of every kind (not found, invalid, raw)
/// and read-your-writes inside batches. `(tt, ops, applies)`.
fn base_batches() -> Vec<(i64, Vec<Value>, bool)> {
    vec![
        (
            1000,
            vec![
                json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
            ],
            true,
        ),
        (
            1001,
            vec![
                json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","props":{"w":1},"vt_s":10,"vt_e":20,"reason":"seen"}),
            ],
            true,
        ),
        (
            1002,
            vec![
                json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5,"reason":"cleanup"}),
            ],
            false,
        ),
        (
            1005,
            vec![json!({"op":"ingest_events","events":[
                {"src":"a","dst":"c","rel_type":"MSG","vt_s":30},
                {"src":"c","dst":"a","rel_type":"MSG","vt_s":31,"vt_e":40,"props":{"k":"v"}}]})],
            true,
        ),
        (
            1006,
            vec![
                json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix p"}),
            ],
            true,
        ),
        (
            1010,
            vec![
                json!({"op":"assert_node","uid":"d","label":"N"}),
                json!({"op":"retract","ref":{"kind":"node","uid":"d"},"t":3}),
            ],
            false,
        ),
        (1011, vec![json!({"op":"frob"})], false),
        (
            1012,
            vec![
                json!({"op":"assert_edge","src":"b","dst":"c","rel_type":"R","disc":"k","vt_s":5}),
                json!({"op":"retract","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R"},"t":15,"reason":"ended"}),
            ],
            true,
        ),
    ]
}

/// A multi-op batch that applies.
fn last_ok_batch() -> Vec<Value> {
    vec![
        json!({"op":"assert_node","uid":"é\"x","label":"L","props":{"s":"ü"},"vt_s":1,"vt_e":9,"reason":"new"}),
        json!({"op":"ingest_events","events":[
            {"src":"a","dst":"b","rel_type":"MSG","vt_s":12,"disc":"#0"},
            {"src":"b","dst":"d","rel_type":"MSG","vt_s":13}]}),
        json!({"op":"correct","ref":{"kind":"edge","src":"b","dst":"c","rel_type":"R","disc":"k"},"props":{"w":5},"vt_s":7,"vt_e":9,"reason":"weight"}),
    ]
}

/// A multi-op batch that fails in its last op, after earlier ops changed the state.
fn last_failing_batch() -> Vec<Value> {
    vec![
        json!({"op":"assert_node","uid":"a","label":"N","props":{"p":9},"vt_s":0,"vt_e":50}),
        json!({"op":"ingest_events","events":[{"src":"x","dst":"y","rel_type":"MSG","vt_s":3}]}),
        json!({"op":"correct","ref":{"kind":"node","uid":"nobody"},"props":{},"reason":"r"}),
    ]
}

fn wal_path(dir: &Path) -> PathBuf {
    dir.join(WAL_FILE)
}

/// Writes `batches` at their explicit tts into a new store, checking each outcome.
fn build(dir: &Path, batches: &[(i64, Vec<Value>, bool)]) -> Store {
    let mut s = Store::create(dir).unwrap();
    for (tt, b, applies) in batches {
        let r = s.write_at(*tt, ops(b));
        assert_eq!(r.is_ok(), *applies, "batch at tt {tt}: {r:?}");
    }
    s
}

/// Name, bytes and mtime of every file in a store directory.
fn dir_state(dir: &Path) -> Vec<(String, Vec<u8>, SystemTime)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `(start, end)` of every record of a log image, by walking its frames.
fn record_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut at = HEADER_LEN as usize;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let end = at + FRAME_LEN as usize + len;
        assert!(end <= bytes.len(), "log image ends inside a record");
        spans.push((at, end));
        at = end;
    }
    spans
}

fn damage(e: &Error) -> Option<(PathBuf, u64, u64)> {
    match e {
        Error::LogDamaged {
            file,
            record,
            offset,
            ..
        } => Some((file.clone(), *record, *offset)),
        _ => None,
    }
}

/// The spec payload of a damaged-log error must name file, record and offset.
fn assert_damage_payload(e: &Error, wal: &Path, record: u64, offset: u64, ctx: &str) {
    assert_eq!(
        damage(e),
        Some((wal.to_path_buf(), record, offset)),
        "{ctx}: {e:?}"
    );
    assert_eq!(e.code().as_str(), "E_STATE", "{ctx}");
    assert_eq!(
        e.message(),
        format!("event log damaged at record {record}"),
        "{ctx}"
    );
}

fn snapshot_of(s: &Store) -> (String, Stats, Option<i64>) {
    (s.digest(), s.stats().clone(), s.last_tt())
}

// ------------------------------------------------------------------------ (a) replay

#[test]
fn replay_reopen_and_rebuild_give_identical_digests() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    // Explicit tts and clock ticks mixed; the wall clock goes backwards in between.
    let mut s = Store::create_with(
        &src,
        Options {
            clock: Some(scripted_clock(vec![5000, 10, 7000, 7000])),
            ..Options::default()
        },
    )
    .unwrap();
    let mut n_failed = 0;
    for (i, (tt, b, applies)) in base_batches().into_iter().enumerate() {
        let r = if i % 3 == 2 {
            s.write(ops(&b))
        } else {
            s.write_at(tt.max(s.last_tt().unwrap_or(0) + 1), ops(&b))
        };
        assert_eq!(r.is_ok(), applies, "{r:?}");
        n_failed += usize::from(!applies);
    }
    s.write(ops(&last_ok_batch())).unwrap();
    assert!(s.write(ops(&last_failing_batch())).is_err());
    n_failed += 1;
    let (digest, stats, last_tt) = snapshot_of(&s);
    assert_eq!(stats.n_failed_batches, n_failed as u64);
    assert!(stats.n_edge_versions > 0 && stats.n_node_versions > 0);
    drop(s);

    // Reopen (writable and read-only): the same rows, statistics and clock.
    let s = Store::open(&src).unwrap();
    assert_eq!(snapshot_of(&s), (digest.clone(), stats.clone(), last_tt));
    drop(s);
    let ro = Store::open_read_only(&src).unwrap();
    assert_eq!(snapshot_of(&ro), (digest.clone(), stats.clone(), last_tt));
    drop(ro);

    // Rebuild from the log alone into a new store.
    let out_dir = d.path().join("out");
    let mut out = Store::create(&out_dir).unwrap();
    let mut seen = 0;
    let n = replay(&src, &mut out, &mut |k| seen = k).unwrap();
    assert_eq!((n, seen), (stats.n_batches, stats.n_batches));
    assert_eq!(snapshot_of(&out), (digest.clone(), stats.clone(), last_tt));
    drop(out);
    // Replay is deterministic down to the log bytes.
    assert_eq!(
        fs::read(wal_path(&src)).unwrap(),
        fs::read(wal_path(&out_dir)).unwrap()
    );
    let out = Store::open(&out_dir).unwrap();
    assert_eq!(snapshot_of(&out), (digest.clone(), stats.clone(), last_tt));

    // A replay of the replayed store again gives the same digest.
    let out2_dir = d.path().join("out2");
    let mut out2 = Store::create(&out2_dir).unwrap();
    replay(&out_dir, &mut out2, &mut |_| {}).unwrap();
    assert_eq!(snapshot_of(&out2), (digest, stats, last_tt));
}

// ------------------------------------------------------------------------ (b) failed batches

#[test]
fn failed_batch_consumes_its_tt_and_replays_as_failed() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("s");
    let mut s = Store::create_with(
        &src,
        Options {
            clock: Some(scripted_clock(vec![5])),
            ..Options::default()
        },
    )
    .unwrap();
    s.write_at(
        10,
        vec![op(json!({"op":"assert_node","uid":"a","label":"N"}))],
    )
    .unwrap();
    let before = s.digest();
    let e = s
        .write_at(
            20,
            vec![
                op(json!({"op":"assert_node","uid":"b","label":"N"})),
                op(json!({"op":"retract","ref":{"kind":"node","uid":"a"},"t":3})),
            ],
        )
        .unwrap_err();
    assert_eq!(
        (e.code().as_str(), e.message()),
        (
            "E_INVALID_ARG",
            "retract requires a non-empty reason".to_string()
        )
    );
    // Rolled back entirely (no row, no registration), but the tt is consumed.
    assert_eq!(s.digest(), before);
    assert!(!s.snapshot().has_uid("b"));
    assert_eq!(s.last_tt(), Some(20));
    let st = s.stats().clone();
    assert_eq!(
        (st.n_batches, st.n_failed_batches, st.last_tt, st.n_entities),
        (2, 1, Some(20), 1)
    );
    let e = s
        .write_at(
            20,
            vec![op(json!({"op":"assert_node","uid":"c","label":"N"}))],
        )
        .unwrap_err();
    assert_eq!(
        (e.code().as_str(), e.message()),
        ("E_STATE", "non-monotonic tt 20 (last is 20)".to_string())
    );
    // The wall clock (5) is behind: the next tick is last_tt + 1.
    assert_eq!(
        s.write(vec![op(json!({"op":"assert_node","uid":"c","label":"N"}))])
            .unwrap(),
        21
    );
    // The failed batch is in the log, in order.
    let mut tts = Vec::new();
    read_log(&src, |b| {
        tts.push(b.tt);
        Ok(())
    })
    .unwrap();
    assert_eq!(tts, vec![10, 20, 21]);
    // A last batch that fails: its tt is the clock's last tt after reopen.
    assert!(s
        .write_at(
            30,
            vec![op(
                json!({"op":"correct","ref":{"kind":"node","uid":"q"},"props":{},"reason":"r"})
            )]
        )
        .is_err());
    let (digest, stats, last_tt) = snapshot_of(&s);
    assert_eq!(
        (stats.n_batches, stats.n_failed_batches, last_tt),
        (4, 2, Some(30))
    );
    drop(s);

    let out_dir = d.path().join("out");
    let mut out = Store::create(&out_dir).unwrap();
    assert_eq!(replay(&src, &mut out, &mut |_| {}).unwrap(), 4);
    assert_eq!(snapshot_of(&out), (digest.clone(), stats.clone(), Some(30)));
    let s = Store::open_with(
        &src,
        Options {
            clock: Some(scripted_clock(vec![1])),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(snapshot_of(&s), (digest, stats, Some(30)));
}

// ------------------------------------------------------------------------ (c) torn tails

/// Truncates the log at every byte offset inside the last batch record and inside its
/// outcome record. A cut inside the batch record loses the batch (it was never
/// acknowledged); a cut inside the outcome record keeps the batch, whose record is
/// complete, and derives the outcome by replay (`format-spec.md` §4.1).
fn truncation_sweep(last: Vec<Value>, last_applies: bool) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let s = build(&path, &base_batches());
    let state0 = snapshot_of(&s);
    drop(s);
    let l0 = fs::metadata(&wal).unwrap().len() as usize;
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.write_at(2000, ops(&last)).is_ok(), last_applies);
    let state1 = snapshot_of(&s);
    drop(s);
    assert_ne!(state0, state1);
    let bytes = fs::read(&wal).unwrap();
    let spans = record_spans(&bytes);
    let (batch, outcome) = (spans[spans.len() - 2], spans[spans.len() - 1]);
    assert_eq!(batch.0, l0);
    let (l1, l2) = (batch.1, outcome.1);
    assert_eq!(l2, bytes.len());

    // Reference states after one more batch on either surviving prefix.
    let extra = vec![json!({"op":"assert_edge","src":"a","dst":"z","rel_type":"R","vt_s":2})];
    let reference = |with_last: bool| {
        let r = d
            .path()
            .join(format!("ref{}", if with_last { 1 } else { 0 }));
        let mut s = build(&r, &base_batches());
        let tt = if with_last {
            assert_eq!(s.write_at(2000, ops(&last)).is_ok(), last_applies);
            2001
        } else {
            // The lost batch's tt was never acknowledged and may be reused.
            2000
        };
        s.write_at(tt, ops(&extra)).unwrap();
        (tt, snapshot_of(&s))
    };
    let after = [reference(false), reference(true)];

    let probes = [l0 + 1, l0 + 12, l1 - 1, l1 + 1, l2 - 1];
    for k in l0..l2 {
        let ctx = format!("log cut at byte {k} (batch record [{l0}, {l1}), outcome [{l1}, {l2}))");
        let keeps_batch = k >= l1;
        let (want, want_len) = if keeps_batch {
            (&state1, l1)
        } else {
            (&state0, l0)
        };
        fs::write(&wal, &bytes[..k]).unwrap();

        // Read-only: the recovered view, and not a byte, name or mtime changed.
        let files = dir_state(&path);
        let ro = Store::open_read_only(&path).unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
        assert_eq!(&snapshot_of(&ro), want, "{ctx}: read-only view");
        drop(ro);
        assert!(
            dir_state(&path) == files,
            "{ctx}: read-only open modified the store"
        );

        // Writable: recovers the same state and truncates to a record boundary.
        let mut s = Store::open(&path).unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
        assert_eq!(&snapshot_of(&s), want, "{ctx}: writable open");
        assert_eq!(
            fs::read(&wal).unwrap(),
            &bytes[..want_len],
            "{ctx}: log after recovery"
        );
        if probes.contains(&k) {
            // The recovered log takes appends at the boundary and reopens cleanly.
            let (tt, ref_state) = &after[usize::from(keeps_batch)];
            s.write_at(*tt, ops(&extra)).unwrap();
            drop(s);
            let s = Store::open(&path).unwrap();
            assert_eq!(&snapshot_of(&s), ref_state, "{ctx}: append after recovery");
        }
    }
}

#[test]
fn torn_final_batch_recovers_the_previous_state_at_every_offset() {
    truncation_sweep(last_ok_batch(), true);
}

#[test]
fn torn_final_failed_batch_recovers_at_every_offset() {
    truncation_sweep(last_failing_batch(), false);
}

// ------------------------------------------------------------------------ (d) bit flips

#[test]
fn bit_flips_are_reported_never_wrong_rows() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let mut s = build(&path, &base_batches());
    s.write_at(2000, ops(&last_ok_batch())).unwrap();
    let full = snapshot_of(&s);
    drop(s);
    let bytes = fs::read(&wal).unwrap();
    let spans = record_spans(&bytes);
    let last_no = spans.len() - 1;
    let mut outcomes = (0, 0);
    for p in 0..bytes.len() {
        let bit = p % 8;
        let mut b = bytes.clone();
        b[p] ^= 1 << bit;
        fs::write(&wal, &b).unwrap();
        let ctx = format!("bit {bit} of byte {p} flipped");
        let record = spans.iter().position(|&(s, e)| s <= p && p < e);

        let files = dir_state(&path);
        let ro = Store::open_read_only(&path);
        assert!(
            dir_state(&path) == files,
            "{ctx}: read-only open modified the store"
        );
        let rw = Store::open(&path);
        match (record, &ro, &rw) {
            // Magic and major version: the header is corrupt.
            (None, _, _) if p < 10 => {
                for r in [&ro, &rw] {
                    match r {
                        Err(Error::Corruption { file, offset, .. }) => {
                            assert_eq!((file, *offset), (&wal, if p < 8 { 0 } else { 8 }), "{ctx}");
                        }
                        other => panic!(
                            "{ctx}: expected a corrupt header, got {:?}",
                            other.as_ref().err()
                        ),
                    }
                }
                assert_eq!(
                    fs::read(&wal).unwrap(),
                    b,
                    "{ctx}: failed open changed the log"
                );
            }
            // Minor version and reserved bytes carry no data: refusing or reading the
            // intact records are both fine, anything else is not.
            (None, _, _) => {
                for r in [&ro, &rw] {
                    match r {
                        Ok(s) => assert_eq!(snapshot_of(s), full, "{ctx}"),
                        Err(e) => assert!(matches!(e, Error::Corruption { .. }), "{ctx}: {e:?}"),
                    }
                }
            }
            // Any record before the final one: reported at that record, never repaired.
            (Some(n), _, _) if n < last_no => {
                for r in [&ro, &rw] {
                    let e = r
                        .as_ref()
                        .err()
                        .unwrap_or_else(|| panic!("{ctx}: open succeeded"));
                    assert_damage_payload(e, &wal, n as u64, spans[n].0 as u64, &ctx);
                }
                assert_eq!(
                    fs::read(&wal).unwrap(),
                    b,
                    "{ctx}: failed open changed the log"
                );
                outcomes.0 += 1;
            }
            // The final record (the last batch's outcome): a damaged length is reported,
            // a damaged payload is a torn tail; the batch record itself is intact.
            (Some(n), _, _) => {
                for r in [&ro, &rw] {
                    match r {
                        Ok(s) => assert_eq!(snapshot_of(s), full, "{ctx}"),
                        Err(e) => assert_damage_payload(e, &wal, n as u64, spans[n].0 as u64, &ctx),
                    }
                }
                match &rw {
                    Ok(_) => {
                        assert_eq!(fs::read(&wal).unwrap(), &bytes[..spans[n].0], "{ctx}");
                        outcomes.1 += 1;
                    }
                    Err(_) => assert_eq!(fs::read(&wal).unwrap(), b, "{ctx}"),
                }
            }
        }
    }
    assert!(outcomes.0 > 500 && outcomes.1 > 0, "{outcomes:?}");
}

/// Checksummed but inconsistent records: an outcome that disagrees with replay (W4) and a
/// duplicated batch (non-increasing tt, W1) are reported where they are.
#[test]
fn consistent_checksums_but_inconsistent_records_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let s = build(&path, &base_batches());
    let want = snapshot_of(&s);
    drop(s);
    let bytes = fs::read(&wal).unwrap();
    let spans = record_spans(&bytes);
    let decoded: Vec<Record> = spans
        .iter()
        .map(|&(s, e)| wal::decode(&bytes[s + FRAME_LEN as usize..e]).unwrap())
        .collect();
    let rebuild = |replace: usize, payload: &[u8]| {
        let mut out = bytes[..spans[replace].0].to_vec();
        wal::frame(payload, &mut out);
        out.extend_from_slice(&bytes[spans[replace].1..]);
        out
    };

    // Every outcome record, flipped and re-checksummed.
    let mut flipped = 0;
    for (n, rec) in decoded.iter().enumerate() {
        let Record::Outcome { tt, ok, .. } = rec else {
            continue;
        };
        let mut payload = Vec::new();
        wal::encode_outcome(*tt, !ok, "E_STATE", "forged", &mut payload);
        let image = rebuild(n, &payload);
        fs::write(&wal, &image).unwrap();
        for r in [Store::open_read_only(&path), Store::open(&path)] {
            let e = r.err().expect("a forged outcome must be reported");
            assert_damage_payload(&e, &wal, n as u64, spans[n].0 as u64, "forged outcome");
        }
        assert_eq!(fs::read(&wal).unwrap(), image);
        flipped += 1;
    }
    assert_eq!(flipped, base_batches().len());

    // Payloads that pass their checksum but do not decode, first and last.
    let last = spans.len() - 1;
    let first_payload = &bytes[spans[0].0 + FRAME_LEN as usize..spans[0].1];
    let mut trailing = first_payload.to_vec();
    trailing.push(0);
    let mut short = first_payload.to_vec();
    short.pop();
    for (n, payload) in [
        (0, trailing),
        (0, short),
        (3, vec![9u8]),
        (last, vec![9u8]),
        (last, Vec::new()),
    ] {
        let image = rebuild(n, &payload);
        fs::write(&wal, &image).unwrap();
        for r in [Store::open_read_only(&path), Store::open(&path)] {
            let e = r.err().expect("an undecodable record must be reported");
            assert_damage_payload(&e, &wal, n as u64, spans[n].0 as u64, "undecodable");
        }
        assert_eq!(fs::read(&wal).unwrap(), image);
    }

    // The last batch and its outcome appended a second time.
    let (b, o) = (spans[spans.len() - 2], spans[spans.len() - 1]);
    let mut image = bytes.clone();
    image.extend_from_slice(&bytes[b.0..o.1]);
    fs::write(&wal, &image).unwrap();
    for r in [Store::open_read_only(&path), Store::open(&path)] {
        let e = r.err().expect("a repeated tt must be reported");
        assert_damage_payload(
            &e,
            &wal,
            spans.len() as u64,
            bytes.len() as u64,
            "repeated batch",
        );
    }

    // Restored, the store opens as before.
    fs::write(&wal, &bytes).unwrap();
    assert_eq!(snapshot_of(&Store::open(&path).unwrap()), want);
}

/// A checksummed batch record whose tt lies outside `[0, OPEN_END)` (only a hand-edited or
/// damaged log has one) is damage: applying it would store rows outside the timestamp
/// domain (§2), and a replay of the same log refuses such a tt.
#[test]
fn out_of_domain_tt_in_the_log_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    drop(Store::create(&path).unwrap());
    let a = ops(&[json!({"op":"assert_node","uid":"a","label":"N"})]);
    for (first_tt, bad_tt) in [
        (None, -5),
        (None, tgms_engine::OPEN_END),
        (Some(7), i64::MAX),
    ] {
        let mut image = wal::header_bytes().to_vec();
        let mut spans = Vec::new();
        for tt in first_tt.into_iter().chain([bad_tt]) {
            let mut payload = Vec::new();
            spans.push(image.len() as u64);
            wal::encode_batch(tt, &a, &mut payload);
            wal::frame(&payload, &mut image);
            payload.clear();
            spans.push(image.len() as u64);
            wal::encode_outcome(tt, true, "", "", &mut payload);
            wal::frame(&payload, &mut image);
        }
        fs::write(&wal, &image).unwrap();
        let n = spans.len() - 2;
        for r in [Store::open_read_only(&path), Store::open(&path)] {
            let e = r.err().unwrap_or_else(|| panic!("tt {bad_tt} accepted"));
            assert_damage_payload(&e, &wal, n as u64, spans[n], &format!("tt {bad_tt}"));
        }
        assert_eq!(fs::read(&wal).unwrap(), image);
    }
}

/// The clock cannot leave the timestamp domain: after the last representable tt, or with a
/// wall clock outside `[0, OPEN_END)`, a write is refused and nothing reaches the log, so
/// the store stays openable and I6 holds.
#[test]
fn clock_ticks_outside_the_domain_are_refused() {
    use tgms_engine::OPEN_END;
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let a = || ops(&[json!({"op":"assert_node","uid":"a","label":"N"})]);
    let mut s = Store::create_with(
        &path,
        Options {
            clock: Some(scripted_clock(vec![-3, OPEN_END + 5])),
            ..Options::default()
        },
    )
    .unwrap();
    for _ in 0..2 {
        let e = s.write(a()).unwrap_err();
        assert_eq!(e.code().as_str(), "E_STATE", "{e:?}");
        assert_eq!(s.stats().n_batches, 0);
    }
    assert_eq!(s.last_tt(), None);
    s.write_at(OPEN_END - 1, a()).unwrap();
    let len = fs::metadata(&wal).unwrap().len();
    let e = s.write(a()).unwrap_err();
    assert_eq!(e.code().as_str(), "E_STATE", "{e:?}");
    assert_eq!(fs::metadata(&wal).unwrap().len(), len);
    assert_eq!(s.last_tt(), Some(OPEN_END - 1));
    let rows = s.snapshot().all_nodes();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].tt_s() < rows[0].tt_e());
    drop(s);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.stats().n_batches, 1);
}

/// A hand-edited log: every byte of every payload flipped and re-checksummed. Opening it
/// never panics; it either fails with a structured error or yields exactly what a replay
/// of the same log into a fresh store yields.
#[test]
fn rechecksummed_payload_edits_never_panic() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let mut s = build(&path, &base_batches());
    s.write_at(2000, ops(&last_ok_batch())).unwrap();
    drop(s);
    let bytes = fs::read(&wal).unwrap();
    let spans = record_spans(&bytes);
    let (mut opened, mut refused) = (0, 0);
    for (n, &(start, end)) in spans.iter().enumerate() {
        let payload = &bytes[start + FRAME_LEN as usize..end];
        for p in 0..payload.len() {
            let mut edited = payload.to_vec();
            edited[p] ^= 1 << (p % 8);
            let mut image = bytes[..start].to_vec();
            wal::frame(&edited, &mut image);
            image.extend_from_slice(&bytes[end..]);
            fs::write(&wal, &image).unwrap();
            let ctx = format!("record {n}, payload byte {p}");
            match Store::open_read_only(&path) {
                Ok(s) => {
                    opened += 1;
                    // The edit decoded into another valid log: replay must agree with it.
                    let out_dir = d.path().join(format!("replay-{n}-{p}"));
                    let mut out = Store::create(&out_dir).unwrap();
                    match replay(&path, &mut out, &mut |_| {}) {
                        Ok(_) => assert_eq!(snapshot_of(&out), snapshot_of(&s), "{ctx}"),
                        Err(e) => assert_eq!(e.code().as_str(), "E_INVALID_ARG", "{ctx}: {e:?}"),
                    }
                    drop(out);
                    fs::remove_dir_all(&out_dir).unwrap();
                }
                Err(e) => {
                    refused += 1;
                    assert!(
                        matches!(e, Error::LogDamaged { .. }),
                        "{ctx}: unstructured error {e:?}"
                    );
                }
            }
            assert_eq!(fs::read(&wal).unwrap(), image, "{ctx}");
        }
    }
    assert!(opened > 0 && refused > 0, "{opened} {refused}");
}

// ------------------------------------------------------------------------ (e) the writer lock

#[test]
fn second_writer_is_refused_readers_are_not() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let mut w = Store::create(&path).unwrap();
    w.write_at(
        1,
        vec![op(json!({"op":"assert_node","uid":"a","label":"N"}))],
    )
    .unwrap();
    for _ in 0..2 {
        let e = Store::open(&path)
            .err()
            .expect("second writer must be refused");
        assert_eq!(
            (e.code().as_str(), e.message()),
            ("E_STATE", "store is locked by another writer".to_string())
        );
        let Error::State {
            about: tgms_engine::StateAbout::Locked { holder_pid, .. },
            ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(*holder_pid, Some(u64::from(std::process::id())));
    }
    let e = Store::create(&path)
        .err()
        .expect("create over a live store");
    assert_eq!(e.code().as_str(), "E_STATE");
    // Readers do not need the lock and see whole batches.
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.digest(), w.digest());
    w.write_at(
        2,
        vec![op(json!({"op":"assert_node","uid":"b","label":"N"}))],
    )
    .unwrap();
    let ro2 = Store::open_read_only(&path).unwrap();
    assert_eq!(ro2.digest(), w.digest());
    assert_eq!(ro2.stats().n_batches, 2);
    drop(w);
    // Released with the handle.
    let mut w = Store::open(&path).unwrap();
    w.write_at(
        3,
        vec![op(json!({"op":"assert_node","uid":"c","label":"N"}))],
    )
    .unwrap();
    drop((ro, ro2));
}

// ------------------------------------------------------------------------ (f) read-only handles

#[test]
fn read_only_store_refuses_writes_and_touches_nothing() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let s = build(&path, &base_batches());
    let want = snapshot_of(&s);
    drop(s);
    // Even without a LOCK file, a read-only open creates none.
    fs::remove_file(path.join("LOCK")).unwrap();
    let files = dir_state(&path);
    let mut ro = Store::open_read_only(&path).unwrap();
    assert!(ro.is_read_only());
    let refusals = [
        ro.write(vec![op(json!({"op":"assert_node","uid":"a","label":"N"}))])
            .err(),
        ro.write_at(
            5000,
            vec![op(json!({"op":"assert_node","uid":"a","label":"N"}))],
        )
        .err(),
        ro.commit(Some(5001), vec![]).err(),
        ro.ingest_events(
            vec![tgms_engine::Event::instant(
                "a".into(),
                "b".into(),
                "R".into(),
                1,
            )],
            "Node",
            &mut |_| {},
        )
        .err(),
    ];
    for e in refusals {
        let e = e.expect("a read-only handle must refuse writes");
        assert_eq!(
            (e.code().as_str(), e.message()),
            ("E_STATE", "store is opened read-only".to_string())
        );
    }
    assert_eq!(snapshot_of(&ro), want);
    drop(ro);
    assert!(
        dir_state(&path) == files,
        "read-only handle modified the store"
    );
}

// ------------------------------------------------------------------------ (g) the clock

#[test]
fn non_monotonic_tt_consumes_nothing_and_the_clock_survives_reopen() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let wal = wal_path(&path);
    let mut s = Store::create(&path).unwrap();
    s.write_at(
        100,
        vec![op(json!({"op":"assert_node","uid":"a","label":"N"}))],
    )
    .unwrap();
    let files = dir_state(&path);
    let stats = s.stats().clone();
    for tt in [100, 99, 0] {
        let e = s
            .write_at(
                tt,
                vec![op(json!({"op":"assert_node","uid":"b","label":"N"}))],
            )
            .unwrap_err();
        assert_eq!(
            (e.code().as_str(), e.message()),
            ("E_STATE", format!("non-monotonic tt {tt} (last is 100)"))
        );
        assert_eq!(s.last_tt(), Some(100));
    }
    // Out-of-domain explicit tts consume nothing either.
    for tt in [-1, tgms_engine::OPEN_END] {
        assert!(s.write_at(tt, vec![]).is_err());
    }
    assert_eq!(s.stats(), &stats);
    assert_eq!(s.last_tt(), Some(100));
    assert!(
        dir_state(&path) == files,
        "a refused write touched the store"
    );
    assert!(!s.snapshot().has_uid("b"));
    s.write_at(
        101,
        vec![op(json!({"op":"assert_node","uid":"b","label":"N"}))],
    )
    .unwrap();
    // The last record is a failed batch: its tt still counts.
    assert!(s
        .write_at(
            150,
            vec![op(
                json!({"op":"retract","ref":{"kind":"node","uid":"q"},"t":1,"reason":"r"})
            )]
        )
        .is_err());
    drop(s);

    // Reopen with a wall clock far behind, then jumping ahead, then behind again.
    let mut s = Store::open_with(
        &path,
        Options {
            clock: Some(scripted_clock(vec![5, 5, 400, 7])),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(s.last_tt(), Some(150));
    let mut got = Vec::new();
    for i in 0..4 {
        got.push(
            s.write(vec![op(
                json!({"op":"assert_node","uid":format!("n{i}"),"label":"N"}),
            )])
            .unwrap(),
        );
    }
    assert_eq!(got, vec![151, 152, 400, 401]);
    let e = s.write_at(401, vec![]).unwrap_err();
    assert_eq!(e.message(), "non-monotonic tt 401 (last is 401)");
    drop(s);
    let len = fs::metadata(&wal).unwrap().len();
    let s = Store::open_with(
        &path,
        Options {
            clock: Some(scripted_clock(vec![0])),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(s.last_tt(), Some(401));
    assert_eq!(s.stats().n_batches, 7);
    assert_eq!(fs::metadata(&wal).unwrap().len(), len);
    let mut s = s;
    assert_eq!(s.write(vec![]).unwrap(), 402);
}
