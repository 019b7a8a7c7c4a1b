//! JSON between Python and Rust through the standard `json` module: exact for every value
//! the tgms JSON carries (big integers, canonical floats), and no Python object per row on the
//! Arrow paths, which never come here.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde_json::Value;

static JSON: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn json_mod(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(JSON
        .get_or_try_init(py, || py.import("json").map(Bound::unbind))?
        .bind(py))
}

/// A JSON value as a Python object (dict, list, str, int, float, bool, None).
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    json_mod(py)?.call_method1("loads", (tgms::engine::canon::to_string(v),))
}

/// A Python object as JSON (`json.dumps`, then the canonical parser). A `str` is taken as
/// JSON text when `text_is_json`.
pub fn from_py(obj: &Bound<'_, PyAny>, text_is_json: bool) -> PyResult<Value> {
    let py = obj.py();
    let text: String = match obj.extract::<String>() {
        Ok(s) if text_is_json => s,
        _ => json_mod(py)?.call_method1("dumps", (obj,))?.extract()?,
    };
    tgms::engine::canon::parse(&text)
        .map_err(|e| crate::errors::plain(py, "E_SCHEMA", format!("not valid JSON: {e}")))
}
