//! Output contract types of `operators.md` §2.3 (`int`, `float`, `number`, `bool`, `str`,
//! `uid`, `hex`, `any`, `T|null`, `list<T>`, `obj{f: T, ...}`, `obj{*}`), parsed from the
//! spec's own notation, rendered as JSON Schema for tool output schemas, and checked against
//! payloads (tests and the verifier).

use serde_json::{json, Map, Value};

/// A contract type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contract {
    /// `int`: a JSON number without fraction or exponent.
    Int,
    /// `float`: a JSON number written as a float.
    Float,
    /// `number`: any JSON number.
    Number,
    /// `bool`.
    Bool,
    /// `str`: any string.
    Str,
    /// `uid`: a string naming an entity uid.
    Uid,
    /// `hex`: a string of hex digits (a digest).
    Hex,
    /// `any`: any JSON value, null included.
    Any,
    /// `T|null`: null, or a value of the inner contract.
    Nullable(Box<Contract>),
    /// `list<T>`: an array whose every element has the inner contract.
    List(Box<Contract>),
    /// Closed object: only the listed fields exist.
    Obj(Vec<(String, Contract)>),
    /// Open object `obj{*}`.
    OpenObj,
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> String {
        self.ws();
        let st = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).into_owned()
    }
    fn ty(&mut self) -> Result<Contract, String> {
        let name = self.ident();
        let base = match name.as_str() {
            "int" => Contract::Int,
            "float" => Contract::Float,
            "number" => Contract::Number,
            "bool" => Contract::Bool,
            "str" => Contract::Str,
            "uid" => Contract::Uid,
            "hex" => Contract::Hex,
            "any" => Contract::Any,
            "list" => {
                if !self.eat(b'<') {
                    return Err(format!("expected '<' at {}", self.i));
                }
                let t = self.ty()?;
                if !self.eat(b'>') {
                    return Err(format!("expected '>' at {}", self.i));
                }
                Contract::List(Box::new(t))
            }
            "obj" => {
                if !self.eat(b'{') {
                    return Err(format!("expected '{{' at {}", self.i));
                }
                if self.eat(b'*') {
                    if !self.eat(b'}') {
                        return Err(format!("expected '}}' at {}", self.i));
                    }
                    Contract::OpenObj
                } else {
                    let mut fields = Vec::new();
                    loop {
                        let f = self.ident();
                        if f.is_empty() || !self.eat(b':') {
                            return Err(format!("expected 'field:' at {}", self.i));
                        }
                        fields.push((f, self.ty()?));
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return Err(format!("expected ',' or '}}' at {}", self.i));
                        }
                    }
                    Contract::Obj(fields)
                }
            }
            other => return Err(format!("unknown contract type '{other}' at {}", self.i)),
        };
        let save = self.i;
        if self.eat(b'|') {
            if self.ident() == "null" {
                return Ok(Contract::Nullable(Box::new(base)));
            }
            self.i = save;
        }
        Ok(base)
    }
}

impl Contract {
    /// Parses the spec notation, e.g. `list<obj{vid: hex, label: str|null}>`.
    pub fn parse(text: &str) -> Result<Contract, String> {
        let mut p = P {
            s: text.as_bytes(),
            i: 0,
        };
        let t = p.ty()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing text at {} in '{text}'", p.i));
        }
        Ok(t)
    }

    /// The JSON Schema describing values of this contract.
    pub fn json_schema(&self) -> Value {
        match self {
            Contract::Int => json!({"type": "integer"}),
            Contract::Float | Contract::Number => json!({"type": "number"}),
            Contract::Bool => json!({"type": "boolean"}),
            Contract::Str | Contract::Uid | Contract::Hex => json!({"type": "string"}),
            Contract::Any => json!({}),
            Contract::Nullable(t) => json!({"anyOf": [t.json_schema(), {"type": "null"}]}),
            Contract::List(t) => json!({"type": "array", "items": t.json_schema()}),
            Contract::OpenObj => json!({"type": "object"}),
            Contract::Obj(fields) => {
                let props: Map<String, Value> = fields
                    .iter()
                    .map(|(k, t)| (k.clone(), t.json_schema()))
                    .collect();
                json!({"type": "object", "properties": props, "additionalProperties": false})
            }
        }
    }

    /// The fields of a closed object contract (also through `list<...>` and `|null`).
    pub fn fields(&self) -> Option<&[(String, Contract)]> {
        match self {
            Contract::Obj(f) => Some(f),
            Contract::List(t) | Contract::Nullable(t) => t.fields(),
            _ => None,
        }
    }

    /// Checks that `v` conforms; returns the first mismatch as `path: problem`.
    /// `partial_rows` accepts an object carrying a subset of a closed object's fields
    /// (rows that carry "the node fields" or "the edge fields" of a union row contract).
    pub fn check(&self, v: &Value, partial_rows: bool) -> Result<(), String> {
        self.check_at(v, "$", partial_rows)
    }

    fn check_at(&self, v: &Value, at: &str, partial: bool) -> Result<(), String> {
        let bad = || {
            Err(format!(
                "{at}: {} does not conform to {self:?}",
                crate::json::to_string(v)
            ))
        };
        let is_float = |n: &serde_json::Number| crate::json::number_is_float(n);
        match (self, v) {
            (Contract::Any, _) => Ok(()),
            (Contract::Int, Value::Number(n)) if !is_float(n) => Ok(()),
            (Contract::Float, Value::Number(n)) if is_float(n) => Ok(()),
            (Contract::Number, Value::Number(_)) => Ok(()),
            (Contract::Bool, Value::Bool(_)) => Ok(()),
            (Contract::Str | Contract::Uid | Contract::Hex, Value::String(_)) => Ok(()),
            (Contract::Nullable(_), Value::Null) => Ok(()),
            (Contract::Nullable(t), _) => t.check_at(v, at, partial),
            (Contract::List(t), Value::Array(a)) => a
                .iter()
                .enumerate()
                .try_for_each(|(i, x)| t.check_at(x, &format!("{at}[{i}]"), partial)),
            (Contract::OpenObj, Value::Object(_)) => Ok(()),
            (Contract::Obj(fields), Value::Object(m)) => {
                for (k, x) in m {
                    match fields.iter().find(|(f, _)| f == k) {
                        None => return Err(format!("{at}: unexpected field '{k}'")),
                        Some((_, t)) => t.check_at(x, &format!("{at}.{k}"), partial)?,
                    }
                }
                if !partial {
                    if let Some((f, _)) = fields.iter().find(|(f, _)| !m.contains_key(f)) {
                        return Err(format!("{at}: missing field '{f}'"));
                    }
                }
                Ok(())
            }
            _ => bad(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_check() {
        let c = Contract::parse("list<obj{vid: hex, reason: str|null, props: obj{*}, n: int}>")
            .unwrap();
        assert!(c
            .check(
                &json!([{"vid": "ab", "reason": null, "props": {"x": 1}, "n": 3}]),
                false
            )
            .is_ok());
        assert!(c
            .check(
                &json!([{"vid": "ab", "reason": 1, "props": {}, "n": 3}]),
                false
            )
            .is_err());
        assert!(c.check(&json!([{"vid": "ab"}]), false).is_err());
        assert!(c.check(&json!([{"vid": "ab"}]), true).is_ok());
        assert!(Contract::parse("list<").is_err());
        assert!(Contract::parse("obj{a: int} x").is_err());
        assert!(Contract::parse("float")
            .unwrap()
            .check(&json!(2), false)
            .is_err());
    }
}
