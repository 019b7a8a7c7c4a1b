//! The CLI's examples and its Markdown reference. Every command's examples live in
//! [`EXAMPLES`] and are attached to its help ([`with_examples`]): `-h` shows the first one on
//! one line, `--help` shows all of them, each on its own line so that it pastes.
//! [`markdown`] renders the whole command tree as `docs/cli.md` (`tgms help-markdown`).
//!
//! The examples are executed by `tests/help_examples.rs` on a fresh store, so they must run
//! as written from the repository root: `/tmp/store` is a store holding the shipped
//! CollegeMsg dataset (`tgms ingest /tmp/store --dataset collegemsg`), every other `/tmp/`
//! path is new, and files come from `examples/` or `datasets/`. `<trace_id>` stands for the
//! trace id the example before it printed. A line ending in `# needs a model server` or
//! `# serves until stopped` is shown but not executed by the test.

use clap::Command;

/// Example lines per command path (`""` is the top level; `"plan run"` a subcommand).
pub const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "tgms init /tmp/college",
            "tgms ingest /tmp/college --dataset collegemsg",
            "tgms stats /tmp/college",
            "tgms call /tmp/college entity_history '{\"uid\": \"n1\", \"include_edges\": true}' --format table",
        ],
    ),
    ("init", &["tgms init /tmp/new-store"]),
    (
        "ingest",
        &[
            "tgms ingest /tmp/store examples/edges.txt --format snap --rel-type MSG",
            "tgms init /tmp/college && tgms ingest /tmp/college --dataset collegemsg",
            "tgms ingest /tmp/store examples/events.jsonl --format jsonl-events --compact never",
            "tgms init /tmp/rows && tgms export-rows /tmp/store /tmp/rows.csv && tgms ingest /tmp/rows /tmp/rows.csv --format csv --only kind=edge --src src --dst dst --time-col vt_s --end vt_e --rel-type-col rel_type --disc disc --props-json props --dry-run",
        ],
    ),
    (
        "write",
        &[
            "tgms write /tmp/store examples/batch.json",
            "tgms write /tmp/store examples/batch.json --batch-key hr-fix-2024-03",
            "tgms history /tmp/store alice",
        ],
    ),
    (
        "stats",
        &["tgms stats /tmp/store", "tgms stats /tmp/store --format json"],
    ),
    ("digest", &["tgms digest /tmp/store"]),
    (
        "replay",
        &["tgms replay /tmp/store /tmp/copy && tgms digest /tmp/copy"],
    ),
    (
        "history",
        &[
            "tgms history /tmp/store n1",
            "tgms history /tmp/store n1 --edges --format json",
        ],
    ),
    (
        "import-eventlog",
        &["tgms init /tmp/incident && tgms import-eventlog /tmp/incident datasets/incident-checkout.eventlog.jsonl"],
    ),
    (
        "export-eventlog",
        &["tgms export-eventlog /tmp/store /tmp/store.eventlog.jsonl --strict"],
    ),
    (
        "call",
        &[
            "tgms call /tmp/store entity_history '{\"uid\": \"n1\", \"include_edges\": true}'",
            "tgms call /tmp/store state_at '{\"uid\": \"n1\", \"at\": 1082500000000000}' --format table",
            "tgms call /tmp/store resolve_entities '{\"query\": \"n17\"}' --format table",
            "tgms call /tmp/store state_at '{\"uid\": \"n1\", \"at\": \"2004-04-25T12:00:00Z\"}' --time us",
            "echo '{\"seeds\": [\"n1\"], \"hops\": 1, \"t_valid\": 1082500000000000}' | tgms call /tmp/store snapshot_subgraph -",
        ],
    ),
    (
        "tools",
        &["tgms tools --format openai", "tgms tools --format markdown"],
    ),
    ("check", &["tgms check /tmp/store"]),
    ("compact", &["tgms compact /tmp/store"]),
    (
        "bench",
        &[
            "tgms bench generate --scale 10000 /tmp/bench10k",
            "tgms bench run --store /tmp/bench10k --scale 10000 --only hist.single,state.at --reps 3",
        ],
    ),
    (
        "bench generate",
        &["tgms bench generate --scale 10000 /tmp/bench10k"],
    ),
    (
        "bench collegemsg-log",
        &["tgms bench collegemsg-log /tmp/collegemsg.eventlog.jsonl"],
    ),
    (
        "bench run",
        &[
            "tgms bench run --scale 10000 --only hist.single,snap.hop2 --reps 3 --json /tmp/bench-10k.json",
            "tgms bench generate --scale 10000 /tmp/s10k && tgms bench run --scale 10000 --store /tmp/s10k --compact --only state.at",
        ],
    ),
    (
        "bench mcp",
        &["tgms bench mcp --store /tmp/store --calls 50 --clients 2 --seconds 1"],
    ),
    ("bench soak", &["tgms bench soak --secs 3 --readers 1"]),
    (
        "plan",
        &[
            "tgms plan validate /tmp/store examples/plan.json",
            "tgms plan run /tmp/store examples/plan.json --report",
        ],
    ),
    (
        "plan validate",
        &[
            "tgms plan validate /tmp/store examples/plan.json",
            "tgms plan validate /tmp/store examples/plan.json --uids n1",
        ],
    ),
    (
        "plan run",
        &[
            "tgms plan run /tmp/store examples/plan.json --report --trace-out /tmp/trace.json",
            "tgms plan run /tmp/store examples/plan.json --html /tmp/trace.html",
            "tgms plan run /tmp/store examples/plan.json --ceilings '{\"max_reducer_rows\": 2000000}'",
        ],
    ),
    (
        "verify",
        &[
            "tgms plan run /tmp/store examples/plan.json --trace-out /tmp/trace.json",
            "tgms verify /tmp/store examples/answer.json --trace /tmp/trace.json",
        ],
    ),
    (
        "view",
        &[
            "tgms plan run /tmp/store examples/plan.json",
            "tgms view /tmp/store <trace_id> --plan examples/plan.json --out /tmp/trace.html",
        ],
    ),
    (
        "traces",
        &[
            "tgms plan run /tmp/store examples/plan.json && tgms traces /tmp/store",
            "tgms traces /tmp/store --json",
        ],
    ),
    (
        "sql",
        &[
            "tgms sql /tmp/store \"SELECT rel_type, count(*) AS n FROM rows WHERE kind = 'edge' AND tt_e = open_end() GROUP BY rel_type\"",
            "tgms sql /tmp/store \"SELECT date_trunc('month', vt_s) AS month, count(*) AS n FROM rows WHERE kind = 'edge' GROUP BY 1 ORDER BY 1\" --format csv",
            "tgms sql /tmp/store \"SELECT vt_s, tt_s, tt_e, props, origin, reason FROM rows WHERE uid = 'n1'\" --as-of 2030-01-01T00:00:00Z --format json",
            "tgms sql /tmp/store \"DESCRIBE rows\"",
        ],
    ),
    ("export-rows", &["tgms export-rows /tmp/store /tmp/rows.parquet"]),
    (
        "import-rows",
        &["tgms export-rows /tmp/store /tmp/all.parquet && tgms init /tmp/copy && tgms import-rows /tmp/copy /tmp/all.parquet"],
    ),
    ("demo", &["tgms demo --dir /tmp/demo --html /tmp/demo-trace.html"]),
    (
        "serve",
        &[
            "tgms serve --store /tmp/store --readonly   # serves until stopped",
            "tgms serve --store /tmp/store --readonly --http 127.0.0.1:8765   # serves until stopped",
            "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}' '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}' '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"entity_history\",\"arguments\":{\"uid\":\"n1\"}}}' | tgms serve --store /tmp/store --readonly",
        ],
    ),
    (
        "eval",
        &[
            "tgms eval incident",
            "tgms eval state-regression --json",
        ],
    ),
    ("eval mutations", &["tgms eval mutations /tmp/store --pool classic"]),
    (
        "eval suite",
        &["tgms init /tmp/small && tgms ingest /tmp/small examples/eval-small.txt && tgms eval suite /tmp/small --dataset small --out /tmp/suite.json"],
    ),
    (
        "eval plant",
        &["tgms init /tmp/small && tgms ingest /tmp/small examples/eval-small.txt && tgms eval plant /tmp/small --out /tmp/manifest.json && tgms eval suite /tmp/small --dataset small --planted /tmp/manifest.json --out /tmp/suite.json"],
    ),
    (
        "eval run-suite",
        &["tgms init /tmp/small && tgms ingest /tmp/small examples/eval-small.txt && tgms eval suite /tmp/small --dataset small --out /tmp/suite.json && tgms eval run-suite /tmp/small --suite /tmp/suite.json --system oracle --split dev --json /tmp/run.json"],
    ),
    (
        "eval report",
        &["tgms init /tmp/small && tgms ingest /tmp/small examples/eval-small.txt && tgms eval suite /tmp/small --dataset small --out /tmp/suite.json && tgms eval run-suite /tmp/small --suite /tmp/suite.json --system oracle --split dev --json /tmp/run.json && tgms eval report /tmp/run.json --out /tmp/report.html"],
    ),
    ("eval incident", &["tgms eval incident --json"]),
    ("eval state-regression", &["tgms eval state-regression"]),
    (
        "ask",
        &[
            "tgms ask /tmp/store \"How many messages did n1 send?\" --model qwen2.5-7b --llm-base-url http://127.0.0.1:8000/v1   # needs a model server",
        ],
    ),
    (
        "memory",
        &[
            "tgms memory build /tmp/store --stride-days 30",
            "tgms memory list /tmp/store",
        ],
    ),
    (
        "memory build",
        &["tgms memory build /tmp/store --stride-days 30"],
    ),
    (
        "memory refresh",
        &["tgms memory build /tmp/store && tgms write /tmp/store examples/batch.json && tgms memory refresh /tmp/store"],
    ),
    ("memory list", &["tgms memory build /tmp/store && tgms memory list /tmp/store"]),
];

/// The examples of one command path.
pub fn examples_of(path: &str) -> &'static [&'static str] {
    EXAMPLES
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(&[], |(_, e)| e)
}

/// `cmd` with its examples attached to every command of the tree (hidden ones excepted).
pub fn with_examples(cmd: Command) -> Command {
    attach(cmd, "")
}

fn attach(mut cmd: Command, path: &str) -> Command {
    let ex = examples_of(path);
    if let Some(first) = ex.first() {
        let all: Vec<String> = ex.iter().map(|l| format!("  {l}")).collect();
        cmd = cmd
            .after_help(format!("Example: {first}"))
            .after_long_help(format!("Examples:\n{}", all.join("\n")));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for n in names {
        let sub = if path.is_empty() {
            n.clone()
        } else {
            format!("{path} {n}")
        };
        cmd = cmd.mut_subcommand(&n, |c| attach(c, &sub));
    }
    cmd
}

/// The CLI reference page: every visible command with its long help, arguments and
/// examples, in tree order.
pub fn markdown(cmd: &Command) -> String {
    let mut s = String::from(
        "# CLI reference\n\n<!-- Generated by `tgms help-markdown > docs/cli.md` from the \
         command definitions; do not edit by hand (a test fails when it is out of date). -->\n\n\
         Every command prints its result on standard output (canonical JSON, or a table where \
         noted) and errors as `{\"error\", \"message\", \"details\"}` ([errors](errors.md)). \
         Times are integers, µs since 1970-01-01 UTC. `tgms COMMAND --help` prints the same \
         text as this page.\n\n",
    );
    let mut cmd = cmd.clone();
    cmd.build();
    for (path, c) in walk(&cmd, "") {
        if path.is_empty() {
            s.push_str(&format!("## tgms\n\n{}\n", block(&c)));
        } else {
            s.push_str(&format!("\n## tgms {path}\n\n{}\n", block(&c)));
        }
    }
    s
}

/// Every visible command under `cmd` (itself first) with its path.
fn walk(cmd: &Command, path: &str) -> Vec<(String, Command)> {
    let mut v = vec![(path.to_string(), cmd.clone())];
    for c in cmd.get_subcommands() {
        if c.is_hide_set() || c.get_name() == "help" {
            continue;
        }
        let p = if path.is_empty() {
            c.get_name().to_string()
        } else {
            format!("{path} {}", c.get_name())
        };
        v.extend(walk(c, &p));
    }
    v
}

/// A command's long help as a fenced block (clap's own rendering, without colour).
fn block(c: &Command) -> String {
    let mut c = c.clone().term_width(100);
    let text = c.render_long_help().to_string();
    let text: Vec<&str> = text.lines().map(str::trim_end).collect();
    format!("```text\n{}\n```", text.join("\n").trim_end())
}
