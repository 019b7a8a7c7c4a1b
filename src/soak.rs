//! The multi-process soak (`tgms bench soak`, issue 19): a writer process commits keyed
//! batches (flushing and compacting as it goes) while reader processes open, query and
//! check the store; the writer is SIGKILLed at seeded random moments and restarted, and
//! after every kill the store must hold every batch the writer acknowledged, each exactly
//! once, and nothing beyond the one batch that was in flight. Counts are printed; the
//! violation count must be 0. Also the writer process that `tests/reliability.rs` kills.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tgms_engine::{Error, Identity, Op};

/// A soak writer compacts after every this many batches.
pub const COMPACT_EVERY: u64 = 25;

/// The uid of soak batch `i`'s node.
fn uid(i: u64) -> String {
    format!("soak{i}")
}

/// Batch `i`: its node, and an edge from the previous batch's node (so adjacency and
/// degree statistics change with every batch).
fn batch(i: u64) -> Vec<Op> {
    let mut ops = vec![Op::from_json(
        &json!({"op":"assert_node","uid":uid(i),"label":"S",
        "props":{"i":i},"vt_s":i}),
    )];
    if i > 0 {
        ops.push(Op::from_json(
            &json!({"op":"assert_edge","src":uid(i - 1),"dst":uid(i),
            "rel_type":"NEXT","vt_s":i}),
        ));
    }
    ops
}

/// The writer process (`tgms bench soak-writer STORE --from A --to B`): commits batches
/// `from..to` under the keys `soak:i` and prints `ack <i> <tt> <duplicate>` on stdout after
/// each commit returns (flushed at once: the parent's record of acknowledgements). Flushes
/// every 7 batches and compacts every `compact_every`. A batch already committed (a
/// restarted writer) is acknowledged as a duplicate and not applied again.
pub fn writer(store: &Path, from: u64, to: u64, compact_every: u64) -> Result<(), Error> {
    let mut st = crate::store_env::open(store)?;
    let mut stdout = std::io::stdout().lock();
    for i in from..to {
        let c = st.write_keyed(batch(i), Some(format!("soak:{i}")))?;
        let (tt, dup) = (c.tt, c.duplicate);
        c.into_result()?;
        writeln!(stdout, "ack {i} {tt} {dup}")
            .and_then(|_| stdout.flush())
            .map_err(|e| Error::io("<stdout>", e))?;
        if i % 7 == 6 {
            st.flush()?;
        }
        if compact_every > 0 && i % compact_every == compact_every - 1 {
            st.compact()?;
        }
    }
    st.close()
}

/// How a store compares with a writer's acknowledgements.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Batches present (each counted once).
    pub present: u64,
    /// Acknowledged batches missing, batches present twice, or batches present beyond the
    /// last acknowledged one plus the one in flight.
    pub violations: Vec<String>,
}

/// Opens `store` read-only and checks the acknowledged-prefix rule against `acked`
/// (acknowledged batch numbers) for batches `0..total`.
pub fn verify(store: &Path, acked: &BTreeSet<u64>, total: u64) -> Result<Verdict, Error> {
    let st = crate::store_env::open_read_only(store)?;
    let snap = st.snapshot();
    let mut v = Verdict::default();
    let next_unacked = (0..).find(|i| !acked.contains(i)).unwrap_or(0);
    for i in 0..total {
        let n = snap.history_of(&Identity::Node(uid(i))).len();
        if n > 1 {
            v.violations.push(format!("batch {i} applied {n} times"));
        }
        if n >= 1 {
            v.present += 1;
            if !acked.contains(&i) && i != next_unacked {
                v.violations.push(format!(
                    "batch {i} present but neither acknowledged nor in flight"
                ));
            }
        } else if acked.contains(&i) {
            v.violations
                .push(format!("acknowledged batch {i} is missing"));
        }
    }
    Ok(v)
}

/// Starts a writer process for batches `from..to`.
pub fn spawn_writer(exe: &Path, store: &Path, from: u64, to: u64) -> std::io::Result<Child> {
    Command::new(exe)
        .args(["bench", "soak-writer"])
        .arg(store)
        .args(["--from", &from.to_string(), "--to", &to.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
}

/// Reads `ack` lines of a writer into `acked` until it exits (or `stop` says so); returns
/// the lines read.
pub fn read_acks(
    child: &mut Child,
    acked: &mut BTreeSet<u64>,
    mut stop: impl FnMut(u64) -> bool,
) -> u64 {
    let Some(out) = child.stdout.take() else {
        return 0;
    };
    let mut n = 0;
    for line in BufReader::new(out).lines() {
        let Ok(line) = line else { break };
        let mut w = line.split_whitespace();
        if let (Some("ack"), Some(i)) = (w.next(), w.next().and_then(|x| x.parse().ok())) {
            acked.insert(i);
            n += 1;
            if stop(n) {
                break;
            }
        }
    }
    n
}

/// What a soak run counted.
#[derive(Debug, Default)]
pub struct SoakReport {
    /// Batches the writers acknowledged.
    pub batches: u64,
    /// Reader `stats` and `call` processes run.
    pub reads: u64,
    /// Reader `check` processes run.
    pub checks: u64,
    /// Compactions started (one per `COMPACT_EVERY` acknowledged batches).
    pub compactions: u64,
    /// Writer processes SIGKILLed.
    pub faults: u64,
    /// Every violation found, in words; a clean run has none.
    pub violations: Vec<String>,
    /// Wall time of the run, in seconds.
    pub secs: f64,
}

impl SoakReport {
    /// The counts as JSON (`violations` is the count, `violation_details` the list; `secs`
    /// to one decimal).
    pub fn to_json(&self) -> Value {
        json!({"batches": self.batches, "reads": self.reads, "checks": self.checks,
            "compactions_started": self.compactions, "faults": self.faults,
            "violations": self.violations.len(), "violation_details": self.violations,
            "secs": (self.secs * 10.0).round() / 10.0})
    }
}

/// `tgms bench soak`: for `secs` seconds, a writer process commits batches while `readers`
/// reader processes run `stats`, `call` and `check` in a loop; the writer is SIGKILLed
/// after a seeded random number of acknowledgements (a fault), the store checked against
/// the acknowledgements, and a writer restarted on the remaining batches.
pub fn soak(
    exe: &Path,
    store: &Path,
    secs: u64,
    readers: usize,
    seed: u64,
) -> Result<SoakReport, Error> {
    crate::store_env::create(store)?.close()?;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut reader_threads = Vec::new();
    for r in 0..readers {
        let (exe, store, stop) = (exe.to_path_buf(), store.to_path_buf(), stop.clone());
        reader_threads.push(std::thread::spawn(move || {
            reader_loop(&exe, &store, r, &stop)
        }));
    }
    let mut rep = SoakReport::default();
    let mut acked = BTreeSet::new();
    let mut rng = seed | 1;
    let mut next = 0u64;
    let started = Instant::now();
    while Instant::now() < deadline {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let kill_after = 5 + rng % 60;
        let to = next + 10_000;
        let mut child = spawn_writer(exe, store, next, to).map_err(|e| Error::io(exe, e))?;
        // SIGKILL after `kill_after` acknowledgements: mid-commit, mid-flush or mid-compaction.
        let n = read_acks(&mut child, &mut acked, |n| {
            n >= kill_after || Instant::now() >= deadline
        });
        let _ = child.kill();
        let _ = child.wait();
        rep.faults += 1;
        rep.batches += n;
        rep.compactions += (next..next + n)
            .filter(|i| i % COMPACT_EVERY == COMPACT_EVERY - 1)
            .count() as u64;
        let total = acked.iter().next_back().map_or(0, |m| m + 2);
        match verify(store, &acked, total) {
            Ok(v) => {
                rep.violations.extend(v.violations);
                // The next writer starts at the first batch the store does not hold; the
                // in-flight batch, if it landed, is acknowledged again as a duplicate.
                next = (0..).find(|i| !acked.contains(i)).unwrap_or(0);
            }
            Err(e) => rep
                .violations
                .push(format!("store unopenable after a kill: {e}")),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in reader_threads {
        let (reads, checks, bad) =
            t.join()
                .unwrap_or((0, 0, vec!["reader thread panicked".into()]));
        rep.reads += reads;
        rep.checks += checks;
        rep.violations.extend(bad);
    }
    // A last writer open recovers the log after the final kill; then the check is clean.
    let mut child = spawn_writer(exe, store, next, next).map_err(|e| Error::io(exe, e))?;
    let _ = child.wait();
    let o = Command::new(exe)
        .arg("check")
        .arg(store)
        .output()
        .map_err(|e| Error::io(exe, e))?;
    if !o.status.success() {
        rep.violations.push(format!(
            "final check failed: {}",
            String::from_utf8_lossy(&o.stdout)
        ));
    }
    rep.secs = started.elapsed().as_secs_f64();
    Ok(rep)
}

/// One reader process loop: `stats`, a `call`, and (every third round) `check`. A failing
/// `check` or `stats` is a violation (`check` must not report false damage on a live
/// store); a refused open because a writer was killed mid-publication is not expected
/// either (publication is atomic).
fn reader_loop(
    exe: &Path,
    store: &Path,
    r: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> (u64, u64, Vec<String>) {
    let (mut reads, mut checks, mut bad) = (0u64, 0u64, Vec::new());
    let mut round = r as u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        round += 1;
        let args: Vec<String> = match round % 3 {
            0 => vec!["check".into(), store.display().to_string()],
            1 => vec!["stats".into(), store.display().to_string(), "--json".into()],
            _ => vec![
                "call".into(),
                store.display().to_string(),
                "snapshot_subgraph".into(),
                r#"{"seeds":["soak1"],"hops":1,"t_valid":5}"#.into(),
            ],
        };
        let Ok(o) = Command::new(exe).args(&args).output() else {
            bad.push("reader process could not start".into());
            break;
        };
        if args[0] == "check" {
            checks += 1;
        } else {
            reads += 1;
        }
        // `call` may refuse its arguments before the node exists (exit 1); a store error
        // (exit 3) or a crash is a violation.
        let code = o.status.code();
        if code != Some(0) && !(args[0] == "call" && code == Some(1)) {
            bad.push(format!(
                "{} exited {code:?}: {}",
                args[0],
                String::from_utf8_lossy(&o.stdout)
                    .chars()
                    .take(400)
                    .collect::<String>()
            ));
        }
    }
    (reads, checks, bad)
}
