//! One record batch of version rows: the stored rows at a range of storage positions of one
//! table (node rows or edge rows), as believed at the table's `as_of_tt`, that can pass the
//! pushed filters, with only the projected columns built (a `count(*)` builds none; the
//! derived ids `vid` and `eid` and the prop columns cost only where a query reads them).

use crate::columns::{believed_tt_e, Kind, PropCol, COLUMNS, PROPS, TIME_COLUMNS};
use crate::filter::Pushed;
use datafusion::arrow::array::builder::{StringBuilder, TimestampMicrosecondBuilder};
use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use serde_json::{Map, Value};
use std::ops::Range;
use std::sync::Arc;
use tgms_engine::{canon, EdgeVersion, NodeVersion, Origin, Snapshot};

/// The two tables of version rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Table {
    Nodes,
    Edges,
}

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

/// The builder of one projected column.
enum Out {
    /// A text column (its index into `COLUMNS`).
    Text(usize, StringBuilder),
    /// A time column (0..4: `vt_s … tt_e`).
    Time(usize, TimestampMicrosecondBuilder),
    /// A prop column (the prop's name).
    Prop(String, PropCol),
}

/// The batch of the rows of `table` at storage positions `pos` in `snap` (`None` when no
/// row there is kept).
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
                Out::Time(
                    c - TIME_COLUMNS.start,
                    TimestampMicrosecondBuilder::new().with_timezone("UTC"),
                )
            } else if c < COLUMNS.len() {
                Out::Text(c, StringBuilder::new())
            } else {
                let (name, kind) = &shape.props[c - COLUMNS.len()];
                Out::Prop(name.clone(), PropCol::new(*kind))
            }
        })
        .collect();
    let wants_props = outs.iter().any(|o| matches!(o, Out::Prop(..)));
    let wants_rows = outs.iter().any(|o| !matches!(o, Out::Time(..)));
    // The last props text parsed (rows repeat their props text; the store interns it).
    let mut parsed: Option<(&str, Map<String, Value>)> = None;
    let mut rows = 0usize;
    let k = match table {
        Table::Nodes => 0,
        Table::Edges => 1,
    };
    let t = snap.row_times(k, pos.clone());
    // src, dst and rel_type ids from the shared edge columns (one array read each instead
    // of the identity's three random reads), where a query reads them.
    let wants_ident = outs.iter().any(|o| matches!(o, Out::Text(5..=7, _)));
    let cols = (table == Table::Edges && wants_ident).then(|| snap.edge_columns());
    // Rel-type names by id: a store has few.
    let mut rel_names: Vec<Option<&str>> = Vec::new();
    for j in 0..t.stored.len() {
        let (tt_s, tt_e) = (t.tt_s[j], t.tt_e[j]);
        let shown_tt_e = match believed_tt_e(tt_s, tt_e, shape.as_of) {
            Some(x) if t.stored[j] => x,
            _ => continue,
        };
        let times = [t.vt_s[j], t.vt_e[j], tt_s, shown_tt_e];
        if !shape.pushed.passes(&times) {
            continue;
        }
        // Only the time columns: nothing else of the row is read.
        if !wants_rows {
            for o in &mut outs {
                if let Out::Time(i, b) = o {
                    b.append_value(times[*i]);
                }
            }
            rows += 1;
            continue;
        }
        let at = (pos.start + j) as u32;
        let v = match table {
            Table::Nodes => snap.node_at(at).map(Ver::N),
            Table::Edges => snap.edge_at(at).map(Ver::E),
        };
        let Some(v) = v else {
            continue;
        };
        rows += 1;
        // A close after `as_of` had not happened then.
        let closed = shown_tt_e == tt_e;
        if wants_props {
            let text = common!(v, props);
            if parsed.as_ref().is_none_or(|(t, _)| !std::ptr::eq(*t, text)) {
                let m = match canon::parse(text) {
                    Ok(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                parsed = Some((text, m));
            }
        }
        let ids = match (&cols, v) {
            (Some(c), _) if (at as usize) < c.covered() => {
                let i = at as usize;
                Some([c.src()[i], c.dst()[i], c.rel()[i]])
            }
            (_, Ver::E(e)) => Some([e.src_id(), e.dst_id(), e.rel_id()]),
            (_, Ver::N(_)) => None,
        };
        for o in &mut outs {
            match o {
                Out::Time(i, b) => b.append_value(times[*i]),
                Out::Text(c @ 5..=6, b) => {
                    b.append_option(ids.map(|ids| snap.uid_name(ids[*c - 5])))
                }
                Out::Text(7, b) => b.append_option(ids.map(|ids| {
                    let r = ids[2] as usize;
                    if rel_names.len() <= r {
                        rel_names.resize(r + 1, None);
                    }
                    *rel_names[r].get_or_insert_with(|| snap.rel_type_name(ids[2]))
                })),
                Out::Text(c, b) => append_text(b, *c, v, closed),
                Out::Prop(name, col) => {
                    col.push(parsed.as_ref().and_then(|(_, m)| m.get(name.as_str())))
                }
            }
        }
    }
    if rows == 0 {
        return Ok(None);
    }
    let arrays: Vec<ArrayRef> = outs
        .iter_mut()
        .map(|o| match o {
            Out::Time(_, b) => Arc::new(b.finish()) as ArrayRef,
            Out::Text(_, b) => Arc::new(b.finish()) as ArrayRef,
            Out::Prop(_, col) => col.finish(),
        })
        .collect();
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(shape.schema.clone(), arrays, &opts).map(Some)
}

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
        (18, v) => b.append_option(origin(common!(v, closed_by)).filter(|_| closed)),
        (19, v) => b.append_option(common!(v, close_reason).filter(|_| closed)),
        // A column that does not apply to the row's kind.
        _ => b.append_null(),
    }
}
