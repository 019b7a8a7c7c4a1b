//! `resolve_entities` (O12, `operators.md` §20): entity uids by uid or name text.
//!
//! One pass over the believed node versions, grouped by uid. The uid tests (exact, then
//! lowercase substring) are uid-level, so they run once per uid; `props` is parsed only for
//! uids whose uid does not match and whose stored props mention a `name` key.

use super::stored_json;
use crate::args::Args;
use crate::cost::scan_estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::HashMap;
use tgms_engine::NodeVersion;

const MANUAL: &str = "Finds entities whose uid equals or contains `query` (case-insensitive) or whose `name` property contains it; best matches first (`match` 0 = exact uid, 1 = uid substring, 2 = name substring). This is the only legitimate way to obtain uids that the question does not spell out: plans that put an unlisted literal uid anywhere are rejected. Example: `{\"query\": \"ACME\"}` then `{\"$ref\": \"s1.rows[0].uid\"}`.";

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "resolve_entities",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("query", json!({"type": "string", "minLength": 1})),
            ArgDecl::opt("label", json!({"type": ["string", "null"]}), Value::Null),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![],
        cost: Some(scan_estimate),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows(
                "obj{uid: uid, label: str, name: any, match: int}",
                RowKey::Field("uid"),
            )
            .build(),
        kernel,
    }
}

/// Per uid: its versions (believed), in scan order.
struct Group<'s> {
    versions: Vec<NodeVersion<'s>>,
}

/// `props.name` of a version when it is a non-empty string.
fn name_text(props: &Value) -> Option<&str> {
    props
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let query = args.str("query")?;
    let lq = query.to_lowercase();
    let label = args.opt_str("label")?;
    let a = args.as_of_tt();
    let mut groups: HashMap<&str, Group<'_>> = HashMap::new();
    for n in ctx.snap.node_scan(None, a) {
        groups
            .entry(n.uid())
            .or_insert_with(|| Group {
                versions: Vec::new(),
            })
            .versions
            .push(n);
    }
    let mut hits: Vec<(i64, &str, NodeVersion<'_>)> = Vec::new();
    for (uid, g) in groups {
        let uid_score = if uid == query {
            Some(0)
        } else if uid.to_lowercase().contains(&lq) {
            Some(1)
        } else {
            None
        };
        let m = match uid_score {
            Some(s) => Some(s),
            None => {
                let mut found = None;
                for v in &g.versions {
                    // Canonical JSON spells the key plainly; no key, no name match.
                    if !v.props().contains("\"name\"") {
                        continue;
                    }
                    let p = stored_json(v.props())?;
                    if name_text(&p).is_some_and(|t| t.to_lowercase().contains(&lq)) {
                        found = Some(2);
                        break;
                    }
                }
                found
            }
        };
        let Some(m) = m else { continue };
        // Latest believed version: last in (vt_s, vid) order.
        let mut latest = g.versions[0];
        for v in &g.versions[1..] {
            if (v.vt_s(), v.vid()) > (latest.vt_s(), latest.vid()) {
                latest = *v;
            }
        }
        if label.is_some_and(|l| l != latest.label()) {
            continue;
        }
        hits.push((m, uid, latest));
    }
    hits.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let mut rows = Vec::with_capacity(hits.len());
    for (m, uid, v) in hits {
        let props = stored_json(v.props())?;
        let name = props.get("name").cloned().unwrap_or(Value::Null);
        rows.push(json!({"uid": uid, "label": v.label(), "name": name, "match": m}));
    }
    out.paged("rows", rows)?;
    Ok(())
}
