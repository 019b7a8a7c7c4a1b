//! `tgms eval incident` and `tgms eval state-regression` (the spec's `evaluation.md` §5, §6): build
//! the dataset's store from its event log (explicit tt), run the evaluation, render it. The
//! campaign commands live in the submodules: `eval suite` ([`suite`], [`templates`],
//! [`planted`]), `eval run-suite` ([`run_suite`], [`score`], [`baselines`]), `eval report`
//! ([`report`], [`bootstrap`]).

pub mod baselines;
pub mod bootstrap;
pub mod embed;
pub mod planted;
pub mod report;
pub mod run_suite;
pub mod score;
pub mod suite;
pub mod templates;

use serde_json::Value;
use std::path::PathBuf;
use tgms_bench::scenarios::{self, IncidentReport, RegressionReport};
use tgms_engine::{Store, OPEN_END};

/// A scratch directory: the given one, or a fresh one under the system temp dir that is
/// removed on drop.
pub struct WorkDir {
    /// The directory (exists while the `WorkDir` lives).
    pub path: PathBuf,
    remove: bool,
}

impl WorkDir {
    /// `dir` if given (created if missing), else `$TMPDIR/tgms-<what>-<pid>-<nanos>`.
    pub fn new(dir: Option<PathBuf>, what: &str) -> anyhow::Result<WorkDir> {
        let (path, remove) = match dir {
            Some(d) => (d, false),
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                (
                    std::env::temp_dir()
                        .join(format!("tgms-{what}-{}-{nanos}", std::process::id())),
                    true,
                )
            }
        };
        std::fs::create_dir_all(&path)?;
        Ok(WorkDir { path, remove })
    }

    /// A store directory inside; an existing one is replaced.
    pub fn fresh(&self, name: &str) -> anyhow::Result<PathBuf> {
        let p = self.path.join(name);
        if p.exists() {
            std::fs::remove_dir_all(&p)?;
        }
        Ok(p)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Formats µs since the epoch as `YYYY-MM-DD HH:MM` UTC (`open` for OPEN_END).
pub fn utc(us: i64) -> String {
    if us >= OPEN_END {
        return "open".into();
    }
    // chrono's calendar, as everywhere else (docs/times.md).
    match chrono::DateTime::from_timestamp_micros(us) {
        Some(t) => t.format("%Y-%m-%d %H:%M").to_string(),
        None => format!("{us} µs"),
    }
}

/// Builds the incident store in `dir/incident` and evaluates it.
pub fn incident(work: &WorkDir) -> anyhow::Result<(Store, IncidentReport)> {
    let p = work.fresh("incident")?;
    let st = scenarios::build_store(&p, &scenarios::incident_log())?;
    let r = scenarios::eval_incident(&st).map_err(anyhow::Error::msg)?;
    Ok((st, r))
}

/// Builds the state-regression store in `dir/state-regression` and evaluates it.
pub fn state_regression(work: &WorkDir) -> anyhow::Result<(Store, RegressionReport)> {
    let p = work.fresh("state-regression")?;
    let st = scenarios::build_store(&p, &scenarios::state_regression_log())?;
    let r = scenarios::eval_state_regression(&st).map_err(anyhow::Error::msg)?;
    Ok((st, r))
}

/// `PASS` / `FAIL`, green / red when standard output is a terminal (see [`colour`]).
pub fn mark(ok: bool) -> String {
    if ok {
        paint("PASS", "32")
    } else {
        paint("FAIL", "31;1")
    }
}

/// Whether text for people gets colour: standard output is a terminal and `NO_COLOR` is
/// unset or empty (<https://no-color.org>).
pub fn colour() -> bool {
    use std::io::IsTerminal;
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    })
}

/// `s` wrapped in the ANSI SGR code `sgr` (e.g. `"1"` bold, `"32"` green) when [`colour`].
pub fn paint(s: &str, sgr: &str) -> String {
    if colour() {
        format!("\x1b[{sgr}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// `text` broken at spaces into lines of at most 100 characters, each starting with
/// `indent` (the first with `first`).
pub fn wrap(first: &str, indent: &str, text: &str) -> String {
    let mut lines = vec![first.to_string()];
    for w in text.split(' ') {
        let cur = lines.last_mut().map_or(0, |l| l.chars().count());
        let fresh = lines.last().is_some_and(|l| l == first || l == indent);
        if !fresh && cur + 1 + w.chars().count() > 100 {
            lines.push(indent.to_string());
        }
        let l = lines.last_mut().expect("at least one line");
        if !(l == first || l == indent) {
            l.push(' ');
        }
        l.push_str(w);
    }
    lines.join("\n")
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}…")
    }
}

/// The human rendering of the incident evaluation.
pub fn render_incident(r: &IncidentReport) -> String {
    let mut s = String::new();
    s.push_str(&wrap(
        "",
        "  ",
        &format!(
            "Question: what was checkout-api's instance type when the outage began ({} UTC), \
             and which change preceded it?",
            utc(scenarios::T_OUT)
        ),
    ));
    s.push('\n');
    s.push_str(&format!("  answer (current beliefs)      {}\n", r.answer));
    let change = format!(
        "  preceding change              {} {} from {} UTC",
        r.preceding_change.1,
        r.preceding_change.0,
        utc(r.preceding_change.2),
    );
    s.push_str(&format!(
        "{change}\n      {}\n",
        short(&r.preceding_change.3, 94)
    ));
    s.push_str(&format!(
        "  believed during the incident  {} from {} UTC (before the correction)\n",
        r.believed_during_incident.0,
        utc(r.believed_during_incident.1)
    ));
    s.push_str(&format!(
        "  naive latest-valid_from       {}   (wrong: that is the rollback, after the outage)\n",
        r.naive_answer
    ));
    s.push_str(
        "\n  Audit trail of HAS_INSTANCE_TYPE: every stored version, and why each was replaced\n",
    );
    s.push_str(&format!(
        "  {:<19} {:<37} {}\n",
        "instance type", "valid time (UTC)", "believed (transaction time, UTC)"
    ));
    for a in &r.audit {
        let vt = format!("[{}, {})", utc(a.vt_s), utc(a.vt_e));
        let tt = format!("[{}, {})", utc(a.tt_s), utc(a.tt_e));
        s.push_str(&format!("  {:<19} {vt:<37} {tt}\n", a.dst));
        let closed = if a.tt_e == OPEN_END {
            "still believed".to_string()
        } else {
            format!("replaced by {}: {}", a.closed_by, a.close_reason)
        };
        s.push_str(&format!(
            "      {}\n",
            short(
                &format!("written by {}: {}; {closed}", a.origin, a.reason),
                94
            )
        ));
    }
    s.push('\n');
    s.push_str(&render_checks(
        r.checks
            .iter()
            .map(|c| (c.name.as_str(), c.ok, c.got.as_str())),
    ));
    s
}

/// Check lines `[PASS] name — got`.
pub fn render_checks<N: AsRef<str>, G: AsRef<str>>(
    checks: impl Iterator<Item = (N, bool, G)>,
) -> String {
    let mut s = String::new();
    for (name, ok, got) in checks {
        // One line of at most 100 columns: `  [PASS] name — got`.
        let room = 100usize.saturating_sub(12 + name.as_ref().chars().count());
        s.push_str(&format!(
            "  [{}] {} — {}\n",
            mark(ok),
            name.as_ref(),
            short(got.as_ref(), room.max(16))
        ));
    }
    s
}

/// The human rendering of the state-at-T regression.
pub fn render_regression(r: &RegressionReport) -> String {
    let mut s = String::new();
    s.push_str(
        "36 state transitions (\"a later fact contradicts an earlier one\"), 117 questions:\n",
    );
    s.push_str(&format!(
        "  {:<34} {:>8} {:>9} {:>8} {:>8} {:>9} {:>11}\n",
        "system", "before", "boundary", "after", "pinned", "total", "error rate"
    ));
    let row = |name: &str, v: &[(u32, u32)], errs: (u32, u32)| {
        let cells: Vec<String> = v.iter().map(|(c, n)| format!("{c}/{n}")).collect();
        format!(
            "  {:<34} {:>8} {:>9} {:>8} {:>8} {:>9} {:>10.1}%\n",
            name,
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            format!("{}/{}", errs.1 - errs.0, errs.1),
            100.0 * errs.0 as f64 / errs.1.max(1) as f64
        )
    };
    s.push_str(&row("tgms state_at", &r.state_at, r.state_at_errors()));
    s.push_str(&row(
        "naive \"latest valid_from\"",
        &r.naive,
        r.naive_errors(),
    ));
    s.push_str(&row(
        "valid-time only (ignores as_of_tt)",
        &r.valid_time_only,
        r.valid_time_errors(),
    ));
    s.push('\n');
    let dg = r.store_digest == scenarios::STATE_REGRESSION_DIGEST;
    let sa = r.state_at_errors();
    let nv = r.naive_errors();
    s.push_str(&render_checks(
        [
            ("store digest as published", dg, r.store_digest.clone()),
            (
                "state_at: 0 errors of 117",
                sa.0 == 0 && sa.1 == 117,
                format!("{} errors", sa.0),
            ),
            (
                "naive lookup: > 0 errors",
                nv.0 > 0,
                format!("{} errors", nv.0),
            ),
        ]
        .into_iter(),
    ));
    for f in &r.failures {
        s.push_str(&format!("  state_at failure: {f}\n"));
    }
    s
}

/// True when the regression passes the demo's checks (digest, 0 errors, naive > 0).
pub fn regression_ok(r: &RegressionReport) -> bool {
    r.ok() && r.naive_errors().0 > 0
}

/// `tgms eval incident|state-regression`: prints and returns the evaluation record (with its
/// configuration, the commit and the machine) and whether every check passed.
pub fn run_eval(which: &str, dir: Option<PathBuf>, json: bool) -> anyhow::Result<(Value, bool)> {
    let (mut record, ok) = run_eval_inner(which, dir, json)?;
    let (os, cpus, machine) = crate::benchrun::machine();
    let (commit, dirty) = crate::benchrun::commit();
    if let Value::Object(m) = &mut record {
        m.insert("harness".into(), Value::from(which));
        m.insert(
            "config".into(),
            serde_json::json!({"dataset": if which == "incident" {
                "datasets/incident-checkout.eventlog.jsonl"
            } else {
                "state-at-T regression (generated)"
            }}),
        );
        m.insert("commit".into(), Value::from(commit));
        m.insert("dirty".into(), serde_json::json!(dirty));
        m.insert("os".into(), Value::from(os));
        m.insert("cpus".into(), Value::from(cpus));
        m.insert("machine".into(), Value::from(machine));
    }
    Ok((record, ok))
}

fn run_eval_inner(which: &str, dir: Option<PathBuf>, json: bool) -> anyhow::Result<(Value, bool)> {
    let work = WorkDir::new(dir, "eval")?;
    match which {
        "incident" => {
            let (_, r) = incident(&work)?;
            if !json {
                print!("{}", render_incident(&r));
            }
            Ok((r.to_json(), r.ok()))
        }
        _ => {
            let (_, r) = state_regression(&work)?;
            if !json {
                print!("{}", render_regression(&r));
            }
            let ok = regression_ok(&r);
            Ok((r.to_json(), ok))
        }
    }
}
