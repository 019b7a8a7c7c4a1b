//! `tgms eval report RUN.json… --out report.md|report.html`: systems side by side (overall
//! metrics, accuracy per family, probe accuracy before / now, unsupported claims before and
//! after gating, paired-bootstrap significance against `ours`); the HTML form adds inline-SVG
//! plots (accuracy by family, per-task outcome heat map) and needs no script.

use serde_json::Value;
use std::collections::BTreeSet;

fn pct(v: &Value) -> String {
    v.as_f64()
        .map_or("–".to_string(), |x| format!("{:.1}%", 100.0 * x))
}

fn label(run: &Value) -> String {
    match run["model"].as_str() {
        Some(m) => format!("{} ({m})", run["system"].as_str().unwrap_or("?")),
        None => run["system"].as_str().unwrap_or("?").to_string(),
    }
}

/// The families present in any run, sorted.
fn families(runs: &[Value]) -> Vec<String> {
    runs.iter()
        .flat_map(|r| {
            r["metrics"]["by_family"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.clone())
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The tables as rows of cells: (title, header, rows).
fn tables(runs: &[Value]) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let head = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    out.push((
        "Systems".to_string(),
        head(&[
            "system",
            "dataset",
            "split",
            "tasks",
            "overall acc.",
            "cond. acc.",
            "coverage",
            "mean F1",
            "PVR",
            "ESR",
            "refused",
            "errors",
        ]),
        runs.iter()
            .map(|r| {
                let m = &r["metrics"];
                vec![
                    label(r),
                    r["dataset"].as_str().unwrap_or("").to_string(),
                    r["split"].as_str().unwrap_or("").to_string(),
                    m["runs"].to_string(),
                    pct(&m["overall_accuracy"]),
                    pct(&m["conditional_accuracy"]),
                    pct(&m["answer_coverage"]),
                    pct(&m["mean_f1"]),
                    pct(&m["pvr"]),
                    pct(&m["esr"]),
                    m["refused"].to_string(),
                    m["errors"].to_string(),
                ]
            })
            .collect(),
    ));
    out.push(significance(runs));
    let fams = families(runs);
    let mut h = vec!["system".to_string()];
    h.extend(fams.iter().cloned());
    out.push((
        "Accuracy by family (exact match, unanswered = 0)".to_string(),
        h,
        runs.iter()
            .map(|r| {
                let mut row = vec![label(r)];
                for f in &fams {
                    let g = &r["metrics"]["by_family"][f];
                    row.push(if g.is_null() {
                        "–".into()
                    } else {
                        format!("{} ({})", pct(&g["accuracy"]), g["runs"])
                    });
                }
                row
            })
            .collect(),
    ));
    out.push((
        "Correction probes (same question before and after a correction)".to_string(),
        head(&["system", "before (pinned tt)", "now"]),
        runs.iter()
            .map(|r| {
                let p = &r["metrics"]["probes"];
                vec![
                    label(r),
                    pct(&p["before"]["accuracy"]),
                    pct(&p["now"]["accuracy"]),
                ]
            })
            .collect(),
    ));
    out.push((
        "Unsupported claims (answers with ≥ 1 unsupported claim / emitted answers with verifier data)"
            .to_string(),
        head(&["system", "before gating", "after gating", "mean ucr", "mean prose coverage"]),
        runs.iter()
            .map(|r| {
                let m = &r["metrics"];
                let verif = r["rows"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|x| x["verifier"] == true));
                if verif {
                    vec![
                        label(r),
                        pct(&m["unsupported_claim_rate"]),
                        pct(&m["unsupported_claim_rate_gated"]),
                        m["mean_ucr"].as_f64().map_or("–".into(), |x| format!("{x:.3}")),
                        pct(&m["mean_coverage"]),
                    ]
                } else {
                    vec![label(r), "no claims (baseline)".into(), "–".into(), "–".into(), "–".into()]
                }
            })
            .collect(),
    ));
    out
}

/// The paired bootstrap of every run against its `ours` run ([`super::bootstrap`]).
fn significance(runs: &[Value]) -> (String, Vec<String>, Vec<Vec<String>>) {
    use super::bootstrap::{compare, reference_of, RESAMPLES, SEED};
    let head = [
        "system",
        "vs",
        "paired tasks",
        "Δ accuracy",
        "95% interval",
        "p",
    ];
    let signed = |x: f64| format!("{:+.1} pp", 100.0 * x);
    let rows = runs
        .iter()
        .filter(|r| r["system"] != "ours")
        .map(|r| {
            let Some(reference) = reference_of(r, runs) else {
                return vec![
                    label(r),
                    "no ours run".into(),
                    "–".into(),
                    "–".into(),
                    "–".into(),
                    "–".into(),
                ];
            };
            match compare(r, reference) {
                Some(p) => vec![
                    label(r),
                    label(reference),
                    p.tasks.to_string(),
                    signed(p.diff),
                    format!("[{}, {}]", signed(p.lo), signed(p.hi)),
                    format!("{:.4}", p.p),
                ],
                None => vec![
                    label(r),
                    label(reference),
                    "0".into(),
                    "–".into(),
                    "–".into(),
                    "–".into(),
                ],
            }
        })
        .collect();
    (
        format!(
            "Significance (paired bootstrap of system − ours over tasks, {RESAMPLES} resamples, seed {SEED})"
        ),
        head.iter().map(|s| s.to_string()).collect(),
        rows,
    )
}

/// The Markdown report.
pub fn markdown(runs: &[Value]) -> String {
    let mut s = String::from("# tgms evaluation report\n\n");
    for (title, head, rows) in tables(runs) {
        s.push_str(&format!(
            "## {title}\n\n| {} |\n|{}\n",
            head.join(" | "),
            "---|".repeat(head.len())
        ));
        for r in rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        s.push('\n');
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const COLORS: [&str; 9] = [
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
    "#1f78b4",
];

/// Grouped bars: accuracy per family, one bar per run.
fn bars_svg(runs: &[Value]) -> String {
    let fams = families(runs);
    let (bw, gap, h) = (14.0, 18.0, 180.0);
    let group_w = bw * runs.len() as f64 + gap;
    let width = 60.0 + group_w * fams.len() as f64 + 20.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{}\" role=\"img\" aria-label=\"accuracy by family\">",
        h + 60.0 + 18.0 * runs.len() as f64
    );
    for k in 0..=4 {
        let y = 20.0 + h - h * k as f64 / 4.0;
        s.push_str(&format!(
            "<line x1=\"50\" x2=\"{:.0}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"45\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}%</text>",
            width - 10.0,
            y + 3.0,
            k * 25
        ));
    }
    for (fi, f) in fams.iter().enumerate() {
        let x0 = 60.0 + group_w * fi as f64;
        for (ri, r) in runs.iter().enumerate() {
            let acc = r["metrics"]["by_family"][f]["accuracy"]
                .as_f64()
                .unwrap_or(0.0);
            let bh = h * acc;
            s.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw}\" height=\"{bh:.1}\" fill=\"{}\"><title>{} {f}: {}</title></rect>",
                x0 + bw * ri as f64,
                20.0 + h - bh,
                COLORS[ri % COLORS.len()],
                esc(&label(r)),
                pct(&Value::from(acc))
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            x0 + bw * runs.len() as f64 / 2.0,
            20.0 + h + 14.0,
            esc(f)
        ));
    }
    for (ri, r) in runs.iter().enumerate() {
        let y = 20.0 + h + 34.0 + 18.0 * ri as f64;
        s.push_str(&format!(
            "<rect x=\"60\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"76\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            y - 9.0,
            COLORS[ri % COLORS.len()],
            y,
            esc(&label(r))
        ));
    }
    s.push_str("</svg>");
    s
}

/// Heat map: one column per task, one row per run; green exact, amber partial, red wrong,
/// grey unanswered or refused.
fn heat_svg(runs: &[Value]) -> String {
    let tasks: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x["task_id"].as_str().map(str::to_string))
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cell = 6.0;
    let left = 220.0;
    let width = left + cell * tasks.len() as f64 + 10.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{:.0}\" role=\"img\" aria-label=\"per-task outcomes\">",
        20.0 + 14.0 * runs.len() as f64
    );
    for (ri, r) in runs.iter().enumerate() {
        let y = 10.0 + 14.0 * ri as f64;
        s.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 10.0,
            esc(&label(r))
        ));
        let rows: std::collections::BTreeMap<&str, &Value> = r["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["task_id"].as_str().map(|id| (id, x)))
            .collect();
        for (ti, t) in tasks.iter().enumerate() {
            let (fill, what) = match rows.get(t.as_str()) {
                None => ("#ffffff", "not run"),
                Some(x) if x["emitted"] != true => ("#bdbdbd", "unanswered / refused"),
                Some(x) if x["em"].as_f64() == Some(1.0) => ("#1a9850", "exact"),
                Some(x) if x["f1"].as_f64().unwrap_or(0.0) > 0.0 => ("#fdae61", "partial"),
                Some(_) => ("#d73027", "wrong"),
            };
            s.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"12\" fill=\"{fill}\"><title>{}: {what}</title></rect>",
                left + cell * ti as f64,
                cell - 1.0,
                esc(t)
            ));
        }
    }
    s.push_str("</svg>");
    s
}

/// The HTML report (self-contained: inline CSS and SVG, no script).
pub fn html(runs: &[Value]) -> String {
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>tgms evaluation report</title>\
         <style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}\
         .plot{overflow-x:auto}</style></head><body><h1>tgms evaluation report</h1>",
    );
    for (title, head, rows) in tables(runs) {
        s.push_str(&format!("<h2>{}</h2><table><tr>", esc(&title)));
        for h in head {
            s.push_str(&format!("<th>{}</th>", esc(&h)));
        }
        s.push_str("</tr>");
        for r in rows {
            s.push_str("<tr>");
            for c in r {
                s.push_str(&format!("<td>{}</td>", esc(&c)));
            }
            s.push_str("</tr>");
        }
        s.push_str("</table>");
    }
    s.push_str("<h2>Accuracy by family</h2><div class=\"plot\">");
    s.push_str(&bars_svg(runs));
    s.push_str("</div><h2>Per-task outcomes</h2><p>green exact · amber partial · red wrong · grey unanswered or refused</p><div class=\"plot\">");
    s.push_str(&heat_svg(runs));
    s.push_str("</div></body></html>\n");
    s
}
