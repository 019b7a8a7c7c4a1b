//! The `tgms ingest` flags of strict ingest and named-column input (`docs/ingest.md`):
//! `--on-error`, `--dry-run`, `--again`, `--uid-prefix` and the column mapping of
//! `--format csv|parquet`, and their conversion into a [`crate::load::Mapping`]; and the
//! load's progress report on stderr ([`Progress`]).

use crate::ingest::OnError;
use crate::load::Mapping;
use crate::load_columns::{Columns, TimeUnit};

/// `--on-error`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OnErrorArg {
    /// Stop at the first bad line, found by a validation pass before anything is written.
    #[default]
    Fail,
    /// Leave bad lines out; the summary counts them and lists the first 20.
    Skip,
}

/// `--time-unit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeUnitArg {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds, the store's unit (what `tgms export-rows` writes).
    #[default]
    Us,
}

/// The strict-ingest and named-column flags of `tgms ingest`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct IngestFlags {
    /// What a line that does not parse does: `fail` stops the load before anything is
    /// written (a validation pass reads the whole input first); `skip` leaves it out and
    /// lists it in the summary.
    #[arg(long, value_enum, default_value = "fail")]
    pub on_error: OnErrorArg,
    /// Parse and validate the whole input and print the summary; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Report progress on stderr (events written, events/s) also when stderr is not a
    /// terminal: a line a second and one at the end. On a terminal a progress bar is drawn
    /// anyway.
    #[arg(long)]
    pub progress: bool,
    /// Load the input again although it is already whole in the store (one more copy).
    #[arg(long, conflicts_with = "no_batch_key")]
    pub again: bool,
    /// Prefix every node uid read (`--uid-prefix email:` makes SNAP node 7 `email:n7`), so
    /// datasets loaded into one store keep apart.
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub uid_prefix: String,
    /// csv / parquet / arrow-ipc: the column of the source node uid.
    #[arg(long, value_name = "COL")]
    pub src: Option<String>,
    /// csv / parquet / arrow-ipc: the column of the destination node uid.
    #[arg(long, value_name = "COL")]
    pub dst: Option<String>,
    /// csv / parquet / arrow-ipc: the column of the valid-time start (an integer in --time-unit).
    /// (`--time` alone is the global display flag `--time iso|us`.)
    #[arg(long, value_name = "COL")]
    pub time_col: Option<String>,
    /// csv / parquet / arrow-ipc: the column of the valid-time end (empty: an instant event).
    #[arg(long, value_name = "COL")]
    pub end: Option<String>,
    /// csv / parquet / arrow-ipc: the unit of integer time cells (Parquet timestamps carry their own).
    #[arg(long, value_enum, default_value = "us")]
    pub time_unit: TimeUnitArg,
    /// csv / parquet / arrow-ipc: a column holding each event's rel type (else --rel-type for all).
    #[arg(long, value_name = "COL")]
    pub rel_type_col: Option<String>,
    /// csv / parquet / arrow-ipc: a column holding each event's disc (else the default `#<ordinal>`).
    #[arg(long, value_name = "COL")]
    pub disc: Option<String>,
    /// csv / parquet / arrow-ipc: columns that become props of the same name (comma-separated).
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub props: Vec<String>,
    /// csv / parquet / arrow-ipc: a column holding a JSON object of props (export-rows' `props`).
    #[arg(long, value_name = "COL")]
    pub props_json: Option<String>,
    /// csv / parquet / arrow-ipc: keep only rows whose COL is VALUE (repeatable; all must hold), e.g.
    /// `--only kind=edge` for an export-rows file.
    #[arg(long, value_name = "COL=VALUE")]
    pub only: Vec<String>,
}

impl IngestFlags {
    /// The `--on-error` policy.
    pub fn on_error(&self) -> OnError {
        match self.on_error {
            OnErrorArg::Fail => OnError::Fail,
            OnErrorArg::Skip => OnError::Skip,
        }
    }

    /// The mapping these flags ask for, with `rel_type`; `named` says whether the format
    /// takes named columns. Errors are usage messages.
    pub fn mapping(&self, rel_type: Option<String>, named: bool) -> Result<Mapping, String> {
        let any_column = self.src.is_some()
            || self.dst.is_some()
            || self.time_col.is_some()
            || self.end.is_some()
            || self.rel_type_col.is_some()
            || self.disc.is_some()
            || !self.props.is_empty()
            || self.props_json.is_some()
            || !self.only.is_empty();
        let columns = if named {
            let need = |v: &Option<String>, flag: &str| {
                v.clone().ok_or_else(|| {
                    format!(
                        "--format csv, parquet and arrow-ipc need {flag} COL (and --src, --dst, --time-col)"
                    )
                })
            };
            let only = self
                .only
                .iter()
                .map(|o| {
                    o.split_once('=')
                        .map(|(c, v)| (c.to_string(), v.to_string()))
                        .ok_or_else(|| format!("--only takes COL=VALUE, got {o:?}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(Columns {
                src: need(&self.src, "--src")?,
                dst: need(&self.dst, "--dst")?,
                time: need(&self.time_col, "--time-col")?,
                end: self.end.clone(),
                time_unit: match self.time_unit {
                    TimeUnitArg::S => TimeUnit::S,
                    TimeUnitArg::Ms => TimeUnit::Ms,
                    TimeUnitArg::Us => TimeUnit::Us,
                },
                rel_type: self.rel_type_col.clone(),
                disc: self.disc.clone(),
                props: self.props.clone(),
                props_json: self.props_json.clone(),
                only,
            })
        } else if any_column {
            return Err(
                "--src, --dst, --time, --end, --rel-type-col, --disc, --props, \
                        --props-json and --only name columns of --format csv, parquet or arrow-ipc"
                    .into(),
            );
        } else {
            None
        };
        Ok(Mapping {
            rel_type,
            uid_prefix: self.uid_prefix.clone(),
            columns,
        })
    }
}

/// The write pass's progress on stderr: a bar with events/s on a terminal, or with
/// `--progress` when stderr is not one, a plain line a second and a last line with the
/// whole load's rate. Silent otherwise (stdout carries only the summary).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    lines: bool,
    total: u64,
    start: std::time::Instant,
    last_line: std::time::Instant,
}

impl Progress {
    /// A report of a load of `total` events; `forced` is `--progress`.
    pub fn new(total: u64, forced: bool) -> Progress {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let pb = indicatif::ProgressBar::new(total);
            pb.set_style(
                indicatif::ProgressStyle::with_template(
                    "ingest [{elapsed_precise}] {bar:40} {pos}/{len} ({per_sec}, eta {eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            pb
        });
        let now = std::time::Instant::now();
        Progress {
            bar,
            lines: forced && !terminal,
            total,
            start: now,
            last_line: now,
        }
    }

    /// `done` events of the load are written.
    pub fn set(&mut self, done: u64) {
        if let Some(pb) = &self.bar {
            pb.set_position(done);
        }
        if self.lines && self.last_line.elapsed().as_secs_f64() >= 1.0 {
            self.last_line = std::time::Instant::now();
            eprintln!("{}", self.line("ingest", done));
        }
    }

    /// `ingest: K/N events, R events/s`.
    fn line(&self, what: &str, done: u64) -> String {
        let s = self.start.elapsed().as_secs_f64().max(1e-9);
        format!(
            "{what}: {done}/{} events in {s:.2} s, {:.0} events/s",
            self.total,
            done as f64 / s
        )
    }

    /// Clears the bar; with `--progress`, prints the whole load's rate (also on a terminal).
    pub fn finish(self, done: u64, forced: bool) {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
        if forced {
            eprintln!("{}", self.line("ingested", done));
        }
    }
}
