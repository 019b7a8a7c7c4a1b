//! The question bank: questions about CollegeMsg and Bitcoin-OTC phrased as a user would ask
//! them, each with a plan (`tests/question_bank/*.json`). Every plan must pass the static
//! verifier (grounded by the uids its question names), run to an ok trace with a complete
//! answer, and give the answer that this file computes on its own from the raw SNAP lines —
//! plain std code over the text, never tgms. `beliefs.json` asks "what did we believe on D"
//! over a Bitcoin-OTC store loaded at a known transaction time and then corrected and
//! retracted at known transaction times.
//!
//! The data come from `../shared/data` (CollegeMsg falls back to the shipped
//! `datasets/CollegeMsg.txt.gz`); a test whose file is absent says so and skips.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use tgms::load::{parse_events, Format};
use tgms_engine::{Options, Store};
use tgms_verifier::{exec, validate};

const SEC: i64 = 1_000_000;
const HOUR: i64 = 3600 * SEC;
const DAY: i64 = 24 * HOUR;

/// µs since the epoch of a UTC civil date and time (days_from_civil, H. Hinnant).
fn utc(y: i64, m: i64, d: i64, h: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * DAY + h * HOUR
}

fn ymd(y: i64, m: i64, d: i64) -> i64 {
    utc(y, m, d, 0)
}

/// The month (1..=12) of an instant (civil_from_days, H. Hinnant).
fn month_of(t_us: i64) -> usize {
    let z = t_us.div_euclid(DAY) + 719_468;
    let doe = z - z.div_euclid(146_097) * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    (if mp < 10 { mp + 3 } else { mp - 9 }) as usize
}

/// The civil year of an instant (UTC).
fn year_of(t_us: i64) -> i64 {
    let z = t_us.div_euclid(DAY) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    // civil_from_days counts years from March: January and February belong to the next.
    if month_of(t_us) <= 2 {
        y + 1
    } else {
        y
    }
}

/// 00:00 UTC of January 1st of the instant's year.
fn year_start(t_us: i64) -> i64 {
    ymd(year_of(t_us), 1, 1)
}

/// 00:00 UTC of the first day of the instant's month.
fn month_start(t_us: i64) -> i64 {
    ymd(year_of(t_us), month_of(t_us) as i64, 1)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// 1970-01-01 was a Thursday.
const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// One raw line: `n<src>`, `n<dst>`, time in µs, rating (0 for CollegeMsg).
#[derive(Clone, Debug)]
struct Ev {
    src: String,
    dst: String,
    t: i64,
    rating: i64,
}

fn shared_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

fn collegemsg_text() -> Option<String> {
    if let Ok(t) = std::fs::read_to_string(shared_data().join("CollegeMsg.txt")) {
        return Some(t);
    }
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/CollegeMsg.txt.gz");
    let bytes = std::fs::read(gz).ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// The raw lines, read with plain string splitting (independent of tgms's loader).
fn raw_events(text: &str, sep: char) -> Vec<Ev> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = if sep == ' ' {
            line.split_whitespace().collect()
        } else {
            line.split(sep).map(str::trim).collect()
        };
        let Some(Ok(secs)) = f.last().map(|x| x.parse::<i64>()) else {
            continue;
        };
        let rating = if f.len() == 4 {
            f[2].parse().unwrap()
        } else {
            0
        };
        out.push(Ev {
            src: format!("n{}", f[0]),
            dst: format!("n{}", f[1]),
            t: secs * SEC,
            rating,
        });
    }
    out
}

fn load(dir: &Path, text: &str, format: Format, opts: Options) -> Store {
    let events = parse_events(Path::new("input"), text, format, None).unwrap();
    let mut st = Store::create_with(dir, opts).unwrap();
    st.ingest_events(events, "Node", &mut |_| {}).unwrap();
    st
}

fn quick() -> Options {
    Options {
        no_sync: true,
        ..Options::default()
    }
}

/// Loads a bank file: `[{"id", "ask", "compare", "plan"}]`.
fn bank(name: &str) -> Vec<Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/question_bank")
        .join(name);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let qs = v.as_array().unwrap().clone();
    for q in &qs {
        assert_eq!(q["plan"]["question"], q["ask"], "{}", q["id"]);
        assert_eq!(q["plan"]["plan_id"], q["id"]);
    }
    qs
}

/// Validates (grounded by the question's uids, with the store's statistics), runs, and
/// compares every question's answer with `oracle(id)`; returns the failures.
fn ask_all(st: &Store, qs: &[Value], oracle: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
    let snap = st.snapshot();
    let mut failures = Vec::new();
    for q in qs {
        let id = q["id"].as_str().unwrap();
        let plan = &q["plan"];
        let uids = tgms::grounding::task_input_uids(snap, plan, None);
        let report = validate::validate_static(
            plan,
            &validate::Options {
                stats: Some(snap.stats()),
                task_input_uids: uids.as_ref(),
                ..validate::Options::default()
            },
        );
        let Some(ir) = report.plan.clone().filter(|_| report.valid()) else {
            failures.push(format!("{id}: invalid plan: {}", report.to_json()));
            continue;
        };
        let ran = exec::execute(
            &ir,
            snap,
            &exec::ResultStore::memory(),
            &exec::ExecOptions::default(),
        )
        .unwrap();
        let t = &ran.trace;
        if t["ok"] != true || t["answer_complete"] != true {
            failures.push(format!(
                "{id}: trace not ok/complete: {}",
                json!({"steps": t["steps"], "answer_error": t["answer_error"],
                    "answer_complete": t["answer_complete"]})
            ));
            continue;
        }
        let Some(want) = oracle(id) else {
            failures.push(format!("{id}: no oracle"));
            continue;
        };
        let got = &t["answer"];
        if !matches(q["compare"].as_str().unwrap(), got, &want) {
            failures.push(format!(
                "{id} ({}): answer {got}, expected {want}",
                q["ask"].as_str().unwrap()
            ));
        }
    }
    failures
}

/// Compares an answer with the independently computed one, by the question's kind.
fn matches(compare: &str, got: &Value, want: &Value) -> bool {
    let f = |v: &Value| v.as_f64();
    let sorted = |v: &Value| -> Option<Vec<String>> {
        let mut x: Vec<String> = v
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(String::from))
            .collect::<Option<_>>()?;
        x.sort();
        Some(x)
    };
    match compare {
        "int" => got.as_i64().is_some() && got.as_i64() == want.as_i64(),
        "exact" | "list" => got == want,
        "float" => match (f(got), f(want)) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * b.abs().max(1.0),
            _ => false,
        },
        "round" => f(got).map(f64::round) == f(want),
        "set" => sorted(got).is_some() && sorted(got) == sorted(want),
        // A count read as yes (> 0) or no.
        "yes_no" => f(got).map(|n| n > 0.0) == want.as_bool(),
        // A difference x − y read as "is y larger".
        "negative" => f(got).map(|n| n < 0.0) == want.as_bool(),
        other => panic!("unknown compare kind {other}"),
    }
}

fn report(name: &str, n: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} of {n} {name} questions failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{name}: {n} questions validated, ran and matched");
}

// ------------------------------------------------------------------ oracle helpers

fn within(e: &Ev, a: i64, b: i64) -> bool {
    a <= e.t && e.t < b
}

fn counts_by<'a>(
    evs: impl Iterator<Item = &'a Ev>,
    key: impl Fn(&Ev) -> String,
) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for e in evs {
        *m.entry(key(e)).or_insert(0) += 1;
    }
    m
}

/// The keys ranked by value, highest first; the first `k` must not tie with the next one
/// (a question whose answer is a tie would be ambiguous).
fn top_keys<K: Clone + Ord + std::fmt::Debug>(
    m: &BTreeMap<K, i64>,
    k: usize,
    lowest: bool,
) -> Vec<K> {
    let mut v: Vec<(K, i64)> = m.iter().map(|(a, b)| (a.clone(), *b)).collect();
    v.sort_by_key(|(_, c)| if lowest { *c } else { -c });
    if v.len() > k {
        assert_ne!(
            v[k - 1].1,
            v[k].1,
            "ambiguous ranking at {k}: {:?}",
            &v[..=k]
        );
    }
    v.into_iter().take(k).map(|(a, _)| a).collect()
}

fn distinct<'a>(evs: impl Iterator<Item = &'a Ev>, key: impl Fn(&Ev) -> &str) -> BTreeSet<String> {
    evs.map(|e| key(e).to_string()).collect()
}

fn max_gap(mut ts: Vec<i64>) -> i64 {
    ts.sort();
    ts.windows(2).map(|w| w[1] - w[0]).max().unwrap()
}

/// Lag from the first event between `a` and `b` to the first event in the other direction,
/// and who sent that first event.
fn first_reply(evs: &[Ev], a: &str, b: &str) -> (i64, String) {
    let mut pair: Vec<&Ev> = evs
        .iter()
        .filter(|e| (e.src == a && e.dst == b) || (e.src == b && e.dst == a))
        .collect();
    pair.sort_by_key(|e| e.t);
    let first = pair[0];
    let reply = pair.iter().find(|e| e.src != first.src).unwrap();
    assert!(
        pair[1..].iter().all(|e| e.t > first.t),
        "tie at the first event"
    );
    (reply.t - first.t, first.src.clone())
}

fn mean(xs: &[i64]) -> f64 {
    xs.iter().sum::<i64>() as f64 / xs.len() as f64
}

// ------------------------------------------------------------------ CollegeMsg

fn collegemsg_oracle(evs: &[Ev], id: &str) -> Option<Value> {
    let all = || evs.iter();
    let month = |m: i64| {
        let (a, b) = (ymd(2004, m, 1), ymd(2004, m + 1, 1));
        move |e: &&Ev| within(e, a, b)
    };
    let by_src = || counts_by(all(), |e| e.src.clone());
    let from9 = || all().filter(|e| e.src == "n9");
    let days = (ymd(2004, 4, 15), ymd(2004, 10, 27));
    let day_counts = |it: &mut dyn Iterator<Item = &Ev>| {
        let mut m: BTreeMap<i64, i64> = BTreeMap::new();
        for e in it.filter(|e| within(e, days.0, days.1)) {
            *m.entry(days.0 + (e.t - days.0) / DAY * DAY).or_insert(0) += 1;
        }
        m
    };
    let sent_between = |a: &str, b: &str| all().filter(|e| e.src == a && e.dst == b).count();
    Some(match id {
        "c01" => json!(evs.len()),
        "c02" => json!(distinct(all(), |e| &e.src).len()),
        "c03" => json!(distinct(all(), |e| &e.dst).len()),
        "c04" => json!(all().filter(month(5)).count()),
        "c05" => json!(top_keys(&by_src(), 1, false)[0]),
        "c06" => json!(top_keys(&counts_by(all(), |e| e.dst.clone()), 1, false)[0]),
        "c07" => json!(from9().count()),
        "c08" => json!(all().filter(|e| e.dst == "n9").count()),
        "c09" => json!(distinct(from9(), |e| &e.dst).len()),
        "c10" => json!(distinct(all().filter(|e| e.dst == "n9"), |e| &e.src).len()),
        "c11" => json!(from9().map(|e| e.t).min()),
        "c12" => json!(all().map(|e| e.t).max()),
        "c13" => json!(top_keys(&day_counts(&mut all()), 1, false)[0]),
        "c14" => json!(all()
            .filter(|e| within(e, ymd(2004, 6, 1), ymd(2004, 6, 2)))
            .count()),
        "c15" => json!(all().any(|e| e.src == e.dst)),
        "c16" => json!(all()
            .map(|e| (&e.src, &e.dst))
            .collect::<BTreeSet<_>>()
            .len()),
        "c17" | "c18" => {
            let directed: BTreeSet<(&str, &str)> =
                all().map(|e| (e.src.as_str(), e.dst.as_str())).collect();
            let undirected: BTreeSet<(&str, &str)> = directed
                .iter()
                .map(|&(a, b)| (a.min(b), a.max(b)))
                .collect();
            let both = undirected
                .iter()
                .filter(|&&(a, b)| directed.contains(&(a, b)) && directed.contains(&(b, a)))
                .count();
            json!(if id == "c17" { undirected.len() } else { both })
        }
        "c19" => {
            let mut c: Vec<i64> = by_src().into_values().collect();
            c.sort();
            let n = c.len();
            let med = if n % 2 == 1 {
                c[n / 2] as f64
            } else {
                (c[n / 2 - 1] + c[n / 2]) as f64 / 2.0
            };
            json!(med)
        }
        "c20" => json!(mean(&by_src().into_values().collect::<Vec<_>>())),
        "c21" => json!(by_src().values().filter(|&&c| c > 100).count()),
        "c22" => json!(by_src()
            .into_iter()
            .filter(|(_, c)| *c > 600)
            .map(|(u, _)| u)
            .collect::<Vec<_>>()),
        "c23" => json!(top_keys(&by_src(), 5, false)),
        "c24" => {
            let m = counts_by(all(), |e| format!("{:02}", e.t.div_euclid(HOUR) % 24));
            json!(top_keys(&m, 1, false)[0].parse::<i64>().unwrap())
        }
        "c25" => {
            let m = counts_by(all(), |e| {
                WEEKDAYS[(e.t.div_euclid(DAY) % 7) as usize].into()
            });
            json!(top_keys(&m, 1, true)[0])
        }
        "c26" => {
            let m = counts_by(all(), |e| MONTHS[month_of(e.t) - 1].into());
            json!(top_keys(&m, 1, false)[0])
        }
        "c27" => {
            json!(all().filter(month(6)).count() as i64 - all().filter(month(7)).count() as i64)
        }
        "c28" => json!(100.0 * all().filter(month(4)).count() as f64 / evs.len() as f64),
        "c29" => json!(sent_between("n9", "n569") > 0),
        "c30" => json!(sent_between("n9", "n569")),
        "c31" => json!(sent_between("n9", "n1") > 0),
        "c32" => {
            let mut first: BTreeMap<String, i64> = BTreeMap::new();
            for e in from9() {
                let f = first.entry(e.dst.clone()).or_insert(e.t);
                *f = (*f).min(e.t);
            }
            json!(top_keys(&first, 1, true)[0])
        }
        "c33" => json!(from9().map(|e| e.t).max().unwrap() - from9().map(|e| e.t).min().unwrap()),
        "c34" => json!(max_gap(all().map(|e| e.t).collect())),
        "c35" => json!(max_gap(from9().map(|e| e.t).collect())),
        "c36" => {
            let mut ts: Vec<i64> = all().map(|e| e.t).collect();
            ts.sort();
            let best = (0..ts.len())
                .map(|i| ts[i..].partition_point(|&x| x < ts[i] + HOUR))
                .max();
            json!(best)
        }
        "c37" => {
            // Earliest arrival from n9 over May 2004: an event u→v at t is usable when u was
            // reached at or before t; equal times chain, so each instant is relaxed to a
            // fixpoint.
            let (a, b) = (ymd(2004, 5, 1), ymd(2004, 6, 1));
            let mut may: Vec<&Ev> = all().filter(|e| within(e, a, b)).collect();
            may.sort_by_key(|e| e.t);
            let mut reached: BTreeMap<&str, i64> = BTreeMap::from([("n9", a)]);
            for group in may.chunk_by(|x, y| x.t == y.t) {
                loop {
                    let mut changed = false;
                    for e in group {
                        if reached.get(e.src.as_str()).is_some_and(|&r| r <= e.t)
                            && !reached.contains_key(e.dst.as_str())
                        {
                            reached.insert(&e.dst, e.t);
                            changed = true;
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
            json!(reached.len() - 1)
        }
        "c38" => json!(by_src().values().filter(|&&c| c == 1).count()),
        "c39" => json!(all().filter(month(7)).count() > all().filter(month(6)).count()),
        "c40" => json!(all().filter(month(5)).count() as f64 / 31.0),
        "c41" => {
            let out: BTreeSet<&str> = from9().map(|e| e.dst.as_str()).collect();
            json!(all()
                .filter(|e| e.dst == "n9" && out.contains(e.src.as_str()))
                .map(|e| e.src.as_str())
                .collect::<BTreeSet<_>>()
                .len())
        }
        "c42" => json!(first_reply(evs, "n9", "n569").0),
        "c43" => json!(first_reply(evs, "n9", "n569").1),
        "c44" => json!(all()
            .filter(|e| within(e, ymd(2004, 4, 15), ymd(2004, 4, 22)))
            .count()),
        "c45" => {
            let aug: Vec<&Ev> = all().filter(month(8)).collect();
            let mut users: BTreeSet<&str> = aug.iter().map(|e| e.src.as_str()).collect();
            users.extend(aug.iter().map(|e| e.dst.as_str()));
            json!(users.len())
        }
        "c46" | "c47" => {
            let senders = |m: i64| distinct(all().filter(month(m)), |e| &e.src);
            let apr = senders(4);
            if id == "c46" {
                json!(apr.difference(&senders(5)).count())
            } else {
                json!(apr.intersection(&senders(10)).collect::<Vec<_>>())
            }
        }
        "c48" => json!(all()
            .filter(|e| (9..17).contains(&(e.t.div_euclid(HOUR) % 24)))
            .count()),
        "c49" => json!((days.1 - days.0) / DAY - day_counts(&mut all()).len() as i64),
        "c50" => json!(day_counts(&mut from9()).into_values().max()),
        "c51" => json!(
            top_keys(
                &counts_by(all().filter(|e| e.dst == "n1624"), |e| e.src.clone()),
                1,
                false
            )[0]
        ),
        "c52" => json!(all().filter(|e| e.dst == "n1624").map(|e| e.t).max()),
        "c53" => json!(all()
            .filter(|e| within(e, utc(2004, 5, 1, 12), utc(2004, 5, 1, 18)))
            .count()),
        "c54" => {
            // Monday 00:00 UTC of each event's ISO week (epoch day 0 was a Thursday); the
            // first bucket starts at the window's start.
            let w_a = ymd(2004, 4, 1);
            let m = counts_by(all(), |e| {
                let day = e.t.div_euclid(DAY);
                let monday = (day - (day + 3).rem_euclid(7)) * DAY;
                format!("{:020}", monday.max(w_a))
            });
            json!(top_keys(&m, 1, false)[0].parse::<i64>().unwrap())
        }
        "c55" => {
            let ist = 5 * HOUR + 30 * 60 * SEC;
            let m = counts_by(all(), |e| {
                format!("{:02}", (e.t + ist).div_euclid(HOUR) % 24)
            });
            json!(top_keys(&m, 1, false)[0].parse::<i64>().unwrap())
        }
        // California is on daylight time (UTC−7) from 4 April to 31 October 2004.
        "c56" => json!(all()
            .filter(|e| within(e, utc(2004, 6, 1, 7), utc(2004, 6, 2, 7)))
            .count()),
        "c57" => {
            let (a, b) = (utc(2004, 4, 16, 7), utc(2004, 10, 26, 7));
            let mut x = vec![0i64; ((b - a) / DAY) as usize];
            for e in all().filter(|e| within(e, a, b)) {
                x[((e.t - a) / DAY) as usize] += 1;
            }
            // The population z-score of each day against the previous (up to) 10 days.
            let first = (1..x.len()).find(|&d| {
                let h = &x[d.saturating_sub(10)..d];
                let n = h.len() as f64;
                let s1: i64 = h.iter().sum();
                let s2: i64 = h.iter().map(|v| v * v).sum();
                let var = n * s2 as f64 - (s1 * s1) as f64;
                let score = if var > 0.0 {
                    (n * x[d] as f64 - s1 as f64).abs() / var.sqrt()
                } else if n * x[d] as f64 == s1 as f64 {
                    0.0
                } else {
                    1e9
                };
                assert!(
                    (score - 3.0).abs() > 1e-6,
                    "day {d}: score {score} too close to 3"
                );
                score >= 3.0
            });
            json!(a + first.unwrap() as i64 * DAY)
        }
        "c58" => {
            let (a, b) = (utc(2004, 5, 3, 7), utc(2004, 5, 31, 7));
            let mut days = vec![0i64; 28];
            for e in all().filter(|e| within(e, a, b)) {
                days[((e.t - a) / DAY) as usize] += 1;
            }
            let weeks: Vec<i64> = days.chunks(7).map(|w| w.iter().sum()).collect();
            json!(days.iter().max() > weeks.iter().min())
        }
        "c59" => {
            let mut day: Vec<&Ev> = all()
                .filter(|e| within(e, ymd(2004, 5, 1), ymd(2004, 5, 2)))
                .collect();
            day.sort_by_key(|e| e.t);
            // Longest chain ending at each message, over every earlier message it answers.
            let mut best = vec![1i64; day.len()];
            for j in 0..day.len() {
                for i in 0..j {
                    let (a, b) = (day[i], day[j]);
                    if a.dst == b.src && a.t < b.t && b.t - a.t <= HOUR {
                        best[j] = best[j].max(best[i] + 1);
                    }
                }
            }
            json!(best.into_iter().max().unwrap_or(0))
        }
        _ => return None,
    })
}

// ------------------------------------------------------------------ Bitcoin-OTC

fn otc_oracle(evs: &[Ev], id: &str) -> Option<Value> {
    let all = || evs.iter();
    let to35 = || all().filter(|e| e.dst == "n35");
    let from35 = || all().filter(|e| e.src == "n35");
    let year = |y: i64| {
        let (a, b) = (ymd(y, 1, 1), ymd(y + 1, 1, 1));
        move |e: &&Ev| within(e, a, b)
    };
    let ratings = |it: &mut dyn Iterator<Item = &Ev>| it.map(|e| e.rating).collect::<Vec<_>>();
    Some(match id {
        "b01" => json!(evs.len()),
        "b02" => json!(all().filter(|e| e.rating < 0).count()),
        "b03" => json!(distinct(all().filter(|e| e.rating == -10), |e| &e.src).len()),
        "b04" => json!(mean(&ratings(&mut all()))),
        "b05" => json!(top_keys(&counts_by(all(), |e| e.dst.clone()), 1, false)[0]),
        "b06" => json!(mean(&ratings(&mut to35()))),
        "b07" => json!(to35().map(|e| e.rating).min()),
        "b08" => json!(from35().map(|e| e.rating).max()),
        "b09" => json!(distinct(from35(), |e| &e.dst).len()),
        "b10" => json!(from35().any(|e| e.dst == "n472" && e.rating < 0)),
        "b11" => json!(all().filter(year(2011)).count()),
        "b12" => json!(all().map(|e| e.t).min()),
        "b13" => json!(
            top_keys(
                &counts_by(all().filter(|e| e.rating < 0), |e| e.src.clone()),
                1,
                false
            )[0]
        ),
        "b14" => {
            let mut low: BTreeMap<&str, i64> = BTreeMap::new();
            for e in all() {
                let l = low.entry(&e.dst).or_insert(e.rating);
                *l = (*l).min(e.rating);
            }
            json!(low.values().filter(|&&r| r > 0).count())
        }
        "b15" => {
            let directed: BTreeSet<(&str, &str)> =
                all().map(|e| (e.src.as_str(), e.dst.as_str())).collect();
            json!(directed
                .iter()
                .filter(|&&(a, b)| a < b && directed.contains(&(b, a)))
                .count())
        }
        "b16" => json!(100.0 * all().filter(|e| e.rating < 0).count() as f64 / evs.len() as f64),
        "b17" => {
            let mut r: Vec<&Ev> = all().filter(|e| e.src == "n6" && e.dst == "n35").collect();
            r.sort_by_key(|e| e.t);
            json!(r.last().map(|e| e.rating))
        }
        "b18" => json!(distinct(to35().filter(|e| e.rating == 10), |e| &e.src).len()),
        "b19" => {
            let m = counts_by(all(), |e| MONTHS[month_of(e.t) - 1].into());
            json!(top_keys(&m, 1, false)[0])
        }
        "b20" => json!(from35().filter(year(2012)).count()),
        "b21" => {
            let mut first: BTreeMap<String, i64> = BTreeMap::new();
            for e in to35() {
                let f = first.entry(e.src.clone()).or_insert(e.t);
                *f = (*f).min(e.t);
            }
            json!(top_keys(&first, 1, true)[0])
        }
        "b22" => json!(to35().map(|e| e.rating).sum::<i64>()),
        "b23" => json!(top_keys(&counts_by(all(), |e| e.src.clone()), 3, false)),
        "b24" => json!(all().filter(|e| e.rating == 10).count()),
        "b25" => json!(first_reply(evs, "n35", "n65").1),
        "b26" => json!(first_reply(evs, "n35", "n65").0),
        "b27" => json!(mean(&ratings(&mut all().filter(year(2013))))),
        "b28" => {
            // The first bucket starts at the window's start, 2010-11-01.
            let m = counts_by(all(), |e| {
                format!("{:020}", year_start(e.t).max(ymd(2010, 11, 1)))
            });
            json!(top_keys(&m, 1, false)[0].parse::<i64>().unwrap())
        }
        "b29" => json!(counts_by(all(), |e| format!("{}", month_start(e.t)))
            .into_values()
            .max()),
        "b30" => json!(to35().map(|e| e.rating).sum::<i64>()),
        "b31" | "b32" => {
            let (mut r, q) = if id == "b31" {
                (ratings(&mut from35()), (1, 2))
            } else {
                (ratings(&mut all()), (1, 10))
            };
            r.sort();
            // Linear interpolation between order statistics at h = q·(n−1), exactly.
            let hn = q.0 * (r.len() as i64 - 1);
            let lo = (hn / q.1) as usize;
            let frac = (hn % q.1) as f64 / q.1 as f64;
            let hi = r.get(lo + 1).copied().unwrap_or(r[lo]);
            json!(r[lo] as f64 + frac * (hi - r[lo]) as f64)
        }
        "b33" => json!(to35().count() > from35().count()),
        "b34" => json!(mean(&ratings(&mut from35())) < 5.0),
        "b35" => {
            let m = counts_by(
                all().filter(|e| within(e, ymd(2013, 6, 1), ymd(2013, 7, 1))),
                |e| e.src.clone(),
            );
            let best = *m.values().max().unwrap();
            let tied: Vec<&String> = m
                .iter()
                .filter(|(_, c)| **c == best)
                .map(|(u, _)| u)
                .collect();
            assert!(tied.len() > 1, "b35 asks about a tie");
            json!(tied)
        }
        _ => return None,
    })
}

// ------------------------------------------------------------------ beliefs

/// Transaction times of the belief store: the load, the corrections, the retractions.
fn tts() -> (i64, i64, i64) {
    (ymd(2016, 2, 1), ymd(2016, 3, 1), ymd(2016, 4, 1))
}

const WRONG_SIGN: &str = "rating entered with the wrong sign";

/// Which raw lines (by index) are corrected (sign flipped) and which are retracted.
fn corrected(i: usize) -> bool {
    i % 700 == 3
}
fn retracted(i: usize) -> bool {
    i % 900 == 5 && !corrected(i)
}

/// The ratings believed at transaction time `tt`, from the raw lines and the known edits.
fn believed(evs: &[Ev], tt: i64) -> Vec<Ev> {
    let (_, t2, t3) = tts();
    evs.iter()
        .enumerate()
        .filter(|(i, _)| !(tt >= t3 && retracted(*i)))
        .map(|(i, e)| {
            let mut e = e.clone();
            if tt >= t2 && corrected(i) {
                e.rating = -e.rating;
            }
            e
        })
        .collect()
}

fn belief_oracle(evs: &[Ev], id: &str) -> Option<Value> {
    let (t1, t2, _) = tts();
    let feb15 = ymd(2016, 2, 15);
    let mar15 = ymd(2016, 3, 15);
    let now = i64::MAX;
    let n_corr = (0..evs.len()).filter(|&i| corrected(i)).count();
    let n_retr = (0..evs.len()).filter(|&i| retracted(i)).count();
    let rating = |tt: i64, a: &str, b: &str| {
        believed(evs, tt)
            .iter()
            .find(|e| e.src == a && e.dst == b)
            .map(|e| e.rating)
    };
    let mean_to7 = |tt: i64| {
        mean(
            &believed(evs, tt)
                .iter()
                .filter(|e| e.dst == "n7")
                .map(|e| e.rating)
                .collect::<Vec<_>>(),
        )
    };
    // The n4→n3 rating is raw line 3 (corrected) and n13→n10 raw line 5 (retracted).
    assert!(corrected(3) && evs[3].src == "n4" && evs[3].dst == "n3");
    assert!(retracted(5) && evs[5].src == "n13" && evs[5].dst == "n10");
    Some(match id {
        "d01" => json!(believed(evs, feb15).iter().filter(|e| e.rating < 0).count()),
        "d02" => json!(believed(evs, now).iter().filter(|e| e.rating < 0).count()),
        "d03" => json!(believed(evs, mar15).len()),
        "d04" => json!(believed(evs, now).len()),
        "d05" => json!(n_corr + n_retr),
        "d06" => json!(rating(feb15, "n4", "n3")),
        "d07" => json!(rating(now, "n4", "n3")),
        "d08" => json!(t2),
        "d09" => json!(WRONG_SIGN),
        "d10" => json!(rating(mar15, "n13", "n10").is_some()),
        "d11" => json!(rating(now, "n13", "n10").is_some()),
        "d12" => json!(mean_to7(feb15)),
        "d13" => json!(mean_to7(now)),
        "d14" => json!(n_retr),
        "d15" => json!(t1),
        _ => return None,
    })
}

// ------------------------------------------------------------------ tests

#[test]
fn collegemsg_questions() {
    let Some(text) = collegemsg_text() else {
        eprintln!("skipping: CollegeMsg not found in ../shared/data or datasets/");
        return;
    };
    let evs = raw_events(&text, ' ');
    assert_eq!(evs.len(), 59_835);
    let dir = tempfile::tempdir().unwrap();
    let st = load(&dir.path().join("s"), &text, Format::Snap, quick());
    let qs = bank("collegemsg.json");
    let failures = ask_all(&st, &qs, &|id| collegemsg_oracle(&evs, id));
    report("CollegeMsg", qs.len(), &failures);

    // The harness catches wrong plans: May read as June, the top sender read from the wrong
    // end, a yes/no question asked about another pair, and a ref to a column
    // that the rows do not have.
    let mut wrong: Vec<Value> = qs
        .iter()
        .filter(|q| ["c04", "c05", "c29", "c07"].contains(&q["id"].as_str().unwrap()))
        .cloned()
        .collect();
    wrong[0]["plan"]["steps"][0]["args"]["window"] =
        json!({"t_a": "2004-06-01", "t_b": "2004-07-01"});
    wrong[1]["plan"]["steps"][1]["args"]["side"] = json!("bottom");
    wrong[2]["plan"]["answer_spec"]["from"] = json!("s1.rows[0].cnt");
    wrong[3]["plan"]["steps"][1]["args"]["value"] = json!("n1");
    wrong[3]["ask"] = json!("Did n9 ever send a message to n569 or n1?");
    wrong[3]["plan"]["question"] = wrong[3]["ask"].clone();
    // A window in seconds: refused by the static verifier (it knows the store's extent).
    wrong.extend(qs.iter().filter(|q| q["id"] == "c14").cloned());
    wrong[4]["plan"]["steps"][0]["args"]["window"]["t_a"] = json!(ymd(2004, 6, 1) / SEC);
    let caught = ask_all(&st, &wrong, &|id| collegemsg_oracle(&evs, id));
    assert_eq!(caught.len(), 5, "{caught:#?}");
    assert!(
        caught[4].contains("invalid plan") && caught[4].contains("looks like seconds"),
        "{}",
        caught[4]
    );
    // aggregate_events rows are open objects, so the missing column fails at run time.
    assert!(caught[2].contains("field 'cnt' not found"), "{}", caught[2]);
}

fn otc_text() -> Option<String> {
    let p = shared_data().join("soc-sign-bitcoinotc.csv");
    let t = std::fs::read_to_string(&p).ok();
    if t.is_none() {
        eprintln!("skipping: {} not found", p.display());
    }
    t
}

#[test]
fn bitcoin_otc_questions() {
    let Some(text) = otc_text() else { return };
    let evs = raw_events(&text, ',');
    assert_eq!(evs.len(), 35_592);
    let dir = tempfile::tempdir().unwrap();
    let st = load(&dir.path().join("s"), &text, Format::SnapCsvRated, quick());
    let qs = bank("bitcoin_otc.json");
    let failures = ask_all(&st, &qs, &|id| otc_oracle(&evs, id));
    report("Bitcoin-OTC", qs.len(), &failures);
}

#[test]
fn belief_questions() {
    let Some(text) = otc_text() else { return };
    let evs = raw_events(&text, ',');
    let (t1, t2, t3) = tts();
    // One ingest batch at t1 exactly (35,592 events are one chunk), then the edits at t2, t3.
    let dir = tempfile::tempdir().unwrap();
    let mut st = load(
        &dir.path().join("s"),
        &text,
        Format::SnapCsvRated,
        Options {
            clock: Some(tgms_engine::clock::scripted_clock(vec![t1])),
            ..quick()
        },
    );
    // Bulk-ingested events have disc "#<line index>" (data-model §6.7).
    let edge_ref = |i: usize, e: &Ev| json!({"kind": "edge", "src": e.src, "dst": e.dst, "rel_type": "TRUST", "disc": format!("#{i}")});
    let corrections = evs
        .iter()
        .enumerate()
        .filter(|(i, _)| corrected(*i))
        .map(|(i, e)| {
            tgms_engine::Op::parse(&json!({"op": "correct", "ref": edge_ref(i, e),
                "props": {"rating": -e.rating}, "vt_s": e.t, "vt_e": e.t + 1, "reason": WRONG_SIGN}))
            .unwrap()
        })
        .collect();
    st.write_at(t2, corrections).unwrap();
    let retractions = evs
        .iter()
        .enumerate()
        .filter(|(i, _)| retracted(*i))
        .map(|(i, e)| {
            tgms_engine::Op::parse(&json!({"op": "retract", "ref": edge_ref(i, e), "t": e.t,
                "reason": "rating withdrawn by the rater"}))
            .unwrap()
        })
        .collect();
    st.write_at(t3, retractions).unwrap();
    let qs = bank("beliefs.json");
    let failures = ask_all(&st, &qs, &|id| belief_oracle(&evs, id));
    report("belief", qs.len(), &failures);
}

#[test]
fn the_bank_has_at_least_60_varied_questions() {
    let all: Vec<Value> = ["collegemsg.json", "bitcoin_otc.json", "beliefs.json"]
        .iter()
        .flat_map(|f| bank(f))
        .collect();
    assert!(all.len() >= 60, "{} questions", all.len());
    let kinds: BTreeSet<&str> = all.iter().map(|q| q["compare"].as_str().unwrap()).collect();
    for k in ["int", "float", "exact", "set", "list", "yes_no"] {
        assert!(kinds.contains(k), "no {k} question");
    }
    let ids: BTreeSet<&str> = all.iter().map(|q| q["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), all.len(), "duplicate question ids");
}
