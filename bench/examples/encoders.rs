//! Speed of the image's integer column encoders (`format-spec.md` §6.4): `put_int_ra` (the
//! smallest of FOR, DFORS and PFOR, which every compaction and bulk load runs per integer
//! chunk), `put_for` and `put_int` (FOR or DFOR, flush segments) over six generated columns
//! of `N` values shaped like an image's (random ids, ascending row lists, a sparse column,
//! mostly ascending times with outliers, a constant, small values), best of 3 runs each.
//! It prints a hash of every byte written (with short prefixes of each column too), so two
//! builds can be checked to write the same bytes.
//!
//! Run: `cargo run --release -p tgms-bench --example encoders -- [N]` (default 10,000,000).

use std::hash::{Hash, Hasher};
use std::time::Instant;
use tgms_engine::format::seg::{put_dfor, put_for, put_int, put_int_ra};

fn lcg(s: &mut u64) -> u64 {
    *s = s
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *s >> 17
}

/// Best of 3 runs of `f` writing into a cleared buffer: (ms, the buffer, f's result).
fn best<T>(f: impl Fn(&mut Vec<u8>) -> T) -> (f64, Vec<u8>, T) {
    let mut out = Vec::new();
    let mut ms = f64::MAX;
    let mut got = None;
    for _ in 0..3 {
        out.clear();
        let t = Instant::now();
        got = Some(f(&mut out));
        ms = ms.min(t.elapsed().as_secs_f64() * 1e3);
    }
    (ms, out, got.expect("ran"))
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let mut s = 7u64;
    let mut acc = 0i64;
    let mut t = 1_000_000_000i64;
    let cols: Vec<(&str, Vec<i64>)> = vec![
        (
            "ids20",
            (0..n).map(|_| (lcg(&mut s) % 1_000_000) as i64).collect(),
        ),
        (
            "asc_gaps",
            (0..n)
                .map(|_| {
                    acc += (lcg(&mut s) % 2000) as i64;
                    acc
                })
                .collect(),
        ),
        (
            "sparse",
            (0..n)
                .map(|_| {
                    if lcg(&mut s).is_multiple_of(100) {
                        (lcg(&mut s) % 50_000) as i64
                    } else {
                        0
                    }
                })
                .collect(),
        ),
        (
            "vt_mostly_asc",
            (0..n)
                .map(|_| {
                    t += (lcg(&mut s) % 3) as i64;
                    if lcg(&mut s).is_multiple_of(1000) {
                        t - 5_000_000
                    } else {
                        t
                    }
                })
                .collect(),
        ),
        ("const", vec![1; n]),
        ("small", (0..n).map(|_| (lcg(&mut s) % 7) as i64).collect()),
    ];
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (name, v) in &cols {
        let (ra_ms, ra, codec) = best(|o| put_int_ra(o, v));
        let (for_ms, fo, ()) = best(|o| put_for(o, v));
        let (int_ms, it, int_codec) = best(|o| put_int(o, v));
        let mut df = Vec::new();
        put_dfor(&mut df, v);
        println!(
            "{name:>14}: put_int_ra {ra_ms:7.1} ms (codec {codec}, {} B)  put_for {for_ms:6.1} ms  \
             put_int {int_ms:7.1} ms (codec {int_codec})",
            ra.len()
        );
        for bytes in [&ra, &fo, &it, &df] {
            bytes.hash(&mut h);
        }
        for k in [0usize, 1, 2, 31, 32, 33, 65, 1000, 70_000] {
            let w = &v[..k.min(v.len())];
            let mut o = Vec::new();
            put_int_ra(&mut o, w);
            put_for(&mut o, w);
            put_int(&mut o, w);
            put_dfor(&mut o, w);
            o.hash(&mut h);
        }
    }
    println!("hash of every byte written: {:016x}", h.finish());
}
