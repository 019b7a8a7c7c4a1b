//! The executor of `plans-and-claims.md` §6: deterministic Kahn-wave order (D-E1), limits,
//! `$ref` substitution with truncation taint (D-E2), the reducer refusal, `E_UPSTREAM`,
//! evidence descriptors, the content-addressed result / args / trace stores and the trace.

use crate::error::{Error, Result};
use crate::plan::{Plan, MAX_STEPS};
use crate::refpath::{parse_ref_value, ref_of, RefPath};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tgms_engine::{canon, Snapshot};
use tgms_operators::json::project_row;
use tgms_operators::ops::compute::selected_rows;
use tgms_operators::pipeline::{
    call_operator, call_operator_beside, call_operator_picked, call_operator_projected,
    call_operator_unpaged, prepare, CallOptions,
};
use tgms_operators::registry::lookup;
use tgms_operators::Ceilings;

/// `MAX_WALL_S`.
pub const MAX_WALL_S: f64 = 60.0;
/// `MAX_TOTAL_ROWS` of the spec (TGMS). The executor's limit is now the configurable
/// [`tgms_operators::Ceilings::max_total_rows`] (default 10,000,000, `docs/plans-changes.md`).
pub const MAX_TOTAL_ROWS: i64 = 50_000;
/// `MAX_REF_ITEMS`.
pub const MAX_REF_ITEMS: usize = 10_000;
/// The reducers refused over tainted input (with the scalar arithmetic of issue 21).
pub const REDUCERS: [&str; 16] = [
    "count", "sum", "min", "max", "mean", "median", "ratio", "diff", "percent", "topk", "abs",
    "add", "sub", "mul", "div", "compare",
];

/// Content-addressed stores of envelopes (`results/<digest>`), resolved args
/// (`args/<digest>`) and traces (`traces/<trace_id>`), on disk inside a directory (the
/// store directory, or a results directory beside it) or in memory. First writer wins;
/// stored values are immutable.
///
/// The in-memory part is a least-recently-used map: unbounded for [`ResultStore::memory`]
/// (one run of a harness), [`IN_DIR_CACHE_ENTRIES`] entries in front of a directory, and the
/// given size for [`ResultStore::memory_bounded`] (a long-running read-only server, where
/// the oldest results are forgotten instead of growing without end). Values are shared
/// (`Arc`), never copied: a plan step's args and envelope can hold a million input rows.
pub struct ResultStore {
    dir: Option<PathBuf>,
    mem: Mutex<lru::LruCache<String, Arc<Value>>>,
}

/// Entries a directory-backed store keeps in memory in front of its files.
pub const IN_DIR_CACHE_ENTRIES: usize = 1_000;

impl Default for ResultStore {
    fn default() -> Self {
        ResultStore {
            dir: None,
            mem: Mutex::new(lru::LruCache::unbounded()),
        }
    }
}

impl ResultStore {
    /// An in-memory store that keeps everything.
    pub fn memory() -> Self {
        ResultStore::default()
    }
    /// An in-memory store that keeps the `entries` most recently used values (at least 1).
    pub fn memory_bounded(entries: usize) -> Self {
        ResultStore {
            dir: None,
            mem: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(entries.max(1)).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
        }
    }
    /// A store inside `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        ResultStore {
            dir: Some(dir.to_path_buf()),
            mem: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(IN_DIR_CACHE_ENTRIES)
                    .unwrap_or(std::num::NonZeroUsize::MIN),
            )),
        }
    }
    /// The directory the store writes to, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
    fn key(kind: &str, id: &str) -> String {
        format!("{kind}/{id}")
    }
    fn valid_id(id: &str) -> bool {
        id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
    }
    fn put(&self, kind: &str, id: &str, v: &Arc<Value>) -> std::io::Result<()> {
        if !Self::valid_id(id) {
            return Ok(());
        }
        let key = Self::key(kind, id);
        {
            let mut mem = self.mem.lock().unwrap_or_else(|e| e.into_inner());
            if mem.get(&key).is_none() {
                mem.put(key, Arc::clone(v));
            }
        }
        if let Some(d) = &self.dir {
            let sub = d.join(kind);
            let path = sub.join(id);
            if !path.exists() {
                std::fs::create_dir_all(&sub)?;
                let tmp = sub.join(format!(".{id}.tmp"));
                std::fs::write(&tmp, canon::to_string(v))?;
                std::fs::rename(&tmp, &path)?;
            }
        }
        Ok(())
    }
    fn get(&self, kind: &str, id: &str) -> Option<Arc<Value>> {
        if !Self::valid_id(id) {
            return None;
        }
        let key = Self::key(kind, id);
        let mut mem = self.mem.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = mem.get(&key) {
            return Some(Arc::clone(v));
        }
        drop(mem);
        let text = std::fs::read_to_string(self.dir.as_ref()?.join(kind).join(id)).ok()?;
        let v = Arc::new(canon::parse(&text).ok()?);
        let mut mem = self.mem.lock().unwrap_or_else(|e| e.into_inner());
        mem.put(key, Arc::clone(&v));
        Some(v)
    }
    /// Stores an envelope under its `result_digest` (first writer wins).
    pub fn put_envelope(&self, env: &Value) -> std::io::Result<()> {
        self.put_envelope_shared(&Arc::new(env.clone()))
    }
    /// [`ResultStore::put_envelope`] without a copy of the envelope.
    pub fn put_envelope_shared(&self, env: &Arc<Value>) -> std::io::Result<()> {
        let d = env["result_digest"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.put("results", &d, env)
    }
    /// The envelope stored under `digest` (a copy; see [`ResultStore::envelope_shared`]).
    pub fn envelope(&self, digest: &str) -> Option<Value> {
        self.envelope_shared(digest).map(Arc::unwrap_or_clone)
    }
    /// The envelope stored under `digest`, shared with the store.
    pub fn envelope_shared(&self, digest: &str) -> Option<Arc<Value>> {
        self.get("results", digest)
    }
    /// Stores resolved args under their digest.
    pub fn put_args(&self, digest: &str, args: &Value) -> std::io::Result<()> {
        self.put("args", digest, &Arc::new(args.clone()))
    }
    /// The resolved args stored under `digest`.
    pub fn args(&self, digest: &str) -> Option<Value> {
        self.get("args", digest).map(Arc::unwrap_or_clone)
    }
    /// Stores a trace under its `trace_id`.
    pub fn put_trace(&self, trace: &Value) -> std::io::Result<()> {
        let id = trace["trace_id"].as_str().unwrap_or_default().to_string();
        self.put("traces", &id, &Arc::new(trace.clone()))
    }
    /// The trace of `trace_id`.
    pub fn trace(&self, trace_id: &str) -> Option<Value> {
        self.get("traces", trace_id).map(Arc::unwrap_or_clone)
    }
}

/// Executor options.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// The options of every operator call the plan makes (the cost ceilings among them).
    pub call: CallOptions,
    /// The reducer refusal of §6.2 step 5; only the mutation harness switches it off.
    pub refuse_tainted_reducers: bool,
    /// A `compute` step reads the complete result of the steps it references (§6.2, revision
    /// 2026-12), up to `call.ceilings.max_reducer_rows` rows, and returns its own rows whole
    /// unless its args set `limit`. `false` is the spec's TGMS behavior (pages only), kept for
    /// the test vectors and the mutation harness.
    pub read_complete_results: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            call: CallOptions::default(),
            refuse_tainted_reducers: true,
            read_complete_results: true,
        }
    }
}

/// What the executor keeps of one step for refs and completeness.
#[derive(Clone, Debug)]
struct Done {
    envelope: Arc<Value>,
    descriptor: Value,
    ref_truncations: bool,
    /// The operator and the resolved args it ran with, to recompute the result unpaged.
    op: String,
    resolved: Arc<Value>,
    resolved_digest: String,
}

impl Done {
    /// This step's complete result, with envelope `env` (the step re-run unpaged with the
    /// same resolved args, or its list rendered beside its page): complete, untainted.
    fn rerun(&self, env: Arc<Value>) -> Done {
        Done {
            descriptor: descriptor(&env, &self.resolved_digest, false, false),
            envelope: env,
            ref_truncations: false,
            op: self.op.clone(),
            resolved: Arc::clone(&self.resolved),
            resolved_digest: self.resolved_digest.clone(),
        }
    }
}

/// The evidence descriptor of an envelope (§3.2).
pub fn descriptor(
    env: &Value,
    resolved_args_digest: &str,
    upstream: bool,
    ref_trunc: bool,
) -> Value {
    let op = env["op"].as_str().unwrap_or_default();
    let mut lists = Map::new();
    if let Some(spec) = lookup(op) {
        for o in &spec.outputs {
            let (Some(l), Some(Value::Array(a))) = (&o.list, env.get(&o.name)) else {
                continue;
            };
            lists.insert(
                o.name.clone(),
                json!({"returned": a.len(), "total": env.get(&l.total_field).cloned().unwrap_or(Value::Null),
                    "set_digest": env.get(&l.digest_field).cloned().unwrap_or(Value::Null)}),
            );
        }
    }
    let truncated = env["truncated"].as_bool().unwrap_or(false);
    let approximate = env["approximate"] == Value::Bool(true);
    let lists_full = lists
        .values()
        .all(|l| l["total"].as_i64() == Some(l["returned"].as_i64().unwrap_or(-1)));
    let complete = !truncated && !upstream && !approximate && !ref_trunc && lists_full;
    let mut d = json!({"op": op, "result_digest": env["result_digest"], "resolved_args_digest": resolved_args_digest,
        "as_of_tt": env["args_echo"].get("as_of_tt").cloned().unwrap_or(Value::Null),
        "truncated": truncated, "upstream_truncated": upstream, "approximate": approximate,
        "lists": lists, "complete": complete});
    // Only approximate steps carry it, so exact steps' descriptors are unchanged.
    if let Some(a) = crate::approx::approximation(env) {
        d["approximation"] = a;
    }
    d
}

/// complete(s, p) of §3.3 from a descriptor (with `ref_truncations` presence) and a path.
/// `path` is `None` for a bare step id.
pub fn path_complete(desc: &Value, has_ref_truncations: bool, path: Option<&RefPath>) -> bool {
    if desc["upstream_truncated"] == Value::Bool(true)
        || desc["approximate"] == Value::Bool(true)
        || has_ref_truncations
    {
        return false;
    }
    match path {
        None => desc["complete"] == Value::Bool(true),
        Some(p) => match desc["lists"].get(p.first_field()) {
            None => true,
            Some(l) => l["total"].as_i64() == l["returned"].as_i64(),
        },
    }
}

/// Complete results for the refs of a `compute` step (§6.2, revision 2026-12): a ref whose
/// path is incomplete only because the producing step returned a page (or a capped list) is
/// evaluated against the producing call re-run unpaged — deterministic and content-addressed,
/// so the complete result is the one the page was cut from.
struct Completer<'a, 's> {
    snap: Snapshot<'s>,
    call: &'a CallOptions,
    budget: i64,
    results: &'a ResultStore,
    /// Complete results already computed in this run, by producing step id (and, for a
    /// list read cut to columns, the columns).
    cache: &'a mut BTreeMap<CompleteKey, Rc<Done>>,
    /// `{"ref", "step_id", "result_digest", "rows_total", "recomputed"}` per ref read whole
    /// (`recomputed`: the producer was re-run for it, not rendered beside its page).
    read: Vec<Value>,
    /// The executor's memory budget for the complete inputs (`max_reducer_bytes`).
    byte_budget: i64,
    /// The first ref whose complete list is over a budget.
    over: Option<Over>,
    /// Whether a later step reads this step's `input` list cut to the same columns: only
    /// then is a list cut to columns kept in `cache` (otherwise its rows move into the args).
    keep_cut: bool,
    /// The `cache` entries their producing step rendered beside its page, not re-ran.
    beside: &'a BTreeSet<CompleteKey>,
}

/// The completer's cache key: the producing step's id, and the columns its list was cut to
/// (`None` for the whole result).
type CompleteKey = (String, Option<Vec<String>>);

/// A ref whose complete list is over the row or the memory budget.
#[derive(Debug)]
struct Over {
    /// The ref as written.
    r: String,
    /// The producing step's id.
    step: String,
    /// The complete list's rows.
    total: i64,
    /// The estimated peak bytes of the reducer over it, when over the memory budget.
    peak_bytes: Option<i64>,
}

/// The estimated peak bytes of a reducer over the complete list whose page is `page`
/// ([`crate::memory::reducer_peak_bytes`]), when over `byte_budget`.
fn peak_over(
    page: &[Value],
    total: i64,
    columns: Option<&[String]>,
    streamed: bool,
    byte_budget: i64,
) -> Option<i64> {
    crate::memory::reducer_peak_bytes(page, total, columns, streamed)
        .map(|b| i64::try_from(b).unwrap_or(i64::MAX))
        .filter(|&b| b > byte_budget)
}

/// The list of step `id`'s result and the columns that the first later step reading it
/// in full reads ([`input_columns`]), when that step reads the list itself (`sN.rows`, no
/// index, no deeper path) cut to them: the producer renders that list beside its page
/// ([`call_operator_beside`]), so the reader does not run it again.
fn read_beside(plan: &Plan, later: &[usize], id: &str) -> Option<(String, Vec<String>)> {
    let (reader, rp) = later.iter().find_map(|&j| {
        let step = &plan.steps[j];
        let rp = parse_ref_value(ref_of(step.args.get("input")?)?).ok()?;
        (step.op == "compute" && rp.step == id).then_some((step, rp))
    })?;
    let cols = input_columns(&reader.op, &reader.args)?;
    (rp.segments.len() == 1 && rp.segments[0].index.is_none())
        .then(|| (rp.first_field().to_string(), cols))
}

impl Completer<'_, '_> {
    /// The complete result to evaluate `rp` against, or `None` when the page has to do (the
    /// step is incomplete for another reason than paging, or the list is over the budget).
    /// `columns`: the columns the reducer reads of each row, when not all
    /// ([`input_columns`]).
    fn complete_of(
        &mut self,
        rp: &RefPath,
        d: &Done,
        columns: Option<&[String]>,
    ) -> Result<Option<Rc<Done>>> {
        let desc = &d.descriptor;
        if desc["upstream_truncated"] == Value::Bool(true)
            || desc["approximate"] == Value::Bool(true)
            || d.ref_truncations
        {
            return Ok(None);
        }
        let Some(total) = desc["lists"][rp.first_field()]["total"].as_i64() else {
            return Ok(None);
        };
        // A ref naming the list itself, read for some columns: the producer renders the
        // list cut to them, chunk by chunk, and its whole rows are never held.
        let streamed = columns.filter(|_| {
            rp.segments.len() == 1
                && rp.segments[0].index.is_none()
                && !self.cache.contains_key(&(rp.step.clone(), None))
        });
        let peak_bytes = d.envelope[rp.first_field()]
            .as_array()
            .and_then(|page| peak_over(page, total, columns, streamed.is_some(), self.byte_budget));
        if total > self.budget || peak_bytes.is_some() {
            self.over.get_or_insert_with(|| Over {
                r: rp.raw.clone(),
                step: rp.step.clone(),
                total,
                peak_bytes: peak_bytes.filter(|_| total <= self.budget),
            });
            return Ok(None);
        }
        let cached = (rp.step.clone(), streamed.map(<[String]>::to_vec));
        let t0 = Instant::now();
        let fresh = !self.cache.contains_key(&cached);
        let recomputed = !self.beside.contains(&cached);
        // A list cut to columns that no later step reads so is taken out of the cache, so
        // its rows can move into the args.
        let hit = if streamed.is_some() && !self.keep_cut {
            self.cache.remove(&cached)
        } else {
            self.cache.get(&cached).cloned()
        };
        let full = match (hit, streamed) {
            (Some(f), _) => f,
            (None, Some(cols)) => {
                let env = call_operator_projected(
                    self.snap,
                    &d.op,
                    &d.resolved,
                    rp.first_field(),
                    cols,
                    self.call,
                )?;
                // Not stored: the envelope holds the list cut to the columns, not the
                // complete result its digest names.
                let f = Rc::new(d.rerun(Arc::new(env)));
                if self.keep_cut {
                    self.cache.insert(cached, f.clone());
                }
                f
            }
            (None, None) => {
                let env = Arc::new(call_operator_unpaged(
                    self.snap,
                    &d.op,
                    &d.resolved,
                    self.call,
                )?);
                let _ = self.results.put_envelope_shared(&env);
                let f = Rc::new(d.rerun(env));
                self.cache.insert(cached, f.clone());
                f
            }
        };
        // Still incomplete unpaged (an operator's own cap): the page rules apply.
        if !path_complete(&full.descriptor, false, Some(rp)) {
            return Ok(None);
        }
        let mut read = json!({"ref": rp.raw, "step_id": rp.step,
            "result_digest": full.envelope["result_digest"], "rows_total": total,
            "recomputed": recomputed});
        // The producer's re-run, when this read made it (`trace_id` leaves every `wall_ms`
        // out).
        if fresh {
            read["wall_ms"] = wall_ms(t0);
        }
        if let Some(cols) = columns {
            read["columns"] = json!(cols);
        }
        self.read.push(read);
        Ok(Some(full))
    }
}

struct Subst<'a, 's> {
    done: &'a BTreeMap<String, Done>,
    truncs: Vec<Value>,
    /// Present for `compute` steps when complete results are read.
    complete: Option<Completer<'a, 's>>,
    /// The longest array a ref may substitute (`MAX_REF_ITEMS`, or the row budget for a
    /// `compute` step reading complete results).
    item_cap: usize,
}

impl Subst<'_, '_> {
    /// The step's args with every `$ref` substituted; the `input` list of a reducer that
    /// reads only some columns ([`input_columns`]) keeps only those columns of its rows.
    fn walk_args(&mut self, args: &Value, columns: Option<&[String]>) -> Result<Value> {
        match (args, columns) {
            (Value::Object(m), Some(cols)) => m
                .iter()
                .map(|(k, x)| {
                    let v = match ref_of(x) {
                        Some(r) if k == "input" => self.walk_ref(r, Some(cols))?,
                        _ => self.walk(x)?,
                    };
                    Ok((k.clone(), v))
                })
                .collect::<Result<Map<_, _>>>()
                .map(Value::Object),
            _ => self.walk(args),
        }
    }

    fn walk(&mut self, v: &Value) -> Result<Value> {
        if let Some(r) = ref_of(v) {
            return self.walk_ref(r, None);
        }
        Ok(match v {
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| self.walk(x)).collect::<Result<_, _>>()?)
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| Ok((k.clone(), self.walk(x)?)))
                    .collect::<Result<_>>()?,
            ),
            other => other.clone(),
        })
    }

    /// The value of the ref `r`: a copy, or with `columns` the rows of the list it names
    /// cut to those columns.
    fn walk_ref(&mut self, r: &Value, columns: Option<&[String]>) -> Result<Value> {
        let rp = parse_ref_value(r)?;
        let page = self.done.get(&rp.step).ok_or_else(|| Error::RefEval {
            raw: rp.raw.clone(),
            reason: "step output unavailable".into(),
        })?;
        let full = match (
            path_complete(&page.descriptor, page.ref_truncations, Some(&rp)),
            self.complete.as_mut(),
        ) {
            (false, Some(c)) => c.complete_of(&rp, page, columns)?,
            _ => None,
        };
        // A complete list cut to the columns that no later step reads (the completer did not
        // keep it): its cut rows move into the args instead of being copied.
        let field = rp.first_field();
        let full = match full {
            Some(f)
                if columns.is_some()
                    && rp.segments.len() == 1
                    && rp.segments[0].index.is_none()
                    && f.envelope.get(field).is_some_and(Value::is_array) =>
            {
                match Rc::try_unwrap(f) {
                    Ok(done) => {
                        let list = match Arc::try_unwrap(done.envelope) {
                            Ok(mut env) => env.get_mut(field).map(Value::take),
                            Err(shared) => shared.get(field).cloned(),
                        };
                        let list = list.unwrap_or_default();
                        return Ok(self.capped(&rp, list));
                    }
                    Err(f) => Some(f),
                }
            }
            other => other,
        };
        let d = full.as_deref().unwrap_or(page);
        let val = match columns {
            None => rp.eval(&d.envelope)?,
            Some(cols) => rp.eval_with(&d.envelope, &|v: &Value| project_row(v, cols))?,
        };
        if !path_complete(&d.descriptor, d.ref_truncations, Some(&rp)) {
            let l = d.descriptor["lists"].get(rp.first_field());
            let pick = |k: &str| l.map(|l| l[k].clone()).unwrap_or(Value::Null);
            self.truncs.push(
                json!({"ref": rp.raw, "from": pick("total"), "to": pick("returned"),
                "reason": "incomplete_source"}),
            );
        }
        Ok(self.capped(&rp, val))
    }

    /// `val` with an array cut to the longest a ref may substitute (`item_cap`), the cut
    /// recorded.
    fn capped(&mut self, rp: &RefPath, mut val: Value) -> Value {
        if let Value::Array(a) = &mut val {
            if a.len() > self.item_cap {
                self.truncs
                    .push(json!({"ref": rp.raw, "from": a.len(), "to": self.item_cap,
                    "reason": "max_ref_items"}));
                a.truncate(self.item_cap);
            }
        }
        val
    }
}

/// The reducers that read nothing of an input row but `field` and `group_by`: their
/// result is the same over rows cut to those columns.
const COLUMN_REDUCERS: [&str; 6] = ["count", "sum", "min", "max", "mean", "median"];

/// The reducers that choose rows by their `field`, `field2` and `group_by` columns and
/// return the chosen rows whole: `topk` with `k` and `filter` with `field`. The executor
/// reads their input list cut to those columns, finds the rows they can return
/// ([`selected_rows`]) and reads only those rows whole ([`select_input`]).
const SELECTING_REDUCERS: [&str; 2] = ["topk", "filter"];

/// The set operations, which read nothing of an `input` row but `field` when it is given
/// (their members are then that column's values).
const SET_OPERATIONS: [&str; 3] = ["intersect", "difference", "union"];

/// The columns a `compute` step reads of its `input` rows, when it reads only named
/// columns: a [`COLUMN_REDUCERS`] function with `field` and `group_by` literal (or absent),
/// a [`SET_OPERATIONS`] function with `field` literal, or a [`SELECTING_REDUCERS`] function
/// (`topk` without `pct`) with `field` (and `field2`, `group_by`) literal over a whole list
/// (`sN.rows`).
/// The executor then copies only these columns of a referenced list into the step's
/// resolved args (the reducer's result is the same; its input, the args digest and the
/// memory it takes are those of the columns); a selecting reducer's rows are then replaced
/// by the whole rows it can return. `None` when every column may matter.
fn input_columns(op: &str, args: &Value) -> Option<Vec<String>> {
    let f = args.get("fn").and_then(Value::as_str)?;
    let r = ref_of(&args["input"]);
    if op != "compute" || r.is_none() {
        return None;
    }
    let keys: &[&str] = if COLUMN_REDUCERS.contains(&f) {
        &["field", "group_by"]
    } else if SET_OPERATIONS.contains(&f) && args["field"].is_string() {
        &["field"]
    } else if selects(f, args) {
        let rp = r.and_then(|r| parse_ref_value(r).ok())?;
        if rp.segments.len() != 1 || rp.segments[0].index.is_some() || args["field"].is_null() {
            return None;
        }
        &["field", "field2", "group_by"]
    } else {
        return None;
    };
    let mut cols = Vec::new();
    for k in keys {
        match args.get(*k) {
            None | Some(Value::Null) => {}
            Some(Value::String(c)) => {
                if !cols.contains(c) {
                    cols.push(c.clone());
                }
            }
            // A ref or a malformed value: the whole rows, and the call reports it.
            Some(_) => return None,
        }
    }
    Some(cols)
}

/// Whether `compute` `f` with `args` is a selecting reducer ([`SELECTING_REDUCERS`]): `topk`
/// cuts by a count that depends on the group's size with `pct`.
fn selects(f: &str, args: &Value) -> bool {
    SELECTING_REDUCERS.contains(&f) && (f != "topk" || args.get("pct").is_none_or(Value::is_null))
}

/// A selecting reducer's input read whole where it matters: `resolved["input"]` holds the
/// list that the step's `input` ref names, cut to the reducer's columns ([`input_columns`]);
/// it is replaced by the whole rows at the positions [`selected_rows`] finds in it, read
/// from the producing step's page when the cut rows came from it (no `read_whole` entry for
/// the ref) or else from the complete list ([`call_operator_picked`]), and the ref's
/// `read_whole` entry gains `"selected"`, the rows read whole. When the args fail the
/// operator's own checks the input stays cut (the call reports them). The error is the
/// step's: the reducer's own error over these columns, or the memory budget's refusal of
/// the rows to read whole.
fn select_input(
    resolved: &mut Value,
    input_ref: &Value,
    done: &BTreeMap<String, Done>,
    read_whole: &mut [Value],
    snap: Snapshot<'_>,
    opts: &CallOptions,
) -> std::result::Result<(), Value> {
    let Some(rp) = ref_of(input_ref).and_then(|r| parse_ref_value(r).ok()) else {
        return Ok(());
    };
    let (Some(producer), Value::Object(args)) = (done.get(&rp.step), &*resolved) else {
        return Ok(());
    };
    let Some(Value::Array(cut)) = args.get("input") else {
        return Ok(());
    };
    // The call's checks of every argument but the rows.
    let mut probe: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| *k != "input")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    probe.insert("input".into(), json!([]));
    let Ok((_, checked)) = prepare("compute", &Value::Object(probe)) else {
        return Ok(());
    };
    let at = match selected_rows(&checked, cut) {
        Ok(Some(at)) => at,
        Ok(None) => (0..cut.len()).collect(),
        Err(e) => return Err(e.payload()),
    };
    let n = at.len();
    let field = rp.first_field();
    let page: &[Value] = producer.envelope[field]
        .as_array()
        .map_or(&[], Vec::as_slice);
    let ceilings = &opts.ceilings;
    let n_rows = i64::try_from(n).unwrap_or(i64::MAX);
    if let Some(peak_bytes) = peak_over(page, n_rows, None, false, ceilings.max_reducer_bytes) {
        let fname = checked
            .0
            .get("fn")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let o = Over {
            r: rp.raw.clone(),
            step: rp.step.clone(),
            total: n_rows,
            peak_bytes: Some(peak_bytes),
        };
        return Err(over_budget(fname, &o, ceilings, Some(&producer.resolved)).payload());
    }
    let read = read_whole.iter_mut().find(|r| r["ref"] == rp.raw);
    let rows = match read {
        None => at.iter().filter_map(|&i| page.get(i).cloned()).collect(),
        Some(read) => {
            read["selected"] = json!(n);
            call_operator_picked(snap, &producer.op, &producer.resolved, field, at, opts)
                .map_err(|e| e.payload())?
        }
    };
    resolved["input"] = Value::Array(rows);
    Ok(())
}

/// The result of an execution: the trace and the kept envelopes by step id.
pub struct Execution {
    /// The trace JSON (`plan_id`, `plan_digest`, `store`, `steps`, `answer`, `ok`,
    /// `wall_ms`, `trace_id`), also stored in the result store under its `trace_id`.
    pub trace: Value,
    /// Shared with the result store, not copied.
    pub envelopes: BTreeMap<String, Arc<Value>>,
}

fn wall_ms(t: Instant) -> Value {
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    tgms_operators::json::float((ms * 1000.0).round() / 1000.0)
}

/// `trace_id` = digest(trace without `trace_id` and every `wall_ms`).
pub fn trace_id(trace: &Value) -> String {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| *k != "wall_ms" && *k != "trace_id")
                    .map(|(k, x)| (k.clone(), strip(x)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    canon::digest(&strip(trace))
}

/// Executes `plan` on one snapshot. [`Error::TooManySteps`] (`E_LIMIT`) without a trace
/// for plans over 12 steps; every other failure is in the trace's step records.
pub fn execute(
    plan: &Plan,
    snap: Snapshot<'_>,
    results: &ResultStore,
    opts: &ExecOptions,
) -> Result<Execution> {
    if plan.steps.len() > MAX_STEPS {
        return Err(Error::TooManySteps);
    }
    let start = Instant::now();
    let (order, stuck) = plan.run_order();
    let mut done: BTreeMap<String, Done> = BTreeMap::new();
    let mut complete_cache: BTreeMap<CompleteKey, Rc<Done>> = BTreeMap::new();
    let mut beside_keys: BTreeSet<CompleteKey> = BTreeSet::new();
    let ceilings = &opts.call.ceilings;
    let mut status: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut records = Vec::new();
    let mut rows_total: i64 = 0;
    for (pos, &i) in order.iter().chain(stuck.iter()).enumerate() {
        let step = &plan.steps[i];
        let mut rec = Map::new();
        rec.insert("step_id".into(), json!(step.id));
        rec.insert("op".into(), json!(step.op));
        let elapsed = start.elapsed().as_secs_f64();
        if elapsed > MAX_WALL_S {
            let error = Error::WallClock { elapsed_s: elapsed };
            rec.insert("error".into(), error.payload());
            finish_rec(&mut status, &mut records, &step.id, rec, "skipped");
            continue;
        }
        if stuck.contains(&i)
            || step
                .depends_on
                .iter()
                .any(|d| status.get(d).is_none_or(|s| *s != "ok"))
        {
            rec.insert("error".into(), Error::Upstream.payload());
            finish_rec(&mut status, &mut records, &step.id, rec, "skipped");
            continue;
        }
        let t0 = Instant::now();
        let whole = opts.read_complete_results && step.op == "compute";
        let columns = whole.then(|| input_columns(&step.op, &step.args)).flatten();
        // A later step reading the same list cut to the same columns.
        let keep_cut = columns.as_ref().is_some_and(|cols| {
            order.iter().skip(pos + 1).any(|&j| {
                let later = &plan.steps[j];
                later.op == "compute"
                    && later.args.get("input") == step.args.get("input")
                    && input_columns(&later.op, &later.args).as_ref() == Some(cols)
            })
        });
        let mut sub = Subst {
            done: &done,
            truncs: Vec::new(),
            complete: whole.then(|| Completer {
                snap,
                call: &opts.call,
                budget: ceilings.max_reducer_rows,
                byte_budget: ceilings.max_reducer_bytes,
                results,
                cache: &mut complete_cache,
                read: Vec::new(),
                over: None,
                keep_cut,
                beside: &beside_keys,
            }),
            item_cap: if whole {
                usize::try_from(ceilings.max_reducer_rows).unwrap_or(usize::MAX)
            } else {
                MAX_REF_ITEMS
            },
        };
        let walked = sub.walk_args(&step.args, columns.as_deref());
        let truncs = sub.truncs;
        let (mut read_whole, over) = sub.complete.map(|c| (c.read, c.over)).unwrap_or_default();
        // $refs substituted, then time strings resolved to µs (docs/times.md): the resolved
        // args, their digest and the call are those of the integer plan.
        let mut resolved = match walked
            .and_then(|v| tgms_operators::pipeline::resolve_times(&step.op, v).map_err(Error::from))
        {
            Ok(v) => v,
            Err(e) => {
                rec.insert("error".into(), e.payload());
                finish_rec(&mut status, &mut records, &step.id, rec, "failed");
                continue;
            }
        };
        let tainted = !truncs.is_empty();
        let fname = resolved
            .get("fn")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // A selecting reducer reads whole only the rows it can return (`select_input`);
        // one refused below over tainted input is left as it is.
        let refused = tainted && opts.refuse_tainted_reducers && REDUCERS.contains(&fname.as_str());
        let failed_before_call = (columns.is_some() && selects(&fname, &step.args) && !refused)
            .then(|| {
                let input = &step.args["input"];
                select_input(
                    &mut resolved,
                    input,
                    &done,
                    &mut read_whole,
                    snap,
                    &opts.call,
                )
                .err()
            })
            .flatten();
        let rad = canon::digest(&resolved);
        rec.insert("resolved_args_sha".into(), json!(rad[..16]));
        rec.insert("resolved_args_digest".into(), json!(rad));
        if tainted {
            rec.insert("ref_truncations".into(), Value::Array(truncs.clone()));
        }
        if !read_whole.is_empty() {
            rec.insert("complete_inputs".into(), Value::Array(read_whole));
        }
        let fname = fname.as_str();
        if refused && step.op == "compute" {
            rec.insert("upstream_truncated".into(), json!(true));
            // A complete list longer than the reducer budget is cut like any ref array; it
            // is refused as over the budget, like a recomputed one, not as a page.
            let cut = || {
                truncs.iter().find_map(|t| {
                    let r = t.get("ref")?.as_str()?;
                    let total = t.get("from")?.as_i64()?;
                    (whole && t.get("reason")? == "max_ref_items").then(|| Over {
                        r: r.to_string(),
                        step: r.split('.').next().unwrap_or_default().to_string(),
                        total,
                        peak_bytes: None,
                    })
                })
            };
            let error = match over.or_else(cut) {
                Some(o) => {
                    let producer = done.get(&o.step).map(|d| &*d.resolved);
                    over_budget(fname, &o, ceilings, producer)
                }
                None => Error::TaintedReducer {
                    reducer: fname.to_string(),
                },
            };
            rec.insert("error".into(), error.payload());
            rec.insert("wall_ms".into(), wall_ms(t0));
            finish_rec(&mut status, &mut records, &step.id, rec, "failed");
            continue;
        }
        let resolved = Arc::new(resolved);
        let _ = results.put("args", &rad, &resolved);
        if let Some(error) = failed_before_call {
            rec.insert("error".into(), error);
            rec.insert("wall_ms".into(), wall_ms(t0));
            finish_rec(&mut status, &mut records, &step.id, rec, "failed");
            continue;
        }
        // A plan's row-returning compute step returns its complete result unless its args
        // set `limit` (issue 21 item 7). Otherwise, when a later step reads this step's list
        // for its columns, the list is rendered so beside the page (`read_beside`).
        let beside = (opts.read_complete_results && !tainted)
            .then(|| read_beside(plan, order.get(pos + 1..).unwrap_or_default(), &step.id))
            .flatten();
        let (called, cut) = match beside {
            _ if whole && step.args.get("limit").is_none() => (
                call_operator_unpaged(snap, &step.op, &resolved, &opts.call),
                None,
            ),
            Some((list, cols)) => {
                // The completer's budget test, on the total and the page.
                let (budget, byte_budget) = (ceilings.max_reducer_rows, ceilings.max_reducer_bytes);
                let c = cols.clone();
                let admit = Box::new(move |total: usize, page: &[Value]| {
                    let total = i64::try_from(total).unwrap_or(i64::MAX);
                    total <= budget && peak_over(page, total, Some(&c), true, byte_budget).is_none()
                });
                match call_operator_beside(
                    snap, &step.op, &resolved, &list, &cols, admit, &opts.call,
                ) {
                    Ok((env, cut)) => (Ok(env), cut.map(|c| (cols, c))),
                    Err(e) => (Err(e), None),
                }
            }
            None => (call_operator(snap, &step.op, &resolved, &opts.call), None),
        };
        rec.insert("wall_ms".into(), wall_ms(t0));
        let env = match called {
            Err(e) => {
                rec.insert("error".into(), e.payload());
                finish_rec(&mut status, &mut records, &step.id, rec, "failed");
                continue;
            }
            Ok(env) => env,
        };
        let desc = descriptor(&env, &rad, tainted, tainted);
        let rows_returned = env
            .get("rows_total")
            .and_then(Value::as_i64)
            .or_else(|| {
                env.get("rows")
                    .and_then(Value::as_array)
                    .map(|a| a.len() as i64)
            })
            .unwrap_or(0);
        rec.insert("result_digest".into(), env["result_digest"].clone());
        rec.insert("rows_returned".into(), json!(rows_returned));
        rec.insert("truncated".into(), env["truncated"].clone());
        rec.insert("upstream_truncated".into(), json!(tainted));
        rec.insert("evidence".into(), desc.clone());
        let env = Arc::new(env);
        if let Err(e) = results.put_envelope_shared(&env) {
            rec.insert("error".into(), Error::Store(e).payload());
        }
        let d = Done {
            envelope: env,
            descriptor: desc,
            ref_truncations: tainted,
            op: step.op.clone(),
            resolved,
            resolved_digest: rad,
        };
        if let Some((cols, cut)) = cut {
            let key = (step.id.clone(), Some(cols));
            complete_cache.insert(key.clone(), Rc::new(d.rerun(Arc::new(cut))));
            beside_keys.insert(key);
        }
        done.insert(step.id.clone(), d);
        rows_total = rows_total.saturating_add(rows_returned);
        if rows_total > ceilings.max_total_rows {
            let error = Error::TotalRows {
                rows: rows_total,
                max_total_rows: ceilings.max_total_rows,
            };
            rec.insert("error".into(), error.payload());
            finish_rec(&mut status, &mut records, &step.id, rec, "failed");
        } else if rec.contains_key("error") {
            finish_rec(&mut status, &mut records, &step.id, rec, "failed");
        } else {
            finish_rec(&mut status, &mut records, &step.id, rec, "ok");
        }
    }
    // Answer (§4.5).
    let (answer, answer_error, answer_complete) = resolve_answer(plan, &done);
    let stats = snap.stats();
    let ok = answer_error.is_none() && records.iter().all(|r| r["status"] == "ok");
    let mut trace = json!({
        "plan_id": plan.plan_id, "plan_digest": canon::digest(&plan.raw),
        "store": {"last_tt": stats.last_tt, "n_batches": stats.n_batches,
            "extent": {"vt_min": stats.vt_min, "vt_max": stats.vt_max}},
        "steps": records, "answer": answer, "answer_error": answer_error,
        "answer_complete": answer_complete, "ok": ok,
    });
    // The interval of an approximate answer, for reporters (absent for exact answers, so
    // their traces are unchanged).
    if let Some(iv) = answer_interval(plan, &done) {
        trace["answer_interval"] = iv;
    }
    trace["wall_ms"] = wall_ms(start);
    trace["trace_id"] = json!(trace_id(&trace));
    let _ = results.put_trace(&trace);
    let envelopes = done.into_iter().map(|(k, d)| (k, d.envelope)).collect();
    Ok(Execution { trace, envelopes })
}

/// The refusal of a reducer whose input's complete result is over the row budget or the
/// memory budget; its repair narrows the producing step's literal window
/// ([`Error::ReducerRows`], [`Error::ReducerBytes`]).
fn over_budget(fname: &str, o: &Over, ceilings: &Ceilings, producer: Option<&Value>) -> Error {
    let window = producer.and_then(|a| a.get("window"));
    let at = |k: &str| window.and_then(|w| w.get(k)).and_then(Value::as_i64);
    let window = at("t_a").zip(at("t_b"));
    let (reducer, input, rows_total) = (fname.to_string(), o.r.clone(), o.total);
    match o.peak_bytes {
        None => Error::ReducerRows {
            reducer,
            input,
            rows_total,
            max_reducer_rows: ceilings.max_reducer_rows,
            window,
        },
        Some(peak_bytes) => Error::ReducerBytes {
            reducer,
            input,
            rows_total,
            peak_bytes,
            max_reducer_bytes: ceilings.max_reducer_bytes,
            window,
        },
    }
}

fn finish_rec(
    status: &mut BTreeMap<String, &'static str>,
    records: &mut Vec<Value>,
    id: &str,
    mut rec: Map<String, Value>,
    st: &'static str,
) {
    status.insert(id.to_string(), st);
    rec.insert("status".into(), json!(st));
    records.push(Value::Object(rec));
}

fn resolve_answer(plan: &Plan, done: &BTreeMap<String, Done>) -> (Value, Option<String>, bool) {
    let Some(src) = plan.answer_source() else {
        return (
            Value::Null,
            Some(format!(
                "answer_spec.from '{}' references no step",
                plan.answer_from
            )),
            false,
        );
    };
    let Some(d) = done.get(&src.id) else {
        return (
            Value::Null,
            Some(format!("answer source step {} did not complete", src.id)),
            false,
        );
    };
    if plan.answer_from == src.id {
        let quoted = tgms_operators::pipeline::quoted_result_of(&d.envelope);
        let c = path_complete(&d.descriptor, d.ref_truncations, None);
        return (quoted, None, c);
    }
    match RefPath::parse(&plan.answer_from).and_then(|rp| Ok((rp.eval(&d.envelope)?, rp))) {
        Ok((v, rp)) => {
            let c = path_complete(&d.descriptor, d.ref_truncations, Some(&rp));
            (v, None, c)
        }
        Err(e) => (Value::Null, Some(e.to_string()), false),
    }
}

/// `{"estimate", "ci_low", "ci_high", "confidence", "path"}` when the answer names an
/// estimate of an approximate step (`docs/approximate.md`).
fn answer_interval(plan: &Plan, done: &BTreeMap<String, Done>) -> Option<Value> {
    let src = plan.answer_source()?;
    let d = done.get(&src.id)?;
    let rp = RefPath::parse(&plan.answer_from).ok()?;
    crate::approx::interval_of(&d.envelope, &rp).map(|iv| iv.to_json(&src.id))
}

/// The step record of `step_id` in a trace.
pub fn record<'t>(trace: &'t Value, step_id: &str) -> Option<&'t Value> {
    trace["steps"]
        .as_array()?
        .iter()
        .find(|r| r["step_id"] == step_id)
}

#[cfg(test)]
mod result_store_tests {
    use super::*;

    fn env(i: usize) -> Value {
        json!({"result_digest": format!("{i:064x}"), "n": i})
    }

    #[test]
    fn a_bounded_memory_store_forgets_the_least_recently_used() {
        let rs = ResultStore::memory_bounded(3);
        for i in 0..3 {
            rs.put_envelope(&env(i)).unwrap();
        }
        // Touch 0, then add 3: 1 is the least recently used and goes.
        assert_eq!(rs.envelope(&format!("{:064x}", 0)), Some(env(0)));
        rs.put_envelope(&env(3)).unwrap();
        assert_eq!(rs.envelope(&format!("{:064x}", 1)), None);
        for i in [0, 2, 3] {
            assert_eq!(rs.envelope(&format!("{i:064x}")), Some(env(i)));
        }
        // The unbounded store keeps everything.
        let all = ResultStore::memory();
        for i in 0..2000 {
            all.put_envelope(&env(i)).unwrap();
        }
        assert_eq!(all.envelope(&format!("{:064x}", 0)), Some(env(0)));
    }
}
