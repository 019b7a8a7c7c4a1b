//! Read-only opens served from the mapped base image (`format-spec.md` §9.4): on randomized
//! compacted stores (corrections, retractions, failed batches, interval edges, explicit
//! string and `#k` discriminators, non-ASCII uids) every point read of a lazy open — uid
//! lookups, identity histories, believed versions, adjacency with windows and belief
//! states — and every scan — edge scans by window, rel type and incidence, node and edge
//! windows, boundaries, starts (positions, runs, lists, ranges), compact edge columns, the
//! digest orders, the digest and the uid search — equals the same read of an eager open
//! (every segment decoded into memory), field by field, on images of one zone and of many
//! zones (pruned and unpruned). Layouts that cannot be served lazily open eagerly.

mod common;

use common::Rng;
use serde_json::{json, Value};
use std::path::Path;
use tgms_engine::{EdgeVersion, Identity, Op, Options, Store, Version, OPEN_END};

fn opts() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

/// [`opts`] with automatic compaction at `segments` segments (`0`: never).
fn compacting_at(segments: usize) -> Options {
    Options {
        compact_segments: Some(segments),
        ..opts()
    }
}

/// A read-only open through the pread path (segments read into memory, not mapped).
fn read_only_pread(path: &Path) -> Store {
    Store::open_with(
        path,
        Options {
            read_only: true,
            io: Some(tgms_engine::format::mmap::IoMode::Pread),
            ..Options::default()
        },
    )
    .unwrap()
}

fn read_only(path: &Path, eager: bool) -> Store {
    Store::open_with(
        path,
        Options {
            read_only: true,
            eager,
            ..Options::default()
        },
    )
    .unwrap()
}

const UIDS: [&str; 7] = ["a", "b", "c", "d", "é", "日本", "z"];
const DISCS: [&str; 4] = ["", "x", "#0", "#7"];

fn random_op(g: &mut Rng) -> Value {
    let (vs, len) = (g.below(200), 1 + g.below(40));
    let u = UIDS[g.below(7) as usize];
    let w = UIDS[g.below(7) as usize];
    let disc = DISCS[g.below(4) as usize];
    let end = |g: &mut Rng| match g.below(4) {
        0 => OPEN_END,
        1 => vs + 1,
        _ => vs + len,
    };
    let eref = json!({"kind":"edge","src":u,"dst":w,"rel_type":"R","disc":disc});
    match g.below(9) {
        0 => {
            json!({"op":"assert_node","uid":u,"label":"N","props":{"p":g.below(3)},"vt_s":vs,"vt_e":end(g)})
        }
        1 | 2 => {
            json!({"op":"assert_edge","src":u,"dst":w,"rel_type":"R","disc":disc,"props":{"w":g.below(4)},"vt_s":vs,"vt_e":end(g),"reason":"seen"})
        }
        3 => json!({"op":"retract","ref":eref,"t":vs,"reason":"wrong"}),
        4 => json!({"op":"retract","ref":{"kind":"node","uid":u},"t":vs,"reason":"gone"}),
        5 => {
            json!({"op":"correct","ref":{"kind":"node","uid":u},"props":{"p":9},"vt_s":vs,"vt_e":vs+len,"reason":"fix"})
        }
        6 => {
            json!({"op":"correct","ref":eref,"props":{"q":1},"vt_s":vs,"vt_e":vs+len,"reason":"fix"})
        }
        _ => {
            let rel = if g.below(2) == 0 { "S" } else { "T" };
            let evs: Vec<Value> = (0..1 + g.below(6))
                .map(|k| {
                    let d = UIDS[((g.below(7) + k) % 7) as usize];
                    json!({"src":u,"dst":d,"rel_type":rel,"vt_s":vs + k})
                })
                .collect();
            json!({"op":"ingest_events","events":evs})
        }
    }
}

fn edges(v: Vec<EdgeVersion<'_>>) -> Vec<Value> {
    v.into_iter().map(|e| Version::Edge(e).to_json()).collect()
}

fn versions(v: Vec<Version<'_>>) -> Vec<Value> {
    v.iter().map(Version::to_json).collect()
}

/// Every point read of `lazy` equals the same read of `eager`; returns how many answers
/// were non-empty.
fn compare_point_reads(lazy: &Store, eager: &Store, last_tt: i64) -> usize {
    let (l, e) = (lazy.snapshot(), eager.snapshot());
    assert_eq!(l.stats(), e.stats());
    let mut non_empty = 0;
    let mut count = |v: &Vec<Value>| non_empty += usize::from(!v.is_empty());
    let as_ofs = [OPEN_END, last_tt / 2, last_tt / 3, 0];
    let windows = [None, Some((0, 50)), Some((40, 41)), Some((100, 400))];
    let mut uids: Vec<&str> = UIDS.to_vec();
    uids.push("never-seen");
    for bad in [l.uid_ids() as u32, u32::MAX] {
        assert!(l.out_edges_of(bad, None, OPEN_END).is_empty());
        assert!(e.out_edges_of(bad, None, OPEN_END).is_empty());
    }
    for uid in &uids {
        assert_eq!(l.has_uid(uid), e.has_uid(uid), "has_uid {uid}");
        let id = l.uid_id(uid);
        assert_eq!(id, e.uid_id(uid), "uid_id {uid}");
        if let Some(id) = id {
            assert_eq!(l.uid_name(id), *uid);
            for a in as_ofs {
                let f = |s: &tgms_engine::Snapshot<'_>| -> Vec<Value> {
                    let mut v: Vec<Value> = s
                        .node_versions_of_uid(id, a)
                        .map(|n| Version::Node(n).to_json())
                        .collect();
                    v.sort_by_key(|x| x.to_string());
                    v
                };
                assert_eq!(f(&l), f(&e), "node_versions_of_uid {uid} as of {a}");
            }
        }
        let node = Identity::Node(uid.to_string());
        let h = versions(l.history_of(&node));
        assert_eq!(h, versions(e.history_of(&node)), "history_of {uid}");
        count(&h);
        let t = edges(l.edge_history_touching(uid));
        assert_eq!(t, edges(e.edge_history_touching(uid)), "touching {uid}");
        count(&t);
        for a in as_ofs {
            let v = versions(l.versions_of(&node, a));
            assert_eq!(v, versions(e.versions_of(&node, a)), "versions_of {uid}");
            for w in windows {
                let o = edges(l.out_edges(uid, w, a));
                assert_eq!(o, edges(e.out_edges(uid, w, a)), "out {uid} {w:?} {a}");
                if let Some(id) = l.uid_id(uid) {
                    assert_eq!(edges(l.out_edges_of(id, w, a)), o, "out_edges_of {uid}");
                    assert_eq!(edges(e.out_edges_of(id, w, a)), o);
                }
                let i = edges(l.in_edges(uid, w, a));
                assert_eq!(i, edges(e.in_edges(uid, w, a)), "in {uid} {w:?} {a}");
                count(&o);
                count(&i);
            }
        }
        for dst in &uids {
            for rel in ["R", "S", "T", "absent"] {
                for disc in DISCS.iter().chain(["#1", "#12", "#01", "y"].iter()) {
                    let id = Identity::Edge {
                        src: uid.to_string(),
                        dst: dst.to_string(),
                        rel_type: rel.to_string(),
                        disc: disc.to_string(),
                    };
                    let h = versions(l.history_of(&id));
                    assert_eq!(h, versions(e.history_of(&id)), "history_of {id:?}");
                    count(&h);
                    let v = versions(l.versions_of(&id, last_tt / 2));
                    assert_eq!(v, versions(e.versions_of(&id, last_tt / 2)));
                }
            }
        }
    }
    non_empty
}

const SMALL_WINDOWS: [(i64, i64); 6] = [
    (0, 50),
    (40, 41),
    (100, 400),
    (-5, 0),
    (199, 260),
    (0, OPEN_END),
];

/// Every scan of `lazy` equals the same scan of `eager`, over the given windows (and no
/// window), belief states and random boundary and start ranges inside them; returns how
/// many answers were non-empty.
fn compare_scans(
    lazy: &Store,
    eager: &Store,
    windows: &[(i64, i64)],
    last_tt: i64,
    g: &mut Rng,
) -> usize {
    let (l, e) = (lazy.snapshot(), eager.snapshot());
    let mut non_empty = 0;
    let mut non_empty_among = 0;
    let mut count = |v: &Vec<Value>| non_empty += usize::from(!v.is_empty());
    let nodes = |v: Vec<tgms_engine::NodeVersion<'_>>| -> Vec<Value> {
        v.into_iter().map(|n| Version::Node(n).to_json()).collect()
    };
    let as_ofs = [OPEN_END, last_tt / 2, g.below(last_tt + 1), 0];
    let rels: [Option<Vec<String>>; 4] = [
        None,
        Some(vec!["R".into()]),
        Some(vec!["S".into(), "T".into(), "absent".into()]),
        Some(vec!["absent".into()]),
    ];
    let sets: Vec<Vec<String>> = vec![
        vec!["a".into()],
        vec!["b".into(), "é".into(), "n3".into(), "never-seen".into()],
        vec!["n1".into(), "n2".into(), "日本".into(), "z".into()],
    ];
    let mut ws: Vec<Option<(i64, i64)>> = windows.iter().copied().map(Some).collect();
    ws.push(None);
    for a in as_ofs {
        for w in &ws {
            for r in &rels {
                let scan = tgms_engine::EdgeScan {
                    as_of_tt: a,
                    vt_window: *w,
                    rel_types: r.as_deref(),
                    touching: None,
                };
                let x = edges(l.edge_scan(&scan));
                assert_eq!(x, edges(e.edge_scan(&scan)), "edge_scan {w:?} {a} {r:?}");
                count(&x);
            }
            for set in &sets {
                for mode in [tgms_engine::Touch::Both, tgms_engine::Touch::Either] {
                    let scan = tgms_engine::EdgeScan {
                        as_of_tt: a,
                        vt_window: *w,
                        rel_types: None,
                        touching: Some((set, mode)),
                    };
                    let x = edges(l.edge_scan(&scan));
                    assert_eq!(x, edges(e.edge_scan(&scan)), "touching {w:?} {a} {set:?}");
                    count(&x);
                }
            }
            // Spans: the versions of the window scan, as endpoints and intervals, in any
            // order.
            let spans = |s: &tgms_engine::Snapshot<'_>| {
                let mut v = s.edge_spans(*w, a);
                v.sort_unstable_by_key(|x| (x.vt_s, x.vt_e, x.src, x.dst));
                v
            };
            let scan = tgms_engine::EdgeScan {
                as_of_tt: a,
                vt_window: *w,
                rel_types: None,
                touching: None,
            };
            let mut want: Vec<tgms_engine::EdgeSpan> = e
                .edge_scan(&scan)
                .into_iter()
                .map(|v| tgms_engine::EdgeSpan {
                    src: v.src_id(),
                    dst: v.dst_id(),
                    vt_s: v.vt_s(),
                    vt_e: v.vt_e(),
                })
                .collect();
            want.sort_unstable_by_key(|x| (x.vt_s, x.vt_e, x.src, x.dst));
            assert_eq!(spans(&l), want, "edge_spans {w:?} {a}");
            assert_eq!(spans(&e), want, "edge_spans (memory) {w:?} {a}");
            let x = edges(l.edge_window(*w, a));
            assert_eq!(x, edges(e.edge_window(*w, a)), "edge_window {w:?} {a}");
            count(&x);
            let x = nodes(l.node_scan(*w, a));
            assert_eq!(x, nodes(e.node_scan(*w, a)), "node_scan {w:?} {a}");
            count(&x);
            let Some((lo, hi)) = *w else { continue };
            let (lo, hi) = (lo.min(1 << 40), hi.min(1 << 40));
            let x = edges(l.edge_boundaries(lo, hi, a));
            assert_eq!(
                x,
                edges(e.edge_boundaries(lo, hi, a)),
                "edge_boundaries {lo} {hi} {a}"
            );
            count(&x);
            let x = nodes(l.node_boundaries(lo, hi, a));
            assert_eq!(
                x,
                nodes(e.node_boundaries(lo, hi, a)),
                "node_boundaries {lo} {hi}"
            );
            count(&x);
            let t = lo + g.below((hi - lo).max(1));
            let x = nodes(l.nodes_valid_at(t, a));
            assert_eq!(x, nodes(e.nodes_valid_at(t, a)), "nodes_valid_at {t} {a}");
            count(&x);
            let p = l.edge_start_positions(lo, hi, a);
            assert_eq!(p, e.edge_start_positions(lo, hi, a), "starts {lo} {hi} {a}");
            assert_eq!(l.edge_start_runs(lo, hi, a), e.edge_start_runs(lo, hi, a));
            let x = edges(l.edge_starts_list(lo, hi, a));
            assert_eq!(x, edges(e.edge_starts_list(lo, hi, a)));
            count(&x);
            // Start events: the versions of an edge scan that start in the window, in its
            // order, for both sources.
            let starting = |touching| -> Vec<tgms_engine::StartEvent> {
                let scan = tgms_engine::EdgeScan {
                    as_of_tt: a,
                    vt_window: Some((lo, hi)),
                    rel_types: None,
                    touching,
                };
                e.edge_scan(&scan)
                    .into_iter()
                    .filter(|v| lo <= v.vt_s() && v.vt_s() < hi)
                    .map(|v| tgms_engine::StartEvent {
                        t: v.vt_s(),
                        src: v.src_id(),
                        dst: v.dst_id(),
                    })
                    .collect()
            };
            let want = starting(None);
            assert_eq!(
                l.start_events(lo, hi, a),
                want,
                "start_events {lo} {hi} {a}"
            );
            assert_eq!(e.start_events(lo, hi, a), want, "start_events (memory)");
            // Among a node set: the versions of a both-ends touching scan that start in the
            // window, in its order.
            for set in &sets {
                let want = starting(Some((set, tgms_engine::Touch::Both)));
                let got = l.start_events_among(lo, hi, a, set);
                assert_eq!(got, want, "start_events_among {lo} {hi} {a} {set:?}");
                assert_eq!(e.start_events_among(lo, hi, a, set), want, "(memory)");
                non_empty_among += usize::from(!want.is_empty());
            }
            for stride in [1, 7, 1_000, 50_000] {
                for rel in [None, Some("R"), Some("absent")] {
                    same_counts(&l, &e, (lo, hi, stride), a, rel);
                }
            }
            let n = l.edge_positions();
            assert_eq!(n, e.edge_positions());
            let cut = g.below(n as i64 + 1) as usize;
            for range in [0..cut, cut..n + 3] {
                let f = |s: &tgms_engine::Snapshot<'_>| -> Vec<Value> {
                    s.edge_starts_in(lo, hi, a, range.clone())
                        .map(|e| Version::Edge(e).to_json())
                        .collect()
                };
                assert_eq!(f(&l), f(&e), "edge_starts_in {range:?}");
            }
        }
    }
    // Compact columns, positions, digest orders, digest, uid search.
    let (cl, ce) = (l.edge_columns(), e.edge_columns());
    let c = cl.covered().min(ce.covered());
    // The columns cover the mapped image (positions above it are read with `edge_at`).
    assert!(cl.covered() <= l.edge_positions());
    assert_eq!(l.edge_positions(), e.edge_positions());
    assert_eq!(cl.vt_s()[..c], ce.vt_s()[..c]);
    assert_eq!(cl.rel()[..c], ce.rel()[..c]);
    assert_eq!(cl.src()[..c], ce.src()[..c]);
    assert_eq!(cl.dst()[..c], ce.dst()[..c]);
    for p in [
        0,
        1,
        l.edge_positions() as u32 / 2,
        l.edge_positions() as u32,
    ] {
        let f = |s: &tgms_engine::Snapshot<'_>| s.edge_at(p).map(|e| Version::Edge(e).to_json());
        assert_eq!(f(&l), f(&e), "edge_at {p}");
    }
    assert_eq!(nodes(l.all_nodes()), nodes(e.all_nodes()), "all_nodes");
    assert_eq!(edges(l.all_edges()), edges(e.all_edges()), "all_edges");
    assert_eq!(lazy.digest(), eager.digest());
    for needle in ["", "a", "é", "日", "n1", "1", "zz"] {
        assert_eq!(
            l.uids_lowercase_containing(needle),
            e.uids_lowercase_containing(needle),
            "uid search {needle:?}"
        );
    }
    assert!(lazy.is_lazy());
    assert!(non_empty_among > 0, "no node set held a start event");
    non_empty
}

/// `edge_start_counts` of `l` (the image) equals that of `e` (memory): the same counts, or
/// both an error.
fn same_counts(
    l: &tgms_engine::Snapshot<'_>,
    e: &tgms_engine::Snapshot<'_>,
    (t_a, t_b, stride): (i64, i64, i64),
    as_of: i64,
    rel: Option<&str>,
) {
    let (x, y) = (
        l.edge_start_counts(t_a, t_b, stride, as_of, rel),
        e.edge_start_counts(t_a, t_b, stride, as_of, rel),
    );
    let what = format!("edge_start_counts({t_a}, {t_b}, {stride}, {as_of}, {rel:?})");
    assert_eq!(x.is_err(), y.is_err(), "{what}");
    assert_eq!(x.ok(), y.ok(), "{what}");
}

/// `edge_start_counts` (answered from the image by a block scan) equals the in-memory count.
fn compare_start_counts(lazy: &Store, eager: &Store, last_tt: i64, g: &mut Rng) {
    let (l, e) = (lazy.snapshot(), eager.snapshot());
    for _ in 0..60 {
        let t_a = g.below(260) - 20;
        let t_b = t_a + g.below(240);
        let stride = 1 + g.below(50);
        let as_of = [OPEN_END, last_tt / 2, g.below(last_tt + 1)][g.below(3) as usize];
        for rel in [None, Some("R"), Some("S"), Some("T"), Some("absent")] {
            same_counts(&l, &e, (t_a, t_b, stride), as_of, rel);
        }
    }
    for w in [(0, 10, 0), (0, i64::MAX, 1), (5, 5, 1)] {
        same_counts(&l, &e, w, OPEN_END, None);
    }
}

#[test]
fn point_reads_of_a_lazy_open_equal_an_eager_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(41);
    let mut s = Store::create_with(&path, opts()).unwrap();
    let (mut non_empty, mut failed, mut tt, mut retired) = (0, 0, 0i64, 0);
    for stage in 0..4 {
        for _ in 0..70 {
            tt += 1;
            let first = random_op(&mut g);
            let mut ops = vec![Op::from_json(&first)];
            if g.below(7) == 0 {
                ops.push(Op::from_json(&random_op(&mut g)));
                ops.push(Op::from_json(
                    &json!({"op":"retract","ref":{"kind":"node","uid":"nobody"},"t":0}),
                ));
            } else if first["op"] == "assert_edge" && g.below(2) == 0 {
                // The same identity again, overlapping, in the same batch: the first row is
                // retired (never existed, `alive = 0`) and carved into fragments.
                let mut again = first.clone();
                again["vt_s"] = json!(first["vt_s"].as_i64().unwrap() + 1);
                again["vt_e"] = json!(OPEN_END);
                retired += 1;
                ops.push(Op::from_json(&again));
            }
            failed += usize::from(s.write_at(tt, ops).is_err());
            if g.below(25) == 0 {
                s.flush().unwrap();
            }
        }
        s.compact().unwrap();
        drop(s);
        let lazy = read_only(&path, false);
        let eager = read_only(&path, true);
        assert!(
            lazy.is_lazy(),
            "stage {stage}: a compacted store opens lazily"
        );
        assert!(!eager.is_lazy());
        non_empty += compare_point_reads(&lazy, &eager, tt);
        // The pread path (the image read into memory instead of mapped) answers the same.
        let pread = read_only_pread(&path);
        assert!(pread.is_lazy());
        compare_point_reads(&pread, &eager, tt);
        compare_start_counts(&lazy, &eager, tt, &mut g);
        assert!(
            lazy.is_lazy(),
            "point reads and start counts must not decode the image"
        );
        non_empty += compare_scans(&lazy, &eager, &SMALL_WINDOWS, tt, &mut g);
        compare_scans(&pread, &eager, &SMALL_WINDOWS, tt, &mut g);
        drop((lazy, eager, pread));
        s = Store::open_with(&path, opts()).unwrap();
    }
    assert!(failed >= 10, "only {failed} failed batches");
    assert!(retired >= 10, "only {retired} same-batch retirements");
    assert!(non_empty >= 1000, "only {non_empty} non-empty answers");
}

/// The image is followed by flush segments (and no log tail): a read-only open maps the
/// image, decodes only the flush segments, and every read equals an eager open's, also
/// where the flush segments close image rows (corrections and retractions of its versions),
/// add identities, uids, strings and `#k` slots above it, and retire rows in their batch.
#[test]
fn reads_over_an_image_and_flush_segments_equal_an_eager_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(97);
    let mut s = Store::create_with(&path, compacting_at(0)).unwrap();
    let (mut tt, mut non_empty, mut image_closes, mut image_tt) = (0i64, 0, 0, 0);
    for stage in 0..5 {
        for _ in 0..60 {
            tt += 1;
            let mut ops = vec![Op::from_json(&random_op(&mut g))];
            if g.below(6) == 0 {
                ops.push(Op::from_json(&random_op(&mut g)));
            }
            let _ = s.write_at(tt, ops);
            if g.below(20) == 0 {
                s.flush().unwrap();
            }
        }
        if stage == 0 || stage == 3 {
            s.compact().unwrap();
            image_tt = tt;
            continue;
        }
        s.flush().unwrap();
        let segments = s.segments().len();
        drop(s);
        let lazy = read_only(&path, false);
        let eager = read_only(&path, true);
        assert!(
            lazy.is_lazy(),
            "stage {stage}: an image and {} flush segments open lazily",
            segments - 1
        );
        assert!(segments >= 2, "stage {stage}: {segments} segments");
        // Image rows the flush segments closed: written by the image's time, closed after.
        let snap = eager.snapshot();
        let above = |(s, e): (i64, i64)| s <= image_tt && e != OPEN_END && e > image_tt;
        image_closes += snap
            .all_edges()
            .iter()
            .filter(|v| above((v.tt_s(), v.tt_e())))
            .count()
            + snap
                .all_nodes()
                .iter()
                .filter(|v| above((v.tt_s(), v.tt_e())))
                .count();
        non_empty += compare_point_reads(&lazy, &eager, tt);
        compare_start_counts(&lazy, &eager, tt, &mut g);
        non_empty += compare_scans(&lazy, &eager, &SMALL_WINDOWS, tt, &mut g);
        let pread = read_only_pread(&path);
        assert!(pread.is_lazy());
        compare_point_reads(&pread, &eager, tt);
        drop((lazy, eager, pread));
        s = Store::open_with(&path, compacting_at(0)).unwrap();
    }
    assert!(non_empty >= 1000, "only {non_empty} non-empty answers");
    assert!(
        image_closes >= 20,
        "only {image_closes} closed edge versions"
    );
}

/// Closing writers seal their commits as small flush segments above the image: a read-only
/// open then maps the image and decodes them (no log replay) and reads as an eager open
/// does. Small segments are rewritten into the image only once they hold an eighth of its
/// rows or number eight times the segment threshold, not at the threshold itself.
#[test]
fn closing_writers_leave_flush_segments_that_readers_serve_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(5);
    let mut s = Store::create_with(&path, compacting_at(2)).unwrap();
    let mut tt = 0;
    for _ in 0..600 {
        tt += 1;
        let _ = s.write_at(tt, vec![Op::from_json(&random_op(&mut g))]);
    }
    s.compact().unwrap();
    s.close().unwrap();
    let (mut most, mut compactions, mut before) = (1, 0, 1);
    for i in 0..40 {
        let mut s = Store::open_with(&path, compacting_at(2)).unwrap();
        tt += 1;
        let _ = s.write_at(tt, vec![Op::from_json(&random_op(&mut g))]);
        s.close().unwrap();
        let lazy = read_only(&path, false);
        let eager = read_only(&path, true);
        let n = lazy.segments().len();
        assert!(lazy.is_lazy(), "write {i}: {n} segments, no log tail");
        assert_eq!(lazy.digest(), eager.digest(), "write {i}");
        if i % 8 == 0 {
            compare_point_reads(&lazy, &eager, tt);
        }
        if n < before {
            compactions += 1;
            assert!(before >= 2, "write {i}: compacted below the threshold");
        }
        most = most.max(n);
        before = n;
    }
    assert!(
        most >= 4,
        "small segments compacted at once (at most {most} segments)"
    );
    assert!(
        most <= 16,
        "{most} segments: the count cap (8 x 2) was passed"
    );
    assert!(compactions >= 1, "the small segments were never compacted");
}

/// A flush segment that only closes image rows (a retraction: no row, no new name) is
/// still applied over the image.
#[test]
fn a_flush_segment_of_closures_only_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut s = Store::create_with(&path, opts()).unwrap();
    let edge = json!({"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "R", "vt_s": 1});
    s.write_at(1, vec![Op::from_json(&edge)]).unwrap();
    s.compact().unwrap();
    // The reason is a string the image has already: the segment adds no name.
    let gone = json!({"op": "retract", "ref": {"kind": "edge", "src": "a", "dst": "b",
        "rel_type": "R", "disc": ""}, "t": 1, "reason": "R"});
    s.write_at(2, vec![Op::from_json(&gone)]).unwrap();
    s.close().unwrap();
    let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
    assert!(lazy.is_lazy());
    assert_eq!(lazy.segments().len(), 2);
    let id = Identity::Edge {
        src: "a".into(),
        dst: "b".into(),
        rel_type: "R".into(),
        disc: "".into(),
    };
    for snap in [lazy.snapshot(), eager.snapshot()] {
        assert!(snap.versions_of(&id, OPEN_END).is_empty());
        assert_eq!(snap.versions_of(&id, 1).len(), 1);
        assert!(snap.out_edges("a", None, OPEN_END).is_empty());
    }
    assert_eq!(lazy.digest(), eager.digest());
}

#[test]
fn layouts_without_an_image_open_eagerly_and_a_log_tail_is_applied_over_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(7);
    let mut s = Store::create_with(&path, opts()).unwrap();
    for tt in 1..=30 {
        let _ = s.write_at(tt, vec![Op::from_json(&random_op(&mut g))]);
    }
    // Only the log: nothing to map.
    drop(s);
    assert!(!read_only(&path, false).is_lazy());
    // A flush segment (no indexes).
    let mut s = Store::open_with(&path, opts()).unwrap();
    assert!(!s.is_lazy());
    s.flush().unwrap();
    drop(s);
    assert!(!read_only(&path, false).is_lazy());
    // A compacted image with a log tail after it: the tail is applied over the mapped
    // image, by readers and by the writer that compacted.
    let mut s = Store::open_with(&path, opts()).unwrap();
    s.compact().unwrap();
    assert!(s.is_lazy());
    for tt in 31..=45 {
        let _ = s.write_at(tt, vec![Op::from_json(&random_op(&mut g))]);
    }
    let written = s.digest();
    drop(s);
    let tail = read_only(&path, false);
    assert!(tail.is_lazy());
    assert_eq!(tail.segments().len(), 1);
    assert!(tail.memtable_rows() > 0);
    let eager = read_only(&path, true);
    assert_eq!(tail.digest(), eager.digest());
    assert_eq!(tail.digest(), written);
    drop((tail, eager));
    // A writable open maps the image too (and replays the tail), unless told to decode.
    let mut s = Store::open_with(&path, opts()).unwrap();
    assert!(s.is_lazy());
    assert_eq!(s.digest(), written);
    // A flush renumbers the writer's memtable as the segment does: position by position,
    // the writer's edge rows are those a fresh open reads.
    s.flush().unwrap();
    let fresh = read_only(&path, false);
    assert_eq!(fresh.segments().len(), 2);
    let rows = |st: &Store| {
        let snap = st.snapshot();
        (0..snap.edge_positions() as u32)
            .map(|p| {
                let e = snap.edge_at(p).unwrap();
                (e.eid(), e.vt_s(), e.tt_s())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&s), rows(&fresh));
    assert_eq!(fresh.digest(), written);
    drop((s, fresh));
    let s = Store::open_with(
        &path,
        Options {
            eager: true,
            ..opts()
        },
    )
    .unwrap();
    assert!(!s.is_lazy());
    assert_eq!(s.digest(), written);
}

#[test]
fn a_damaged_base_image_or_flush_segment_is_reported_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(3);
    let mut s = Store::create_with(&path, opts()).unwrap();
    for tt in 1..=40 {
        let _ = s.write_at(tt, vec![Op::from_json(&random_op(&mut g))]);
    }
    s.compact().unwrap();
    drop(s);
    let seg = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "tgs"))
        .unwrap();
    let good = std::fs::read(&seg).unwrap();
    for at in [0, 11, 100, good.len() / 2, good.len() - 30, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(&seg, &bad).unwrap();
        let err = Store::open_read_only(&path)
            .err()
            .expect("damage is detected");
        assert!(
            matches!(err, tgms_engine::Error::Corruption { .. }),
            "byte {at}: {err}"
        );
    }
    std::fs::write(&seg, &good).unwrap();
    assert!(read_only(&path, false).is_lazy());
    // A damaged flush segment above the image is reported too, naming its file.
    let mut s = Store::open_with(&path, opts()).unwrap();
    let _ = s.write_at(41, vec![Op::from_json(&random_op(&mut g))]);
    s.close().unwrap();
    let flush = path.join(tgms_engine::format::manifest::seg_name(
        read_only(&path, false).segments()[1].seq,
    ));
    let good = std::fs::read(&flush).unwrap();
    for at in [0, 11, good.len() / 2, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(&flush, &bad).unwrap();
        match Store::open_read_only(&path)
            .err()
            .expect("damage is detected")
        {
            tgms_engine::Error::Corruption { file, .. } => assert_eq!(file, flush, "byte {at}"),
            err => panic!("byte {at}: {err}"),
        }
    }
    std::fs::write(&flush, &good).unwrap();
    let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
    assert!(lazy.is_lazy());
    assert_eq!(lazy.digest(), eager.digest());
}

/// Ingested events of the many-row tests, one per time in `ts`: endpoints among `n_uids`
/// uids, rel R or S, a fifth with a duration below `max_len`; `evs` records each event's
/// `(src, dst, rel, vt_s)` (its ingest ordinal is its index).
fn events(
    g: &mut Rng,
    ts: Vec<i64>,
    n_uids: i64,
    max_len: i64,
    evs: &mut Vec<(String, String, &'static str, i64)>,
) -> Value {
    let batch: Vec<Value> = ts
        .into_iter()
        .map(|t| {
            let (u, w) = (
                format!("n{}", g.below(n_uids)),
                format!("n{}", g.below(n_uids)),
            );
            let rel = ["R", "S"][g.below(2) as usize];
            let mut ev = json!({"src": u, "dst": w, "rel_type": rel, "vt_s": t});
            if g.below(5) == 0 {
                ev["vt_e"] = json!(t + 1 + g.below(max_len));
            }
            evs.push((u, w, rel, t));
            ev
        })
        .collect();
    json!({"op": "ingest_events", "events": batch})
}

/// Closes random recorded events at each tt of `tts`: retracts them (even tt) or corrects
/// them to one microsecond (odd tt); returns how many batches succeeded.
fn close_events(
    s: &mut Store,
    g: &mut Rng,
    evs: &[(String, String, &str, i64)],
    tts: impl Iterator<Item = i64>,
) -> usize {
    let mut closed = 0;
    for tt in tts {
        let k = g.below(evs.len() as i64) as usize;
        let (u, w, rel, t) = &evs[k];
        let r =
            json!({"kind": "edge", "src": u, "dst": w, "rel_type": rel, "disc": format!("#{k}")});
        let op = if tt % 2 == 0 {
            json!({"op": "retract", "ref": r, "t": t, "reason": "gone"})
        } else {
            json!({"op": "correct", "ref": r, "props": {"w": 1}, "vt_s": t, "vt_e": t + 1, "reason": "fix"})
        };
        closed += usize::from(s.write_at(tt, vec![Op::from_json(&op)]).is_ok());
    }
    closed
}

/// Start counts over an image of several scan blocks (150,000 ingested events, 20 % with
/// durations, then retractions and corrections that close rows across the blocks).
#[test]
fn start_counts_over_many_blocks_equal_the_in_memory_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(77);
    let mut s = Store::create_with(&path, opts()).unwrap();
    let mut evs = Vec::new();
    for b in 0..3 {
        let ts: Vec<i64> = (0..50_000).map(|_| g.below(100_000)).collect();
        let op = events(&mut g, ts, 200, 5_000, &mut evs);
        s.write_at(b + 1, vec![Op::from_json(&op)]).unwrap();
    }
    let closed = close_events(&mut s, &mut g, &evs, 10..210);
    assert!(closed >= 150, "only {closed} closing writes");
    s.compact().unwrap();
    drop(s);
    let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
    assert!(lazy.is_lazy());
    compare_start_counts_wide(&lazy, &eager, &mut g);
    assert!(lazy.is_lazy());
}

fn compare_start_counts_wide(lazy: &Store, eager: &Store, g: &mut Rng) {
    let (l, e) = (lazy.snapshot(), eager.snapshot());
    for _ in 0..20 {
        let t_a = g.below(60_000) - 1_000;
        let t_b = t_a + 1 + g.below(60_000);
        let stride = 1 + g.below(5_000);
        for as_of in [OPEN_END, 5, 100, 150] {
            for rel in [None, Some("R"), Some("S")] {
                assert!(l.edge_start_counts(t_a, t_b, stride, as_of, rel).is_ok());
                same_counts(&l, &e, (t_a, t_b, stride), as_of, rel);
            }
        }
    }
}

/// Every scan over an image of many zones: 30,000 events in ascending valid time (zones
/// the window reads skip), 20 % with durations, 5,000 out of order (zones that span the
/// whole range), 9,000 node versions, then retractions and corrections across the zones.
#[test]
fn scans_over_many_zones_equal_the_in_memory_scans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let mut g = Rng::new(78);
    let mut s = Store::create_with(&path, opts()).unwrap();
    let mut evs = Vec::new();
    let sorted = events(
        &mut g,
        (0..30_000).map(|i| 3 * i).collect(),
        300,
        2_000,
        &mut evs,
    );
    let ts: Vec<i64> = (0..5_000).map(|_| g.below(90_000)).collect();
    let random = events(&mut g, ts, 300, 2_000, &mut evs);
    for (tt, op) in [(1, sorted), (2, random)] {
        s.write_at(tt, vec![Op::from_json(&op)]).unwrap();
    }
    let node_ops: Vec<Op> = (0..9_000)
        .map(|i| {
            let end = if i % 7 == 0 { OPEN_END } else { 10 * i + 500 };
            Op::from_json(
                &json!({"op": "assert_node", "uid": format!("v{i}"), "label": "N",
                "vt_s": 10 * i, "vt_e": end}),
            )
        })
        .collect();
    s.write_at(3, node_ops).unwrap();
    let mut closed = close_events(&mut s, &mut g, &evs, 10..80);
    for tt in 80..110 {
        let uid = format!("v{}", g.below(9_000));
        let op = json!({"op": "retract", "ref": {"kind": "node", "uid": uid},
            "t": g.below(90_000), "reason": "gone"});
        closed += usize::from(s.write_at(tt, vec![Op::from_json(&op)]).is_ok());
    }
    assert!(closed >= 60, "only {closed} closing writes");
    s.compact().unwrap();
    drop(s);
    let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
    assert!(lazy.is_lazy());
    let windows = [
        (0, 100),
        (45_000, 45_500),
        (89_000, 95_000),
        (10_000, 60_000),
        (-100, 1 << 41),
    ];
    let non_empty = compare_scans(&lazy, &eager, &windows, 110, &mut g);
    assert!(non_empty >= 150, "only {non_empty} non-empty answers");
    drop((lazy, eager));
    // Flush segments above the image: closures of image rows across its zones, new events
    // and nodes. The image is still served mapped, the rest decoded; the scans agree.
    let mut s = Store::open_with(&path, compacting_at(0)).unwrap();
    let more: Vec<i64> = (0..2_000).map(|_| g.below(90_000)).collect();
    let more = events(&mut g, more, 320, 2_000, &mut evs);
    s.write_at(120, vec![Op::from_json(&more)]).unwrap();
    s.flush().unwrap();
    let closed = close_events(&mut s, &mut g, &evs, 130..200);
    let node = json!({"op": "assert_node", "uid": "v7", "label": "M", "vt_s": 5, "vt_e": 9});
    s.write_at(200, vec![Op::from_json(&node)]).unwrap();
    s.flush().unwrap();
    assert!(closed >= 40, "only {closed} closing writes");
    assert_eq!(s.segments().len(), 3);
    drop(s);
    let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
    assert!(lazy.is_lazy());
    let non_empty = compare_scans(&lazy, &eager, &windows, 200, &mut g);
    assert!(non_empty >= 150, "only {non_empty} non-empty answers");
    compare_start_counts_wide(&lazy, &eager, &mut g);
    assert_eq!(lazy.digest(), eager.digest());
}

/// A writer compacts once it holds `compact_rows` rows decoded (`Options::compact_rows`):
/// a load into a fresh store maps its first image at its first flush, and every later
/// flush folds the flush segment into the image (merged over the mapped image, not
/// decoded), so the segments above the image never hold a second memtable. The store
/// equals the one an eager writer builds from the same batches.
#[test]
fn a_load_compacts_at_its_decoded_row_limit_and_stays_on_the_mapped_image() {
    let dir = tempfile::tempdir().unwrap();
    let (path, reference) = (dir.path().join("s"), dir.path().join("r"));
    let bounded = Options {
        flush_rows: Some(40),
        compact_rows: Some(40),
        compact_segments: Some(0),
        ..opts()
    };
    let mut s = Store::create_with(&path, bounded).unwrap();
    let eager = Options {
        eager: true,
        flush_rows: Some(40),
        compact_segments: Some(0),
        ..opts()
    };
    let mut r = Store::create_with(&reference, eager).unwrap();
    let mut g = Rng::new(11);
    let (mut flushes, mut compactions, mut tt) = (0, 0, 0);
    let above = |s: &Store| -> u64 {
        s.segments()
            .iter()
            .skip(1)
            .map(|e| e.zone.node_rows + e.zone.edge_rows)
            .sum()
    };
    for i in 0..400 {
        tt += 1;
        let ops: Vec<Op> = (0..1 + g.below(3))
            .map(|_| Op::from_json(&random_op(&mut g)))
            .collect();
        let before = s.segments().to_vec();
        let a = s.write_at(tt, ops.clone()).is_ok();
        assert_eq!(a, r.write_at(tt, ops).is_ok(), "batch {i}");
        if s.segments() != before.as_slice() {
            flushes += 1;
            compactions += usize::from(s.segments().len() == 1);
            assert!(s.is_lazy(), "batch {i}: the writer did not map its image");
        }
        assert!(
            above(&s) < 40,
            "batch {i}: {} rows decoded above the image",
            above(&s)
        );
        if i % 50 == 49 {
            assert_eq!(s.digest(), r.digest(), "batch {i}");
        }
    }
    assert!(
        flushes >= 5 && compactions >= 3,
        "{flushes} flushes, {compactions} compactions"
    );
    compare_point_reads(&s, &r, tt);
    // The eager writer holds every row; it never compacted.
    assert!(r.segments().len() >= flushes, "the eager writer compacted");
    s.close().unwrap();
    let lazy = read_only(&path, false);
    assert!(lazy.is_lazy());
    assert_eq!(lazy.digest(), r.digest());
}

/// A bulk load (`Store::set_bulk_load`) merges its decoded rows into the image only once
/// they are as many as the image's rows (within `compact_rows` and the load's bound): the
/// image doubles at each merge up to the bound, so the same batches rewrite the image far
/// less often than a writer that merges at every `compact_rows` rows, while the rows held
/// decoded stay under the bound and the store equals the one an eager writer builds.
#[test]
fn a_bulk_load_merges_when_its_decoded_rows_match_the_image_up_to_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let small = || Options {
        flush_rows: Some(40),
        compact_rows: Some(40),
        compact_segments: Some(0),
        ..opts()
    };
    let eager = Options {
        eager: true,
        flush_rows: Some(40),
        compact_segments: Some(0),
        ..opts()
    };
    let mut plain = Store::create_with(&dir.path().join("plain"), small()).unwrap();
    let mut load = Store::create_with(&dir.path().join("load"), small()).unwrap();
    let mut r = Store::create_with(&dir.path().join("r"), eager).unwrap();
    const BOUND: u64 = 200;
    load.set_bulk_load(BOUND);
    let rows = |e: &tgms_engine::format::manifest::SegEntry| e.zone.node_rows + e.zone.edge_rows;
    let above = |s: &Store| -> u64 { s.segments().iter().skip(1).map(rows).sum() };
    let mut g = Rng::new(23);
    let (mut merges, mut plain_merges, mut grew_to_image, mut tt) = (0, 0, 0, 0);
    for i in 0..1500 {
        tt += 1;
        let ops: Vec<Op> = (0..1 + g.below(3))
            .map(|_| Op::from_json(&random_op(&mut g)))
            .collect();
        let (before, image_before) = (load.segments().to_vec(), load.segments().first().map(rows));
        let plain_before = plain.segments().to_vec();
        let decoded_before = above(&load) + load.memtable_rows();
        let ok = load.write_at(tt, ops.clone()).is_ok();
        assert_eq!(ok, plain.write_at(tt, ops.clone()).is_ok(), "batch {i}");
        assert_eq!(ok, r.write_at(tt, ops).is_ok(), "batch {i}");
        let merged = |now: &[tgms_engine::format::manifest::SegEntry],
                      was: &[tgms_engine::format::manifest::SegEntry]| {
            now.len() == 1 && now != was
        };
        plain_merges += usize::from(merged(plain.segments(), &plain_before));
        if merged(load.segments(), &before) {
            merges += 1;
            assert!(
                load.is_lazy(),
                "batch {i}: the loader did not map its image"
            );
            // A merge over an image smaller than the bound waited for as many decoded rows
            // as the image had.
            if let Some(img) = image_before.filter(|&n| n > 60 && n < BOUND) {
                assert!(
                    decoded_before + 20 >= img,
                    "batch {i}: merged {decoded_before} decoded rows into an image of {img}"
                );
                grew_to_image += 1;
            }
        }
        assert!(
            above(&load) < BOUND,
            "batch {i}: {} rows decoded above the image",
            above(&load)
        );
        if i % 100 == 99 {
            assert_eq!(load.digest(), r.digest(), "batch {i}");
            assert_eq!(plain.digest(), r.digest(), "batch {i}");
        }
    }
    assert!(grew_to_image >= 1, "no merge over an image below the bound");
    assert!(
        merges >= 3 && merges * 2 <= plain_merges,
        "the load merged {merges} times, the plain writer {plain_merges} times"
    );
    compare_point_reads(&load, &r, tt);
    load.close().unwrap();
    let lazy = read_only(&dir.path().join("load"), false);
    assert!(lazy.is_lazy());
    assert_eq!(lazy.digest(), r.digest());
}
