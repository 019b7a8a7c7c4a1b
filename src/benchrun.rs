//! `tgms bench run` (the spec's `evaluation.md` §2): generate the synthetic log at a scale (with its
//! corrections), then time the registry queries with the §2.3 protocol, and measure bulk
//! ingest rate, bytes per edge version, open time of a fresh process, first-query time and
//! peak RSS. A human table on stdout (progress bar on stderr) and the run record as JSON.

use crate::eval::WorkDir;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tgms_bench::generate::{generate, ClockMode};
use tgms_bench::registry::{self, Params, Protocol, QueryRecord};
use tgms_engine::Store;

/// Options of one run.
pub struct RunOpts {
    /// Generate the synthetic log with this many events (fixed clock), unless `log` is given.
    pub scale: Option<u64>,
    /// A TGMS event log to import instead of `scale` (replayed-log parameters, §2.1).
    pub log: Option<PathBuf>,
    /// Where the store goes; used as it is when it already holds one.
    pub store: Option<PathBuf>,
    /// Where to write the run record as canonical JSON, if anywhere.
    pub json: Option<PathBuf>,
    /// Warm-ups and timed repetitions per query.
    pub protocol: Protocol,
    /// Only these query ids (all when empty).
    pub only: Vec<String>,
    /// Compact a store this run builds before timing it (`tgms compact`: one indexed image
    /// that read-only opens map, `format-spec.md` §9.3–§9.4).
    pub compact: bool,
}

fn cmd_out(prog: &str, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(prog).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// How an open serves `st`, in words: one mapped image, a mapped image with decoded flush
/// segments and a replayed log tail above it, or decoded segments and log
/// (`format-spec.md` §9.4).
pub fn layout(st: &Store) -> String {
    let flushed = st.segments().len().saturating_sub(1);
    let mut parts = vec!["mapped image".to_string()];
    if flushed > 0 {
        parts.push(format!("{flushed} decoded flush segment(s)"));
    }
    match st.memtable_rows() {
        0 => {}
        m => parts.push(format!("log tail ({m} row(s) replayed)")),
    }
    match (st.is_lazy(), parts.len()) {
        (true, 1) => "one mapped image (read from the file, not decoded)".to_string(),
        (true, _) => format!("{} (`tgms compact` makes one image)", parts.join(" + ")),
        (false, _) => format!(
            "decoded segments + log ({} segment(s); `tgms compact` makes one mapped image)",
            st.segments().len()
        ),
    }
}

/// The machine description: `(os, cpus, machine)`.
pub fn machine() -> (String, usize, String) {
    let os_release = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .unwrap_or_default();
    let os = format!(
        "{} {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH,
        os_release
    )
    .trim()
    .to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("MemTotal:")
                    .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
            })
        })
        .map(|kb| format!(", {:.1} GiB RAM", kb as f64 / 1048576.0))
        .unwrap_or_default();
    let host = cmd_out("uname", &["-n"]).unwrap_or_else(|| "unknown".into());
    (os, cpus, format!("{host}: {model}, {cpus} CPUs{mem}"))
}

/// The git commit of the working directory and whether it is dirty (`unknown` / `None`
/// outside a checkout).
pub fn commit() -> (String, Option<bool>) {
    (
        cmd_out("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into()),
        cmd_out("git", &["status", "--porcelain"]).map(|s| !s.is_empty()),
    )
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    proc_status_bytes("VmHWM:")
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn proc_status_bytes(field: &str) -> Option<u64> {
    let t = std::fs::read_to_string("/proc/self/status").ok()?;
    t.lines().find_map(|l| {
        l.strip_prefix(field)
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    })
}

/// Resets the process's peak RSS to its current RSS (Linux: `5` to `/proc/self/clear_refs`),
/// so that [`peak_rss`] measures what follows; false where that is not possible.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The bound of the bulk load a run builds its store in: one that is compacted at the end
/// of its build loads as `tgms ingest` does then ([`Store::bulk_load`]: its ingest batches
/// built in bulk); otherwise batch by batch, the store timed as written.
fn build_bound(compact: bool) -> u64 {
    if compact {
        tgms_engine::store::LOAD_DECODED_ROWS
    } else {
        0
    }
}

/// Compacts a store the run just built (when asked), timing it; otherwise closes it, which
/// seals the log tail ([`Store::close`]), so that the fresh process of the open probe and
/// the timed open find no log to replay.
fn finish_build(mut st: Store, compact: bool) -> anyhow::Result<Option<f64>> {
    if !compact {
        st.close()?;
        return Ok(None);
    }
    let pb = bar(0, "compact");
    let start = Instant::now();
    st.compact()?;
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    eprintln!("compacted into one indexed image in {secs:.2} s");
    Ok(Some(secs))
}

/// `tgms bench open-probe STORE`: opens STORE read-only and runs `hist.single` once, timing
/// both (run in a fresh process by `bench run`).
pub fn open_probe(store: &Path) -> anyhow::Result<Value> {
    let start = Instant::now();
    let st = crate::store_env::open_read_only(store)?;
    let open_ms = start.elapsed().as_secs_f64() * 1000.0;
    let q = json!({"uid": "n1"});
    let start = Instant::now();
    let r = tgms_operators::call_operator(
        st.snapshot(),
        "entity_history",
        &q,
        &tgms_operators::CallOptions::default(),
    );
    let first_ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(json!({"open_ms": open_ms, "first_query_ms": first_ms,
        "first_query_hash": r.ok().map(|e| registry::registry_hash(&e))}))
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

fn ms(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| {
        if v < 10.0 {
            format!("{v:.3}")
        } else {
            format!("{v:.1}")
        }
    })
}

/// The human table of the per-query records.
pub fn render_table(recs: &[QueryRecord]) -> String {
    // Fits 100 columns; the run record (`--json`) has the full answer hashes.
    let mut s = format!(
        "{:<16} {:<29} {:>8} {:>8} {:>11}  {:<13}  {}\n",
        "query", "operator", "p50 ms", "p95 ms", "rows", "answer hash", "status"
    );
    for r in recs {
        let status = match (&r.error, r.ok) {
            (_, true) => "ok".to_string(),
            (Some(e), _) if e == "not_available" => "not available in this build".into(),
            (_, false) if r.refused() => {
                match r.refusal.as_ref().map(|f| (f.estimate_ms, f.ceiling_ms)) {
                    Some((Some(est), Some(cap))) => {
                        format!(
                            "refused by cost: {} ms est. > {} ms",
                            thousands(est),
                            thousands(cap)
                        )
                    }
                    _ => "refused by cost".into(),
                }
            }
            (Some(e), _) => format!("FAILED: {e}"),
            (None, false) => "FAILED".into(),
        };
        let hash = r.hash.as_deref().map_or_else(
            || "—".to_string(),
            |h| format!("{}…", h.get(..12).unwrap_or(h)),
        );
        s.push_str(&format!(
            "{:<16} {:<29} {:>8} {:>8} {:>11}  {:<13}  {}\n",
            r.id,
            r.op,
            ms(r.p50_ms),
            ms(r.p95_ms),
            r.rows.map_or("—".into(), |n| n.to_string()),
            hash,
            status
        ));
    }
    s
}

/// `12345` as `12,345`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The narrowing repair of every query the cost model refused, one paragraph each (empty
/// when none was refused).
pub fn render_refusals(recs: &[QueryRecord]) -> String {
    let mut s = String::new();
    for r in recs.iter().filter(|r| r.refused()) {
        let Some(f) = &r.refusal else { continue };
        let mut repairs = vec![f.suggestions.join("; ")];
        if let Some(args) = &f.sample_mode {
            repairs.push(format!(
                "an approximate count with {} (docs/approximate.md)",
                tgms_engine::canon::to_string(args)
            ));
        }
        repairs.retain(|x| !x.is_empty());
        s.push_str(&format!("{} ({}): {}\n", r.id, r.op, repairs.join("; or ")));
    }
    if s.is_empty() {
        return s;
    }
    format!(
        "refused by the cost model at this scale (E_COST, docs/errors.md#e_cost); each call \
         answers once narrowed:\n{s}"
    )
}

/// Runs the registry on `store` with progress; returns the per-query records.
pub fn run_registry(
    st: &Store,
    params: &Params,
    proto: Protocol,
    only: &[String],
    progress: bool,
) -> Vec<QueryRecord> {
    let qs: Vec<_> = registry::queries(params)
        .into_iter()
        .filter(|q| only.is_empty() || only.iter().any(|o| o == q.id))
        .collect();
    run_queries(st, &qs, proto, progress)
}

/// Runs `qs` on `store` in order, with progress; returns the per-query records.
pub fn run_queries(
    st: &Store,
    qs: &[registry::Query],
    proto: Protocol,
    progress: bool,
) -> Vec<QueryRecord> {
    let pb = if progress {
        bar(qs.len() as u64, "queries")
    } else {
        ProgressBar::hidden()
    };
    let mut recs = Vec::new();
    for q in qs {
        pb.set_message(q.id);
        recs.push(registry::run_query(st.snapshot(), q, proto));
        pb.inc(1);
    }
    pb.finish_and_clear();
    recs
}

/// `tgms bench run`: prints the table; returns the run record and whether it passed (every
/// registered query answered).
pub fn run(opts: RunOpts) -> anyhow::Result<(Value, bool)> {
    let work = WorkDir::new(None, "bench")?;
    let target = |name: &str| -> anyhow::Result<PathBuf> {
        match &opts.store {
            Some(p) => Ok(p.clone()),
            None => work.fresh(name),
        }
    };
    let holds_store = |p: &Path| p.join(tgms_engine::store::WAL_FILE).exists();
    let mut compact_s = None;
    let (store_path, dataset, scale, ingest_rate, params) = match (&opts.log, opts.scale) {
        (Some(log), _) => {
            let p = target("log")?;
            let mut rate = None;
            if !holds_store(&p) {
                let mut st = crate::store_env::create(&p)?;
                // An imported log writes at its recorded tts, batch by batch: a load that
                // compacts at its end lets the image double at each merge.
                st.set_bulk_load(build_bound(opts.compact));
                let pb = bar(0, "import");
                let start = Instant::now();
                let r = tgms_engine::eventlog::import(&mut st, log, &mut |n| pb.set_position(n));
                pb.finish_and_clear();
                let r = r?;
                eprintln!(
                    "imported {}: {} batches, {} events in {:.2} s",
                    log.display(),
                    r.batches,
                    r.events,
                    start.elapsed().as_secs_f64()
                );
                rate = Some(r.events as f64 / start.elapsed().as_secs_f64().max(1e-9));
                compact_s = finish_build(st, opts.compact)?;
            }
            let st = crate::store_env::open_read_only(&p)?;
            let params = Params::from_store(&st);
            (p, log.display().to_string(), None, rate, params)
        }
        (None, Some(n)) => {
            let p = target(&format!("synthetic-{n}"))?;
            let dataset = format!("synthetic N={n} (fixed clock, with corrections)");
            if holds_store(&p) {
                // Used as it is: it must come from `bench generate --scale N`.
                let tt_epoch1 = tgms_bench::generate::FIXED_TT_BASE
                    + (n.div_ceil(tgms_engine::op::INGEST_CHUNK as u64)) as i64
                    + 1;
                (p, dataset, Some(n), None, Params::synthetic(n, tt_epoch1))
            } else {
                let mut st = crate::store_env::create(&p)?;
                let pb = bar(0, "generate");
                let start = Instant::now();
                let r = st.bulk_load(build_bound(opts.compact), |ld| {
                    generate(ld, n, ClockMode::Fixed, &mut |done, total| {
                        pb.set_length(total);
                        pb.set_position(done)
                    })
                });
                let secs = start.elapsed().as_secs_f64();
                pb.finish_and_clear();
                let r = r??;
                let rate = n as f64 / secs.max(1e-9);
                eprintln!(
                    "generated scale {n}: {} batches in {secs:.2} s ({rate:.0} events/s), digest {}",
                    r.batches,
                    st.digest()
                );
                compact_s = finish_build(st, opts.compact)?;
                (
                    p,
                    dataset,
                    Some(n),
                    Some(rate),
                    Params::synthetic(n, r.tt_epoch1),
                )
            }
        }
        (None, None) => anyhow::bail!("give --scale N or --log LOG.jsonl"),
    };
    // A store built by this process (it has an ingest rate): what building took, then the
    // peak from here on, the open's and the queries'.
    let built = ingest_rate.is_some();
    let build_rss = peak_rss().filter(|_| built);
    let rss_reset = reset_peak_rss();
    // Memory the build left behind (freed but kept by the allocator) counts in the peak.
    let rss_at_reset = proc_status_bytes("VmRSS:").filter(|_| built);
    // Open time and first query of a fresh process.
    let probe = std::env::current_exe()
        .ok()
        .and_then(|exe| {
            std::process::Command::new(exe)
                .args(["bench", "open-probe"])
                .arg(&store_path)
                .output()
                .ok()
        })
        .and_then(|o| tgms_engine::canon::parse(String::from_utf8_lossy(&o.stdout).trim()).ok())
        .unwrap_or(Value::Null);
    let st = crate::store_env::open_read_only(&store_path)?;
    let stats = st.stats().clone();
    let (total, log) = st.disk_bytes()?;
    let nev = stats.n_edge_versions.max(1) as f64;
    let recs = run_registry(&st, &params, opts.protocol, &opts.only, true);
    print!("{}", render_table(&recs));
    let refusals = render_refusals(&recs);
    if !refusals.is_empty() {
        print!("\n{refusals}");
    }
    let all_registered = recs.iter().all(|r| r.available);
    // A refusal by the cost model is the designed answer at a scale, not a failure.
    let failed: Vec<&QueryRecord> = recs
        .iter()
        .filter(|r| r.available && !r.ok && !r.refused())
        .collect();
    let refused = recs.iter().filter(|r| r.refused()).count();
    let unavailable = recs.iter().filter(|r| !r.available).count();
    let (os, cpus, machine) = machine();
    let (commit, dirty) = commit();
    let record = json!({
        "commit": commit,
        "dirty": dirty,
        "rustc": cmd_out("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
        "os": os, "cpus": cpus, "machine": machine,
        "dataset": dataset, "scale": scale,
        "systems": ["tgms"],
        "protocol": opts.protocol.to_json(),
        "query_order": recs.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        "queries": recs.iter().map(QueryRecord::to_json).collect::<Vec<_>>(),
        "ingest_events_per_s": ingest_rate.map(|r| r.round()),
        "bytes_per_edge_version": ((total - log) as f64 / nev * 100.0).round() / 100.0,
        "log_bytes_per_edge_version": (log as f64 / nev * 100.0).round() / 100.0,
        "open_ms": probe["open_ms"],
        "first_query_ms": probe["first_query_ms"],
        "peak_rss_bytes": peak_rss(),
        "peak_rss_covers": if rss_reset { "open and queries" } else { "the whole process" },
        "build_peak_rss_bytes": build_rss,
        "rss_after_build_bytes": rss_at_reset,
        "compact_s": compact_s.map(|s| (s * 100.0).round() / 100.0),
        "mapped_image": st.is_lazy(),
        "n_edge_versions": stats.n_edge_versions,
        "store_digest": st.digest(),
        "params": {"t0": params.t0, "t1": params.t1, "tt_epoch1": params.tt_epoch1},
    });
    println!();
    let f = |k: &str| match &record[k] {
        Value::Null => "—".to_string(),
        Value::Number(n) => n.as_f64().map_or(n.to_string(), |x| {
            format!("{:.3}", x)
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        }),
        v => v.to_string(),
    };
    println!("dataset                     {dataset}");
    println!("bulk ingest (events/s)      {}", f("ingest_events_per_s"));
    println!(
        "store bytes / edge version  {} (excluding the write-ahead log)",
        f("bytes_per_edge_version")
    );
    println!(
        "log bytes / edge version    {}",
        f("log_bytes_per_edge_version")
    );
    println!("open, fresh process (ms)    {}", f("open_ms"));
    println!("first query (ms)            {}", f("first_query_ms"));
    println!(
        "peak RSS (bytes)            {} ({})",
        f("peak_rss_bytes"),
        record["peak_rss_covers"].as_str().unwrap_or("")
    );
    if built {
        println!(
            "build peak RSS (bytes)      {} ({} still resident when the queries began; \
             time an existing store with --store for a clean process)",
            f("build_peak_rss_bytes"),
            f("rss_after_build_bytes")
        );
        println!("compaction (s)              {}", f("compact_s"));
    }
    println!("store served as             {}", layout(&st));
    println!("machine                     {machine}");
    println!(
        "queries: {} answered, {} not available in this build, {} refused by the cost model, {} failed",
        recs.iter().filter(|r| r.ok).count(),
        unavailable,
        refused,
        failed.len()
    );
    if let Some(path) = &opts.json {
        std::fs::write(path, tgms_engine::canon::to_string(&record) + "\n")?;
        eprintln!("wrote {}", path.display());
    }
    // Failures count once every operator exists; until then only registered ones count.
    let _ = all_registered;
    let ok = failed.is_empty();
    Ok((record, ok))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgms_bench::registry::Refusal;

    fn record(id: &str, error: Option<&str>, refusal: Option<Refusal>) -> QueryRecord {
        QueryRecord {
            id: id.into(),
            op: "count_temporal_motifs".into(),
            ok: error.is_none(),
            hash: None,
            result_digest: None,
            p50_ms: None,
            p95_ms: None,
            rows: None,
            error: error.map(str::to_string),
            refusal,
            timings_ms: Vec::new(),
            available: true,
            ours: false,
        }
    }

    #[test]
    fn a_refusal_is_shown_with_its_estimate_and_repair() {
        let refusal = Refusal {
            estimate_ms: Some(60_266),
            ceiling_ms: Some(10_000),
            suggestions: vec!["narrow the valid-time window".into()],
            sample_mode: Some(json!({"mode": "sample", "epsilon": 0.05})),
        };
        let recs = [
            record("motif.all36", Some("gr"), Some(refusal)),
            record("paths.k", Some("E_INTERNAL"), None),
            record("hist.single", None, None),
        ];
        let table = render_table(&recs);
        assert!(
            table.contains("refused by cost: 60,266 ms est. > 10,000 ms"),
            "{table}"
        );
        assert!(table.contains("FAILED: E_INTERNAL"), "{table}");
        let repairs = render_refusals(&recs);
        assert!(
            repairs.starts_with("refused by the cost model"),
            "{repairs}"
        );
        assert!(
            repairs.contains(
                "motif.all36 (count_temporal_motifs): narrow the valid-time window; or an approximate count with {\"epsilon\":0.05,\"mode\":\"sample\"}"
            ),
            "{repairs}"
        );
        assert!(!repairs.contains("paths.k"));
        // A sample-mode repair alone.
        let alone = Refusal {
            estimate_ms: None,
            ceiling_ms: None,
            suggestions: Vec::new(),
            sample_mode: Some(json!({"mode": "sample"})),
        };
        let only = render_refusals(&[record("m", Some("gr"), Some(alone))]);
        assert!(
            only.ends_with("\nm (count_temporal_motifs): an approximate count with {\"mode\":\"sample\"} (docs/approximate.md)\n"),
            "{only}"
        );
        assert_eq!(render_refusals(&recs[1..]), "");
        assert_eq!(
            [0, 999, 1_000, 60_266, 1_234_567, -4_500].map(thousands),
            ["0", "999", "1,000", "60,266", "1,234,567", "-4,500"]
        );
    }
}
