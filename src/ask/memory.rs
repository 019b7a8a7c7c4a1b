//! Evolution memory with quarantine (`agent-surface.md` §8): window-digest notes computed by
//! operators, retrieved for the planner (never citable as evidence: they never become trace
//! steps), and marked stale by every write whose touched valid-time range overlaps their
//! window. Notes live in `memory/notes.json` inside the store directory, rewritten
//! atomically. A read-only store serves retrieval but never builds, refreshes or marks.
//!
//! Quarantine is applied from the write-ahead log rather than from a hook in the writer:
//! the file remembers the last transaction time it has seen (`checked_tt`), and every
//! reader first folds the log's batches after it into the stale marks. So a write through
//! any path (CLI, library, replay) quarantines, and a reader never trusts a note that a
//! later write touched, even when it may not persist the mark (read-only stores mark in
//! memory only). Batches that failed are folded too: over-marking costs a refresh, never a
//! wrong note.

use super::AskError;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tgms_engine::op::EventEnd;
use tgms_engine::{canon, Op, Snapshot, Store, OPEN_END};
use tgms_operators::pipeline::{call_operator, CallOptions};

/// The file format tag.
pub const FORMAT: &str = "tgms-memory-1";
/// The default window width of `build`, in µs (7 days).
pub const DEFAULT_STRIDE_US: i64 = 7 * 86_400_000_000;
/// Notes retrieved per question.
pub const RETRIEVE_K: usize = 3;

/// The memory file of a store directory.
pub fn path(store_dir: &Path) -> PathBuf {
    store_dir.join("memory").join("notes.json")
}

/// The memory state: notes and the last transaction time folded into the stale marks.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// The last transaction time (µs) whose batches are folded into the notes' stale marks;
    /// `None` before any.
    pub checked_tt: Option<i64>,
    /// The notes, as JSON objects in file order.
    pub notes: Vec<Value>,
}

impl Memory {
    fn to_json(&self) -> Value {
        json!({"format": FORMAT, "checked_tt": self.checked_tt, "notes": self.notes})
    }
}

/// Reads the memory file; `None` when there is none.
pub fn load(store_dir: &Path) -> Result<Option<Memory>, AskError> {
    let p = path(store_dir);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AskError::Io { path: p, source: e }),
    };
    let bad = |m: String| AskError::Memory {
        path: p.clone(),
        message: m,
    };
    let v = canon::parse(&text).map_err(|e| bad(e.to_string()))?;
    if v["format"] != FORMAT || !v["notes"].is_array() {
        return Err(bad(format!("expected format {FORMAT} with a notes array")));
    }
    Ok(Some(Memory {
        checked_tt: v["checked_tt"].as_i64(),
        notes: v["notes"].as_array().cloned().unwrap_or_default(),
    }))
}

fn save(store: &Store, m: &Memory) -> Result<(), AskError> {
    let p = path(store.dir());
    let io = |source| AskError::Io {
        path: p.clone(),
        source,
    };
    let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(io)?;
    let tmp = dir.join(".notes.json.tmp");
    std::fs::write(&tmp, canon::to_string(&m.to_json())).map_err(io)?;
    std::fs::rename(&tmp, &p).map_err(io)
}

fn writable(store: &Store) -> Result<(), AskError> {
    if store.is_read_only() {
        return Err(AskError::ReadOnly {
            path: store.dir().to_path_buf(),
            what: "build or refresh memory notes".into(),
        });
    }
    Ok(())
}

/// The valid-time ranges `[start, end)` one op touches (§8.3). An op that did not
/// normalize touches everything.
pub fn touched_ranges(op: &Op) -> Vec<(i64, i64)> {
    match op {
        Op::AssertNode(a) => vec![(a.vt_s, a.vt_e)],
        // The implicit endpoint nodes (D-W3) start at vt_s: [vt_s, vt_s + 1) lies inside.
        Op::AssertEdge(a) => vec![(a.vt_s, a.vt_e.max(a.vt_s + 1))],
        Op::Correct(c) => vec![(c.vt_s, c.vt_e)],
        Op::Retract(r) => vec![(r.t, OPEN_END)],
        Op::IngestEvents(i) => {
            let lo = i.events.iter().map(|e| e.vt_s).min();
            let hi = i
                .events
                .iter()
                .map(|e| match e.vt_e {
                    EventEnd::At(t) => t.max(e.vt_s + 1),
                    EventEnd::Null => OPEN_END,
                    EventEnd::Absent => e.vt_s + 1,
                })
                .max();
            match (lo, hi) {
                (Some(a), Some(b)) => vec![(a, b)],
                _ => Vec::new(),
            }
        }
        Op::Raw(_) => vec![(i64::MIN, OPEN_END)],
    }
}

/// Marks stale every non-stale note whose window overlaps `[r_start, r_end)`; returns how
/// many it marked.
pub fn quarantine(notes: &mut [Value], r_start: i64, r_end: i64) -> usize {
    let mut n = 0;
    for note in notes.iter_mut() {
        let (ta, tb) = (
            note["window_ta"].as_i64().unwrap_or(0),
            note["window_tb"].as_i64().unwrap_or(0),
        );
        if note["stale"] != Value::Bool(true) && ta < r_end && tb > r_start {
            note["stale"] = json!(true);
            n += 1;
        }
    }
    n
}

/// Loads the memory and folds in every logged batch after `checked_tt`. Persists the marks
/// on a writable store; on a read-only one the marks stay in the returned value only.
pub fn sync(store: &Store) -> Result<Option<Memory>, AskError> {
    let Some(mut m) = load(store.dir())? else {
        return Ok(None);
    };
    let last = store.last_tt();
    if last.is_some() && last > m.checked_tt {
        let after = m.checked_tt.unwrap_or(i64::MIN);
        tgms_engine::store::read_log(store.dir(), |b| {
            if b.tt > after {
                for op in &b.ops {
                    for (a, e) in touched_ranges(op) {
                        quarantine(&mut m.notes, a, e);
                    }
                }
            }
            Ok(())
        })?;
        m.checked_tt = last;
        if !store.is_read_only() {
            save(store, &m)?;
        }
    }
    Ok(Some(m))
}

/// The first row's `value` of a one-bucket metric series (0 if no row).
fn one_bucket(snap: Snapshot<'_>, metric: &str, ta: i64, tb: i64) -> Result<Value, AskError> {
    let env = call(
        snap,
        "graph_metric_timeseries",
        &json!({"metric": metric, "window": {"t_a": ta, "t_b": tb}, "stride": tb - ta}),
    )?;
    Ok(match &env["rows"][0]["value"] {
        Value::Null => json!(0),
        v => v.clone(),
    })
}

fn call(snap: Snapshot<'_>, op: &str, args: &Value) -> Result<Value, AskError> {
    call_operator(
        snap,
        op,
        args,
        &CallOptions {
            skip_cost: true,
            ..CallOptions::default()
        },
    )
    .map_err(|e| AskError::Operator {
        op: op.into(),
        payload: e.payload(),
    })
}

/// The facts and default text of the window `[ta, tb)` (§8.1), on current beliefs.
pub fn window_facts(snap: Snapshot<'_>, ta: i64, tb: i64) -> Result<(Value, String), AskError> {
    let n_events = one_bucket(snap, "edge_event_count", ta, tb)?;
    let n_new = one_bucket(snap, "new_node_rate", ta, tb)?;
    let bursts = call(
        snap,
        "burst_detection",
        &json!({"target": {"kind": "edge_event_rate"},
        "window": {"t_a": ta, "t_b": tb}, "stride": ((tb - ta) / 7).max(1), "limit": 10}),
    )?;
    let buckets: Vec<Value> = bursts["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| json!({"t_a": r["t_a"], "t_b": r["t_b"], "value": r["value"]}))
        .collect();
    let facts = json!({"n_events": n_events, "n_new_nodes": n_new,
        "n_burst_buckets": bursts["rows_total"], "burst_buckets": buckets});
    let text = format!(
        "{} edge events; {} new nodes; {} bursty buckets.",
        canon::to_string(&facts["n_events"]),
        canon::to_string(&facts["n_new_nodes"]),
        canon::to_string(&facts["n_burst_buckets"])
    );
    Ok((facts, text))
}

fn note(snap: Snapshot<'_>, ta: i64, tb: i64, as_of_tt: Option<i64>) -> Result<Value, AskError> {
    let (facts, text) = window_facts(snap, ta, tb)?;
    let id = canon::digest(&json!({"kind": "window_digest", "window_ta": ta, "window_tb": tb}));
    Ok(
        json!({"id": id[..16], "window_ta": ta, "window_tb": tb, "kind": "window_digest",
        "facts": facts, "text": text, "as_of_tt": as_of_tt, "stale": false}),
    )
}

/// `build(stride)` (§8.2): one note per window `[vt_min + i·stride, min(vt_min + (i+1)·stride,
/// vt_max))`, each replacing any note with the same window; returns the number of notes.
pub fn build(store: &Store, stride_us: i64) -> Result<usize, AskError> {
    writable(store)?;
    if stride_us < 1 {
        return Err(AskError::Config {
            setting: "stride".into(),
            message: format!("stride {stride_us} µs is not positive"),
            fix: "use --stride-days 1 or more".into(),
        });
    }
    let mut m = sync(store)?.unwrap_or(Memory {
        checked_tt: None,
        notes: Vec::new(),
    });
    let st = store.stats();
    let snap = store.snapshot();
    if let (Some(lo), Some(hi)) = (st.vt_min, st.vt_max) {
        let mut i: i64 = 0;
        loop {
            let ta = lo.saturating_add(i.saturating_mul(stride_us));
            if ta >= hi {
                break;
            }
            let tb = lo.saturating_add((i + 1).saturating_mul(stride_us)).min(hi);
            let n = note(snap, ta, tb, st.last_tt)?;
            m.notes.retain(|x| {
                !(x["window_ta"] == ta && x["window_tb"] == tb && x["kind"] == "window_digest")
            });
            m.notes.push(n);
            i += 1;
        }
    }
    m.notes
        .sort_by_key(|x| (x["window_ta"].as_i64(), x["window_tb"].as_i64()));
    m.checked_tt = st.last_tt;
    save(store, &m)?;
    Ok(m.notes.len())
}

/// `refresh` (§8.2): recomputes the stale notes in ascending `window_ta`; returns how many.
pub fn refresh(store: &Store) -> Result<usize, AskError> {
    writable(store)?;
    let Some(mut m) = sync(store)? else {
        return Ok(0);
    };
    let snap = store.snapshot();
    let last = store.stats().last_tt;
    let mut n = 0;
    m.notes
        .sort_by_key(|x| (x["window_ta"].as_i64(), x["window_tb"].as_i64()));
    for x in m.notes.iter_mut() {
        if x["stale"] == Value::Bool(true) {
            let (ta, tb) = (
                x["window_ta"].as_i64().unwrap_or(0),
                x["window_tb"].as_i64().unwrap_or(0),
            );
            *x = note(snap, ta, tb, last)?;
            n += 1;
        }
    }
    m.checked_tt = last;
    save(store, &m)?;
    Ok(n)
}

/// `retrieve(t_a, t_b, k)` (§8.2): non-stale notes overlapping `[t_a, t_b)`, by overlap
/// share descending then `window_ta`; stale notes are never returned.
pub fn retrieve(m: &Memory, t_a: i64, t_b: i64, k: usize) -> Vec<Value> {
    let mut scored: Vec<(f64, i64, &Value)> = m
        .notes
        .iter()
        .filter(|n| n["stale"] != Value::Bool(true))
        .filter_map(|n| {
            let (ta, tb) = (n["window_ta"].as_i64()?, n["window_tb"].as_i64()?);
            let ov = tb.min(t_b) - ta.max(t_a);
            (ov > 0).then(|| (ov as f64 / (tb - ta).max(1) as f64, ta, n))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(k)
        .map(|(_, _, n)| {
            json!({"window_ta": n["window_ta"], "window_tb": n["window_tb"], "kind": n["kind"],
                "facts": n["facts"], "text": n["text"], "as_of_tt": n["as_of_tt"]})
        })
        .collect()
}

/// The valid-time window a question is about: the µs timestamps it names that lie inside
/// the extent (`[min, max)`, or `[t, t + 1)` for one), else the whole extent.
pub fn question_window(store: &Store, question: &str) -> Option<(i64, i64)> {
    let st = store.stats();
    let (lo, hi) = (st.vt_min?, st.vt_max?);
    let ts: Vec<i64> = question
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|t| t.parse::<i64>().ok())
        .filter(|t| (lo..=hi).contains(t))
        .collect();
    match (ts.iter().min(), ts.iter().max()) {
        (Some(&a), Some(&b)) if a < b => Some((a, b)),
        (Some(&a), _) => Some((a, a + 1)),
        _ => Some((lo, hi.max(lo + 1))),
    }
}

/// The notes retrieved for a question (up to [`RETRIEVE_K`]); none without a memory file.
pub fn notes_for_question(store: &Store, question: &str) -> Result<Vec<Value>, AskError> {
    let Some(m) = sync(store)? else {
        return Ok(Vec::new());
    };
    Ok(match question_window(store, question) {
        Some((a, b)) => retrieve(&m, a, b, RETRIEVE_K),
        None => Vec::new(),
    })
}
