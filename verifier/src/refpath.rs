//! The `$ref` path language of `plans-and-claims.md` §4.2–§4.3: a real grammar
//! (`ref = step "." segment *("." segment)`, `segment = name ["[" (1*DIGIT / "*") "]"]`),
//! precise parse errors, evaluation against an envelope, and the static check of a path
//! against an operator's declared output contract (§5 6c, D-V1).

use crate::error::{Error, Result};
use serde_json::Value;
use tgms_operators::contract::Contract;
use tgms_operators::OpSpec;

/// The index of one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Index {
    /// `[i]`
    At(usize),
    /// `[*]`
    All,
}

/// One segment: a field name with an optional index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The field name looked up in the current object.
    pub name: String,
    /// The index applied to that field's array, if the segment has one.
    pub index: Option<Index>,
}

impl Segment {
    fn text(&self) -> String {
        match &self.index {
            None => self.name.clone(),
            Some(Index::At(i)) => format!("{}[{i}]", self.name),
            Some(Index::All) => format!("{}[*]", self.name),
        }
    }
}

/// A parsed reference path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefPath {
    /// The path text as written (`s1.rows[*].uid`).
    pub raw: String,
    /// The step id before the first `.`.
    pub step: String,
    /// The segments after the step id, at least one, in path order; at most one has `[*]`.
    pub segments: Vec<Segment>,
}

fn is_step_id(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('s') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

fn parse_segment(seg: &str) -> Option<Segment> {
    let b = seg.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    let name = seg[..i].to_string();
    if i == b.len() {
        return Some(Segment { name, index: None });
    }
    if b[i] != b'[' || *b.last()? != b']' || b.len() < i + 3 {
        return None;
    }
    let inner = &seg[i + 1..b.len() - 1];
    let index = if inner == "*" {
        Index::All
    } else if !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_digit()) {
        Index::At(inner.parse().ok()?)
    } else {
        return None;
    };
    Some(Segment {
        name,
        index: Some(index),
    })
}

fn err(message: String) -> Error {
    Error::RefSyntax { message }
}

fn eval_err(raw: &str, reason: String) -> Error {
    Error::RefEval {
        raw: raw.to_string(),
        reason,
    }
}

impl RefPath {
    /// Parses `raw`; errors are [`Error::RefSyntax`] with the §4.2 messages.
    pub fn parse(raw: &str) -> Result<RefPath> {
        let bad = || err(format!("bad $ref '{raw}'"));
        let (step, rest) = raw.split_once('.').ok_or_else(bad)?;
        if !is_step_id(step) {
            return Err(bad());
        }
        let mut segments = Vec::new();
        for seg in rest.split('.') {
            let s = parse_segment(seg)
                .ok_or_else(|| err(format!("bad $ref segment '{seg}' in '{raw}'")))?;
            segments.push(s);
        }
        if segments
            .iter()
            .filter(|s| s.index == Some(Index::All))
            .count()
            > 1
        {
            return Err(err(format!("only one [*] projection allowed in '{raw}'")));
        }
        Ok(RefPath {
            raw: raw.to_string(),
            step: step.to_string(),
            segments,
        })
    }

    /// The first field after the step id.
    pub fn first_field(&self) -> &str {
        &self.segments[0].name
    }

    /// Evaluates the path against the full envelope of its target step (§4.3).
    pub fn eval(&self, envelope: &Value) -> Result<Value> {
        eval_from(&self.raw, &self.segments, envelope, &|v: &Value| v.clone())
    }

    /// [`RefPath::eval`] with `row` making each row of the referenced list instead of a
    /// copy: under a `[*]` projection each projected element is one row; otherwise the value
    /// the path names is the list (anything else is copied). The executor uses it to copy
    /// only the columns a reducer reads.
    pub fn eval_with(&self, envelope: &Value, row: &dyn Fn(&Value) -> Value) -> Result<Value> {
        if self.segments.iter().any(|s| s.index == Some(Index::All)) {
            return eval_from(&self.raw, &self.segments, envelope, row);
        }
        let rows = |v: &Value| match v {
            Value::Array(a) => Value::Array(a.iter().map(row).collect()),
            other => other.clone(),
        };
        eval_from(&self.raw, &self.segments, envelope, &rows)
    }

    /// Checks the path against `spec`'s output contract (§5 6c). The error is an
    /// [`Error::Contract`]: the message without its `$ref '<raw>': ` prefix, and the legal
    /// field names when they apply.
    pub fn check_contract(&self, spec: &OpSpec) -> Result<()> {
        let contract = |message, available| Err(Error::Contract { message, available });
        let first = &self.segments[0];
        let Some(decl) = spec.output(&first.name) else {
            let avail: Vec<String> = spec.output_names().iter().map(|s| s.to_string()).collect();
            return contract(
                format!(
                    "{} outputs no field '{}' (available: {})",
                    spec.name,
                    first.name,
                    avail.join(", ")
                ),
                avail,
            );
        };
        let mut cur: &Contract = &decl.contract;
        let mut so_far = first.name.clone();
        let mut idx = first.index.as_ref();
        let mut rest = self.segments[1..].iter();
        loop {
            if idx.is_some() {
                match strip(cur) {
                    Contract::Any => return Ok(()),
                    Contract::List(t) => cur = t,
                    _ => {
                        return contract(
                            format!("{} field '{so_far}' is not a list", spec.name),
                            vec![],
                        )
                    }
                }
                so_far.push_str(&match idx {
                    Some(Index::At(i)) => format!("[{i}]"),
                    _ => "[*]".into(),
                });
            }
            let Some(seg) = rest.next() else {
                return Ok(());
            };
            match strip(cur) {
                Contract::Any | Contract::OpenObj => return Ok(()),
                Contract::Obj(fields) => match fields.iter().find(|(f, _)| *f == seg.name) {
                    Some((_, t)) => cur = t,
                    None => {
                        let avail: Vec<String> = fields.iter().map(|f| f.0.clone()).collect();
                        return contract(
                            format!(
                                "{} field '{so_far}' has no field '{}' (available: {})",
                                spec.name,
                                seg.name,
                                avail.join(", ")
                            ),
                            avail,
                        );
                    }
                },
                _ => {
                    return contract(
                        format!("{} field '{so_far}' is not an object", spec.name),
                        vec![],
                    )
                }
            }
            so_far.push('.');
            so_far.push_str(&seg.name);
            idx = seg.index.as_ref();
        }
    }

    /// The declared type of the value this path yields from `spec`'s output contract, or
    /// `None` where the contract does not say (`any`, open objects, unknown fields). A `[*]`
    /// projection yields a list of the projected type.
    pub fn contract_type(&self, spec: &OpSpec) -> Option<Contract> {
        let mut cur: Contract = spec.output(&self.segments[0].name)?.contract.clone();
        let mut projected = false;
        let mut idx = self.segments[0].index.as_ref();
        let mut rest = self.segments[1..].iter();
        loop {
            if let Some(ix) = idx {
                let Contract::List(t) = strip(&cur) else {
                    return None;
                };
                projected |= *ix == Index::All;
                cur = (**t).clone();
            }
            let Some(seg) = rest.next() else {
                break;
            };
            let Contract::Obj(fields) = strip(&cur) else {
                return None;
            };
            cur = fields.iter().find(|(f, _)| *f == seg.name)?.1.clone();
            idx = seg.index.as_ref();
        }
        if matches!(strip(&cur), Contract::Any | Contract::OpenObj) && !projected {
            return (cur == Contract::OpenObj).then_some(cur);
        }
        Some(if projected {
            Contract::List(Box::new(cur))
        } else {
            cur
        })
    }

    /// The path text after the step id.
    pub fn field_path(&self) -> String {
        self.segments
            .iter()
            .map(Segment::text)
            .collect::<Vec<_>>()
            .join(".")
    }
}

fn strip(c: &Contract) -> &Contract {
    match c {
        Contract::Nullable(t) => strip(t),
        other => other,
    }
}

/// `leaf` makes the value returned from the value the path ends at (a copy, for
/// [`RefPath::eval`]).
fn eval_from(
    raw: &str,
    segs: &[Segment],
    cur: &Value,
    leaf: &dyn Fn(&Value) -> Value,
) -> Result<Value> {
    let mut cur = cur;
    for (k, seg) in segs.iter().enumerate() {
        let v = cur
            .as_object()
            .and_then(|m| m.get(&seg.name))
            .ok_or_else(|| eval_err(raw, format!("field '{}' not found", seg.name)))?;
        match &seg.index {
            None => cur = v,
            Some(ix) => {
                let a = v
                    .as_array()
                    .ok_or_else(|| eval_err(raw, format!("'{}' is not a list", seg.name)))?;
                match ix {
                    Index::At(i) => {
                        cur = a.get(*i).ok_or_else(|| {
                            let n = a.len();
                            let sfx = if n == 0 {
                                "; the producing step returned no rows"
                            } else {
                                ""
                            };
                            eval_err(
                                raw,
                                format!(
                                    "index {i} out of range for '{}' (length {n}){sfx}",
                                    seg.name
                                ),
                            )
                        })?
                    }
                    Index::All => {
                        let out: Result<Vec<Value>> = a
                            .iter()
                            .map(|e| eval_from(raw, &segs[k + 1..], e, leaf))
                            .collect();
                        return Ok(Value::Array(out?));
                    }
                }
            }
        }
    }
    Ok(leaf(cur))
}

/// One reference found in args: its location and its parse result.
pub struct FoundRef {
    /// Where the reference object sits inside `args`: object keys and array indices.
    pub path: Vec<Value>,
    /// The parsed `$ref` value, or the [`Error::RefSyntax`] parse error.
    pub parsed: Result<RefPath>,
}

/// Whether `v` is a reference object (exactly one key `$ref`).
pub fn ref_of(v: &Value) -> Option<&Value> {
    let m = v.as_object()?;
    if m.len() == 1 {
        m.get("$ref")
    } else {
        None
    }
}

/// Parses the value of a `$ref` key.
pub fn parse_ref_value(r: &Value) -> Result<RefPath> {
    match r {
        Value::String(s) => RefPath::parse(s),
        other => Err(err(format!(
            "bad $ref {}",
            tgms_engine::canon::to_string(other)
        ))),
    }
}

/// Every reference inside `args` (any depth), in document order.
pub fn find_refs(args: &Value) -> Vec<FoundRef> {
    fn walk(v: &Value, path: &mut Vec<Value>, out: &mut Vec<FoundRef>) {
        if let Some(r) = ref_of(v) {
            out.push(FoundRef {
                path: path.clone(),
                parsed: parse_ref_value(r),
            });
            return;
        }
        match v {
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(Value::from(i));
                    walk(x, path, out);
                    path.pop();
                }
            }
            Value::Object(m) => {
                for (k, x) in m {
                    path.push(Value::from(k.as_str()));
                    walk(x, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(args, &mut Vec::new(), &mut out);
    out
}
