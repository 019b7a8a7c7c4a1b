//! Operator results as Arrow (`docs/python.md`): the Arrow schema of an operator's output
//! list, derived from its registry contract (`operators.md` §2.3), and the record batch of
//! the list's rows. The Python package hands these to pyarrow / polars through the Arrow
//! PyCapsule interface; the schema is the declared one, whatever rows a call returned.
//!
//! Contract → Arrow: `int` → `Int64`, `float` / `number` → `Float64`, `bool` → `Boolean`,
//! `str` / `uid` / `hex` → `Utf8`, `list<T>` → `List<T>`, `obj{f: T, …}` → `Struct`,
//! `any` / `obj{*}` → `Utf8` holding the value's canonical JSON text (field metadata
//! `tgms.json = "true"`). Every field is nullable: a field an operator leaves out of a row
//! is null; an explicit JSON null is accepted only where the contract allows it (`T|null`,
//! `any`). A list of objects is one column per field; a list of anything else is one
//! column named `value`. A list of open objects (`list<obj{*}>`, e.g. `aggregate_events`
//! rows, whose keys depend on the arguments) has its columns inferred from the rows: the
//! keys in sorted order, each nullable, typed `Int64` when every non-null value is an
//! integer, `Float64` when every one is a number, `Utf8` / `Boolean` when all are strings /
//! booleans, JSON text otherwise (schema metadata `tgms.inferred = "true"`).

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, ListArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tgms_operators::contract::Contract;

/// A value that does not fit its declared contract, or an operator / list that does not
/// exist. Rows come from the operators, whose outputs are checked against their contracts,
/// so the first kind is a bug; it is reported, never papered over.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrowRowsError {
    /// No operator of this name is registered.
    #[error("unknown operator {0:?}")]
    UnknownOp(String),
    /// The operator has no list-valued output of this name.
    #[error("operator {op} has no list output {list:?} (its lists: {lists})")]
    UnknownList {
        /// The operator asked for.
        op: String,
        /// The list output asked for.
        list: String,
        /// The operator's list outputs, comma-separated.
        lists: String,
    },
    /// A value does not fit the contract of its column.
    #[error("{path}: expected {expected}, found {found}")]
    Mismatch {
        /// Where the value sits, e.g. `rows[].props.n` (`[]` for each list level).
        path: String,
        /// What the contract allows there, in words.
        expected: String,
        /// The value found, as canonical JSON cut to 60 characters (`null` when absent).
        found: String,
    },
    /// Building the Arrow arrays or batch failed.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
}

type Res<T> = Result<T, ArrowRowsError>;

/// The Arrow type of a contract and whether it is nullable.
pub fn data_type(c: &Contract) -> (DataType, bool) {
    match c {
        Contract::Int => (DataType::Int64, false),
        Contract::Float | Contract::Number => (DataType::Float64, false),
        Contract::Bool => (DataType::Boolean, false),
        Contract::Str | Contract::Uid | Contract::Hex | Contract::OpenObj => {
            (DataType::Utf8, false)
        }
        // `any` includes JSON null, which is an Arrow null.
        Contract::Any => (DataType::Utf8, true),
        Contract::Nullable(t) => (data_type(t).0, true),
        Contract::List(t) => (DataType::List(Arc::new(field("item", t))), false),
        Contract::Obj(fields) => (
            DataType::Struct(fields.iter().map(|(n, t)| field(n, t)).collect()),
            false,
        ),
    }
}

/// The Arrow field `name` of contract `c` (JSON-text fields marked in the metadata). Every
/// field is nullable: operators leave out the fields that do not apply to a row (e.g.
/// `version_history`'s edge fields on node rows), and a left-out field is null.
pub fn field(name: &str, c: &Contract) -> Field {
    let (dt, _) = data_type(c);
    let f = Field::new(name, dt, true);
    if is_json_text(c) {
        f.with_metadata(HashMap::from([("tgms.json".into(), "true".into())]))
    } else {
        f
    }
}

fn is_json_text(c: &Contract) -> bool {
    match c {
        Contract::Any | Contract::OpenObj => true,
        Contract::Nullable(t) => is_json_text(t),
        _ => false,
    }
}

/// The columns of a list whose elements have contract `elem` (`rows`: the list's values,
/// for open objects, whose columns are inferred from them).
fn columns_of(elem: &Contract, rows: &[Value]) -> Vec<(String, Contract)> {
    match elem {
        Contract::Obj(fields) => fields.clone(),
        Contract::OpenObj => infer_columns(rows),
        other => vec![("value".into(), other.clone())],
    }
}

/// The value kinds of one column of JSON values (shared with the version-row columns).
pub use tgms_sql::columns::Kind;

/// The columns of open-object rows: every key (sorted), nullable, typed by its values.
fn infer_columns(rows: &[Value]) -> Vec<(String, Contract)> {
    let mut kinds: std::collections::BTreeMap<&str, Kind> = Default::default();
    for r in rows {
        if let Value::Object(m) = r {
            for (k, v) in m {
                let e = kinds.entry(k.as_str()).or_insert(Kind::Null);
                *e = e.join(Kind::of(v));
            }
        }
    }
    kinds
        .into_iter()
        .map(|(k, kind)| {
            let c = match kind {
                Kind::Int => Contract::Int,
                Kind::Float => Contract::Number,
                Kind::Str => Contract::Str,
                Kind::Bool => Contract::Bool,
                Kind::Null | Kind::Json => Contract::Any,
            };
            (k.to_string(), Contract::Nullable(Box::new(c)))
        })
        .collect()
}

/// The element contract of list output `list` of operator `op`.
pub fn list_contract(op: &str, list: &str) -> Res<Contract> {
    let spec = tgms_operators::lookup(op).ok_or_else(|| ArrowRowsError::UnknownOp(op.into()))?;
    match spec.output(list).map(|o| &o.contract) {
        Some(Contract::List(elem)) => Ok((**elem).clone()),
        _ => Err(ArrowRowsError::UnknownList {
            op: op.into(),
            list: list.into(),
            lists: list_outputs(op).join(", "),
        }),
    }
}

/// The names of the list outputs of operator `op`, in declaration order (`rows` first when
/// the operator pages rows).
pub fn list_outputs(op: &str) -> Vec<String> {
    let Some(spec) = tgms_operators::lookup(op) else {
        return Vec::new();
    };
    let mut v: Vec<String> = spec
        .outputs
        .iter()
        .filter(|o| matches!(o.contract, Contract::List(_)))
        .map(|o| o.name.clone())
        .collect();
    if let Some(i) = v.iter().position(|n| n == "rows") {
        let r = v.remove(i);
        v.insert(0, r);
    }
    v
}

/// The declared Arrow schema of list output `list` of operator `op` (for a list of open
/// objects, the one inferred from `rows`).
pub fn list_schema(op: &str, list: &str, rows: &[Value]) -> Res<SchemaRef> {
    let elem = list_contract(op, list)?;
    Ok(schema_of(op, list, &elem, &columns_of(&elem, rows)))
}

fn schema_of(op: &str, list: &str, elem: &Contract, cols: &[(String, Contract)]) -> SchemaRef {
    let fields: Vec<Field> = cols.iter().map(|(n, c)| field(n, c)).collect();
    let mut meta = HashMap::from([
        ("tgms.op".to_string(), op.to_string()),
        ("tgms.list".to_string(), list.to_string()),
    ]);
    if matches!(elem, Contract::OpenObj) {
        meta.insert("tgms.inferred".into(), "true".into());
    }
    Arc::new(Schema::new(fields).with_metadata(meta))
}

/// The record batch of list output `list` of an envelope of operator `op` (an absent list,
/// e.g. a conditional one not asked for, is an empty batch of the declared schema).
pub fn list_batch(op: &str, list: &str, envelope: &Value) -> Res<RecordBatch> {
    let elem = list_contract(op, list)?;
    let empty = Vec::new();
    let rows = envelope
        .get(list)
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let cols = columns_of(&elem, rows);
    let schema = schema_of(op, list, &elem, &cols);
    let arrays = cols
        .iter()
        .map(|(name, c)| {
            let vals: Vec<Option<&Value>> = if matches!(elem, Contract::Obj(_) | Contract::OpenObj)
            {
                rows.iter().map(|r| r.get(name)).collect()
            } else {
                rows.iter().map(Some).collect()
            };
            array(c, &vals, false, &format!("{list}[].{name}"))
        })
        .collect::<Res<Vec<_>>>()?;
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.len()));
    Ok(RecordBatch::try_new_with_options(schema, arrays, &opts)?)
}

fn found(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".into(),
        Some(v) => {
            let s = tgms_engine::canon::to_string(v);
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(60).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// The array of `vals` under contract `c`. `None` and JSON null are nulls, allowed where the
/// contract is nullable or `under_null` (children of a null parent, masked by it).
fn array<'a>(
    c: &Contract,
    vals: &[Option<&'a Value>],
    under_null: bool,
    path: &str,
) -> Res<ArrayRef> {
    let (c, nullable) = match c {
        Contract::Nullable(t) => (&**t, true),
        t => (t, data_type(t).1),
    };
    let mismatch = |v: Option<&Value>, expected: &str| ArrowRowsError::Mismatch {
        path: path.into(),
        expected: expected.into(),
        found: found(v),
    };
    let may_be_null = nullable || under_null;
    // Each value, or None for a (permitted) null.
    fn checked<'v>(v: Option<&'v Value>, may_be_null: bool, path: &str) -> Res<Option<&'v Value>> {
        match v {
            // A left-out field (see [`field`]), or a null the contract allows.
            None => Ok(None),
            Some(Value::Null) if may_be_null => Ok(None),
            Some(Value::Null) => Err(ArrowRowsError::Mismatch {
                path: path.into(),
                expected: "a value (the field is not nullable)".into(),
                found: "null".into(),
            }),
            Some(x) => Ok(Some(x)),
        }
    }
    let present = |v: Option<&'a Value>| checked(v, may_be_null, path);
    Ok(match c {
        Contract::Int => {
            let mut b = Int64Builder::with_capacity(vals.len());
            for v in vals {
                match present(*v)? {
                    None => b.append_null(),
                    Some(x) => b.append_value(x.as_i64().ok_or_else(|| mismatch(*v, "int"))?),
                }
            }
            Arc::new(b.finish())
        }
        Contract::Float | Contract::Number => {
            let mut b = Float64Builder::with_capacity(vals.len());
            for v in vals {
                match present(*v)? {
                    None => b.append_null(),
                    Some(x) => b.append_value(x.as_f64().ok_or_else(|| mismatch(*v, "number"))?),
                }
            }
            Arc::new(b.finish())
        }
        Contract::Bool => {
            let mut b = BooleanBuilder::with_capacity(vals.len());
            for v in vals {
                match present(*v)? {
                    None => b.append_null(),
                    Some(x) => b.append_value(x.as_bool().ok_or_else(|| mismatch(*v, "bool"))?),
                }
            }
            Arc::new(b.finish())
        }
        Contract::Str | Contract::Uid | Contract::Hex => {
            let mut b = StringBuilder::with_capacity(vals.len(), vals.len() * 16);
            for v in vals {
                match present(*v)? {
                    None => b.append_null(),
                    Some(x) => b.append_value(x.as_str().ok_or_else(|| mismatch(*v, "str"))?),
                }
            }
            Arc::new(b.finish())
        }
        Contract::Any | Contract::OpenObj => {
            let mut b = StringBuilder::with_capacity(vals.len(), vals.len() * 16);
            for v in vals {
                match present(*v)? {
                    None => b.append_null(),
                    Some(x) if matches!(c, Contract::OpenObj) && !x.is_object() => {
                        return Err(mismatch(*v, "an object"))
                    }
                    Some(x) => b.append_value(tgms_engine::canon::to_string(x)),
                }
            }
            Arc::new(b.finish())
        }
        Contract::List(elem) => {
            let mut lens = Vec::with_capacity(vals.len());
            let mut valid = Vec::with_capacity(vals.len());
            let mut children: Vec<Option<&Value>> = Vec::new();
            for v in vals {
                match present(*v)? {
                    None => {
                        lens.push(0);
                        valid.push(false);
                    }
                    Some(Value::Array(a)) => {
                        lens.push(a.len());
                        valid.push(true);
                        children.extend(a.iter().map(Some));
                    }
                    Some(_) => return Err(mismatch(*v, "a list")),
                }
            }
            let child = array(elem, &children, false, &format!("{path}[]"))?;
            let nulls = valid.iter().any(|ok| !ok).then(|| NullBuffer::from(valid));
            Arc::new(ListArray::try_new(
                Arc::new(field("item", elem)),
                OffsetBuffer::from_lengths(lens),
                child,
                nulls,
            )?)
        }
        Contract::Obj(fields) => {
            let mut valid = Vec::with_capacity(vals.len());
            let mut objs: Vec<Option<&serde_json::Map<String, Value>>> =
                Vec::with_capacity(vals.len());
            for v in vals {
                match present(*v)? {
                    None => {
                        valid.push(false);
                        objs.push(None);
                    }
                    Some(Value::Object(m)) => {
                        valid.push(true);
                        objs.push(Some(m));
                    }
                    Some(_) => return Err(mismatch(*v, "an object")),
                }
            }
            let any_null = valid.iter().any(|ok| !ok);
            let arrays = fields
                .iter()
                .map(|(name, fc)| {
                    let child: Vec<Option<&Value>> =
                        objs.iter().map(|o| o.and_then(|m| m.get(name))).collect();
                    // A child of a null parent is null (masked by the parent's null).
                    let masked: Vec<Option<&Value>> = child
                        .iter()
                        .zip(&valid)
                        .map(|(c, ok)| if *ok { *c } else { None })
                        .collect();
                    array(fc, &masked, any_null, &format!("{path}.{name}"))
                })
                .collect::<Res<Vec<_>>>()?;
            let fields: Fields = fields.iter().map(|(n, t)| field(n, t)).collect();
            let nulls = any_null.then(|| NullBuffer::from(valid));
            if fields.is_empty() {
                Arc::new(StructArray::new_empty_fields(vals.len(), nulls))
            } else {
                Arc::new(StructArray::try_new(fields, arrays, nulls)?)
            }
        }
        Contract::Nullable(_) => unreachable!("unwrapped above"),
    })
}

/// The envelope's fields other than its lists (digests, completeness, totals, `as_of_tt`,
/// certificates): what the Python package returns as `Result.meta`.
pub fn envelope_meta(op: &str, envelope: &Value) -> Value {
    let lists = list_outputs(op);
    match envelope {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !lists.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int64Array, StringArray};
    use serde_json::json;

    #[test]
    fn every_list_output_has_a_schema_and_an_empty_batch() {
        for spec in tgms_operators::registry() {
            for list in list_outputs(spec.name) {
                let schema = list_schema(spec.name, &list, &[]).unwrap();
                let b = list_batch(spec.name, &list, &json!({})).unwrap();
                assert_eq!(b.num_rows(), 0);
                assert_eq!(b.schema(), schema, "{}.{list}", spec.name);
            }
        }
    }

    #[test]
    fn nested_values_keep_their_types_and_nulls() {
        let c = Contract::parse("list<obj{a: int, b: str|null, c: list<int>, d: any}>").unwrap();
        let Contract::List(elem) = c else { panic!() };
        let rows = [
            json!({"a": 1, "b": "x", "c": [1, 2], "d": {"k": [1]}}),
            json!({"a": -5, "b": null, "c": [], "d": "s"}),
        ];
        let cols = columns_of(&elem, &rows);
        let get =
            |name: &str| -> Vec<Option<&Value>> { rows.iter().map(|r| r.get(name)).collect() };
        let a = array(&cols[0].1, &get("a"), false, "a").unwrap();
        let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(a.values().to_vec(), vec![1, -5]);
        let b = array(&cols[1].1, &get("b"), false, "b").unwrap();
        assert_eq!(b.null_count(), 1);
        let c = array(&cols[2].1, &get("c"), false, "c").unwrap();
        let c = c.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(c.value_offsets().to_vec(), vec![0, 2, 2]);
        let d = array(&cols[3].1, &get("d"), false, "d").unwrap();
        let d = d.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(d.value(0), r#"{"k":[1]}"#);
        assert_eq!(d.value(1), r#""s""#);
    }

    #[test]
    fn open_object_rows_get_inferred_columns() {
        let rows = [
            json!({"n": 1, "x": 1, "s": "a", "m": [1]}),
            json!({"n": 2, "x": 2.5, "s": null, "m": "t"}),
        ];
        let cols = infer_columns(&rows);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["m", "n", "s", "x"]);
        let types: Vec<DataType> = cols.iter().map(|(_, c)| data_type(c).0).collect();
        assert_eq!(
            types,
            [
                DataType::Utf8,
                DataType::Int64,
                DataType::Utf8,
                DataType::Float64
            ]
        );
        assert!(cols.iter().all(|(_, c)| data_type(c).1), "all nullable");
    }

    #[test]
    fn a_value_off_its_contract_is_an_error_naming_the_field() {
        let c = Contract::parse("int").unwrap();
        let v = json!("seven");
        let e = array(&c, &[Some(&v)], false, "rows[].n").unwrap_err();
        assert!(e.to_string().contains("rows[].n"), "{e}");
        let e = array(&c, &[Some(&Value::Null)], false, "rows[].n").unwrap_err();
        assert!(e.to_string().contains("not nullable"), "{e}");
        // A left-out field is null.
        assert_eq!(
            array(&c, &[None], false, "rows[].n").unwrap().null_count(),
            1
        );
    }
}
