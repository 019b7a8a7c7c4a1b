//! Paired bootstrap significance for `tgms eval report` (`plans-and-claims.md` §10): the
//! accuracy difference between a system and `ours` over the tasks both ran, its 95% interval
//! and a two-sided p-value, from a fixed number of resamples of tasks with a fixed seed (the
//! SplitMix64 stream of the suite generator), so a report is reproducible byte for byte.

use serde_json::Value;
use std::collections::BTreeMap;
use tgms_verifier::mutations::Rng;

/// Resamples per comparison.
pub const RESAMPLES: usize = 10_000;
/// Seed of the resampling stream.
pub const SEED: u64 = 0;

/// One paired comparison: `system − reference` accuracy.
#[derive(Clone, Debug, PartialEq)]
pub struct Paired {
    /// Tasks both runs scored.
    pub tasks: usize,
    /// The observed difference of mean exact-match accuracy.
    pub diff: f64,
    /// The 2.5th percentile of the resampled differences (low end of the 95% interval).
    pub lo: f64,
    /// The 97.5th percentile of the resampled differences (high end of the 95% interval).
    pub hi: f64,
    /// Two-sided: `min(1, 2 · min(#{d* ≤ 0} + 1, #{d* ≥ 0} + 1) / (B + 1))`.
    pub p: f64,
}

/// The paired bootstrap over per-task differences `d_i = a_i − b_i`: `resamples` times, draw
/// `n` task indices with replacement (`randrange(n)` from `Rng::new(seed)`) and take the mean
/// of their differences. The interval is the nearest-rank percentiles of the sorted means:
/// element `⌊0.025 · B⌋` and element `⌈0.975 · B⌉ − 1`. `None` without tasks.
pub fn paired(d: &[f64], resamples: usize, seed: u64) -> Option<Paired> {
    let n = d.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let diff = d.iter().sum::<f64>() / n as f64;
    let mut rng = Rng::new(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| d[rng.randrange(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let b = resamples as f64;
    let lo = means[(0.025 * b).floor() as usize];
    let hi = means[((0.975 * b).ceil() as usize).clamp(1, resamples) - 1];
    // Sums of 0/1 differences over n are exact multiples of 1/n up to rounding: compare with
    // a tolerance far below 1/n so a resample whose mean is 0 counts on both sides.
    let eps = 1e-9;
    let le = means.iter().filter(|&&m| m <= eps).count() as f64;
    let ge = means.iter().filter(|&&m| m >= -eps).count() as f64;
    let p = (2.0 * (le + 1.0).min(ge + 1.0) / (b + 1.0)).min(1.0);
    Some(Paired {
        tasks: n,
        diff,
        lo,
        hi,
        p,
    })
}

/// Per-task exact match of a run: task id → em (unanswered rows score 0 already).
fn em_by_task(run: &Value) -> BTreeMap<String, f64> {
    run["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r["task_id"].as_str()?.to_string(), r["em"].as_f64()?)))
        .collect()
}

/// `run − reference` over the tasks both scored (the same suite and split: a task id names
/// one task), in task-id order.
pub fn compare(run: &Value, reference: &Value) -> Option<Paired> {
    let a = em_by_task(run);
    let b = em_by_task(reference);
    let d: Vec<f64> = a
        .iter()
        .filter_map(|(id, x)| b.get(id).map(|y| x - y))
        .collect();
    paired(&d, RESAMPLES, SEED)
}

/// The reference of `run`: the `ours` run of the same model and dataset if there is one, else
/// the first `ours` run of the dataset.
pub fn reference_of<'r>(run: &Value, runs: &'r [Value]) -> Option<&'r Value> {
    let ours = |r: &&Value| r["system"] == "ours" && r["dataset"] == run["dataset"];
    runs.iter()
        .filter(ours)
        .find(|r| r["model"] == run["model"])
        .or_else(|| runs.iter().find(ours))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One task: every resample is that task, so the interval is the point and the p-value
    /// is the smallest the formula gives, 2 / (B + 1).
    #[test]
    fn one_task_is_its_own_distribution() {
        let p = paired(&[-1.0], 999, 7).unwrap();
        assert_eq!((p.tasks, p.diff, p.lo, p.hi), (1, -1.0, -1.0, -1.0));
        assert!((p.p - 2.0 / 1000.0).abs() < 1e-12);
        let z = paired(&[0.0, 0.0, 0.0], 100, 0).unwrap();
        assert_eq!((z.diff, z.lo, z.hi, z.p), (0.0, 0.0, 0.0, 1.0));
        assert!(paired(&[], 100, 0).is_none());
    }

    /// Two tasks with differences {1, 0}: a resample's mean is 0 with probability 1/4, 1/2
    /// with 1/2 and 1 with 1/4 (worked by hand). So the 95% interval is [0, 1], and
    /// #{d* ≤ 0} ≈ B/4 gives p ≈ 2 · 1/4 = 0.5 (binomial s.d. of the fraction at B = 10,000:
    /// 0.0043, so ±0.03 is over 3 s.d. for p).
    #[test]
    fn two_tasks_match_the_hand_computed_distribution() {
        let p = paired(&[1.0, 0.0], RESAMPLES, SEED).unwrap();
        assert_eq!((p.diff, p.lo, p.hi), (0.5, 0.0, 1.0));
        assert!((p.p - 0.5).abs() < 0.03, "{p:?}");
        // Deterministic for the fixed seed.
        assert_eq!(paired(&[1.0, 0.0], RESAMPLES, SEED).unwrap(), p);
    }

    /// Ten tasks, eight where ours is right and the system wrong, two ties: d* ≤ 0 only when
    /// every draw is a tie, (2/10)^10 ≈ 1e-7, so p is the floor 2 / (B + 1) and the interval
    /// stays below 0.
    #[test]
    fn a_clear_difference_is_significant() {
        let mut d = vec![-1.0; 8];
        d.extend([0.0, 0.0]);
        let p = paired(&d, RESAMPLES, SEED).unwrap();
        assert!((p.diff + 0.8).abs() < 1e-12);
        assert!(p.hi < 0.0 && p.lo >= -1.0, "{p:?}");
        assert!((p.p - 2.0 / 10_001.0).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn compare_pairs_rows_by_task_id() {
        let run = serde_json::json!({"rows": [
            {"task_id": "a", "em": 1.0}, {"task_id": "b", "em": 0.0}, {"task_id": "x", "em": 1.0}]});
        let ours = serde_json::json!({"rows": [
            {"task_id": "b", "em": 1.0}, {"task_id": "a", "em": 1.0}, {"task_id": "y", "em": 0.0}]});
        let c = compare(&run, &ours).unwrap();
        // Paired on a and b only: differences {0, −1}.
        assert_eq!((c.tasks, c.diff), (2, -0.5));
    }

    /// The report's table: latest-state against ours on two tasks, differences {−1, 0}
    /// (by hand: Δ −50 pp, interval [−100, 0] pp, p ≈ 0.5).
    #[test]
    fn the_report_shows_the_paired_row() {
        let row = |id: &str, em: f64| serde_json::json!({"task_id": id, "em": em});
        let ours = serde_json::json!({"system": "ours", "dataset": "d", "model": "m",
            "metrics": {}, "rows": [row("t1", 1.0), row("t2", 1.0)]});
        let latest = serde_json::json!({"system": "latest-state", "dataset": "d",
            "metrics": {}, "rows": [row("t1", 0.0), row("t2", 1.0)]});
        let md = super::super::report::markdown(&[ours.clone(), latest]);
        assert!(
            md.contains("| latest-state | ours (m) | 2 | -50.0 pp | [-100.0 pp, +0.0 pp] | 0."),
            "{md}"
        );
        assert!(md.contains("10000 resamples, seed 0"), "{md}");
        let alone =
            serde_json::json!({"system": "oracle", "dataset": "d", "metrics": {}, "rows": []});
        assert!(super::super::report::markdown(&[alone]).contains("| oracle | no ours run |"));
    }
}
