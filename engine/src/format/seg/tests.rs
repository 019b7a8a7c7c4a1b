use super::encode::{
    bit_lengths, costs_at_least, deltas_of, fine_lengths, frame_and_span, frame_and_span_of,
    in_frame, patched_frame, select_ranks, sorted_bit_lengths, sorted_fine_lengths,
};
use super::*;
use crate::format::le::Cursor;
use proptest::prelude::*;

fn roundtrip(v: &[i64]) {
    for (enc, codec) in [
        (put_for as fn(&mut Vec<u8>, &[i64]), codec::FOR),
        (put_dfor, codec::DFOR),
    ] {
        let mut b = Vec::new();
        enc(&mut b, v);
        let mut r = Cursor::new(&b);
        assert_eq!(r.int_col(codec, v.len()).unwrap(), v, "codec {codec}");
        assert!(r.done().is_ok());
    }
    let mut b = Vec::new();
    let c = put_int(&mut b, v);
    let mut r = Cursor::new(&b);
    assert_eq!(r.int_col(c, v.len()).unwrap(), v);
}

#[test]
fn dfor_packs_mostly_increasing_columns_with_outliers() {
    let mut v: Vec<i64> = (0..10_000).collect();
    v[5_000] = 3;
    v[7_000] = i64::MIN;
    roundtrip(&v);
    let mut b = Vec::new();
    assert_eq!(put_int(&mut b, &v), codec::DFOR);
    assert!(b.len() < 10_000 / 4 + 100, "{} bytes", b.len());
    roundtrip(&[]);
    roundtrip(&[i64::MAX, i64::MIN, 0, -1, 1]);
}

proptest! {
    #[test]
    fn int_codecs_round_trip(v in prop::collection::vec(
        prop_oneof![8 => 0..64i64, 1 => any::<i64>()], 0..300)) {
        roundtrip(&v);
    }

    #[test]
    fn random_access_choice_equals_the_smallest_encoding(v in prop::collection::vec(
        prop_oneof![8 => 0..64i64, 2 => -3..3i64, 1 => any::<i64>()], 0..400),
        ascending in any::<bool>()) {
        let mut v = v;
        if ascending {
            v.sort_unstable();
        }
        check_choice(&v);
    }
}

/// The frame of the sorting computation (the oracle of `patched_frame`).
fn sorted_frame(vals: &[i64]) -> (i64, u32) {
    let mut sorted = vals.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let (mut best_min, mut best_w, mut best_cost) = (0i64, 0u32, u128::MAX);
    if n > 0 {
        let mut bases: Vec<i64> = [0, n / 10_000, n / 1_000, n / 100]
            .iter()
            .map(|&i| sorted[i.min(n - 1)])
            .collect();
        bases.dedup();
        for &m in &bases {
            let lo = sorted.partition_point(|&x| x < m);
            for w in 0..=64u32 {
                let hi = if w == 64 {
                    n
                } else {
                    let top = (m as i128) + (1i128 << w);
                    sorted.partition_point(|&x| (x as i128) < top)
                };
                let exc = (n - (hi - lo)) as u128;
                let cost = (n as u128 * w as u128).div_ceil(8) + exc * 12;
                if cost < best_cost {
                    (best_min, best_w, best_cost) = (m, w, cost);
                }
                if hi == n {
                    break;
                }
            }
        }
    }
    (best_min, best_w)
}

/// The values of `vals` outside the frame `f`, counted one by one.
fn exceptions(vals: &[i64], f: super::encode::Frame) -> usize {
    vals.iter()
        .filter(|&&x| !super::encode::in_frame(x, f.min, f.w))
        .count()
}

/// `put_int_ra` writes the smallest of the three encodings (FOR on a tie, then DFORS),
/// byte for byte, and the frame equals the sorting computation's.
fn check_choice(v: &[i64]) {
    let f = patched_frame(v.iter().copied());
    assert_eq!((f.min, f.w), sorted_frame(v), "frame of {} values", v.len());
    assert_eq!(
        f.n_exc,
        exceptions(v, f),
        "exceptions of {} values",
        v.len()
    );
    // The FOR width `put_int_ra` reads off the frame search: the bits of max − min.
    let span = v.iter().max().zip(v.iter().min()).map_or(0, |(&hi, &lo)| {
        64 - (hi as u64).wrapping_sub(lo as u64).leading_zeros()
    });
    assert_eq!(
        frame_and_span(v.iter().copied()).1,
        span,
        "span of {} values",
        v.len()
    );
    // The slice's search (binary searches when the values ascend) finds the same.
    let (f, span_of) = frame_and_span_of(v);
    assert_eq!(
        (f.min, f.w),
        sorted_frame(v),
        "slice frame of {} values",
        v.len()
    );
    assert_eq!(f.n_exc, exceptions(v, f), "slice exceptions");
    assert_eq!(span_of, span, "slice span of {} values", v.len());
    let deltas: Vec<i64> = deltas_of(v).collect();
    let f = patched_frame(deltas_of(v));
    assert_eq!((f.min, f.w), sorted_frame(&deltas), "frame of deltas");
    assert_eq!(f.n_exc, exceptions(&deltas, f), "exceptions of deltas");
    let mut best = Vec::new();
    put_for(&mut best, v);
    let mut c = codec::FOR;
    for (enc, k) in [
        (put_dfors as fn(&mut Vec<u8>, &[i64]), codec::DFORS),
        (put_pfor, codec::PFOR),
    ] {
        let mut b = Vec::new();
        enc(&mut b, v);
        if b.len() < best.len() {
            (best, c) = (b, k);
        }
    }
    let mut out = Vec::new();
    assert_eq!(put_int_ra(&mut out, v), c, "codec for {} values", v.len());
    assert!(out == best, "bytes for {} values", v.len());
}

/// Long columns take the bounded selection of the frame's quantiles (`select_ranks`).
#[test]
fn random_access_choice_of_long_columns() {
    let mut r = tgms_testkit::Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || r.next_u64();
    let n = 70_000 + (next() % 5_000) as usize;
    let wide: Vec<i64> = (0..n).map(|_| next() as i64).collect();
    let small: Vec<i64> = (0..n).map(|_| (next() % 7) as i64 - 3).collect();
    let sparse: Vec<i64> = (0..n)
        .map(|_| {
            if next() % 50 == 0 {
                (next() >> 20) as i64
            } else {
                0
            }
        })
        .collect();
    let mut asc: Vec<i64> = (0..n as i64).map(|i| i * 3 + (next() % 2) as i64).collect();
    asc[n / 2] = i64::MIN;
    let negative: Vec<i64> = (0..n).map(|_| -((next() % 1_000_000) as i64)).collect();
    let extremes: Vec<i64> = (0..n)
        .map(|i| [i64::MIN, i64::MAX, 0, -1][(i + (next() % 2) as usize) % 4])
        .collect();
    let constant = vec![-7i64; n];
    let arithmetic: Vec<i64> = (0..n as i64).map(|i| 5 - 3 * i).collect();
    let mut sorted = wide.clone();
    sorted.sort_unstable();
    for v in [
        &wide,
        &small,
        &sparse,
        &asc,
        &negative,
        &extremes,
        &constant,
        &arithmetic,
        &sorted,
    ] {
        check_choice(v);
        for r in [0, n / 10_000, n / 1_000, n / 100, n / 2, n - 1] {
            let mut s = v.to_vec();
            s.sort_unstable();
            assert_eq!(
                select_ranks(v.iter().copied(), n, &[r]),
                vec![s[r]],
                "rank {r}"
            );
        }
    }
}

/// [`bit_lengths`] of `vals` over `bases`, checked against a direct count per base: the
/// values below it, and per bit length `l` those at or above it `l` bits away.
fn checked_bit_lengths(vals: &[i64], bases: &[i64]) -> Vec<[usize; 65]> {
    let (below, by_len) = bit_lengths(vals.iter().copied(), bases);
    assert_eq!(below.len(), bases.len());
    for (k, &m) in bases.iter().enumerate() {
        assert_eq!(
            below[k],
            vals.iter().filter(|&&x| x < m).count(),
            "base {m}"
        );
        for l in 0..=64u32 {
            let n = vals
                .iter()
                .filter(|&&x| {
                    x >= m && 128 - ((x as i128 - m as i128) as u128).leading_zeros() == l
                })
                .count();
            assert_eq!(by_len[k][l as usize], n, "base {m}, {l} bits of {vals:?}");
        }
    }
    by_len
}

/// The bit-length histograms of any number of bases (groups of four in one pass each)
/// equal a direct count per base.
#[test]
fn bit_lengths_of_more_bases_than_one_pass_takes() {
    let vals = [-5i64, 0, 1, 2, 3, 7, 8, 1000, i64::MIN, i64::MAX];
    let bases = [i64::MIN, -5, 0, 1, 8, 1000];
    let by_len = checked_bit_lengths(&vals, &bases);
    assert_eq!(
        (by_len[0][0], by_len[0][63], by_len[0][64]),
        (1, 1, 8),
        "from i64::MIN: itself 0 bits, -5 63 bits, 0 and above 64"
    );
    assert_eq!(by_len[3][0], 1, "1 - 1 has no bits");
    assert_eq!(bit_lengths([1i64].into_iter(), &[]), (vec![], vec![]));
}

/// FOR's bit stream, written a word at a time, equals the stream built bit by bit: value
/// `i`'s bit `j` at stream bit `i·w + j`, least significant bit of each byte first.
#[test]
fn for_bits_equal_the_stream_built_bit_by_bit() {
    let mut r = tgms_testkit::Rng::new(0x5EED_0F0B_17E5);
    for n in [0usize, 1, 2, 7, 8, 9, 63, 64, 65, 200] {
        for top in [0u32, 1, 3, 7, 8, 13, 31, 32, 33, 57, 63, 64] {
            let v: Vec<i64> = (0..n)
                .map(|_| {
                    let x = r.next_u64();
                    (if top == 64 {
                        x
                    } else {
                        x & ((1u64 << top) - 1)
                    }) as i64
                })
                .collect();
            let mut out = Vec::new();
            put_for(&mut out, &v);
            let min = v.iter().copied().min().unwrap_or(0);
            let maxd = v
                .iter()
                .map(|&x| (x as u64).wrapping_sub(min as u64))
                .max()
                .unwrap_or(0);
            let w = 64 - maxd.leading_zeros() as usize;
            let mut want = vec![0u8; (n * w).div_ceil(8)];
            for (i, &x) in v.iter().enumerate() {
                let d = (x as u64).wrapping_sub(min as u64);
                for j in 0..w {
                    if d >> j & 1 == 1 {
                        want[(i * w + j) / 8] |= 1 << ((i * w + j) % 8);
                    }
                }
            }
            assert_eq!(
                &out[..13],
                &[
                    &(n as u32).to_le_bytes()[..],
                    &min.to_le_bytes(),
                    &[w as u8]
                ]
                .concat()[..],
                "header of {n} values under 2^{top}"
            );
            assert_eq!(&out[13..], &want[..], "bits of {n} values under 2^{top}");
        }
    }
}

/// The bit-length histograms equal a direct count per base for random values and bases,
/// extremes and powers of two included.
#[test]
fn bit_lengths_equal_a_direct_count() {
    let mut r = tgms_testkit::Rng::new(0xB17_1E46);
    for round in 0..200 {
        let scale = [4u64, 1 << 10, 1 << 40, u64::MAX][round % 4];
        let vals: Vec<i64> = (0..1 + r.next_u64() % 300)
            .map(|_| pick(&mut r, scale))
            .collect();
        let bases: Vec<i64> = (0..r.next_u64() % 7).map(|_| pick(&mut r, scale)).collect();
        checked_bit_lengths(&vals, &bases);
    }
}

/// A random value for the histogram tests: an extreme of `i64`, a power of two, or one of
/// `scale` values around 0.
fn pick(r: &mut tgms_testkit::Rng, scale: u64) -> i64 {
    match r.next_u64() % 8 {
        0 => [i64::MIN, i64::MAX, 0, -1][(r.next_u64() % 4) as usize],
        1 => 1i64 << (r.next_u64() % 63),
        _ => ((r.next_u64() % scale) as i64).wrapping_sub((scale / 2) as i64),
    }
}

/// The counts of ascending values taken by binary searches equal those of the passes, for
/// random columns of every scale, repeated values and the extremes of `i64` included.
#[test]
fn sorted_counts_equal_the_passes() {
    let mut r = tgms_testkit::Rng::new(0x50_27ED);
    for round in 0..300 {
        let scale = [4u64, 1 << 10, 1 << 40, u64::MAX][round % 4];
        let mut vals: Vec<i64> = (0..1 + r.next_u64() % 300)
            .map(|_| pick(&mut r, scale))
            .collect();
        vals.sort_unstable();
        assert_eq!(
            sorted_fine_lengths(&vals, vals[0]),
            fine_lengths(vals.iter().copied(), vals[0]),
            "{vals:?}"
        );
        let bases: Vec<i64> = (0..r.next_u64() % 7).map(|_| pick(&mut r, scale)).collect();
        assert_eq!(
            sorted_bit_lengths(&vals, &bases),
            bit_lengths(vals.iter().copied(), &bases),
            "{vals:?} over {bases:?}"
        );
    }
}

/// The smallest value's histogram rules out only bases with no frame (of width below 64)
/// cheaper than the cost it is asked about, checked against every width's exact cost; and
/// it does rule some out.
#[test]
fn a_ruled_out_base_has_no_cheaper_frame() {
    let mut r = tgms_testkit::Rng::new(0xF1AE_5107);
    let (mut ruled_out, mut kept) = (0, 0);
    for round in 0..400 {
        let scale = [16u64, 1 << 12, 1 << 33, u64::MAX][round % 4];
        let n = 1 + (r.next_u64() % 400) as usize;
        let vals: Vec<i64> = (0..n)
            .map(|_| match r.next_u64() % 16 {
                0 => [i64::MIN, i64::MAX, -1][(r.next_u64() % 3) as usize],
                1 => 1i64 << (r.next_u64() % 63),
                _ => (r.next_u64() % scale) as i64,
            })
            .collect();
        let mut sorted = vals.clone();
        sorted.sort_unstable();
        let fine = fine_lengths(vals.iter().copied(), sorted[0]);
        for _ in 0..4 {
            let m = sorted[(r.next_u64() % n as u64) as usize];
            let cheapest = (0..64u32)
                .map(|w| {
                    // `⌈n × w / 8⌉ + 12 × exceptions` (format-spec.md §6.4).
                    let exc = vals.iter().filter(|&&x| !in_frame(x, m, w)).count() as u128;
                    (n as u128 * u128::from(w)).div_ceil(8) + 12 * exc
                })
                .min()
                .expect("64 widths");
            let delta = m.wrapping_sub(sorted[0]) as u64;
            for cost in [
                cheapest.saturating_sub(1),
                cheapest,
                cheapest + 1,
                cheapest * 2,
            ] {
                if costs_at_least(n, delta, &fine, cost) {
                    ruled_out += 1;
                    assert!(
                        cheapest >= cost,
                        "base {m} of {vals:?}: {cheapest} < {cost}"
                    );
                } else {
                    kept += 1;
                }
            }
        }
    }
    assert!(
        ruled_out > 100 && kept > 100,
        "{ruled_out} ruled out, {kept} kept"
    );
}

/// The groupings over keys in blocks of any size (empty ones included), into buffers that
/// hold stale values, equal a direct computation: per key below `n`, the positions that
/// have it, ascending; keys at or above `n` dropped but counted as positions.
#[test]
fn groupings_over_blocks_equal_a_direct_grouping() {
    let mut r = tgms_testkit::Rng::new(0x6_0B1E);
    for _ in 0..100 {
        let n = 1 + (r.next_u64() % 50) as usize;
        let keys: Vec<u32> = (0..r.next_u64() % 400)
            .map(|_| (r.next_u64() % (n as u64 + 3)) as u32)
            .collect();
        let mut want_off = vec![0i64];
        let mut want_list = Vec::new();
        for k in 0..n as u32 {
            want_list.extend((0..keys.len() as i64).filter(|&i| keys[i as usize] == k));
            want_off.push(want_list.len() as i64);
        }
        let mut blocks: Vec<&[u32]> = Vec::new();
        let mut rest = &keys[..];
        while !rest.is_empty() {
            let (head, tail) = rest.split_at((r.next_u64() % 9).min(rest.len() as u64) as usize);
            blocks.push(head);
            rest = tail;
        }
        let stale = [vec![7i64; 5], vec![-1i64; 900]];
        let [off, list] = group_both(n, blocks.iter().copied(), stale);
        assert_eq!(off, want_off, "offsets of {keys:?} below {n}");
        assert_eq!(list, want_list, "list of {keys:?} below {n}");
        assert_eq!(group(n, keys.iter().copied(), true), want_list);
        assert_eq!(group(n, keys.iter().copied(), false), want_off);
    }
}
