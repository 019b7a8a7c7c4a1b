//! The synthetic generator of the spec's `evaluation.md` §1: the check values of §1.3, the op
//! stream counts of §1.4 and the fixed-clock reference values of §1.6.

use tgms_bench::generate::{self, ClockMode, GenerateReport, FIXED_TT_BASE};
use tgms_engine::{EventEnd, Options, Store, OPEN_END};

/// One row of the reference tables of §1.4 and §1.6.
struct Reference {
    n: u64,
    batches: u64,
    chunks: u64,
    n_entities: u64,
    node_rows: u64,
    edge_rows: u64,
    closed_edge_rows: u64,
    vt_min: i64,
    vt_max: i64,
    s_count: u64,
    r_count: u64,
    max_out_degree: u64,
    digest: &'static str,
}

const N20K: Reference = Reference {
    n: 20_000,
    batches: 263,
    chunks: 1,
    n_entities: 200,
    node_rows: 203,
    edge_rows: 20_269,
    closed_edge_rows: 260,
    vt_min: 0,
    vt_max: 20_999,
    s_count: 6_756,
    r_count: 13_513,
    max_out_degree: 132,
    digest: "9efd78771e103ac930a218c3a5eb98b341811d675b623ffec0cfe8089fb4d553",
};

const N100K: Reference = Reference {
    n: 100_000,
    batches: 264,
    chunks: 2,
    n_entities: 1_000,
    node_rows: 1_003,
    edge_rows: 100_269,
    closed_edge_rows: 260,
    vt_min: 0,
    vt_max: 104_999,
    s_count: 33_423,
    r_count: 66_846,
    max_out_degree: 131,
    digest: "e16c4d0c4283f3cccd43668429619c94760dc476eb76d0c7db902cdbb65689f4",
};

const N200K: Reference = Reference {
    n: 200_000,
    batches: 266,
    chunks: 4,
    n_entities: 2_000,
    node_rows: 2_003,
    edge_rows: 200_269,
    closed_edge_rows: 260,
    vt_min: 0,
    vt_max: 209_999,
    s_count: 66_756,
    r_count: 133_513,
    max_out_degree: 142,
    digest: "e090ff104f5dad1ad1ff3604f32ea2cfa8863283efd6838f5e3a424773f48a0e",
};

const N1M: Reference = Reference {
    n: 1_000_000,
    batches: 282,
    chunks: 20,
    n_entities: 10_000,
    node_rows: 10_003,
    edge_rows: 1_000_269,
    closed_edge_rows: 260,
    vt_min: 0,
    vt_max: 1_049_999,
    s_count: 333_423,
    r_count: 666_846,
    max_out_degree: 147,
    digest: "287fdab4e821b0824344c486c198b4e4f3b4a49db4dd33f7a0e41209ea5a028a",
};

fn fast_options() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

/// Generates scale `n` with the fixed clock into a fresh store under `dir`, in a bulk load
/// of bound `bound` (0: batch by batch).
fn build_in(dir: &std::path::Path, n: u64, bound: u64) -> (Store, GenerateReport) {
    let mut store = Store::create_with(dir, fast_options()).unwrap();
    let mut calls = Vec::new();
    let report = store
        .bulk_load(bound, |ld| {
            generate::generate(ld, n, ClockMode::Fixed, &mut |done, total| {
                calls.push((done, total))
            })
        })
        .unwrap()
        .unwrap();
    let total = generate::total_batches(n);
    assert_eq!(calls.len() as u64, total);
    assert!(calls
        .iter()
        .enumerate()
        .all(|(k, &(done, t))| done == k as u64 + 1 && t == total));
    (store, report)
}

/// [`build_in`] batch by batch.
fn build(dir: &std::path::Path, n: u64) -> (Store, GenerateReport) {
    build_in(dir, n, 0)
}

fn check(r: &Reference) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let t0 = std::time::Instant::now();
    // In a bulk load whose build merges every 40,000 rows: the pinned digests are those of
    // the batches written one by one (`deterministic_and_wall_clock` checks both ways).
    let (store, report) = build_in(&dir, r.n, 20_000);
    eprintln!("N = {}: generate {:.2?}", r.n, t0.elapsed());

    // §1.4 / §1.6: batches and the epoch-1 marker's tt.
    assert_eq!(report.batches, r.batches, "batches");
    assert_eq!(generate::total_batches(r.n), r.batches);
    assert_eq!(r.n.div_ceil(50_000), r.chunks);
    assert_eq!(
        report.tt_epoch1,
        FIXED_TT_BASE + r.chunks as i64 + 1,
        "tt_epoch1"
    );

    // §1.6 statistics.
    let st = store.stats();
    assert_eq!(st.n_entities, r.n_entities, "n_entities");
    assert_eq!(st.n_node_versions, r.node_rows, "n_node_versions");
    assert_eq!(st.n_edge_versions, r.edge_rows, "n_edge_versions");
    assert_eq!(st.vt_min, Some(r.vt_min), "vt_min");
    assert_eq!(st.vt_max, Some(r.vt_max), "vt_max");
    assert_eq!(st.rel_type_counts.len(), 2, "rel types");
    assert_eq!(st.rel_type_counts["S"], r.s_count, "S count");
    assert_eq!(st.rel_type_counts["R"], r.r_count, "R count");
    assert_eq!(st.max_out_degree, r.max_out_degree, "max_out_degree");
    assert_eq!(st.n_batches, r.batches);
    assert_eq!(st.n_failed_batches, 0);
    assert_eq!(st.first_tt, Some(FIXED_TT_BASE + 1));
    assert_eq!(st.last_tt, Some(FIXED_TT_BASE + r.batches as i64));

    // §1.4 row counts, computed from the rows themselves.
    let snap = store.snapshot();
    let edges = snap.all_edges();
    assert_eq!(edges.len() as u64, r.edge_rows, "stored edge rows");
    let closed = edges.iter().filter(|e| e.tt_e() != OPEN_END).count() as u64;
    assert_eq!(closed, r.closed_edge_rows, "closed edge rows");
    assert_eq!(
        snap.all_nodes().len() as u64,
        r.node_rows,
        "stored node rows"
    );

    // §1.6 store digest, and again after reopening (replay of the log).
    let digest = store.digest();
    assert_eq!(digest, r.digest, "store digest at N = {}", r.n);
    let stats = st.clone();
    drop(store);
    let reopened = Store::open_with(&dir, fast_options()).unwrap();
    assert_eq!(reopened.digest(), r.digest, "digest after reopen");
    assert_eq!(reopened.stats(), &stats, "stats after reopen");
}

#[test]
fn check_values_n200k() {
    let n = 200_000;
    let cases: [(u64, &str, &str, &str, i64, i64); 6] = [
        (0, "n0", "n35", "S", 0, 10_000),
        (1, "n1700", "n725", "R", 1, 10_001),
        (2, "n444", "n432", "R", 2, 10_002),
        (100_000, "n959", "n974", "R", 100_000, 110_000),
        (100_010, "n363", "n354", "R", 100_001, 110_001),
        (110_000, "n770", "n777", "R", 110_000, 120_000),
    ];
    for (i, src, dst, rel, s, e) in cases {
        let ev = generate::event(n, i);
        assert_eq!(
            (ev.src.as_str(), ev.dst.as_str(), ev.rel_type.as_str()),
            (src, dst, rel),
            "event({i})"
        );
        assert_eq!(ev.vt_s, s, "vt_s of event({i})");
        assert_eq!(ev.vt_e, EventEnd::At(e), "vt_e of event({i})");
        assert_eq!(ev.disc, None);
        assert_eq!(ev.props, None);
    }
}

#[test]
fn parameters() {
    assert_eq!(generate::n_nodes(20_000), 200);
    assert_eq!(generate::n_nodes(1_000_000), 10_000);
    assert_eq!(generate::life(100), 40);
    assert_eq!(generate::life(200_000), 10_000);
    // The burst: 5 % of the events compressed 10×.
    assert_eq!(generate::vt_s(200_000, 99_999), 99_999);
    assert_eq!(generate::vt_s(200_000, 109_999), 100_999);
    assert_eq!(generate::vt_s(200_000, 110_000), 110_000);
    for (n, b) in [
        (20_000, 263),
        (100_000, 264),
        (200_000, 266),
        (1_000_000, 282),
    ] {
        assert_eq!(generate::total_batches(n), b);
    }
    assert_eq!(generate::total_batches(10_000_000), 200 + 262);
}

#[test]
fn reference_n20k() {
    check(&N20K);
}

#[test]
fn reference_n100k() {
    check(&N100K);
}

#[test]
fn reference_n200k() {
    check(&N200K);
}

#[test]
#[ignore = "1M events: run with `cargo test --release -p tgms-bench -- --ignored`"]
fn reference_n1m() {
    check(&N1M);
}

#[test]
fn deterministic_and_wall_clock() {
    let n = 20_000;
    let t1 = tempfile::tempdir().unwrap();
    let t2 = tempfile::tempdir().unwrap();
    let (a, ra) = build_in(&t1.path().join("s"), n, 20_000);
    let (b, rb) = build(&t2.path().join("s"), n);
    assert_eq!(ra, rb);
    assert_eq!(a.digest(), b.digest());
    assert_eq!(a.digest(), N20K.digest);

    // The wall clock gives the same rows at other tts: same counts, different digest.
    let t3 = tempfile::tempdir().unwrap();
    let mut w = Store::create_with(&t3.path().join("s"), fast_options()).unwrap();
    let rw = w
        .bulk_load(0, |ld| {
            generate::generate(ld, n, ClockMode::Wall, &mut |_, _| {})
        })
        .unwrap()
        .unwrap();
    assert_eq!(rw.batches, N20K.batches);
    let (sa, sw) = (a.stats(), w.stats());
    assert_eq!(sw.n_edge_versions, sa.n_edge_versions);
    assert_eq!(sw.n_node_versions, sa.n_node_versions);
    assert_eq!(sw.rel_type_counts, sa.rel_type_counts);
    assert_eq!(sw.max_out_degree, sa.max_out_degree);
    assert_eq!(sw.n_failed_batches, 0);
    assert_ne!(w.digest(), N20K.digest);
}

#[test]
fn tiny_scales_apply_without_failures() {
    for n in [1, 7, 100, 199, 1_000, 20_100] {
        let t = tempfile::tempdir().unwrap();
        let (s, r) = build(&t.path().join("s"), n);
        assert_eq!(r.batches, generate::total_batches(n), "N = {n}");
        assert_eq!(s.stats().n_failed_batches, 0, "N = {n}");
    }
}

/// The examples' scratch store holds the same log as a generated store built by hand, and
/// refuses scale 0 with the generator's error.
#[test]
fn scratch_store_is_the_generated_log() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (by_hand, _) = build(a.path(), 2_000);
    let scratch = generate::scratch_store(&b.path().join("s"), 2_000).unwrap();
    assert_eq!(scratch.digest(), by_hand.digest());
    assert_eq!(scratch.snapshot().stats(), by_hand.snapshot().stats());
    assert!(generate::scratch_store(&b.path().join("t"), 0).is_err());
}
