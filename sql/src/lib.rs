//! SQL over a live tgms store (`tgms sql`, `docs/sql.md`): the store's version rows — every
//! node and edge version, both clocks, typed props — as a DataFusion table named `rows`,
//! read in place from the mapped image and the delta above it, without an export. The
//! table has the typed schema `tgms export-rows` writes ([`columns`]), so a query written
//! against an export runs here unchanged, and the reverse.
//!
//! The provider ([`StoreTable`]) splits the storage positions of each table into
//! partitions that DataFusion reads in parallel, builds only the projected columns, skips
//! the node or edge table when `kind` is fixed, and drops rows that fail a pushed time
//! filter before building them; a belief state at a transaction time is pinned when the
//! table is made (`as_of_tt`). Statements are read-only: DDL, DML (`INSERT`, `COPY`) and
//! `SET` are refused.

pub mod columns;
mod date_trunc;
mod filter;
pub mod out;
mod provider;
mod scan;

pub use provider::StoreTable;

use datafusion::arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::context::{SQLOptions, SessionContext};
use datafusion::logical_expr::{create_udf, ColumnarValue, ScalarUDF, Volatility};
use datafusion::scalar::ScalarValue;
use std::sync::Arc;
use tgms_engine::{Store, OPEN_END};

/// The name of the version-row table.
pub const TABLE: &str = "rows";

/// Why a statement did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// DataFusion refused the statement (a syntax error, an unknown column or function, a
    /// statement that is not a query) or failed running it.
    #[error("{0}")]
    Query(#[from] datafusion::error::DataFusionError),
    /// The query runtime (a tokio runtime) could not be started.
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
}

impl SqlError {
    /// The structured error (`docs/errors.md`): `E_SQL` naming the statement, with the
    /// repair in `details.fix`; `E_INTERNAL` when the runtime could not start.
    pub fn payload(&self, statement: &str) -> serde_json::Value {
        let (code, fix) = match self {
            SqlError::Query(_) => (
                "E_SQL",
                "one read-only statement (SELECT, WITH, EXPLAIN) over the table `rows`; \
                 `tgms sql STORE \"DESCRIBE rows\"` lists its columns and types (docs/sql.md)",
            ),
            SqlError::Runtime(_) => ("E_INTERNAL", "retry; report it if it persists"),
        };
        serde_json::json!({
            "error": code,
            "message": self.to_string(),
            "details": {"statement": statement, "table": TABLE, "fix": fix},
        })
    }
}

/// A DataFusion session with `store`'s version rows registered as [`TABLE`]: every stored
/// row, or with `as_of_tt` the rows believed at that transaction time, as believed then.
/// The session also has `open_end()`, the open end of an interval (`TIMESTAMP` 2^62 µs
/// UTC): `WHERE tt_e = open_end()` keeps the current beliefs, and is a literal the scan
/// filters by. Its `date_trunc` truncates the UTC time columns by integer arithmetic
/// (`docs/sql.md`).
pub fn session(store: Arc<Store>, as_of_tt: Option<i64>) -> Result<SessionContext, SqlError> {
    let ctx = SessionContext::new();
    ctx.register_table(TABLE, Arc::new(StoreTable::new(store, as_of_tt)))?;
    ctx.register_udf(open_end_udf());
    ctx.register_udf(date_trunc::UtcDateTrunc::udf());
    Ok(ctx)
}

/// `open_end()`: the store's open end as a `TIMESTAMP(µs, UTC)` constant (immutable, so the
/// planner folds it into a literal).
fn open_end_udf() -> ScalarUDF {
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let value = ScalarValue::TimestampMicrosecond(Some(OPEN_END), Some("UTC".into()));
    create_udf(
        "open_end",
        vec![],
        ts,
        Volatility::Immutable,
        Arc::new(move |_| Ok(ColumnarValue::Scalar(value.clone()))),
    )
}

/// Runs one read-only statement in `ctx` to completion: the result's schema and batches.
pub fn query(ctx: &SessionContext, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), SqlError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(SqlError::Runtime)?;
    rt.block_on(async {
        let opts = SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false);
        let df = ctx.sql_with_options(sql, opts).await?;
        let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        let batches = df.collect().await?;
        Ok((schema, batches))
    })
}
