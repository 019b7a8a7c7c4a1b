//! Test support for `tgms ask`: a local OpenAI-compatible replay server on 127.0.0.1 that
//! serves recorded replies keyed by the request body, and a CollegeMsg store builder.
//!
//! The key of a request is `role|question|turns`: `role` is `planner` or `reporter` (from
//! the system message), `question` the text after `QUESTION: ` in the first user message,
//! and `turns` the kinds of the user messages in order (`q` the question, `rej` a static
//! rejection, `rt` a runtime failure, `inv` an invalid answer object). Each key holds a
//! queue of actions; the last one repeats. Every request body is logged.
//!
//! Bounded: the server polls a non-blocking listener, serves at most `MAX_REQUESTS`, stops
//! after `LIFETIME` or when dropped, and answers with `Connection: close`.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MAX_REQUESTS: usize = 200;
const LIFETIME: Duration = Duration::from_secs(120);

/// What the server does for one request.
#[derive(Clone, Debug)]
pub enum Act {
    /// 200 with a chat completion whose content is this text.
    Reply(String),
    /// 200 with `content: null`.
    NullContent,
    /// This status and body.
    Status(u16, String),
    /// Wait, then reply with this text (the client's timeout may fire first).
    Slow(Duration, String),
}

pub struct Replay {
    pub base_url: String,
    log: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// The key of a request body (see the module docs).
pub fn key_of(body: &Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let sys = msgs
        .first()
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let role = if sys.starts_with("You are the query planner") {
        "planner"
    } else if sys.starts_with("You are the reporting assistant") {
        "reporter"
    } else {
        "other"
    };
    let users: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let q = users
        .first()
        .and_then(|u| u.split("QUESTION: ").nth(1))
        .map(|r| r.split('\n').next().unwrap_or(""))
        .unwrap_or("");
    let turns: Vec<&str> = users
        .iter()
        .enumerate()
        .map(|(i, u)| {
            if i == 0 {
                "q"
            } else if u.starts_with("That plan was rejected") {
                "rej"
            } else if u.starts_with("The plan failed at runtime") {
                "rt"
            } else if u.starts_with("Invalid answer object") {
                "inv"
            } else {
                "?"
            }
        })
        .collect();
    format!("{role}|{q}|{}", turns.join(","))
}

fn respond(mut s: TcpStream, status: u16, body: &str) {
    let reason = match status {
        200 => "OK",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(msg.as_bytes());
    let _ = s.flush();
}

fn completion(content: Value) -> String {
    json!({"id": "replay", "object": "chat.completion", "model": "replay",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
    .to_string()
}

/// Reads one HTTP request; returns its body.
fn read_request(s: &mut TcpStream) -> Option<String> {
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned())
}

impl Replay {
    /// Starts a server for `script` (key → actions).
    pub fn start(script: Vec<(String, Vec<Act>)>) -> Replay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut queues: BTreeMap<String, VecDeque<Act>> = script
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().collect()))
            .collect();
        let (log2, stop2) = (log.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut served = 0;
            while !stop2.load(Ordering::SeqCst) && t0.elapsed() < LIFETIME && served < MAX_REQUESTS
            {
                let (mut s, _) = match listener.accept() {
                    Ok(x) => x,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                };
                let _ = s.set_nonblocking(false);
                served += 1;
                let Some(text) = read_request(&mut s) else {
                    continue;
                };
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let key = key_of(&body);
                log2.lock().unwrap().push(json!({"key": key, "body": body}));
                let act = match queues.get_mut(&key) {
                    Some(q) if q.len() > 1 => q.pop_front(),
                    Some(q) => q.front().cloned(),
                    None => None,
                };
                match act {
                    Some(Act::Reply(t)) => respond(s, 200, &completion(json!(t))),
                    Some(Act::NullContent) => respond(s, 200, &completion(Value::Null)),
                    Some(Act::Status(c, b)) => respond(s, c, &b),
                    Some(Act::Slow(d, t)) => {
                        std::thread::sleep(d);
                        respond(s, 200, &completion(json!(t)));
                    }
                    None => respond(
                        s,
                        404,
                        &json!({"error": format!("no recorded reply for key {key}")}).to_string(),
                    ),
                }
            }
        });
        Replay {
            base_url: format!("http://{addr}/v1"),
            log,
            stop,
            handle: Some(handle),
        }
    }

    /// The keys of the requests received, in order.
    pub fn keys(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["key"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// The request bodies received, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["body"].clone())
            .collect()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The `tgms` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tgms")
}

/// Creates the CollegeMsg store in `dir` with the CLI.
pub fn collegemsg(dir: &Path) {
    let ok = std::process::Command::new(bin())
        .arg("init")
        .arg(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "tgms init");
    let out = std::process::Command::new(bin())
        .args(["ingest"])
        .arg(dir)
        .args(["--dataset", "collegemsg"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ingest: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Applies one batch (a JSON array of ops) with `tgms write`.
pub fn write_batch(dir: &Path, ops: &Value) {
    let f = dir.with_extension("batch.json");
    std::fs::write(&f, ops.to_string()).unwrap();
    let out = std::process::Command::new(bin())
        .arg("write")
        .arg(dir)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "write: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
