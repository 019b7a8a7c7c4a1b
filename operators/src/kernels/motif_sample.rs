//! Approximate δ-temporal motif counts with a confidence interval (the sample mode of
//! `count_temporal_motifs`; `docs/approximate.md` is the user-facing description):
//! first-event sampling, each drawn event's instances counted from its neighbourhood.
//!
//! **Design.** Every instance has exactly one first event (its e1 in the total `(t, eid)`
//! order of §14.1), so the census is `Y = Σ_e X_e` over the window's events, with `X_e` the
//! instances whose first event is `e`. Each event is drawn independently with probability
//! `p` (Poisson sampling), and the `X_e` of the drawn events are counted exactly from the
//! incidence lists of the nodes in their δ-window ([`super::motif_local`]): a drawn event
//! costs its local neighbourhood, not a window of the whole graph — linear in its
//! endpoints' events within δ for the catalogue motifs, by enumeration for the named ones.
//! This is the edge-sampling design of Wang et al. (CIKM 2020) with each instance
//! attributed to its first edge.
//!
//! **Estimator.** `Ŷ = Σ_drawn X_e / p`, the Horvitz–Thompson estimator, unbiased for every
//! seed distribution; `Var(Ŷ) = (1 − p)/p · Σ_e X_e²`, estimated without bias by
//! `V̂ = (1 − p)/p² · Σ_drawn X_e²`. The interval is `Ŷ ± z·√V̂` with
//! `z = Φ⁻¹((1 + confidence)/2)`: the normal interval of the central limit theorem
//! (asymptotic, not a worst-case bound; see the docs for its assumptions). Its lower end is
//! raised to the exact count of the drawn events' instances (a hard lower bound) and both
//! ends are rounded outwards to integers. With `p = 1` the answer is exact and the interval
//! has width zero. Per motif the same holds with `X_e` that motif's count.
//!
//! **Draw.** Event of rank `r` is drawn at `p < 1` when `h(r) < ⌊p·2^32⌋`, with `h` the high
//! 32 bits of the splitmix64 sequence keyed by the seed (`h(r) = mix(key + (r + 1)·γ) >> 32`);
//! so the effective probability is `⌊p·2^32⌋/2^32` and a larger `p` draws a superset of a
//! smaller one.
//!
//! **Sample size.** Fixed (`p = sample_rate`, at least the pilot), or adaptive for a target
//! relative half-width ε: a pilot of `p₀ = MIN_EVENTS/m` (m window events), then rounds that
//! extend the same draw to `max(p*, 1.25·p)` with `p* = z²Q/(ε²Ŷ² + z²Q)` and
//! `Q = Σ_drawn T_e²/p` (`T_e` the instances of `e` over every motif counted) — the `p` at
//! which the half-width of the reported count would be ε — until it is met or the cap
//! (`sample_rate`, default 1) is reached; a round that saw no instance quadruples `p`.
//!
//! **Determinism.** The draw depends on the seed and the ranks alone; drawn events are
//! counted in parallel and reduced as exact integer sums, so the result is bit-identical for
//! any thread count.

use super::motif_instances::matches;
use super::motif_local::{Incidence, Scratch};
use super::motifs::{Motif, MotifEvent};
use super::TieMode;
use rayon::prelude::*;

/// The pilot: the fewest window events drawn (or all when there are fewer). The normal
/// interval undercovers on small samples, whose `X_e` are mostly zero and right-skewed.
pub const MIN_EVENTS: u64 = 2_000;
/// Each adaptive round grows `p` by at least this factor.
const GROWTH: f64 = 1.25;
/// A round that saw no instance grows `p` by this factor.
const BLIND_GROWTH: f64 = 4.0;

/// What is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// One motif (named or catalogue).
    One(Motif),
    /// The 36 catalogue motifs, row-major `M_1_1` … `M_6_6`.
    All,
}

impl Target {
    fn width(self) -> usize {
        match self {
            Target::One(_) => 1,
            Target::All => 36,
        }
    }
}

/// How much to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleParams {
    /// The seed of the draw (two's complement for negative seeds).
    pub seed: u64,
    /// Target relative half-width of the reported count's interval; `None` = fixed rate.
    pub epsilon: Option<f64>,
    /// Two-sided confidence level in (0, 1).
    pub confidence: f64,
    /// Fixed mode: the probability each event is drawn with; adaptive mode: the most it may
    /// reach.
    pub rate: f64,
}

/// One estimate with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// `Σ_drawn X_e / p` (unbiased).
    pub estimate: f64,
    /// Lower end, an integer (at least the exact count of the drawn events' instances).
    pub ci_low: u64,
    /// Upper end, an integer `>= ci_low`.
    pub ci_high: u64,
    /// Half-width over the estimate; `None` when the estimate is 0 but not every event was
    /// drawn (no instance seen: no relative bound can be stated).
    pub relative: Option<f64>,
}

/// The result of [`estimate`].
#[derive(Clone, Debug, PartialEq)]
pub struct SampleResult {
    /// The reported count: the motif, or the sum of the 36.
    pub total: Estimate,
    /// Per motif: one entry for [`Target::One`] (equal to `total`), 36 for [`Target::All`].
    pub per_motif: Vec<Estimate>,
    /// The window's events `m`.
    pub events_total: u64,
    /// The events drawn (their instances counted exactly); equal to `events_total` when the
    /// answer is exact.
    pub events_sampled: u64,
    /// The effective probability each event was drawn with (1 when exact).
    pub inclusion: f64,
    /// The critical value used.
    pub z: f64,
    /// Adaptive mode: whether the reported count's relative half-width reached ε.
    pub target_met: Option<bool>,
}

/// Estimates `target` over `ev` (in the total `(t, eid)` order, node ids below `n`).
/// `p.confidence` must lie in (0, 1) and `p.epsilon`, if any, be positive: the operator
/// checks both before calling.
pub fn estimate(
    ev: &[MotifEvent],
    n: usize,
    delta: i64,
    tie: TieMode,
    target: Target,
    p: &SampleParams,
) -> SampleResult {
    let z = super::normal_quantile::normal_quantile((1.0 + p.confidence) / 2.0).unwrap_or(0.0);
    let m = ev.len() as u64;
    let floor = if m == 0 {
        1.0
    } else {
        (MIN_EVENTS as f64 / m as f64).min(1.0)
    };
    let cap = p.rate.clamp(floor, 1.0);
    let local = Incidence::new(ev, n, delta, tie);
    let draw = Draw::new(p.seed, ev.len());
    let mut sums = Sums::new(target.width());
    // The probability drawn so far (0: nothing yet).
    let mut prob = 0.0;
    let grow = |to: f64, prob: &mut f64, sums: &mut Sums| {
        sums.add(&draw_and_count(&local, &draw, *prob, to, target));
        *prob = to;
    };
    let mut target_met = None;
    match p.epsilon {
        None => grow(cap, &mut prob, &mut sums),
        Some(eps) => {
            let mut next = floor.min(cap);
            loop {
                grow(next, &mut prob, &mut sums);
                let pe = Draw::effective(prob);
                let tot = interval(sums.t, sums.t2, pe, z);
                let met = tot.relative.is_some_and(|r| r <= eps);
                if met || prob >= cap {
                    target_met = Some(met);
                    break;
                }
                next = if sums.t == 0 {
                    prob * BLIND_GROWTH
                } else {
                    let y = sums.t as f64 / pe;
                    let q = sums.t2 as f64 / pe;
                    let need = z * z * q / (eps * eps * y * y + z * z * q);
                    need.max(prob * GROWTH)
                }
                .min(cap);
            }
        }
    }
    let pe = Draw::effective(prob);
    SampleResult {
        total: interval(sums.t, sums.t2, pe, z),
        per_motif: (0..sums.x.len())
            .map(|k| interval(sums.x[k], sums.x2[k], pe, z))
            .collect(),
        events_total: m,
        events_sampled: sums.n,
        inclusion: pe,
        z,
        target_met,
    }
}

/// The seeded draw of events by rank (module header): `hs[r]` is the high half of `h(r)`.
struct Draw {
    hs: Vec<u32>,
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Draw {
    fn new(seed: u64, m: usize) -> Draw {
        let key = mix(seed.wrapping_mul(GAMMA));
        let mut hs = vec![0u32; m];
        hs.par_iter_mut()
            .with_min_len(1 << 16)
            .enumerate()
            .for_each(|(r, h)| {
                *h = (mix(key.wrapping_add((r as u64 + 1).wrapping_mul(GAMMA))) >> 32) as u32;
            });
        Draw { hs }
    }

    /// `⌊p·2^32⌋` (`None` for `p >= 1`: every event).
    fn threshold(p: f64) -> Option<u64> {
        (p < 1.0).then_some((p * 4_294_967_296.0) as u64)
    }

    /// The probability an event is drawn with at `p`.
    fn effective(p: f64) -> f64 {
        match Draw::threshold(p) {
            None => 1.0,
            Some(t) => t as f64 / 4_294_967_296.0,
        }
    }

    /// Is rank `r` drawn at `p`?
    fn drawn(&self, r: usize, p: f64) -> bool {
        match Draw::threshold(p) {
            None => true,
            Some(t) => u64::from(self.hs[r]) < t,
        }
    }
}

/// Exact integer sums over drawn events: per motif `Σ X_e` and `Σ X_e²`, the same of the
/// per-event totals `T_e`, and the events drawn.
#[derive(Clone, Debug, Default)]
struct Sums {
    x: Vec<u64>,
    x2: Vec<u128>,
    t: u64,
    t2: u128,
    n: u64,
}

impl Sums {
    fn new(width: usize) -> Sums {
        Sums {
            x: vec![0; width],
            x2: vec![0; width],
            ..Sums::default()
        }
    }

    fn add(&mut self, o: &Sums) {
        for k in 0..self.x.len() {
            self.x[k] += o.x[k];
            self.x2[k] += o.x2[k];
        }
        self.t += o.t;
        self.t2 += o.t2;
        self.n += o.n;
    }

    fn push(&mut self, counts: &[u64]) {
        let mut tot = 0;
        for (k, &c) in counts.iter().enumerate() {
            self.x[k] += c;
            self.x2[k] += c as u128 * c as u128;
            tot += c;
        }
        self.t += tot;
        self.t2 += tot as u128 * tot as u128;
        self.n += 1;
    }
}

/// The sums over the events drawn at `to` but not at `from`.
fn draw_and_count(local: &Incidence<'_>, draw: &Draw, from: f64, to: f64, target: Target) -> Sums {
    let ev = local.events();
    let width = target.width();
    // The ranks first: folding over every rank would move the fold's state once per rank.
    let ranks: Vec<usize> = (0..ev.len())
        .into_par_iter()
        .with_min_len(1 << 14)
        .filter(|&r| draw.drawn(r, to) && !draw.drawn(r, from))
        .collect();
    ranks
        .into_par_iter()
        .with_min_len(64)
        .fold(
            || (Sums::new(width), Scratch::default()),
            |(mut sums, mut scratch), r1| {
                let mut counts = [0u64; 36];
                match target {
                    Target::All => local.catalogue_from(r1, &mut scratch, &mut counts),
                    Target::One(Motif::Catalogue(i, j)) => {
                        let mut all = [0u64; 36];
                        local.catalogue_from(r1, &mut scratch, &mut all);
                        counts[0] = all[(i as usize - 1) * 6 + j as usize - 1];
                    }
                    Target::One(m) => {
                        let e1 = ev[r1];
                        local.each_from(r1, &mut scratch, |r2, r3| {
                            let (x, y) = (ev[r2 as usize], ev[r3 as usize]);
                            let tri = [(e1.src, e1.dst), (x.src, x.dst), (y.src, y.dst)];
                            counts[0] += u64::from(matches(m, tri));
                        });
                    }
                }
                sums.push(&counts[..width]);
                (sums, scratch)
            },
        )
        .map(|(s, _)| s)
        .reduce(
            || Sums::new(width),
            |mut a, b| {
                a.add(&b);
                a
            },
        )
}

/// The estimate and interval of a total from the drawn events' `Σ X` and `Σ X²` at
/// inclusion probability `p`.
fn interval(sum: u64, sq: u128, p: f64, z: f64) -> Estimate {
    if p >= 1.0 {
        return Estimate {
            estimate: sum as f64,
            ci_low: sum,
            ci_high: sum,
            relative: Some(0.0),
        };
    }
    let est = sum as f64 / p;
    let half = z * ((1.0 - p) / (p * p) * sq as f64).sqrt();
    let ci_low = ((est - half).ceil().max(0.0) as u64).max(sum);
    let ci_high = ((est + half).floor().max(0.0) as u64).max(ci_low);
    Estimate {
        estimate: est,
        ci_low,
        ci_high,
        relative: (est > 0.0).then(|| half / est),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_nest_and_depend_on_the_seed() {
        let a = Draw::new(7, 100_000);
        let small: Vec<usize> = (0..100_000).filter(|&r| a.drawn(r, 0.01)).collect();
        let big: Vec<usize> = (0..100_000).filter(|&r| a.drawn(r, 0.05)).collect();
        assert!(small.iter().all(|r| big.contains(r)));
        // About p·n drawn (5 standard deviations).
        assert!(
            (small.len() as f64 - 1_000.0).abs() < 5.0 * 1_000f64.sqrt(),
            "{}",
            small.len()
        );
        assert!(
            (big.len() as f64 - 5_000.0).abs() < 5.0 * 5_000f64.sqrt(),
            "{}",
            big.len()
        );
        let b = Draw::new(8, 100_000);
        let other: Vec<usize> = (0..100_000).filter(|&r| b.drawn(r, 0.01)).collect();
        assert_ne!(small, other);
        assert!((0..1000).all(|r| a.drawn(r, 1.0)));
        assert_eq!(Draw::effective(1.0), 1.0);
    }

    #[test]
    fn full_sample_is_exact_with_zero_width() {
        let e = interval(8, 34, 1.0, 1.96);
        assert_eq!((e.estimate, e.ci_low, e.ci_high), (8.0, 8, 8));
    }

    #[test]
    fn interval_by_hand() {
        // Σ X = 3, Σ X² = 5 at p = 1/4: Ŷ = 12, V̂ = (3/4)/(1/16)·5 = 60.
        let e = interval(3, 5, 0.25, 2.0);
        assert_eq!(e.estimate, 12.0);
        let half = 2.0 * 60f64.sqrt();
        assert_eq!(e.ci_low, ((12.0 - half).ceil() as u64).max(3));
        assert_eq!(e.ci_high, (12.0 + half).floor() as u64);
        assert_eq!(e.relative, Some(half / 12.0));
    }
}
