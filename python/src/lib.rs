//! The Python extension module `tgms` (`docs/python.md`): `Store`, `Result` (operator
//! envelopes with Arrow tables through the PyCapsule interface), `PlanRun`, and the typed
//! exceptions. Build and install: `pip install ./python` (or `maturin develop` in python/).

mod errors;
mod json;
mod result;
mod store;
mod table_input;

use pyo3::prelude::*;

/// Sets this process's page-cache budget in bytes (`docs/paging.md`: the complete forms of
/// paged results kept so the next pages are reads; default 268435456, 256 MiB; `0` turns the
/// cache off; `None` restores the default). The CLI's `TGMS_PAGE_CACHE_BYTES`.
///
/// >>> tgms.set_page_cache_bytes(64 << 20)
#[pyfunction]
#[pyo3(signature = (n_bytes))]
fn set_page_cache_bytes(n_bytes: Option<usize>) {
    ::tgms::operators::page_cache::set_budget_bytes(n_bytes);
}

/// tgms: an embedded bi-temporal temporal-graph database. See `help(tgms.Store)`.
#[pymodule]
fn tgms(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::PyStore>()?;
    m.add_function(wrap_pyfunction!(set_page_cache_bytes, m)?)?;
    m.add_class::<store::PyPlanRun>()?;
    m.add_class::<result::PyResultEnv>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("OPEN_END", ::tgms::OPEN_END)?;
    Ok(())
}
