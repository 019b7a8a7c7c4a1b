//! `tgms serve` against the official MCP Python SDK client (PyPI `mcp`, pinned in
//! `tests/mcp/requirements.txt` and installed here into a virtual environment under
//! `target/`): every protocol mode over stdio and streamable HTTP, every operator compared
//! with `tgms call`, plans, resources, bad arguments, 8 concurrent HTTP clients, read-only
//! serving (no file changed; served by an unprivileged user beside a live writer; a
//! write-protected store), and a fuzzer of raw JSON-RPC frames that must never crash it.
//!
//! The Python side is `tests/mcp/suite.py`. Without network access to the package index
//! the SDK cannot be installed: those tests then skip with a message saying so.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tgms_testkit::Rng;

const TGMS: &str = env!("CARGO_BIN_EXE_tgms");
const SCALE: u64 = 3000;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The virtual environment's python with the MCP SDK installed, or `None` (with a message)
/// when the package index cannot be reached.
fn python() -> Option<&'static Path> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        let req = manifest_dir().join("tests/mcp/requirements.txt");
        let req_text = std::fs::read_to_string(&req).expect("tests/mcp/requirements.txt");
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
        let py = venv.join("bin/python");
        let marker = venv.join("installed-requirements.txt");
        if std::fs::read_to_string(&marker).ok().as_deref() == Some(req_text.as_str()) {
            return Some(py);
        }
        let _ = std::fs::remove_dir_all(&venv);
        let st = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 is needed for the MCP client tests");
        assert!(st.success(), "python3 -m venv failed");
        let out = Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&req)
            .output()
            .expect("pip runs");
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).to_string();
            let offline = [
                "NewConnectionError",
                "Max retries exceeded",
                "Temporary failure in name resolution",
                "Network is unreachable",
                "No matching distribution found",
                "Could not fetch URL",
            ]
            .iter()
            .any(|k| err.contains(k));
            assert!(offline, "pip install -r {} failed:\n{err}", req.display());
            eprintln!(
                "SKIP: the MCP Python SDK cannot be installed (package index unreachable):\n{err}"
            );
            return None;
        }
        std::fs::write(&marker, req_text).expect("marker");
        Some(py)
    })
    .as_deref()
}

/// A generated store (the synthetic log with corrections and retractions) and the calls
/// file: the benchmark registry's query per operator plus the three it lacks.
struct Fixture {
    _dir: tempfile::TempDir,
    store: PathBuf,
    calls: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = Command::new(TGMS)
        .args(["bench", "generate", "--scale", &SCALE.to_string()])
        .arg(&store)
        .args(["--clock", "fixed"])
        .output()
        .unwrap();
    assert!(out.status.success(), "bench generate failed");
    let gen: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tt1 = gen["tt_epoch1"].as_i64().unwrap();
    let p = tgms_bench::registry::Params::synthetic(SCALE, tt1);
    let mut calls: Vec<Value> = tgms_bench::registry::queries(&p)
        .into_iter()
        .filter(|q| q.id != "motif.all36")
        .map(|q| json!({"id": q.id, "op": q.op, "args": q.args}))
        .collect();
    let w = json!({"t_a": 0, "t_b": SCALE});
    calls.push(json!({"id": "compute.sum", "op": "compute",
        "args": {"fn": "sum", "input": [{"x": 1}, {"x": 2.5}], "field": "x"}}));
    calls.push(json!({"id": "vh.node", "op": "version_history", "args": {"uid": "n1"}}));
    calls.push(
        json!({"id": "motif.instances", "op": "find_temporal_motif_instances",
        "args": {"motif": "M_triangle_cyclic", "delta": 60, "window": w, "limit": 5}}),
    );
    calls.push(json!({"id": "pattern.absent", "op": "match_pattern",
        "args": {"edges": [{"src": "A", "dst": "B"}, {"src": "B", "dst": "C"}],
            "absent": [{"src": "A", "dst": "C"}], "time_order": "ordered",
            "window": w, "limit": 5}}));
    calls.push(json!({"id": "chain.longest", "op": "longest_chain",
        "args": {"window": w, "max_wait": 60, "limit": 5}}));
    let calls_path = dir.path().join("calls.json");
    std::fs::write(&calls_path, serde_json::to_string(&calls).unwrap()).unwrap();
    Fixture {
        _dir: dir,
        store,
        calls: calls_path,
    }
}

/// Every file and directory under `dir` with its bytes and modification time.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            let bytes = if m.is_dir() {
                stack.push(p.clone());
                Vec::new()
            } else {
                std::fs::read(&p).unwrap()
            };
            out.insert(p, (bytes, m.modified().unwrap()));
        }
    }
    out
}

/// Runs `suite.py WHAT ARGS`; panics with its output unless every check passed.
fn suite(py: &Path, what: &str, args: &[&str]) -> String {
    let out = Command::new(py)
        .arg(manifest_dir().join("tests/mcp/suite.py"))
        .arg(what)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        out.status.success(),
        "suite.py {what} {args:?} failed:\n{text}"
    );
    text
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The suite's arguments for fixture `f` served by `bin`, followed by `rest`.
fn with_base<'a>(bin: &'a str, f: &'a Fixture, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "--tgms",
        bin,
        "--store",
        s(&f.store),
        "--calls",
        s(&f.calls),
    ];
    v.extend_from_slice(rest);
    v
}

#[test]
fn stdio_read_only_conformance_in_every_protocol_mode_changes_no_file() {
    let Some(py) = python() else { return };
    let f = fixture();
    let before = tree(&f.store);
    for mode in ["legacy", "auto", "2026-07-28"] {
        let out = suite(
            py,
            "conformance",
            &with_base(TGMS, &f, &["--mode", mode, "--readonly"]),
        );
        eprintln!("stdio {mode}: {}", out.lines().last().unwrap_or(""));
    }
    let after = tree(&f.store);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "a read-only session created or removed files"
    );
    for (p, v) in &before {
        assert!(
            after[p] == *v,
            "{} changed under a read-only server",
            p.display()
        );
    }
}

#[test]
fn writable_server_keeps_results_in_the_store() {
    let Some(py) = python() else { return };
    let f = fixture();
    suite(py, "conformance", &with_base(TGMS, &f, &["--mode", "auto"]));
    // The plan run's trace landed in the store's result store.
    let traces = std::fs::read_dir(f.store.join("traces")).map_or(0, |d| d.count());
    assert!(traces >= 1, "a writable server stores traces in the store");
}

/// A `tgms serve --http 127.0.0.1:0` process and the URL it printed.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(store: &Path, extra: &[&str]) -> HttpServer {
        let mut child = Command::new(TGMS)
            .args(["serve", "--store", s(store), "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            line.clear();
            if err.read_line(&mut line).unwrap() == 0 || Instant::now() > deadline {
                panic!("tgms serve --http printed no address");
            }
            if let Some(i) = line.find("http://") {
                break line[i..].trim().to_string();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = err.read_to_string(&mut sink);
        });
        HttpServer { child, url }
    }

    /// SIGTERM, then the exit status (the server shuts down gracefully).
    fn stop(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("tgms serve did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn http_conformance_and_eight_concurrent_clients() {
    let Some(py) = python() else { return };
    let f = fixture();
    let server = HttpServer::start(&f.store, &["--readonly"]);
    for mode in ["legacy", "auto", "2026-07-28"] {
        let out = suite(
            py,
            "conformance",
            &with_base(TGMS, &f, &["--mode", mode, "--url", &server.url]),
        );
        eprintln!("http {mode}: {}", out.lines().last().unwrap_or(""));
    }
    let out = suite(
        py,
        "concurrent",
        &with_base(
            TGMS,
            &f,
            &["--url", &server.url, "--clients", "8", "--rounds", "2"],
        ),
    );
    eprintln!("http concurrent: {out}");
    assert!(server.stop().success(), "graceful shutdown exits 0");
}

/// `setpriv` arguments that run a command as `nobody`, when this test runs as root (as CI
/// does) and `setpriv` exists: root ignores permission bits, so only another user proves
/// that the server writes nothing.
fn as_nobody() -> Option<String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    (root && setpriv).then(|| "setpriv --reuid=65534 --regid=65534 --clear-groups".to_string())
}

/// Makes every directory above and in `store` searchable, and the store readable, by others.
fn readable_by_others(store: &Path) {
    let mut p = store.to_path_buf();
    while p.pop() {
        if p.as_os_str().is_empty() || p == Path::new("/") {
            break;
        }
        let _ = Command::new("chmod").arg("o+x").arg(&p).status();
    }
    assert!(Command::new("chmod")
        .args(["-R", "o+rX"])
        .arg(store)
        .status()
        .unwrap()
        .success());
}

/// A copy of the tgms binary beside `store`, runnable by others (the checkout itself may
/// sit in a directory they cannot enter).
fn binary_for_others(store: &Path) -> PathBuf {
    let bin = store.parent().unwrap().join("tgms-for-others");
    std::fs::copy(TGMS, &bin).unwrap();
    assert!(Command::new("chmod")
        .arg("755")
        .arg(&bin)
        .status()
        .unwrap()
        .success());
    bin
}

#[test]
fn read_only_server_beside_a_live_writer_and_on_a_write_protected_store() {
    let Some(py) = python() else { return };
    let f = fixture();
    let prefix = as_nobody();
    let bin = if prefix.is_some() {
        let bin = binary_for_others(&f.store);
        readable_by_others(&f.store);
        bin
    } else {
        eprintln!("note: not root (or no setpriv): the server runs as this user");
        PathBuf::from(TGMS)
    };
    let mut args = vec![
        "--tgms",
        s(&bin),
        "--store",
        s(&f.store),
        "--readonly",
        "--mode",
    ];
    if let Some(p) = &prefix {
        args.extend(["auto", "--server-prefix", p.as_str()]);
    } else {
        args.push("auto");
    }
    // The writer (this user) commits during the session; the server, unable to write a
    // byte of the store when it runs as nobody, serves the new state on its next call.
    suite(py, "freshness", &args);
    // A write-protected store (chmod -R a-w) is served: every tool and resource.
    assert!(Command::new("chmod")
        .args(["-R", "a-w"])
        .arg(&f.store)
        .status()
        .unwrap()
        .success());
    let before = tree(&f.store);
    let mut args = with_base(s(&bin), &f, &["--readonly", "--mode", "legacy"]);
    if let Some(p) = &prefix {
        args.extend(["--server-prefix", p.as_str()]);
    }
    suite(py, "conformance", &args);
    assert!(tree(&f.store) == before, "a write-protected store changed");
    let _ = Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&f.store)
        .status();
}

// ---- raw JSON-RPC over stdio: the fuzzer (no Python needed) ----

/// A `tgms serve` child spoken to in raw newline-delimited JSON-RPC. A thread drains its
/// stdout into a channel, so the server never blocks on a full pipe while frames are sent.
struct Raw {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn start(store: &Path) -> Raw {
        let mut child = Command::new(TGMS)
            .args(["serve", "--store", s(store), "--readonly"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out: BufReader<ChildStdout> = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || loop {
            let mut line = String::new();
            match out.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        });
        Raw { child, lines }
    }
    fn send(&mut self, line: &[u8]) {
        let i = self.child.stdin.as_mut().unwrap();
        i.write_all(line).unwrap();
        i.write_all(b"\n").unwrap();
        i.flush().unwrap();
    }
    /// Reads lines until the response with `id`; panics when the server closes stdout or
    /// takes more than 30 s.
    fn response(&mut self, id: i64) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("no response with id {id} ({e}): crashed or hung?"));
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v["id"] == json!(id) {
                    return v;
                }
            }
        }
    }
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(serde_json::to_string(&msg).unwrap().as_bytes());
        self.response(id)
    }
}

/// A random JSON value of bounded depth.
fn junk(r: &mut Rng, depth: u32) -> Value {
    match r.below(if depth == 0 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(r.below(2) == 0),
        2 => json!(r.next_u64() as i64),
        3 => json!(-1.5e300),
        4 => json!(["n1", "", "tgms://", "\u{0000}", "💥"][r.below(5) as usize]),
        5 => Value::Array((0..r.below(4)).map(|_| junk(r, depth - 1)).collect()),
        _ => {
            let keys = [
                "uid", "args", "window", "plan", "t_a", "steps", "limit", "x",
            ];
            Value::Object(
                (0..r.below(4))
                    .map(|_| (keys[r.below(8) as usize].to_string(), junk(r, depth - 1)))
                    .collect(),
            )
        }
    }
}

#[test]
fn fuzzed_frames_never_crash_the_server() {
    let f = fixture();
    let mut raw = Raw::start(&f.store);
    let init = raw.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "tgms", "{init}");
    raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let tools: Vec<String> = raw.request(1, "tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let mut r = Rng::new(0x9E37_79B9_7F4A_7C15);
    let methods = [
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "nope",
        "",
    ];
    let mut id = 10;
    for round in 0..1500 {
        let frame: Vec<u8> = match r.below(6) {
            // Bytes that are not JSON, or JSON cut short.
            0 => (0..r.below(64))
                .map(|_| r.below(256) as u8)
                .filter(|b| *b != b'\n')
                .collect(),
            1 => br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"#.to_vec(),
            // Well-formed JSON-RPC with wrong types in every position.
            2 => serde_json::to_vec(&json!({"jsonrpc": junk(&mut r, 1), "id": junk(&mut r, 1),
                "method": junk(&mut r, 1), "params": junk(&mut r, 2)}))
            .unwrap(),
            // Calls of real tools with random arguments.
            3 | 4 => {
                id += 1;
                let name = &tools[r.below(tools.len() as u64) as usize];
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": methods[r.below(6) as usize],
                    "params": {"name": name, "arguments": junk(&mut r, 3), "uri": junk(&mut r, 0)}}))
                .unwrap()
            }
            // A huge argument.
            _ => serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "entity_history", "arguments": {"uid": "x".repeat(1 << 20)}}}))
            .unwrap(),
        };
        if std::env::var_os("TGMS_FUZZ_LOG").is_some() {
            eprintln!(
                "frame {round}: {}",
                String::from_utf8_lossy(&frame[..frame.len().min(300)])
            );
        }
        raw.send(&frame);
        if round % 100 == 99 {
            // Still alive and answering.
            id += 1;
            let v = raw.request(
                id,
                "tools/call",
                json!({"name": "resolve_entities", "arguments": {"query": "n1"}}),
            );
            assert_eq!(v["result"]["isError"], false, "after {round} frames: {v}");
        }
    }
    // A clean end: stdin closed, the server exits on its own with status 0.
    drop(raw.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        if let Some(st) = raw.child.try_wait().unwrap() {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(st.success(), "server exit status {st}");
}

#[test]
fn an_abrupt_disconnect_mid_call_leaves_no_trace_and_the_next_session_works() {
    let f = fixture();
    let mut raw = Raw::start(&f.store);
    raw.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "drop", "version": "0"}}),
    );
    raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count_temporal_motifs","arguments":{"motif":"all","delta":100,"window":{"t_a":0,"t_b":3000}}}}"#);
    // The client vanishes mid-call: its end of stdin closes and it reads no more.
    drop(raw.child.stdin.take());
    drop(raw.lines);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(st) = raw.child.try_wait().unwrap() {
            assert!(st.code().is_some(), "killed by a signal: {st}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "server hung after the client vanished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut again = Raw::start(&f.store);
    let v = again.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "again", "version": "0"}}),
    );
    assert_eq!(v["result"]["serverInfo"]["name"], "tgms");
}
