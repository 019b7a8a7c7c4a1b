//! Write operations (`data-model.md` §6, §8.1): typed ops, their normalization from JSON
//! (defaults filled), their validation (§6.8) and their normalized JSON form, which is the
//! logical content of a log record.

use crate::canon;
use crate::error::{Error, Result};
use crate::time::{legal_interval, OPEN_END};
use serde_json::{json, Map, Value};

/// The audit kind of an op; also `origin` / `closed_by` of rows (`data-model.md` §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Origin {
    /// An `assert_node` or `assert_edge` op (stored tag 1).
    Assert = 1,
    /// A `retract` op (stored tag 2); the remainder it writes before its instant has this origin.
    Retract = 2,
    /// A `correct` op (stored tag 3); its new version and remainders have this origin.
    Correct = 3,
    /// An `ingest_events` op (stored tag 4); rows it writes carry no reason.
    Ingest = 4,
}

impl Origin {
    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Assert => "assert",
            Origin::Retract => "retract",
            Origin::Correct => "correct",
            Origin::Ingest => "ingest",
        }
    }

    /// Decodes the stored tag.
    pub fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            1 => Origin::Assert,
            2 => Origin::Retract,
            3 => Origin::Correct,
            4 => Origin::Ingest,
            _ => return None,
        })
    }
}

/// Provenance shared by every op: `reason`, `source` (default `"ingest"`) and
/// `provenance_ref` (any JSON, default `null`, kept as canonical text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Audit {
    /// Why the op was made, at most `MAX_REASON_BYTES` bytes; `None` when not given
    /// (`retract` and `correct` require a non-blank one).
    pub reason: Option<String>,
    /// The caller's provenance label, copied to every row the op writes (default `"ingest"`).
    pub source: String,
    /// The caller's provenance pointer as canonical JSON text (default `"null"`).
    pub provenance_ref: String,
}

impl Default for Audit {
    fn default() -> Self {
        Audit {
            reason: None,
            source: "ingest".into(),
            provenance_ref: "null".into(),
        }
    }
}

/// The target of `retract` / `correct`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ref {
    /// A node, by its uid.
    Node {
        /// The node's uid (non-empty, compared byte for byte).
        uid: String,
    },
    /// An edge, by the four parts of its identity (its eid is derived from them).
    Edge {
        /// Uid of the source endpoint (non-empty).
        src: String,
        /// Uid of the destination endpoint (non-empty).
        dst: String,
        /// The edge's relationship type (non-empty).
        rel_type: String,
        /// The discriminator between parallel edges of one type (`""` when not given).
        disc: String,
    },
}

/// `assert_node` (§6.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertNode {
    /// The node's uid (non-empty); registered by the op if new.
    pub uid: String,
    /// The node label of the new version (may be empty).
    pub label: String,
    /// Canonical JSON text of a JSON object.
    pub props: String,
    /// Start of the valid interval, µs since 1970 UTC (inclusive).
    pub vt_s: i64,
    /// End of the valid interval, µs since 1970 UTC (exclusive; default `OPEN_END`).
    pub vt_e: i64,
    /// Reason and provenance of the op.
    pub audit: Audit,
}

/// `assert_edge` (§6.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertEdge {
    /// Uid of the source endpoint (non-empty).
    pub src: String,
    /// Uid of the destination endpoint (non-empty).
    pub dst: String,
    /// The edge's relationship type (non-empty).
    pub rel_type: String,
    /// The discriminator between parallel edges of one type (default `""`).
    pub disc: String,
    /// Canonical JSON text of the props object (default `"{}"`).
    pub props: String,
    /// Start of the valid interval, µs since 1970 UTC (inclusive).
    pub vt_s: i64,
    /// End of the valid interval, µs since 1970 UTC (exclusive; default `OPEN_END`).
    pub vt_e: i64,
    /// Reason and provenance of the op.
    pub audit: Audit,
    /// Label of the node version created for `src` when it has no believed one (default
    /// `"Node"`).
    pub src_label: String,
    /// Label of the node version created for `dst` when it has no believed one (default
    /// `"Node"`).
    pub dst_label: String,
}

/// `retract` (§6.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retract {
    /// The node or edge whose version valid at `t` is ended.
    pub target: Ref,
    /// The retract instant, µs since 1970 UTC, in `[0, OPEN_END)`: the believed version
    /// valid at `t` is closed and its part before `t` written again.
    pub t: i64,
    /// Reason (required, non-blank) and provenance of the op.
    pub audit: Audit,
}

/// `correct` (§6.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Correct {
    /// The node or edge whose content is replaced.
    pub target: Ref,
    /// Canonical JSON text of the new props object, covering the whole window.
    pub props: String,
    /// Start of the corrected window, µs since 1970 UTC (inclusive; default 0).
    pub vt_s: i64,
    /// End of the corrected window, µs since 1970 UTC (exclusive; default `OPEN_END`).
    pub vt_e: i64,
    /// Reason (required, non-blank) and provenance of the op.
    pub audit: Audit,
}

/// An event's `vt_e` exactly as given: absent, `null`, or an integer (`0` means "absent").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventEnd {
    /// No `vt_e` key: the event is the instant `[vt_s, vt_s + 1)`.
    Absent,
    /// `"vt_e": null`: also the instant `[vt_s, vt_s + 1)`, but written back as `null`.
    Null,
    /// An integer end, µs since 1970 UTC (exclusive); `0` means the same as absent.
    At(i64),
}

/// One bulk event (§6.7), kept as the caller gave it; defaults apply at apply time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Uid of the source endpoint (non-empty).
    pub src: String,
    /// Uid of the destination endpoint (non-empty).
    pub dst: String,
    /// The edge's relationship type (non-empty).
    pub rel_type: String,
    /// Start of the event's valid interval, µs since 1970 UTC, in `[0, OPEN_END)`.
    pub vt_s: i64,
    /// The end as given; `Event::end` gives the effective one.
    pub vt_e: EventEnd,
    /// The discriminator, when given; `None` numbers the edge with the store-wide ingest
    /// ordinal (`ordinal_base` + the event's index in its op), so every such event is a new
    /// edge.
    pub disc: Option<String>,
    /// Canonical JSON text of the props object, when given.
    pub props: Option<String>,
}

impl Event {
    /// An instantaneous event without disc or props (the SNAP loaders' shape).
    pub fn instant(src: String, dst: String, rel_type: String, vt_s: i64) -> Self {
        Event {
            src,
            dst,
            rel_type,
            vt_s,
            vt_e: EventEnd::Absent,
            disc: None,
            props: None,
        }
    }

    /// The effective end of the valid interval (§6.7 defaults).
    pub fn end(&self) -> i64 {
        match self.vt_e {
            EventEnd::Absent | EventEnd::Null | EventEnd::At(0) => self.vt_s.saturating_add(1),
            EventEnd::At(e) => e,
        }
    }
}

/// `ingest_events` (§6.7): one chunk of at most 50,000 events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IngestEvents {
    /// The events, in input order (at most `INGEST_CHUNK`); each becomes one edge version.
    pub events: Vec<Event>,
    /// The store's ingest ordinal counter when the batch was recorded (set by the store).
    pub ordinal_base: u64,
    /// Label of the node versions created for endpoints that have none (default `"Node"`).
    pub node_label: String,
    /// Provenance of the op; its `reason` is not recorded on ingest rows.
    pub audit: Audit,
}

/// One normalized write op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `assert_node`: a new node version over `[vt_s, vt_e)`.
    AssertNode(AssertNode),
    /// `assert_edge`: a new edge version over `[vt_s, vt_e)`, plus node versions for
    /// endpoints that have none.
    AssertEdge(AssertEdge),
    /// `retract`: ends the believed version valid at an instant.
    Retract(Retract),
    /// `correct`: replaces the content of a node or edge over a valid-time window.
    Correct(Correct),
    /// `ingest_events`: bulk load of one chunk of events.
    IngestEvents(IngestEvents),
    /// An op object that could not be normalized (unknown kind, wrong types, bad values),
    /// kept as canonical JSON text. It is logged like any op and fails its batch at apply
    /// time with the error its normalization gives.
    Raw(String),
}

/// Most events one `ingest_events` op carries (§6.7).
pub const INGEST_CHUNK: usize = 50_000;
/// Longest accepted `reason`, in bytes (§6.6).
pub const MAX_REASON_BYTES: usize = 4096;

impl Op {
    /// The op's audit kind; `None` for a raw op.
    pub fn origin(&self) -> Option<Origin> {
        Some(match self {
            Op::AssertNode(_) | Op::AssertEdge(_) => Origin::Assert,
            Op::Retract(_) => Origin::Retract,
            Op::Correct(_) => Origin::Correct,
            Op::IngestEvents(_) => Origin::Ingest,
            Op::Raw(_) => return None,
        })
    }

    /// Normalizes an op object given as JSON; anything that does not normalize becomes
    /// [`Op::Raw`], which fails at apply time with the same error as [`Op::parse`].
    pub fn from_json(v: &Value) -> Op {
        Op::parse(v).unwrap_or_else(|_| {
            // A non-finite number has no canonical text (it would be written `Infinity`,
            // which no JSON reader parses back); its original token is kept instead, so
            // the raw op re-parses to the error that names the value.
            Op::Raw(if canon::all_finite(v) {
                canon::to_string(v)
            } else {
                serde_json::to_string(v).unwrap_or_else(|_| canon::to_string(v))
            })
        })
    }

    /// Normalizes and validates an op object (§6.8 messages).
    pub fn parse(v: &Value) -> Result<Op> {
        let m = v
            .as_object()
            .ok_or_else(|| Error::invalid("an op must be a JSON object"))?;
        let kind = match m.get("op") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "unknown op kind '{}'",
                    canon::to_string(other)
                )))
            }
            None => return Err(Error::invalid("unknown op kind ''")),
        };
        let op = match kind {
            "assert_node" => Op::AssertNode(AssertNode {
                uid: req_str(m, "uid")?,
                label: req_label(m, "label")?,
                props: props_of(m)?,
                vt_s: int_or(m, "vt_s", 0),
                vt_e: int_or(m, "vt_e", OPEN_END),
                audit: audit_of(m)?,
            }),
            "assert_edge" => Op::AssertEdge(AssertEdge {
                src: req_str(m, "src")?,
                dst: req_str(m, "dst")?,
                rel_type: req_str(m, "rel_type")?,
                disc: opt_string(m, "disc", "")?,
                props: props_of(m)?,
                vt_s: int_or(m, "vt_s", 0),
                vt_e: int_or(m, "vt_e", OPEN_END),
                audit: audit_of(m)?,
                src_label: opt_string(m, "src_label", "Node")?,
                dst_label: opt_string(m, "dst_label", "Node")?,
            }),
            "retract" => Op::Retract(Retract {
                target: ref_of(m)?,
                t: match m.get("t") {
                    Some(t) => t.as_i64().ok_or_else(|| {
                        Error::invalid(format!("invalid instant {}", canon::to_string(t)))
                    })?,
                    None => return Err(Error::invalid("invalid instant null")),
                },
                audit: audit_of(m)?,
            }),
            "correct" => Op::Correct(Correct {
                target: ref_of(m)?,
                props: props_of(m)?,
                vt_s: int_or(m, "vt_s", 0),
                vt_e: int_or(m, "vt_e", OPEN_END),
                audit: audit_of(m)?,
            }),
            "ingest_events" => {
                let events = match m.get("events") {
                    // The format's limit (`format-spec.md` §12, data-model §6.7); checked on
                    // input only, so that a log written before the check still replays.
                    Some(Value::Array(a)) if a.len() > INGEST_CHUNK => {
                        return Err(Error::invalid(format!(
                            "ingest_events holds {} events; one op holds at most {INGEST_CHUNK}: \
                             split them over several ops (or load the file with tgms ingest, \
                             which chunks it)",
                            a.len()
                        )))
                    }
                    Some(Value::Array(a)) => a.iter().map(event_of).collect::<Result<Vec<_>>>()?,
                    _ => return Err(Error::invalid("events must be an array of event objects")),
                };
                Op::IngestEvents(IngestEvents {
                    events,
                    ordinal_base: m.get("ordinal_base").and_then(Value::as_u64).unwrap_or(0),
                    node_label: opt_string(m, "node_label", "Node")?,
                    audit: audit_of(m)?,
                })
            }
            other => return Err(Error::invalid(format!("unknown op kind '{other}'"))),
        };
        // Interval fields that were present but not integers are reported with their raw
        // text; `int_or` mapped them to a sentinel that `validate` rejects.
        check_interval_types(m)?;
        op.validate()?;
        Ok(op)
    }

    /// Validates a typed op (§6.8). Raw ops fail with their normalization error.
    pub fn validate(&self) -> Result<()> {
        match self {
            Op::AssertNode(o) => {
                non_empty("uid", &o.uid)?;
                interval(o.vt_s, o.vt_e)?;
                reason_len(&o.audit)
            }
            Op::AssertEdge(o) => {
                non_empty("src", &o.src)?;
                non_empty("dst", &o.dst)?;
                non_empty("rel_type", &o.rel_type)?;
                interval(o.vt_s, o.vt_e)?;
                reason_len(&o.audit)
            }
            Op::Retract(o) => {
                valid_ref(&o.target)?;
                if !(0..OPEN_END).contains(&o.t) {
                    return Err(Error::invalid(format!("invalid instant {}", o.t)));
                }
                required_reason("retract", &o.audit)
            }
            Op::Correct(o) => {
                valid_ref(&o.target)?;
                interval(o.vt_s, o.vt_e)?;
                required_reason("correct", &o.audit)
            }
            Op::IngestEvents(o) => {
                o.events.iter().try_for_each(validate_event)?;
                reason_len(&o.audit)
            }
            Op::Raw(text) => {
                let v: Value = canon::parse(text)
                    .map_err(|e| Error::invalid(format!("op is not valid JSON: {e}")))?;
                match Op::parse(&v) {
                    Err(e) => Err(e),
                    Ok(_) => Err(Error::state("raw op normalizes; it should not be raw")),
                }
            }
        }
    }

    /// The normalized op object of §8.1 (every listed key present).
    pub fn to_json(&self) -> Value {
        match self {
            Op::AssertNode(o) => {
                let mut m = audit_json(&o.audit);
                put(&mut m, "op", json!("assert_node"));
                put(&mut m, "uid", json!(o.uid));
                put(&mut m, "label", json!(o.label));
                put(&mut m, "props", text_json(&o.props));
                put(&mut m, "vt_s", json!(o.vt_s));
                put(&mut m, "vt_e", json!(o.vt_e));
                Value::Object(m)
            }
            Op::AssertEdge(o) => {
                let mut m = audit_json(&o.audit);
                put(&mut m, "op", json!("assert_edge"));
                put(&mut m, "src", json!(o.src));
                put(&mut m, "dst", json!(o.dst));
                put(&mut m, "rel_type", json!(o.rel_type));
                put(&mut m, "disc", json!(o.disc));
                put(&mut m, "props", text_json(&o.props));
                put(&mut m, "vt_s", json!(o.vt_s));
                put(&mut m, "vt_e", json!(o.vt_e));
                put(&mut m, "src_label", json!(o.src_label));
                put(&mut m, "dst_label", json!(o.dst_label));
                Value::Object(m)
            }
            Op::Retract(o) => {
                let mut m = audit_json(&o.audit);
                put(&mut m, "op", json!("retract"));
                put(&mut m, "ref", ref_json(&o.target));
                put(&mut m, "t", json!(o.t));
                Value::Object(m)
            }
            Op::Correct(o) => {
                let mut m = audit_json(&o.audit);
                put(&mut m, "op", json!("correct"));
                put(&mut m, "ref", ref_json(&o.target));
                put(&mut m, "props", text_json(&o.props));
                put(&mut m, "vt_s", json!(o.vt_s));
                put(&mut m, "vt_e", json!(o.vt_e));
                Value::Object(m)
            }
            Op::IngestEvents(o) => {
                let mut m = Map::new();
                put(&mut m, "op", json!("ingest_events"));
                put(
                    &mut m,
                    "events",
                    Value::Array(o.events.iter().map(event_json).collect()),
                );
                put(&mut m, "ordinal_base", json!(o.ordinal_base));
                put(&mut m, "node_label", json!(o.node_label));
                put(&mut m, "source", json!(o.audit.source));
                put(&mut m, "provenance_ref", text_json(&o.audit.provenance_ref));
                Value::Object(m)
            }
            Op::Raw(text) => text_json(text),
        }
    }
}

/// The logical record of a batch: canonical `{"batch_id", "ops", "tt"}` (§8.1).
pub fn record_json(tt: i64, ops: &[Op]) -> Value {
    let ops: Vec<Value> = ops.iter().map(Op::to_json).collect();
    let id = batch_id(tt, &ops);
    json!({"batch_id": id, "ops": ops, "tt": tt})
}

/// First 16 hex of `digest({"tt": tt, "ops": ops})`.
pub fn batch_id(tt: i64, ops: &[Value]) -> String {
    let d = canon::digest(&json!({"tt": tt, "ops": ops}));
    d[..16].to_string()
}

/// Parses canonical text that this module wrote (props, provenance) back into a value.
pub fn text_json(text: &str) -> Value {
    canon::parse(text).unwrap_or(Value::Null)
}

fn put(m: &mut Map<String, Value>, k: &str, v: Value) {
    m.insert(k.to_string(), v);
}

fn audit_json(a: &Audit) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "reason", json!(a.reason));
    put(&mut m, "source", json!(a.source));
    put(&mut m, "provenance_ref", text_json(&a.provenance_ref));
    m
}

/// The normalized ref object.
pub fn ref_json(r: &Ref) -> Value {
    match r {
        Ref::Node { uid } => json!({"kind": "node", "uid": uid}),
        Ref::Edge {
            src,
            dst,
            rel_type,
            disc,
        } => json!({"kind": "edge", "src": src, "dst": dst, "rel_type": rel_type, "disc": disc}),
    }
}

/// An event as the caller gave it (absent keys stay absent).
pub fn event_json(e: &Event) -> Value {
    let mut m = Map::new();
    put(&mut m, "src", json!(e.src));
    put(&mut m, "dst", json!(e.dst));
    put(&mut m, "rel_type", json!(e.rel_type));
    put(&mut m, "vt_s", json!(e.vt_s));
    match e.vt_e {
        EventEnd::Absent => {}
        EventEnd::Null => put(&mut m, "vt_e", Value::Null),
        EventEnd::At(x) => put(&mut m, "vt_e", json!(x)),
    }
    if let Some(d) = &e.disc {
        put(&mut m, "disc", json!(d));
    }
    if let Some(p) = &e.props {
        put(&mut m, "props", text_json(p));
    }
    Value::Object(m)
}

/// A sentinel for interval fields present with a non-integer value; `interval()` rejects it.
const NOT_AN_INT: i64 = i64::MIN;

fn int_or(m: &Map<String, Value>, k: &str, default: i64) -> i64 {
    match m.get(k) {
        None => default,
        Some(v) => v.as_i64().unwrap_or(NOT_AN_INT),
    }
}

fn check_interval_types(m: &Map<String, Value>) -> Result<()> {
    let bad = |k: &str| m.get(k).is_some_and(|v| v.as_i64().is_none());
    if bad("vt_s") || bad("vt_e") {
        let show = |k: &str, d: &str| m.get(k).map_or(d.to_string(), canon::to_string);
        return Err(Error::invalid(format!(
            "invalid interval [{}, {})",
            show("vt_s", "0"),
            show("vt_e", "4611686018427387904")
        )));
    }
    Ok(())
}

fn req_str(m: &Map<String, Value>, k: &str) -> Result<String> {
    match m.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(Error::invalid(format!("{k} must be a non-empty string"))),
    }
}

fn req_label(m: &Map<String, Value>, k: &str) -> Result<String> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(Error::invalid(format!("{k} must be a string"))),
    }
}

fn opt_string(m: &Map<String, Value>, k: &str, default: &str) -> Result<String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(default.to_string()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(Error::invalid(format!("{k} must be a string"))),
    }
}

/// `props` must be a JSON object with finite numbers; returns its canonical text.
pub fn props_text(v: Option<&Value>) -> Result<String> {
    match v {
        None | Some(Value::Null) => Ok("{}".into()),
        Some(p @ Value::Object(_)) => {
            if let Some((path, token)) = canon::first_non_finite(p, "props") {
                return Err(Error::invalid(format!(
                    "{path} is {token}, which is not a finite 64-bit float (at most about \
                     1.8e308 in magnitude): store it as a string, or scale it"
                )));
            }
            Ok(canon::to_string(p))
        }
        Some(_) => Err(Error::invalid("props must be a JSON object")),
    }
}

fn props_of(m: &Map<String, Value>) -> Result<String> {
    props_text(m.get("props"))
}

fn audit_of(m: &Map<String, Value>) -> Result<Audit> {
    let reason = match m.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(Error::invalid("reason must be a string or null")),
    };
    let provenance_ref = match m.get("provenance_ref") {
        None => "null".to_string(),
        Some(v) if canon::all_finite(v) => canon::to_string(v),
        Some(_) => {
            return Err(Error::invalid(
                "provenance_ref must not contain non-finite numbers",
            ))
        }
    };
    Ok(Audit {
        reason,
        source: opt_string(m, "source", "ingest")?,
        provenance_ref,
    })
}

fn ref_of(m: &Map<String, Value>) -> Result<Ref> {
    let r = match m.get("ref") {
        Some(Value::Object(r)) => r,
        _ => return Err(Error::invalid("invalid ref: ref must be an object")),
    };
    let field = |k: &str| match r.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(Error::invalid(format!(
            "invalid ref: {k} must be a non-empty string"
        ))),
    };
    match r.get("kind").and_then(Value::as_str) {
        Some("node") => Ok(Ref::Node { uid: field("uid")? }),
        Some("edge") => Ok(Ref::Edge {
            src: field("src")?,
            dst: field("dst")?,
            rel_type: field("rel_type")?,
            disc: match r.get("disc") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(_) => return Err(Error::invalid("invalid ref: disc must be a string")),
            },
        }),
        _ => Err(Error::invalid(
            "invalid ref: kind must be \"node\" or \"edge\"",
        )),
    }
}

/// Normalizes and validates one event object of `ingest_events` (§6.7), with the messages
/// an `ingest_events` op containing it would fail with (event-file loaders).
pub fn parse_event(v: &Value) -> Result<Event> {
    let e = event_of(v)?;
    validate_event(&e)?;
    Ok(e)
}

fn validate_event(e: &Event) -> Result<()> {
    non_empty("src", &e.src)?;
    non_empty("dst", &e.dst)?;
    non_empty("rel_type", &e.rel_type)?;
    if !(0..OPEN_END).contains(&e.vt_s) || !legal_interval(e.vt_s, e.end()) {
        return Err(Error::invalid(format!(
            "invalid interval [{}, {})",
            e.vt_s,
            e.end()
        )));
    }
    Ok(())
}

fn event_of(v: &Value) -> Result<Event> {
    let m = v
        .as_object()
        .ok_or_else(|| Error::invalid("every event must be a JSON object"))?;
    let vt_s = match m.get("vt_s").map(|x| (x, x.as_i64())) {
        Some((_, Some(x))) => x,
        Some((x, None)) => {
            return Err(Error::invalid(format!(
                "invalid interval [{}, null)",
                canon::to_string(x)
            )))
        }
        None => return Err(Error::invalid("invalid interval [null, null)")),
    };
    let vt_e = match m.get("vt_e") {
        None => EventEnd::Absent,
        Some(Value::Null) => EventEnd::Null,
        Some(x) => EventEnd::At(x.as_i64().ok_or_else(|| {
            Error::invalid(format!(
                "invalid interval [{vt_s}, {})",
                canon::to_string(x)
            ))
        })?),
    };
    Ok(Event {
        src: req_str(m, "src")?,
        dst: req_str(m, "dst")?,
        rel_type: req_str(m, "rel_type")?,
        vt_s,
        vt_e,
        disc: match m.get("disc") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(Error::invalid("disc must be a string")),
        },
        props: match m.get("props") {
            None => None,
            p => Some(props_text(p)?),
        },
    })
}

fn non_empty(k: &str, s: &str) -> Result<()> {
    if s.is_empty() {
        return Err(Error::invalid(format!("{k} must be a non-empty string")));
    }
    Ok(())
}

fn interval(s: i64, e: i64) -> Result<()> {
    if !legal_interval(s, e) {
        return Err(Error::invalid(format!("invalid interval [{s}, {e})")));
    }
    Ok(())
}

fn reason_len(a: &Audit) -> Result<()> {
    if a.reason
        .as_ref()
        .is_some_and(|r| r.len() > MAX_REASON_BYTES)
    {
        return Err(Error::invalid("reason exceeds 4096 bytes"));
    }
    Ok(())
}

fn required_reason(op: &str, a: &Audit) -> Result<()> {
    match &a.reason {
        Some(r) if r.chars().any(|c| !c.is_whitespace()) => reason_len(a),
        _ => Err(Error::invalid(format!("{op} requires a non-empty reason"))),
    }
}

fn valid_ref(r: &Ref) -> Result<()> {
    let bad = |k: &str| {
        Err(Error::invalid(format!(
            "invalid ref: {k} must be a non-empty string"
        )))
    };
    match r {
        Ref::Node { uid } if uid.is_empty() => bad("uid"),
        Ref::Edge { src, .. } if src.is_empty() => bad("src"),
        Ref::Edge { dst, .. } if dst.is_empty() => bad("dst"),
        Ref::Edge { rel_type, .. } if rel_type.is_empty() => bad("rel_type"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv5_logical_records() {
        let a = Op::parse(&json!({"op":"assert_node","uid":"a","label":"N","props":{"name":"Alice"},"vt_s":0,"vt_e":100})).unwrap();
        assert_eq!(
            canon::to_string(&record_json(1000, &[a])),
            r#"{"batch_id":"bc69bdc68d096b6b","ops":[{"label":"N","op":"assert_node","props":{"name":"Alice"},"provenance_ref":null,"reason":null,"source":"ingest","uid":"a","vt_e":100,"vt_s":0}],"tt":1000}"#
        );
        let e = Op::parse(&json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","props":{"w":1},"vt_s":10,"vt_e":20})).unwrap();
        assert_eq!(
            canon::to_string(&record_json(1001, &[e])),
            r#"{"batch_id":"cbddf63e46c4a563","ops":[{"disc":"","dst":"b","dst_label":"Node","op":"assert_edge","props":{"w":1},"provenance_ref":null,"reason":null,"rel_type":"R","source":"ingest","src":"a","src_label":"Node","vt_e":20,"vt_s":10}],"tt":1001}"#
        );
        let r = Op::parse(
            &json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5,"reason":"cleanup"}),
        )
        .unwrap();
        assert_eq!(
            canon::to_string(&record_json(1002, &[r])),
            r#"{"batch_id":"c1ad340b9325761d","ops":[{"op":"retract","provenance_ref":null,"reason":"cleanup","ref":{"kind":"node","uid":"zzz"},"source":"ingest","t":5}],"tt":1002}"#
        );
        let i = Op::parse(&json!({"op":"ingest_events","events":[{"src":"a","dst":"c","rel_type":"MSG","vt_s":30},{"src":"c","dst":"a","rel_type":"MSG","vt_s":30}]})).unwrap();
        assert_eq!(
            canon::to_string(&record_json(5000, &[i])),
            r#"{"batch_id":"6ef56001ff61b18b","ops":[{"events":[{"dst":"c","rel_type":"MSG","src":"a","vt_s":30},{"dst":"a","rel_type":"MSG","src":"c","vt_s":30}],"node_label":"Node","op":"ingest_events","ordinal_base":0,"provenance_ref":null,"source":"ingest"}],"tt":5000}"#
        );
    }

    #[test]
    fn validation_messages() {
        let msg = |v: Value| Op::parse(&v).unwrap_err().to_string();
        assert_eq!(
            msg(json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5})),
            "retract requires a non-empty reason"
        );
        assert_eq!(
            msg(json!({"op":"correct","ref":{"kind":"node","uid":"z"},"props":{},"reason":"  "})),
            "correct requires a non-empty reason"
        );
        assert_eq!(msg(json!({"op":"frob"})), "unknown op kind 'frob'");
        assert_eq!(
            msg(json!({"op":"assert_node","uid":"","label":"N"})),
            "uid must be a non-empty string"
        );
        assert_eq!(
            msg(json!({"op":"assert_node","uid":"a","label":"N","vt_s":5,"vt_e":5})),
            "invalid interval [5, 5)"
        );
        assert_eq!(
            msg(json!({"op":"assert_node","uid":"a","label":"N","vt_s":"x"})),
            "invalid interval ['x', 4611686018427387904)".replace('\'', "\"")
        );
        assert_eq!(
            msg(json!({"op":"assert_node","uid":"a","label":"N","props":[1]})),
            "props must be a JSON object"
        );
        assert_eq!(
            msg(json!({"op":"retract","ref":{"kind":"node","uid":"a"},"t":-1,"reason":"r"})),
            "invalid instant -1"
        );
        assert_eq!(
            msg(json!({"op":"retract","ref":{"kind":"x"},"t":1,"reason":"r"})),
            "invalid ref: kind must be \"node\" or \"edge\""
        );
        let long = "x".repeat(4097);
        assert_eq!(
            msg(json!({"op":"assert_node","uid":"a","label":"N","reason":long})),
            "reason exceeds 4096 bytes"
        );
        // A raw op fails at apply time with its normalization error.
        let raw = Op::from_json(&json!({"op":"frob"}));
        assert!(matches!(raw, Op::Raw(_)));
        assert_eq!(
            raw.validate().unwrap_err().to_string(),
            "unknown op kind 'frob'"
        );
    }
}
