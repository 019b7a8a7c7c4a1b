//! `entity_history` (O1, `operators.md` §9): every believed version of one node over all
//! valid time, from the identity postings (`versions_of`); optionally its incident edge
//! versions from the adjacency lists.

use super::{edge_brief, sort_vt_vid, stored_json};
use crate::args::Args;
use crate::cost::point_read_estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::{Identity, OPEN_END};

const MANUAL: &str = "Point lookup: every believed version of one node (all valid times) in valid-time order, with who wrote each version and why (`origin`, `reason`). `uid` must come from the task input or from `resolve_entities` via `$ref`. Pin `as_of_tt` to see what was believed at an earlier transaction time. `include_edges: true` adds the incident edge versions (first `limit` of them; check `edges_total`). Cheap. Example: `{\"uid\": {\"$ref\": \"s1.rows[0].uid\"}, \"include_edges\": true}`.";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "entity_history",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("uid", frag::uid()).uids(&[""]),
            common::as_of_tt(),
            ArgDecl::opt("include_edges", json!({"type": "boolean"}), json!(false)),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![],
        cost: Some(point_read_estimate),
        coeff: 55.0,
        outputs: Outputs::default()
            .rows(
                "obj{vid: hex, uid: uid, label: str, vt_s: int, vt_e: int, tt_s: int, tt_e: int, \
                 props: obj{*}, source: str, provenance_ref: any, origin: str, reason: str|null, \
                 ingestion_lag_us: int}",
                RowKey::Field("vid"),
            )
            .capped(
                "edges",
                "obj{eid: hex, vid: hex, src: uid, dst: uid, rel_type: str, vt_s: int, vt_e: int}",
                RowKey::Field("vid"),
                true,
            )
            .conditional(&[
                "edges",
                "edges_total",
                "edges_truncated",
                "edges_set_digest",
            ])
            .build(),
        kernel,
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let uid = args.str("uid")?;
    if !ctx.snap.has_uid(uid) {
        return Err(OpError::unknown_uid(uid));
    }
    let a = args.as_of_tt();
    let mut rows = Vec::new();
    for v in ctx.snap.versions_of(&Identity::Node(uid.to_string()), a) {
        let tgms_engine::Version::Node(n) = v else {
            continue;
        };
        rows.push(json!({"vid": n.vid(), "uid": n.uid(), "label": n.label(),
            "vt_s": n.vt_s(), "vt_e": n.vt_e(), "tt_s": n.tt_s(), "tt_e": OPEN_END,
            "props": stored_json(n.props())?, "source": n.source(),
            "provenance_ref": stored_json(n.provenance_ref())?, "origin": n.origin().as_str(),
            "reason": n.reason(), "ingestion_lag_us": n.ingestion_lag_us()}));
    }
    sort_vt_vid(&mut rows);
    out.paged("rows", rows)?;
    if args.bool("include_edges")? {
        // Incident edges: out ∪ in adjacency, a self loop once (deduplicated by vid).
        let mut by_vid: BTreeMap<String, Value> = BTreeMap::new();
        for e in ctx
            .snap
            .out_edges(uid, None, a)
            .into_iter()
            .chain(ctx.snap.in_edges(uid, None, a))
        {
            let row = edge_brief(&e);
            let vid = row["vid"].as_str().unwrap_or_default().to_string();
            by_vid.insert(vid, row);
        }
        let mut edges: Vec<Value> = by_vid.into_values().collect();
        sort_vt_vid(&mut edges);
        out.capped("edges", edges)?;
    }
    Ok(())
}
