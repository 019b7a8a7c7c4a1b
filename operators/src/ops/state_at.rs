//! `state_at` (O16, ours, D-O5, `operators.md` §24): the believed facts (edges) of one node
//! valid at instant `at` with their validity windows, the node's own version at `at`, and the
//! later facts flagged as not applicable. Reads the node's adjacency restricted to versions
//! still valid at or after `at`, and its identity postings.

use super::{edge_fact, sort_vt_vid, stored_json, valid_at_node};
use crate::args::Args;
use crate::cost::{ceil_div, point_read_estimate, Estimate};
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tgms_engine::{Identity, Stats, Version, OPEN_END};

const MANUAL: &str = "The state of one entity at instant `at` (required — never guess it): its facts (edges, `direction` out by default, optionally one `rel_type`) whose validity window contains `at`, each with its window `[vt_s, vt_e)` and who recorded it and why; the entity's own version at `at` in `node`; and `later_facts`, facts that start after `at` and therefore do NOT describe the state at `at` (`applicable: false`). Pin `as_of_tt` to ask what was believed at an earlier transaction time. Example: `{\"uid\": \"checkout-api\", \"rel_type\": \"HAS_INSTANCE_TYPE\", \"at\": 1773561600000000}` → `rows[0].dst`.";

const FACT: &str =
    "obj{eid: hex, vid: hex, src: uid, dst: uid, rel_type: str, disc: str, vt_s: int, \
    vt_e: int, tt_s: int, tt_e: int, props: obj{*}, origin: str, reason: str|null, \
    ingestion_lag_us: int, applicable: bool}";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "state_at",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("uid", frag::uid()).uids(&[""]),
            ArgDecl::req("at", frag::timestamp()),
            ArgDecl::opt("rel_type", json!({"type": ["string", "null"]}), Value::Null),
            ArgDecl::opt(
                "direction",
                json!({"type": "string", "enum": ["out", "in", "both"]}),
                json!("out"),
            ),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![],
        cost: Some(cost),
        coeff: 55.0,
        outputs: Outputs::default()
            .rows(FACT, RowKey::Field("vid"))
            .field("at", "int")
            .field(
                "node",
                "obj{vid: hex, label: str, props: obj{*}, vt_s: int, vt_e: int, origin: str, \
                 reason: str|null}|null",
            )
            .capped("later_facts", FACT, RowKey::Field("vid"), false)
            .build(),
        kernel,
    }
}

fn cost(args: &Args, stats: &Stats) -> Estimate {
    let n = |x: u64| i64::try_from(x).unwrap_or(i64::MAX);
    let mean = ceil_div(
        n(stats.n_edge_versions).saturating_mul(2),
        n(stats.n_entities).max(1),
    );
    let base = point_read_estimate(args, stats);
    Estimate::new(base.rows_scanned_est.saturating_add(mean), 0)
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let uid = args.str("uid")?;
    if !ctx.snap.has_uid(uid) {
        return Err(OpError::unknown_uid(uid));
    }
    let at = args.int("at")?;
    let a = args.as_of_tt();
    let rel = args.opt_str("rel_type")?;
    let dir = args.str("direction")?;
    // Versions valid at `at` or starting later are exactly those overlapping [at, OPEN_END).
    let w = Some((at, OPEN_END));
    let mut cands = Vec::new();
    if dir != "in" {
        cands.extend(ctx.snap.out_edges(uid, w, a));
    }
    if dir != "out" {
        cands.extend(ctx.snap.in_edges(uid, w, a));
    }
    // A self loop appears in both lists: keep one row per vid.
    let mut current: BTreeMap<String, Value> = BTreeMap::new();
    let mut later: BTreeMap<String, Value> = BTreeMap::new();
    for e in cands {
        if rel.is_some_and(|r| r != e.rel_type()) {
            continue;
        }
        let applicable = e.vt_s() <= at && at < e.vt_e();
        if !applicable && e.vt_s() <= at {
            continue;
        }
        let mut row = edge_fact(&e)?;
        row["applicable"] = Value::Bool(applicable);
        let vid = row["vid"].as_str().unwrap_or_default().to_string();
        if applicable {
            current.insert(vid, row);
        } else {
            later.insert(vid, row);
        }
    }
    let mut rows: Vec<Value> = current.into_values().collect();
    let mut later: Vec<Value> = later.into_values().collect();
    sort_vt_vid(&mut rows);
    sort_vt_vid(&mut later);
    out.paged("rows", rows)?;
    out.set("at", json!(at));
    let mut node = Value::Null;
    for v in ctx.snap.versions_of(&Identity::Node(uid.to_string()), a) {
        if let Version::Node(n) = v {
            if valid_at_node(&n, at) {
                node = json!({"vid": n.vid(), "label": n.label(), "props": stored_json(n.props())?,
                    "vt_s": n.vt_s(), "vt_e": n.vt_e(), "origin": n.origin().as_str(),
                    "reason": n.reason()});
                break;
            }
        }
    }
    out.set("node", node);
    // A capped later_facts does not set `truncated` (§24 step 8).
    out.capped("later_facts", later)?;
    Ok(())
}
