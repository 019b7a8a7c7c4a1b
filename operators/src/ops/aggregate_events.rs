//! `aggregate_events` (O14, `operators.md` §22): grouped aggregation over the edge events
//! (believed edge versions) starting in a window.
//!
//! The kernel reads only the versions whose validity starts inside the window
//! (`Snapshot::edge_start_positions` / `edge_start_runs`, engine read API, through the
//! valid-time index), applies the filters in the spec's order
//! (`prop_filter` over the window, then the cohort, then `pair_mode`), assigns each event a
//! fixed-size group key of interned values (integers and store-borrowed strings, no
//! allocation per event) and keeps per group only its member indices. Per-call work (rel-type
//! set, cohort set, label cache per endpoint, dimension plans) is hoisted out of the event
//! loop; aggregates are computed once per group at the end.
//!
//! Event order (for the one order-dependent choice: which of two equal numeric property
//! values of different JSON types `min`/`max` reports) is `(vt_s, eid)`.

use super::compute::{cmp_num, mean, num, ratio_f64, Num};
use super::edge_pred::{prop_filter_schema, validate_prop_filter, PropFilter};
use super::{stored_json, validate_window};
use crate::args::Args;
use crate::calendar::{month_of_epoch_day, Zone};
use crate::cost::{ceil_div, scan_estimate};
use crate::error::{Code, OpError};
use crate::output::Output;
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;
use tgms_engine::EdgeColumns;
use tgms_engine::{EdgeVersion, Identity, Version, OPEN_END};

const MANUAL: &str = "Grouped aggregation of the edge events starting in `window`: `group_by` 0–3 dimensions (e.g. day × src × dst; `time_bucket` with `stride` — µs, a duration such as `\"7d\"`, or a calendar unit `day`/`iso_week`/`month`/`year` —, `calendar_unit` hour/day/month, `rel_type`, `endpoint` src/dst, or `either` for an account in either role (a row `uid`; an event counts in both its endpoints' groups), endpoint `label`) and 1–4 `aggregates` (`count`, `count_distinct` of src/dst, `min`/`max`/`mean` of `vt_s`, `duration` or a numeric `prop`, `sum`, `median` and `quantile` (with `q` in [0, 1]: linear interpolation between order statistics, numpy's default) of a numeric `prop` (columns `sum_prop_<p>`, `median_prop_<p>`, `quantile_<q>_prop_<p>` with `_` for the decimal point of `q`, e.g. `quantile_0_9_prop_rating`; non-numeric values are excluded and counted in `prop_coercion`, as for `mean`), and the sequence measures `max_gap`, `min_gap` (shortest time between two consecutive events of the group), `max_in_window` with `span`, `max_distinct_in_window` of src/dst with `span` (most distinct counterparts in any `[t, t + span)`), `max_session_span` with `gap`). `prop_filter` keeps events whose property compares true (rows of the wrong type are excluded and counted in `prop_coercion`); `endpoint_filter` restricts to a cohort (feed it `{\"$ref\": \"sN.rows[*].uid\"}`); `pair_mode` folds src/dst into unordered pairs (`src` < `dst`; group_by is the pair, optionally with one time or rel_type dimension before or after it); with it, `{\"agg\": \"pair_directions\"}` adds per direction (`lo_hi`: src→dst of the row, `hi_lo`: back) `_count`, `_first_vt_s`, `_last_vt_s`, plus `initiator` and `reciprocity_lag_us` (first reply after the first message), and with `of: \"prop\"` the `_sum_prop_<p>` and `_last_prop_<p>` of each direction. `timezone` (an IANA name such as `\"Europe/Berlin\"` or an offset such as `\"+05:30\"`; default UTC) applies to calendar strides and calendar units. `group_by: []` gives one global row. Example: `{\"group_by\": [{\"dim\": \"endpoint\", \"role\": \"src\"}], \"aggregates\": [{\"agg\": \"count\"}], \"window\": {...}}`.";

/// Cap on the number of groups.
pub const MAX_GROUPS: usize = 100_000;
/// Cap on the number of time buckets (§8).
pub const MAX_BUCKETS: i64 = 2000;

const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn dim_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
        "properties": {
            "dim": {"type": "string", "enum": ["time_bucket", "calendar_unit", "rel_type", "endpoint", "label"]},
            "role": {"type": ["string", "null"], "enum": ["src", "dst", "either", null], "default": null},
            "unit": {"type": ["string", "null"], "enum": ["hour_of_day", "day_of_week", "month_of_year", null], "default": null},
            "tz_offset_minutes": {"type": ["integer", "null"], "minimum": -1440, "maximum": 1440, "default": null}},
        "required": ["dim"]})
}

/// `s` with `"default": null` (nested defaults are annotations of the published schema).
fn with_null_default(mut s: Value) -> Value {
    s["default"] = Value::Null;
    s
}

fn agg_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
        "properties": {
            "agg": {"type": "string", "enum": ["count", "count_distinct", "min", "max", "mean", "max_gap", "max_in_window", "max_session_span", "pair_directions", "min_gap", "max_distinct_in_window", "sum", "median", "quantile"]},
            "of": {"type": ["string", "null"], "enum": ["src", "dst", "vt_s", "duration", "prop", null], "default": null},
            "prop": {"type": ["string", "null"], "minLength": 1, "default": null},
            "q": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "default": null},
            "span": with_null_default(frag::duration(true, "window length of max_in_window")),
            "gap": with_null_default(frag::duration(true, "session gap of max_session_span"))},
        "required": ["agg"]})
}

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "aggregate_events",
        manual: MANUAL,
        args: vec![
            ArgDecl::req(
                "group_by",
                json!({"type": "array", "items": dim_schema(), "maxItems": 3}),
            ),
            ArgDecl::req(
                "aggregates",
                json!({"type": "array", "items": agg_schema(), "minItems": 1, "maxItems": 4}),
            ),
            ArgDecl::req("window", frag::window()),
            ArgDecl::opt("stride", frag::calendar_stride(true), Value::Null),
            ArgDecl::opt_absent("timezone", frag::timezone()),
            common::rel_types(),
            ArgDecl::opt("prop_filter", prop_filter_schema(), Value::Null),
            ArgDecl::opt(
                "endpoint_filter",
                json!({"type": ["object", "null"], "additionalProperties": false,
                    "properties": {"role": {"type": "string", "enum": ["src", "dst", "either"]},
                        "uids": {"type": "array", "items": {"type": "string"}, "maxItems": 50000}},
                    "required": ["role", "uids"]}),
                Value::Null,
            )
            .uids(&[".uids[*]"]),
            ArgDecl::opt(
                "pair_mode",
                json!({"type": ["string", "null"], "enum": ["undirected", "reciprocal", null]}),
                Value::Null,
            ),
            common::as_of_tt(),
            common::limit(),
            common::cursor(),
        ],
        validators: vec![
            validate_window,
            validate_dims,
            validate_aggs,
            validate_prop_filter,
            validate_pair_mode,
            validate_stride,
            crate::calendar::validate_timezone,
        ],
        cost: Some(scan_estimate),
        coeff: 170.0,
        outputs: Outputs::default()
            .rows("obj{*}", RowKey::Computed("dimension columns"))
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

// ---------------------------------------------------------------------------------------
// Parsed arguments.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Hour,
    Day,
    Month,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    Bucket,
    Calendar(Unit, Zone),
    Rel,
    Endpoint(bool),
    /// `endpoint` with role `either`: an event belongs to the group of each of its distinct
    /// endpoints (issue 21 item 5).
    Either,
    Label(bool),
}

fn s<'a>(o: &'a Value, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

fn present(o: &Value, k: &str) -> bool {
    o.get(k).is_some_and(|v| !v.is_null())
}

fn items<'a>(args: &'a Args, k: &str) -> &'a [Value] {
    args.get(k)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn inv(m: impl Into<String>) -> OpError {
    OpError::invalid(m)
}

fn validate_dims(args: &Args) -> Result<(), OpError> {
    let dims = items(args, "group_by");
    let mut seen: Vec<(Option<&str>, Option<&str>, Option<&str>)> = Vec::new();
    for d in dims {
        let dim = s(d, "dim").unwrap_or("");
        let cal = dim == "calendar_unit";
        if present(d, "unit") && !cal {
            return Err(inv("unit is only valid for calendar_unit"));
        }
        if present(d, "tz_offset_minutes") && !cal {
            return Err(inv("tz_offset_minutes is only valid for calendar_unit"));
        }
        if cal && !present(d, "unit") {
            return Err(inv("calendar_unit requires unit"));
        }
        if present(d, "tz_offset_minutes") && args.get("timezone").is_some_and(|z| !z.is_null()) {
            return Err(inv(
                "give timezone or tz_offset_minutes, not both (timezone applies to every calendar computation of the call)",
            ));
        }
        let ends = dim == "endpoint" || dim == "label";
        if ends && !present(d, "role") {
            return Err(inv(format!("{dim} requires role src or dst")));
        }
        if !ends && present(d, "role") {
            return Err(inv("role is only valid for endpoint and label"));
        }
        if dim == "label" && s(d, "role") == Some("either") {
            return Err(inv(
                "label requires role src or dst; role either is only valid for endpoint",
            ));
        }
    }
    for d in dims {
        let k = (s(d, "dim"), s(d, "role"), s(d, "unit"));
        if seen.contains(&k) {
            return Err(inv(format!(
                "duplicate dimension {}",
                s(d, "dim").unwrap_or("")
            )));
        }
        seen.push(k);
    }
    Ok(())
}

/// The output columns of an AGG (one, except `pair_directions`).
fn agg_columns(a: &Value) -> Vec<String> {
    if s(a, "agg") == Some("pair_directions") {
        return super::pair_directions::columns(s(a, "prop"));
    }
    vec![agg_column(a)]
}

/// The output column of a one-column AGG.
fn agg_column(a: &Value) -> String {
    let agg = s(a, "agg").unwrap_or("");
    let of = s(a, "of").unwrap_or("");
    match agg {
        "count_distinct" => format!("distinct_{of}"),
        "max_distinct_in_window" => format!("max_distinct_{of}_in_window"),
        "min" | "max" | "mean" | "sum" | "median" if of == "prop" => {
            format!("{agg}_prop_{}", s(a, "prop").unwrap_or(""))
        }
        // `q`'s decimal text with `_` for the point, so that a `$ref` path can name the
        // column (`quantile_0_9_prop_rating`).
        "quantile" => format!(
            "quantile_{}_prop_{}",
            a.get("q")
                .map_or("null".to_string(), crate::json::to_string)
                .replace('.', "_"),
            s(a, "prop").unwrap_or("")
        ),
        "min" | "max" | "mean" => format!("{agg}_{of}"),
        other => other.to_string(),
    }
}

fn validate_aggs(args: &Args) -> Result<(), OpError> {
    let aggs = items(args, "aggregates");
    for a in aggs {
        let agg = s(a, "agg").unwrap_or("");
        let of = s(a, "of");
        if present(a, "prop") && of != Some("prop") {
            return Err(inv("prop is only valid with of='prop'"));
        }
        let windowed = agg == "max_in_window" || agg == "max_distinct_in_window";
        if present(a, "span") && !windowed {
            // The message of operators.md §11, kept byte for byte (max_distinct_in_window
            // takes a span too; docs/plans-changes.md §8).
            return Err(inv("span is only valid for max_in_window"));
        }
        if agg == "max_distinct_in_window" {
            if !present(a, "span") {
                return Err(inv("max_distinct_in_window requires span"));
            }
            if !matches!(of, Some("src" | "dst")) {
                return Err(inv("max_distinct_in_window requires of 'src' or 'dst'"));
            }
        }
        if present(a, "gap") && agg != "max_session_span" {
            return Err(inv("gap is only valid for max_session_span"));
        }
        let seq = ["max_gap", "min_gap", "max_in_window", "max_session_span"].contains(&agg);
        if seq && of.is_some() {
            return Err(inv(format!("{agg} takes no 'of'")));
        }
        if agg == "max_in_window" && !present(a, "span") {
            return Err(inv("max_in_window requires span"));
        }
        if agg == "max_session_span" && !present(a, "gap") {
            return Err(inv("max_session_span requires gap"));
        }
        if agg == "count" && of.is_some() {
            return Err(inv("count takes no 'of'"));
        }
        if agg == "count_distinct" && !matches!(of, Some("src" | "dst")) {
            return Err(inv("count_distinct requires of 'src' or 'dst'"));
        }
        if ["min", "max", "mean"].contains(&agg)
            && !matches!(of, Some("vt_s" | "duration" | "prop"))
        {
            return Err(inv(format!(
                "{agg} requires of 'vt_s', 'duration' or 'prop'"
            )));
        }
        if ["sum", "median", "quantile"].contains(&agg) && of != Some("prop") {
            return Err(OpError::with(
                Code::InvalidArg,
                format!("{agg} requires of 'prop' (a numeric event property)"),
                json!({"repair": {"of": "prop", "prop": "<property name, e.g. rating>"}}),
            ));
        }
        if present(a, "q") != (agg == "quantile") {
            return Err(OpError::with(
                Code::InvalidArg,
                if agg == "quantile" {
                    "quantile requires q, a number in [0, 1] (0.5 = the median, 0.9 = the 90th percentile)"
                } else {
                    "q is only valid for quantile"
                },
                json!({"repair": {"agg": "quantile", "q": 0.5}}),
            ));
        }
        if agg == "pair_directions" && !matches!(of, None | Some("prop")) {
            return Err(inv("pair_directions takes no 'of' or of 'prop'"));
        }
        if of == Some("prop") && !present(a, "prop") {
            return Err(inv("of='prop' requires prop"));
        }
    }
    let mut cols: Vec<String> = Vec::new();
    for c in aggs.iter().flat_map(agg_columns) {
        if cols.contains(&c) {
            return Err(inv(format!("duplicate aggregate output '{c}'")));
        }
        cols.push(c);
    }
    Ok(())
}

fn validate_pair_mode(args: &Args) -> Result<(), OpError> {
    if args.get("pair_mode").is_some_and(|v| !v.is_null()) {
        // The pair's two endpoint dimensions, optionally with one time or rel_type dimension
        // before or after them (e.g. day × pair).
        let dims = items(args, "group_by");
        let is =
            |d: &Value, role: &str| s(d, "dim") == Some("endpoint") && s(d, "role") == Some(role);
        let pair_at =
            |i: usize| dims.len() > i + 1 && is(&dims[i], "src") && is(&dims[i + 1], "dst");
        let other_ok = |d: &Value| {
            matches!(
                s(d, "dim"),
                Some("time_bucket" | "calendar_unit" | "rel_type")
            )
        };
        let ok = match dims.len() {
            2 => pair_at(0),
            3 => (pair_at(0) && other_ok(&dims[2])) || (other_ok(&dims[0]) && pair_at(1)),
            _ => false,
        };
        if !ok {
            return Err(inv(
                "pair_mode requires group_by [endpoint src, endpoint dst], optionally with one time_bucket, calendar_unit or rel_type dimension before or after the pair",
            ));
        }
    } else if items(args, "aggregates")
        .iter()
        .any(|a| s(a, "agg") == Some("pair_directions"))
    {
        return Err(OpError::with(
            Code::InvalidArg,
            "pair_directions requires pair_mode",
            json!({"repair": {"pair_mode": "undirected",
                "group_by": [{"dim": "endpoint", "role": "src"}, {"dim": "endpoint", "role": "dst"}]}}),
        ));
    }
    Ok(())
}

/// `stride` as an integer (a stride beyond i64 is wider than any window).
fn stride_of(args: &Args) -> Option<i64> {
    match args.get("stride") {
        Some(Value::Number(n)) => Some(n.as_i64().unwrap_or(i64::MAX)),
        _ => None,
    }
}

fn validate_stride(args: &Args) -> Result<(), OpError> {
    let has_bucket = items(args, "group_by")
        .iter()
        .any(|d| s(d, "dim") == Some("time_bucket"));
    let stride = stride_of(args);
    if has_bucket {
        if let Some(unit) = crate::calendar::stride_unit(args) {
            if let Some((a, b)) = args.window("window")? {
                crate::calendar::buckets(a, b, unit, crate::calendar::zone_arg(args)?)?;
            }
            return Ok(());
        }
        let Some(stride) = stride else {
            return Err(inv("time_bucket requires stride"));
        };
        if let Some((a, b)) = args.window("window")? {
            let n = ceil_div(b - a, stride);
            if n > MAX_BUCKETS {
                return Err(OpError::new(
                    Code::Limit,
                    format!(
                        "bucket count {n} exceeds cap 2000; use stride >= {} for this window",
                        ceil_div(b - a, MAX_BUCKETS)
                    ),
                ));
            }
        }
    } else if args.get("stride").is_some_and(|x| !x.is_null()) {
        return Err(inv("stride requires a time_bucket dimension"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Calendar.

fn calendar(unit: Unit, zone: Zone, vt_s: i64) -> i64 {
    let local = vt_s.saturating_add(zone.offset_us(vt_s));
    match unit {
        Unit::Hour => local.div_euclid(3_600_000_000).rem_euclid(24),
        Unit::Day => (local.div_euclid(86_400_000_000) + 3).rem_euclid(7),
        Unit::Month => i64::from(month_of_epoch_day(local.div_euclid(86_400_000_000))) - 1,
    }
}

// ---------------------------------------------------------------------------------------
// Aggregates.

#[derive(Clone, Debug)]
enum Agg {
    Count,
    Distinct(bool),
    Vt(u8),
    Dur(u8),
    /// A statistic of a numeric property ([`mmm`]), with `q` for `quantile`.
    Prop(u8, String, Value),
    MaxGap,
    /// The shortest gap between two consecutive events of the group (issue 21 item 5).
    MinGap,
    MaxInWindow(i64),
    /// The most distinct src (`true`) or dst in any `[t, t + span)` (issue 21 item 5).
    MaxDistinctInWindow(bool, i64),
    MaxSession(i64),
    /// `pair_directions` with the property it reads, if any.
    PairDirs(Option<String>),
}

/// 0 = min, 1 = max, 2 = mean, 3 = sum, 4 = median, 5 = quantile.
fn mmm(agg: &str) -> u8 {
    match agg {
        "min" => 0,
        "max" => 1,
        "sum" => 3,
        "median" => 4,
        "quantile" => 5,
        _ => 2,
    }
}

fn parse_agg(a: &Value, width: i64) -> Agg {
    let agg = s(a, "agg").unwrap_or("");
    let of = s(a, "of").unwrap_or("");
    let int = |k: &str| a.get(k).and_then(Value::as_i64).unwrap_or(i64::MAX);
    match agg {
        "count" => Agg::Count,
        "count_distinct" => Agg::Distinct(of == "src"),
        "max_gap" => Agg::MaxGap,
        "min_gap" => Agg::MinGap,
        "max_in_window" => Agg::MaxInWindow(int("span").min(width)),
        "max_distinct_in_window" => Agg::MaxDistinctInWindow(of == "src", int("span").min(width)),
        "max_session_span" => Agg::MaxSession(int("gap").min(width)),
        "pair_directions" => Agg::PairDirs(s(a, "prop").map(String::from)),
        m => match of {
            "vt_s" => Agg::Vt(mmm(m)),
            "duration" => Agg::Dur(mmm(m)),
            _ => Agg::Prop(
                mmm(m),
                s(a, "prop").unwrap_or("").to_string(),
                a.get("q").cloned().unwrap_or(Value::Null),
            ),
        },
    }
}

/// `fl(fl(q) + fl(r/n))` with `(q, r) = floor_divmod(sum, n)`: always a float.
fn float_mean(sum: i128, n: i128) -> Value {
    let q = sum.div_euclid(n);
    let r = sum.rem_euclid(n);
    crate::json::float(q as f64 + ratio_f64(r, n))
}

fn max_gap(t: &[i64]) -> Value {
    if t.len() < 2 {
        return Value::Null;
    }
    json!(t.windows(2).map(|w| w[1] - w[0]).max())
}

/// The shortest gap between consecutive times (`t` ascending); null below two events.
fn min_gap(t: &[i64]) -> Value {
    if t.len() < 2 {
        return Value::Null;
    }
    json!(t.windows(2).map(|w| w[1] - w[0]).min())
}

fn max_in_window(t: &[i64], s: i64) -> Value {
    let mut best = 0usize;
    let mut j = 0usize;
    for i in 0..t.len() {
        if j < i {
            j = i;
        }
        while j < t.len() && (t[j] as i128) < t[i] as i128 + s as i128 {
            j += 1;
        }
        best = best.max(j - i);
    }
    json!(best)
}

/// The most distinct ids among the `(t, id)` (ascending `t`) in any window `[t_i, t_i + s)`
/// starting at an event: a sliding window with per-id counts.
fn max_distinct_in_window(te: &[(i64, u32)], s: i64) -> Value {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    let (mut best, mut j) = (0usize, 0usize);
    for i in 0..te.len() {
        while j < te.len() && (te[j].0 as i128) < te[i].0 as i128 + s as i128 {
            *counts.entry(te[j].1).or_default() += 1;
            j += 1;
        }
        best = best.max(counts.len());
        if let Some(c) = counts.get_mut(&te[i].1) {
            *c -= 1;
            if *c == 0 {
                counts.remove(&te[i].1);
            }
        }
    }
    json!(best)
}

fn max_session(t: &[i64], g: i64) -> Value {
    if t.is_empty() {
        return Value::Null;
    }
    let (mut best, mut first) = (0i64, t[0]);
    for w in t.windows(2) {
        if w[1] - w[0] > g {
            first = w[1];
        }
        best = best.max(w[1] - first);
    }
    json!(best)
}

// ---------------------------------------------------------------------------------------
// The kernel.

/// A group key: one `u64` per dimension slot — a bucket or calendar index, the
/// snapshot-local interned id of a uid or rel_type, or a label index (0 = no label) — so an
/// event costs one hash of two integers, never a string hash. With three dimensions the
/// second word holds slots 1 and 2 as two 32-bit halves ([`pack`], [`key_part`]): every slot
/// value fits in 32 bits (buckets are capped at [`MAX_BUCKETS`], ids and label indexes are
/// `u32`), and the one- and two-dimension calls (`agg.rel_bucket`) keep their two-word key
/// unchanged.
type Key = [u64; 2];

/// The key of the slot values `v` of `n_dims` dimensions.
#[inline(always)]
fn pack(v: [u64; 3], n_dims: usize) -> Key {
    if n_dims == 3 {
        debug_assert!(v[1] <= u64::from(u32::MAX) && v[2] <= u64::from(u32::MAX));
        [v[0], (v[1] << 32) | v[2]]
    } else {
        [v[0], v[1]]
    }
}

/// The value of dimension `slot` in a key of `n_dims` dimensions ([`pack`]'s inverse).
fn key_part(key: Key, slot: usize, n_dims: usize) -> u64 {
    match (n_dims == 3, slot) {
        (true, 1) => key[1] >> 32,
        (true, 2) => key[1] & u64::from(u32::MAX),
        // Slots past the call's dimensions read 0 (they sort equal).
        _ => key.get(slot).copied().unwrap_or(0),
    }
}

/// The sortable value of a key part: the spec's row order for each dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SK<'a> {
    I(i64),
    S(&'a str),
    L(Option<&'a str>),
}

/// One event of the population: the version and, when the call reads a property, the index
/// of its parsed props.
#[derive(Clone, Copy)]
struct Ev<'a> {
    e: EdgeVersion<'a>,
    pi: u32,
}

/// What the aggregates of the call need, accumulated in the single pass over the events.
#[derive(Clone, Copy, Default)]
struct Needs {
    vt: bool,
    dur: bool,
    src_ids: bool,
    dst_ids: bool,
    times: bool,
    members: bool,
}

/// Running integer statistics (min, max, exact sum, count).
#[derive(Clone, Copy)]
struct IntStat {
    min: i64,
    max: i64,
    sum: i128,
    n: i128,
}

impl Default for IntStat {
    fn default() -> Self {
        IntStat {
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            n: 0,
        }
    }
}

impl IntStat {
    fn merge(&mut self, o: IntStat) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.n += o.n;
    }
    fn add(&mut self, v: i64) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += i128::from(v);
        self.n += 1;
    }
    /// 0 = min, 1 = max, 2 = mean (always a float); null when empty.
    fn get(&self, which: u8) -> Value {
        if self.n == 0 {
            return Value::Null;
        }
        match which {
            0 => json!(self.min),
            1 => json!(self.max),
            _ => float_mean(self.sum, self.n),
        }
    }
}

/// One group: its key, a representative event (for names) and its accumulators.
#[derive(Default)]
struct Group {
    key: Key,
    rep: u32,
    count: u64,
    src_ids: Ids,
    dst_ids: Ids,
    vt: IntStat,
    dur: IntStat,
    times: Vec<i64>,
    members: Vec<u32>,
}

impl Group {
    /// Appends a later chunk's group of the same key.
    fn merge(&mut self, o: Group) {
        self.count += o.count;
        self.src_ids.append(o.src_ids);
        self.dst_ids.append(o.dst_ids);
        self.vt.merge(o.vt);
        self.dur.merge(o.dur);
        self.times.extend(o.times);
        self.members.extend(o.members);
    }
    /// The accumulators that read more of the event than `vt_s` and the endpoint ids.
    fn add_row(&mut self, ev: &Ev<'_>, i: u32, needs: Needs) {
        let e = &ev.e;
        let vt_s = e.vt_s();
        if needs.dur {
            let vt_e = e.vt_e();
            if vt_e != OPEN_END {
                self.dur.add(vt_e - vt_s);
            }
        }
        if needs.members {
            self.members.push(i);
        }
    }
    /// The accumulators that read only `vt_s` (endpoint ids are collected by [`Slots`]).
    fn add_ints(&mut self, vt_s: i64, needs: Needs) {
        self.count += 1;
        if needs.vt {
            self.vt.add(vt_s);
        }
        if needs.times {
            self.times.push(vt_s);
        }
    }
}

/// The endpoint ids one group collected in one chunk: a list while it is shorter than a
/// bitset over the id space, a bitset of `words` words after that, so a part never takes
/// more memory than the smaller of the two (dense sets, such as the destinations of a large
/// bucket, cost one bit per possible id and no per-event growth).
enum IdSet {
    List(Vec<u32>),
    Bits(Vec<u64>),
}

impl IdSet {
    /// Adds `id` (below `64 * words`).
    #[inline(always)]
    fn insert(&mut self, id: u32, words: usize) {
        match self {
            IdSet::Bits(b) => b[(id >> 6) as usize] |= 1 << (id & 63),
            IdSet::List(v) => {
                v.push(id);
                // 4 bytes per listed id against 8 per bitset word.
                if v.len() >= 2 * words {
                    self.densify(words);
                }
            }
        }
    }

    /// Turns the list into the bitset of its ids (once per chunk and group at most).
    #[cold]
    #[inline(never)]
    fn densify(&mut self, words: usize) {
        if let IdSet::List(v) = self {
            let mut b = vec![0u64; words];
            for &id in v.iter() {
                b[(id >> 6) as usize] |= 1 << (id & 63);
            }
            *self = IdSet::Bits(b);
        }
    }
}

/// A group's endpoint ids as the sets its chunks collected, in chunk order: merging the
/// groups of later chunks moves their sets and never copies ids.
#[derive(Default)]
struct Ids(Vec<IdSet>);

impl Ids {
    fn append(&mut self, o: Ids) {
        self.0.extend(o.0);
    }
}

/// Distinct-id counter over the union of a group's sets: one bit per id (`words` words),
/// reused across groups. Invariant: all bits are clear between calls (a count clears what
/// it set), so a count costs O(listed ids + words of its bitset parts).
struct Distinct {
    bits: Vec<u64>,
}

impl Distinct {
    fn new(words: usize) -> Distinct {
        Distinct {
            bits: vec![0; words],
        }
    }

    fn count(&mut self, ids: &Ids) -> usize {
        let bits = &mut self.bits;
        let mut n = 0;
        let mut dense = false;
        for part in &ids.0 {
            match part {
                IdSet::Bits(b) => {
                    dense = true;
                    bits.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                }
                IdSet::List(v) => {
                    for &id in v {
                        let (w, bit) = ((id >> 6) as usize, 1u64 << (id & 63));
                        n += usize::from(bits[w] & bit == 0);
                        bits[w] |= bit;
                    }
                }
            }
        }
        if dense {
            n = bits.iter().map(|w| w.count_ones() as usize).sum();
            bits.fill(0);
        } else {
            for v in &ids.0 {
                if let IdSet::List(v) = v {
                    v.iter().for_each(|&id| bits[(id >> 6) as usize] = 0);
                }
            }
        }
        n
    }
}

/// Event positions as ascending runs of consecutive storage positions (event `i` is the
/// `i`-th position of their concatenation), with the index of each run's first event.
#[derive(Default)]
struct Runs {
    runs: Vec<std::ops::Range<u32>>,
    first: Vec<usize>,
    len: usize,
}

impl Runs {
    fn new(runs: Vec<std::ops::Range<u32>>) -> Runs {
        let mut first = Vec::with_capacity(runs.len());
        let mut len = 0;
        for r in &runs {
            first.push(len);
            len += r.len();
        }
        Runs { runs, first, len }
    }

    /// The position of event `i`.
    fn get(&self, i: usize) -> Option<u32> {
        let k = self.first.partition_point(|&f| f <= i).checked_sub(1)?;
        let r = &self.runs[k];
        let p = r.start as usize + (i - self.first[k]);
        (p < r.end as usize).then_some(p as u32)
    }

    /// The positions of the events `ev`, as runs.
    fn slice(&self, ev: std::ops::Range<usize>) -> impl Iterator<Item = std::ops::Range<u32>> + '_ {
        let k0 = self
            .first
            .partition_point(|&f| f <= ev.start)
            .saturating_sub(1);
        self.runs[k0..]
            .iter()
            .zip(&self.first[k0..])
            .take_while(move |(_, &f)| f < ev.end)
            .map(move |(r, &f)| {
                let lo = ev.start.saturating_sub(f).min(r.len());
                let hi = (ev.end - f).min(r.len());
                r.start + lo as u32..r.start + hi as u32
            })
    }
}

/// Events per grouping chunk (fixed: results never depend on the thread count).
const CHUNK: usize = 32_768;

/// Rel ids of one bucket's stretch remembered with their slots ([`Grouper::stretches_by_rel`]);
/// events of further rel types look their group up as usual.
const SEEN_RELS: usize = 16;
/// Events per filter part of the scan (fixed, as `CHUNK`).
const SCAN_PART: usize = 65_536;

/// The per-call label lookup: per endpoint uid id, its believed node versions with per-call
/// label indices (1-based; 0 = no label), cached once per uid.
struct LabelCtx<'a> {
    snap: tgms_engine::Snapshot<'a>,
    a: i64,
    cache: FxHashMap<u32, Vec<(i64, i64, u64)>>,
    ids: FxHashMap<&'a str, u64>,
    names: Vec<&'a str>,
}

impl<'a> LabelCtx<'a> {
    fn label(&mut self, id: u32, uid: &str, t: i64) -> u64 {
        let (snap, a) = (self.snap, self.a);
        let (ids, names) = (&mut self.ids, &mut self.names);
        let vs = self.cache.entry(id).or_insert_with(|| {
            snap.versions_of(&Identity::Node(uid.to_string()), a)
                .into_iter()
                .filter_map(|v| match v {
                    Version::Node(n) => Some(n),
                    Version::Edge(_) => None,
                })
                .map(|n| {
                    let l = n.label();
                    let li = *ids.entry(l).or_insert_with(|| {
                        names.push(l);
                        names.len() as u64
                    });
                    (n.vt_s(), n.vt_e(), li)
                })
                .collect()
        });
        vs.iter()
            .find(|(s, x, _)| *s <= t && t < *x)
            .map_or(0, |v| v.2)
    }
}

/// The per-call grouping plan.
struct Grouper<'d> {
    dims: &'d [Dim],
    t_a: i64,
    stride: i64,
    /// Calendar buckets (a calendar `stride`), else uniform `stride`-wide ones.
    cal: Option<&'d [(i64, i64)]>,
    fold: bool,
    endpoint_dims: bool,
    /// An `either` dimension is present (never on the columnar path).
    either: bool,
    needs: Needs,
    /// Words of a bitset over the uid id space (see [`IdSet`]).
    words: usize,
}

/// The groups of one chunk in order of first occurrence, with a hash index and the two most
/// recently used groups checked first (event runs tend to alternate among few keys, e.g. rel
/// types within one bucket), and each group's endpoint id sets of the chunk.
struct Slots {
    index: FxHashMap<Key, u32>,
    groups: Vec<Group>,
    recent: [(Option<Key>, u32); 2],
    needs: Needs,
    /// Words of a bitset over the uid id space.
    words: usize,
    /// Per group: its (src, dst) id sets of the chunk, when an aggregate needs them.
    sets: Vec<(IdSet, IdSet)>,
}

impl Slots {
    fn new(needs: Needs, words: usize) -> Slots {
        Slots {
            index: FxHashMap::default(),
            groups: Vec::new(),
            recent: [(None, 0); 2],
            needs,
            words,
            sets: Vec::new(),
        }
    }

    /// Adds event `i` (start `vt_s`, endpoint ids `src`, `dst`) to the group of `key`;
    /// returns the group for the accumulators that read more of the event.
    #[inline(always)]
    fn add(&mut self, key: Key, i: u32, vt_s: i64, src: u32, dst: u32) -> &mut Group {
        let g = self.slot(key, i);
        self.add_to(g, vt_s, src, dst)
    }

    /// [`Slots::add`] to the group in slot `g`.
    #[inline(always)]
    fn add_to(&mut self, g: u32, vt_s: i64, src: u32, dst: u32) -> &mut Group {
        let (needs, words, g) = (self.needs, self.words, g as usize);
        if needs.src_ids {
            self.sets[g].0.insert(src, words);
        }
        if needs.dst_ids {
            self.sets[g].1.insert(dst, words);
        }
        let group = &mut self.groups[g];
        group.add_ints(vt_s, needs);
        group
    }

    /// The chunk's groups, each with its id sets of the chunk.
    fn finish(mut self) -> Vec<Group> {
        for (g, (src, dst)) in self.groups.iter_mut().zip(self.sets) {
            if self.needs.src_ids {
                g.src_ids.0.push(src);
            }
            if self.needs.dst_ids {
                g.dst_ids.0.push(dst);
            }
        }
        self.groups
    }

    /// The slot of the group of `key`, created with representative `i` when new.
    #[inline(always)]
    fn slot(&mut self, key: Key, i: u32) -> u32 {
        if self.recent[0].0 == Some(key) {
            self.recent[0].1
        } else if self.recent[1].0 == Some(key) {
            self.recent.swap(0, 1);
            self.recent[0].1
        } else {
            self.lookup(key, i)
        }
    }

    /// [`Slots::slot`] past the two most recent groups.
    #[inline(never)]
    fn lookup(&mut self, key: Key, i: u32) -> u32 {
        let (groups, sets) = (&mut self.groups, &mut self.sets);
        let g = *self.index.entry(key).or_insert_with(|| {
            groups.push(Group {
                key,
                rep: i,
                ..Group::default()
            });
            sets.push((IdSet::List(Vec::new()), IdSet::List(Vec::new())));
            (groups.len() - 1) as u32
        });
        self.recent[1] = self.recent[0];
        self.recent[0] = (Some(key), g);
        g
    }
}

/// The time bucket of `vt_s >= t_a`, `(vt_s - t_a) / stride`, remembering the bounds
/// `[lo, hi)` of the last one: events come nearly in `vt_s` order, so most need no division.
struct BucketOf<'c> {
    t_a: i64,
    stride: i64,
    cal: Option<&'c [(i64, i64)]>,
    lo: i64,
    hi: i64,
    idx: u64,
}

impl<'c> BucketOf<'c> {
    fn new(t_a: i64, stride: i64, cal: Option<&'c [(i64, i64)]>) -> BucketOf<'c> {
        BucketOf {
            t_a,
            stride,
            cal,
            lo: 0,
            hi: 0,
            idx: 0,
        }
    }
    #[inline(always)]
    fn of(&mut self, vt_s: i64) -> u64 {
        if !(self.lo <= vt_s && vt_s < self.hi) {
            if let Some(cal) = self.cal {
                let idx = crate::calendar::bucket_index(cal, vt_s);
                (self.lo, self.hi) = cal.get(idx).copied().unwrap_or((vt_s, vt_s));
                self.idx = idx as u64;
                return self.idx;
            }
            let idx = (vt_s - self.t_a) / self.stride;
            // lo <= vt_s; hi saturates, still above every vt_s of the bucket.
            self.lo = self.t_a + idx * self.stride;
            self.hi = self.lo.saturating_add(self.stride);
            self.idx = idx as u64;
        }
        self.idx
    }
}

impl Grouper<'_> {
    /// The key of an event from its integers; `label(is_src)` resolves label dimensions.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn key(
        &self,
        bucket: &mut BucketOf<'_>,
        vt_s: i64,
        rel: u32,
        src: u32,
        dst: u32,
        node: u32,
        mut label: impl FnMut(bool) -> u64,
    ) -> Key {
        let mut key = [0u64; 3];
        for (slot, d) in self.dims.iter().enumerate() {
            key[slot] = match *d {
                Dim::Bucket => bucket.of(vt_s),
                Dim::Calendar(u, tz) => calendar(u, tz, vt_s) as u64,
                Dim::Rel => u64::from(rel),
                Dim::Endpoint(true) => u64::from(src),
                Dim::Endpoint(false) => u64::from(dst),
                Dim::Either => u64::from(node),
                Dim::Label(is_src) => label(is_src),
            };
        }
        pack(key, self.dims.len())
    }

    /// Groups one chunk of events (`offset` = index of its first event).
    fn chunk<'a>(
        &self,
        evs: impl Iterator<Item = Ev<'a>>,
        offset: u32,
        mut labels: Option<&mut LabelCtx<'a>>,
    ) -> Vec<Group> {
        let mut slots = Slots::new(self.needs, self.words);
        let mut bucket = BucketOf::new(self.t_a, self.stride, self.cal);
        for (j, ev) in evs.enumerate() {
            let i = offset + j as u32;
            let e = &ev.e;
            let (src, dst) = if !self.endpoint_dims {
                (0, 0)
            } else if self.fold && e.dst() < e.src() {
                (e.dst_id(), e.src_id())
            } else {
                (e.src_id(), e.dst_id())
            };
            // With an `either` dimension the event joins its src's group and, unless it is a
            // self loop, its dst's group.
            let nodes = [e.src_id(), e.dst_id()];
            let n_keys = if self.either && nodes[0] != nodes[1] {
                2
            } else {
                1
            };
            for &node in &nodes[..n_keys] {
                let key = self.key(
                    &mut bucket,
                    e.vt_s(),
                    e.rel_id(),
                    src,
                    dst,
                    node,
                    |is_src| {
                        let (id, uid) = if is_src {
                            (e.src_id(), e.src())
                        } else {
                            (e.dst_id(), e.dst())
                        };
                        labels
                            .as_deref_mut()
                            .map_or(0, |l| l.label(id, uid, e.vt_s()))
                    },
                );
                slots
                    .add(key, i, e.vt_s(), e.src_id(), e.dst_id())
                    .add_row(&ev, i, self.needs);
            }
        }
        slots.finish()
    }

    /// True when the dimensions are `rel_type` and at most one `time_bucket`, or none (the
    /// rel-by-bucket census, a global row): the key of an event then changes only with its
    /// rel id inside a bucket, which [`Grouper::stretches_by_rel`] uses.
    fn rel_bucket_only(&self) -> bool {
        let buckets = self.dims.iter().filter(|d| **d == Dim::Bucket).count();
        buckets <= 1
            && self
                .dims
                .iter()
                .all(|d| matches!(d, Dim::Bucket | Dim::Rel))
    }

    /// Groups the column positions `ps` (event `first` onwards) when
    /// [`Grouper::rel_bucket_only`]: a stretch of consecutive positions in one bucket (all
    /// of them without a bucket dimension) needs a key and a slot lookup only where the rel
    /// id changes. Same groups, representatives and accumulators as [`Slots::add`] per event
    /// (positions need not be in time order: a stretch ends at the first event outside its
    /// bucket).
    fn stretches_by_rel(
        &self,
        slots: &mut Slots,
        bucket: &mut BucketOf<'_>,
        first: u32,
        (vts, rels, srcs, dsts): (&[i64], &[u32], &[u32], &[u32]),
        ps: std::ops::Range<usize>,
    ) {
        let has_bucket = self.dims.contains(&Dim::Bucket);
        let (use_src, use_dst) = (self.needs.src_ids, self.needs.dst_ids);
        let mut seen: Vec<(u32, u32)> = Vec::new();
        let mut p = ps.start;
        while p < ps.end {
            let end = if has_bucket {
                bucket.of(vts[p]);
                let (lo, hi) = (bucket.lo, bucket.hi);
                let rest = &vts[p + 1..ps.end];
                p + 1
                    + rest
                        .iter()
                        .position(|&t| !(lo <= t && t < hi))
                        .unwrap_or(rest.len())
            } else {
                ps.end
            };
            // The stretch's (rel id, slot) pairs: rel types are few, so a short list.
            seen.clear();
            for q in p..end {
                let rel = rels[q];
                let g = match seen.iter().find(|x| x.0 == rel) {
                    Some(&(_, g)) => g,
                    None => {
                        let i = first + (q - ps.start) as u32;
                        let key = self.key(bucket, vts[q], rel, 0, 0, 0, |_| 0);
                        let g = slots.slot(key, i);
                        if seen.len() < SEEN_RELS {
                            seen.push((rel, g));
                        }
                        g
                    }
                };
                let src = if use_src { srcs[q] } else { 0 };
                let dst = if use_dst { dsts[q] } else { 0 };
                slots.add_to(g, vts[q], src, dst);
            }
            p = end;
        }
    }

    /// [`Grouper::chunk`] for unfiltered events given as runs of storage positions (the
    /// events from `offset` on), reading the engine's compact columns run by run (rows above
    /// their coverage from the table); columns the call does not use are not read. Only for
    /// calls without label dimensions, folding, durations or member lists.
    fn chunk_columns(
        &self,
        snap: &tgms_engine::Snapshot<'_>,
        cols: &EdgeColumns,
        runs: impl Iterator<Item = std::ops::Range<u32>>,
        offset: u32,
    ) -> Vec<Group> {
        let mut slots = Slots::new(self.needs, self.words);
        let mut bucket = BucketOf::new(self.t_a, self.stride, self.cal);
        let add = |slots: &mut Slots, bucket: &mut BucketOf<'_>, i, vt_s, rel, src, dst| {
            let key = self.key(bucket, vt_s, rel, src, dst, src, |_| 0);
            slots.add(key, i, vt_s, src, dst);
        };
        let n = cols.covered();
        let (vts, rels, srcs, dsts) = (cols.vt_s(), cols.rel(), cols.src(), cols.dst());
        let use_rel = self.dims.contains(&Dim::Rel);
        let use_src = self.needs.src_ids || self.dims.contains(&Dim::Endpoint(true));
        let use_dst = self.needs.dst_ids || self.dims.contains(&Dim::Endpoint(false));
        let by_rel = self.rel_bucket_only();
        let mut i = offset;
        for r in runs {
            let (a, b) = (r.start as usize, r.end as usize);
            // [a, c) from the columns, [c, b) from the rows.
            let c = b.min(n).max(a);
            if by_rel {
                let cols = (vts, rels, srcs, dsts);
                self.stretches_by_rel(&mut slots, &mut bucket, i, cols, a..c);
                i += (c - a) as u32;
            } else {
                for p in a..c {
                    let rel = if use_rel { rels[p] } else { 0 };
                    let src = if use_src { srcs[p] } else { 0 };
                    let dst = if use_dst { dsts[p] } else { 0 };
                    add(&mut slots, &mut bucket, i, vts[p], rel, src, dst);
                    i += 1;
                }
            }
            for p in c..b {
                if let Some(e) = snap.edge_at(p as u32) {
                    let (rel, src, dst) = (e.rel_id(), e.src_id(), e.dst_id());
                    add(&mut slots, &mut bucket, i, e.vt_s(), rel, src, dst);
                }
                i += 1;
            }
        }
        slots.finish()
    }
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let snap = ctx.snap;
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing after validation"))?;
    let a = args.as_of_tt();
    let stride = stride_of(args).unwrap_or(1).max(1);
    let zone = crate::calendar::zone_arg(args)?;
    let cal = match crate::calendar::stride_unit(args) {
        Some(unit) => Some(crate::calendar::buckets(t_a, t_b, unit, zone)?),
        None => None,
    };
    let dims: Vec<Dim> = items(args, "group_by")
        .iter()
        .map(|d| {
            let src = s(d, "role") == Some("src");
            match s(d, "dim").unwrap_or("") {
                "time_bucket" => Dim::Bucket,
                "calendar_unit" => Dim::Calendar(
                    match s(d, "unit") {
                        Some("hour_of_day") => Unit::Hour,
                        Some("day_of_week") => Unit::Day,
                        _ => Unit::Month,
                    },
                    match d.get("tz_offset_minutes").and_then(Value::as_i64) {
                        Some(m) => Zone::fixed_minutes(m),
                        None => zone,
                    },
                ),
                "rel_type" => Dim::Rel,
                "endpoint" if s(d, "role") == Some("either") => Dim::Either,
                "endpoint" => Dim::Endpoint(src),
                _ => Dim::Label(src),
            }
        })
        .collect();
    let width = t_b - t_a;
    let agg_decls = items(args, "aggregates");
    let aggs: Vec<(String, Agg)> = agg_decls
        .iter()
        .map(|x| (agg_column(x), parse_agg(x, width)))
        .collect();
    let rels = args.str_list("rel_types")?;
    let pf = args.get("prop_filter").filter(|v| !v.is_null());
    let ef = args.get("endpoint_filter").filter(|v| !v.is_null());
    let pair_mode = args.opt_str("pair_mode")?;

    // Properties read, in a sorted map (0 included).
    let mut coercion: Option<Map<String, Value>> = None;
    let bump = |coercion: &mut Option<Map<String, Value>>, p: &str, n: u64| {
        let m = coercion.get_or_insert_with(Map::new);
        let cur = m.get(p).and_then(Value::as_u64).unwrap_or(0);
        m.insert(p.to_string(), json!(cur + n));
    };
    if let Some(pf) = pf {
        bump(&mut coercion, s(pf, "prop").unwrap_or(""), 0);
    }
    for (_, g) in &aggs {
        if let Agg::Prop(_, p, _) | Agg::PairDirs(Some(p)) = g {
            bump(&mut coercion, p, 0);
        }
    }
    let reads_props = coercion.is_some();

    // 0. Events starting in the window, with the rel_type restriction (rel ids resolved
    // once per call).
    let rel_set: Option<FxHashSet<&str>> = rels
        .as_ref()
        .map(|rs| rs.iter().map(String::as_str).collect());
    // The engine gathers the starts' storage positions through its valid-time index
    // (ascending). Without filters or property reads the events are the positions
    // themselves, taken as runs of consecutive positions: grouping reads them in place and
    // no per-event list is built. Otherwise the rel test and property parsing run over
    // fixed-size parts of the position list in parallel, concatenated in order, so the event
    // list equals a sequential pass.
    let plain =
        rel_set.is_none() && !reads_props && pf.is_none() && ef.is_none() && pair_mode.is_none();
    let (runs, starts) = if plain {
        (Runs::new(snap.edge_start_runs(t_a, t_b, a)), Vec::new())
    } else {
        (Runs::default(), snap.edge_start_positions(t_a, t_b, a))
    };
    let last = runs
        .runs
        .last()
        .map(|r| r.end - 1)
        .or(starts.last().copied());
    if last.is_some_and(|p| p as usize >= snap.edge_positions()) {
        return Err(OpError::internal("edge start position out of range"));
    }
    let mut props: Vec<Value> = Vec::new();
    let mut evs: Vec<Ev<'_>> = Vec::new();
    if !plain {
        type Part<'s> = Result<(Vec<EdgeVersion<'s>>, Vec<Value>), OpError>;
        let parts: Vec<Part<'_>> = starts
            .par_chunks(SCAN_PART)
            .map(|part| {
                let mut rel_ok: FxHashMap<u32, bool> = FxHashMap::default();
                let mut es = Vec::with_capacity(part.len());
                let mut ps = Vec::new();
                for e in part.iter().filter_map(|&p| snap.edge_at(p)) {
                    if let Some(rs) = &rel_set {
                        let ok = *rel_ok
                            .entry(e.rel_id())
                            .or_insert_with(|| rs.contains(e.rel_type()));
                        if !ok {
                            continue;
                        }
                    }
                    if reads_props {
                        ps.push(stored_json(e.props())?);
                    }
                    es.push(e);
                }
                Ok((es, ps))
            })
            .collect();
        for part in parts {
            let (es, ps) = part?;
            let base = props.len();
            for (k, e) in es.into_iter().enumerate() {
                let pi = if reads_props { (base + k) as u32 } else { 0 };
                evs.push(Ev { e, pi });
            }
            props.extend(ps);
        }
    }
    let prop_of = |ev: &Ev<'_>, p: &str| -> Option<&Value> {
        props.get(ev.pi as usize).and_then(|x| x.get(p))
    };
    // 1. prop_filter, exclusions counted over the window.
    if let Some(pf) = PropFilter::parse(args)? {
        let mut excluded = 0u64;
        let mut kept = Vec::with_capacity(evs.len());
        for ev in evs {
            match pf.test(prop_of(&ev, &pf.prop))? {
                Some(true) => kept.push(ev),
                Some(false) => {}
                None => excluded += 1,
            }
        }
        bump(&mut coercion, &pf.prop, excluded);
        evs = kept;
    }
    // 2. endpoint_filter.
    if let Some(ef) = ef {
        let role = s(ef, "role").unwrap_or("either");
        let uids: FxHashSet<&str> = ef
            .get("uids")
            .and_then(Value::as_array)
            .map(|u| u.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut member: FxHashMap<u32, bool> = FxHashMap::default();
        let mut is_member = |id: u32, name: &str| -> bool {
            *member.entry(id).or_insert_with(|| uids.contains(name))
        };
        evs.retain(|ev| {
            let e = &ev.e;
            match role {
                "src" => is_member(e.src_id(), e.src()),
                "dst" => is_member(e.dst_id(), e.dst()),
                _ => is_member(e.src_id(), e.src()) || is_member(e.dst_id(), e.dst()),
            }
        });
    }
    // 3. pair_mode.
    if pair_mode == Some("reciprocal") {
        let pairs: FxHashSet<(u32, u32)> = evs
            .iter()
            .map(|ev| (ev.e.src_id(), ev.e.dst_id()))
            .collect();
        evs.retain(|ev| pairs.contains(&(ev.e.dst_id(), ev.e.src_id())));
    }
    let fold = pair_mode.is_some();
    let mut needs = Needs::default();
    for (_, g) in &aggs {
        match g {
            Agg::Vt(_) => needs.vt = true,
            Agg::Dur(_) => needs.dur = true,
            Agg::Distinct(true) => needs.src_ids = true,
            Agg::Distinct(false) => needs.dst_ids = true,
            Agg::Prop(..) | Agg::PairDirs(_) | Agg::MaxDistinctInWindow(..) => needs.members = true,
            Agg::MaxGap | Agg::MinGap | Agg::MaxInWindow(_) | Agg::MaxSession(_) => {
                needs.times = true
            }
            _ => {}
        }
    }

    let words = snap.uid_ids().div_ceil(64);
    let grouper = Grouper {
        dims: &dims,
        t_a,
        stride,
        cal: cal.as_deref(),
        fold,
        endpoint_dims: dims
            .iter()
            .any(|d| matches!(d, Dim::Endpoint(_) | Dim::Either)),
        either: dims.contains(&Dim::Either),
        needs,
        words,
    };
    // Grouping: fixed-size chunks of the event list (independent of the thread count), each
    // grouped on its own — in parallel unless a label dimension needs the shared label cache
    // — then merged in chunk order, so groups, representatives and member order equal a
    // sequential pass exactly.
    let mut labels = LabelCtx {
        snap,
        a,
        cache: FxHashMap::default(),
        ids: FxHashMap::default(),
        names: Vec::new(),
    };
    let has_label = dims.iter().any(|d| matches!(d, Dim::Label(_)));
    // Event `i` (positions are validated above, so every index in range resolves).
    let ev_of = |i: usize| -> Option<Ev<'_>> {
        if plain {
            let e = snap.edge_at(runs.get(i)?)?;
            Some(Ev { e, pi: 0 })
        } else {
            evs.get(i).copied()
        }
    };
    let n_events = if plain { runs.len } else { evs.len() };
    let ranges: Vec<std::ops::Range<usize>> = (0..n_events)
        .step_by(CHUNK)
        .map(|s| s..(s + CHUNK).min(n_events))
        .collect();
    let part = |r: &std::ops::Range<usize>| -> Box<dyn Iterator<Item = Ev<'_>> + '_> {
        if plain {
            let evs = runs
                .slice(r.clone())
                .flatten()
                .filter_map(|p| snap.edge_at(p));
            Box::new(evs.map(|e| Ev { e, pi: 0 }))
        } else {
            Box::new(r.clone().filter_map(ev_of))
        }
    };
    let columnar = plain && !has_label && !needs.dur && !needs.members && !grouper.either;
    let parts: Vec<Vec<Group>> = if columnar {
        let cols = snap.edge_columns();
        ranges
            .par_iter()
            .map(|r| grouper.chunk_columns(&snap, &cols, runs.slice(r.clone()), r.start as u32))
            .collect()
    } else if has_label {
        ranges
            .iter()
            .map(|r| grouper.chunk(part(r), r.start as u32, Some(&mut labels)))
            .collect()
    } else {
        ranges
            .par_iter()
            .map(|r| grouper.chunk(part(r), r.start as u32, None))
            .collect()
    };
    let label_names = labels.names;
    let mut index: FxHashMap<Key, u32> = FxHashMap::default();
    let mut groups: Vec<Group> = Vec::new();
    for part in parts {
        for g in part {
            match index.get(&g.key) {
                Some(&i) => groups[i as usize].merge(g),
                None => {
                    index.insert(g.key, groups.len() as u32);
                    groups.push(g);
                }
            }
        }
    }
    if dims.is_empty() && groups.is_empty() {
        groups.push(Group::default());
    }
    if groups.len() > MAX_GROUPS {
        return Err(OpError::new(
            Code::Limit,
            format!(
                "group count {} exceeds cap 100000; narrow the window, restrict rel_types, add an endpoint_filter cohort, use pair_mode undirected, or use coarser dimensions",
                groups.len()
            ),
        ));
    }
    // Names of the key parts (from each group's representative) and the row order.
    let rep_of = |g: &Group| ev_of(g.rep as usize).map(|ev| ev.e);
    let name = |g: &Group, slot: usize| -> SK<'_> {
        let k = key_part(g.key, slot, dims.len());
        match dims.get(slot) {
            Some(Dim::Bucket | Dim::Calendar(..)) | None => SK::I(k as i64),
            Some(Dim::Label(_)) => SK::L(k.checked_sub(1).map(|x| label_names[x as usize])),
            Some(Dim::Rel) => SK::S(rep_of(g).map_or("", |e| e.rel_type())),
            Some(Dim::Endpoint(_) | Dim::Either) => SK::S(rep_of(g).map_or("", |e| {
                if k == u64::from(e.src_id()) {
                    e.src()
                } else {
                    e.dst()
                }
            })),
        }
    };
    if groups.iter().any(|g| g.count > 0 && rep_of(g).is_none()) {
        return Err(OpError::internal("group representative out of range"));
    }
    let mut sorted: Vec<([SK<'_>; 3], &Group)> = groups
        .iter()
        .map(|g| ([name(g, 0), name(g, 1), name(g, 2)], g))
        .collect();
    sorted.sort_by(|x, y| x.0.cmp(&y.0));

    // Rows, per group in parallel (each worker with its own distinct-counter), collected in
    // row order; property exclusions are summed afterwards in that order.
    type Built = Result<(Value, Value, Vec<(String, u64)>), OpError>;
    let built: Vec<Built> = sorted
        .par_iter()
        .map_init(
            || Distinct::new(words),
            |seen, (sk, g)| -> Built {
                let mut row = Map::new();
                let mut kv = Vec::new();
                let mut excl: Vec<(String, u64)> = Vec::new();
                for (slot, d) in dims.iter().enumerate() {
                    let k = sk[slot];
                    let mut put = |name: &str, v: Value| {
                        kv.push(v.clone());
                        row.insert(name.to_string(), v);
                    };
                    match (*d, k) {
                        (Dim::Bucket, SK::I(i)) => {
                            let (lo, hi) = match &cal {
                                Some(c) => c[i as usize],
                                None => {
                                    let lo = i128::from(t_a) + i128::from(i) * i128::from(stride);
                                    let hi = (lo + i128::from(stride)).min(i128::from(t_b));
                                    (lo as i64, hi as i64)
                                }
                            };
                            put("t_a", json!(lo));
                            put("t_b", json!(hi));
                        }
                        (Dim::Calendar(u, _), SK::I(i)) => match u {
                            Unit::Hour => put("hour_of_day", json!(i)),
                            Unit::Day => put("day_of_week", json!(DAYS[i as usize])),
                            Unit::Month => put("month_of_year", json!(MONTHS[i as usize])),
                        },
                        (Dim::Rel, SK::S(x)) => put("rel_type", json!(x)),
                        (Dim::Endpoint(src), SK::S(x)) => {
                            put(if src { "src" } else { "dst" }, json!(x))
                        }
                        (Dim::Either, SK::S(x)) => put("uid", json!(x)),
                        (Dim::Label(src), SK::L(x)) => {
                            put(if src { "src_label" } else { "dst_label" }, json!(x))
                        }
                        _ => {
                            return Err(OpError::internal(
                                "aggregate_events: key/dimension mismatch",
                            ))
                        }
                    }
                }
                let mut times = g.times.clone();
                times.sort_unstable();
                for (col, agg) in &aggs {
                    if let Agg::PairDirs(p) = agg {
                        // The row's `src` column is the folded pair's smaller uid.
                        let src_slot = dims
                            .iter()
                            .position(|d| *d == Dim::Endpoint(true))
                            .unwrap_or(0);
                        let lo = match sk[src_slot] {
                            SK::S(x) => x,
                            _ => "",
                        };
                        let events = g
                            .members
                            .iter()
                            .map(|&i| {
                                let ev = &evs[i as usize];
                                super::pair_directions::PairEvent {
                                    vt_s: ev.e.vt_s(),
                                    eid: ev.e.eid(),
                                    src: ev.e.src(),
                                    prop: p.as_deref().and_then(|p| prop_of(ev, p)),
                                }
                            })
                            .collect();
                        let (cols, excluded) =
                            super::pair_directions::values(events, lo, p.as_deref())?;
                        if let Some(p) = p {
                            excl.push((p.clone(), excluded));
                        }
                        for (c, v) in cols {
                            row.insert(c, v);
                        }
                        continue;
                    }
                    let v = match agg {
                        Agg::Count => json!(g.count),
                        Agg::Distinct(true) => json!(seen.count(&g.src_ids)),
                        Agg::Distinct(false) => json!(seen.count(&g.dst_ids)),
                        Agg::Vt(w) => g.vt.get(*w),
                        Agg::Dur(w) => g.dur.get(*w),
                        Agg::Prop(w, p, q) => {
                            let mut vals: Vec<(Num, &Value, &Ev<'_>)> = Vec::new();
                            let mut excluded = 0u64;
                            for ev in g.members.iter().map(|&i| &evs[i as usize]) {
                                match prop_of(ev, p) {
                                    Some(x @ Value::Number(_)) => match num(x)? {
                                        Some(n) => vals.push((n, x, ev)),
                                        None => excluded += 1,
                                    },
                                    _ => excluded += 1,
                                }
                            }
                            excl.push((p.clone(), excluded));
                            prop_stat(&vals, *w, q)?
                        }
                        Agg::MaxGap => max_gap(&times),
                        Agg::MinGap => min_gap(&times),
                        Agg::MaxInWindow(s) => max_in_window(&times, *s),
                        Agg::MaxSession(gp) => max_session(&times, *gp),
                        Agg::MaxDistinctInWindow(of_src, span) => {
                            let mut te: Vec<(i64, u32)> = g
                                .members
                                .iter()
                                .filter_map(|&i| ev_of(i as usize))
                                .map(|ev| {
                                    let id = if *of_src {
                                        ev.e.src_id()
                                    } else {
                                        ev.e.dst_id()
                                    };
                                    (ev.e.vt_s(), id)
                                })
                                .collect();
                            te.sort_unstable();
                            max_distinct_in_window(&te, *span)
                        }
                        Agg::PairDirs(_) => continue,
                    };
                    row.insert(col.clone(), v);
                }
                Ok((Value::Object(row), Value::Array(kv), excl))
            },
        )
        .collect();
    let mut rows = Vec::with_capacity(built.len());
    let mut keys = Vec::with_capacity(built.len());
    for b in built {
        let (row, kv, excl) = b?;
        for (p, n) in excl {
            bump(&mut coercion, &p, n);
        }
        rows.push(row);
        keys.push(kv);
    }
    out.paged_keyed("rows", rows, keys)?;
    if let Some(c) = coercion {
        out.set("prop_coercion", Value::Object(c));
    }
    Ok(())
}

/// min / max (first in `(vt_s, eid)` order among exact ties) / blessed mean / sum / median /
/// quantile `q` of numeric property values ([`super::compute::order_stat`]); null when none.
fn prop_stat(vals: &[(Num, &Value, &Ev<'_>)], which: u8, q: &Value) -> Result<Value, OpError> {
    if vals.is_empty() {
        return Ok(Value::Null);
    }
    if which >= 2 {
        let ns: Vec<Num> = vals.iter().map(|v| v.0).collect();
        return match which {
            2 => mean(&ns)?.to_value(),
            3 => super::compute::exact_sum(&ns)?.to_value(),
            4 => super::compute::median(&ns)?.to_value(),
            _ => super::compute::quantile(&ns, q)?.to_value(),
        };
    }
    let want = if which == 0 {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    let order = |ev: &Ev<'_>| (ev.e.vt_s(), ev.e.eid());
    let mut best = &vals[0];
    for v in &vals[1..] {
        match cmp_num(v.0, best.0) {
            o if o == want => best = v,
            Ordering::Equal if v.1 != best.1 && order(v.2) < order(best.2) => best = v,
            _ => {}
        }
    }
    Ok(best.1.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id sets of one group in chunks: lists turn into bitsets past the size of a bitset,
    /// and the distinct count of a mix of both equals a set union, leaving the counter clear.
    #[test]
    fn distinct_counts_the_union_of_list_and_bitset_parts() {
        let words = 3; // ids below 192; a list turns into a bitset at 6 ids
        let chunks: [&[u32]; 4] = [&[5, 7, 5], &[1, 2, 3, 4, 5, 191, 64], &[], &[191, 0, 0]];
        let mut ids = Ids::default();
        for c in chunks {
            let mut set = IdSet::List(Vec::new());
            c.iter().for_each(|&id| set.insert(id, words));
            let dense = c.len() >= 2 * words;
            assert_eq!(matches!(set, IdSet::Bits(_)), dense, "{c:?}");
            ids.append(Ids(vec![set]));
        }
        let want: FxHashSet<u32> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        let mut d = Distinct::new(words);
        assert_eq!(d.count(&ids), want.len());
        assert!(d.bits.iter().all(|&w| w == 0), "counter left bits set");
        let lists = Ids(vec![
            IdSet::List(vec![9, 9, 100]),
            IdSet::List(vec![100, 3]),
        ]);
        assert_eq!(d.count(&lists), 3);
        assert!(d.bits.iter().all(|&w| w == 0), "counter left bits set");
    }

    #[test]
    fn runs_map_events_to_positions() {
        let runs = Runs::new(vec![2..5, 9..10, 20..24]);
        let flat: Vec<u32> = vec![2, 3, 4, 9, 20, 21, 22, 23];
        assert_eq!(runs.len, flat.len());
        for (i, &p) in flat.iter().enumerate() {
            assert_eq!(runs.get(i), Some(p));
        }
        assert_eq!(runs.get(flat.len()), None);
        for a in 0..=flat.len() {
            for b in a..=flat.len() {
                let got: Vec<u32> = runs.slice(a..b).flatten().collect();
                assert_eq!(got, flat[a..b], "events {a}..{b}");
            }
        }
    }
}
