//! The deterministic synthetic benchmark generator (the spec's `evaluation.md` §1).
//!
//! Every random choice is a pure function of the event index (§1.2), so events are produced
//! chunk by chunk without materializing the whole stream. The op stream of §1.4 is applied
//! through the normal write API, one batch per write; with [`ClockMode::Fixed`] batch `k`
//! (1-based) gets `tt = 1,700,000,000,000,000 + k` (§1.6).

use serde_json::{json, Value};
use std::path::Path;
use tgms_engine::op::{Audit, IngestEvents, INGEST_CHUNK};
use tgms_engine::{Error, Event, EventEnd, Load, Op, Options, Result, Store};

/// Where transaction times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClockMode {
    /// Batch `k` (1-based) gets `tt = FIXED_TT_BASE + k` (§1.6): reproducible digests.
    #[default]
    Fixed,
    /// The store's ordinary hybrid logical clock.
    Wall,
}

/// `tt` of batch `k` under the fixed clock is `FIXED_TT_BASE + k`.
pub const FIXED_TT_BASE: i64 = 1_700_000_000_000_000;
/// Nodes per community block (§1.1).
pub const COMMUNITY: u64 = 50;
/// Percent of edges kept inside the source's community (§1.1).
pub const INTRA_PCT: u64 = 70;

/// What [`generate`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerateReport {
    /// Batches written (all applied).
    pub batches: u64,
    /// `tt` of the epoch-1 marker (item 2 of §1.4).
    pub tt_epoch1: i64,
}

/// `n_nodes(N) = max(200, N // 100)`.
pub fn n_nodes(n: u64) -> u64 {
    (n / 100).max(200)
}

/// `life(N) = max(40, N // 20)`: every edge's valid duration.
pub fn life(n: u64) -> u64 {
    (n / 20).max(40)
}

/// The 64-bit mixer of §1.2 (splitmix64's finalizer applied to `x · γ`).
pub fn mix(x: u64) -> u64 {
    let mut x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `vt_s(i)`: the index itself, except inside the burst `[N//2, N//2 + max(1, N//20))`,
/// where time runs 10× slower.
pub fn vt_s(n: u64, i: u64) -> u64 {
    let b0 = n / 2;
    let b1 = b0 + (n / 20).max(1);
    if (b0..b1).contains(&i) {
        b0 + (i - b0) / 10
    } else {
        i
    }
}

/// `(src, dst)` node ids of event `i`.
pub fn endpoints(n: u64, i: u64) -> (u64, u64) {
    let nn = n_nodes(n);
    let src = mix(2 * i) % nn;
    let r = mix(2 * i + 1);
    let dst = if r % 100 < INTRA_PCT {
        let base = (src / COMMUNITY) * COMMUNITY;
        base + ((r >> 8) % COMMUNITY.min(nn - base))
    } else {
        (r >> 8) % nn
    };
    (src, dst)
}

/// `rel_type` of event `i`: `"S"` when `i mod 3 == 0`, else `"R"`.
pub fn rel_type(i: u64) -> &'static str {
    match i % 3 {
        0 => "S",
        _ => "R",
    }
}

/// Event `i` of the scale-`n` stream (§1.3); no disc (the store assigns `"#i"`).
pub fn event(n: u64, i: u64) -> Event {
    let (src, dst) = endpoints(n, i);
    let s = vt_s(n, i) as i64;
    Event {
        src: format!("n{src}"),
        dst: format!("n{dst}"),
        rel_type: rel_type(i).to_string(),
        vt_s: s,
        vt_e: EventEnd::At(s + life(n) as i64),
        disc: None,
        props: None,
    }
}

/// The edge ref of event `i`: `{kind: edge, src, dst, rel_type, disc: "#i"}`.
fn edge_ref(n: u64, i: u64) -> Value {
    let (src, dst) = endpoints(n, i);
    json!({
        "kind": "edge",
        "src": format!("n{src}"),
        "dst": format!("n{dst}"),
        "rel_type": rel_type(i),
        "disc": format!("#{i}"),
    })
}

/// `step = max(1, N // 200)`: stride of the whole-interval corrections (§1.4 item 3).
fn step(n: u64) -> u64 {
    (n / 200).max(1)
}

/// `(first, stride, end)` of the tail-half corrections (§1.4 item 5): `i = mid − L//2,
/// mid − L//2 + max(1, L//20), … < mid`. For tiny scales (`N < 2·life(N)`) the start would
/// be negative; it is clamped to 0.
fn partial_range(n: u64) -> (u64, u64, u64) {
    let l = life(n);
    let mid = n / 2;
    (mid.saturating_sub(l / 2), (l / 20).max(1), mid)
}

/// Number of batches [`generate`] writes at scale `n`: `ceil(N/50,000)` ingest chunks, the
/// epoch marker, the whole-interval corrections, the node correction, the tail-half
/// corrections and the retractions (262 tail batches at the benchmark scales).
pub fn total_batches(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let (p0, ps, p1) = partial_range(n);
    n.div_ceil(INGEST_CHUNK as u64)
        + 1
        + n.div_ceil(step(n))
        + 1
        + (p1 - p0).div_ceil(ps)
        + n.div_ceil(4 * step(n))
}

/// A new scratch store in `dir` (no fsync) holding the generated log at scale `n` with the
/// fixed clock: the setup of the in-process bench examples.
pub fn scratch_store(dir: &Path, n: u64) -> Result<Store> {
    let mut st = Store::create_with(
        dir,
        Options {
            no_sync: true,
            ..Options::default()
        },
    )?;
    st.bulk_load(0, |ld| generate(ld, n, ClockMode::Fixed, &mut |_, _| {}))??;
    Ok(st)
}

/// The store a bench example names by its first argument: a scratch store of `n` generated
/// events in `dir` when the argument is a number `n` (the generation time reported on
/// stderr), else the store at that path, opened read-only.
pub fn example_store(arg: &str, dir: &Path) -> Result<Store> {
    match arg.parse::<u64>() {
        Ok(n) => {
            let t = std::time::Instant::now();
            let st = scratch_store(&dir.join("s"), n)?;
            eprintln!("generated N={n} in {:.1}s", t.elapsed().as_secs_f64());
            Ok(st)
        }
        Err(_) => Store::open_read_only(Path::new(arg)),
    }
}

/// Writes the op stream of §1.4 at scale `n` into the store of `store`, one batch per
/// write (in a bulk load into a fresh store, the ingest batches are built in bulk:
/// `Store::bulk_load`). `progress(done, total)` is called after every batch. Any failed
/// batch stops the run with its error (by §1.4 none fails on an empty store).
pub fn generate(
    store: &mut Load,
    n: u64,
    clock: ClockMode,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<GenerateReport> {
    if n == 0 {
        return Err(Error::invalid("scale must be at least 1"));
    }
    let total = total_batches(n);
    let mut g = Gen {
        store,
        clock,
        batches: 0,
        total,
        progress,
    };
    let nn = n as i64;
    let l = life(n);

    // 1. Bulk ingest, one batch per 50,000-event chunk.
    let chunk = INGEST_CHUNK as u64;
    let mut lo = 0;
    while lo < n {
        let hi = (lo + chunk).min(n);
        let events: Vec<Event> = (lo..hi).map(|i| event(n, i)).collect();
        g.write(Op::IngestEvents(IngestEvents {
            events,
            ordinal_base: 0, // filled by the store
            node_label: "Node".to_string(),
            audit: Audit::default(),
        }))?;
        lo = hi;
    }

    // 2. Epoch-1 marker.
    let tt_epoch1 = g.write(parse(json!({
        "op": "assert_node",
        "uid": "n1",
        "label": "Node",
        "props": {"name": "alpha"},
        "vt_s": 0,
        "vt_e": nn,
    }))?)?;

    // 3. Whole-interval edge corrections.
    let step = step(n);
    for i in (0..n).step_by(step as usize) {
        let s = vt_s(n, i);
        g.write(parse(json!({
            "op": "correct",
            "ref": edge_ref(n, i),
            "props": {"weight": 2},
            "vt_s": s,
            "vt_e": s + l,
            "reason": format!("bench: whole-interval correction of event #{i}"),
        }))?)?;
    }

    // 4. Node correction.
    g.write(parse(json!({
        "op": "correct",
        "ref": {"kind": "node", "uid": "n1"},
        "props": {"name": "alpha-corrected"},
        "vt_s": 0,
        "vt_e": nn,
        "reason": "bench: correction of node n1",
    }))?)?;

    // 5. Partial (tail-half) corrections.
    let (p0, pstep, p1) = partial_range(n);
    for i in (p0..p1).step_by(pstep as usize) {
        let s = vt_s(n, i);
        g.write(parse(json!({
            "op": "correct",
            "ref": edge_ref(n, i),
            "props": {"weight": 3},
            "vt_s": s + l / 2,
            "vt_e": s + l,
            "reason": format!("bench: tail-half correction of event #{i}"),
        }))?)?;
    }

    // 6. Retractions.
    for i in (0..n).step_by((4 * step) as usize) {
        g.write(parse(json!({
            "op": "retract",
            "ref": edge_ref(n, i),
            "t": vt_s(n, i) + l / 2,
            "reason": format!("bench: retraction of event #{i}"),
        }))?)?;
    }

    Ok(GenerateReport {
        batches: g.batches,
        tt_epoch1,
    })
}

fn parse(v: Value) -> Result<Op> {
    Op::parse(&v)
}

struct Gen<'a, 's> {
    store: &'a mut Load<'s>,
    clock: ClockMode,
    batches: u64,
    total: u64,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl Gen<'_, '_> {
    /// Writes one op as its own batch; returns its tt.
    fn write(&mut self, op: Op) -> Result<i64> {
        let k = self.batches + 1;
        let tt = match self.clock {
            ClockMode::Fixed => self.store.write_at(FIXED_TT_BASE + k as i64, vec![op])?,
            ClockMode::Wall => self.store.write(vec![op])?,
        };
        self.batches = k;
        (self.progress)(k, self.total);
        Ok(tt)
    }
}
