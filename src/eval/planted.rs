//! T2 planted-pattern suites (`evaluation.md` §3.6): `tgms eval plant` writes cyclic
//! triangles, reachability chains and activity bursts on fresh uids after the data's last
//! valid time (so no real edge shares their windows) and returns the manifest; the suite
//! generator turns each manifest entry into a task whose gold comes from the manifest.

use super::templates::{self, fill, one_decimal, paraphrases, w_text, DAY_US, HOUR_US};
use anyhow::bail;
use serde_json::{json, Value};
use tgms_engine::{Op, Store};

/// How many patterns of each kind to plant.
#[derive(Clone, Copy, Debug)]
pub struct PlantArgs {
    /// Cyclic triangles `a → b → c → a`, one hour apart.
    pub rings: usize,
    /// Reachability chains of 4 edges (5 nodes), one hour apart.
    pub chains: usize,
    /// Activity bursts: a hub with 2 events a day for 12 days, then 30 on the burst day.
    pub bursts: usize,
}

/// Edges per reachability chain (nodes = edges + 1).
const CHAIN_EDGES: usize = 4;
/// Quiet buckets before a burst (each with `BACKGROUND` events), then one bucket of `BURST`.
const QUIET_BUCKETS: i64 = 12;
const BACKGROUND: i64 = 2;
const BURST: i64 = 30;
/// Each pattern gets its own region of valid time, this wide.
const REGION_US: i64 = 21 * DAY_US;

fn ev(src: &str, dst: &str, vt_s: i64) -> Value {
    json!({"src": src, "dst": dst, "rel_type": "PLANTED", "vt_s": vt_s})
}

/// Plants the patterns into `store` (one batch) and returns the manifest
/// `{"planted": [...]}`: `triangle_ring {nodes, times, delta}`, `reach_chain {nodes, times}`,
/// `burst {nodes: [hub], times, t_a, t_b, stride}` (the burst bucket is `[t_a, t_b)`).
pub fn plant(store: &mut Store, args: PlantArgs) -> anyhow::Result<Value> {
    let Some(vt_max) = store.stats().vt_max else {
        bail!("the store holds no versions; ingest a dataset before planting patterns")
    };
    if store.snapshot().has_uid("planted-ring-0-a")
        || store.snapshot().has_uid("planted-chain-0-0")
        || store.snapshot().has_uid("planted-burst-0-hub")
    {
        bail!("this store already holds planted patterns; plant into a fresh copy of the dataset")
    }
    // Day-aligned, 30 days after the data ends.
    let mut region = (vt_max / DAY_US + 30) * DAY_US;
    let mut events = Vec::new();
    let mut manifest = Vec::new();
    for i in 0..args.rings {
        let n: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|s| format!("planted-ring-{i}-{s}"))
            .collect();
        let times: Vec<i64> = (1..=3).map(|h| region + h * HOUR_US).collect();
        for k in 0..3 {
            events.push(ev(&n[k], &n[(k + 1) % 3], times[k]));
        }
        manifest.push(
            json!({"kind": "triangle_ring", "nodes": n, "times": times, "delta": 4 * HOUR_US}),
        );
        region += REGION_US;
    }
    for j in 0..args.chains {
        let n: Vec<String> = (0..=CHAIN_EDGES)
            .map(|k| format!("planted-chain-{j}-{k}"))
            .collect();
        let times: Vec<i64> = (0..CHAIN_EDGES as i64)
            .map(|k| region + (k + 1) * HOUR_US)
            .collect();
        for k in 0..CHAIN_EDGES {
            events.push(ev(&n[k], &n[k + 1], times[k]));
        }
        manifest.push(json!({"kind": "reach_chain", "nodes": n, "times": times}));
        region += REGION_US;
    }
    for k in 0..args.bursts {
        let hub = format!("planted-burst-{k}-hub");
        let mut times = Vec::new();
        for d in 0..=QUIET_BUCKETS {
            let n = if d == QUIET_BUCKETS {
                BURST
            } else {
                BACKGROUND
            };
            for m in 0..n {
                let t = region + d * DAY_US + (m + 1) * 60_000_000;
                events.push(ev(&hub, &format!("planted-burst-{k}-peer-{m}"), t));
                times.push(t);
            }
        }
        let t_a = region + QUIET_BUCKETS * DAY_US;
        manifest.push(json!({"kind": "burst", "nodes": [hub], "times": times,
            "window": {"t_a": region, "t_b": t_a + DAY_US}, "stride": DAY_US,
            "t_a": t_a, "t_b": t_a + DAY_US}));
        region += REGION_US;
    }
    let op = Op::parse(&json!({"op": "ingest_events", "events": events}))
        .map_err(|e| anyhow::anyhow!("building the planted events: {e}"))?;
    store
        .write(vec![op])
        .map_err(|e| anyhow::anyhow!("writing the planted events: {e}"))?;
    Ok(json!({ "planted": manifest }))
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// A T2 task before execution: `(id, oracle plan, input uids, gold from the manifest)`.
pub type PlantedTask = (String, Value, Vec<String>, Value);

/// The T2 tasks of a manifest.
pub fn t2_plans(manifest: &Value, dataset: &str) -> anyhow::Result<Vec<PlantedTask>> {
    let Some(list) = manifest["planted"].as_array() else {
        bail!("the manifest has no \"planted\" list; make one with tgms eval plant")
    };
    let rings: Vec<(Vec<String>, Vec<i64>, i64)> = list
        .iter()
        .filter(|p| p["kind"] == "triangle_ring")
        .map(|p| {
            (
                strs(&p["nodes"]),
                ints(&p["times"]),
                p["delta"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let para = i % 3;
        let nodes = strs(&p["nodes"]);
        let times = ints(&p["times"]);
        let (Some(&lo), Some(&hi)) = (times.iter().min(), times.iter().max()) else {
            bail!("planted entry {i} has no times")
        };
        let kind = p["kind"].as_str().unwrap_or_default();
        let (name, steps, kind_out, from, gold, uids, q) = match kind {
            "triangle_ring" => {
                let delta = p["delta"].as_i64().unwrap_or(0);
                let (t_a, t_b) = (lo - delta, hi + delta);
                // Gold: the union of the nodes of every planted ring wholly inside W.
                let mut gold: Vec<String> = rings
                    .iter()
                    .filter(|(_, ts, d)| {
                        let (mn, mx) = (ts.iter().min(), ts.iter().max());
                        matches!((mn, mx), (Some(&mn), Some(&mx)) if mn >= t_a && mx < t_b && mx - mn <= delta && *d >= 0)
                    })
                    .flat_map(|(n, _, _)| n.clone())
                    .collect();
                gold.sort();
                gold.dedup();
                let steps = vec![templates::step(
                    "s1",
                    "find_temporal_motif_instances",
                    json!({"motif": "M_triangle_cyclic", "delta": delta,
                        "window": {"t_a": t_a, "t_b": t_b}, "limit": 10000}),
                    &[],
                )];
                let q = fill(
                    paraphrases("planted_ring")[para],
                    &[("delta_h", one_decimal(delta, HOUR_US)), ("w", w_text(t_a, t_b))],
                );
                ("planted_ring", steps, "entity_set", "s1.rows", json!(gold), vec![], q)
            }
            "reach_chain" => {
                let (t_a, t_b) = (lo, hi + 1);
                let mut gold: Vec<String> = nodes.iter().skip(1).cloned().collect();
                gold.sort();
                let src = nodes.first().cloned().unwrap_or_default();
                let steps = vec![templates::step(
                    "s1",
                    "temporal_reachability",
                    json!({"src": src, "window": {"t_a": t_a, "t_b": t_b}, "limit": 10000}),
                    &[],
                )];
                let q = fill(
                    paraphrases("planted_chain")[para],
                    &[("x", src.clone()), ("w", w_text(t_a, t_b))],
                );
                ("planted_chain", steps, "entity_set", "s1.rows", json!(gold), vec![src], q)
            }
            "burst" => {
                let hub = nodes.first().cloned().unwrap_or_default();
                let w = &p["window"];
                let stride = p["stride"].as_i64().unwrap_or(DAY_US);
                let (t_a, t_b) = (w["t_a"].as_i64().unwrap_or(0), w["t_b"].as_i64().unwrap_or(0));
                let steps = vec![templates::step(
                    "s1",
                    "burst_detection",
                    json!({"target": {"kind": "node_activity", "uid": hub},
                        "window": {"t_a": t_a, "t_b": t_b}, "stride": stride, "limit": 2000}),
                    &[],
                )];
                let q = fill(
                    paraphrases("planted_burst")[para],
                    &[("x", hub.clone()), ("w", w_text(t_a, t_b)), ("stride_days", one_decimal(stride, DAY_US))],
                );
                let gold = json!({"t_a": p["t_a"], "t_b": p["t_b"]});
                ("planted_burst", steps, "interval", "s1.rows[0]", gold, vec![hub], q)
            }
            other => bail!("planted entry {i}: unknown kind '{other}' (known: triangle_ring, reach_chain, burst)"),
        };
        let plan = super::suite::oracle_plan(&format!("{name}-{i}"), &q, &steps, kind_out, from);
        out.push((format!("{dataset}-t2-{name}-{i:03}"), plan, uids, gold));
    }
    Ok(out)
}
