//! The version-row table (`docs/export.md`, `docs/sql.md`): one row per stored node or edge
//! version, its columns, and their typed Arrow schema. `tgms export-rows` writes this table
//! and `tgms sql` queries it in place, so both name and type every column the same way.
//!
//! Typed schema: the columns of [`COLUMNS`], with the four times `vt_s, vt_e, tt_s, tt_e` as
//! `TIMESTAMP(µs, UTC)` (never null: an open end is the store's own `OPEN_END` = 2^62 µs,
//! named in the schema metadata `tgms.open_end_us`), every other column `Utf8` (`props` and
//! `provenance_ref` canonical JSON text), then one column `prop_<name>` per prop name in the
//! rows (sorted): `Int64`, `Float64`, `Utf8` or `Boolean` when every value of that prop has
//! that type, else `Utf8` holding the value's JSON text (metadata `tgms.json = "true"`); null
//! where a row does not have the prop.

use datafusion::arrow::array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder,
};
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tgms_engine::{canon, Snapshot, Table, TimeCols, OPEN_END};

/// The columns of a version row, in order.
pub const COLUMNS: [&str; 20] = [
    "kind",
    "vid",
    "uid",
    "label",
    "eid",
    "src",
    "dst",
    "rel_type",
    "disc",
    "vt_s",
    "vt_e",
    "tt_s",
    "tt_e",
    "props",
    "source",
    "provenance_ref",
    "origin",
    "reason",
    "closed_by",
    "close_reason",
];

/// Indexes (into [`COLUMNS`]) of the four time columns, `vt_s … tt_e`.
pub const TIME_COLUMNS: std::ops::Range<usize> = 9..13;

/// Index (into [`COLUMNS`]) of `props`.
pub const PROPS: usize = 13;

/// Whether each column of [`COLUMNS`] may be null (it does not apply to the row's kind, or
/// the row has no reason / was not closed).
pub const OPTIONAL: [bool; 20] = [
    false, false, true, true, true, true, true, true, true, false, false, false, false, false,
    false, false, false, true, true, true,
];

/// The value kinds seen in one column of JSON values (a prop across a store, or an inferred
/// column of operator rows), joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only JSON nulls (or nothing) seen.
    Null,
    /// Integers that fit `i64`.
    Int,
    /// Other numbers (or integers mixed with them).
    Float,
    /// Strings.
    Str,
    /// Booleans.
    Bool,
    /// Arrays, objects, or values of different kinds mixed: kept as JSON text.
    Json,
}

impl Kind {
    /// The kind of one JSON value.
    pub fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(_) => Kind::Float,
            Value::String(_) => Kind::Str,
            Value::Bool(_) => Kind::Bool,
            _ => Kind::Json,
        }
    }
    /// The kind of a column holding values of both kinds (`Json` when they differ, but
    /// integers and floats make a `Float` column and nulls go with anything).
    pub fn join(self, o: Kind) -> Kind {
        match (self, o) {
            (a, b) if a == b => a,
            (Kind::Null, b) => b,
            (a, Kind::Null) => a,
            (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
            _ => Kind::Json,
        }
    }
    /// The Arrow type of a prop column of this kind.
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Str | Kind::Null | Kind::Json => DataType::Utf8,
        }
    }
    /// A column of this kind holds each value's JSON text.
    pub fn is_json(self) -> bool {
        matches!(self, Kind::Null | Kind::Json)
    }
}

/// `tt_e` of a row with transaction times `[tt_s, tt_e)` as believed at `as_of` (every
/// stored row as it is when `None`), or `None` when the row was not believed then. A row
/// closed after `as_of` shows `tt_e` open (`OPEN_END`), and then no `closed_by` /
/// `close_reason`: the close had not happened.
pub fn believed_tt_e(tt_s: i64, tt_e: i64, as_of: Option<i64>) -> Option<i64> {
    match as_of {
        None => Some(tt_e),
        Some(tt) if tt_s <= tt && tt < tt_e => Some(OPEN_END),
        Some(_) => None,
    }
}

/// The kind of every prop name across the stored rows (believed at `as_of` when given):
/// one pass over the rows' content ids and transaction ends, a stretch of positions at a
/// time, parsing each distinct props text once (rows share their props text: the store
/// interns it, so a text seen is found by its address before it is hashed).
pub fn prop_kinds(snap: &Snapshot<'_>, as_of: Option<i64>) -> BTreeMap<String, Kind> {
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let cols = TimeCols {
        vt_s: false,
        vt_e: false,
        tt_s: as_of.is_some(),
    };
    for table in [Table::Nodes, Table::Edges] {
        let n = match table {
            Table::Nodes => snap.node_positions(),
            Table::Edges => snap.edge_positions(),
        };
        for start in (0..n).step_by(PROP_KINDS_STRETCH) {
            let pos = start..(start + PROP_KINDS_STRETCH).min(n);
            let t = snap.row_times(table, pos.clone(), cols);
            let props = snap.row_props(table, pos);
            let mut last: Option<&str> = None;
            for (j, &text) in props.iter().enumerate() {
                if last.is_some_and(|l| std::ptr::eq(l, text)) || text == "{}" {
                    continue;
                }
                let tt_s = t.tt_s.get(j).copied().unwrap_or(0);
                let believed = t.tt_e.get(j).and_then(|&e| believed_tt_e(tt_s, e, as_of));
                if !t.stored.get(j).copied().unwrap_or(false) || believed.is_none() {
                    continue;
                }
                last = Some(text);
                if !seen.insert(text) {
                    continue;
                }
                if let Ok(Value::Object(m)) = canon::parse(text) {
                    for (k, v) in m {
                        let e = kinds.entry(k).or_insert(Kind::Null);
                        *e = e.join(Kind::of(&v));
                    }
                }
            }
        }
    }
    kinds
}

/// Storage positions [`prop_kinds`] reads at a time.
const PROP_KINDS_STRETCH: usize = 1 << 16;

/// The typed schema of the version rows with these prop columns.
pub fn schema(props: &BTreeMap<String, Kind>) -> SchemaRef {
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let mut fields: Vec<Field> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            if TIME_COLUMNS.contains(&i) {
                Field::new(*name, ts.clone(), false)
            } else {
                Field::new(*name, DataType::Utf8, OPTIONAL[i])
            }
        })
        .collect();
    for (name, kind) in props {
        let f = Field::new(format!("prop_{name}"), kind.data_type(), true);
        fields.push(if kind.is_json() {
            f.with_metadata(HashMap::from([("tgms.json".into(), "true".into())]))
        } else {
            f
        });
    }
    Arc::new(
        Schema::new(fields).with_metadata(HashMap::from([
            ("tgms.open_end_us".to_string(), OPEN_END.to_string()),
            (
                "tgms.times".to_string(),
                "vt_s, vt_e, tt_s, tt_e: TIMESTAMP(us, UTC); an open end is tgms.open_end_us"
                    .to_string(),
            ),
        ])),
    )
}

/// The builder of one `prop_<name>` column.
pub enum PropCol {
    /// `Int64`.
    Int(Int64Builder),
    /// `Float64`.
    Float(Float64Builder),
    /// `Utf8`.
    Str(StringBuilder),
    /// `Boolean`.
    Bool(BooleanBuilder),
    /// `Utf8` JSON text.
    Json(StringBuilder),
}

impl PropCol {
    /// An empty column of this kind.
    pub fn new(k: Kind) -> PropCol {
        match k {
            Kind::Int => PropCol::Int(Int64Builder::new()),
            Kind::Float => PropCol::Float(Float64Builder::new()),
            Kind::Str => PropCol::Str(StringBuilder::new()),
            Kind::Bool => PropCol::Bool(BooleanBuilder::new()),
            Kind::Null | Kind::Json => PropCol::Json(StringBuilder::new()),
        }
    }

    /// Appends one value (`None` or JSON null: null). The column was typed from every
    /// value of its prop, so a value of another type only occurs for JSON columns (which
    /// take anything).
    pub fn push(&mut self, v: Option<&Value>) {
        self.push_n(v, 1)
    }

    /// Appends one value `n` times.
    pub fn push_n(&mut self, v: Option<&Value>, n: usize) {
        let v = v.filter(|v| !v.is_null());
        // `x` `n` times, or `n` nulls.
        macro_rules! fill {
            ($b:expr, $x:expr) => {
                match $x {
                    Some(x) => $b.append_value_n(x, n),
                    None => $b.append_nulls(n),
                }
            };
        }
        match self {
            PropCol::Int(b) => fill!(b, v.and_then(Value::as_i64)),
            PropCol::Float(b) => fill!(b, v.and_then(Value::as_f64)),
            PropCol::Str(b) => fill!(b, v.and_then(Value::as_str)),
            PropCol::Json(b) => fill!(b, v.map(canon::to_string)),
            PropCol::Bool(b) => match v.and_then(Value::as_bool) {
                Some(x) => b.append_n(n, x),
                None => b.append_nulls(n),
            },
        }
    }

    /// The column built so far (the builder starts over).
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            PropCol::Int(b) => Arc::new(b.finish()),
            PropCol::Float(b) => Arc::new(b.finish()),
            PropCol::Str(b) | PropCol::Json(b) => Arc::new(b.finish()),
            PropCol::Bool(b) => Arc::new(b.finish()),
        }
    }
}
