//! Criterion micro-benchmarks: codecs (canonical JSON, WAL record encode/decode), index
//! probes (adjacency, version lookup, window scan), WAL append with and without fsync, and
//! the temporal-motif kernel. `cargo bench -p tgms-bench --bench micro`; CI compiles them
//! with `cargo bench --no-run`.
// `criterion_group!` generates an undocumented `pub fn benches()` (a lint attribute on the
// macro call does not reach it); a bench harness binary is not a public API.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::json;
use tgms_bench::generate::{generate, vt_s, ClockMode};
use tgms_engine::format::wal;
use tgms_engine::{canon, EdgeScan, Identity, Op, Options, Store};
use tgms_operators::kernels::{motifs, TEdge, TieMode};

const N: u64 = 20_000;

fn store(dir: &std::path::Path) -> Store {
    let mut st = Store::create(&dir.join("s")).unwrap();
    st.bulk_load(0, |ld| generate(ld, N, ClockMode::Fixed, &mut |_, _| {}))
        .unwrap()
        .unwrap();
    st
}

fn codecs(c: &mut Criterion) {
    let row = json!({"src": "n17", "dst": "n42", "rel_type": "R", "disc": "#17", "props": {"weight": 2, "note": "x"},
        "vt_s": 17, "vt_e": 1017, "reason": "bench", "op": "assert_edge"});
    let text = canon::to_string(&row);
    c.bench_function("codec/canon_to_string", |b| {
        b.iter(|| canon::to_string(black_box(&row)))
    });
    c.bench_function("codec/canon_parse", |b| {
        b.iter(|| canon::parse(black_box(&text)).unwrap())
    });
    let ops: Vec<Op> = (0..100)
        .map(|i| {
            Op::from_json(
                &json!({"op": "assert_edge", "src": format!("n{i}"), "dst": "n1",
                "rel_type": "R", "props": {"w": i}, "vt_s": i, "vt_e": i + 10}),
            )
        })
        .collect();
    let mut buf = Vec::new();
    wal::encode_batch(1, &ops, &mut buf);
    c.bench_function("codec/wal_encode_batch_100_ops", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(buf.len());
            wal::encode_batch(1, black_box(&ops), &mut out);
            out
        })
    });
    c.bench_function("codec/wal_decode_batch_100_ops", |b| {
        b.iter(|| wal::decode(black_box(&buf)).is_ok())
    });
}

fn probes(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let st = store(dir.path());
    let snap = st.snapshot();
    let open = tgms_engine::OPEN_END;
    c.bench_function("probe/out_edges_n1", |b| {
        b.iter(|| snap.out_edges(black_box("n1"), None, open).len())
    });
    c.bench_function("probe/out_edges_n1_window", |b| {
        b.iter(|| {
            snap.out_edges(black_box("n1"), Some((5_000, 6_000)), open)
                .len()
        })
    });
    let id = Identity::Node("n1".into());
    c.bench_function("probe/versions_of_node", |b| {
        b.iter(|| snap.versions_of(black_box(&id), open).len())
    });
    c.bench_function("probe/edge_scan_window_1pct", |b| {
        let scan = EdgeScan {
            vt_window: Some((10_000, 10_200)),
            ..EdgeScan::all(open)
        };
        b.iter(|| snap.edge_scan(black_box(&scan)).len())
    });
}

fn wal_append(c: &mut Criterion) {
    let mut g = c.benchmark_group("wal_append");
    g.sample_size(20);
    for (name, no_sync) in [("fsync", false), ("no_fsync", true)] {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Store::create_with(
            &dir.path().join(name),
            Options {
                no_sync,
                ..Options::default()
            },
        )
        .unwrap();
        let mut i = 0u64;
        g.bench_function(format!("single_edge_batch/{name}"), |b| {
            b.iter_batched(
                || {
                    i += 1;
                    vec![Op::from_json(&json!({"op": "assert_edge", "src": "a", "dst": "b",
                        "rel_type": "R", "disc": format!("#{i}"), "props": {}, "vt_s": i, "vt_e": i + 1}))]
                },
                |ops| st.write(ops).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn motif_kernel(c: &mut Criterion) {
    let events: Vec<TEdge> = (0..N)
        .map(|i| {
            let (s, d) = tgms_bench::generate::endpoints(N, i);
            let t = vt_s(N, i) as i64;
            let mut eid = [0u8; 12];
            eid[..8].copy_from_slice(&i.to_be_bytes());
            TEdge {
                src: s as u32,
                dst: d as u32,
                t,
                t_end: t + 1,
                eid,
            }
        })
        .collect();
    let mut g = c.benchmark_group("motif");
    g.sample_size(10);
    g.bench_function("count_all_36_20k_events_delta_50", |b| {
        b.iter(|| motifs::count_all(black_box(&events), 50, TieMode::Ordered))
    });
    g.finish();
}

criterion_group!(benches, codecs, probes, wal_append, motif_kernel);
criterion_main!(benches);
