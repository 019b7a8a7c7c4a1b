//! `tgms bench mcp`: the MCP server's own cost, measured from outside it. Over stdio, a raw
//! JSON-RPC client times `tools/list` and `tools/call entity_history` against a `tgms serve
//! --readonly` child, beside the same operator call made in process (the operator's own
//! time); the difference of the medians is the protocol's overhead. Over streamable HTTP, N
//! client threads (one legacy session each, keep-alive connections) call the registry's
//! `entity_history` and `resolve_entities` queries for a fixed time and the run reports
//! calls per second. Every answer is compared with the in-process envelope.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tgms_engine::canon;
use tgms_operators::{call_operator, CallOptions};

/// Options of one run.
pub struct McpBenchOpts<'a> {
    /// The store directory: opened read-only in process, and served by `tgms serve --readonly`.
    pub store: &'a Path,
    /// Timed calls per measurement (after as many warm-ups as a tenth of them).
    pub calls: usize,
    /// HTTP client threads.
    pub clients: usize,
    /// Seconds each HTTP client calls for.
    pub http_seconds: f64,
}

fn percentile_ms(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    (v[i.min(v.len() - 1)] * 1e6).round() / 1e6
}

/// A `tgms serve` child over stdio.
struct Stdio_ {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    next_id: i64,
}

impl Stdio_ {
    fn start(exe: &Path, store: &Path) -> anyhow::Result<Stdio_> {
        let mut child = Command::new(exe)
            .args(["serve", "--readonly", "--store"])
            .arg(store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let out = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdout"))?,
        );
        let mut s = Stdio_ {
            child,
            out,
            next_id: 0,
        };
        s.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "tgms-bench", "version": "0"}}),
        )?;
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(s)
    }
    fn send(&mut self, v: &Value) -> anyhow::Result<()> {
        let stdin = self
            .child
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        writeln!(stdin, "{}", serde_json::to_string(v)?)?;
        stdin.flush()?;
        Ok(())
    }
    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self.out.read_line(&mut line)? == 0 {
                anyhow::bail!("tgms serve closed stdout");
            }
            let v: Value = serde_json::from_str(&line)?;
            if v["id"] == json!(id) {
                return Ok(v);
            }
        }
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection holding a legacy MCP session.
struct HttpSession {
    stream: BufReader<TcpStream>,
    host: String,
    session: Option<String>,
    next_id: i64,
}

impl HttpSession {
    fn open(addr: &str) -> anyhow::Result<HttpSession> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        let mut s = HttpSession {
            stream: BufReader::new(stream),
            host: addr.to_string(),
            session: None,
            next_id: 0,
        };
        s.rpc(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "tgms-bench", "version": "0"}}),
        )?;
        s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(s)
    }

    /// POSTs one message; returns the JSON-RPC message of the response body (JSON or the
    /// first SSE `data:` event), `Null` for an empty body.
    fn post(&mut self, msg: &Value) -> anyhow::Result<Value> {
        let body = serde_json::to_string(msg)?;
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(sid) = &self.session {
            req.push_str(&format!(
                "Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            ));
        }
        req.push_str("\r\n");
        req.push_str(&body);
        self.stream.get_mut().write_all(req.as_bytes())?;
        // Status line and headers.
        let mut status = String::new();
        self.stream.read_line(&mut status)?;
        if !status.starts_with("HTTP/1.1 2") {
            anyhow::bail!("HTTP status {}", status.trim());
        }
        let (mut len, mut chunked, mut sse) = (None, false, false);
        loop {
            let mut h = String::new();
            self.stream.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or((h, ""));
            let (k, v) = (k.to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "content-length" => len = v.parse::<usize>().ok(),
                "transfer-encoding" => chunked = v.contains("chunked"),
                "content-type" => sse = v.contains("event-stream"),
                "mcp-session-id" => self.session = Some(v.to_string()),
                _ => {}
            }
        }
        let mut data = Vec::new();
        if chunked {
            // SSE responses stream in chunks until the terminating zero chunk.
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16)?;
                let mut chunk = vec![0u8; n + 2];
                self.stream.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = len {
            data.resize(n, 0);
            self.stream.read_exact(&mut data)?;
        }
        let text = String::from_utf8(data)?;
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        if sse {
            for line in text.lines() {
                if let Some(d) = line.strip_prefix("data:") {
                    if !d.trim().is_empty() {
                        return Ok(serde_json::from_str(d.trim())?);
                    }
                }
            }
            return Ok(Value::Null);
        }
        Ok(serde_json::from_str(&text)?)
    }

    fn rpc(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        self.post(
            &json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}),
        )
    }
}

fn text_of(resp: &Value) -> anyhow::Result<String> {
    resp["result"]["content"][0]["text"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| anyhow::anyhow!("unexpected response: {resp}"))
}

/// Runs the bench; prints a table on stdout and returns the record.
pub fn run(opts: &McpBenchOpts<'_>) -> anyhow::Result<Value> {
    let exe = std::env::current_exe()?;
    let store = crate::store_env::open_read_only(opts.store)?;
    let args = json!({"uid": "n1"});
    let direct = call_operator(
        store.snapshot(),
        "entity_history",
        &args,
        &CallOptions::default(),
    )
    .map_err(|e| anyhow::anyhow!("entity_history: {}", canon::to_string(&e.payload())))?;
    let want = canon::to_string(&direct);
    let warm = (opts.calls / 10).max(1);

    // The operator's own time, in process.
    let mut own = Vec::with_capacity(opts.calls);
    for i in 0..warm + opts.calls {
        let t = Instant::now();
        let env = call_operator(
            store.snapshot(),
            "entity_history",
            &args,
            &CallOptions::default(),
        );
        let ms = t.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(env).ok();
        if i >= warm {
            own.push(ms);
        }
    }

    // Over stdio.
    let mut srv = Stdio_::start(&exe, opts.store)?;
    let (mut list, mut call) = (Vec::new(), Vec::new());
    for i in 0..warm + opts.calls {
        let t = Instant::now();
        let r = srv.call("tools/list", json!({}))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if r["result"]["tools"].as_array().map_or(0, Vec::len) < 17 {
            anyhow::bail!("tools/list returned {r}");
        }
        if i >= warm {
            list.push(ms);
        }
    }
    for i in 0..warm + opts.calls {
        let t = Instant::now();
        let r = srv.call(
            "tools/call",
            json!({"name": "entity_history", "arguments": args}),
        )?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if text_of(&r)? != want {
            anyhow::bail!("the served envelope differs from the in-process one");
        }
        if i >= warm {
            call.push(ms);
        }
    }
    drop(srv);
    let own_p50 = percentile_ms(&mut own, 0.5);
    let call_p50 = percentile_ms(&mut call, 0.5);
    let stdio = json!({
        "entity_history_in_process_ms": {"p50": own_p50, "p95": percentile_ms(&mut own, 0.95)},
        "entity_history_tools_call_ms": {"p50": call_p50, "p95": percentile_ms(&mut call, 0.95)},
        "overhead_p50_ms": ((call_p50 - own_p50) * 1e6).round() / 1e6,
        "tools_list_ms": {"p50": percentile_ms(&mut list, 0.5), "p95": percentile_ms(&mut list, 0.95)},
        "calls": opts.calls,
    });

    // Over streamable HTTP.
    let mut child = Command::new(&exe)
        .args(["serve", "--readonly", "--http", "127.0.0.1:0", "--store"])
        .arg(opts.store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut err = BufReader::new(
        child
            .stderr
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stderr"))?,
    );
    let addr = loop {
        let mut line = String::new();
        if err.read_line(&mut line)? == 0 {
            anyhow::bail!("tgms serve --http printed no address");
        }
        if let Some(i) = line.find("http://") {
            let rest = &line[i + 7..];
            break rest[..rest.find('/').unwrap_or(rest.len())].to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let queries = [
        ("entity_history", json!({"uid": "n1"})),
        ("resolve_entities", json!({"query": "n1"})),
    ];
    let wants: Vec<String> = queries
        .iter()
        .map(|(op, a)| {
            call_operator(store.snapshot(), op, a, &CallOptions::default())
                .map(|e| canon::to_string(&e))
                .map_err(|e| anyhow::anyhow!("{op}: {}", e.message))
        })
        .collect::<anyhow::Result<_>>()?;
    let deadline = Duration::from_secs_f64(opts.http_seconds);
    let t0 = Instant::now();
    let counts: Vec<anyhow::Result<usize>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..opts.clients)
            .map(|c| {
                let (addr, queries, wants) = (&addr, &queries, &wants);
                sc.spawn(move || -> anyhow::Result<usize> {
                    let mut s = HttpSession::open(addr)?;
                    let mut n = 0usize;
                    let start = Instant::now();
                    while start.elapsed() < deadline {
                        let k = (n + c) % queries.len();
                        let r = s.rpc(
                            "tools/call",
                            json!({"name": queries[k].0, "arguments": queries[k].1}),
                        )?;
                        if text_of(&r)? != wants[k] {
                            anyhow::bail!("HTTP answer differs from the in-process envelope");
                        }
                        n += 1;
                    }
                    Ok(n)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("client panicked")))
            })
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let total: usize = counts
        .into_iter()
        .collect::<anyhow::Result<Vec<_>>>()?
        .iter()
        .sum();
    let http = json!({"clients": opts.clients, "seconds": (secs * 1e3).round() / 1e3,
        "calls": total, "calls_per_s": (total as f64 / secs).round()});
    let rec = json!({"store": opts.store.display().to_string(), "stdio": stdio, "http": http});
    println!(
        "stdio  entity_history  in process p50 {:.3} ms   tools/call p50 {:.3} ms   overhead p50 {:.3} ms",
        own_p50, call_p50, call_p50 - own_p50
    );
    println!(
        "stdio  tools/list      p50 {:.3} ms   p95 {:.3} ms",
        rec["stdio"]["tools_list_ms"]["p50"].as_f64().unwrap_or(0.0),
        rec["stdio"]["tools_list_ms"]["p95"].as_f64().unwrap_or(0.0)
    );
    println!(
        "http   {} clients     {} calls in {:.1} s = {} calls/s",
        opts.clients, total, secs, rec["http"]["calls_per_s"]
    );
    Ok(rec)
}
