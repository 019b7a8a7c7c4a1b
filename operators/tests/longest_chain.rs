//! `longest_chain` (issue 21 item 5) against a brute force on randomized stores: the longest
//! chain of events with `dst(ei) = src(ei+1)`, strictly increasing times and, with
//! `max_wait`, gaps of at most `max_wait` — its length by an O(n²) dynamic programme over the
//! believed rows, and the exact chain under the documented tie rule; plus predicates, paging
//! and bad inputs.

mod common;
use common::kit::*;
use common::*;
use serde_json::{json, Value};
use tgms_engine::Store;

fn store(r: &mut Rng) -> (tempfile::TempDir, Store) {
    let (d, mut s) = new_store();
    let n = r.int(0, 3) as usize;
    grow(&mut s, r, n);
    for _ in 0..r.int(1, 4) {
        let k = r.int(2, 25);
        let events: Vec<Value> = (0..k)
            .map(|_| {
                json!({"src": r.pick(&UIDS[..5]), "dst": r.pick(&UIDS[..5]),
                    "rel_type": r.pick(&RELS), "vt_s": r.int(0, 40),
                    "props": {"w": r.int(0, 3)}})
            })
            .collect();
        let tt = s.last_tt().unwrap_or(0) + 1;
        s.write_at(
            tt,
            ops(vec![json!({"op": "ingest_events", "events": events})]),
        )
        .unwrap();
    }
    (d, s)
}

/// Believed edge versions starting in `[ta, tb)`, in `(vt_s, eid)` order.
fn events(rows: &[Row], ta: i64, tb: i64) -> Vec<&Row> {
    let a = tgms_engine::OPEN_END - 1;
    let mut ev: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.node && believed(r, a) && ta <= r.vt_s && r.vt_s < tb)
        .collect();
    ev.sort_by(|x, y| (x.vt_s, &x.eid).cmp(&(y.vt_s, &y.eid)));
    ev
}

/// The brute force: longest chain by DP over all pairs; the chain by the tie rule (end at the
/// first event of maximal length, each predecessor the first of maximal length).
fn oracle(ev: &[&Row], max_wait: Option<i64>) -> Vec<String> {
    let n = ev.len();
    let mut len = vec![1usize; n];
    let mut pred = vec![usize::MAX; n];
    for j in 0..n {
        for i in 0..n {
            let ok = ev[i].dst == ev[j].src
                && ev[i].vt_s < ev[j].vt_s
                && max_wait.is_none_or(|w| ev[j].vt_s - ev[i].vt_s <= w);
            if ok && len[i] + 1 > len[j] {
                len[j] = len[i] + 1;
                pred[j] = i;
            }
        }
    }
    let Some(&best) = len.iter().max() else {
        return Vec::new();
    };
    let mut e = len.iter().position(|&l| l == best).unwrap();
    let mut chain = vec![];
    loop {
        chain.push(ev[e].eid.clone());
        if pred[e] == usize::MAX {
            break;
        }
        e = pred[e];
    }
    chain.reverse();
    chain
}

#[test]
fn the_longest_chain_equals_the_brute_force() {
    let mut r = Rng::new(0x6c6f_6e67);
    let (mut cases, mut long) = (0, 0);
    for _ in 0..150 {
        let (_d, s) = store(&mut r);
        let rows = plain_rows(&s);
        for _ in 0..4 {
            let ta = r.int(0, 15);
            let tb = ta + r.int(1, 40);
            let mut args = json!({"window": {"t_a": ta, "t_b": tb}, "limit": 1000});
            let max_wait = r.chance(50).then(|| r.int(1, 12));
            if let Some(w) = max_wait {
                args["max_wait"] = json!(w);
            }
            let mut ev = events(&rows, ta, tb);
            if r.chance(25) {
                args["self_loops"] = json!("exclude");
                ev.retain(|e| e.src != e.dst);
            } else if r.chance(25) {
                args["prop_filter"] = json!({"prop": "w", "cmp": "ge", "value": 1});
                ev.retain(|e| e.props["w"].as_i64().is_some_and(|w| w >= 1));
            }
            let want = oracle(&ev, max_wait);
            let got = payload(&call(&s, "longest_chain", args.clone()));
            let eids: Vec<String> = got["rows"]
                .as_array()
                .unwrap_or_else(|| panic!("{args}: {got}"))
                .iter()
                .map(|x| x["eid"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(eids, want, "{args}");
            assert_eq!(got["length"], json!(want.len()), "{args}");
            assert_eq!(got["n_events_in_window"], json!(ev.len()), "{args}");
            // The rows are a valid chain with each event's fields.
            let rs = got["rows"].as_array().unwrap();
            for w in rs.windows(2) {
                assert_eq!(w[0]["dst"], w[1]["src"], "{args}");
                assert!(w[0]["t"].as_i64() < w[1]["t"].as_i64(), "{args}");
            }
            cases += 1;
            long += usize::from(want.len() >= 3);
        }
    }
    assert!(
        long >= 100,
        "{long} of {cases} cases with a chain of 3 or more"
    );
}

#[test]
fn chains_page_and_bad_inputs_are_structured_errors() {
    let (_d, mut s) = new_store();
    // a→b→c→a→b… one event per µs: one chain of 30.
    let names = ["a", "b", "c"];
    let events: Vec<Value> = (0..30)
        .map(|i| json!({"src": names[i % 3], "dst": names[(i + 1) % 3], "rel_type": "R", "vt_s": 10 + i}))
        .collect();
    s.write_at(
        1,
        ops(vec![json!({"op": "ingest_events", "events": events})]),
    )
    .unwrap();
    let got = payload(&call(
        &s,
        "longest_chain",
        json!({"window": {"t_a": 0, "t_b": 100}, "limit": 7}),
    ));
    assert_eq!(got["length"], 30, "{got}");
    assert_eq!(got["rows_total"], 30, "{got}");
    assert_eq!(got["rows"].as_array().unwrap().len(), 7);
    assert_eq!(got["rows"][0]["t"], 10);
    assert!(got["cursor"].is_string(), "{got}");
    // c→d at 41, 42, 43 and d→e at 44: the chain reaching c last at 38 (b→c) extends by
    // c→d, d→e only when a wait of 3 µs is allowed.
    let late: Vec<Value> = (0..3)
        .map(|i| json!({"src": "c", "dst": "d", "rel_type": "R", "vt_s": 41 + i}))
        .chain(std::iter::once(
            json!({"src": "d", "dst": "e", "rel_type": "R", "vt_s": 44}),
        ))
        .collect();
    s.write_at(2, ops(vec![json!({"op": "ingest_events", "events": late})]))
        .unwrap();
    for (t_a, max_wait, want) in [
        (0, None, 31),
        (0, Some(1), 30),
        (30, None, 11),
        (30, Some(1), 10),
        (30, Some(2), 10),
        (30, Some(3), 11),
    ] {
        let mut a = json!({"window": {"t_a": t_a, "t_b": 100}});
        if let Some(w) = max_wait {
            a["max_wait"] = json!(w);
        }
        let got = payload(&call(&s, "longest_chain", a.clone()));
        assert_eq!(got["length"], want, "{a}: {got}");
    }
    // An empty window: length 0, no rows.
    let got = payload(&call(
        &s,
        "longest_chain",
        json!({"window": {"t_a": 200, "t_b": 300}}),
    ));
    assert_eq!(got["length"], 0, "{got}");
    assert_eq!(got["rows"], json!([]));
    for (args, code, msg) in [
        (
            json!({"window": {"t_a": 5, "t_b": 5}}),
            "E_INVALID_ARG",
            "t_a < t_b",
        ),
        (
            json!({"window": {"t_a": 0, "t_b": 5}, "max_wait": 0}),
            "E_SCHEMA",
            "max_wait",
        ),
        (
            json!({"window": {"t_a": 0, "t_b": 5}, "max_wait": "soon"}),
            "E_SCHEMA",
            "duration",
        ),
        (json!({}), "E_SCHEMA", "window"),
    ] {
        let e = call(&s, "longest_chain", args.clone());
        assert_eq!(e["error"], code, "{args}: {e}");
        assert!(canon(&e).contains(msg), "{args}: {e}");
    }
}
