//! `find_temporal_motif_instances` (O7, `operators.md` §15, D-O9): the instances that
//! `count_temporal_motifs` counts, listed in `(e1, e2, e3)` order ([`crate::kernels::motif_instances`]).
//! `motif`, `delta` and `window` are required (D-O9); `"all"` is not in the `motif` enum; the
//! §14 cost formula prices every motif and the §14.3 step-3 cap applies to every motif.

use super::count_temporal_motifs::{events, motif_args, named_cost, tie_mode};
use super::edge_pred::validate_prop_filter;
use super::validate_window;
use crate::args::Args;
use crate::error::OpError;
use crate::kernels::motif_instances::for_each_instance;
use crate::kernels::motifs::Motif;
use crate::output::Output;
use crate::registry::{common, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const MANUAL: &str = "Lists the δ-temporal motif instances that `count_temporal_motifs` would count, earliest first, each as its three events (`src`, `dst`, `t`, `eid`, `rel_type`). Same cost rules: use a `node_filter` on big graphs. Example: `{\"motif\": \"M_triangle_cyclic\", \"delta\": 3600000000, \"window\": {...}, \"limit\": 10}` → `rows[0].edges[0].src`. Edge predicates: `prop_filter` (`{prop, cmp, value}` as in `aggregate_events`; events whose property is absent or of another type are excluded and counted in `prop_coercion`) and `self_loops` (`exclude` or `only`) hide the events they reject from the pattern.";

/// The row key of §15: `[[t1, eid1], [t2, eid2], [t3, eid3]]`.
fn instance_key(row: &Value) -> Value {
    Value::Array(
        row["edges"]
            .as_array()
            .map(|es| es.iter().map(|e| json!([e["t"], e["eid"]])).collect())
            .unwrap_or_default(),
    )
}

/// The registry entry.
pub fn spec() -> OpSpec {
    let mut args = motif_args(false);
    args.push(common::limit());
    args.push(common::cursor());
    OpSpec {
        name: "find_temporal_motif_instances",
        manual: MANUAL,
        args,
        validators: vec![validate_window, validate_prop_filter],
        cost: Some(named_cost),
        coeff: 0.0,
        outputs: Outputs::default()
            .rows(
                "obj{edges: list<obj{src: uid, dst: uid, t: int, eid: hex, rel_type: str}>}",
                RowKey::Derived {
                    spec: "[[edges[*].t, edges[*].eid]]",
                    of: instance_key,
                },
            )
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let name = args.str("motif")?;
    let motif = Motif::parse(name).ok_or_else(|| OpError::internal(format!("motif '{name}'")))?;
    let ev = events(ctx.snap, args, true)?;
    let delta = args.int("delta")?;
    let tie = tie_mode(args)?;
    // Streamed: only the page's rows are built; every instance contributes its certificate
    // line `[[t1,"eid1"],[t2,"eid2"],[t3,"eid3"]]\n` (canonical JSON of the row key).
    let offset = args.offset()?;
    let limit = args.limit();
    let mut total = 0usize;
    let mut page: Vec<Value> = Vec::new();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let eids: Vec<String> = ev.graph.versions.iter().map(|v| v.eid()).collect();
    for_each_instance(&ev.events, delta, tie, motif, |tri| {
        let mut line = String::with_capacity(100);
        line.push('[');
        for (k, &i) in tri.iter().enumerate() {
            if k > 0 {
                line.push(',');
            }
            line.push_str(&format!(
                "[{},\"{}\"]",
                ev.events[i as usize].t, eids[i as usize]
            ));
        }
        line.push_str("]\n");
        lines.push(line.into_bytes());
        if total >= offset && page.len() < limit {
            let edges: Vec<Value> = tri
                .iter()
                .map(|&i| {
                    let e = &ev.graph.versions[i as usize];
                    json!({"src": e.src(), "dst": e.dst(), "t": e.vt_s(), "eid": eids[i as usize],
                        "rel_type": e.rel_type()})
                })
                .collect();
            page.push(json!({ "edges": edges }));
        }
        total += 1;
    });
    lines.sort_unstable();
    let mut h = Sha256::new();
    for l in &lines {
        h.update(l);
    }
    let digest = tgms_engine::canon::hex(&h.finalize());
    let end = offset.saturating_add(page.len());
    let truncated = end < total;
    out.set("rows", Value::Array(page));
    out.set("rows_total", json!(total));
    out.set("truncated", Value::Bool(truncated));
    out.set(
        "cursor",
        if truncated {
            Value::from(end.to_string())
        } else {
            Value::Null
        },
    );
    out.set("set_digest", json!(digest));
    if let Some(p) = &ev.pred {
        p.report(out, ev.coerced);
    }
    Ok(())
}
