//! The point operators on a read-only store served from its mapped base image
//! (`format-spec.md` §9.4) give byte-identical envelopes to the same calls on an eager open
//! (every segment decoded into memory), over random compacted stores with corrections,
//! retractions, interval edges and failed batches; and none of those calls decodes the
//! image (they are answered from the mapped file).

mod common;
use common::kit::{grow, Rng, UIDS};
use common::*;
use serde_json::{json, Value};
use tgms_engine::{Options, Store};

fn read_only(path: &std::path::Path, eager: bool) -> Store {
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

/// Argument sets of the point operators over the kit's uid universe.
fn calls(r: &mut Rng, last_tt: i64) -> Vec<(&'static str, Value)> {
    let mut v = Vec::new();
    let mut uids: Vec<&str> = UIDS.to_vec();
    uids.push("nobody");
    for uid in uids {
        let t = r.int(-5, 70);
        let as_of = r.int(0, last_tt + 2);
        v.push(("entity_history", json!({"uid": uid})));
        v.push(("entity_history", json!({"uid": uid, "as_of_tt": as_of})));
        for dir in ["out", "in", "both"] {
            v.push(("state_at", json!({"uid": uid, "at": t, "direction": dir})));
        }
        v.push((
            "snapshot_subgraph",
            json!({"seeds": [uid], "hops": 2, "t_valid": t}),
        ));
        v.push((
            "neighborhood_evolution",
            json!({"uid": uid, "t1": t, "t2": t + r.int(1, 30)}),
        ));
        v.push((
            "weighted_traverse",
            json!({"seed": uid, "t": t, "max_depth": 2, "direction": "both"}),
        ));
        let dst = UIDS[r.below(UIDS.len() as u64) as usize];
        v.push((
            "temporal_paths",
            json!({"src": uid, "dst": dst, "window": {"t_a": 0, "t_b": 80}, "k": 3, "max_hops": 3}),
        ));
    }
    v
}

#[test]
fn point_operators_answer_the_same_from_the_mapped_image() {
    let mut r = Rng(0x1a2b);
    let mut compared = 0;
    for _ in 0..6 {
        let (dir, mut s) = new_store();
        grow(&mut s, &mut r, 60);
        s.compact().unwrap();
        let last_tt = s.last_tt().unwrap_or(0);
        let path = dir.path().join("s");
        drop(s);
        let (lazy, eager) = (read_only(&path, false), read_only(&path, true));
        assert!(lazy.is_lazy());
        for (op, args) in calls(&mut r, last_tt) {
            let (a, b) = (
                call(&lazy, op, args.clone()),
                call(&eager, op, args.clone()),
            );
            assert_eq!(canon(&a), canon(&b), "{op} {args}");
            compared += usize::from(a.get("result_digest").is_some());
        }
        assert!(lazy.is_lazy(), "point operators must not decode the image");
        // A scan decodes it; the point operators still agree afterwards.
        let scan = json!({"window": {"t_a": 0, "t_b": 60}, "group_by": [{"dim": "rel_type"}],
            "aggregates": [{"agg": "count"}]});
        assert_eq!(
            canon(&call(&lazy, "aggregate_events", scan.clone())),
            canon(&call(&eager, "aggregate_events", scan))
        );
        assert!(!lazy.is_lazy());
        for (op, args) in calls(&mut r, last_tt) {
            assert_eq!(
                canon(&call(&lazy, op, args.clone())),
                canon(&call(&eager, op, args.clone())),
                "{op} {args} after the decode"
            );
        }
    }
    assert!(compared >= 300, "only {compared} successful calls compared");
}
