//! Edge predicates shared by `aggregate_events` and the pattern operators (issue 21 item 3):
//! the `prop_filter` grammar of `operators.md` §11 (one property compared with a literal;
//! a value that is absent or of another type class is excluded and counted in
//! `prop_coercion`) and the `self_loops` predicate (`include` | `exclude` | `only`).
//!
//! The pattern operators (`count_temporal_motifs`, `find_temporal_motif_instances`,
//! `temporal_paths`, `temporal_reachability`, `co_active`) declare both arguments without a
//! default ([`ArgDecl::opt_absent`]), so calls that do not give them keep their `args_echo`
//! and every output byte. An event failing the predicate is invisible to the pattern.

use super::compute::{cmp_num, num};
use super::stored_json;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::output::Output;
use crate::registry::ArgDecl;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::cmp::Ordering;
use tgms_engine::{EdgeVersion, Stats};

/// The JSON Schema of `prop_filter` (§11).
pub fn prop_filter_schema() -> Value {
    json!({"type": ["object", "null"], "additionalProperties": false,
        "properties": {"prop": {"type": "string", "minLength": 1},
            "cmp": {"type": "string", "enum": ["eq", "ne", "lt", "le", "gt", "ge"]},
            "value": {}},
        "required": ["prop", "cmp", "value"]})
}

/// The pattern operators' `prop_filter` and `self_loops` declarations (no defaults).
pub fn pattern_args() -> Vec<ArgDecl> {
    vec![
        ArgDecl::opt_absent("prop_filter", prop_filter_schema()),
        ArgDecl::opt_absent(
            "self_loops",
            json!({"type": ["string", "null"], "enum": ["include", "exclude", "only", null]}),
        ),
    ]
}

/// Validator of §11 rule 4: `prop_filter.value` is a number, string or boolean.
pub fn validate_prop_filter(args: &Args) -> Result<(), OpError> {
    if let Some(pf) = args.get("prop_filter").filter(|v| !v.is_null()) {
        if !matches!(
            pf.get("value"),
            Some(Value::Number(_) | Value::String(_) | Value::Bool(_))
        ) {
            return Err(OpError::invalid(
                "prop_filter.value must be a number, string or boolean",
            ));
        }
    }
    Ok(())
}

/// Type class of §11: number, string, boolean, other.
fn class(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        _ => 3,
    }
}

/// A parsed `prop_filter`.
#[derive(Clone, Debug)]
pub struct PropFilter {
    /// The property the filter reads.
    pub prop: String,
    cmp: String,
    lit: Value,
}

impl PropFilter {
    /// The call's `prop_filter`, `None` when absent or null.
    pub fn parse(args: &Args) -> Result<Option<PropFilter>, OpError> {
        let Some(pf) = args.get("prop_filter").filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let s = |k: &str| pf.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        validate_prop_filter(args)?;
        Ok(Some(PropFilter {
            prop: s("prop"),
            cmp: s("cmp"),
            lit: pf.get("value").cloned().unwrap_or(Value::Null),
        }))
    }

    /// `Some(keep)` for a value of the literal's class (numbers by exact value, strings in
    /// code-point order, `false < true`); `None` when the value is absent or of another
    /// class: the event is excluded and counted in `prop_coercion`.
    pub fn test(&self, v: Option<&Value>) -> Result<Option<bool>, OpError> {
        let Some(v) = v.filter(|v| class(v) == class(&self.lit) && class(v) < 3) else {
            return Ok(None);
        };
        let o = match (v, &self.lit) {
            (Value::Number(_), Value::Number(_)) => match (num(v)?, num(&self.lit)?) {
                (Some(a), Some(b)) => cmp_num(a, b),
                _ => Ordering::Equal,
            },
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            _ => Ordering::Equal,
        };
        Ok(Some(match self.cmp.as_str() {
            "eq" => o == Ordering::Equal,
            "ne" => o != Ordering::Equal,
            "lt" => o == Ordering::Less,
            "le" => o != Ordering::Greater,
            "gt" => o == Ordering::Greater,
            _ => o != Ordering::Less,
        }))
    }
}

/// `self_loops`: which events with `src = dst` take part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelfLoops {
    /// Self-loops take part like any other event.
    Include,
    /// Self-loops are left out.
    Exclude,
    /// Only self-loops take part.
    Only,
}

/// The edge predicate of a pattern call: `prop_filter` and `self_loops`.
#[derive(Clone, Debug)]
pub struct EdgePred {
    /// The call's `prop_filter`, if any.
    pub prop: Option<PropFilter>,
    /// The call's `self_loops`.
    pub self_loops: SelfLoops,
}

/// What the predicate says about one edge version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The edge version passes the predicate.
    Keep,
    /// The predicate excludes it (the filter's comparison is false, or `self_loops`).
    Drop,
    /// Dropped because the property is absent or of another type class.
    Coerced,
}

impl EdgePred {
    /// The call's predicate, `None` when neither argument is given (the old code paths run).
    pub fn parse(args: &Args) -> Result<Option<EdgePred>, OpError> {
        let prop = PropFilter::parse(args)?;
        let self_loops = match args.opt_str("self_loops")? {
            None | Some("include") => SelfLoops::Include,
            Some("exclude") => SelfLoops::Exclude,
            Some("only") => SelfLoops::Only,
            Some(other) => {
                return Err(OpError::invalid(format!(
                    "self_loops must be 'include', 'exclude' or 'only', got '{other}'"
                )))
            }
        };
        if prop.is_none() && args.get("self_loops").is_none_or(Value::is_null) {
            return Ok(None);
        }
        Ok(Some(EdgePred { prop, self_loops }))
    }

    /// The verdict on `e` (the self-loop test first, so its props are parsed only when needed).
    pub fn verdict(&self, e: &EdgeVersion<'_>) -> Result<Verdict, OpError> {
        let is_loop = e.src_id() == e.dst_id();
        let loop_ok = match self.self_loops {
            SelfLoops::Include => true,
            SelfLoops::Exclude => !is_loop,
            SelfLoops::Only => is_loop,
        };
        if !loop_ok {
            return Ok(Verdict::Drop);
        }
        let Some(pf) = &self.prop else {
            return Ok(Verdict::Keep);
        };
        let props = stored_json(e.props())?;
        Ok(match pf.test(props.get(&pf.prop))? {
            Some(true) => Verdict::Keep,
            Some(false) => Verdict::Drop,
            None => Verdict::Coerced,
        })
    }

    /// The versions the predicate keeps, in their order, and the number dropped as coerced.
    /// Property parsing runs in parallel; the result equals a sequential pass.
    pub fn apply<'s>(
        &self,
        versions: Vec<EdgeVersion<'s>>,
    ) -> Result<(Vec<EdgeVersion<'s>>, u64), OpError> {
        let verdicts: Vec<Verdict> = versions
            .par_iter()
            .with_min_len(1024)
            .map(|e| self.verdict(e))
            .collect::<Result<_, _>>()?;
        let coerced = verdicts.iter().filter(|&&v| v == Verdict::Coerced).count() as u64;
        let kept = versions
            .into_iter()
            .zip(verdicts)
            .filter(|(_, v)| *v == Verdict::Keep)
            .map(|(e, _)| e)
            .collect();
        Ok((kept, coerced))
    }

    /// Sets `prop_coercion` (`{<prop>: excluded}`) when the predicate reads a property.
    pub fn report(&self, out: &mut Output, coerced: u64) {
        if let Some(pf) = &self.prop {
            let mut m = serde_json::Map::new();
            m.insert(pf.prop.clone(), json!(coerced));
            out.set("prop_coercion", Value::Object(m));
        }
    }
}

/// `apply` for an optional predicate: everything kept, nothing coerced, when `None`.
pub fn apply_opt<'s>(
    pred: Option<&EdgePred>,
    versions: Vec<EdgeVersion<'s>>,
) -> Result<(Vec<EdgeVersion<'s>>, u64), OpError> {
    match pred {
        Some(p) => p.apply(versions),
        None => Ok((versions, 0)),
    }
}

/// Estimated cost of evaluating a property predicate on one candidate event, in ns (a
/// version view, its props text parsed as JSON, one comparison). Deliberately high: the
/// filter can only remove events, so with this surcharge an estimate never falls below the
/// unfiltered call's.
pub const PROP_EVAL_NS: f64 = 1000.0;

/// The estimate of a call with a `prop_filter`: `expansions_est` gains one unit per
/// candidate event (`candidates`, the windowed edge versions) and an explicit
/// `time_est_ms` gains `candidates · PROP_EVAL_NS`. Without a `prop_filter` `est` is returned
/// unchanged (`self_loops` is a comparison of two ids, priced as nothing).
pub fn priced(est: Estimate, args: &Args, candidates: i64) -> Estimate {
    if args.get("prop_filter").is_none_or(Value::is_null) {
        return est;
    }
    let c = candidates.max(0);
    Estimate {
        rows_scanned_est: est.rows_scanned_est,
        expansions_est: est.expansions_est.saturating_add(c),
        time_est_ms: est
            .time_est_ms
            .map(|t| t.saturating_add((c as f64 * PROP_EVAL_NS / 1e6).ceil() as i64)),
    }
}

/// The windowed edge versions `int(n_edge_versions · wf)` (all of them without a window).
pub fn candidates(args: &Args, stats: &Stats) -> i64 {
    super::tgraph::windowed_edges(args, stats)
}
