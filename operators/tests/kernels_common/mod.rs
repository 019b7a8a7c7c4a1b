//! Shared helpers of the kernel tests: the seeded generator (`tgms_testkit::Rng`) and event generators.
#![allow(dead_code)]

use tgms_operators::kernels::TEdge;

pub use tgms_testkit::Rng;

pub fn eid_from(x: u64) -> [u8; 12] {
    let mut e = [0u8; 12];
    e[..8].copy_from_slice(&x.to_be_bytes());
    e[8..].copy_from_slice(&((x >> 17) as u32).to_be_bytes());
    e
}

/// Random events: `n` nodes, `m` events, times in `0..=t_max`, unique random eids, self loops
/// with probability ~1/8, interval lengths 1 or (with `intervals`) up to `max_len`.
pub fn random_edges(
    rng: &mut Rng,
    n: u32,
    m: usize,
    t_max: i64,
    intervals: bool,
    max_len: i64,
) -> Vec<TEdge> {
    let mut out = Vec::with_capacity(m);
    let mut used = std::collections::HashSet::new();
    for _ in 0..m {
        let src = rng.below(n as u64) as u32;
        let dst = if rng.below(8) == 0 {
            src
        } else {
            rng.below(n as u64) as u32
        };
        let t = rng.int(0, t_max + 1);
        let len = if intervals && rng.below(3) == 0 {
            rng.int(2, max_len.max(2) + 1)
        } else {
            1
        };
        let mut x = rng.next_u64();
        while !used.insert(x) {
            x = rng.next_u64();
        }
        out.push(TEdge {
            src,
            dst,
            t,
            t_end: t + len,
            eid: eid_from(x),
        });
    }
    out
}

pub fn hex_eid(s: &str) -> [u8; 12] {
    let mut e = [0u8; 12];
    for i in 0..12 {
        e[i] = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    e
}

pub fn ev(src: u32, dst: u32, t: i64, eid: [u8; 12]) -> TEdge {
    TEdge {
        src,
        dst,
        t,
        t_end: t + 1,
        eid,
    }
}

/// Runs `f` on a 1-thread pool, on a 4-thread pool and on the default (global) pool; asserts
/// that the 4-thread and default results agree and returns the 1- and 4-thread results.
pub fn one_and_many<T: Send + PartialEq + std::fmt::Debug>(f: impl Fn() -> T + Sync) -> (T, T) {
    let p1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let p4 = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let (one, four) = (p1.install(&f), p4.install(&f));
    assert_eq!(f(), four, "default pool differs");
    (one, four)
}
