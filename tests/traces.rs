//! `tgms traces STORE [--json]` and `tgms view STORE PREFIX`: the stored traces and ask
//! records listed newest first with their plan id and status (expected values from the
//! files this test writes and the modification times it sets), and id prefixes resolved —
//! a unique prefix renders the page, an ambiguous, unknown or malformed one is a
//! structured error listing the candidates.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, UNIX_EPOCH};

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .expect("run tgms")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn json_out(o: &Output) -> Value {
    let s = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn store(d: &Path) -> PathBuf {
    let s = d.join("s");
    assert!(tgms(&["init", p(&s)]).status.success());
    let t0 = 1_700_000_000_000_000i64;
    let ev = |a: &str, b: &str, k: i64| json!({"src": a, "dst": b, "rel_type": "M", "vt_s": t0 + k * 1_000_000});
    let batch =
        json!([{"op": "ingest_events", "events": [ev("a","b",1), ev("b","c",2), ev("c","a",3)]}]);
    let f = d.join("b.json");
    std::fs::write(&f, batch.to_string()).unwrap();
    assert!(tgms(&["write", p(&s), p(&f)]).status.success());
    s
}

/// Runs a one-step plan; returns its trace id.
fn run_plan(d: &Path, s: &Path, plan_id: &str, uid: &str) -> String {
    let plan = json!({"plan_id": plan_id, "steps": [
        {"id": "s1", "op": "entity_history", "args": {"uid": uid, "include_edges": true}}],
        "answer_spec": {"kind": "count", "from": "s1.edges_total"}});
    let pf = d.join(format!("{plan_id}.json"));
    std::fs::write(&pf, plan.to_string()).unwrap();
    let o = tgms(&["plan", "run", p(s), p(&pf), "--no-grounding"]);
    json_out(&o)["trace_id"].as_str().unwrap().to_string()
}

fn set_mtime(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn traces_lists_newest_first_and_view_resolves_unique_prefixes() {
    let d = tempfile::tempdir().unwrap();
    let s = store(d.path());
    let t_old = run_plan(d.path(), &s, "old-ok", "a");
    let t_mid = run_plan(d.path(), &s, "mid-failed", "no-such-node");
    let t_new = run_plan(d.path(), &s, "new-ok", "b");
    // An ask record (the fields the listing reads) and an unreadable trace file.
    let trace_new: Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("traces").join(&t_new)).unwrap())
            .unwrap();
    let ask_id = "ab".repeat(32);
    std::fs::create_dir_all(s.join("asks")).unwrap();
    std::fs::write(
        s.join("asks").join(format!("{ask_id}.json")),
        json!({"ask_id": ask_id, "question": "How many edges has b?", "trace": trace_new})
            .to_string(),
    )
    .unwrap();
    let broken = "cd".repeat(32);
    std::fs::write(s.join("traces").join(&broken), "{not json").unwrap();
    // A temporary file of an interrupted write is not an entry.
    std::fs::write(
        s.join("traces").join(format!(".{}.tmp", "ef".repeat(32))),
        "{}",
    )
    .unwrap();
    let times = [
        (s.join("traces").join(&t_old), 1_000),
        (s.join("traces").join(&t_mid), 2_000),
        (s.join("traces").join(&t_new), 3_000),
        (s.join("asks").join(format!("{ask_id}.json")), 4_000),
        (s.join("traces").join(&broken), 500),
    ];
    for (f, t) in &times {
        set_mtime(f, *t);
    }
    let o = tgms(&["traces", p(&s), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json_out(&o);
    let got: Vec<(String, String, String, String, i64)> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["id"].as_str().unwrap().to_string(),
                e["plan_id"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
                e["written_us"].as_i64().unwrap(),
            )
        })
        .collect();
    let row = |k: &str, id: &str, plan: &str, st: &str, secs: i64| {
        (
            k.to_string(),
            id.to_string(),
            plan.to_string(),
            st.to_string(),
            secs * 1_000_000,
        )
    };
    assert_eq!(got.len(), 5, "{v}");
    assert_eq!(got[0], row("ask", &ask_id, "new-ok", "ok", 4_000));
    assert_eq!(got[1], row("trace", &t_new, "new-ok", "ok", 3_000));
    assert_eq!(got[2], row("trace", &t_mid, "mid-failed", "failed", 2_000));
    assert_eq!(got[3], row("trace", &t_old, "old-ok", "ok", 1_000));
    assert_eq!(
        (got[4].0.as_str(), got[4].1.as_str(), got[4].4),
        ("trace", broken.as_str(), 500_000_000)
    );
    assert!(got[4].3.starts_with("unreadable: "), "{}", got[4].3);
    assert_eq!(v["entries"][0]["question"], "How many edges has b?");
    assert_eq!(v["entries"][0]["trace_id"], t_new.as_str());
    assert_eq!(
        v["entries"][1]["written_utc"],
        "1970-01-01T00:50:00.000000Z"
    );
    assert_eq!(v["entries"][1]["id_prefix"], &t_new[..12]);
    // The table: a header, then one line per entry in the same order, with short ids.
    let o = tgms(&["traces", p(&s)]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("kind") && lines[0].contains("plan_id"));
    for (line, want) in lines[1..]
        .iter()
        .zip([&ask_id, &t_new, &t_mid, &t_old, &broken])
    {
        assert!(
            line.contains(&want[..12]) && !line.contains(want.as_str()),
            "{line}"
        );
    }
    assert!(lines[1].contains("How many edges has b?") && lines[1].contains("1970-01-01 01:06:40"));
    assert!(lines[3].contains("failed") && lines[3].contains("mid-failed"));
    // A unique prefix (any case) renders the page of the full id.
    let html = d.path().join("v.html");
    let o = tgms(&["view", p(&s), &t_old[..6].to_uppercase(), "--out", p(&html)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json_out(&o)["trace_id"], t_old.as_str());
    assert!(std::fs::read_to_string(&html).unwrap().contains(&t_old));
    // Ambiguous: a second trace file sharing the first ten digits.
    let twin = format!("{}{}", &t_old[..10], "0".repeat(54));
    assert_ne!(twin, t_old);
    std::fs::copy(s.join("traces").join(&t_old), s.join("traces").join(&twin)).unwrap();
    set_mtime(&s.join("traces").join(&twin), 100);
    let o = tgms(&["view", p(&s), &t_old[..10], "--out", p(&html)]);
    assert_ne!(o.status.code(), Some(0));
    let e = json_out(&o);
    assert_eq!(e["error"], "E_INVALID_ARG", "{e}");
    assert_eq!(e["details"]["problem"], "ambiguous id prefix");
    let mut cands: Vec<&str> = e["details"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    cands.sort_unstable();
    let mut want = vec![t_old.as_str(), twin.as_str()];
    want.sort_unstable();
    assert_eq!(cands, want);
    assert!(e["details"]["repair"]
        .as_str()
        .unwrap()
        .contains("tgms traces"));
    // Unknown: a first digit no stored id has; the candidates are the newest ids.
    let ids = [&t_old, &t_mid, &t_new, &ask_id, &broken, &twin];
    let free = "0123456789abcdef"
        .chars()
        .find(|c| ids.iter().all(|i| !i.starts_with(*c)))
        .unwrap();
    let o = tgms(&["view", p(&s), &free.to_string(), "--out", p(&html)]);
    let e = json_out(&o);
    assert_eq!(e["error"], "E_NOT_FOUND", "{e}");
    assert_eq!(e["details"]["candidates"][0]["id"], ask_id.as_str());
    assert_eq!(e["details"]["candidates"].as_array().unwrap().len(), 6);
    // Not an id at all.
    let o = tgms(&["view", p(&s), "xyz", "--out", p(&html)]);
    let e = json_out(&o);
    assert_eq!(
        (e["error"].as_str(), e["details"]["problem"].as_str()),
        (Some("E_INVALID_ARG"), Some("not an id prefix"))
    );
    // An empty store lists nothing, and says so.
    let s2 = d.path().join("empty");
    assert!(tgms(&["init", p(&s2)]).status.success());
    assert_eq!(
        json_out(&tgms(&["traces", p(&s2), "--json"]))["entries"],
        json!([])
    );
    assert!(String::from_utf8_lossy(&tgms(&["traces", p(&s2)]).stdout).contains("no traces"));
}
