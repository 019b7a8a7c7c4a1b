//! The `tgms` command-line interface (the spec's `agent-surface.md` §11): store creation, ingest,
//! writes, statistics, digests, history, replay, event-log interop, the generator, operator
//! calls (`call`), the generated tool definitions (`tools`), plans (`plan validate`, `plan
//! run`), claim verification (`verify`) and the mutation experiment (`eval mutations`).
//! Results go to stdout as canonical JSON; progress and messages go to stderr; every error is
//! printed on stdout as the spec's error payload with exit code 1 (3 for `E_STATE`).

mod cli_help;
mod history_table;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tgms::load::Format;
use tgms::store_env;
use tgms_engine::{canon, Error, Store};

#[derive(Parser)]
#[command(
    name = "tgms",
    version,
    about = "tgms — a graph database that remembers: what was true when, and what we believed when",
    long_about = "tgms stores a graph of nodes and edges with two clocks on every version: valid \
time (when a fact was true in the world) and transaction time (when the store believed it). \
Corrections and retractions never overwrite: they close the old belief and record who closed it \
and why, so \"what was true at T\" and \"what did we believe on March 1\" stay answerable forever.\n\n\
Read it with 19 fixed operators (tgms call, or the MCP server for AI agents: tgms serve), \
combine them in verified plans (tgms plan) whose answers are checked claim by claim against \
the evidence (tgms verify), or ask a question in plain language (tgms ask).\n\n\
Times are microseconds since 1970-01-01 00:00 UTC, the store's unit (1082040961000000 is \
2004-04-15 14:56:01 UTC); every time argument also takes ISO-8601 (\"2004-07-22\", \
\"2004-07-22T21:28:00Z\") and durations take \"7d\", \"36h\", \"90s\" (docs/times.md); the open \
end is 4611686018427387904 (2^62). Tables and text show times as ISO-8601 UTC (--time us for \
the integers); JSON keeps the integers. Results are canonical \
JSON on stdout; errors are {\"error\", \"message\", \"details\"} (docs/errors.md). \
Guides: docs/README.md."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// How tables and text show times: ISO-8601 UTC and durations like "3d 4h" (iso), or the
    /// stored integer µs since 1970-01-01 UTC (us). JSON output always keeps the integers.
    #[arg(long, global = true, value_name = "iso|us", default_value = "iso",
        value_parser = tgms::cli_time::time_mode_arg)]
    time: tgms::cli_time::TimeMode,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// SNAP temporal edge list: `src dst unix_seconds` per line.
    Snap,
    /// Bitcoin-OTC style CSV: `src,dst,rating,unix_seconds` → props.rating.
    SnapCsvRated,
    /// One event object per line: {"src","dst","rel_type","vt_s",...}.
    JsonlEvents,
    /// CSV with a header line; columns named by --src, --dst, --time-col (docs/ingest.md).
    Csv,
    /// Parquet (uncompressed); columns named as for csv.
    Parquet,
    /// An Arrow IPC stream (e.g. `export-rows --format arrow`); columns named as for csv.
    ArrowIpc,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompactArg {
    /// When the load is at least an eighth of the store's edge versions after it.
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, ValueEnum)]
enum DatasetArg {
    /// SNAP CollegeMsg (59,835 messages, 1,899 users), shipped compressed in datasets/.
    Collegemsg,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ClockArg {
    /// Batch k gets tt = 1,700,000,000,000,000 + k: reproducible digests.
    Fixed,
    /// The system clock.
    Wall,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create an empty store.
    Init {
        /// Store directory to create (must not exist or be empty).
        store: PathBuf,
    },
    /// Bulk-load an event file or a shipped dataset into a store.
    ///
    /// Bulk-load an event file (read a line at a time; chunks of 50,000 events, one batch
    /// each), then compact the store when the load was large (see --compact), so that
    /// read-only opens (`tgms call`) map the image and answer at once instead of decoding
    /// the store into memory. The load's memory stays bounded: the rows it adds above the
    /// store's image are merged into the image once they reach 2^20 (a fresh store writes
    /// its first image at its first flush); a load that compacts at its end waits until
    /// they are as many as the image's rows (at most 3 × 2^20), so the image doubles at
    /// each merge instead of being rewritten every 2^20 rows. A load into a fresh store
    /// (`tgms init`'s) that compacts at its end builds its rows in bulk instead of event by
    /// event and writes them as one sorted image (every 6 × 2^20 rows, and at its end):
    /// the same store, log and digest, about twice as fast.
    Ingest {
        /// Existing store directory.
        store: PathBuf,
        /// Event file to load (excludes --dataset).
        #[arg(required_unless_present = "dataset", conflicts_with = "dataset")]
        file: Option<PathBuf>,
        /// Input format of FILE.
        #[arg(long, value_enum, default_value = "snap")]
        format: FormatArg,
        /// Relationship type for events (default MSG for snap, TRUST for snap-csv-rated).
        #[arg(long)]
        rel_type: Option<String>,
        /// Load a dataset shipped with tgms instead of a file.
        #[arg(long, value_enum)]
        dataset: Option<DatasetArg>,
        /// Compact after the load: `auto` when the load is at least an eighth of the
        /// store's edge versions (the rewrite then costs at most eight times the load, and
        /// replaces the segment-count compactions the load would trigger on its way),
        /// `always`, or `never` (what the load leaves unflushed is sealed as a flush
        /// segment; `tgms compact` later). The merges that bound the load's memory happen
        /// in every mode (every 2^20 rows with `never`).
        #[arg(long, value_enum, default_value = "auto")]
        compact: CompactArg,
        /// Prefix of the per-chunk batch keys (`PREFIX:N`, N = the chunk's first event
        /// number): chunks already committed under their key are skipped, so re-running an
        /// interrupted load resumes it. Default: `ingest:` + a BLAKE3 digest of the load's
        /// options and input (docs/ingest.md).
        #[arg(long, value_name = "PREFIX", conflicts_with = "no_batch_key")]
        batch_key: Option<String>,
        /// Write the chunks without batch keys (loading the same file twice then loads it
        /// twice).
        #[arg(long)]
        no_batch_key: bool,
        #[command(flatten)]
        flags: tgms::ingest_cli::IngestFlags,
    },
    /// Apply one batch of ops (asserts, retractions, corrections) atomically.
    ///
    /// Apply one batch: a JSON array of op objects (shapes: docs/data-model.md#the-op-shapes). On exit the
    /// batch is sealed as a small flush segment, so read-only opens (`tgms call`) keep
    /// mapping the store's image instead of replaying the log; small segments are folded
    /// into the image once they hold an eighth of its rows (or 64 of them, or 2^20 rows).
    Write {
        /// Existing store directory.
        store: PathBuf,
        /// File holding the JSON array of ops.
        batch: PathBuf,
        /// Idempotency key (1 to 1024 bytes): when a batch with this key is already
        /// committed, it is acknowledged (its tt printed) without being applied again. Use
        /// one to retry safely after an "outcome unknown" error (exit 4).
        #[arg(long, value_name = "KEY")]
        batch_key: Option<String>,
    },
    /// Store statistics (counts, extent, batches, disk bytes): a table for people, or one
    /// canonical JSON object for scripts (--format json).
    Stats {
        /// Existing store directory.
        store: PathBuf,
        /// Output: a table, or one canonical JSON object.
        #[arg(long, value_enum, default_value = "table")]
        format: TableFormat,
        /// The same as --format json.
        #[arg(long, conflicts_with = "format")]
        json: bool,
    },
    /// Print the store digest (BLAKE3 over canonical row lines), 64 hex characters.
    ///
    /// Two stores hold the same rows, both clocks included, exactly when their digests are
    /// equal (a replay, a compaction and an import of an export keep it). It renders and
    /// hashes every stored row: on the 2-core development VM about 0.7 s for 10^6 rows, 7 s
    /// for 10^7 and 2.5 minutes for 10^8 (a spinner shows on a terminal).
    Digest {
        /// Existing store directory.
        store: PathBuf,
    },
    /// Rebuild OUT_STORE from STORE's write-ahead log alone.
    Replay {
        /// Source store (only read).
        store: PathBuf,
        /// Target store directory to create.
        out_store: PathBuf,
        /// Rebuild from the readable part of a damaged or shortened log instead of refusing,
        /// and print exactly what could not be read (`salvage` in the output).
        #[arg(long)]
        salvage: bool,
    },
    /// Every stored version of one node (believed and closed), with audit fields.
    History {
        /// Existing store directory.
        store: PathBuf,
        /// The node uid.
        uid: String,
        /// Also list the stored rows of edges touching UID.
        #[arg(long)]
        edges: bool,
        /// Output: a table (one line per version), or one canonical JSON object
        /// {"uid", "rows", "edges"?} with every field.
        #[arg(long, value_enum, default_value = "table")]
        format: TableFormat,
    },
    /// Import a TGMS JSONL event log, each record at its recorded tt.
    ImportEventlog {
        /// Existing store directory (its last tt must be below the log's first).
        store: PathBuf,
        /// The TGMS JSONL event log.
        log: PathBuf,
    },
    /// Export the store's log as a TGMS JSONL event log.
    ExportEventlog {
        /// Existing store directory (only read).
        store: PathBuf,
        /// Output file.
        out: PathBuf,
        /// Drop tgms's extension keys (reason, src_label, dst_label).
        #[arg(long)]
        strict: bool,
        /// Export the readable part of a damaged or shortened log instead of refusing, and
        /// print on stderr (as JSON) exactly what could not be read.
        #[arg(long)]
        salvage: bool,
    },
    /// Run one operator call and print its result envelope.
    ///
    /// Run one operator call and print its envelope (an ARGS array: one call per element on
    /// the same snapshot, printed as a JSON array in order).
    ///
    /// ARGS is JSON text when it starts with `{` or `[`, `-` for standard input, otherwise
    /// the path of a file holding the JSON. Errors print the error payload (exit 1; docs/errors.md).
    /// Time arguments are µs since 1970-01-01 UTC or ISO-8601 strings ("at": "2004-07-22",
    /// "t_a": "2004-07-22T21:28:00Z"); durations ("stride", "delta") are µs or "7d", "36h".
    Call {
        /// Existing store directory (opened read-only).
        store: PathBuf,
        /// Operator name (see `tgms tools`).
        op: String,
        /// Arguments: inline JSON, `-` for stdin, or a file path.
        args: String,
        /// Pin the belief state: adds "as_of_tt": TT to the arguments (µs or ISO-8601).
        #[arg(long, value_name = "TT", value_parser = tgms::cli_time::instant_arg)]
        as_of: Option<i64>,
        /// Output: canonical JSON envelope, or a table for people.
        #[arg(long, value_enum, default_value = "json")]
        format: CallFormat,
    },
    /// Print the operator tool definitions (Anthropic, OpenAI, MCP) or the operator reference.
    ///
    /// Everything is generated from the operator registry, sorted by operator name;
    /// `--format markdown` is the page docs/operators.md.
    Tools {
        /// Tool definition shape.
        #[arg(long, value_enum, default_value = "anthropic")]
        format: ToolsFormat,
    },
    /// Verify every checksum and invariant of a store, changing nothing.
    ///
    /// Verify every checksum and invariant of a store (WAL, manifest, segments) without
    /// modifying it; report every problem with its file and offset; exit 3 on any.
    Check {
        /// Existing store directory (only read).
        store: PathBuf,
    },
    /// Merge the store's segments into one indexed image (digest and answers unchanged).
    ///
    /// Rewrite the store as one image of every segment and the log tail, rows sorted by
    /// valid time; the store digest and every answer are unchanged. Unreferenced files are
    /// collected. The result is an indexed image: read-only opens
    /// (`tgms call`, `tgms bench run --store`) then map it and answer every read from the
    /// file, without decoding the store into memory (format-spec.md §9.4): a fresh process
    /// answers its first query in milliseconds and its memory stays near the pages it reads.
    Compact {
        /// Existing store directory (takes the writer lock).
        store: PathBuf,
    },
    /// Benchmarks: the synthetic generator, the registry runner, MCP timing, the soak test.
    ///
    /// Benchmark tools: the synthetic generator and the CollegeMsg replay log.
    #[command(subcommand)]
    Bench(BenchCmd),
    /// Plans: static verification and deterministic execution with a trace.
    ///
    /// Plans: static verification and deterministic execution with evidence.
    #[command(subcommand)]
    Plan(PlanCmd),
    /// Verify an answer object's claims against a trace, and gate it.
    ///
    /// Verify an answer object's claims against a trace (with gating).
    ///
    /// TRACE is a trace_id of the store's trace store or the path of a trace file written by
    /// `tgms plan run --trace-out`. Prints each claim's verdict, the metrics and the gated
    /// answer object; exit 0 whenever verification ran.
    Verify {
        /// Existing store directory (cited envelopes come from its result store).
        store: PathBuf,
        /// The answer object (JSON file).
        answer: PathBuf,
        /// A trace_id or a trace file.
        #[arg(long)]
        trace: String,
    },
    /// Write the HTML trace viewer page of a stored trace or ask record.
    ///
    /// The page of one stored trace is one
    /// self-contained HTML file (no external resources; every store string escaped) with
    /// the run header, every step (args, resolved args, status, digests, evidence
    /// descriptor, taint), the stored envelopes and the answer. With --plan (the plan the
    /// trace ran) the mechanical answer object is verified and every claim verdict shown;
    /// with --answer a given answer object is verified instead. Given the ask_id of a
    /// `tgms ask` record kept in the store, the page shows the whole ask record (every plan
    /// emission and its violations, the answers at each gating stage, the trace).
    View {
        /// Existing store directory (its trace, result and args stores).
        store: PathBuf,
        /// The trace_id (`tgms plan run` prints it) or an ask_id (`tgms ask` prints it), or
        /// any unique prefix of one (`tgms traces STORE` lists them).
        trace_id: String,
        /// Write the page here.
        #[arg(long)]
        out: PathBuf,
        /// The plan the trace ran (shown; its answer_spec gives the mechanical answer).
        #[arg(long)]
        plan: Option<PathBuf>,
        /// An answer object (JSON file) to verify against the trace and show.
        #[arg(long)]
        answer: Option<PathBuf>,
    },
    /// List the traces and ask records kept in the store, newest first: id (12-digit
    /// prefix; `tgms view` accepts any unique prefix), when it was written, status, plan id
    /// and, for an ask record, the question and its trace. See docs/viewer.md.
    ///
    /// Example: tgms traces /tmp/store
    Traces {
        /// Existing store directory (only read).
        store: PathBuf,
        /// Print JSON (full ids, µs and UTC times) instead of a table.
        #[arg(long)]
        json: bool,
    },
    // ---- evaluation harnesses (issue #7) ----
    /// Export every stored row (believed and closed) as CSV, Parquet or Arrow.
    ///
    /// Write every stored row (believed and closed) in store-digest order, one row per
    /// version, as CSV, Parquet or an Arrow IPC stream: the format follows OUT's
    /// extension (.csv, .parquet, .arrow) unless --format names it. Arrow, and Parquet with
    /// --typed, have TIMESTAMP(µs, UTC) times and typed prop columns (docs/export.md).
    ExportRows {
        /// Existing store directory (only read).
        store: PathBuf,
        /// Output file (.csv or .parquet).
        out: PathBuf,
        /// Output format; overrides the extension of OUT (.csv, .parquet, .arrow/.arrows).
        #[arg(long, value_enum)]
        format: Option<tgms::export_rows::Format>,
        /// Parquet with the typed schema (times TIMESTAMP(µs, UTC), typed prop_<name>
        /// columns; docs/export.md); --format arrow is always typed.
        #[arg(long)]
        typed: bool,
        /// Export the belief state at transaction time TT (µs or ISO-8601): the rows
        /// believed then, as believed then (typed formats).
        #[arg(long, value_name = "TT", value_parser = tgms::cli_time::instant_arg)]
        as_of: Option<i64>,
        /// One file per period of vt_s: OUT is then a directory of
        /// vt_month=YYYY-MM/part-0.<ext> files (typed formats).
        #[arg(long, value_enum)]
        partition_by: Option<tgms::export_typed::PartitionBy>,
    },
    /// Run a SQL query over the store's version rows, in place (DataFusion).
    ///
    /// Run one read-only SQL statement (SELECT, WITH, EXPLAIN) over the table `rows`: every
    /// stored node and edge version, believed and closed, with the typed columns of
    /// `tgms export-rows --typed` (kind, vid, uid, label, eid, src, dst, rel_type, disc,
    /// vt_s, vt_e, tt_s, tt_e as TIMESTAMP(µs, UTC) with the open end at 2^62 µs, props,
    /// source, provenance_ref, origin, reason, closed_by, close_reason, and one prop_<name>
    /// column per prop). Read from the store's segments without exporting, in parallel;
    /// `kind` and time-range filters are applied while scanning. --as-of pins a past
    /// belief state. Statements that write (INSERT, COPY, CREATE, SET) are refused. See
    /// docs/sql.md.
    Sql {
        /// Existing store directory (only read).
        store: PathBuf,
        /// The SQL statement; the table is `rows`.
        query: String,
        /// Query the belief state at transaction time TT (µs or ISO-8601): the rows
        /// believed then, as believed then.
        #[arg(long, value_name = "TT", value_parser = tgms::cli_time::instant_arg)]
        as_of: Option<i64>,
        /// Output: an aligned table, CSV with a header line, or a JSON array of row objects.
        #[arg(long, value_enum, default_value = "table")]
        format: tgms_sql::out::Format,
    },
    /// Rebuild a store from an export-rows file (CSV, Parquet or Arrow; plain or typed) at
    /// the recorded transaction times: the same rows, the same store digest.
    ///
    /// Rebuild a store from a file that `tgms export-rows` wrote (CSV, Parquet or Arrow IPC,
    /// plain or typed), batch by batch at the recorded transaction times, into an empty
    /// store: the new store holds the same rows and has the same store digest, which the
    /// command checks row by row before it reports. Stores whose rows were written by
    /// ingests and asserts only; an export of retractions or corrections lacks the ops that
    /// closed rows, and is refused before anything is written (rebuild those from the
    /// event log: export-eventlog, import-eventlog). See docs/export.md.
    ImportRows {
        /// Empty store directory (`tgms init NEW`).
        store: PathBuf,
        /// The export-rows file.
        file: PathBuf,
        /// Input format; overrides the extension of FILE (.csv, .parquet, .arrow/.arrows).
        #[arg(long, value_enum)]
        format: Option<tgms::export_rows::Format>,
    },
    /// The guided tour, offline, on the shipped data; exit 0 only if every check passed.
    ///
    /// The demo, offline: CollegeMsg with corrections, three plans through the verifier
    /// (answers and claim verdicts), the incident reconstruction, the state-at-T regression
    /// and an operator latency table; writes a trace viewer page. Exit 0 only if every
    /// check passed.
    Demo {
        /// Build the stores here (must not exist or be empty; default: a new temporary
        /// directory, kept and named at the end).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Write the trace viewer page of the demo-correction-probe plan here (default:
        /// DIR/demo-trace.html).
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Serve the store to AI agents over the Model Context Protocol (MCP).
    ///
    /// Every operator is a tool with its real argument schema; `validate_plan`, `run_plan`,
    /// `verify_answer`, `get_trace`, `get_result` and `dataset_card` carry the verifier;
    /// resources: tgms://dataset-card, tgms://manual, tgms://trace/{id},
    /// tgms://result/{digest}. There are no write tools. stdio by default (stdout is the
    /// protocol; logs go to stderr); --http serves streamable HTTP at http://ADDR/mcp.
    ///
    /// --readonly takes no lock, runs no recovery and writes nothing under STORE (results are
    /// kept in memory, or under --results-dir outside the store); it serves beside a live
    /// writer and sees each newly published state on its next call. Guide: docs/mcp.md.
    Serve {
        /// Existing store directory.
        #[arg(long)]
        store: PathBuf,
        /// Open read-only: no writer lock, no recovery, no file created, changed or removed
        /// under STORE.
        #[arg(long)]
        readonly: bool,
        /// Keep traces and envelopes in this directory (must be outside STORE). Default: the
        /// store's result store, or with --readonly a bounded in-memory store of 1,000
        /// entries.
        #[arg(long)]
        results_dir: Option<PathBuf>,
        /// Cost ceilings as JSON or a file holding it, e.g. '{"time_est_ms": 2000}' (keys
        /// rows_scanned_est, expansions_est, time_est_ms, max_reducer_rows,
        /// max_reducer_bytes, max_total_rows;
        /// others keep their defaults). Calls estimated above them are refused with E_COST
        /// and a narrowing repair.
        #[arg(long, value_name = "FILE|JSON")]
        ceilings: Option<String>,
        /// Serve streamable HTTP on ADDR (e.g. 127.0.0.1:8765; port 0 picks one and the
        /// address is printed on stderr) instead of stdio.
        #[arg(long)]
        http: Option<std::net::SocketAddr>,
        /// Offer the `ask` tool (tgms's own agent loop) with this model (or set
        /// TGMS_LLM_MODEL); without a model there is no ask tool. See docs/ask.md.
        #[arg(long)]
        model: Option<String>,
        /// The model's OpenAI-compatible endpoint (or TGMS_LLM_BASE_URL).
        #[arg(long)]
        llm_base_url: Option<String>,
        /// Guided decoding for the ask tool's model: none|openai|vllm|llamacpp (or
        /// TGMS_LLM_GUIDED).
        #[arg(long)]
        guided: Option<String>,
    },
    /// Evaluation: task suites and campaigns, verifier mutations, state-at-T regression, incident.
    ///
    /// The verifier mutation experiment, the state-at-T regression and the incident
    /// reconstruction; each checks its own results.
    #[command(subcommand)]
    Eval(EvalCmd),
    // ---- the agent loop (issue #18) ----
    /// Ask a question in plain language; tgms checks every claim of the answer.
    ///
    /// Ask a question in plain language: a model writes the plan and the prose; tgms checks
    /// the plan, computes it, verifies every claim against the trace and removes whatever
    /// it cannot back (docs/ask.md).
    ///
    /// The planner sees a dataset card, the operator manual and four examples; its plan
    /// goes through the static verifier and may be repaired up to --max-repairs times (one
    /// budget of max-repairs + 1 emissions for static and runtime errors). The answer is
    /// written by the model (or --reporter mechanical), its claims are checked, unsupported
    /// claims are dropped and every sentence with an unbacked number, uid or "all" is
    /// removed. Prints the final answer (--json: the whole ask record). Exit 0 iff the
    /// final plan ran ok.
    ///
    /// Model settings: --model / TGMS_LLM_MODEL, --llm-base-url / TGMS_LLM_BASE_URL
    /// (default http://127.0.0.1:8000/v1), TGMS_LLM_API_KEY or OPENAI_API_KEY, --guided
    /// none|openai|vllm|llamacpp / TGMS_LLM_GUIDED (the three servers take different
    /// request shapes).
    Ask {
        /// Existing store directory.
        store: PathBuf,
        /// The question.
        question: String,
        /// Task input uids the plan may use literally (comma-separated; "" = none). Default:
        /// the registered uids the question names.
        #[arg(long, conflicts_with = "no_grounding")]
        uids: Option<String>,
        /// Disable the grounding check of literal uids.
        #[arg(long)]
        no_grounding: bool,
        /// Ask of the belief state at this transaction time (µs or ISO-8601): pinned on every
        /// step.
        #[arg(long = "as-of", value_name = "TT", value_parser = tgms::cli_time::instant_arg)]
        as_of: Option<i64>,
        /// Model name (overrides TGMS_LLM_MODEL).
        #[arg(long)]
        model: Option<String>,
        /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1.
        #[arg(long)]
        llm_base_url: Option<String>,
        /// Guided decoding: none, openai, vllm or llamacpp.
        #[arg(long)]
        guided: Option<String>,
        /// A JSON object merged into every request body.
        #[arg(long)]
        llm_extra_body: Option<String>,
        /// Per-request timeout in seconds (default 3600).
        #[arg(long)]
        llm_timeout_s: Option<u64>,
        /// Planner response cache directory.
        #[arg(long)]
        llm_cache_dir: Option<PathBuf>,
        /// Repairs after the first plan (the budget is this + 1 emissions).
        #[arg(long, default_value_t = 3)]
        max_repairs: usize,
        /// Who writes the answer object: the model, or the mechanical reporter.
        #[arg(long, value_parser = ["model", "mechanical"], default_value = "model")]
        reporter: String,
        /// Do not retrieve evolution-memory notes for the planner.
        #[arg(long)]
        no_memory: bool,
        /// Open the store read-only: results stay in memory, nothing is written.
        #[arg(long)]
        read_only: bool,
        /// Write the trace viewer page with the planning history here.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Print the whole ask record as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Evolution memory: window summaries the planner reads (never evidence).
    ///
    /// Window-digest notes the planner sees, never
    /// evidence, made stale by any write inside their window.
    #[command(subcommand)]
    Memory(MemoryCmd),
    /// Print the CLI reference (docs/cli.md) in Markdown.
    #[command(hide = true)]
    HelpMarkdown,
}

#[derive(Subcommand)]
enum MemoryCmd {
    /// Build one note per window of --stride-days over the store's extent.
    Build {
        /// Existing store directory (opened writable).
        store: PathBuf,
        /// Window width in days.
        #[arg(long, default_value_t = 7)]
        stride_days: i64,
    },
    /// Recompute the notes that writes made stale.
    Refresh {
        /// Existing store directory (opened writable).
        store: PathBuf,
    },
    /// Print the notes (stale ones marked) without changing anything.
    List {
        /// Existing store directory (only read).
        store: PathBuf,
    },
}

#[derive(Subcommand)]
enum PlanCmd {
    /// Statically verify a plan: prints {"valid", "violations"} (each violation with a repair).
    ///
    /// Exit 0 when valid, else 1. Task input uids: --uids, --no-grounding, or by default the
    /// registered uids the plan's question names at token boundaries.
    Validate {
        /// Existing store directory (statistics for extent and cost checks).
        store: PathBuf,
        /// The plan (JSON file, or `-` for stdin).
        plan: String,
        /// Task input uids, comma-separated (`--uids ""` is the empty set).
        #[arg(long, conflicts_with = "no_grounding")]
        uids: Option<String>,
        /// Disable the grounding check.
        #[arg(long)]
        no_grounding: bool,
        /// Executor and cost ceilings: a JSON object or a file holding one, e.g.
        /// '{"max_reducer_rows": 2000000, "time_est_ms": 20000}'. Keys: rows_scanned_est,
        /// expansions_est, time_est_ms (cost estimates; a step above them is refused with
        /// E_COST), max_reducer_rows (rows a compute step may read from an earlier step's
        /// complete result, default 10000000), max_reducer_bytes (the estimated memory
        /// such a step may take, default 4294967296 = 4 GiB), max_total_rows (rows all steps
        /// may return together, default 10000000). Keys not given keep their defaults.
        #[arg(long, value_name = "FILE|JSON")]
        ceilings: Option<String>,
    },
    /// Validate, then execute a plan; prints the answer, the trace_id and per-step status.
    ///
    /// Envelopes, resolved args and the trace are stored in the store directory
    /// (results/, args/, traces/). Exit 0 iff the trace is ok.
    Run {
        /// Existing store directory.
        store: PathBuf,
        /// The plan (JSON file, or `-` for stdin).
        plan: String,
        /// Task input uids, comma-separated (`--uids ""` is the empty set).
        #[arg(long, conflicts_with = "no_grounding")]
        uids: Option<String>,
        /// Disable the grounding check.
        #[arg(long)]
        no_grounding: bool,
        /// Also print the mechanical answer object and its verification.
        #[arg(long)]
        report: bool,
        /// Executor and cost ceilings: a JSON object or a file holding one, e.g.
        /// '{"max_reducer_rows": 2000000, "time_est_ms": 20000}'. Keys: rows_scanned_est,
        /// expansions_est, time_est_ms (cost estimates; a step above them is refused with
        /// E_COST), max_reducer_rows (rows a compute step may read from an earlier step's
        /// complete result, default 10000000), max_reducer_bytes (the estimated memory
        /// such a step may take, default 4294967296 = 4 GiB), max_total_rows (rows all steps
        /// may return together, default 10000000). Keys not given keep their defaults.
        #[arg(long, value_name = "FILE|JSON")]
        ceilings: Option<String>,
        /// Write the full trace to FILE.
        #[arg(long, value_name = "FILE")]
        trace_out: Option<PathBuf>,
        /// Write the trace viewer page to FILE, with the mechanical
        /// answer object and its claim verdicts.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum PoolArg {
    /// The classic pool plus factory ordering / burst claims, 100 mutants per class.
    Extended,
    /// Mechanical answers of the oracle plans only.
    Classic,
}

#[derive(Subcommand)]
enum EvalCmd {
    /// The verifier mutation experiment: how many wrong claims the verifier catches.
    ///
    /// The verifier mutation experiment: mutation class x cases x detected, false positives.
    ///
    /// Without --suite the pool comes from built-in oracle plans over STORE. STORE is never
    /// written. Exit 0 whenever the experiment ran.
    Mutations {
        /// Existing store directory (opened read-only).
        store: PathBuf,
        /// A suite file whose oracle plans make the pool.
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Pool construction.
        #[arg(long, value_enum, default_value = "extended")]
        pool: PoolArg,
        /// Print {"pool", "clean", "false_positives", "classes": [...]} instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Generate a task suite (templates, correction probes, split) from a store.
    ///
    /// Generate a task suite (docs/eval.md): 100 template tasks with gold from executing
    /// each oracle plan, 16 correction-probe tasks (the probes are written into STORE with
    /// explicit transaction times, once; a second run finds them in the log), optional
    /// planted tasks, and the dev/test split. Same store, dataset and seed → same bytes.
    Suite {
        /// Store directory (written once: the correction probes).
        store: PathBuf,
        /// The dataset name used in task ids (e.g. CollegeMsg).
        #[arg(long)]
        dataset: String,
        /// The suite seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// A planted-pattern manifest from `tgms eval plant` (adds the t2 family).
        #[arg(long)]
        planted: Option<PathBuf>,
        /// Write the suite here (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Plant temporal patterns (cyclic triangles, reachability chains, bursts) into a store.
    ///
    /// Plant cyclic triangles, reachability chains and activity bursts on fresh uids after
    /// the data's last valid time, and write their manifest for `eval suite --planted`.
    Plant {
        /// Store directory (written: one batch of planted events).
        store: PathBuf,
        /// Write the manifest here.
        #[arg(long)]
        out: PathBuf,
        /// Cyclic temporal triangles to plant.
        #[arg(long, default_value_t = 6)]
        rings: usize,
        /// Reachability chains to plant.
        #[arg(long, default_value_t = 4)]
        chains: usize,
        /// Activity bursts to plant.
        #[arg(long, default_value_t = 3)]
        bursts: usize,
    },
    /// Run one system over a suite split and score it.
    ///
    /// Run one system (oracle, latest-state, ours, ours-noverify, ours-nomem,
    /// ours-contracts-off, ours-taint-ignored, sql-bitemporal, vector-rag) over a split of
    /// SUITE, score every task and print the campaign metrics. Rows are cached per
    /// configuration; a second run of the test split is refused unless --force.
    RunSuite {
        /// Store directory (opened read-only).
        store: PathBuf,
        /// The suite file of `tgms eval suite`.
        #[arg(long)]
        suite: PathBuf,
        /// The system to run.
        #[arg(long)]
        system: String,
        /// The model (model systems; or TGMS_LLM_MODEL).
        #[arg(long)]
        model: Option<String>,
        /// The model's OpenAI-compatible endpoint (or TGMS_LLM_BASE_URL).
        #[arg(long)]
        endpoint: Option<String>,
        /// dev or test.
        #[arg(long, default_value = "test")]
        split: String,
        /// Run the test split again although this configuration already ran it.
        #[arg(long)]
        force: bool,
        /// Row cache directory (default: SUITE.runs next to the suite file).
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// The Python with the duckdb package (sql-bitemporal; see bench/eval/duckdb-venv.sh).
        #[arg(long, default_value = "python3")]
        python: String,
        /// vector-rag retrieval: bm25, or minilm (BM25 candidates re-ranked by the
        /// all-MiniLM-L6-v2 embedding model in --python; see docs/eval.md).
        #[arg(long, default_value = "bm25")]
        retrieval: String,
        /// Run only the first N tasks of the split (a small campaign).
        #[arg(long)]
        limit: Option<usize>,
        /// Write the run object (metrics and rows) here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Render runs side by side as Markdown or HTML.
    ///
    /// Render run objects of `eval run-suite --json` side by side: systems, accuracy by
    /// family, correction probes, unsupported claims before/after gating; HTML adds plots.
    Report {
        /// Run objects (`eval run-suite --json`).
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// report.md or report.html.
        #[arg(long)]
        out: PathBuf,
    },
    /// Incident reconstruction: what was true and believed when an outage began.
    ///
    /// The instance type at outage time, the preceding change,
    /// the audit trail with invalidation reasons, the belief-time variant and the naive
    /// baseline. Exit 0 only if every check passes.
    Incident {
        /// Keep the built store in DIR/incident (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print the evaluation record as JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// State-at-T regression: state_at against naive lookups on 117 questions.
    ///
    /// 117 questions over 36 transitions, `state_at` vs the naive
    /// "latest valid_from" and the valid-time-only lookups. Exit 0 only if state_at is
    /// 117/117 and the store digest is the expected one.
    StateRegression {
        /// Keep the built store in DIR/state-regression (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print the evaluation record as JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TableFormat {
    /// Aligned columns for people.
    Table,
    /// Canonical JSON for scripts.
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CallFormat {
    /// The envelope as canonical JSON.
    Json,
    /// A human-readable rendering ending with the result_digest.
    Table,
}

#[derive(Clone, Copy, ValueEnum)]
enum ToolsFormat {
    /// {"name", "description", "input_schema"}
    Anthropic,
    /// {"type": "function", "function": {"name", "description", "parameters"}}
    Openai,
    /// {"name", "description", "inputSchema", "outputSchema"}
    Mcp,
    /// The operator reference page (docs/operators.md): arguments, outputs, errors, examples.
    Markdown,
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Create STORE and write the deterministic synthetic benchmark stream of N events.
    Generate {
        /// Number of events (e.g. 100000, 1000000, 10000000). On the 2-core, 24 GiB
        /// development VM 10^7 takes about 15 s (0.7 GB peak, 0.4 GB of disk); 10^8 about
        /// 8 minutes at a 4.1 GB peak and needs about 5 GB of disk (its summary's store
        /// digest alone reads every row for about 2.5 minutes; bench/RESULTS.md).
        #[arg(long)]
        scale: u64,
        /// Store directory to create.
        store: PathBuf,
        /// Transaction clock: fixed (reproducible) or wall.
        #[arg(long, value_enum, default_value = "fixed")]
        clock: ClockArg,
    },
    /// Write TGMS's frozen CollegeMsg replay log (rebuilt from the shipped dataset).
    CollegemsgLog {
        /// Output file.
        out: PathBuf,
    },
    /// Time the benchmark queries on a generated log or an existing store.
    ///
    /// Time the benchmark registry (13 queries + state.at, wtrav.seed, motif.all36) on the
    /// generated log at --scale N (with its corrections), or on an existing STORE; p50/p95 per
    /// query with its answer hash, ingest rate, bytes per edge version, open time, first-query
    /// time, peak RSS (of the open and the queries: the build's peak is reported apart). With
    /// --compact a store the run builds is compacted first, so the queries read the mapped
    /// image. A query the cost model refuses at the scale is listed with its narrowing
    /// repair; exit 1 if a registered operator fails (a refusal is not a failure).
    Run {
        /// Number of events of the generated log (100000, 1000000, 10000000; for 10^8,
        /// build the store once with `bench generate` and pass it with --store).
        #[arg(long, required_unless_present = "log", conflicts_with = "log")]
        scale: Option<u64>,
        /// Import this TGMS event log instead (replayed-log parameters), e.g. the
        /// output of `tgms bench collegemsg-log`.
        #[arg(long, value_name = "LOG.jsonl")]
        log: Option<PathBuf>,
        /// The store to use: taken as it is when DIR already holds a store (it must then
        /// come from `bench generate --scale N`, or from LOG), built there otherwise
        /// (default: a temporary directory).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Write the run record (one JSON object) to FILE: per query `ok`, `hash`, `p50_ms`,
        /// `p95_ms`, `rows`, `timings_ms`, `error` (`gr` when refused by cost, with `refusal`:
        /// `estimate_ms`, `ceiling_ms`, `suggestions`, `sample_mode`).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Untimed warm-ups per query.
        #[arg(long, default_value_t = 5)]
        warmups: u32,
        /// Timed runs when the first timed run takes under a second (10 otherwise).
        #[arg(long, default_value_t = 30)]
        reps: u32,
        /// Only these query ids (comma separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Compact a store this run builds before timing it: one indexed image that
        /// read-only opens map and read in place (`tgms compact`; the form the 10M memory
        /// target is measured on). The build then loads as `tgms ingest` does when it
        /// compacts at its end (a synthetic store's ingest batches built in bulk and written
        /// as one sorted image; an imported log's image doubling at each merge, up to
        /// 3 × 2^20 rows held decoded). Without it the store is timed as written.
        #[arg(long)]
        compact: bool,
    },
    /// Time the MCP server from outside (stdio overhead, HTTP calls per second).
    ///
    /// Time the MCP server from outside: tools/list and tools/call entity_history over
    /// stdio against the operator's in-process time (the protocol overhead), and calls per
    /// second over streamable HTTP with N concurrent clients. Every answer is checked
    /// against the in-process envelope. The store must hold uid n1 (any `bench generate`
    /// store does).
    Mcp {
        /// Existing store (opened read-only).
        #[arg(long)]
        store: PathBuf,
        /// Timed calls per stdio measurement.
        #[arg(long, default_value_t = 2000)]
        calls: usize,
        /// Concurrent HTTP clients.
        #[arg(long, default_value_t = 8)]
        clients: usize,
        /// Seconds the HTTP clients call for.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Write the run record here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Multi-process soak test: a writer killed at random points, readers checking.
    ///
    /// Multi-process soak: a writer process commits keyed batches (flushing, compacting)
    /// while reader processes run stats, call and check; the writer is SIGKILLed at seeded
    /// random points and restarted, and the store is checked against its acknowledgements
    /// after every kill. Prints counts: batches, reads, checks, compactions started, faults,
    /// violations (must be 0; exit 1 otherwise). Not run by CI.
    Soak {
        /// Store directory to create (default: a temporary directory).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Duration in seconds.
        #[arg(long, default_value_t = 120)]
        secs: u64,
        /// Reader processes running at once.
        #[arg(long, default_value_t = 3)]
        readers: usize,
        /// Seed of the kill points.
        #[arg(long, default_value_t = 19)]
        seed: u64,
    },
    /// Internal: the soak's writer process (commits batches FROM..TO, printing acks).
    #[command(hide = true)]
    SoakWriter {
        store: PathBuf,
        #[arg(long)]
        from: u64,
        #[arg(long)]
        to: u64,
    },
    /// Internal: open STORE and run one query, printing the times (used by `bench run`).
    #[command(hide = true)]
    OpenProbe {
        /// Existing store directory.
        store: PathBuf,
    },
}

/// A failure with its spec payload; `usage` failures exit 2. `Printed` carries the error
/// that sets the exit code when the output was already printed (ARGS arrays).
enum Failure {
    Payload(Value),
    Printed(Value),
    Usage(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Payload(tgms_operators::error::store_payload(&e))
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Usage(format!("{e:#}"))
    }
}

type CmdResult = Result<(), Failure>;

fn out(v: &Value) {
    print_line(&canon::to_string(v));
}

/// The first error writing standard output. Later writes are skipped; `main` turns it into
/// the exit: quiet on a closed pipe (`tgms ... | head`), a structured error otherwise.
static STDOUT_ERROR: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// Prints one line on stdout and flushes it. A failure is recorded for `main` (see
/// [`STDOUT_ERROR`]); it never panics.
fn print_line(s: &str) {
    use std::io::Write;
    let mut failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_some() {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = writeln!(o, "{s}").and_then(|_| o.flush()) {
        *failed = Some(e);
    }
}

/// Prints one line on stderr, ignoring failure (a diagnostic must not turn into a panic).
fn warn_line(s: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// Exit status of a write whose batch may or may not be committed (`details.outcome =
/// "unknown"`): distinct from 3, a clean refusal that committed nothing.
const EXIT_OUTCOME_UNKNOWN: u8 = 4;

/// Test hook for I/O-error injection in a real process: `TGMS_TEST_FAIL_SYNC=N` fails the
/// N-th fsync / fdatasync of the process (counting from 1) with EIO. Only tests set it.
fn install_test_faults() {
    let Some(n) = std::env::var("TGMS_TEST_FAIL_SYNC")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    let mut seen = 0u64;
    tgms_engine::fault::set_sync_hook(Some(Box::new(move |_| {
        seen += 1;
        if seen == n {
            Err(std::io::Error::from_raw_os_error(5))
        } else {
            Ok(())
        }
    })));
}

/// Exit status of a command whose standard output was closed by its reader: 128 + SIGPIPE,
/// what a shell reports for a tool the signal ended.
const EXIT_BROKEN_PIPE: u8 = 141;

/// Flushes stdout and maps a recorded write failure to the exit: `None` when output was
/// written whole.
fn stdout_exit() -> Option<ExitCode> {
    use std::io::Write;
    let mut failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_none() {
        if let Err(e) = std::io::stdout().lock().flush() {
            *failed = Some(e);
        }
    }
    let e = failed.take()?;
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Some(ExitCode::from(EXIT_BROKEN_PIPE));
    }
    warn_line(&canon::to_string(&json!({"error": "E_STATE",
        "message": format!("cannot write standard output: {e}; the command ran, its output is incomplete"),
        "details": {"file": "<stdout>", "os_error": e.to_string()}})));
    Some(ExitCode::from(3))
}

/// A `println!` elsewhere in the binary that failed panics with this prefix; `main` treats
/// such a panic as the stdout error it is.
const STDOUT_PANIC: &str = "failed printing to stdout: ";

/// Installs a panic hook that keeps a failed `println!` quiet (`main` reports it) and
/// leaves every other panic's report as it is.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if panic_text(info.payload()).is_some_and(|m| m.starts_with(STDOUT_PANIC)) {
            return;
        }
        default(info);
    }));
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn collegemsg_text() -> anyhow::Result<String> {
    use std::io::Read;
    const GZ: &[u8] = include_bytes!("../datasets/CollegeMsg.txt.gz");
    let mut s = String::new();
    flate2::read::GzDecoder::new(GZ)
        .read_to_string(&mut s)
        .context("the shipped CollegeMsg dataset is damaged")?;
    Ok(s)
}

/// `tgms ingest` (`docs/ingest.md`): a validation pass, then the keyed write pass
/// (`tgms::ingest`), then the compaction rule; prints the summary.
fn cmd_ingest(
    store: &Path,
    file: Option<PathBuf>,
    (format, rel_type, dataset, compact): (
        FormatArg,
        Option<String>,
        Option<DatasetArg>,
        CompactArg,
    ),
    (batch_key, no_batch_key): (Option<String>, bool),
    flags: &tgms::ingest_cli::IngestFlags,
) -> CmdResult {
    use tgms::ingest::{self as ing, Input, Keys, Request};
    let (name, input, format, rel) = match (file, dataset) {
        (_, Some(DatasetArg::Collegemsg)) => (
            PathBuf::from("datasets/CollegeMsg.txt.gz"),
            Input::Text(collegemsg_text()?),
            Format::Snap,
            Some(rel_type.unwrap_or_else(|| "MSG".to_string())),
        ),
        (Some(f), None) => {
            let fmt = match format {
                FormatArg::Snap => Format::Snap,
                FormatArg::SnapCsvRated => Format::SnapCsvRated,
                FormatArg::JsonlEvents => Format::JsonlEvents,
                FormatArg::Csv => Format::Csv,
                FormatArg::Parquet => Format::Parquet,
                FormatArg::ArrowIpc => Format::ArrowIpc,
            };
            (f.clone(), Input::File(f), fmt, rel_type)
        }
        (None, None) => return Err(Failure::Usage("give FILE or --dataset".into())),
    };
    let map = flags
        .mapping(rel, format.has_named_columns())
        .map_err(Failure::Usage)?;
    let req = Request {
        name: name.clone(),
        input,
        format,
        map,
        on_error: flags.on_error(),
        keys: match (batch_key, no_batch_key) {
            (_, true) => Keys::None,
            (Some(k), false) => Keys::Given(k),
            (None, false) => Keys::Derived,
        },
        again: flags.again,
    };
    let failed = |f: ing::Failure| Failure::Payload(ing::failure_payload(&f, &name));
    // Pass 1: the whole input is parsed and counted; with --on-error fail a bad line stops
    // the load here, before the store is opened.
    let spin = ticking(format!("validating {}", name.display()));
    let tally = ing::validate(&req);
    spin.finish_and_clear();
    let tally = tally.map_err(failed)?;
    if flags.dry_run {
        let mut v = tally.to_json();
        v["dry_run"] = json!(true);
        out(&v);
        return Ok(());
    }
    let mut st = store_env::open(store)?;
    let n = tally.events;
    let compact_after = match compact {
        CompactArg::Always => true,
        CompactArg::Never => false,
        CompactArg::Auto => n > 0 && n.saturating_mul(8) >= st.stats().n_edge_versions + n,
    };
    // A load that compacts at its end is a bulk load: into a fresh store its rows are built
    // in bulk and written as one sorted image; into another the image doubles at each
    // merge instead of growing by one memtable. Either way the compaction at the end
    // replaces the automatic ones of the load's flushes.
    let bound = if compact_after {
        tgms_engine::store::LOAD_DECODED_ROWS
    } else {
        0
    };
    if compact == CompactArg::Never {
        // Nor does the close compact (it seals a flush segment).
        st.set_close_compacts(false);
    }
    let mut pb = tgms::ingest_cli::Progress::new(n, flags.progress);
    // Every format but CSV builds its events on the rayon pool (`load_par.rs`,
    // `load_columns.rs`): they are freed there too, off this thread, the load's bottleneck.
    let built_on_pool = req.format != Format::Csv;
    let written = st.bulk_load(bound, |ld| {
        if built_on_pool {
            ld.free_batches_on_pool();
        }
        let written = ing::write(ld, &req, tally, &mut |k| pb.set(k));
        let done = written
            .as_ref()
            .map_or(0, |s| s.committed + s.already_committed);
        pb.finish(done, flags.progress);
        if !ld.is_bulk_build() {
            return written;
        }
        let spin = ticking(format!(
            "writing {} edge versions as one sorted image",
            ld.stats().n_edge_versions
        ));
        let merged = ld.finish();
        spin.finish_and_clear();
        match (written, merged) {
            (Ok(s), Err(e)) => Err(ing::Failure::Store(e, Box::new(s), 0)),
            (written, _) => written,
        }
    });
    let written = written.unwrap_or_else(|e| Err(ing::Failure::from(e)));
    let summary = match written {
        Ok(s) => s,
        Err(f) => {
            // Sealed for readers: what was committed stays committed.
            let _ = st.close();
            return Err(failed(f));
        }
    };
    if summary.already_ingested {
        warn_line(&format!(
            "{} is already in the store ({} events under batch key {}): nothing added; give \
             --again to load another copy",
            name.display(),
            summary.events,
            summary.batch_key.as_deref().unwrap_or("")
        ));
    }
    let compacted = if compact_after && summary.committed > 0 {
        let pb = ticking(format!(
            "compacting {} edge versions into one image",
            st.stats().n_edge_versions
        ));
        let r = st.compact();
        pb.finish_and_clear();
        r?;
        true
    } else {
        false
    };
    st.close()?;
    let mut v = summary.to_json();
    v["compacted"] = json!(compacted);
    v["dry_run"] = json!(false);
    out(&v);
    Ok(())
}

fn cmd_write(store: &Path, batch: &Path, batch_key: Option<String>) -> CmdResult {
    let text = read_text(batch)?;
    let schema = |m: String| {
        Failure::Payload(json!({"error": "E_SCHEMA", "message": m, "details": {"path": []}}))
    };
    let v = canon::parse(&text).map_err(|e| schema(format!("batch is not valid JSON: {e}")))?;
    let Value::Array(items) = v else {
        return Err(schema("batch must be a JSON array of op objects".into()));
    };
    if let Some(i) = items.iter().position(|x| !x.is_object()) {
        return Err(Failure::Payload(json!({"error": "E_SCHEMA",
            "message": format!("op {i} is not a JSON object"), "details": {"path": [i]}})));
    }
    // Strict at the input boundary (unknown fields and op kinds, a missing vt_s): refused
    // before anything is logged. Values are checked when the batch applies (§6.1).
    let ops = tgms_engine::op_input::parse_input_batch(&Value::Array(items))?;
    let mut st = store_env::open(store)?;
    let n_ops = ops.len();
    let r = st.write_keyed(ops, batch_key.clone());
    if let Some(cause) = st.poison_cause() {
        warn_line(&format!(
            "warning: the batch is committed, but the store could not finish the work after \
             it ({cause}); the log holds the batch, and the next open recovers"
        ));
    }
    // Sealed for readers whether the batch applied or not (a failed batch is logged too).
    let closed = st.close();
    let c = r?;
    if c.duplicate {
        warn_line(&format!(
            "batch key {} was already committed (batch {}, tt {}); not applied again",
            batch_key.as_deref().unwrap_or(""),
            c.seq,
            c.tt
        ));
    }
    let (seq, duplicate) = (c.seq, c.duplicate);
    let tt = c.into_result()?;
    if let Err(e) = closed {
        // The batch is durable in the log; only sealing it for readers failed.
        warn_line(&format!(
            "warning: the batch is committed; sealing it as a flush segment failed: {}",
            e.message()
        ));
    }
    let mut ack = json!({"batch": seq, "tt": tt, "ops": n_ops});
    if duplicate {
        ack["duplicate"] = json!(true);
    }
    out(&ack);
    Ok(())
}

fn cmd_stats(store: &Path, as_json: bool, time: tgms::cli_time::TimeMode) -> CmdResult {
    let st = store_env::open_read_only(store)?;
    let mut v = tgms::store_json::stats_json(&st)?;
    if as_json {
        // For people: `<field>_utc` beside each integer time, never replacing it.
        if let Value::Object(m) = &mut v {
            tgms_operators::timefmt::add_utc_companions(m);
        }
        out(&v);
        return Ok(());
    }
    let show = |k: &str| match &v[k] {
        Value::Null => "—".to_string(),
        x => tgms::cli_time::both(k, x, time),
    };
    print_line(&format!("store            {}", store.display()));
    for k in [
        "n_entities",
        "n_node_versions",
        "n_edge_versions",
        "vt_min",
        "vt_max",
        "max_out_degree",
        "first_tt",
        "last_tt",
        "n_batches",
        "n_failed_batches",
    ] {
        print_line(&format!("{k:<16} {}", show(k)));
    }
    print_line("extent           [vt_min, vt_max) in µs since the epoch");
    for (rel, n) in &st.stats().rel_type_counts {
        print_line(&format!("rel {rel:<12} {n}"));
    }
    print_line(&format!(
        "disk bytes       {} total, {} log",
        v["disk_bytes"]["total"], v["disk_bytes"]["log"]
    ));
    print_line(&format!("layout           {}", tgms::benchrun::layout(&st)));
    Ok(())
}

fn cmd_check(store: &Path) -> CmdResult {
    let rep = store_env::check(store)?;
    let problems: Vec<Value> = rep
        .problems
        .iter()
        .map(|p| json!({"file": p.file.display().to_string(), "offset": p.offset, "kind": p.kind.to_string()}))
        .collect();
    if !problems.is_empty() {
        return Err(Failure::Payload(json!({"error": "E_STATE",
            "message": format!("store check found {} problem(s)", problems.len()),
            "details": {"problems": problems, "notes": rep.notes}})));
    }
    out(
        &json!({"ok": true, "segments": rep.segments, "wal_records": rep.wal_records,
        "notes": rep.notes}),
    );
    Ok(())
}

fn cmd_compact(store: &Path) -> CmdResult {
    let mut st = store_env::open(store)?;
    let before = st.segments().len();
    let collected = st.compact()?;
    let (total, log) = st.disk_bytes()?;
    out(
        &json!({"segments_before": before, "segments_after": st.segments().len(),
        "files_collected": collected, "disk_bytes": {"total": total, "log": log}}),
    );
    Ok(())
}

/// The log mode of a recovery command: refuse a shortened history, or salvage it.
fn log_mode(salvage: bool) -> tgms_engine::store::LogMode {
    if salvage {
        tgms_engine::store::LogMode::Salvage
    } else {
        tgms_engine::store::LogMode::Whole
    }
}

fn cmd_replay(src: &Path, dst: &Path, salvage: bool) -> CmdResult {
    if !src.join(tgms_engine::store::WAL_FILE).exists() {
        return Err(Error::no_store(src).into());
    }
    // Refused before the target is created: a refusal leaves nothing behind.
    if !salvage {
        tgms_engine::store::verify_log_reaches_checkpoint(src)?;
    }
    let mut out_store = store_env::create(dst)?;
    let pb = ProgressBar::new_spinner();
    let r = tgms_engine::store::replay_with(src, &mut out_store, log_mode(salvage), &mut |n| {
        pb.set_message(format!("replayed {n} batches"))
    });
    pb.finish_and_clear();
    let (_, lost) = r?;
    let s = out_store.stats();
    let mut summary = json!({"batches": s.n_batches, "failed_batches": s.n_failed_batches,
        "store_digest": out_store.digest()});
    if salvage {
        summary["salvage"] = lost.to_json();
    }
    out_store.close()?;
    out(&summary);
    Ok(())
}

fn cmd_history(
    store: &Path,
    uid: &str,
    edges: bool,
    format: TableFormat,
    time: tgms::cli_time::TimeMode,
) -> CmdResult {
    let st = store_env::open_read_only(store)?;
    let o = tgms::store_json::history_json(&st, uid, edges).map_err(Failure::Payload)?;
    match format {
        TableFormat::Json => out(&o),
        TableFormat::Table => print_line(history_table::render(&o, time).trim_end()),
    }
    Ok(())
}

fn cmd_import(store: &Path, log: &Path) -> CmdResult {
    let mut st = store_env::open(store)?;
    let pb = ProgressBar::new_spinner();
    let r = tgms_engine::eventlog::import(&mut st, log, &mut |n| {
        pb.set_message(format!("imported {n} lines"))
    });
    pb.finish_and_clear();
    let r = r?;
    if r.torn_final_line {
        warn_line(&format!(
            "warning: the final line of {} is torn and was skipped",
            log.display()
        ));
    }
    st.close()?;
    out(&json!({"batches": r.batches, "failed_batches": r.failed_batches, "events": r.events}));
    Ok(())
}

/// A file created at its first write, so that a command refused before it writes anything
/// leaves no empty output file behind.
struct LazyFile {
    path: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl LazyFile {
    fn file(&mut self) -> std::io::Result<&mut std::io::BufWriter<std::fs::File>> {
        if self.file.is_none() {
            let f = std::fs::File::create(&self.path)?;
            self.file = Some(std::io::BufWriter::new(f));
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("output file not created"))
    }
}

impl std::io::Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file()?.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush().and_then(|_| f.get_ref().sync_all()),
            None => Ok(()),
        }
    }
}

fn cmd_export(store: &Path, path: &Path, strict: bool, salvage: bool) -> CmdResult {
    if !store.join(tgms_engine::store::WAL_FILE).exists() {
        return Err(Error::no_store(store).into());
    }
    let mut w = LazyFile {
        path: path.to_path_buf(),
        file: None,
    };
    let r = tgms_engine::eventlog::export_with(store, &mut w, strict, log_mode(salvage)).map_err(
        |e| match e {
            // The output's errors name the output file, not a placeholder.
            Error::Io { path: p, source } if p.as_os_str() == "<export output>" => {
                Error::io(path, source)
            }
            e => e,
        },
    )?;
    for warning in &r.warnings {
        warn_line(&format!("warning: {warning}"));
    }
    if let Some(lost) = &r.salvage {
        warn_line(&format!("salvage: {}", canon::to_string(&lost.to_json())));
    }
    warn_line(&format!(
        "exported {} batches to {}",
        r.batches,
        path.display()
    ));
    Ok(())
}

/// A spinner on stderr showing `msg` and ticking on its own while long work runs.
fn ticking(msg: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

fn cmd_generate(scale: u64, store: &Path, clock: ClockArg) -> CmdResult {
    use tgms_bench::generate::{generate, ClockMode};
    if scale == 0 {
        return Err(Failure::Usage("--scale must be at least 1".into()));
    }
    let mut st = store_env::create(store)?;
    let pb = bar(0, "generate");
    let mode = if clock == ClockArg::Fixed {
        ClockMode::Fixed
    } else {
        ClockMode::Wall
    };
    // Its ingest batches are built in bulk (`tgms ingest`'s bound): the same store.
    let r = st.bulk_load(tgms_engine::store::LOAD_DECODED_ROWS, |ld| {
        generate(ld, scale, mode, &mut |done, total| {
            pb.set_length(total);
            pb.set_position(done)
        })
    });
    pb.finish_and_clear();
    let r = r??;
    let spin = ticking("store digest of every row".to_string());
    let digest = st.digest();
    spin.finish_and_clear();
    let summary = json!({"scale": scale, "batches": r.batches, "tt_epoch1": r.tt_epoch1,
        "store_digest": digest});
    st.close()?;
    out(&summary);
    Ok(())
}

fn cmd_collegemsg_log(path: &Path) -> CmdResult {
    let text = collegemsg_text()?;
    let f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    tgms_bench::collegemsg_log::write_collegemsg_log(&text, &mut w)
        .and_then(|_| std::io::Write::flush(&mut w))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Reads ARGS (§11.3): JSON text when it starts with `{` or `[`, `-` for stdin, else a file.
fn call_args_text(args: &str) -> anyhow::Result<String> {
    let t = args.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        return Ok(args.to_string());
    }
    if args == "-" {
        use std::io::Read;
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read ARGS from standard input")?;
        return Ok(s);
    }
    read_text(Path::new(args))
}

/// A cell of the table rendering: strings raw, everything else canonical JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => canon::to_string(other),
    }
}

/// `--format table`: scalar fields, then each list as a table, then the result_digest; times
/// as `--time` says.
fn render_table(env: &Value, time: tgms::cli_time::TimeMode) -> String {
    let cell_of = |k: &str, v: &Value| tgms::cli_time::cell(k, v, time);
    let Some(m) = env.as_object() else {
        return canon::to_string(env);
    };
    if m.contains_key("error") {
        return canon::to_string(env);
    }
    let mut s = String::new();
    s.push_str(&format!("op: {}\n", cell(&m["op"])));
    for (k, v) in m {
        if matches!(k.as_str(), "op" | "result_digest" | "args_echo") || v.is_array() {
            continue;
        }
        s.push_str(&format!("{k}: {}\n", cell_of(k, v)));
    }
    for (k, v) in m {
        let Value::Array(rows) = v else { continue };
        s.push_str(&format!("\n{k} ({} shown)\n", rows.len()));
        let mut cols: Vec<String> = Vec::new();
        for r in rows {
            match r.as_object() {
                Some(o) => o.keys().for_each(|c| {
                    if !cols.contains(c) {
                        cols.push(c.clone())
                    }
                }),
                None if cols.is_empty() => cols.push("value".into()),
                None => {}
            }
        }
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| match r.as_object() {
                Some(o) => cols
                    .iter()
                    .map(|c| o.get(c).map(|v| cell_of(c, v)).unwrap_or_default())
                    .collect(),
                None => vec![cell(r)],
            })
            .collect();
        let width: Vec<usize> = (0..cols.len())
            .map(|i| {
                cells
                    .iter()
                    .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                    .chain([cols[i].chars().count()])
                    .max()
                    .unwrap_or(0)
                    .min(60)
            })
            .collect();
        let line = |r: &[String]| {
            r.iter()
                .enumerate()
                .map(|(i, c)| {
                    let c: String = c.chars().take(60).collect();
                    format!("{c:<w$}", w = width[i])
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        s.push_str(&line(&cols));
        s.push('\n');
        for r in &cells {
            s.push_str(&line(r));
            s.push('\n');
        }
    }
    s.push_str(&format!("\nresult_digest: {}", cell(&m["result_digest"])));
    s
}

fn cmd_call(
    store: &Path,
    op: &str,
    args: &str,
    as_of: Option<i64>,
    (format, time): (CallFormat, tgms::cli_time::TimeMode),
) -> CmdResult {
    let text = call_args_text(args)?;
    let parsed = match canon::parse(&text) {
        Ok(v) => v,
        // Unpaired surrogate escapes are E_SCHEMA "invalid JSON string" (plans-and-claims §1.1).
        Err(e)
            if ["surrogate", "hex escape", "unicode"]
                .iter()
                .any(|k| e.to_string().contains(k)) =>
        {
            return Err(Failure::Payload(json!({"error": "E_SCHEMA",
                "message": "invalid JSON string", "details": {}})));
        }
        Err(e) => return Err(Failure::Usage(format!("ARGS is not valid JSON: {e}"))),
    };
    let (many, mut calls) = match parsed {
        Value::Array(a) => (true, a),
        other => (false, vec![other]),
    };
    if let Some(tt) = as_of {
        for c in &mut calls {
            if let Value::Object(m) = c {
                if m.contains_key("as_of_tt") {
                    return Err(Failure::Usage(
                        "--as-of given but ARGS already has as_of_tt".into(),
                    ));
                }
                m.insert("as_of_tt".into(), json!(tt));
            }
        }
    }
    let st = store_env::open_read_only(store)?;
    let snap = st.snapshot();
    let opts = tgms_operators::CallOptions {
        ceilings: plan_ceilings(None)?,
        ..Default::default()
    };
    let one = |a: &Value| match tgms_operators::call_operator(snap, op, a, &opts) {
        Ok(env) => env,
        Err(e) => e.payload(),
    };
    // One snapshot, calls in parallel, results in argument order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = calls.len().div_ceil(threads).max(1);
    let results: Vec<Value> = std::thread::scope(|sc| {
        let handles: Vec<_> = calls
            .chunks(chunk)
            .map(|c| sc.spawn(move || c.iter().map(one).collect::<Vec<Value>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join().unwrap_or_else(|_| {
                    vec![json!({"error": "E_INTERNAL", "message": "operator call panicked", "details": {}})]
                })
            })
            .collect()
    });
    let is_err = |v: &Value| v.get("error").is_some();
    let failed = results.iter().find(|v| is_err(v)).cloned();
    if !many {
        let r = &results[0];
        if is_err(r) {
            return Err(Failure::Payload(r.clone()));
        }
        match format {
            CallFormat::Json => out(r),
            CallFormat::Table => print_line(&render_table(r, time)),
        }
        return Ok(());
    }
    match format {
        CallFormat::Json => out(&Value::Array(results.clone())),
        CallFormat::Table => {
            let parts: Vec<String> = results.iter().map(|r| render_table(r, time)).collect();
            print_line(&parts.join("\n\n"));
        }
    }
    match failed {
        Some(e) => Err(Failure::Printed(e)),
        None => Ok(()),
    }
}

fn cmd_tools(format: ToolsFormat) -> CmdResult {
    use tgms_operators::tools::{tools, ToolFormat};
    let f = match format {
        ToolsFormat::Anthropic => ToolFormat::Anthropic,
        ToolsFormat::Openai => ToolFormat::OpenAi,
        ToolsFormat::Mcp => ToolFormat::Mcp,
        ToolsFormat::Markdown => {
            print_line(tgms_operators::reference::reference_markdown().trim_end());
            return Ok(());
        }
    };
    out(&tools(f));
    Ok(())
}

/// `tgms serve`: checks the options (usage errors exit 2 before anything is opened), then
/// serves until the client goes away. Nothing is printed on stdout but the protocol.
fn cmd_serve(
    store: PathBuf,
    readonly: bool,
    results_dir: Option<PathBuf>,
    ceilings: Option<&str>,
    http: Option<std::net::SocketAddr>,
    llm: &tgms::ask::LlmFlags,
) -> CmdResult {
    use tgms::mcp::backend::{BackendOptions, Results};
    let ceilings = plan_ceilings(ceilings)?;
    if !store.join(tgms_engine::store::WAL_FILE).exists() {
        return Err(Failure::Usage(format!(
            "no tgms store at {} (create one with `tgms init`)",
            store.display()
        )));
    }
    let results = match results_dir {
        Some(d) => {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create --results-dir {}", d.display()))?;
            let (a, b) = (
                d.canonicalize().context("--results-dir")?,
                store.canonicalize().context("--store")?,
            );
            if a.starts_with(&b) {
                return Err(Failure::Usage(format!(
                    "--results-dir {} is inside the store; choose a directory outside it",
                    d.display()
                )));
            }
            Results::Dir(d)
        }
        None if readonly => Results::Memory,
        None => Results::InStore,
    };
    let transport = match http {
        Some(a) => tgms::mcp::Transport::Http(a),
        None => tgms::mcp::Transport::Stdio,
    };
    let ask = tgms::ask::AskConfig::resolve(llm, |k| std::env::var(k).ok())
        .map_err(|e| Failure::Usage(canon::to_string(&e.payload())))?;
    if ask.model_configured() {
        eprintln!("tgms serve: a model is configured: the ask tool is offered");
    }
    let opts = BackendOptions {
        store,
        read_only: readonly,
        results,
        ceilings,
        ask: Some(ask),
    };
    if let Err(e) = tgms::mcp::serve(opts, transport) {
        // stdout belongs to the protocol: the failure goes to stderr.
        eprintln!("tgms serve: {e:#}");
        return Err(Failure::Printed(json!({"error": "E_STATE"})));
    }
    Ok(())
}

fn plan_text(arg: &str) -> anyhow::Result<String> {
    if arg == "-" {
        use std::io::Read;
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        Ok(s)
    } else {
        read_text(Path::new(arg))
    }
}

/// The task input uids: `--uids`, none with `--no-grounding`, else the registered uids the
/// plan's question names at token boundaries (agent-surface §11.3).
fn input_uids(
    st: &Store,
    plan: &Value,
    uids: Option<&str>,
    no_grounding: bool,
) -> Option<std::collections::BTreeSet<String>> {
    if no_grounding {
        return None;
    }
    let explicit = uids.map(|u| {
        u.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    });
    tgms::grounding::task_input_uids(st.snapshot(), plan, explicit)
}

/// Parses and validates a plan: Ok((plan JSON, report)).
fn validated(
    st: &Store,
    plan_arg: &str,
    uids: Option<&str>,
    no_grounding: bool,
    ceilings: tgms_operators::Ceilings,
) -> Result<(Value, tgms_verifier::validate::Report), Failure> {
    use tgms_verifier::validate::{validate_static, Options};
    let text = plan_text(plan_arg)?;
    let v = match tgms_verifier::plan::parse_plan_text(&text) {
        Ok(v) => v,
        Err(e) => {
            let m = e.to_string();
            out(&json!({"valid": false, "violations": [{"code": "E_SCHEMA", "message": m}]}));
            return Err(Failure::Printed(json!({"error": "E_SCHEMA"})));
        }
    };
    let set = input_uids(st, &v, uids, no_grounding);
    let report = validate_static(
        &v,
        &Options {
            stats: Some(st.stats()),
            task_input_uids: set.as_ref(),
            ceilings,
            ..Options::default()
        },
    );
    Ok((v, report))
}

/// `--ceilings` of the plan commands and `tgms serve` (`tgms::cli_ceilings`), the defaults
/// when absent; with the time-estimate scale of `TGMS_TIME_COEFF_SCALE` (also for `call`,
/// `ask` and `eval run-suite`).
fn plan_ceilings(arg: Option<&str>) -> Result<tgms_operators::Ceilings, Failure> {
    tgms::cli_ceilings::from_flag(arg).map_err(Failure::Usage)
}

fn cmd_plan_validate(
    store: &Path,
    plan: &str,
    uids: Option<&str>,
    no_grounding: bool,
    ceilings: Option<&str>,
) -> CmdResult {
    let ceilings = plan_ceilings(ceilings)?;
    let st = store_env::open_read_only(store)?;
    let (_, report) = validated(&st, plan, uids, no_grounding, ceilings)?;
    out(&report.to_json());
    if report.valid() {
        Ok(())
    } else {
        Err(Failure::Printed(json!({"error": "E_PLAN_INVALID"})))
    }
}

fn cmd_plan_run(
    store: &Path,
    plan: &str,
    uids: Option<&str>,
    no_grounding: bool,
    ceilings: Option<&str>,
    report: bool,
    (trace_out, html): (Option<&Path>, Option<&Path>),
) -> CmdResult {
    use tgms_verifier::{claims, exec};
    let ceilings = plan_ceilings(ceilings)?;
    let st = store_env::open_read_only(store)?;
    let (_, rep) = validated(&st, plan, uids, no_grounding, ceilings)?;
    if !rep.valid() {
        out(&rep.to_json());
        return Err(Failure::Printed(json!({"error": "E_PLAN_INVALID"})));
    }
    let Some(p) = rep.plan else {
        return Err(Failure::Usage("plan IR missing after validation".into()));
    };
    let rs = tgms::store_json::plan_results(store);
    let mut opts = exec::ExecOptions::default();
    opts.call.ceilings = ceilings;
    let ex =
        exec::execute(&p, st.snapshot(), &rs, &opts).map_err(|e| Failure::Payload(e.payload()))?;
    let t = &ex.trace;
    let steps: Vec<Value> = t["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let mut m = serde_json::Map::new();
            for k in ["step_id", "op", "status", "result_digest", "error"] {
                if let Some(v) = r.get(k) {
                    m.insert(k.into(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    let mut o = json!({"valid": true, "plan_id": t["plan_id"], "trace_id": t["trace_id"], "ok": t["ok"],
        "answer": t["answer"], "answer_error": t["answer_error"], "answer_complete": t["answer_complete"],
        "steps": steps});
    if report {
        let a = claims::mechanical_answer(&p.answer_kind, &p.answer_from, t);
        let ctx = claims::Ctx {
            trace: t,
            results: &rs,
            snap: Some(st.snapshot()),
            honor_truncation: true,
        };
        o["verification"] = claims::verify(&ctx, &a);
        o["answer_object"] = a;
    }
    if let Some(f) = trace_out {
        std::fs::write(f, canon::to_string(t))
            .with_context(|| format!("cannot write {}", f.display()))?;
    }
    if let Some(f) = html {
        let a = claims::mechanical_answer(&p.answer_kind, &p.answer_from, t);
        let ctx = claims::Ctx {
            trace: t,
            results: &rs,
            snap: Some(st.snapshot()),
            honor_truncation: true,
        };
        let ver = claims::verify(&ctx, &a);
        let (g, gv) = claims::gate(&ctx, &a);
        let page = tgms::trace_view::render(&tgms::trace_view::TraceView {
            trace: t,
            results: &rs,
            plan: Some(&p.raw),
            answer_object: Some(&a),
            verification: Some(&ver),
            gated: Some((&g, &gv)),
        });
        std::fs::write(f, page).with_context(|| format!("cannot write {}", f.display()))?;
    }
    out(&o);
    let ok = t["ok"] == Value::Bool(true);
    // The process exits next: freeing the steps' values one by one (a reducer's complete
    // input can be a million rows) would take longer than the reducer did.
    std::mem::forget(ex);
    std::mem::forget(rs);
    if ok {
        Ok(())
    } else {
        Err(Failure::Printed(json!({"error": "E_TRACE_NOT_OK"})))
    }
}

fn cmd_verify(store: &Path, answer: &Path, trace: &str) -> CmdResult {
    use tgms_verifier::exec;
    let st = store_env::open_read_only(store)?;
    let rs = exec::ResultStore::in_dir(store);
    let tpath = Path::new(trace);
    let t = if tpath.is_file() {
        canon::parse(&read_text(tpath)?).context("TRACE is not valid JSON")?
    } else {
        match rs.trace(trace) {
            Some(t) => t,
            None => return Err(Failure::Payload(tgms::store_json::unknown_trace(trace))),
        }
    };
    let a = canon::parse(&read_text(answer)?).context("ANSWER is not valid JSON")?;
    out(&tgms::store_json::verify_json(&st, &rs, &t, &a));
    Ok(())
}

fn cmd_view(
    store: &Path,
    trace_id: &str,
    out_path: &Path,
    plan: Option<&Path>,
    answer: Option<&Path>,
) -> CmdResult {
    use tgms::trace_list::{self, Kind};
    use tgms_verifier::{claims, exec};
    let st = store_env::open_read_only(store)?;
    let rs = exec::ResultStore::in_dir(store);
    let found = trace_list::resolve(store, trace_id).map_err(|e| Failure::Payload(e.payload()))?;
    let trace_id = found.id.as_str();
    // An ask id (`tgms ask` prints it) shows the whole ask record: planning history, the
    // answers at each gating stage and the final trace.
    if found.kind == Kind::Ask {
        let ask_path = store.join("asks").join(format!("{trace_id}.json"));
        let record =
            canon::parse(&read_text(&ask_path)?).context("the ask record is not valid JSON")?;
        let page = tgms::trace_view::render_ask(&record, &rs);
        std::fs::write(out_path, page)
            .with_context(|| format!("cannot write {}", out_path.display()))?;
        out(
            &json!({"ask_id": trace_id, "trace_id": record["trace"]["trace_id"],
            "out": out_path.display().to_string()}),
        );
        return Ok(());
    }
    let Some(t) = rs.trace(trace_id) else {
        return Err(Failure::Payload(json!({"error": "E_STATE",
            "message": format!("the stored trace '{trace_id}' cannot be read: {}", found.status),
            "details": {"trace": trace_id, "repair": "remove traces/<id> from the store and run the plan again with `tgms plan run`"}})));
    };
    let plan_v = match plan {
        Some(p) => Some(canon::parse(&read_text(p)?).context("PLAN is not valid JSON")?),
        None => None,
    };
    let ans = match (answer, &plan_v) {
        (Some(a), _) => Some(canon::parse(&read_text(a)?).context("ANSWER is not valid JSON")?),
        (None, Some(p)) => Some(claims::mechanical_answer(
            p["answer_spec"]["kind"].as_str().unwrap_or(""),
            p["answer_spec"]["from"].as_str().unwrap_or(""),
            &t,
        )),
        (None, None) => None,
    };
    let ctx = claims::Ctx {
        trace: &t,
        results: &rs,
        snap: Some(st.snapshot()),
        honor_truncation: true,
    };
    let ver = ans.as_ref().map(|a| claims::verify(&ctx, a));
    let gated = ans.as_ref().map(|a| claims::gate(&ctx, a));
    let page = tgms::trace_view::render(&tgms::trace_view::TraceView {
        trace: &t,
        results: &rs,
        plan: plan_v.as_ref(),
        answer_object: ans.as_ref(),
        verification: ver.as_ref(),
        gated: gated.as_ref().map(|(g, v)| (g, v)),
    });
    std::fs::write(out_path, page)
        .with_context(|| format!("cannot write {}", out_path.display()))?;
    out(
        &json!({"trace_id": trace_id, "out": out_path.display().to_string(),
        "claims": ver.as_ref().map_or(Value::Null, |v| v["claims"].clone())}),
    );
    Ok(())
}

fn cmd_traces(store: &Path, as_json: bool) -> CmdResult {
    // Opening checks that STORE is a store (a structured error otherwise); nothing is written.
    store_env::open_read_only(store)?;
    let entries = tgms::trace_list::list(store);
    if as_json {
        out(&json!({"store": store.display().to_string(),
            "entries": entries.iter().map(|e| e.to_json()).collect::<Vec<_>>()}));
    } else {
        print_line(&tgms::trace_list::table(&entries));
    }
    Ok(())
}

fn cmd_mutations(store: &Path, suite: Option<&Path>, pool: PoolArg, as_json: bool) -> CmdResult {
    use tgms_verifier::mutations;
    let st = store_env::open_read_only(store)?;
    let plans = match suite {
        Some(f) => {
            let v = canon::parse(&read_text(f)?).context("SUITE is not valid JSON")?;
            let mut p = mutations::suite_plans(&v);
            // The extended pool adds the built-in plans over more entities (docs/eval.md).
            if matches!(pool, PoolArg::Extended) {
                p.extend(mutations::builtin_plans_over(
                    st.snapshot(),
                    mutations::EXTENDED_ENTITIES,
                ));
            }
            p
        }
        None => mutations::builtin_plans(st.snapshot()),
    };
    let r = mutations::run(st.snapshot(), &plans, matches!(pool, PoolArg::Extended));
    if as_json {
        out(&r.to_json());
    } else {
        print_line(&r.table());
    }
    Ok(())
}

// ---- evaluation harnesses, demo and benchmark runner (issue #7) ----

fn cmd_eval(e: EvalCmd) -> CmdResult {
    let (which, dir, json) = match e {
        EvalCmd::Mutations {
            store,
            suite,
            pool,
            json,
        } => return cmd_mutations(&store, suite.as_deref(), pool, json),
        EvalCmd::Incident { dir, json } => ("incident", dir, json),
        EvalCmd::StateRegression { dir, json } => ("state-regression", dir, json),
        other => return cmd_eval_campaign(other),
    };
    let (record, ok) = tgms::eval::run_eval(which, dir, json)?;
    if json {
        out(&record);
    }
    if ok {
        Ok(())
    } else {
        Err(Failure::Printed(
            json!({"error": "E_CHECK", "message": "an evaluation check failed"}),
        ))
    }
}

/// `tgms eval suite|plant|run-suite|report` (docs/eval.md).
fn cmd_eval_campaign(e: EvalCmd) -> CmdResult {
    use tgms::eval::{planted, report, run_suite, suite};
    match e {
        EvalCmd::Suite {
            store,
            dataset,
            seed,
            planted,
            out: out_path,
        } => {
            let manifest = match &planted {
                Some(p) => {
                    Some(canon::parse(&read_text(p)?).context("MANIFEST is not valid JSON")?)
                }
                None => None,
            };
            let mut st = store_env::open(&store)?;
            let v = suite::generate(
                &mut st,
                &suite::SuiteArgs {
                    dataset,
                    seed,
                    planted: manifest,
                },
            )?;
            let text = canon::to_string(&v);
            match out_path {
                Some(p) => {
                    std::fs::write(&p, format!("{text}\n"))
                        .with_context(|| format!("cannot write {}", p.display()))?;
                    eprintln!(
                        "wrote {} ({} dev, {} test tasks; test_split_sha {})",
                        p.display(),
                        v["n_dev"],
                        v["n_test"],
                        v["test_split_sha"].as_str().unwrap_or_default()
                    );
                }
                None => print_line(&text),
            }
        }
        EvalCmd::Plant {
            store,
            out: out_path,
            rings,
            chains,
            bursts,
        } => {
            let mut st = store_env::open(&store)?;
            let m = planted::plant(
                &mut st,
                planted::PlantArgs {
                    rings,
                    chains,
                    bursts,
                },
            )?;
            std::fs::write(&out_path, format!("{}\n", canon::to_string(&m)))
                .with_context(|| format!("cannot write {}", out_path.display()))?;
            eprintln!(
                "planted {} patterns; manifest {}",
                m["planted"].as_array().map_or(0, Vec::len),
                out_path.display()
            );
        }
        EvalCmd::RunSuite {
            store,
            suite: suite_path,
            system,
            model,
            endpoint,
            split,
            force,
            cache_dir,
            python,
            retrieval,
            limit,
            json: json_out,
        } => {
            let retrieval = tgms::eval::baselines::Retrieval::parse(&retrieval)?;
            let sv = canon::parse(&read_text(&suite_path)?).context("SUITE is not valid JSON")?;
            let st = store_env::open_read_only(&store)?;
            let flags = tgms::ask::LlmFlags {
                model,
                base_url: endpoint,
                ..Default::default()
            };
            let mut cfg = tgms::ask::AskConfig::resolve(&flags, |k| std::env::var(k).ok())
                .map_err(|e| Failure::Payload(e.payload()))?;
            cfg.ceilings = plan_ceilings(None)?;
            let http = cfg.llm.clone().map(tgms::ask::HttpModel::new);
            let args = run_suite::RunArgs {
                system,
                split,
                force,
                cache_dir: cache_dir.unwrap_or_else(|| suite_path.with_extension("runs")),
                ask: cfg,
                model: http.as_ref().map(|m| m as &dyn tgms::ask::ChatModel),
                python,
                retrieval,
                limit,
            };
            let run = run_suite::run(&st, &sv, &args)?;
            print!("{}", run_suite::summary(&run));
            if let Some(p) = json_out {
                std::fs::write(&p, format!("{}\n", canon::to_string(&run)))
                    .with_context(|| format!("cannot write {}", p.display()))?;
            }
        }
        EvalCmd::Report {
            runs,
            out: out_path,
        } => {
            let mut vs = Vec::new();
            for p in &runs {
                vs.push(
                    canon::parse(&read_text(p)?)
                        .with_context(|| format!("{} is not valid JSON", p.display()))?,
                );
            }
            let text = match out_path.extension().and_then(|e| e.to_str()) {
                Some("html") | Some("htm") => report::html(&vs),
                Some("md") => report::markdown(&vs),
                _ => {
                    return Err(Failure::Usage(format!(
                    "cannot tell the report format of {}; hint: name it report.md or report.html",
                    out_path.display()
                )))
                }
            };
            std::fs::write(&out_path, text)
                .with_context(|| format!("cannot write {}", out_path.display()))?;
            eprintln!("wrote {}", out_path.display());
        }
        _ => unreachable!("handled by cmd_eval"),
    }
    Ok(())
}

fn cmd_sql(
    store: &Path,
    query: &str,
    as_of: Option<i64>,
    format: tgms_sql::out::Format,
) -> CmdResult {
    if !store.join(tgms_engine::store::WAL_FILE).exists() {
        return Err(Error::no_store(store).into());
    }
    let st = std::sync::Arc::new(store_env::open_read_only(store)?);
    let result = tgms_sql::session(st, as_of).and_then(|ctx| tgms_sql::query(&ctx, query));
    let (schema, batches) = result.map_err(|e| Failure::Payload(e.payload(query)))?;
    let mut text = Vec::new();
    tgms_sql::out::write(&mut text, &schema, &batches, format)
        .map_err(|e| Failure::Payload(json!({"error": "E_INTERNAL", "message": format!("cannot format the result: {e}"), "details": {}})))?;
    print_line(String::from_utf8_lossy(&text).trim_end_matches('\n'));
    Ok(())
}

fn cmd_export_rows(
    store: &Path,
    path: &Path,
    format: Option<tgms::export_rows::Format>,
    (typed, as_of, partition_by): (bool, Option<i64>, Option<tgms::export_typed::PartitionBy>),
) -> CmdResult {
    use tgms::export_rows::{write_csv, write_parquet, Format};
    let ext = path.extension().and_then(|e| e.to_str());
    let format = match format.or_else(|| ext.and_then(Format::from_extension)) {
        Some(f) => f,
        None if partition_by.is_some() => {
            return Err(Failure::Usage(
                "--partition-by writes a directory: give --format parquet or --format arrow"
                    .into(),
            ))
        }
        None => {
            return Err(Failure::Usage(format!(
                "cannot tell the output format of {} from its extension {}; \
                 hint: name it OUT.csv, OUT.parquet or OUT.arrow, or pass --format csv|parquet|arrow",
                path.display(),
                ext.map_or("(none)".to_string(), |e| format!("'.{e}'"))
            )))
        }
    };
    let typed_asked = typed || as_of.is_some() || partition_by.is_some();
    if format == Format::Csv && typed_asked {
        return Err(Failure::Usage(
            "--typed, --as-of and --partition-by write the typed schema: use --format parquet \
             or --format arrow"
                .into(),
        ));
    }
    if !store.join(tgms_engine::store::WAL_FILE).exists() {
        return Err(Error::no_store(store).into());
    }
    let st = store_env::open_read_only(store)?;
    if format == Format::Arrow || typed_asked {
        use tgms::export_typed::{write, Options, Sink};
        let sink = if format == Format::Arrow {
            Sink::ArrowIpc
        } else {
            Sink::Parquet
        };
        let opts = Options {
            as_of_tt: as_of,
            partition_by_month: partition_by.is_some(),
        };
        let w = write(&st, path, sink, &opts).map_err(|e| {
            Failure::Usage(format!(
                "cannot write {}: {e}; hint: check free space and permissions, then re-run",
                path.display()
            ))
        })?;
        eprintln!(
            "exported {} node rows and {} edge rows to {} ({} file{})",
            w.node_rows,
            w.edge_rows,
            path.display(),
            w.files.len(),
            if w.files.len() == 1 { "" } else { "s" }
        );
        return Ok(());
    }
    let f = std::fs::File::create(path).map_err(|e| {
        Failure::Usage(format!(
            "cannot create {}: {e}; hint: the parent directory must exist and be writable",
            path.display()
        ))
    })?;
    let mut w = std::io::BufWriter::new(f);
    let written = match format {
        Format::Arrow => Err("the Arrow format is written by the typed export".to_string()),
        Format::Csv => write_csv(&st, &mut w)
            .and_then(|r| std::io::Write::flush(&mut w).map(|_| r))
            .map_err(|e| e.to_string()),
        Format::Parquet => write_parquet(&st, &mut w)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                std::io::Write::flush(&mut w)
                    .map(|_| r)
                    .map_err(|e| e.to_string())
            }),
    };
    let (n, e) = written.map_err(|e| {
        Failure::Usage(format!(
            "cannot write {}: {e}; hint: check free space and permissions, then re-run",
            path.display()
        ))
    })?;
    eprintln!(
        "exported {n} node rows and {e} edge rows to {}",
        path.display()
    );
    Ok(())
}

fn cmd_demo(dir: Option<PathBuf>, html: Option<PathBuf>) -> CmdResult {
    if let Some(d) = &dir {
        if d.exists() && std::fs::read_dir(d).map_or(true, |mut r| r.next().is_some()) {
            return Err(Error::state(format!("{} exists and is not empty", d.display())).into());
        }
    }
    let report = tgms::demo::run(dir, html, &collegemsg_text()?)?;
    if report.ok() {
        Ok(())
    } else {
        Err(Failure::Printed(json!({"error": "E_CHECK"})))
    }
}

/// `tgms ask` (agent-surface §2, docs/ask.md).
fn cmd_ask(
    store: &Path,
    question: &str,
    cfg: &tgms::ask::AskConfig,
    read_only: bool,
    html: Option<&Path>,
    as_json: bool,
) -> CmdResult {
    // A writable handle keeps results and the ask record in the store; when another process
    // holds the writer lock the question is still answered, read-only, in memory.
    let st = if read_only {
        store_env::open_read_only(store)?
    } else {
        match store_env::open(store) {
            Ok(s) => s,
            Err(e) if e.message().contains("lock") => {
                eprintln!(
                    "tgms ask: {}; answering read-only (nothing stored)",
                    e.message()
                );
                store_env::open_read_only(store)?
            }
            Err(e) => return Err(e.into()),
        }
    };
    let o = tgms::ask::ask(&st, question, cfg).map_err(|e| Failure::Payload(e.payload()))?;
    if let Some(f) = html {
        let page = tgms::trace_view::render_ask(&o.record, &o.results);
        std::fs::write(f, page).with_context(|| format!("cannot write {}", f.display()))?;
    }
    if as_json {
        out(&o.record);
    } else {
        print_line(&tgms::ask::record::summary_text(&o.record));
    }
    if o.ok {
        Ok(())
    } else {
        Err(Failure::Printed(json!({"error": "E_TRACE_NOT_OK"})))
    }
}

/// `tgms memory build|refresh|list` (agent-surface §8).
fn cmd_memory(m: MemoryCmd) -> CmdResult {
    use tgms::ask::memory;
    let e = |e: tgms::ask::AskError| Failure::Payload(e.payload());
    match m {
        MemoryCmd::Build { store, stride_days } => {
            let st = store_env::open(&store)?;
            let n = memory::build(&st, stride_days.saturating_mul(86_400_000_000)).map_err(e)?;
            out(&json!({"notes": n}));
        }
        MemoryCmd::Refresh { store } => {
            let st = store_env::open(&store)?;
            out(&json!({"refreshed": memory::refresh(&st).map_err(e)?}));
        }
        MemoryCmd::List { store } => {
            let st = store_env::open_read_only(&store)?;
            let notes = memory::sync(&st)
                .map_err(e)?
                .map(|m| m.notes)
                .unwrap_or_default();
            out(&json!({"notes": notes}));
        }
    }
    Ok(())
}

fn run(cli: Cli) -> CmdResult {
    let time = cli.time;
    store_env::apply_page_cache_budget().map_err(Failure::Usage)?;
    match cli.cmd {
        Cmd::Init { store } => {
            store_env::create(&store)?;
        }
        Cmd::Ingest {
            store,
            file,
            format,
            rel_type,
            dataset,
            compact,
            batch_key,
            no_batch_key,
            flags,
        } => cmd_ingest(
            &store,
            file,
            (format, rel_type, dataset, compact),
            (batch_key, no_batch_key),
            &flags,
        )?,
        Cmd::Write {
            store,
            batch,
            batch_key,
        } => cmd_write(&store, &batch, batch_key)?,
        Cmd::Stats {
            store,
            format,
            json,
        } => cmd_stats(&store, json || format == TableFormat::Json, time)?,
        Cmd::Digest { store } => {
            let st = store_env::open_read_only(&store)?;
            let spin = ticking(format!("digesting every row of {}", store.display()));
            let digest = st.digest();
            spin.finish_and_clear();
            print_line(&digest)
        }
        Cmd::Replay {
            store,
            out_store,
            salvage,
        } => cmd_replay(&store, &out_store, salvage)?,
        Cmd::History {
            store,
            uid,
            edges,
            format,
        } => cmd_history(&store, &uid, edges, format, time)?,
        Cmd::ImportEventlog { store, log } => cmd_import(&store, &log)?,
        Cmd::ImportRows {
            store,
            file,
            format,
        } => {
            let mut st = store_env::open(&store)?;
            let r = tgms::import_rows::import(&mut st, &file, format)?;
            st.close()?;
            out(
                &json!({"batches": r.batches, "rows": r.rows, "digest": store_env::open_read_only(&store)?.digest()}),
            );
        }
        Cmd::ExportEventlog {
            store,
            out,
            strict,
            salvage,
        } => cmd_export(&store, &out, strict, salvage)?,
        Cmd::Call {
            store,
            op,
            args,
            as_of,
            format,
        } => cmd_call(&store, &op, &args, as_of, (format, time))?,
        Cmd::Tools { format } => cmd_tools(format)?,
        Cmd::Serve {
            store,
            readonly,
            results_dir,
            ceilings,
            http,
            model,
            llm_base_url,
            guided,
        } => {
            let llm = tgms::ask::LlmFlags {
                model,
                base_url: llm_base_url,
                guided,
                ..Default::default()
            };
            cmd_serve(
                store,
                readonly,
                results_dir,
                ceilings.as_deref(),
                http,
                &llm,
            )?
        }
        Cmd::Check { store } => cmd_check(&store)?,
        Cmd::Compact { store } => cmd_compact(&store)?,
        Cmd::Bench(BenchCmd::Generate {
            scale,
            store,
            clock,
        }) => cmd_generate(scale, &store, clock)?,
        Cmd::Bench(BenchCmd::CollegemsgLog { out }) => cmd_collegemsg_log(&out)?,
        Cmd::Plan(PlanCmd::Validate {
            store,
            plan,
            uids,
            no_grounding,
            ceilings,
        }) => cmd_plan_validate(
            &store,
            &plan,
            uids.as_deref(),
            no_grounding,
            ceilings.as_deref(),
        )?,
        Cmd::Plan(PlanCmd::Run {
            store,
            plan,
            uids,
            no_grounding,
            ceilings,
            report,
            trace_out,
            html,
        }) => cmd_plan_run(
            &store,
            &plan,
            uids.as_deref(),
            no_grounding,
            ceilings.as_deref(),
            report,
            (trace_out.as_deref(), html.as_deref()),
        )?,
        Cmd::Verify {
            store,
            answer,
            trace,
        } => cmd_verify(&store, &answer, &trace)?,
        Cmd::View {
            store,
            trace_id,
            out,
            plan,
            answer,
        } => cmd_view(&store, &trace_id, &out, plan.as_deref(), answer.as_deref())?,
        Cmd::Traces { store, json } => cmd_traces(&store, json)?,
        Cmd::Eval(e) => cmd_eval(e)?,
        Cmd::Ask {
            store,
            question,
            uids,
            no_grounding,
            as_of,
            model,
            llm_base_url,
            guided,
            llm_extra_body,
            llm_timeout_s,
            llm_cache_dir,
            max_repairs,
            reporter,
            no_memory,
            read_only,
            html,
            json,
        } => {
            let flags = tgms::ask::LlmFlags {
                model,
                base_url: llm_base_url,
                guided,
                extra_body: llm_extra_body,
                timeout_s: llm_timeout_s,
                retries: None,
                cache_dir: llm_cache_dir,
            };
            let mut cfg = tgms::ask::AskConfig::resolve(&flags, |k| std::env::var(k).ok())
                .map_err(|e| Failure::Payload(e.payload()))?;
            cfg.max_repairs = max_repairs;
            cfg.ceilings = plan_ceilings(None)?;
            cfg.as_of_tt = as_of;
            cfg.use_memory = !no_memory;
            cfg.input_uids = match (no_grounding, uids) {
                (true, _) => tgms::ask::InputUids::NoGrounding,
                (false, Some(u)) => tgms::ask::InputUids::Given(
                    u.split(',')
                        .map(str::trim)
                        .filter(|x| !x.is_empty())
                        .map(String::from)
                        .collect(),
                ),
                (false, None) => tgms::ask::InputUids::FromQuestion,
            };
            if reporter == "mechanical" {
                cfg.reporter = tgms::ask::ReporterMode::Mechanical;
            }
            cmd_ask(&store, &question, &cfg, read_only, html.as_deref(), json)?
        }
        Cmd::Memory(m) => cmd_memory(m)?,
        Cmd::HelpMarkdown => print_line(
            cli_help::markdown(&cli_help::with_examples(
                <Cli as clap::CommandFactory>::command(),
            ))
            .trim_end(),
        ),
        Cmd::Demo { dir, html } => cmd_demo(dir, html)?,
        Cmd::ExportRows {
            store,
            out,
            format,
            typed,
            as_of,
            partition_by,
        } => cmd_export_rows(&store, &out, format, (typed, as_of, partition_by))?,
        Cmd::Sql {
            store,
            query,
            as_of,
            format,
        } => cmd_sql(&store, &query, as_of, format)?,
        Cmd::Bench(BenchCmd::Run {
            scale,
            log,
            store,
            json,
            warmups,
            reps,
            only,
            compact,
        }) => {
            let protocol = tgms_bench::registry::Protocol {
                warmups,
                reps_fast: reps,
                reps_slow: reps.min(10),
            };
            let opts = tgms::benchrun::RunOpts {
                scale,
                log,
                store,
                json,
                protocol,
                only,
                compact,
            };
            let (_, ok) = tgms::benchrun::run(opts)?;
            if !ok {
                return Err(Failure::Printed(json!({"error": "E_CHECK"})));
            }
        }
        Cmd::Bench(BenchCmd::OpenProbe { store }) => out(&tgms::benchrun::open_probe(&store)?),
        Cmd::Bench(BenchCmd::Mcp {
            store,
            calls,
            clients,
            seconds,
            json,
        }) => {
            let rec = tgms::benchmcp::run(&tgms::benchmcp::McpBenchOpts {
                store: &store,
                calls: calls.max(1),
                clients: clients.max(1),
                http_seconds: seconds,
            })?;
            if let Some(f) = json {
                std::fs::write(&f, canon::to_string(&rec))
                    .with_context(|| format!("cannot write {}", f.display()))?;
            }
        }
        Cmd::Bench(BenchCmd::SoakWriter { store, from, to }) => {
            tgms::soak::writer(&store, from, to, tgms::soak::COMPACT_EVERY)?
        }
        Cmd::Bench(BenchCmd::Soak {
            store,
            secs,
            readers,
            seed,
        }) => {
            let dir = store.unwrap_or_else(|| {
                std::env::temp_dir().join(format!("tgms-soak-{}", std::process::id()))
            });
            let exe = std::env::current_exe().context("cannot find the tgms binary")?;
            let r = tgms::soak::soak(&exe, &dir, secs, readers, seed)?;
            out(&r.to_json());
            if !r.violations.is_empty() {
                return Err(Failure::Printed(json!({"error": "E_CHECK"})));
            }
        }
    }
    Ok(())
}

/// Parses the command line against the command tree with its examples attached.
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let matches = cli_help::with_examples(Cli::command()).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn main() -> ExitCode {
    install_panic_hook();
    install_test_faults();
    let cli = parse_cli();
    let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exit_of(run(cli)))) {
        Ok(code) => code,
        Err(payload) => match panic_text(payload.as_ref()) {
            Some(m) if m.starts_with(STDOUT_PANIC) => {
                let kind = if m.contains("Broken pipe") {
                    std::io::ErrorKind::BrokenPipe
                } else {
                    std::io::ErrorKind::Other
                };
                let msg = m[STDOUT_PANIC.len()..].to_string();
                *STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(std::io::Error::new(kind, msg));
                ExitCode::from(3)
            }
            _ => std::panic::resume_unwind(payload),
        },
    };
    stdout_exit().unwrap_or(code)
}

/// The exit status of a command's result (its error payload printed).
fn exit_of(r: CmdResult) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            warn_line(&format!("error: {m}"));
            ExitCode::from(2)
        }
        Err(Failure::Printed(p)) => {
            point_to_docs(&p);
            if p["error"] == "E_STATE" {
                ExitCode::from(3)
            } else {
                ExitCode::from(1)
            }
        }
        Err(Failure::Payload(p)) => {
            out(&p);
            point_to_docs(&p);
            if p["details"]["outcome"] == "unknown" {
                ExitCode::from(EXIT_OUTCOME_UNKNOWN)
            } else if p["error"] == "E_STATE" {
                ExitCode::from(3)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Names, on stderr, the section of `docs/errors.md` that explains an error payload's code and
/// its repair (the payload on stdout stays the spec's bytes).
fn point_to_docs(p: &Value) {
    if let Some(code) = p["error"].as_str().filter(|c| c.starts_with("E_")) {
        warn_line(&format!(
            "what {code} means and how to repair it: docs/errors.md#{}",
            code.to_ascii_lowercase()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    /// Every error code the product emits (any `"E_…"` literal in the crates' sources) has its
    /// section in docs/errors.md, so the pointer [`point_to_docs`] prints always resolves.
    #[test]
    fn every_error_code_has_a_docs_section() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let doc = std::fs::read_to_string(root.join("docs/errors.md")).unwrap();
        let mut codes = std::collections::BTreeSet::new();
        let mut dirs: Vec<PathBuf> = ["src", "engine/src", "operators/src", "verifier/src"]
            .iter()
            .map(|d| root.join(d))
            .collect();
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let src = std::fs::read_to_string(&path).unwrap();
                    for (i, _) in src.match_indices("\"E_") {
                        let rest = &src[i + 1..];
                        let code = &rest[..rest.find('"').unwrap_or(0)];
                        if code.len() > 2
                            && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                        {
                            codes.insert(code.to_string());
                        }
                    }
                }
            }
        }
        assert!(codes.len() >= 10, "{codes:?}");
        for c in codes {
            assert!(
                doc.contains(&format!("\n## {c}\n")),
                "docs/errors.md has no section {c}"
            );
        }
    }

    /// clap's own consistency checks over the whole command tree (unique argument ids,
    /// valid defaults and value names).
    #[test]
    fn the_command_tree_is_consistent() {
        cli_help::with_examples(Cli::command()).debug_assert();
    }

    /// A command's own flag must not reuse the global `--time iso|us` id: clap accepts such a
    /// tree (debug_assert passes) and then panics while reading the matches of every run of
    /// that command. Each command line here goes through the whole derive path.
    #[test]
    fn commands_with_their_own_time_flags_parse_beside_the_global_time() {
        for line in [
            "tgms ingest /s f.csv --format csv --src a --dst b --time-col t --time us",
            "tgms ingest /s --dataset collegemsg",
            "tgms stats /s --time us",
            "tgms history /s n1 --time iso",
            "tgms call /s entity_history {} --as-of 2004-04-15 --time us",
        ] {
            let m = cli_help::with_examples(Cli::command())
                .try_get_matches_from(line.split(' '))
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            Cli::from_arg_matches(&m).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
}
