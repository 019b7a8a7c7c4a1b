//! One record batch of version rows: the stored rows at a range of storage positions of one
//! table (node rows or edge rows), as believed at the table's `as_of_tt`, that can pass the
//! pushed filters, with only the projected columns built (a `count(*)` builds none; the
//! derived ids `vid` and `eid` and the prop columns cost only where a query reads them).

use crate::columns::{believed_tt_e, Kind, PropCol, COLUMNS, PROPS, TIME_COLUMNS};
use crate::filter::Pushed;
use datafusion::arrow::array::builder::{StringBuilder, StringViewBuilder};
use datafusion::arrow::array::{
    new_null_array, ArrayRef, RecordBatch, RecordBatchOptions, TimestampMicrosecondArray,
    UInt32Array,
};
use datafusion::arrow::compute::{take, TakeOptions};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tgms_engine::{canon, EdgeVersion, NodeVersion, Origin, Snapshot, Table, TimeCols, OPEN_END};

/// What every batch of one scan builds.
#[derive(Debug)]
pub(crate) struct Shape {
    /// The projected schema.
    pub schema: SchemaRef,
    /// Each projected column's index into the full schema (`COLUMNS`, then the props).
    pub columns: Vec<usize>,
    /// The full schema's props (name, kind), in column order.
    pub props: Vec<(String, Kind)>,
    pub pushed: Pushed,
    pub as_of: Option<i64>,
    /// Every uid's name in id order, once the scan has shown as many endpoint values as
    /// there are uids ([`Shape::uid_names`]).
    pub name_table: OnceLock<ArrayRef>,
    /// The endpoint values (`src`, `dst`) the scan has shown, all batches together.
    pub endpoint_rows: AtomicUsize,
}

impl Shape {
    /// The names the endpoint columns of a batch of `rows` rows are gathered from, or `None`
    /// when they are read row by row. A scan reads names row by row until it has shown as
    /// many as the store has uids, then builds the table of every uid's name once and
    /// gathers from it: a selective scan never pays for the whole table, and a long one
    /// reads each name once, not once per row (it costs at most about twice the cheaper).
    fn uid_names(&self, snap: &Snapshot<'_>, rows: usize) -> Option<&ArrayRef> {
        if let Some(names) = self.name_table.get() {
            return Some(names);
        }
        let n = snap.uid_ids();
        if self.endpoint_rows.fetch_add(rows, Ordering::Relaxed) < n {
            return None;
        }
        Some(self.name_table.get_or_init(|| {
            let mut b = StringViewBuilder::with_capacity(n);
            for id in 0..n {
                b.append_value(snap.uid_name(id as u32));
            }
            Arc::new(b.finish())
        }))
    }
}

/// A node or an edge version.
#[derive(Clone, Copy)]
enum Ver<'a> {
    N(NodeVersion<'a>),
    E(EdgeVersion<'a>),
}

/// A field both version kinds have.
macro_rules! common {
    ($v:expr, $f:ident) => {
        match $v {
            Ver::N(n) => n.$f(),
            Ver::E(e) => e.$f(),
        }
    };
}

/// How one projected column is built.
enum Out {
    /// A time column (0..4: `vt_s … tt_e`), built from the block-decoded times.
    Time(usize),
    /// `src`, `dst` or `rel_type` (5..=7), built from identity ids.
    Ident(usize),
    /// Another text column (its index into `COLUMNS`), read from each row's version.
    Text(usize),
    /// A prop column (the prop's name and kind), read from each row's props.
    Prop(String, Kind),
    /// `closed_by` or `close_reason` of a batch without a close to show: all null.
    NoClose,
}

/// The batch of the rows of `table` at storage positions `pos` in `snap` (`None` when no
/// row there is kept). The rows kept are found first (from the block-decoded times alone);
/// then each column is built over them in one loop of its own: the times and identities
/// from their decoded columns, the props from runs of rows that share a props text, the
/// close columns from the few rows whose close is shown, and the other text columns from
/// each row's version.
pub(crate) fn batch(
    snap: &Snapshot<'_>,
    shape: &Shape,
    table: Table,
    pos: Range<usize>,
) -> Result<Option<RecordBatch>, ArrowError> {
    let mut outs: Vec<Out> = shape
        .columns
        .iter()
        .map(|&c| {
            if TIME_COLUMNS.contains(&c) {
                Out::Time(c - TIME_COLUMNS.start)
            } else if (5..=7).contains(&c) {
                Out::Ident(c)
            } else if c < COLUMNS.len() {
                Out::Text(c)
            } else {
                let (name, kind) = &shape.props[c - COLUMNS.len()];
                Out::Prop(name.clone(), *kind)
            }
        })
        .collect();
    // The times a projected column, a pushed filter or the belief test (`tt_s`, with an
    // `as_of`) reads; the others are not decoded, and read as 0 here.
    let reads = |i: usize| {
        outs.iter().any(|o| matches!(o, Out::Time(x) if *x == i)) || shape.pushed.reads(i)
    };
    let cols = TimeCols {
        vt_s: reads(0),
        vt_e: reads(1),
        tt_s: reads(2) || shape.as_of.is_some(),
    };
    let t = snap.row_times(table, pos.clone(), cols);
    let time = |v: &[i64], j: usize| v.get(j).copied().unwrap_or(0);
    // The rows kept (offsets into `t`) and their `tt_e` as shown.
    let mut keep: Vec<usize> = Vec::new();
    let mut shown: Vec<i64> = Vec::new();
    for j in 0..t.stored.len() {
        let (tt_s, tt_e) = (time(&t.tt_s, j), t.tt_e[j]);
        let shown_tt_e = match believed_tt_e(tt_s, tt_e, shape.as_of) {
            Some(x) if t.stored[j] => x,
            _ => continue,
        };
        if shape
            .pushed
            .passes(&[time(&t.vt_s, j), time(&t.vt_e, j), tt_s, shown_tt_e])
        {
            keep.push(j);
            shown.push(shown_tt_e);
        }
    }
    if keep.is_empty() {
        return Ok(None);
    }
    // A row never closed has no close to show; a close after `as_of` had not happened then.
    let closed = |r: usize, j: usize| t.tt_e[j] != OPEN_END && shown[r] == t.tt_e[j];
    if !keep.iter().enumerate().any(|(r, &j)| closed(r, j)) {
        for o in &mut outs {
            if matches!(o, Out::Text(18 | 19)) {
                *o = Out::NoClose;
            }
        }
    }
    let at = |j: usize| (pos.start + j) as u32;
    // The identity ids (`c`: 5 `src`, 6 `dst`, 7 `rel_type`) of the kept edge rows: from the
    // shared edge columns (one array read instead of the identity's random reads), the
    // rows above them from their versions.
    let ids = |c: usize| -> Vec<Option<u32>> {
        let cols = snap.edge_columns();
        let col = match c {
            5 => cols.src(),
            6 => cols.dst(),
            _ => cols.rel(),
        };
        keep.iter()
            .map(|&j| match col.get(at(j) as usize) {
                Some(&id) => Some(id),
                None => snap.edge_at(at(j)).map(|e| match c {
                    5 => e.src_id(),
                    6 => e.dst_id(),
                    _ => e.rel_id(),
                }),
            })
            .collect()
    };
    // The version of the row at storage offset `j`.
    let version = |j: usize| match table {
        Table::Nodes => snap.node_at(at(j)).map(Ver::N),
        Table::Edges => snap.edge_at(at(j)).map(Ver::E),
    };
    // The kept rows' props texts, in runs of one text (rows repeat their props text; the
    // store interns it, so a run is found by the text's address): each run's text is parsed
    // once and each prop column appends its value once per run.
    let props_runs: Vec<(&str, usize)> = if outs.iter().any(|o| matches!(o, Out::Prop(..))) {
        let props = snap.row_props(table, pos.clone());
        let mut runs: Vec<(&str, usize)> = Vec::new();
        for &j in &keep {
            let text = props.get(j).copied().unwrap_or("{}");
            match runs.last_mut() {
                Some((t, n)) if std::ptr::eq(*t, text) => *n += 1,
                _ => runs.push((text, 1)),
            }
        }
        runs
    } else {
        Vec::new()
    };
    // Each distinct text parsed once; `run_map[i]` indexes run `i`'s parse.
    let mut maps: Vec<Map<String, Value>> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let run_map: Vec<usize> = props_runs
        .iter()
        .map(|&(text, _)| {
            *seen.entry(text).or_insert_with(|| {
                maps.push(match canon::parse(text) {
                    Ok(Value::Object(m)) => m,
                    _ => Map::new(),
                });
                maps.len() - 1
            })
        })
        .collect();
    let column = |o: &Out| -> Result<ArrayRef, ArrowError> {
        Ok(match *o {
            Out::Time(i) => {
                let values: Vec<i64> = match i {
                    0 => keep.iter().map(|&j| t.vt_s[j]).collect(),
                    1 => keep.iter().map(|&j| t.vt_e[j]).collect(),
                    2 => keep.iter().map(|&j| t.tt_s[j]).collect(),
                    _ => shown.clone(),
                };
                Arc::new(TimestampMicrosecondArray::from(values).with_timezone("UTC"))
            }
            Out::Ident(c) => match table {
                Table::Nodes => new_null_array(&DataType::Utf8View, keep.len()),
                Table::Edges if c == 7 => {
                    names_column(ids(c).into_iter(), |r| snap.rel_type_name(r))?
                }
                Table::Edges => match shape.uid_names(snap, keep.len()) {
                    Some(names) => {
                        let idx: UInt32Array = ids(c).into_iter().collect();
                        // The store is not written while the table holds it, so every id is
                        // below the names' length; checked all the same (an error, not a
                        // panic).
                        let check = TakeOptions { check_bounds: true };
                        take(names, &idx, Some(check))?
                    }
                    None => {
                        let mut b = StringViewBuilder::with_capacity(keep.len());
                        for id in ids(c) {
                            b.append_option(id.map(|id| snap.uid_name(id)));
                        }
                        Arc::new(b.finish())
                    }
                },
            },
            Out::NoClose => new_null_array(&DataType::Utf8, keep.len()),
            Out::Text(0) => {
                let kind = match table {
                    Table::Nodes => "node",
                    Table::Edges => "edge",
                };
                let mut b = StringBuilder::new();
                b.append_value_n(kind, keep.len());
                Arc::new(b.finish())
            }
            // `closed_by`, `close_reason`: null but where a close is shown (few rows), in
            // runs of nulls.
            Out::Text(c @ (18 | 19)) => {
                let mut b = StringBuilder::new();
                let mut nulls = 0;
                for (r, &j) in keep.iter().enumerate() {
                    if !closed(r, j) {
                        nulls += 1;
                        continue;
                    }
                    b.append_nulls(nulls);
                    nulls = 0;
                    match version(j) {
                        Some(v) => append_text(&mut b, c, v, true),
                        None => b.append_null(),
                    }
                }
                b.append_nulls(nulls);
                Arc::new(b.finish())
            }
            Out::Text(c) => {
                let mut b = StringBuilder::new();
                for (r, &j) in keep.iter().enumerate() {
                    match version(j) {
                        Some(v) => append_text(&mut b, c, v, closed(r, j)),
                        None => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            Out::Prop(ref name, kind) => {
                let mut col = PropCol::new(kind);
                for (&(_, n), &m) in props_runs.iter().zip(&run_map) {
                    col.push_n(maps[m].get(name.as_str()), n);
                }
                col.finish()
            }
        })
    };
    let arrays = outs.iter().map(column).collect::<Result<Vec<_>, _>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(keep.len()));
    RecordBatch::try_new_with_options(shape.schema.clone(), arrays, &opts).map(Some)
}

/// A `Utf8View` column of the names of `ids` (`None`: null) when a batch has few distinct
/// ones, like rel types: views into one small array of the batch's distinct names,
/// gathered by `take`, so a row costs a 16-byte view and no copy of its name. The first
/// [`FEW`] distinct ids are found by a linear search (ids are string ids, which can be
/// large: nothing is indexed by them), any further ones by a hash map.
fn names_column<'s>(
    ids: impl Iterator<Item = Option<u32>>,
    name: impl Fn(u32) -> &'s str,
) -> Result<ArrayRef, ArrowError> {
    let mut few: Vec<(u32, u32)> = Vec::new();
    let mut more: HashMap<u32, u32> = HashMap::new();
    let mut distinct = StringViewBuilder::new();
    let mut n = 0u32;
    let mut code = |id: u32| {
        if let Some(&(_, c)) = few.iter().find(|(i, _)| *i == id) {
            return c;
        }
        if let Some(&c) = more.get(&id) {
            return c;
        }
        distinct.append_value(name(id));
        if few.len() < FEW {
            few.push((id, n));
        } else {
            more.insert(id, n);
        }
        n += 1;
        n - 1
    };
    let idx: UInt32Array = ids.map(|id| id.map(&mut code)).collect();
    take(&distinct.finish(), &idx, None)
}

/// Distinct names [`names_column`] finds by a linear search.
const FEW: usize = 16;

/// Appends text column `c` of version `v` (`closed`: its close is shown); `src`, `dst` and
/// `rel_type` are appended by the caller.
fn append_text(b: &mut StringBuilder, c: usize, v: Ver<'_>, closed: bool) {
    let origin = |o: Option<Origin>| o.map(|o| o.as_str());
    match (c, v) {
        (0, Ver::N(_)) => b.append_value("node"),
        (0, Ver::E(_)) => b.append_value("edge"),
        (1, Ver::N(n)) => b.append_value(n.vid()),
        (1, Ver::E(e)) => b.append_value(e.vid()),
        (2, Ver::N(n)) => b.append_value(n.uid()),
        (3, Ver::N(n)) => b.append_value(n.label()),
        (4, Ver::E(e)) => b.append_value(e.eid()),
        (8, Ver::E(e)) => b.append_value(e.disc()),
        (PROPS, v) => b.append_value(common!(v, props)),
        (14, v) => b.append_value(common!(v, source)),
        (15, v) => b.append_value(common!(v, provenance_ref)),
        (16, v) => b.append_value(common!(v, origin).as_str()),
        (17, v) => b.append_option(common!(v, reason)),
        // Read only where a close is shown.
        (18, v) => b.append_option(if closed {
            origin(common!(v, closed_by))
        } else {
            None
        }),
        (19, v) => b.append_option(if closed {
            common!(v, close_reason)
        } else {
            None
        }),
        // A column that does not apply to the row's kind.
        _ => b.append_null(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};

    #[test]
    fn names_column_gathers_each_name_and_keeps_nulls() {
        // More distinct ids than the linear search holds, some of them large string ids.
        let ids: Vec<Option<u32>> = (0..200u32)
            .map(|i| {
                (i % 7 != 3).then_some(if i % 2 == 0 {
                    i % 40
                } else {
                    4_000_000_000 - i % 30
                })
            })
            .collect();
        let name = |id: u32| -> &'static str { Box::leak(format!("r{id}").into_boxed_str()) };
        let a = names_column(ids.iter().copied(), name).unwrap();
        let a = a.as_string_view();
        assert_eq!(a.len(), ids.len());
        for (i, id) in ids.iter().enumerate() {
            match id {
                None => assert!(a.is_null(i)),
                Some(id) => assert_eq!(a.value(i), format!("r{id}")),
            }
        }
    }
}
