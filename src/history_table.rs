//! The table rendering of `tgms history` (`--format table`, the default): one line per stored
//! version with both clocks, origin and props, and an indented line with the reasons that
//! wrote and closed it. Times show as ISO-8601 UTC (or the integer µs under `--time us`),
//! the open end as `open`. The JSON form (`--format json`) carries every field for scripts.

use serde_json::Value;
use tgms::cli_time::TimeMode;
use tgms_engine::{canon, OPEN_END};
use tgms_operators::timefmt;

/// Widest props text shown in a line; the JSON form has the whole object.
const PROPS_CHARS: usize = 40;

/// Renders the history object `{"uid", "rows", "edges"?}`.
pub fn render(h: &Value, mode: TimeMode) -> String {
    let rows = h["rows"].as_array().map_or(&[][..], Vec::as_slice);
    let unit = match mode {
        TimeMode::Iso => "UTC",
        TimeMode::Us => "µs since 1970 UTC",
    };
    let mut s = format!(
        "{}: {} stored node version(s), believed and closed; times in {unit}\n",
        h["uid"].as_str().unwrap_or(""),
        rows.len()
    );
    s.push_str(&table(rows, mode, |r| {
        format!("{} {}", text(&r["label"]), props(&r["props"]))
    }));
    if let Some(edges) = h["edges"].as_array() {
        s.push_str(&format!(
            "\n{} stored edge version(s) touching it\n",
            edges.len()
        ));
        s.push_str(&table(edges, mode, |r| {
            format!(
                "{} -{}-> {} {}",
                text(&r["src"]),
                text(&r["rel_type"]),
                text(&r["dst"]),
                props(&r["props"])
            )
        }));
    }
    s
}

/// The version lines under one header; `what` renders a row's identity and content.
fn table(rows: &[Value], mode: TimeMode, what: impl Fn(&Value) -> String) -> String {
    // A whole-second ISO time is 20 characters, an integer µs time 16.
    let w = match mode {
        TimeMode::Iso => 20,
        TimeMode::Us => 16,
    };
    let mut s = format!(
        "{:<w$}  {:<w$}  {:<w$}  {:<w$}  {:<8}  {}\n",
        "valid from", "valid until", "believed from", "believed until", "origin", "content"
    );
    for r in rows {
        let t = |k: &str| time(&r[k], mode);
        s.push_str(&format!(
            "{:<w$}  {:<w$}  {:<w$}  {:<w$}  {:<8}  {}\n",
            t("vt_s"),
            t("vt_e"),
            t("tt_s"),
            t("tt_e"),
            text(&r["origin"]),
            what(r)
        ));
        let mut why = Vec::new();
        if let Some(reason) = r["reason"].as_str() {
            why.push(format!("written: {reason}"));
        }
        if let Some(by) = r["closed_by"].as_str() {
            match r["close_reason"].as_str() {
                Some(reason) => why.push(format!("closed by {by}: {reason}")),
                None => why.push(format!("closed by {by}")),
            }
        }
        if !why.is_empty() {
            s.push_str(&format!("    {}\n", why.join("; ")));
        }
    }
    s
}

/// A time as ISO-8601 UTC or integer µs, or `open` for the open end.
fn time(v: &Value, mode: TimeMode) -> String {
    match (v.as_i64(), mode) {
        (Some(OPEN_END), _) => "open".to_string(),
        (Some(t), TimeMode::Iso) => timefmt::iso_utc(t),
        (Some(t), TimeMode::Us) => t.to_string(),
        (None, _) => "—".to_string(),
    }
}

fn text(v: &Value) -> String {
    v.as_str()
        .map_or_else(|| canon::to_string(v), str::to_string)
}

/// Props as canonical JSON, cut to [`PROPS_CHARS`] characters (`…` marks a cut).
fn props(v: &Value) -> String {
    let t = canon::to_string(v);
    if t.chars().count() <= PROPS_CHARS {
        return t;
    }
    let cut: String = t.chars().take(PROPS_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_closed_version_shows_both_reasons_and_open_ends() {
        let h = json!({"uid": "a", "rows": [
            {"label": "N", "props": {"p": 1}, "vt_s": 0, "vt_e": 100, "tt_s": 1, "tt_e": 2,
             "origin": "assert", "reason": null, "closed_by": "correct", "close_reason": "fix p"},
            {"label": "N", "props": {"p": 2}, "vt_s": 40, "vt_e": OPEN_END, "tt_s": 2,
             "tt_e": OPEN_END, "origin": "correct", "reason": "fix p", "closed_by": null,
             "close_reason": null}]});
        let t = render(&h, TimeMode::Us);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("a: 2 stored node version(s)"));
        assert!(
            lines[2].starts_with("0 ")
                && lines[2].contains(" 100 ")
                && lines[2].contains("{\"p\":1}")
        );
        assert_eq!(lines[3].trim(), "closed by correct: fix p");
        assert!(lines[4].contains(" open ") && lines[4].contains("correct"));
        assert_eq!(lines[5].trim(), "written: fix p");
    }

    #[test]
    fn iso_mode_shows_utc_times_and_open() {
        // 1082040961000000 µs = 2004-04-15 14:56:01 UTC (12,523 days after 1970-01-01 is
        // 2004-04-15; 14:56:01 is 53,761 s into it).
        let h = json!({"uid": "a", "rows": [
            {"label": "N", "props": {}, "vt_s": 1_082_040_961_000_000i64, "vt_e": OPEN_END,
             "tt_s": 0, "tt_e": OPEN_END, "origin": "assert", "reason": null,
             "closed_by": null, "close_reason": null}]});
        let t = render(&h, TimeMode::Iso);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].ends_with("times in UTC"), "{}", lines[0]);
        assert!(
            lines[2].starts_with("2004-04-15T14:56:01Z  open "),
            "{}",
            lines[2]
        );
        assert!(lines[2].contains("1970-01-01T00:00:00Z"), "{}", lines[2]);
    }

    #[test]
    fn long_props_are_cut_visibly() {
        let p = props(&json!({"note": "x".repeat(100)}));
        assert_eq!(p.chars().count(), PROPS_CHARS);
        assert!(p.ends_with('…'));
    }
}
