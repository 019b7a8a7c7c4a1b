//! The `--ceilings FILE|JSON` flag of `tgms plan run`, `tgms plan validate` and `tgms serve`:
//! executor and cost ceilings given inline as a JSON object or as the path of a file holding
//! one (`docs/plans.md#ceilings`), and the time-estimate scale every CLI call takes from
//! `TGMS_TIME_COEFF_SCALE` (the libraries read no environment).

use std::path::Path;
use tgms_operators::Ceilings;

/// The keys `--ceilings` accepts, for help texts and errors (see [`Ceilings::from_json`]).
pub const KEYS: [&str; 6] = [
    "rows_scanned_est",
    "expansions_est",
    "time_est_ms",
    "max_reducer_rows",
    "max_reducer_bytes",
    "max_total_rows",
];

/// The environment variable scaling every time estimate (`docs/operators.md`, cost model).
pub const TIME_SCALE_VAR: &str = "TGMS_TIME_COEFF_SCALE";

/// The CLI's ceilings: `--ceilings` when given ([`parse`]), else the defaults; either way
/// with the time-estimate scale of [`TIME_SCALE_VAR`] ([`time_scale`]).
pub fn from_flag(arg: Option<&str>) -> Result<Ceilings, String> {
    let mut c = arg.map_or_else(|| Ok(Ceilings::default()), parse)?;
    c.time_coeff_scale = time_scale(std::env::var(TIME_SCALE_VAR).ok().as_deref())?;
    Ok(c)
}

/// The value of [`TIME_SCALE_VAR`]: unset or blank is 1.0; otherwise a finite number above 0
/// (a machine twice as slow as the calibration sets 2).
pub fn time_scale(value: Option<&str>) -> Result<f64, String> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(1.0);
    };
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| {
            format!(
                "{TIME_SCALE_VAR}={v} is not a number above 0; set it to the factor by which \
                 this machine is slower than the calibration (e.g. 2), or unset it for 1"
            )
        })
}

/// Reads `--ceilings`: an argument whose first non-blank character is `{` is the JSON
/// object itself; anything else names a file holding it. Keys not given keep their
/// defaults. The error is a one-line message naming the argument and the fix.
pub fn parse(arg: &str) -> Result<Ceilings, String> {
    let (text, origin) = if arg.trim_start().starts_with('{') {
        (arg.to_string(), "--ceilings".to_string())
    } else {
        let path = Path::new(arg);
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "--ceilings {arg}: not a JSON object and not a readable file ({e}); give \
                 '{{\"max_reducer_rows\": 2000000}}' or the path of a file holding such an object"
            )
        })?;
        (text, format!("--ceilings file {}", path.display()))
    };
    let v =
        tgms_engine::canon::parse(&text).map_err(|e| format!("{origin} is not valid JSON: {e}"))?;
    Ceilings::from_json(&v).map_err(|e| {
        format!(
            "{origin}: {} (keys: {}; integers, max_reducer_rows, max_reducer_bytes and max_total_rows >= 1)",
            e.message,
            KEYS.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_scale_values() {
        assert_eq!(time_scale(None), Ok(1.0));
        assert_eq!(time_scale(Some("  ")), Ok(1.0));
        assert_eq!(time_scale(Some(" 2.5 ")), Ok(2.5));
        assert_eq!(time_scale(Some("1e-3")), Ok(0.001));
        for bad in ["0", "-1", "abc", "inf", "NaN"] {
            let e = time_scale(Some(bad)).unwrap_err();
            assert!(e.contains(TIME_SCALE_VAR) && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn inline_file_and_errors() {
        let c = parse(r#" {"max_reducer_rows": 7, "time_est_ms": 5}"#).unwrap();
        assert_eq!(c.max_reducer_rows, 7);
        assert_eq!(c.time_est_ms, Some(5));
        // Keys not given keep their defaults.
        assert_eq!(c.max_total_rows, Ceilings::default().max_total_rows);
        assert_eq!(c.rows_scanned_est, Ceilings::default().rows_scanned_est);

        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.json");
        std::fs::write(&f, r#"{"max_total_rows": 3}"#).unwrap();
        assert_eq!(parse(f.to_str().unwrap()).unwrap().max_total_rows, 3);

        let missing = parse("/nonexistent/ceilings.json").unwrap_err();
        assert!(missing.contains("not a readable file"), "{missing}");
        let bad = parse("{").unwrap_err();
        assert!(bad.contains("not valid JSON"), "{bad}");
        let key = parse(r#"{"max_rows": 3}"#).unwrap_err();
        assert!(key.contains("unknown ceiling key 'max_rows'") && key.contains("max_reducer_rows"));
        let low = parse(r#"{"max_reducer_rows": 0}"#).unwrap_err();
        assert!(low.contains(">= 1"), "{low}");
        std::fs::write(&f, "[1]").unwrap();
        let arr = parse(f.to_str().unwrap()).unwrap_err();
        assert!(
            arr.contains("--ceilings file") && arr.contains("JSON object"),
            "{arr}"
        );
    }
}
