//! Arrow tables into `Store.ingest`: any object with `__arrow_c_stream__` is read record
//! batch by record batch (one in memory at a time) and written as an Arrow IPC stream to a
//! temporary file, which the ingest then reads like `tgms ingest --format arrow-ipc`.

use pyo3::prelude::*;
use pyo3_arrow::PyRecordBatchReader;
use std::io::BufWriter;

/// A temporary Arrow IPC stream file, removed on drop.
pub struct Spool(std::path::PathBuf);

impl Spool {
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Streams `source` (an object with `__arrow_c_stream__`) into a temporary IPC file.
pub fn spool(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Spool> {
    let reader: PyRecordBatchReader = source.extract()?;
    let reader = reader.into_reader()?;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "tgms-ingest-{}-{}.arrows",
        std::process::id(),
        SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let spool = Spool(path);
    let written = py.detach(|| -> Result<(), String> {
        let f = std::fs::File::create(spool.path())
            .map_err(|e| format!("cannot create {}: {e}", spool.path().display()))?;
        let schema = reader.schema();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(BufWriter::new(f), &schema)
            .map_err(|e| e.to_string())?;
        for batch in reader {
            let batch = batch.map_err(|e| format!("reading the table: {e}"))?;
            w.write(&batch).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
        Ok(())
    });
    written.map_err(|m| crate::errors::plain(py, "E_INVALID_ARG", m))?;
    Ok(spool)
}
