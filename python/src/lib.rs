//! The Python extension module `tgms` (`docs/python.md`): `Store`, `Result` (operator
//! envelopes with Arrow tables through the PyCapsule interface), `PlanRun`, and the typed
//! exceptions. Build and install: `pip install ./python` (or `maturin develop` in python/).

mod errors;
mod json;
mod result;
mod store;
mod table_input;

use pyo3::prelude::*;

/// tgms: an embedded bi-temporal temporal-graph database. See `help(tgms.Store)`.
#[pymodule]
fn tgms(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::PyStore>()?;
    m.add_class::<store::PyPlanRun>()?;
    m.add_class::<result::PyResultEnv>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("OPEN_END", ::tgms::OPEN_END)?;
    Ok(())
}
