//! [`StoreTable`]: a store's version rows as a DataFusion table, read in place from the
//! store's mapped image and the delta above it. A scan splits each table's storage
//! positions (node rows, edge rows) into ranges, one partition per range, so DataFusion
//! reads them in parallel; each partition streams batches of up to `batch_size` positions.
//! The store is shared (`Arc<Store>`) and cannot be written while the table holds it, so
//! every batch reads the same state.

use crate::columns::{prop_kinds, schema, Kind};
use crate::filter::Pushed;
use crate::scan::{batch, Shape};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use std::ops::Range;
use std::sync::Arc;
use tgms_engine::Store;
use tgms_engine::Table;

/// Fewest storage positions in one partition: smaller ranges cost more in scheduling than
/// they gain in parallelism.
const MIN_PARTITION_POSITIONS: usize = 1 << 16;

/// Every stored version of a store (nodes and edges, believed and closed), or its belief
/// state at a transaction time, as one DataFusion table in the typed schema of
/// [`crate::columns`].
pub struct StoreTable {
    store: Arc<Store>,
    as_of: Option<i64>,
    props: Vec<(String, Kind)>,
    schema: SchemaRef,
}

impl std::fmt::Debug for StoreTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreTable")
            .field("store", &self.store.dir())
            .field("as_of", &self.as_of)
            .finish()
    }
}

/// `schema` with `src`, `dst` and `rel_type` as `Utf8View`: the scan builds them as views
/// (names of up to 12 bytes are held in the view itself, no byte copied into a buffer).
fn view_idents(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let f = f.as_ref().clone();
            if (5..=7).contains(&i) {
                f.with_data_type(DataType::Utf8View)
            } else {
                f
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

impl StoreTable {
    /// The table of `store`'s rows; with `as_of_tt`, the rows believed at that transaction
    /// time, each as it was believed then (as `tgms export-rows --as-of`). Reads every
    /// row's props once to type the prop columns.
    pub fn new(store: Arc<Store>, as_of_tt: Option<i64>) -> StoreTable {
        let kinds = prop_kinds(&store.snapshot(), as_of_tt);
        let schema = view_idents(&schema(&kinds));
        StoreTable {
            store,
            as_of: as_of_tt,
            props: kinds.into_iter().collect(),
            schema,
        }
    }
}

#[async_trait]
impl TableProvider for StoreTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if Pushed::exact(f) {
                    TableProviderFilterPushDown::Exact
                } else if Pushed::understands(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let schema = Arc::new(self.schema.project(&columns)?);
        let pushed = Pushed::of(filters);
        let snap = self.store.snapshot();
        let target = state.config().target_partitions().max(1);
        let batch_rows = state.config().batch_size().max(1);
        let mut ranges = Vec::new();
        if pushed.kinds.node {
            ranges.extend(split(snap.node_positions(), target).map(|r| (Table::Nodes, r)));
        }
        if pushed.kinds.edge {
            ranges.extend(split(snap.edge_positions(), target).map(|r| (Table::Edges, r)));
        }
        let shape = Arc::new(Shape {
            schema: schema.clone(),
            columns,
            props: self.props.clone(),
            pushed,
            as_of: self.as_of,
            name_table: Default::default(),
            endpoint_rows: Default::default(),
        });
        let partitions: Vec<Arc<dyn PartitionStream>> = ranges
            .into_iter()
            .map(|(table, range)| {
                Arc::new(Partition {
                    store: self.store.clone(),
                    shape: shape.clone(),
                    table,
                    range,
                    batch_rows,
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            partitions,
            None,
            [],
            false,
            limit,
        )?))
    }
}

/// `0..n` in at most `parts` consecutive ranges of at least [`MIN_PARTITION_POSITIONS`]
/// (none when `n` is 0).
fn split(n: usize, parts: usize) -> impl Iterator<Item = Range<usize>> {
    let size = n.div_ceil(parts).max(MIN_PARTITION_POSITIONS);
    (0..n).step_by(size).map(move |s| s..(s + size).min(n))
}

/// One range of storage positions of one table.
struct Partition {
    store: Arc<Store>,
    shape: Arc<Shape>,
    table: Table,
    range: Range<usize>,
    batch_rows: usize,
}

impl std::fmt::Debug for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partition")
            .field("table", &self.table)
            .field("range", &self.range)
            .finish()
    }
}

impl PartitionStream for Partition {
    fn schema(&self) -> &SchemaRef {
        &self.shape.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (store, shape, table) = (self.store.clone(), self.shape.clone(), self.table);
        let end = self.range.end;
        let step = self.batch_rows;
        // Batches are built as the stream is polled, one range of positions at a time.
        let batches = self.range.clone().step_by(step).filter_map(move |s| {
            let pos = s..(s + step).min(end);
            batch(&store.snapshot(), &shape, table, pos)
                .map_err(DataFusionError::from)
                .transpose()
        });
        Box::pin(RecordBatchStreamAdapter::new(
            self.shape.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_position_once() {
        assert_eq!(split(0, 4).count(), 0);
        assert_eq!(split(10, 4).collect::<Vec<_>>(), vec![0..10]);
        let n = 5 * MIN_PARTITION_POSITIONS + 7;
        let r: Vec<_> = split(n, 2).collect();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].start, r[0].end, r[1].start, r[1].end),
            (0, r[0].end, r[0].end, n)
        );
    }
}
