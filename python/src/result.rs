//! `tgms.Result`: one operator envelope. Its main list (`rows`, else the operator's first
//! list output) is an Arrow table through the Arrow PyCapsule interface
//! (`__arrow_c_stream__`), built column by column in Rust with the declared schema
//! (`tgms::arrow_rows`); the other fields are `meta`.

use arrow_array::{ArrayRef, RecordBatch, StructArray};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use pyo3_arrow::ffi::{to_schema_pycapsule, to_stream_pycapsule, ArrayIterator};
use pyo3_arrow::PyTable;
use serde_json::Value;
use std::sync::Arc;
use tgms::arrow_rows;

/// One operator result: the envelope `tgms call` prints, its main list as Arrow.
#[pyclass(module = "tgms", name = "Result", frozen)]
pub struct PyResultEnv {
    op: String,
    envelope: Arc<Value>,
    /// The main list's name, when the operator has one.
    main: Option<String>,
    /// The main list as one record batch (built with the GIL released).
    batch: Option<RecordBatch>,
}

impl PyResultEnv {
    /// Wraps an envelope and converts its main list (call with the GIL released).
    pub fn build(op: &str, envelope: Value) -> Result<Self, arrow_rows::ArrowRowsError> {
        let main = arrow_rows::list_outputs(op).into_iter().next();
        let batch = match &main {
            Some(l) => Some(arrow_rows::list_batch(op, l, &envelope)?),
            None => None,
        };
        Ok(PyResultEnv {
            op: op.to_string(),
            envelope: Arc::new(envelope),
            main,
            batch,
        })
    }

    pub fn envelope(&self) -> &Value {
        &self.envelope
    }

    fn batch_of(&self, py: Python<'_>, list: Option<&str>) -> PyResult<RecordBatch> {
        let name = match (list, &self.main) {
            (Some(l), _) => l.to_string(),
            (None, Some(m)) => m.clone(),
            (None, None) => {
                return Err(crate::errors::plain(
                    py,
                    "E_NOT_FOUND",
                    format!("operator {} returns no list; read Result.meta", self.op),
                ))
            }
        };
        if Some(&name) == self.main.as_ref() {
            if let Some(b) = &self.batch {
                return Ok(b.clone());
            }
        }
        let (op, env) = (self.op.clone(), self.envelope.clone());
        py.detach(move || arrow_rows::list_batch(&op, &name, &env))
            .map_err(|e| crate::errors::plain(py, "E_NOT_FOUND", e.to_string()))
    }
}

#[pymethods]
impl PyResultEnv {
    /// The operator name.
    #[getter]
    fn op(&self) -> &str {
        &self.op
    }

    /// The whole envelope as a dict (what `tgms call` prints).
    #[getter]
    fn envelope_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_py(py, &self.envelope)
    }

    /// The envelope as canonical JSON text, byte for byte `tgms call`'s output line.
    fn json(&self) -> String {
        tgms::engine::canon::to_string(&self.envelope)
    }

    /// The envelope without its lists: `result_digest`, `rows_total`, `truncated`,
    /// `cursor`, `set_digest`, `as_of_tt`, the certificates of capped lists, the scalar
    /// outputs — and `complete` (not truncated, not approximate, every certified list whole).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut m = arrow_rows::envelope_meta(&self.op, &self.envelope);
        m["complete"] = Value::Bool(self.complete());
        crate::json::to_py(py, &m)
    }

    /// SHA-256 of the canonical payload: equal digests, equal results.
    #[getter]
    fn result_digest(&self) -> &str {
        self.envelope["result_digest"].as_str().unwrap_or_default()
    }

    /// Whether this is the complete result (see `meta`).
    #[getter]
    fn complete(&self) -> bool {
        tgms::Envelope::from_json((*self.envelope).clone()).complete()
    }

    /// `rows_total`, or None for an operator without rows.
    #[getter]
    fn rows_total(&self) -> Option<u64> {
        self.envelope["rows_total"].as_u64()
    }

    /// Whether more rows exist than this page holds.
    #[getter]
    fn truncated(&self) -> bool {
        self.envelope["truncated"].as_bool().unwrap_or(false)
    }

    /// The cursor of the next page (pass `cursor=` to the same call), or None.
    #[getter]
    fn cursor(&self) -> Option<&str> {
        self.envelope["cursor"].as_str()
    }

    /// The names of the operator's list outputs; the first is the main one.
    #[getter]
    fn lists(&self) -> Vec<String> {
        arrow_rows::list_outputs(&self.op)
    }

    /// One list output as an Arrow table (`arro3.core.Table`-compatible; hand it to
    /// `pyarrow.table(...)` or `polars.DataFrame(...)`); the main list by default.
    #[pyo3(signature = (name=None))]
    fn table(&self, py: Python<'_>, name: Option<&str>) -> PyResult<PyTable> {
        let b = self.batch_of(py, name)?;
        let schema = b.schema();
        PyTable::try_new(vec![b], schema)
    }

    /// Rows in the main list.
    fn __len__(&self) -> usize {
        self.batch.as_ref().map_or(0, RecordBatch::num_rows)
    }

    fn __repr__(&self) -> String {
        format!(
            "tgms.Result(op={:?}, rows={}, rows_total={}, complete={}, digest={:.12}…)",
            self.op,
            self.__len__(),
            self.rows_total()
                .map_or("None".to_string(), |n| n.to_string()),
            if self.complete() { "True" } else { "False" },
            self.result_digest()
        )
    }

    /// The Arrow schema of the main list (Arrow PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let b = self.batch_of(py, None)?;
        Ok(to_schema_pycapsule(py, b.schema().as_ref())?)
    }

    /// The main list as an Arrow C stream (Arrow PyCapsule interface): `pyarrow.table(r)`,
    /// `polars.DataFrame(r)`, `duckdb.arrow(r)` read it without a Python object per row.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let b = self.batch_of(py, None)?;
        let fields = b.schema().fields().clone();
        let field = Arc::new(
            arrow_schema::Field::new_struct("", fields, false)
                .with_metadata(b.schema().metadata().clone()),
        );
        let arr: ArrayRef = Arc::new(StructArray::from(b));
        let reader = ArrayIterator::new(
            std::iter::once(Ok::<ArrayRef, arrow_schema::ArrowError>(arr)),
            field,
        );
        Ok(to_stream_pycapsule(py, Box::new(reader), requested_schema)?)
    }
}
