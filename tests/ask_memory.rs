//! Evolution memory (agent-surface §8) with quarantine: notes built by operators and checked
//! against the raw CollegeMsg file, a write inside a note's window makes it stale and it is
//! never retrieved, a read-only store changes no file, refresh recomputes, and a note is
//! never evidence for a claim.

mod ask_support;

use ask_support::{bin, collegemsg, write_batch, Act, Replay};
use serde_json::{json, Value};
use std::io::Read;
use std::time::Duration;
use tgms::ask::{self, memory, AskConfig, LlmFlags};
use tgms_engine::Store;

const DAY_US: i64 = 86_400_000_000;

/// The event times (µs) of the shipped CollegeMsg file, read independently of the loader.
fn raw_times() -> Vec<i64> {
    let f = std::fs::File::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/CollegeMsg.txt.gz"
    ))
    .unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .unwrap();
    s.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|t| *t != "time") // the header line
        .map(|t| t.parse::<i64>().unwrap() * 1_000_000)
        .collect()
}

fn cli(args: &[&str], dir: &std::path::Path) -> Value {
    let out = std::process::Command::new(bin())
        .arg(args[0])
        .arg(args[1])
        .arg(dir)
        .args(&args[2..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bytes(dir: &std::path::Path) -> Vec<u8> {
    std::fs::read(memory::path(dir)).unwrap()
}

#[test]
fn notes_quarantine_refresh_and_read_only() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cm");
    collegemsg(&dir);
    let built = cli(&["memory", "build", "--stride-days", "7"], &dir);
    let (lo, hi) = {
        let st = Store::open_read_only(&dir).unwrap();
        (st.stats().vt_min.unwrap(), st.stats().vt_max.unwrap())
    };
    let stride = 7 * DAY_US;
    let expect_n = (hi - lo + stride - 1) / stride;
    assert_eq!(built, json!({"notes": expect_n}));
    let notes = memory::load(&dir).unwrap().unwrap().notes;
    let times = raw_times();
    for n in &notes {
        let (ta, tb) = (
            n["window_ta"].as_i64().unwrap(),
            n["window_tb"].as_i64().unwrap(),
        );
        let count = times.iter().filter(|&&x| x >= ta && x < tb).count();
        assert_eq!(n["facts"]["n_events"], json!(count), "window [{ta}, {tb})");
        assert_eq!(n["stale"], json!(false));
        assert_eq!(
            n["text"].as_str().unwrap(),
            format!(
                "{count} edge events; {} new nodes; {} bursty buckets.",
                n["facts"]["n_new_nodes"], n["facts"]["n_burst_buckets"]
            )
        );
    }
    assert_eq!(notes.last().unwrap()["window_tb"], json!(hi));

    // A write inside note 3's window (and no other).
    let k = 3;
    let (ta, tb) = (
        notes[k]["window_ta"].as_i64().unwrap(),
        notes[k]["window_tb"].as_i64().unwrap(),
    );
    let before_count = notes[k]["facts"]["n_events"].as_i64().unwrap();
    write_batch(
        &dir,
        &json!([{"op": "assert_edge", "src": "n1", "dst": "n2", "rel_type": "MSG", "vt_s": ta + 10, "vt_e": ta + 11}]),
    );

    // Read-only: the stale mark is applied in memory, the file is not touched, and nothing
    // can be built or refreshed.
    let file_before = bytes(&dir);
    {
        let ro = Store::open_read_only(&dir).unwrap();
        let m = memory::sync(&ro).unwrap().unwrap();
        let stale: Vec<usize> = m
            .notes
            .iter()
            .enumerate()
            .filter(|(_, n)| n["stale"] == json!(true))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(stale, vec![k]);
        assert!(memory::retrieve(&m, ta, tb, 3)
            .iter()
            .all(|n| n["window_ta"] != json!(ta)));
        let q = format!(
            "How many messages were sent between {} and {}?",
            ta + 1,
            tb - 1
        );
        let got = memory::notes_for_question(&ro, &q).unwrap();
        assert!(got.is_empty(), "only the stale note overlaps: {got:?}");
        assert!(matches!(
            memory::build(&ro, stride),
            Err(ask::AskError::ReadOnly { .. })
        ));
        assert!(matches!(
            memory::refresh(&ro),
            Err(ask::AskError::ReadOnly { .. })
        ));
        let listed = cli(&["memory", "list"], &dir);
        assert_eq!(listed["notes"][k]["stale"], json!(true));
    }
    assert_eq!(
        file_before,
        bytes(&dir),
        "a read-only store changes no file"
    );

    // Writable: the mark persists; a neighbour window is unaffected and still retrieved.
    {
        let st = Store::open(&dir).unwrap();
        let m = memory::sync(&st).unwrap().unwrap();
        assert_eq!(m.notes[k]["stale"], json!(true));
        assert_eq!(m.notes[k + 1]["stale"], json!(false));
        let near = memory::retrieve(&m, ta, tb + stride, 3);
        assert_eq!(near.len(), 1);
        assert_eq!(near[0]["window_ta"], json!(tb));
    }
    assert_ne!(file_before, bytes(&dir));
    assert_eq!(cli(&["memory", "refresh"], &dir), json!({"refreshed": 1}));
    let after = memory::load(&dir).unwrap().unwrap().notes;
    assert_eq!(after[k]["stale"], json!(false));
    assert_eq!(after[k]["facts"]["n_events"], json!(before_count + 1));
    assert_eq!(after[k + 1], notes[k + 1]);
    // A retraction touches [t, open): every note from its window on goes stale.
    write_batch(
        &dir,
        &json!([{"op": "retract", "ref": {"kind": "node", "uid": "n5"}, "t": tb + 5, "reason": "account closed"}]),
    );
    let st = Store::open_read_only(&dir).unwrap();
    let m = memory::sync(&st).unwrap().unwrap();
    let stale: Vec<bool> = m.notes.iter().map(|n| n["stale"] == json!(true)).collect();
    assert!(
        stale[..=k].iter().all(|s| !s) && stale[k + 1..].iter().all(|s| *s),
        "{stale:?}"
    );
}

#[test]
fn notes_reach_the_planner_fenced_and_are_never_evidence() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cm");
    collegemsg(&dir);
    cli(&["memory", "build", "--stride-days", "7"], &dir);
    let notes = memory::load(&dir).unwrap().unwrap().notes;
    let (ta, n_events) = (
        notes[0]["window_ta"].as_i64().unwrap(),
        notes[0]["facts"]["n_events"].as_i64().unwrap(),
    );
    let tb = ta + 7 * DAY_US;
    let q = format!("How many accounts could account n1 reach from {ta} to {tb}?");
    let plan = json!({"plan_id": "reach", "steps": [{"id": "s1", "op": "temporal_reachability",
        "args": {"src": "n1", "window": {"t_a": ta, "t_b": tb}, "limit": 5}, "depends_on": []}],
        "answer_spec": {"kind": "count", "from": "s1.rows_total"}});
    let st = Store::open(&dir).unwrap();
    // The true reachability count, for the reporter's one correct claim.
    let env = tgms_operators::pipeline::call_operator(
        st.snapshot(),
        "temporal_reachability",
        &plan["steps"][0]["args"],
        &Default::default(),
    )
    .unwrap();
    let reach = env["rows_total"].as_i64().unwrap();
    let report = json!({"text": format!("{reach} accounts were reachable. The week had {n_events} messages."),
        "claims": [{"id": "c1", "type": "count", "value": reach, "from": "s1.rows_total", "evidence": ["s1"]},
                   {"id": "c2", "type": "count", "value": n_events, "evidence": [notes[0]["id"].as_str().unwrap()]}]});
    let srv = Replay::start(vec![
        (format!("planner|{q}|q"), vec![Act::Reply(plan.to_string())]),
        (
            format!("reporter|{q}|q"),
            vec![Act::Reply(report.to_string())],
        ),
    ]);
    let flags = LlmFlags {
        model: Some("replay".into()),
        base_url: Some(srv.base_url.clone()),
        retries: Some(0),
        ..Default::default()
    };
    let mut c = AskConfig::resolve(&flags, |_| None).unwrap();
    c.llm.as_mut().unwrap().timeout = Duration::from_secs(10);
    let o = ask::ask(&st, &q, &c).unwrap();
    let user = srv.bodies()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        user.contains(&format!(
            "\n\nMEMORY NOTES\n- <data>{}</data>",
            notes[0]["text"].as_str().unwrap()
        )),
        "{user}"
    );
    assert_eq!(o.record["memory_notes"][0]["window_ta"], json!(ta));
    let v: Vec<&str> = o.record["verification"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(v, vec!["supported", "unverifiable"]);
    // Claim gating keeps the unverifiable claim (spec §9); prose gating does not let it back
    // a sentence.
    assert_eq!(
        o.answer()["text"],
        format!("{reach} accounts were reachable.")
    );
    // --no-memory: the planner sees none.
    drop(srv);
}
