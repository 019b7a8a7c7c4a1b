//! `resolve_entities` (O12, `operators.md` §20): entity uids by uid or name text.
//!
//! The uid tests (exact, then lowercase substring) are uid-level: one `memmem` search of the
//! store's cached lowercase uid heap ([`Snapshot::uids_lowercase_containing`]). Name matches
//! take one pass over the believed node versions; `props` is parsed only for uids whose uid
//! does not match and whose stored props mention a `name` key. Each result's versions come
//! from its uid's postings, and only the returned page's rows are rendered.

use super::stored_json;
use crate::args::Args;
use crate::cost::node_scan_estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::{common, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use std::collections::HashSet;
use tgms_engine::{NodeVersion, Snapshot};

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
        cost: Some(node_scan_estimate),
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

/// `props.name` of a version when it is a non-empty string.
fn name_text(props: &Value) -> Option<&str> {
    props
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The uid's latest version believed at `a`: the last in `(vt_s, vid)` order (`vid` is
/// derived only to break a `vt_s` tie). `None` when it has no believed version.
fn latest<'s>(snap: Snapshot<'s>, uid: u32, a: i64) -> Option<NodeVersion<'s>> {
    let mut it = snap.node_versions_of_uid(uid, a);
    let mut best = it.next()?;
    for v in it {
        let later = match v.vt_s().cmp(&best.vt_s()) {
            std::cmp::Ordering::Equal => v.vid() > best.vid(),
            o => o.is_gt(),
        };
        if later {
            best = v;
        }
    }
    Some(best)
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let query = args.str("query")?;
    let lq = query.to_lowercase();
    let label = args.opt_str("label")?;
    let a = args.as_of_tt();
    // Uid-level matches (ascending ids): score 0 for the exact uid, else 1.
    let by_uid = snap.uids_lowercase_containing(&lq);
    let mut cands: Vec<(i64, u32)> = by_uid
        .iter()
        .map(|&id| (if snap.uid_name(id) == query { 0 } else { 1 }, id))
        .collect();
    // Name matches (score 2) of the other uids, in scan order; a uid's later versions are
    // not parsed once one matched.
    let mut by_name: HashSet<u32> = HashSet::new();
    for v in snap.node_scan(None, a) {
        // Canonical JSON spells the key plainly; no key, no name match.
        if !v.props().contains("\"name\"") {
            continue;
        }
        let id = v.uid_id();
        if by_uid.binary_search(&id).is_ok() || by_name.contains(&id) {
            continue;
        }
        let p = stored_json(v.props())?;
        if name_text(&p).is_some_and(|t| t.to_lowercase().contains(&lq)) {
            by_name.insert(id);
        }
    }
    cands.extend(by_name.into_iter().map(|id| (2, id)));
    // Uids without a believed version are no results; the label filter reads the latest.
    let mut hits: Vec<(i64, &str, NodeVersion<'_>)> = cands
        .into_iter()
        .filter_map(|(m, id)| latest(snap, id, a).map(|v| (m, snap.uid_name(id), v)))
        .filter(|(_, _, v)| label.is_none_or(|l| l == v.label()))
        .collect();
    hits.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let keys: Vec<Value> = hits.iter().map(|h| Value::from(h.1)).collect();
    out.paged_lazy("rows", keys, |page| {
        hits[page]
            .iter()
            .map(|&(m, uid, v)| {
                let props = stored_json(v.props())?;
                let name = props.get("name").cloned().unwrap_or(Value::Null);
                Ok(json!({"uid": uid, "label": v.label(), "name": name, "match": m}))
            })
            .collect()
    })?;
    Ok(())
}
