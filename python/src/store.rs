//! `tgms.Store`: a store directory opened for writing (one writer per store) or reading
//! (any number, beside a live writer in another process), with the operations of the CLI —
//! write, ingest, call, run_plan, verify, ask, stats, history — each a thin call into the `tgms`
//! library, with the GIL released while Rust works.

use crate::errors;
use crate::result::PyResultEnv;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::RwLock;
use tgms::engine::format::mmap::IoMode;
use tgms::engine::{Options, Store};
use tgms::verifier::exec::ResultStore;

/// A tgms store (a directory).
///
/// >>> import tgms
/// >>> st = tgms.Store.create("/tmp/demo-store")
/// >>> st.write([{"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10}])
/// {'batch': 0, 'tt': ..., 'ops': 1}
/// >>> r = st.call("entity_history", uid="a", include_edges=True)
/// >>> import pyarrow as pa; pa.table(r).num_rows
#[pyclass(module = "tgms", name = "Store", frozen)]
pub struct PyStore {
    path: PathBuf,
    read_only: bool,
    /// How segment files are read and whether every segment is decoded at open (the
    /// `io` and `eager` keywords): `refresh()` opens the store the same way.
    io: IoMode,
    eager: bool,
    /// `None` once closed.
    inner: RwLock<Option<Store>>,
}

/// The `io` keyword: `"mmap"` or `"pread"`; anything else raises InvalidArgumentError
/// naming the choices.
fn io_mode(py: Python<'_>, io: &str) -> PyResult<IoMode> {
    match io {
        "mmap" => Ok(IoMode::Mmap),
        "pread" => Ok(IoMode::Pread),
        other => Err(errors::plain(
            py,
            "E_INVALID_ARG",
            format!(
                "io={other:?} is not a read mode: give io=\"mmap\" (the default) or io=\"pread\""
            ),
        )),
    }
}

/// The engine's open options of a handle.
fn options(io: IoMode, eager: bool, read_only: bool) -> Options {
    Options {
        io: Some(io),
        eager,
        read_only,
        ..Options::default()
    }
}

fn closed(py: Python<'_>) -> PyErr {
    errors::plain(
        py,
        "E_STATE",
        "the store is closed; open it again with tgms.Store.open(path)",
    )
}

impl PyStore {
    /// Runs `f` on the open store with the GIL released.
    fn read<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Store) -> T + Send) -> PyResult<T> {
        py.detach(|| {
            let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
            g.as_ref().map(f)
        })
        .ok_or_else(|| closed(py))
    }

    /// Runs `f` on the open store for writing, with the GIL released.
    fn write_with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Store) -> T + Send,
    ) -> PyResult<T> {
        if self.read_only {
            return Err(errors::plain(
                py,
                "E_STATE",
                format!(
                    "{} is open read-only; open it with tgms.Store.open(path) to write",
                    self.path.display()
                ),
            ));
        }
        py.detach(|| {
            let mut g = self.inner.write().unwrap_or_else(|p| p.into_inner());
            g.as_mut().map(f)
        })
        .ok_or_else(|| closed(py))
    }
}

#[pymethods]
impl PyStore {
    /// Creates a new, empty store in `path` (a missing or empty directory) and opens it for
    /// writing. `io` and `eager` as for `open`.
    #[staticmethod]
    #[pyo3(signature = (path, *, io="mmap", eager=false))]
    fn create(py: Python<'_>, path: PathBuf, io: &str, eager: bool) -> PyResult<Self> {
        let io = io_mode(py, io)?;
        let st = py
            .detach(|| Store::create_with(&path, options(io, eager, false)))
            .map_err(|e| errors::store(py, &e))?;
        Ok(PyStore {
            path,
            read_only: false,
            io,
            eager,
            inner: RwLock::new(Some(st)),
        })
    }

    /// Opens the store in `path`: for writing (the one writer: a lock file), or with
    /// `read_only=True` for reading (any number of readers, also beside a writer in
    /// another process; call `refresh()` to see what it committed since). `io="pread"`
    /// reads segment files into memory instead of mapping them (file systems without
    /// mmap); `eager=True` decodes every segment at open instead of on first use (the
    /// CLI's `TGMS_IO` and `TGMS_OPEN`).
    #[staticmethod]
    #[pyo3(signature = (path, read_only=false, *, io="mmap", eager=false))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        io: &str,
        eager: bool,
    ) -> PyResult<Self> {
        let io = io_mode(py, io)?;
        let st = py
            .detach(|| Store::open_with(&path, options(io, eager, read_only)))
            .map_err(|e| errors::store(py, &e))?;
        Ok(PyStore {
            path,
            read_only,
            io,
            eager,
            inner: RwLock::new(Some(st)),
        })
    }

    /// The store directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether this handle is read-only.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// Re-reads the store from disk (a read-only handle then sees the batches a writer
    /// committed since it was opened). Results already returned are unchanged.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let (path, ro) = (self.path.clone(), self.read_only);
        let opts = options(self.io, self.eager, true);
        let fresh = py.detach(|| {
            if ro {
                Store::open_with(&path, opts)
            } else {
                Err(tgms::engine::Error::state(
                    "refresh() is for read-only handles: the writer already sees every batch it committed",
                ))
            }
        });
        let fresh = fresh.map_err(|e| errors::store(py, &e))?;
        let mut g = self.inner.write().unwrap_or_else(|p| p.into_inner());
        *g = Some(fresh);
        Ok(())
    }

    /// Seals what is in memory and releases the writer lock. Further calls raise StateError.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self.inner.write().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(st) = taken {
            py.detach(|| st.close())
                .map_err(|e| errors::store(py, &e))?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "tgms.Store({:?}, read_only={})",
            self.path.display().to_string(),
            if self.read_only { "True" } else { "False" }
        )
    }

    /// Writes one atomic batch of ops (dicts as in a `tgms write` batch file, or that file's
    /// JSON text); returns the acknowledgement `{"batch", "tt", "ops"}` (`"duplicate": True`
    /// when `batch_key` was already committed).
    ///
    /// >>> st.write([{"op": "assert_node", "uid": "alice", "label": "Person", "vt_s": "2004-07-22"}])
    #[pyo3(signature = (ops, batch_key=None))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        ops: &Bound<'py, PyAny>,
        batch_key: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = crate::json::from_py(ops, true)?;
        let Value::Array(items) = &v else {
            return Err(errors::plain(
                py,
                "E_SCHEMA",
                "ops must be a list of op objects (dicts)",
            ));
        };
        if let Some(i) = items.iter().position(|x| !x.is_object()) {
            return Err(errors::from_payload(
                py,
                &json!({"error": "E_SCHEMA",
                    "message": format!("op {i} is not a JSON object"), "details": {"path": [i]}}),
            ));
        }
        let parsed =
            tgms::engine::op_input::parse_input_batch(&v).map_err(|e| errors::store(py, &e))?;
        let n_ops = parsed.len();
        let committed = self.write_with(py, |st| st.write_keyed(parsed, batch_key))?;
        let c = committed.map_err(|e| errors::store(py, &e))?;
        let (seq, duplicate) = (c.seq, c.duplicate);
        let tt = c.into_result().map_err(|e| errors::store(py, &e))?;
        let mut ack = json!({"batch": seq, "tt": tt, "ops": n_ops});
        if duplicate {
            ack["duplicate"] = json!(true);
        }
        crate::json::to_py(py, &ack)
    }

    /// Calls operator `op` (see `tgms tools`) with `args` and/or keyword arguments (times as
    /// µs integers or ISO-8601 strings; `as_of_tt=` for a past belief state). Returns a
    /// `tgms.Result`; a refused call raises the exception of its error code.
    ///
    /// >>> r = st.call("aggregate_events", window=["2004-01-01", "2005-01-01"], bucket="30d")
    /// >>> pyarrow.table(r)            # or polars.DataFrame(r)
    /// >>> r.meta["result_digest"], r.complete
    #[pyo3(signature = (op, args=None, **kwargs))]
    fn call(
        &self,
        py: Python<'_>,
        op: &str,
        args: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyResultEnv> {
        let mut a = match args {
            Some(x) => crate::json::from_py(x, true)?,
            None => json!({}),
        };
        if let Some(kw) = kwargs {
            let Value::Object(extra) = crate::json::from_py(kw.as_any(), false)? else {
                unreachable!("a dict is a JSON object");
            };
            match &mut a {
                Value::Object(m) => m.extend(extra),
                _ => {
                    return Err(errors::plain(
                        py,
                        "E_SCHEMA",
                        "args must be a dict (an object of operator arguments)",
                    ))
                }
            }
        }
        let opts = tgms::operators::CallOptions::default();
        let out = self.read(py, |st| {
            tgms::operators::call_operator(st.snapshot(), op, &a, &opts)
                .map_err(|e| e.payload())
                .and_then(|env| {
                    PyResultEnv::build(op, env).map_err(
                        |e| json!({"error": "E_INTERNAL", "message": e.to_string(), "details": {}}),
                    )
                })
        })?;
        out.map_err(|p| errors::from_payload(py, &p))
    }

    /// Benchmark hook (python/bench/bench.py): the mean µs of `n` calls of `op` with
    /// `args_json` done entirely in Rust — the operator call and the Arrow conversion of its
    /// main list, what `call` does besides crossing into Python. Not part of the API.
    fn _bench_rust_call_us(
        &self,
        py: Python<'_>,
        op: &str,
        args_json: &str,
        n: u32,
    ) -> PyResult<f64> {
        let a = tgms::engine::canon::parse(args_json)
            .map_err(|e| errors::plain(py, "E_SCHEMA", e.to_string()))?;
        let opts = tgms::operators::CallOptions::default();
        let out = self.read(py, |st| {
            let t = std::time::Instant::now();
            for _ in 0..n.max(1) {
                let env = tgms::operators::call_operator(st.snapshot(), op, &a, &opts)
                    .map_err(|e| e.payload())?;
                PyResultEnv::build(op, env)
                    .map_err(|e| json!({"error": "E_INTERNAL", "message": e.to_string()}))?;
            }
            Ok::<f64, Value>(t.elapsed().as_secs_f64() * 1e6 / f64::from(n.max(1)))
        })?;
        out.map_err(|p| errors::from_payload(py, &p))
    }

    /// Validates `plan` (dict or JSON text; the static verifier, with this store's
    /// statistics) and runs it on one snapshot. The envelopes and the trace are kept in the
    /// store directory, as `tgms plan run` keeps them, so `verify(answer, run.trace_id)` and
    /// `tgms verify` / `tgms view` find them. Raises PlanInvalidError with the report.
    fn run_plan(&self, py: Python<'_>, plan: &Bound<'_, PyAny>) -> PyResult<PyPlanRun> {
        let p = crate::json::from_py(plan, true)?;
        let path = self.path.clone();
        let ran = self.read(py, |st| {
            let rs = tgms::store_json::plan_results(&path);
            tgms::embed::run_plan_with(st.snapshot(), &p, &rs)
        })?;
        let run = ran.map_err(|e| match e {
            tgms::EmbedError::PlanInvalid { report } => errors::from_payload(
                py,
                &json!({"error": "E_PLAN_INVALID",
                    "message": "the plan did not pass the static verifier (details: the report)",
                    "details": report}),
            ),
            tgms::EmbedError::Store(e) => errors::store(py, &e),
            tgms::EmbedError::Op(e) => errors::from_payload(py, &e.payload()),
            other => errors::plain(py, "E_INTERNAL", other.to_string()),
        })?;
        let mut steps = Vec::new();
        for (k, env) in run.envelopes {
            let op = env.op().to_string();
            let r = PyResultEnv::build(&op, env.into_json())
                .map_err(|e| errors::plain(py, "E_INTERNAL", e.to_string()))?;
            steps.push((k, Py::new(py, r)?));
        }
        Ok(PyPlanRun {
            trace: run.trace,
            steps,
        })
    }

    /// Asks `question` in plain language through an OpenAI-compatible model server, as
    /// `tgms ask` does (docs/ask.md): the model writes a plan, the static verifier admits it
    /// or returns a repair, the executor runs it, and every claim of the answer is checked
    /// against the trace; what is not supported is withheld. The model comes from `model=` /
    /// `base_url=` or the `TGMS_LLM_*` environment variables (the CLI's). Returns a dict:
    /// `answer` (the gated answer object: the `text` and `claims` a user may be shown),
    /// `verification` (the claim verifier's verdict on each of them), `ok`, `ask_id`,
    /// `record` (the whole ask record: plan emissions, repairs, trace) and `record_path`
    /// (where a writable store kept it; `None` for a read-only handle). The GIL is released
    /// while the model and the plan run.
    ///
    /// >>> out = st.ask("How many accounts did n1 reach in May 2004?",
    /// ...              model="qwen2.5-7b", base_url="http://127.0.0.1:8000/v1")
    /// >>> out["answer"]["text"], [c["verdict"] for c in out["verification"]["claims"]]
    #[pyo3(signature = (question, *, model=None, base_url=None, guided=None, extra_body=None,
        timeout_s=None, retries=None, cache_dir=None, reporter="model", as_of_tt=None,
        max_repairs=3, uids=None, grounding=true, memory=true))]
    #[allow(clippy::too_many_arguments)]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        question: &str,
        model: Option<String>,
        base_url: Option<String>,
        guided: Option<String>,
        extra_body: Option<&Bound<'py, PyAny>>,
        timeout_s: Option<u64>,
        retries: Option<u32>,
        cache_dir: Option<PathBuf>,
        reporter: &str,
        as_of_tt: Option<&Bound<'py, PyAny>>,
        max_repairs: usize,
        uids: Option<Vec<String>>,
        grounding: bool,
        memory: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        use tgms::ask::{AskConfig, InputUids, LlmFlags, ReporterMode};
        let extra_body = match extra_body {
            None => None,
            Some(x) => match x.extract::<String>() {
                Ok(s) => Some(s),
                Err(_) => Some(crate::json::from_py(x, true)?.to_string()),
            },
        };
        let flags = LlmFlags {
            model,
            base_url,
            guided,
            extra_body,
            timeout_s,
            retries,
            cache_dir,
        };
        let mut cfg = AskConfig::resolve(&flags, |k| std::env::var(k).ok())
            .map_err(|e| errors::from_payload(py, &e.payload()))?;
        cfg.max_repairs = max_repairs;
        cfg.use_memory = memory;
        cfg.save_record = !self.read_only;
        cfg.reporter = match reporter {
            "model" => ReporterMode::Model,
            "mechanical" => ReporterMode::Mechanical,
            other => {
                return Err(errors::from_payload(
                    py,
                    &json!({"error": "E_INVALID_ARG",
                        "message": format!("reporter '{other}' is not one of model, mechanical"),
                        "details": {"fix": "pass reporter=\"model\" (the default) or reporter=\"mechanical\""}}),
                ))
            }
        };
        cfg.as_of_tt = match as_of_tt {
            None => None,
            Some(x) => Some(match x.extract::<i64>() {
                Ok(us) => us,
                Err(_) => {
                    let s: String = x.extract().map_err(|_| {
                        errors::plain(
                            py,
                            "E_INVALID_ARG",
                            "as_of_tt must be µs (int) or an ISO-8601 string",
                        )
                    })?;
                    tgms::cli_time::instant_arg(&s)
                        .map_err(|m| errors::plain(py, "E_INVALID_ARG", format!("as_of_tt: {m}")))?
                }
            }),
        };
        cfg.input_uids = match (grounding, uids) {
            (false, _) => InputUids::NoGrounding,
            (true, Some(u)) => InputUids::Given(u.into_iter().collect()),
            (true, None) => InputUids::FromQuestion,
        };
        let q = question.to_string();
        let out = self.read(py, |st| {
            tgms::ask::ask(st, &q, &cfg).map(|o| {
                json!({"ask_id": o.ask_id, "ok": o.ok, "answer": o.answer(),
                    "verification": o.record["final_verification"],
                    "record": o.record,
                    "record_path": o.record_path.map(|p| p.display().to_string())})
            })
        })?;
        let v = out.map_err(|e| errors::from_payload(py, &e.payload()))?;
        crate::json::to_py(py, &v)
    }

    /// The claim verifier's report on `answer` (an answer object: dict or JSON text) against
    /// the trace `trace` (a trace id from `run_plan` or `tgms plan run`, or a trace dict),
    /// as `tgms verify` prints it, with `gated_answer_object` and `gated_metrics`.
    fn verify<'py>(
        &self,
        py: Python<'py>,
        answer: &Bound<'py, PyAny>,
        trace: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = crate::json::from_py(answer, true)?;
        let rs = ResultStore::in_dir(&self.path);
        let t = match trace.extract::<String>() {
            Ok(id) => rs
                .trace(&id)
                .ok_or_else(|| errors::from_payload(py, &tgms::store_json::unknown_trace(&id)))?,
            Err(_) => crate::json::from_py(trace, false)?,
        };
        let report = self.read(py, |st| tgms::store_json::verify_json(st, &rs, &t, &a))?;
        crate::json::to_py(py, &report)
    }

    /// The store's statistics, as `tgms stats --json` prints them.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = self.read(py, tgms::store_json::stats_json)?;
        let v = v.map_err(|e| errors::store(py, &e))?;
        crate::json::to_py(py, &v)
    }

    /// Every stored version of node `uid` (believed and closed, corrections included), and
    /// with `edges=True` those of the edges touching it, as `tgms history --format json`
    /// prints them. Raises NotFoundError for an unknown uid.
    #[pyo3(signature = (uid, edges=false))]
    fn history<'py>(&self, py: Python<'py>, uid: &str, edges: bool) -> PyResult<Bound<'py, PyAny>> {
        let v = self.read(py, |st| tgms::store_json::history_json(st, uid, edges))?;
        let v = v.map_err(|p| errors::from_payload(py, &p))?;
        crate::json::to_py(py, &v)
    }

    /// Loads events into the store, as `tgms ingest` does (validation pass, keyed chunks,
    /// resume, repeat detection); returns the summary dict.
    ///
    /// `source` is a file path (format from `format=` or its extension: .csv, .parquet,
    /// .arrow / .arrows, .jsonl, .txt for SNAP) or any object with `__arrow_c_stream__` (a
    /// pyarrow Table or RecordBatchReader, a polars or pandas DataFrame), streamed batch by
    /// batch into a temporary Arrow IPC file and read from there (bounded memory).
    /// Named-column inputs take `src=`, `dst=`, `time=` (column names), and optionally
    /// `end=`, `time_unit=` ("s", "ms", "us"), `rel_type=` (one for all) or `rel_type_col=`,
    /// `disc=`, `props=` (list of columns), `props_json=`, `only=` ({col: value}).
    ///
    /// >>> st.ingest(pa.table({"a": ["x"], "b": ["y"], "t": [10]}), src="a", dst="b", time="t", rel_type="MSG")
    #[pyo3(signature = (source, *, src=None, dst=None, time=None, end=None, time_unit="us",
        rel_type=None, rel_type_col=None, disc=None, props=None, props_json=None, only=None,
        format=None, uid_prefix="", on_error="fail", batch_key=None, again=false))]
    #[allow(clippy::too_many_arguments)]
    fn ingest<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        src: Option<String>,
        dst: Option<String>,
        time: Option<String>,
        end: Option<String>,
        time_unit: &str,
        rel_type: Option<String>,
        rel_type_col: Option<String>,
        disc: Option<String>,
        props: Option<Vec<String>>,
        props_json: Option<String>,
        only: Option<std::collections::BTreeMap<String, String>>,
        format: Option<String>,
        uid_prefix: &str,
        on_error: &str,
        batch_key: Option<String>,
        again: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let usage = |m: String| errors::plain(py, "E_INVALID_ARG", m);
        let flags = tgms::ingest_cli::IngestFlags {
            on_error: match on_error {
                "fail" => tgms::ingest_cli::OnErrorArg::Fail,
                "skip" => tgms::ingest_cli::OnErrorArg::Skip,
                o => {
                    return Err(usage(format!(
                        "on_error takes \"fail\" or \"skip\", not {o:?}"
                    )))
                }
            },
            dry_run: false,
            progress: false,
            again,
            uid_prefix: uid_prefix.to_string(),
            src,
            dst,
            time_col: time,
            end,
            time_unit: match time_unit {
                "s" => tgms::ingest_cli::TimeUnitArg::S,
                "ms" => tgms::ingest_cli::TimeUnitArg::Ms,
                "us" => tgms::ingest_cli::TimeUnitArg::Us,
                o => {
                    return Err(usage(format!(
                        "time_unit takes \"s\", \"ms\" or \"us\", not {o:?}"
                    )))
                }
            },
            rel_type_col,
            disc,
            props: props.unwrap_or_default(),
            props_json,
            only: only
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        };
        // A table is spooled to an Arrow IPC stream file first: the ingest reads its input
        // twice (validation, then the write pass) and derives its batch keys from the bytes.
        let is_table = source.hasattr("__arrow_c_stream__")?;
        let spool = if is_table {
            Some(crate::table_input::spool(py, source)?)
        } else {
            None
        };
        let (name, file, fmt) = match &spool {
            Some(sp) => (
                PathBuf::from("<arrow table>"),
                sp.path().to_path_buf(),
                tgms::load::Format::ArrowIpc,
            ),
            None => {
                let p: PathBuf = source.extract().map_err(|_| {
                    usage("source must be a file path or an object with __arrow_c_stream__ (a pyarrow Table, a polars or pandas DataFrame)".into())
                })?;
                let fmt = match format.as_deref() {
                    Some(f) => tgms::load::Format::from_name(f).ok_or_else(|| {
                        usage(format!("unknown format {f:?}: snap, snap-csv-rated, jsonl-events, csv, parquet, arrow-ipc"))
                    })?,
                    None => format_of(&p).ok_or_else(|| {
                        usage(format!("cannot tell the format of {} from its extension; give format=\"csv\" (or parquet, arrow-ipc, jsonl-events, snap)", p.display()))
                    })?,
                };
                (p.clone(), p, fmt)
            }
        };
        let map = flags
            .mapping(rel_type, fmt.has_named_columns())
            .map_err(usage)?;
        let req = tgms::ingest::Request {
            name: name.clone(),
            input: tgms::ingest::Input::File(file),
            format: fmt,
            map,
            on_error: flags.on_error(),
            keys: match batch_key {
                Some(k) => tgms::ingest::Keys::Given(k),
                None => tgms::ingest::Keys::Derived,
            },
            again,
        };
        // Into a fresh store the load is built in bulk and leaves one compacted image (as
        // `tgms ingest` does); into any other store it is written batch by batch and not
        // compacted.
        let out = self.write_with(py, |st| {
            let tally = tgms::ingest::validate(&req)?;
            let bound = if st.is_fresh() {
                tgms::engine::store::LOAD_DECODED_ROWS
            } else {
                0
            };
            let mut built = false;
            let w = st.bulk_load(bound, |ld| {
                built = ld.is_bulk_build();
                tgms::ingest::write(ld, &req, tally, &mut |_| {})
            })?;
            w.map(|s| (s, built))
        })?;
        drop(spool);
        let (summary, built) =
            out.map_err(|f| errors::from_payload(py, &tgms::ingest::failure_payload(&f, &name)))?;
        let mut v = summary.to_json();
        v["compacted"] = json!(built && summary.committed > 0);
        v["dry_run"] = json!(false);
        crate::json::to_py(py, &v)
    }
}

/// The format of a file from its extension.
fn format_of(p: &std::path::Path) -> Option<tgms::load::Format> {
    use tgms::load::Format as F;
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "csv" => F::Csv,
        "parquet" => F::Parquet,
        "arrow" | "arrows" | "ipc" => F::ArrowIpc,
        "jsonl" | "ndjson" => F::JsonlEvents,
        "txt" => F::Snap,
        _ => return None,
    })
}

/// The outcome of `Store.run_plan`.
#[pyclass(module = "tgms", name = "PlanRun", frozen)]
pub struct PyPlanRun {
    trace: Value,
    steps: Vec<(String, Py<PyResultEnv>)>,
}

#[pymethods]
impl PyPlanRun {
    /// Whether every step succeeded.
    #[getter]
    fn ok(&self) -> bool {
        self.trace["ok"] == Value::Bool(true)
    }

    /// The plan's answer value.
    #[getter]
    fn answer<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_py(py, &self.trace["answer"])
    }

    /// Whether the answer was computed from complete results.
    #[getter]
    fn answer_complete(&self) -> bool {
        self.trace["answer_complete"] == Value::Bool(true)
    }

    /// The content address of the trace (for `Store.verify` and `tgms view`).
    #[getter]
    fn trace_id(&self) -> &str {
        self.trace["trace_id"].as_str().unwrap_or_default()
    }

    /// The trace as a dict (as `tgms plan run --trace-out` writes it).
    #[getter]
    fn trace<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_py(py, &self.trace)
    }

    /// The result of every step that ran, by step id.
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.steps {
            d.set_item(k, v.clone_ref(py))?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "tgms.PlanRun(ok={}, trace_id={:?}, answer={})",
            if self.ok() { "True" } else { "False" },
            self.trace_id(),
            tgms::engine::canon::to_string(&self.trace["answer"])
        )
    }
}
