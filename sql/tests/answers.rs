//! SQL over the live store equals the operators and the engine on the bench generator's
//! 100k store (corrections, a corrected node, retractions; the image with a delta above
//! it): every stored row, the history of a corrected node now and at an earlier belief
//! state, the state of entities at an instant, the diff of two snapshots and grouped
//! counts. Each operator answer is the registry operator's, complete (unpaged); each SQL
//! answer is DataFusion's over [`tgms_sql::StoreTable`]. Also: 1 and many partitions give
//! the same rows, a mapped and an eagerly decoded store give the same rows, and the scan's
//! pushed filters change no answer; the three read forms (the mapped image alone, the image
//! with a delta above it, a decoded store) give the same rows.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use tgms_engine::{canon, Options, Store};
use tgms_operators::pipeline::call_operator_unpaged;
use tgms_operators::CallOptions;
use tgms_sql::out::{write, Format};

const N: u64 = 100_000;

/// The generated store (built once per test binary) and its directory.
fn store() -> &'static (tempfile::TempDir, Arc<Store>, i64) {
    static S: OnceLock<(tempfile::TempDir, Arc<Store>, i64)> = OnceLock::new();
    S.get_or_init(|| {
        use tgms_bench::generate::{generate, ClockMode};
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            no_sync: true,
            ..Options::default()
        };
        let mut st = Store::create_with(dir.path(), opts).unwrap();
        let report = st
            .bulk_load(0, |ld| generate(ld, N, ClockMode::Fixed, &mut |_, _| {}))
            .unwrap()
            .unwrap();
        // Compacted, the rows are one mapped image; one more batch leaves a delta above it
        // that closes an image row (a correction of event #1's edge) and adds rows.
        st.compact().unwrap();
        let (src, dst) = tgms_bench::generate::endpoints(N, 1);
        let op = |v: Value| tgms_engine::Op::parse(&v).unwrap();
        let vt_s = tgms_bench::generate::vt_s(N, 1) as i64;
        st.write(vec![
            op(
                json!({"op": "correct", "ref": {"kind": "edge", "src": format!("n{src}"),
                "dst": format!("n{dst}"), "rel_type": tgms_bench::generate::rel_type(1),
                "disc": "#1"}, "props": {"weight": 9}, "vt_s": vt_s, "vt_e": vt_s + 77,
                "reason": "sql test: a correction above the image"}),
            ),
            op(
                json!({"op": "assert_edge", "src": "n3", "dst": "n4", "rel_type": "S",
                "vt_s": 29_000, "props": {"weight": 1}}),
            ),
        ])
        .unwrap();
        assert!(st.is_lazy(), "the image with a delta above it");
        // The epoch-1 marker (n1's props) is written after the ingest and before the
        // corrections, one of which corrects n1.
        (dir, Arc::new(st), report.tt_epoch1)
    })
}

/// The rows of `q` over `st` (as believed at `as_of`), as JSON objects (times as µs by
/// `arrow_cast(…, 'Int64')` in the queries).
fn sql_on(st: &Arc<Store>, as_of: Option<i64>, q: &str) -> Vec<Value> {
    let ctx = tgms_sql::session(st.clone(), as_of).unwrap();
    rows_of(&ctx, q)
}

fn rows_of(ctx: &datafusion::prelude::SessionContext, q: &str) -> Vec<Value> {
    let (schema, batches) = tgms_sql::query(ctx, q).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut text = Vec::new();
    write(&mut text, &schema, &batches, Format::Json).unwrap();
    match serde_json::from_slice(&text).unwrap() {
        Value::Array(a) => a,
        v => panic!("not an array: {v}"),
    }
}

fn sql(q: &str) -> Vec<Value> {
    sql_on(&store().1, None, q)
}

fn op(name: &str, args: Value) -> Value {
    call_operator_unpaged(store().1.snapshot(), name, &args, &CallOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn int(v: &Value, k: &str) -> i64 {
    v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"))
}

fn text(v: &Value, k: &str) -> String {
    v[k].as_str()
        .unwrap_or_else(|| panic!("{k} in {v}"))
        .to_string()
}

#[test]
fn the_table_holds_every_stored_row_once() {
    let (_, st, _) = store();
    let snap = st.snapshot();
    // (vid, vt_s, vt_e, tt_s, tt_e, props, [src, dst, rel_type] of an edge).
    type Stored = (String, i64, i64, i64, i64, String, Option<[String; 3]>);
    let mut want: Vec<Stored> = snap
        .all_nodes()
        .iter()
        .map(|n| {
            (
                n.vid(),
                n.vt_s(),
                n.vt_e(),
                n.tt_s(),
                n.tt_e(),
                n.props().into(),
                None,
            )
        })
        .chain(snap.all_edges().iter().map(|e| {
            let ends = [e.src(), e.dst(), e.rel_type()].map(String::from);
            (
                e.vid(),
                e.vt_s(),
                e.vt_e(),
                e.tt_s(),
                e.tt_e(),
                e.props().into(),
                Some(ends),
            )
        }))
        .collect();
    want.sort();
    // The endpoint columns of the first batches are read row by row and the rest gathered
    // from the table of every uid's name (about 1,000 uids, batches of 8,192 rows): both ways
    // are compared with the versions here.
    let got = sql(
        "SELECT vid, arrow_cast(vt_s, 'Int64') AS vt_s, arrow_cast(vt_e, 'Int64') AS vt_e, \
         arrow_cast(tt_s, 'Int64') AS tt_s, arrow_cast(tt_e, 'Int64') AS tt_e, props, \
         kind, src, dst, rel_type FROM rows",
    );
    let mut got: Vec<Stored> = got
        .iter()
        .map(|r| {
            let t = |k| int(r, k);
            let ends = (text(r, "kind") == "edge")
                .then(|| [text(r, "src"), text(r, "dst"), text(r, "rel_type")]);
            if ends.is_none() {
                assert!(r["src"].is_null() && r["dst"].is_null(), "{r}");
            }
            (
                text(r, "vid"),
                t("vt_s"),
                t("vt_e"),
                t("tt_s"),
                t("tt_e"),
                text(r, "props"),
                ends,
            )
        })
        .collect();
    got.sort();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the table's rows differ from the stored rows");
    let stats = snap.stats();
    let counts = sql("SELECT kind, count(*) AS n FROM rows GROUP BY kind ORDER BY kind");
    assert_eq!(
        counts,
        vec![
            json!({"kind": "edge", "n": stats.n_edge_versions}),
            json!({"kind": "node", "n": stats.n_node_versions}),
        ]
    );
    // Every edge version of the generator has the two typed columns of its props.
    let w =
        sql("SELECT count(prop_weight) AS w, sum(prop_weight) AS s FROM rows WHERE kind = 'edge'");
    assert!(
        int(&w[0], "w") > 0 && int(&w[0], "s") >= 2 * int(&w[0], "w"),
        "{w:?}"
    );
}

/// Per stored row believed at `as_of` (every stored row when `None`): its vid, one prop
/// read from its props text (numbers as `f64`, else the JSON text), and the origin and reason of its close where the
/// close is shown (a close after `as_of` had not happened then; a row believed at `as_of`
/// was not yet closed).
type CloseRow = (String, Option<String>, Option<String>, Option<String>);

#[test]
fn close_and_prop_columns_equal_each_version_now_and_before() {
    let (_, st, epoch1) = store();
    let snap = st.snapshot();
    let norm = |v: &Value| match v.as_f64() {
        Some(f) => format!("{f}"),
        None => v.to_string(),
    };
    // Before epoch 1 the store's only prop is the marker's `name`.
    for (as_of, prop) in [(None, "weight"), (Some(*epoch1), "name")] {
        let believed = |tt_s: i64, tt_e: i64| as_of.is_none_or(|t| tt_s <= t && t < tt_e);
        let weight = |props: &str| {
            let v: Value = serde_json::from_str(props).unwrap();
            v.get(prop).filter(|v| !v.is_null()).map(norm)
        };
        let shown = |by: Option<tgms_engine::Origin>, reason: Option<&str>| {
            if as_of.is_some() {
                (None, None)
            } else {
                (
                    by.map(|o| o.as_str().to_string()),
                    reason.map(str::to_string),
                )
            }
        };
        let mut want: Vec<CloseRow> = Vec::new();
        for n in snap
            .all_nodes()
            .iter()
            .filter(|n| believed(n.tt_s(), n.tt_e()))
        {
            let (by, reason) = shown(n.closed_by(), n.close_reason());
            want.push((n.vid(), weight(n.props()), by, reason));
        }
        for e in snap
            .all_edges()
            .iter()
            .filter(|e| believed(e.tt_s(), e.tt_e()))
        {
            let (by, reason) = shown(e.closed_by(), e.close_reason());
            want.push((e.vid(), weight(e.props()), by, reason));
        }
        want.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let q = format!("SELECT vid, prop_{prop} AS p, closed_by, close_reason FROM rows");
        let rows = sql_on(st, as_of, &q);
        let mut got: Vec<CloseRow> = rows
            .iter()
            .map(|r| {
                let opt = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
                (
                    text(r, "vid"),
                    r.get("p").map(norm),
                    opt("closed_by"),
                    opt("close_reason"),
                )
            })
            .collect();
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(got.len(), want.len(), "as_of {as_of:?}");
        assert!(
            got == want,
            "as_of {as_of:?}: the close or prop columns differ"
        );
        // The store holds closed rows and weights, so the comparison is not vacuous.
        if as_of.is_none() {
            assert!(want.iter().any(|r| r.3.is_some()) && want.iter().any(|r| r.1.is_some()));
        }
    }
}

#[test]
fn history_of_a_corrected_node_equals_entity_history_now_and_before() {
    let (_, st, tt_epoch1) = store();
    for as_of in [None, Some(*tt_epoch1)] {
        let mut args = json!({"uid": "n1"});
        if let Some(tt) = as_of {
            args["as_of_tt"] = json!(tt);
        }
        let want: BTreeSet<(String, i64, i64, i64, String)> = op("entity_history", args)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let props = canon::to_string(&r["props"]);
                (
                    text(r, "vid"),
                    int(r, "vt_s"),
                    int(r, "vt_e"),
                    int(r, "tt_s"),
                    props,
                )
            })
            .collect();
        // Pinned at `as_of`, every row believed then shows an open `tt_e`.
        let got: BTreeSet<_> = sql_on(
            st,
            as_of,
            "SELECT vid, arrow_cast(vt_s, 'Int64') AS vt_s, arrow_cast(vt_e, 'Int64') AS vt_e, \
             arrow_cast(tt_s, 'Int64') AS tt_s, props FROM rows \
             WHERE kind = 'node' AND uid = 'n1' AND tt_e = open_end()",
        )
        .iter()
        .map(|r| {
            (
                text(r, "vid"),
                int(r, "vt_s"),
                int(r, "vt_e"),
                int(r, "tt_s"),
                text(r, "props"),
            )
        })
        .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "as_of {as_of:?}");
    }
    // The correction is visible now and not before it.
    let names = |as_of| {
        sql_on(st, as_of, "SELECT prop_name FROM rows WHERE uid = 'n1' AND tt_e = open_end() AND prop_name IS NOT NULL")
            .iter()
            .map(|r| text(r, "prop_name"))
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(names(None), BTreeSet::from(["alpha-corrected".to_string()]));
    assert_eq!(
        names(Some(*tt_epoch1)),
        BTreeSet::from(["alpha".to_string()])
    );
}

#[test]
fn state_at_an_instant_equals_state_at() {
    for (uid, at) in [
        ("n3", 30_000i64),
        ("n7", 50_500),
        ("n42", 99_000),
        ("n199", 10),
    ] {
        let want: BTreeSet<(String, String)> = op(
            "state_at",
            json!({"uid": uid, "at": at, "direction": "out"}),
        )["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (text(r, "eid"), text(r, "vid")))
            .collect();
        let got: BTreeSet<(String, String)> = sql(&format!(
            "SELECT eid, vid FROM rows WHERE kind = 'edge' AND src = '{uid}' \
             AND vt_s <= to_timestamp_micros({at}) AND to_timestamp_micros({at}) < vt_e \
             AND tt_e = open_end()"
        ))
        .iter()
        .map(|r| (text(r, "eid"), text(r, "vid")))
        .collect();
        assert_eq!(got, want, "{uid} at {at}");
    }
}

#[test]
fn a_diff_of_two_snapshots_equals_diff_snapshots() {
    let (t1, t2) = (30_000i64, 60_000i64);
    let d = op("diff_snapshots", json!({"t1": t1, "t2": t2}));
    let valid = |t: i64| {
        format!(
            "SELECT DISTINCT eid FROM rows WHERE kind = 'edge' AND tt_e = open_end() \
             AND vt_s <= to_timestamp_micros({t}) AND to_timestamp_micros({t}) < vt_e"
        )
    };
    let count = |a: i64, b: i64| {
        let q = format!(
            "SELECT count(*) AS n FROM ({} EXCEPT {})",
            valid(b),
            valid(a)
        );
        int(&sql(&q)[0], "n")
    };
    assert_eq!(count(t1, t2), int(&d, "edges_added_total"));
    assert_eq!(count(t2, t1), int(&d, "edges_removed_total"));
    assert!(int(&d, "edges_added_total") > 0 && int(&d, "edges_removed_total") > 0);
}

#[test]
fn grouped_counts_equal_aggregate_events() {
    let (t_a, t_b, stride) = (20_000i64, 80_000i64, 7_000i64);
    let agg = op(
        "aggregate_events",
        json!({
            "group_by": [{"dim": "time_bucket"}, {"dim": "rel_type"}],
            "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "src"}],
            "window": {"t_a": t_a, "t_b": t_b},
            "stride": stride,
        }),
    );
    let want: BTreeMap<(i64, String), (i64, i64)> = agg["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (int(r, "t_a"), text(r, "rel_type")),
                (int(r, "count"), int(r, "distinct_src")),
            )
        })
        .collect();
    let got: BTreeMap<(i64, String), (i64, i64)> = sql(&format!(
        "SELECT {t_a} + (arrow_cast(vt_s, 'Int64') - {t_a}) / {stride} * {stride} AS b, rel_type, \
         count(*) AS n, count(DISTINCT src) AS s FROM rows \
         WHERE kind = 'edge' AND tt_e = open_end() \
         AND vt_s >= to_timestamp_micros({t_a}) AND vt_s < to_timestamp_micros({t_b}) \
         GROUP BY 1, 2"
    ))
    .iter()
    .map(|r| {
        (
            (int(r, "b"), text(r, "rel_type")),
            (int(r, "n"), int(r, "s")),
        )
    })
    .collect();
    assert_eq!(got, want);
}

#[test]
fn partitions_threads_and_the_read_form_change_no_row() {
    use datafusion::prelude::{SessionConfig, SessionContext};
    let (dir, st, _) = store();
    let q = "SELECT vid, kind, src, prop_weight, arrow_cast(tt_e, 'Int64') AS tt_e FROM rows \
             WHERE vt_s >= to_timestamp_micros(40000) ORDER BY vid";
    let with = |st: Arc<Store>, partitions: usize, batch: usize| {
        let cfg = SessionConfig::new()
            .with_target_partitions(partitions)
            .with_batch_size(batch);
        let ctx = SessionContext::new_with_config(cfg);
        ctx.register_table("rows", Arc::new(tgms_sql::StoreTable::new(st, None)))
            .unwrap();
        rows_of(&ctx, q)
    };
    let one = with(st.clone(), 1, 1 << 16);
    assert!(one.len() > 10_000);
    assert_eq!(with(st.clone(), 7, 1000), one);
    // The same store decoded eagerly (no mapped image) reads the same rows.
    let eager = Store::open_with(
        dir.path(),
        Options {
            eager: true,
            read_only: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(!eager.is_lazy());
    assert_eq!(with(Arc::new(eager), 3, 4096), one);
    // The same rows compacted into one image with nothing above it (the mapped read form;
    // this copy lacks the batch written above the first store's image, whose rows all lie
    // before the query's 40000).
    let dir2 = tempfile::tempdir().unwrap();
    let mut compacted = tgms_bench::generate::scratch_store(dir2.path(), N).unwrap();
    compacted.compact().unwrap();
    assert!(compacted.is_lazy());
    assert_eq!(with(Arc::new(compacted), 2, 5000), one);
}
