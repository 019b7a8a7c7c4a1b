//! The typed Python exceptions: one class per error code family, each instance carrying the
//! structured payload (`code`, `message`, `details`, `payload`) that `tgms` prints as JSON.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyType;
use serde_json::Value;

create_exception!(
    tgms,
    TgmsError,
    PyException,
    "Base of every tgms error: `.code` (e.g. \"E_INVALID_ARG\"), `.details` and `.payload` (the JSON error object as a dict)."
);
create_exception!(
    tgms,
    InvalidArgumentError,
    TgmsError,
    "E_SCHEMA / E_INVALID_ARG: a malformed argument, op, plan or input line."
);
create_exception!(
    tgms,
    NotFoundError,
    TgmsError,
    "E_NOT_FOUND: an unknown uid, trace or operator."
);
create_exception!(
    tgms,
    CostError,
    TgmsError,
    "E_COST / E_LIMIT: the call was refused before execution (estimated cost over a ceiling)."
);
create_exception!(
    tgms,
    StateError,
    TgmsError,
    "E_STATE: the store refused (I/O, a held writer lock, a read-only handle, corruption)."
);
create_exception!(
    tgms,
    PlanInvalidError,
    TgmsError,
    "E_PLAN_INVALID: the static verifier refused the plan; `.details` is the report with a repair per violation."
);
create_exception!(
    tgms,
    InternalError,
    TgmsError,
    "E_INTERNAL and any other code."
);

/// The exception of a JSON error payload `{"error", "message", "details"}`.
pub fn from_payload(py: Python<'_>, payload: &Value) -> PyErr {
    let code = payload["error"].as_str().unwrap_or("E_INTERNAL");
    let ty: Bound<'_, PyType> = match code {
        "E_SCHEMA" | "E_INVALID_ARG" => py.get_type::<InvalidArgumentError>(),
        "E_NOT_FOUND" => py.get_type::<NotFoundError>(),
        "E_COST" | "E_LIMIT" => py.get_type::<CostError>(),
        "E_STATE" => py.get_type::<StateError>(),
        "E_PLAN_INVALID" => py.get_type::<PlanInvalidError>(),
        _ => py.get_type::<InternalError>(),
    };
    let message = payload["message"].as_str().unwrap_or(code).to_string();
    let build = || -> PyResult<PyErr> {
        let e = ty.call1((format!("{code}: {message}"),))?;
        e.setattr("code", code)?;
        e.setattr("message", &message)?;
        e.setattr("details", crate::json::to_py(py, &payload["details"])?)?;
        e.setattr("payload", crate::json::to_py(py, payload)?)?;
        Ok(PyErr::from_value(e))
    };
    build().unwrap_or_else(|e| e)
}

/// The exception of an engine error.
pub fn store(py: Python<'_>, e: &tgms::engine::Error) -> PyErr {
    from_payload(py, &tgms::operators::error::store_payload(e))
}

/// The exception of a message with code `code` and no details.
pub fn plain(py: Python<'_>, code: &str, message: impl Into<String>) -> PyErr {
    from_payload(
        py,
        &serde_json::json!({"error": code, "message": message.into(), "details": {}}),
    )
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TgmsError", py.get_type::<TgmsError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("CostError", py.get_type::<CostError>())?;
    m.add("StateError", py.get_type::<StateError>())?;
    m.add("PlanInvalidError", py.get_type::<PlanInvalidError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
