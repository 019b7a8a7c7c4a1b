//! The call pipeline of `operators.md` §3, in the spec's order: look up → schema → defaults →
//! validators → statistics → cost guardrail → kernel → float canonicalization → digest and
//! envelope (§4).

use crate::args::Args;
use crate::cost::Ceilings;
use crate::error::{Code, OpError};
use crate::json::{canonicalize_floats, digest_map};
use crate::output::{Admit, BesidePayload, ListText, Output};
use crate::registry::{lookup, names, Ctx};
use crate::schema;
use serde_json::{json, Map, Value};
use tgms_engine::Snapshot;

/// Router configuration of one call.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// The cost ceilings step 6 checks the estimate against.
    pub ceilings: Ceilings,
    /// Internal callers only (claim re-execution, memory builder): skip step 6.
    pub skip_cost: bool,
}

/// The registry entry of `name`, or `E_INVALID_ARG` listing the known operators.
pub fn spec_of(name: &str) -> Result<&'static crate::OpSpec, OpError> {
    lookup(name).ok_or_else(|| {
        OpError::with(
            Code::InvalidArg,
            format!("unknown operator: {name}"),
            json!({ "known": names() }),
        )
    })
}

/// The arguments of a call to `name` with every time and duration string (docs/times.md)
/// resolved to integer µs; integer arguments come back unchanged, so every digest of an
/// integer call stays what it was. Done first, before the schema step, by [`prepare`] and by
/// the plan executor before it digests resolved arguments.
/// An unknown operator is left for the call to report. Taken by value: arguments without a
/// time string come back as they are, never copied (a plan step's input can be a million rows).
pub fn resolve_times(name: &str, raw: Value) -> Result<Value, OpError> {
    let Some(spec) = lookup(name) else {
        return Ok(raw);
    };
    Ok(crate::timeparse::resolve_times(spec, &raw)?.unwrap_or(raw))
}

/// Steps 1–4: the operator's filled arguments, or the error of the first failing step.
/// Time strings are resolved to µs before the schema step ([`resolve_times`]).
pub fn prepare(name: &str, raw: &Value) -> Result<(&'static crate::OpSpec, Args), OpError> {
    let spec = spec_of(name)?;
    let resolved = crate::timeparse::resolve_times(spec, raw)?;
    let given = raw;
    let raw = resolved.as_ref().unwrap_or(given);
    let arg_schema = spec.arg_schema();
    let order: Vec<&str> = spec.args.iter().map(|a| a.name).collect();
    let mut violations = Vec::new();
    schema::validate(
        &arg_schema,
        raw,
        &mut Vec::new(),
        Some(&order),
        &mut violations,
    );
    if let Some(v) = schema::first_violation(violations) {
        return Err(OpError::with(
            Code::Schema,
            format!("invalid args for {}: {}", spec.name, v.message),
            json!({ "path": v.path }),
        ));
    }
    let mut filled = resolved.unwrap_or_else(|| given.clone());
    schema::integerize(&arg_schema, &mut filled);
    let Value::Object(mut m) = filled else {
        return Err(OpError::internal(
            "args passed schema validation but are not an object",
        ));
    };
    let defaults: Vec<(&str, &Value)> = spec
        .args
        .iter()
        .filter_map(|a| a.default.as_ref().map(|d| (a.name, d)))
        .collect();
    schema::fill_defaults(&mut m, &defaults);
    let args = Args(m);
    for v in &spec.validators {
        v(&args)?;
    }
    Ok((spec, args))
}

/// `call_operator(name, args, ceilings)`: the envelope of a successful call, or the error.
pub fn call_operator(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    opts: &CallOptions,
) -> Result<Value, OpError> {
    let (spec, args) = prepare(name, raw)?;
    Ok(run_prepared(snap, spec, args, None, Project::No, opts)?.0)
}

/// [`call_operator`] that also gives, when its page is not all of the paged list `list`
/// and `admit(total, page rows)` holds, the envelope [`call_operator_projected`] would
/// return for the same args (the complete result with `list` cut to `columns`), from the
/// same kernel run: a plan whose later step reads the list's complete columns does not run
/// the producer twice. The second part is `None` when not admitted, when the page is the
/// whole list, when the kernel renders `list` lazily (only lists of typed cells and lists
/// given whole are rendered beside a page), or when the call's `truncated` and `cursor`
/// are not the list's alone.
pub fn call_operator_beside(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    list: &str,
    columns: &[String],
    admit: Admit,
    opts: &CallOptions,
) -> Result<(Value, Option<Value>), OpError> {
    let (spec, args) = prepare(name, raw)?;
    run_prepared(
        snap,
        spec,
        args,
        None,
        Project::Beside(list, columns, admit),
        opts,
    )
}

/// The rows at `positions` of the complete paged list `list` of the call `name(raw)`, whole
/// and in the order of `positions`, floats canonical: the rows of a complete result that a
/// selecting reducer reads (`compute` `topk` with `k`, `filter`; the executor finds their
/// positions in the list cut to the reducer's columns, `docs/plan-language.md`). One kernel
/// run that renders only those rows, no page and no certificate ([`Output::pick`]); a list
/// the kernel does not page (a capped list) is read from the call's unpaged envelope. A
/// position past the list's end is an internal error.
pub fn call_operator_picked(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    list: &str,
    positions: Vec<usize>,
    opts: &CallOptions,
) -> Result<Vec<Value>, OpError> {
    if positions.is_empty() {
        return Ok(Vec::new());
    }
    let (spec, args) = prepare(name, raw)?;
    admit(snap, spec, &args, opts)?;
    let mut out = Output::new(spec, &args);
    out.pick(list, positions.clone());
    run_kernel(snap, spec, &args, &mut out)?;
    if let Some(rows) = out.take_picked() {
        return Ok(rows);
    }
    let env = unpaged(snap, name, raw, Project::No, opts)?;
    let rows = env.get(list).and_then(Value::as_array);
    positions
        .iter()
        .map(|&i| {
            rows.and_then(|r| r.get(i)).cloned().ok_or_else(|| {
                OpError::internal(format!("{name}: no row {i} in its list '{list}'"))
            })
        })
        .collect()
}

/// What a call renders of a paged list besides its page.
enum Project<'a> {
    /// Nothing.
    No,
    /// The call returns the list whole: it is rendered cut to the columns
    /// ([`Output::project`]).
    Whole(&'a str, &'a [String]),
    /// The call returns a page; the list is also rendered whole, cut to the columns, when
    /// admitted ([`Output::project_beside`]).
    Beside(&'a str, &'a [String], Admit),
}

/// The `limit` an unpaged call runs with: every list is returned whole.
pub const UNPAGED_LIMIT: u64 = u32::MAX as u64;

/// [`call_operator`] returning the **complete** result: after the schema and validators
/// accepted `raw`, every list is produced whole (offset 0, no page limit). The executor uses
/// it to let a `compute` step read an earlier step's complete result
/// (plans-and-claims §6.2, revision 2026-12). The payload is the one a caller paging with
/// `limit` ≥ the list totals would get; `args_echo` is the caller's args as given.
pub fn call_operator_unpaged(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    opts: &CallOptions,
) -> Result<Value, OpError> {
    unpaged(snap, name, raw, Project::No, opts)
}

/// [`call_operator_unpaged`] with the paged list `list` cut to `columns`
/// ([`crate::json::project_row`]) as its rows are rendered, chunk by chunk: the envelope is
/// the complete one (its `result_digest` is taken over the whole rows) except that `list`
/// holds the cut rows. A plan's column reducer reads a complete result this way, without
/// holding a million wide rows as values (`docs/plan-language.md`, complete results). When
/// `list` is not a paged list of the operator, the envelope is the unpaged one.
pub fn call_operator_projected(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    list: &str,
    columns: &[String],
    opts: &CallOptions,
) -> Result<Value, OpError> {
    unpaged(snap, name, raw, Project::Whole(list, columns), opts)
}

fn unpaged(
    snap: Snapshot<'_>,
    name: &str,
    raw: &Value,
    project: Project<'_>,
    opts: &CallOptions,
) -> Result<Value, OpError> {
    let (spec, mut args) = prepare(name, raw)?;
    // The echo keeps the caller's limit and cursor; only these two keys are copied, never
    // a (possibly huge) input array.
    let echo: Vec<(String, Option<Value>)> = ["limit", "cursor"]
        .iter()
        .map(|k| (k.to_string(), args.0.get(*k).cloned()))
        .collect();
    if spec.args.iter().any(|a| a.name == "limit") {
        args.0.insert("limit".into(), Value::from(UNPAGED_LIMIT));
    }
    if spec.args.iter().any(|a| a.name == "cursor") {
        args.0.insert("cursor".into(), Value::Null);
    }
    Ok(run_prepared(snap, spec, args, Some(echo), project, opts)?.0)
}

/// Steps 5–9 of a prepared call. `args_echo` is `args` with the `restore` keys set back to
/// the caller's values (removed where the caller had none). The second part is the
/// envelope of the list rendered beside the page ([`Project::Beside`]), when it was.
fn run_prepared(
    snap: Snapshot<'_>,
    spec: &'static crate::OpSpec,
    args: Args,
    restore: Option<Vec<(String, Option<Value>)>>,
    project: Project<'_>,
    opts: &CallOptions,
) -> Result<(Value, Option<Value>), OpError> {
    admit(snap, spec, &args, opts)?;
    let stats = snap.stats();
    let (payload, projected, beside) = kernel_payload(snap, spec, &args, project)?;
    let mut echo = args.0;
    for (k, v) in restore.into_iter().flatten() {
        match v {
            Some(v) => echo.insert(k, v),
            None => echo.remove(&k),
        };
    }
    let echo = Value::Object(echo);
    let extent = json!({"vt_min": stats.vt_min, "vt_max": stats.vt_max});
    let beside = beside
        .map(|(payload, text)| envelope_of(spec, payload, Some(text), echo.clone(), extent.clone()))
        .transpose()?;
    let envelope = envelope_of(spec, payload, projected, echo, extent)?;
    Ok((envelope, beside))
}

/// Steps 5–6: the seconds guard and the cost guardrail.
fn admit(
    snap: Snapshot<'_>,
    spec: &'static crate::OpSpec,
    args: &Args,
    opts: &CallOptions,
) -> Result<(), OpError> {
    let stats = snap.stats();
    crate::seconds_guard::check(spec, &args.0, stats.vt_min, stats.vt_max)?;
    if let (Some(cost), false) = (spec.cost, opts.skip_cost) {
        let est = cost(args, stats).with_time(spec.coeff, opts.ceilings.time_coeff_scale);
        // An exact motif count over the ceilings offers sample mode as its repair.
        opts.ceilings.check(spec.name, &est).map_err(|mut e| {
            crate::ops::count_temporal_motifs_sample::add_cost_repair(
                spec.name,
                args,
                stats,
                &mut e.details,
            );
            e
        })?;
    }
    Ok(())
}

/// Step 7's kernel run into `out`. A kernel panic is a bug; it still leaves the tool
/// boundary as an error payload.
fn run_kernel(
    snap: Snapshot<'_>,
    spec: &'static crate::OpSpec,
    args: &Args,
    out: &mut Output,
) -> Result<(), OpError> {
    crate::page_cache::count_kernel_run();
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (spec.kernel)(&Ctx { snap }, args, out)
    }));
    match ran {
        Ok(r) => r,
        Err(_) => Err(OpError::internal(format!("{}: kernel panicked", spec.name))),
    }
}

/// Steps 8–9: the envelope of a kernel's payload, with `projected` the canonical text of
/// the whole rows of a list the payload holds cut to columns.
fn envelope_of(
    spec: &'static crate::OpSpec,
    payload: Map<String, Value>,
    projected: Option<ListText>,
    echo: Value,
    extent: Value,
) -> Result<Value, OpError> {
    let mut payload = Value::Object(payload);
    if canonicalize_floats(&mut payload).is_err() {
        return Err(OpError::invalid("non-finite float in operator output"));
    }
    let Value::Object(mut envelope) = payload else {
        return Err(OpError::internal("payload is not an object"));
    };
    if !envelope.get("truncated").is_some_and(Value::is_boolean) {
        return Err(OpError::internal(format!(
            "{}: payload lacks 'truncated'",
            spec.name
        )));
    }
    let result_digest = match &projected {
        // The list's cut rows stand in the payload; the digest is the whole rows'.
        Some((list, parts)) => tgms_engine::canon::digest_map_with_text(&envelope, list, parts),
        None => digest_map(&envelope),
    };
    envelope.insert("op".into(), Value::from(spec.name));
    envelope.insert("args_echo".into(), echo);
    envelope.insert("dataset_extent".into(), extent);
    envelope.insert("result_digest".into(), Value::from(result_digest));
    Ok(Value::Object(envelope))
}

/// A kernel's payload, the canonical text of its projected list when it holds one cut
/// ([`Project::Whole`]), and the payload of the list rendered beside its page
/// ([`Project::Beside`]).
type KernelPayload = (Map<String, Value>, Option<ListText>, Option<BesidePayload>);

/// Step 7: the kernel's payload, or a page of the same call's complete result kept by the
/// page cache (`crate::page_cache`). A call with a cursor past its first page is served
/// from the cache when the result is kept; a kernel run that produced a list of several
/// pages keeps it. A first page always runs the kernel (so repeated timings stay kernel
/// timings), and a list the kernel renders lazily is rendered whole only from the second
/// page on.
///
/// With `project`, the list named is cut to the columns as it is rendered
/// ([`Output::project`]), or also rendered so beside the page ([`Output::project_beside`]);
/// no page is kept or served from the cache, and the canonical text of its whole rows comes
/// back with the payload (or with the payload beside).
fn kernel_payload(
    snap: Snapshot<'_>,
    spec: &'static crate::OpSpec,
    args: &Args,
    project: Project<'_>,
) -> Result<KernelPayload, OpError> {
    let paged = matches!(project, Project::No) && spec.args.iter().any(|a| a.name == "cursor");
    let key = paged
        .then(|| crate::page_cache::key(spec.name, args, snap.state_token()))
        .flatten();
    // An invalid cursor takes the kernel's path, which reports it.
    let offset = args.offset().unwrap_or(0);
    if let (Some(k), true) = (&key, offset > 0) {
        if let Some(c) = crate::page_cache::get(k) {
            return Ok((c.page(offset, args.limit()), None, None));
        }
    }
    let mut out = Output::new(spec, args);
    if key.is_some() {
        out.capture_complete(offset > 0);
    }
    match project {
        Project::No => {}
        Project::Whole(list, cols) => out.project(list, cols.to_vec()),
        Project::Beside(list, cols, admit) => out.project_beside(list, cols.to_vec(), admit),
    }
    run_kernel(snap, spec, args, &mut out)?;
    let projected = out.take_projected_text();
    let beside = out.take_beside();
    let (payload, complete) = out.into_complete();
    if let (Some(k), Some(c)) = (key, complete) {
        if !crate::page_cache::contains(&k) {
            crate::page_cache::put(k, c);
        }
    }
    Ok((payload, projected, beside))
}

/// The payload of an envelope (the envelope minus `op`, `args_echo`, `dataset_extent`,
/// `result_digest`).
pub fn payload_of(envelope: &Value) -> Value {
    Value::Object(envelope_without(
        envelope,
        &["op", "args_echo", "dataset_extent", "result_digest"],
    ))
}

/// What an answer naming a whole step quotes: the payload with its `result_digest` (the
/// envelope minus `op`, `args_echo`, `dataset_extent`).
pub fn quoted_result_of(envelope: &Value) -> Value {
    Value::Object(envelope_without(
        envelope,
        &["op", "args_echo", "dataset_extent"],
    ))
}

/// The members of `envelope` not named in `left_out`, copied. Filtered before copying:
/// `args_echo` may hold a `compute` step's whole input table.
fn envelope_without(envelope: &Value, left_out: &[&str]) -> Map<String, Value> {
    envelope
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !left_out.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
