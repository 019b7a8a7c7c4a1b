//! `tgms eval suite` / `eval plant` / `eval run-suite` without a model: determinism (byte
//! identical twice, a pinned digest), golds checked by brute force over the raw events,
//! probes that differ by construction, the `oracle` system at 100 % on every generated suite
//! (refusing only page-capped answers), `latest-state` at 0 on "before" probes, planted gold
//! = manifest, the test-split refusal, and every template on CollegeMsg.

mod eval_support;

use eval_support::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tgms::eval::run_suite::{self, RunArgs};
use tgms::eval::suite::{self, SuiteArgs};
use tgms::eval::{planted, templates};
use tgms_engine::{canon, Store};

fn args(dataset: &str, planted: Option<Value>) -> SuiteArgs {
    SuiteArgs {
        dataset: dataset.into(),
        seed: 0,
        planted,
    }
}

fn all_tasks(s: &Value) -> Vec<Value> {
    let mut v = s["dev"].as_array().unwrap().clone();
    v.extend(s["test"].as_array().unwrap().iter().cloned());
    v
}

fn run(
    store: &Store,
    suite: &Value,
    system: &str,
    split: &str,
    cache: &std::path::Path,
) -> anyhow::Result<Value> {
    run_suite::run(
        store,
        suite,
        &RunArgs {
            system: system.into(),
            split: split.into(),
            force: false,
            cache_dir: cache.to_path_buf(),
            ask: Default::default(),
            model: None,
            python: "python3".into(),
            retrieval: tgms::eval::baselines::Retrieval::Bm25,
            limit: None,
        },
    )
}

/// Every answered row is exact; a refused row is a page-capped (or cost-refused) oracle
/// plan, never a wrong answer.
fn assert_oracle_perfect(run: &Value) {
    for r in run["rows"].as_array().unwrap() {
        if r["refused"] == true {
            let why = r["detail"]["refusal"].as_str().unwrap();
            assert!(why == "page-capped answer" || why == "cost", "{r}");
            continue;
        }
        assert_eq!(r["em"], json!(1.0), "oracle missed {r}");
        assert_eq!(r["unsupported_before"], false, "{r}");
    }
}

#[test]
fn small_store_suite_is_deterministic_with_brute_force_golds() {
    let t = tempfile::tempdir().unwrap();
    let mut a = small_store(&t.path().join("a"));
    let mut b = small_store(&t.path().join("b"));
    let sa = canon::to_string(&suite::generate(&mut a, &args("small", None)).unwrap());
    let sb = canon::to_string(&suite::generate(&mut b, &args("small", None)).unwrap());
    assert_eq!(sa, sb, "two identical stores, one seed: identical suites");
    // A second generation on the same store recovers the probes from the log and writes
    // nothing.
    let last = a.last_tt();
    let sa2 = canon::to_string(&suite::generate(&mut a, &args("small", None)).unwrap());
    assert_eq!(a.last_tt(), last);
    assert_eq!(sa, sa2);
    // Pinned: computed once with this generator (commit of issue 22) and kept so that any
    // change of draw order, templates, paraphrase text or gold shows up here. It does not
    // prove the first value right; the brute-force checks below and the oracle tests do.
    // Re-pinned when the mechanical reporter's text gained UTC readings beside integer times
    // (the gold answer objects' `text`; docs/plans-changes.md §9).
    let digest = canon::digest(&canon::parse(&sa).unwrap());
    assert_eq!(
        digest, "c6dc0fe1b41dbec87ce887f13a0cb8b8cd42c19f305e2c66a3612533d9a12be3",
        "suite digest changed"
    );

    // Golds independently of the engine: event counts and reachable sets from raw events.
    let suite = canon::parse(&sa).unwrap();
    let evs = small_events();
    let (mut counts, mut reaches) = (0, 0);
    for task in all_tasks(&suite) {
        let plan = &task["oracle_plan"];
        let tmpl = run_suite::template_of(&task);
        let s1 = &plan["steps"][0]["args"];
        match tmpl.as_str() {
            "event_count" => {
                let (ta, tb) = (
                    s1["window"]["t_a"].as_i64().unwrap(),
                    s1["window"]["t_b"].as_i64().unwrap(),
                );
                let n = evs.iter().filter(|e| e.2 >= ta && e.2 < tb).count();
                assert_eq!(task["gold"].as_f64().unwrap(), n as f64, "{}", task["id"]);
                counts += 1;
            }
            "reach_count" => {
                let (ta, tb) = (
                    s1["window"]["t_a"].as_i64().unwrap(),
                    s1["window"]["t_b"].as_i64().unwrap(),
                );
                let r = reach_brute(&evs, s1["src"].as_str().unwrap(), ta, tb);
                assert_eq!(task["gold"], json!(r.len()), "{}", task["id"]);
                reaches += 1;
            }
            _ => {}
        }
        // The question names the task's input uids and its window in both notations.
        for u in task["input_uids"].as_array().unwrap() {
            assert!(task["question_text"]
                .as_str()
                .unwrap()
                .contains(u.as_str().unwrap()));
        }
    }
    assert!(counts > 0 && reaches > 0, "{counts} {reaches}");
}

#[test]
fn probes_differ_by_construction_and_latest_state_misses_before() {
    let t = tempfile::tempdir().unwrap();
    let mut st = small_store(&t.path().join("s"));
    let s = suite::generate(&mut st, &args("small", None)).unwrap();
    let probes: Vec<Value> = all_tasks(&s)
        .into_iter()
        .filter(|t| t["family"] == "probe")
        .collect();
    assert_eq!(probes.len(), 2 * suite::N_PROBES);
    for p in &probes {
        let id = p["id"].as_str().unwrap();
        let steps = &p["oracle_plan"]["steps"];
        // One node version per uid before; the correction splits it into three.
        if id.contains("-before-") {
            assert!(steps[0]["args"]["as_of_tt"].is_i64(), "{id}");
            assert_eq!(p["gold"], json!(1), "{id}");
        } else {
            assert!(steps[0]["args"].get("as_of_tt").is_none(), "{id}");
            assert_eq!(p["gold"], json!(3), "{id}");
        }
    }
    // The probes were written at explicit transaction times after the data.
    let found = suite::recover_probes(&st).unwrap();
    assert_eq!(found.len(), suite::N_PROBES);
    assert!(found.iter().all(|p| p.tt_before >= TT0_US + 1_000_000));
    drop(st);
    let ro = Store::open_read_only(&t.path().join("s")).unwrap();
    let cache = t.path().join("runs");
    for split in ["dev", "test"] {
        let o = run(&ro, &s, "oracle", split, &cache).unwrap();
        assert_oracle_perfect(&o);
        let l = run(&ro, &s, "latest-state", split, &cache).unwrap();
        for r in l["rows"].as_array().unwrap() {
            match r["probe"].as_str() {
                Some("before") => assert_eq!(r["em"], json!(0.0), "{r}"),
                Some("now") => assert_eq!(r["em"], json!(1.0), "{r}"),
                _ => {}
            }
        }
    }
    // The test split of a configuration runs once; --force runs it again.
    let again = run(&ro, &s, "oracle", "test", &cache)
        .unwrap_err()
        .to_string();
    assert!(
        again.contains("refused") && again.contains("--force"),
        "{again}"
    );
    let forced = run_suite::run(
        &ro,
        &s,
        &RunArgs {
            system: "oracle".into(),
            split: "test".into(),
            force: true,
            cache_dir: cache.clone(),
            ask: Default::default(),
            model: None,
            python: "python3".into(),
            retrieval: tgms::eval::baselines::Retrieval::Bm25,
            limit: None,
        },
    )
    .unwrap();
    assert_oracle_perfect(&forced);
    // A model system without a model is refused with the fix.
    let e = run(&ro, &s, "ours", "dev", &cache).unwrap_err().to_string();
    assert!(e.contains("--model"), "{e}");
}

#[test]
fn planted_gold_is_the_manifest_and_oracle_recovers_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("p");
    let mut st = small_store(&dir);
    let m = planted::plant(
        &mut st,
        planted::PlantArgs {
            rings: 3,
            chains: 2,
            bursts: 2,
        },
    )
    .unwrap();
    // Planting twice is refused (the patterns would overlap their own windows).
    assert!(planted::plant(
        &mut st,
        planted::PlantArgs {
            rings: 1,
            chains: 0,
            bursts: 0
        }
    )
    .is_err());
    let s = suite::generate(&mut st, &args("small", Some(m.clone()))).unwrap();
    let t2: Vec<Value> = all_tasks(&s)
        .into_iter()
        .filter(|t| t["family"] == "t2")
        .collect();
    assert_eq!(t2.len(), 7);
    for task in &t2 {
        assert_eq!(task["gold_source"], "manifest");
        let i: usize = task["id"]
            .as_str()
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let entry = &m["planted"][i];
        // The manifest's own members, written out independently of the generator's gold code.
        let want = match entry["kind"].as_str().unwrap() {
            "triangle_ring" => json!(["a", "b", "c"].map(|x| format!("planted-ring-{i}-{x}"))),
            "reach_chain" => {
                let j = i - 3;
                json!((1..=4)
                    .map(|k| format!("planted-chain-{j}-{k}"))
                    .collect::<Vec<_>>())
            }
            _ => json!({"t_a": entry["t_a"], "t_b": entry["t_b"]}),
        };
        assert_eq!(task["gold"], want, "{}", task["id"]);
    }
    let bursts: Vec<&Value> = m["planted"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "burst")
        .collect();
    for b in bursts {
        // 12 quiet days, then the burst day: [t_a, t_b) is exactly one day.
        assert_eq!(
            b["t_b"].as_i64().unwrap() - b["t_a"].as_i64().unwrap(),
            templates::DAY_US
        );
    }
    drop(st);
    let ro = Store::open_read_only(&dir).unwrap();
    for split in ["dev", "test"] {
        let o = run(&ro, &s, "oracle", split, &t.path().join("runs")).unwrap();
        assert_oracle_perfect(&o);
        for r in o["rows"].as_array().unwrap() {
            if r["family"] == "t2" {
                assert_eq!(r["em"], json!(1.0), "{r}");
            }
        }
    }
}

/// Generates the suite of a real dataset, checks its templates and runs the oracle: on every
/// task (`all`), or on the dev split plus one test task per template (keeps CI fast: the
/// motif templates take seconds each on CollegeMsg).
fn dataset_suite(name: &str, ingest: &[&str], min_templates: usize, all: bool) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    cli_store(&dir, ingest);
    let mut st = Store::open(&dir).unwrap();
    let s = suite::generate(&mut st, &args(name, None)).unwrap();
    let seen: BTreeSet<String> = all_tasks(&s).iter().map(run_suite::template_of).collect();
    let mut want: BTreeSet<String> = ["t1", "t3", "t4"]
        .iter()
        .flat_map(|f| templates::family_templates(f).iter().map(|x| x.to_string()))
        .collect();
    // §3.4: on instantaneous-event data neighbors_at and neighbors_gained are always
    // degenerate (instant snapshots are empty) and filtered.
    want.remove("neighbors_at");
    want.remove("neighbors_gained");
    let missing: Vec<&String> = want.difference(&seen).collect();
    assert!(
        missing.len() <= want.len() - min_templates,
        "{name}: no tasks for {missing:?}"
    );
    assert!(seen.contains("probe_before") && seen.contains("probe_now"));
    drop(st);
    let ro = Store::open_read_only(&dir).unwrap();
    let mut s = s;
    if !all {
        let mut seen = BTreeSet::new();
        let test: Vec<Value> = s["test"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| seen.insert(run_suite::template_of(t)))
            .cloned()
            .collect();
        s["test"] = json!(test);
    }
    for split in ["dev", "test"] {
        assert_oracle_perfect(&run(&ro, &s, "oracle", split, &t.path().join("runs")).unwrap());
    }
}

#[test]
fn collegemsg_every_template_and_oracle() {
    // The bundled datasets/CollegeMsg.txt.gz: always present.
    dataset_suite("CollegeMsg", &["--dataset", "collegemsg"], 17, false);
}

#[test]
#[ignore = "about a minute of CPU each; run with --ignored when ../shared/data is present"]
fn email_and_bitcoin_suites_oracle() {
    let d = data_dir();
    let email = d.join("email-Eu-core-temporal.txt");
    let btc = d.join("soc-sign-bitcoinotc.csv");
    if !email.exists() || !btc.exists() {
        eprintln!(
            "skipping: {} or {} not found",
            email.display(),
            btc.display()
        );
        return;
    }
    dataset_suite(
        "email-Eu-core",
        &["--format", "snap", email.to_str().unwrap()],
        12,
        true,
    );
    dataset_suite(
        "Bitcoin-OTC",
        &["--format", "snap-csv-rated", btc.to_str().unwrap()],
        12,
        true,
    );
}
