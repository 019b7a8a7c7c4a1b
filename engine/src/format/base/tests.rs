use super::*;
use crate::format::seg::{put_dfors, put_for, put_pfor, DFORS_STRIDE};
use crate::rows::Rows;
use crate::store::{Options, Store};
use crate::Op;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Random access (get, range) of a codec-5, a codec-6 and a FOR column equals the full
/// decode.
fn check_random_access(v: &[i64]) {
    for (c, enc) in [
        (codec::DFORS, put_dfors as fn(&mut Vec<u8>, &[i64])),
        (codec::PFOR, put_pfor),
        (codec::FOR, put_for),
    ] {
        let mut b = vec![0xAA; 3]; // the column need not start at 0
        enc(&mut b, v);
        let full = seg::decode_int(&b[3..], c, v.len()).unwrap();
        assert_eq!(full, v);
        let col = Col::parse(&b, 3, b.len(), c).unwrap();
        assert_eq!(col.len(), v.len());
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(col.get(&b, i), x, "codec {c} value {i} of {}", v.len());
        }
        assert_eq!(col.get(&b, v.len()), 0);
        assert_eq!(col.range(&b, 0, v.len()), v);
        for (a, e) in [(1, 2), (100, 300), (127, 129), (5, 5), (200, 10_000)] {
            let (a2, e2) = (a.min(v.len()), e.min(v.len()).max(a.min(v.len())));
            assert_eq!(col.range(&b, a, e), v[a2..e2], "range {a}..{e}");
        }
    }
    check_arith_access(v);
}

fn arb_column() -> impl Strategy<Value = Vec<i64>> {
    let len = prop_oneof![
        Just(0usize),
        Just(1),
        126..=130usize,
        254..=258usize,
        0..700usize
    ];
    (len, any::<u64>()).prop_flat_map(|(n, _)| {
        prop::collection::vec(
            prop_oneof![
                6 => 0..4i64,
                2 => 0..1000i64,
                1 => -5..0i64,
                1 => any::<i64>(),
            ],
            n,
        )
        .prop_map(|deltas| {
            // Mostly growing columns (so DFORS has a small width and exceptions).
            let mut cur = 0i64;
            deltas
                .into_iter()
                .map(|d| {
                    cur = cur.wrapping_add(d);
                    cur
                })
                .collect()
        })
    })
}

/// Sparse columns: mostly small values (or one repeated value), with random spikes.
fn arb_sparse() -> impl Strategy<Value = Vec<i64>> {
    let len = prop_oneof![
        Just(0usize),
        Just(1),
        30..=34usize,
        62..=66usize,
        95..=97usize,
        0..400usize
    ];
    (len, 0..4u8).prop_flat_map(|(n, kind)| {
        let val = match kind {
            0 => prop_oneof![Just(7i64)].boxed(),
            1 => prop_oneof![20 => Just(0i64), 1 => 1..100_000i64].boxed(),
            2 => prop_oneof![
                12 => 0..4i64,
                1 => any::<i64>(),
                1 => 1_000..1_000_000i64
            ]
            .boxed(),
            _ => prop_oneof![3 => 0..3i64, 1 => 0..1i64 << 40].boxed(),
        };
        prop::collection::vec(val, n)
    })
}

/// Random access, plus `lower_bound` on the sorted column, of a PFOR column.
fn check_pfor(v: &[i64]) {
    check_random_access(v);
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    let mut b = Vec::new();
    put_pfor(&mut b, &sorted);
    let col = Col::parse(&b, 0, b.len(), codec::PFOR).unwrap();
    for x in sorted.iter().copied().chain([i64::MIN, i64::MAX, 0, 5]) {
        assert_eq!(col.lower_bound(&b, x), sorted.partition_point(|&y| y < x));
    }
}

proptest! {
    #[test]
    fn pfor_random_access_equals_full_decode(v in arb_sparse()) {
        check_pfor(&v);
    }
    #[test]
    fn dfors_random_access_equals_full_decode(v in arb_column()) {
        check_random_access(&v);
    }
    #[test]
    fn dfors_random_access_of_arbitrary_values(
        v in prop::collection::vec(any::<i64>(), 0..300)) {
        check_random_access(&v);
    }
}

#[test]
fn dfors_exceptions_and_block_boundaries() {
    let mut v: Vec<i64> = (0..1000).collect();
    check_random_access(&v);
    v[127] = i64::MIN;
    v[128] = 3;
    v[256] = i64::MAX;
    v[999] = -1;
    check_random_access(&v);
    let mut b = Vec::new();
    put_dfors(&mut b, &v);
    let Col::Dfors(d) = Col::parse(&b, 0, b.len(), codec::DFORS).unwrap() else {
        panic!("not dfors");
    };
    assert!(d.exc.n >= 4 && d.deltas.width == 0, "{d:?}");
    for n in [127usize, 128, 129, 256, 257] {
        check_random_access(&v[..n]);
        check_random_access(&v[1..n]);
    }
}

#[test]
fn pfor_exceptions_and_block_boundaries() {
    for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 200] {
        check_pfor(&vec![0; n]);
        check_pfor(&vec![-3; n]);
        let mut v = vec![0i64; n];
        for i in (0..n).filter(|i| i % 31 == 0 || i % 32 == 31) {
            v[i] = 1_000_000 + i as i64;
        }
        check_pfor(&v);
        // Every value an exception of one block, the next without any.
        let v: Vec<i64> = (0..n as i64)
            .map(|i| if i % 64 < 32 { i64::MAX - i } else { 1 })
            .collect();
        check_pfor(&v);
    }
}

#[test]
fn put_int_ra_picks_pfor_for_sparse_columns() {
    // A `reason` column: 0 for most rows, a string id + 1 for corrections.
    let v: Vec<i64> = (0..10_000)
        .map(|i| if i % 97 == 0 { 400 + i % 300 } else { 0 })
        .collect();
    let mut b = Vec::new();
    assert_eq!(seg::put_int_ra(&mut b, &v), codec::PFOR);
    let (mut f, mut d) = (Vec::new(), Vec::new());
    put_for(&mut f, &v);
    put_dfors(&mut d, &v);
    assert!(b.len() < f.len() && b.len() < d.len());
    assert_eq!(seg::decode_int(&b, codec::PFOR, v.len()).unwrap(), v);
    let Col::Pfor(p) = Col::parse(&b, 0, b.len(), codec::PFOR).unwrap() else {
        panic!("not pfor");
    };
    assert_eq!((p.vals.min, p.vals.width, p.exc.n), (0, 0, 104));
    // Dense ascending and small-width columns keep DFORS and FOR.
    let asc: Vec<i64> = (0..1000).map(|i| i * 3).collect();
    assert_eq!(seg::put_int_ra(&mut Vec::new(), &asc), codec::DFORS);
    let small: Vec<i64> = (0..1000).map(|i| i % 4).collect();
    assert_eq!(seg::put_int_ra(&mut Vec::new(), &small), codec::FOR);
}

#[test]
fn pfor_corruption_is_refused() {
    let mut v = vec![0i64; 200];
    for i in [3usize, 40, 41, 100, 199] {
        v[i] = 5_000 + i as i64;
    }
    let mut b = Vec::new();
    put_pfor(&mut b, &v);
    // The full decoder refuses every damage below; the open-time parse refuses damage to
    // the list and the lengths, and reads through a damaged start without panicking
    // (starts are checked by the full decoder only, keeping an open O(exceptions)).
    let refused = |b: &[u8]| {
        if let Ok(c) = Col::parse(b, 0, b.len(), codec::PFOR) {
            (0..v.len()).for_each(|i| {
                let _ = c.get(b, i);
            });
            drop(c.range(b, 0, v.len()));
        }
        seg::decode_int(b, codec::PFOR, v.len()).is_err()
    };
    assert!(!refused(&b));
    // Layout: count 4 | min 8 | width 1 (0: all non-exceptions are 0) | n_exc 4 | list.
    assert_eq!(b[12], 0);
    let list = 17;
    assert_eq!(u32::from_le_bytes(b[13..17].try_into().unwrap()), 5);
    // The starts column ends the chunk: count 4 | min 8 | width 1 | bits.
    let starts = list + 5 * 12;
    let want = [0i64, 1, 3, 3, 4, 4, 4];
    let mut tail = Vec::new();
    put_for(&mut tail, &want);
    assert_eq!(&b[starts..], &tail[..]);
    // Flip every bit of the starts column's min and packed bits (7 values of 3 bits;
    // the padding bits after them are not read).
    for at in starts + 4..b.len() {
        if at == starts + 12 {
            continue; // the width: a length mismatch, refused too (below)
        }
        let bits = if at == b.len() - 1 { 21 - 16 } else { 8 };
        for bit in 0..bits {
            let mut bad = b.clone();
            bad[at] ^= 1 << bit;
            assert!(refused(&bad), "byte {at} bit {bit}");
        }
    }
    let mut bad = b.clone();
    bad[starts + 12] ^= 1;
    assert!(refused(&bad));
    // Out-of-order indexes (swap entries 1 and 2), a repeated index, one out of range.
    let mut bad = b.clone();
    let (e1, e2) = (list + 12, list + 24);
    let x = bad[e1..e1 + 12].to_vec();
    bad.copy_within(e2..e2 + 12, e1);
    bad[e2..e2 + 12].copy_from_slice(&x);
    assert!(refused(&bad));
    let mut bad = b.clone();
    bad[e2..e2 + 4].copy_from_slice(&40u32.to_le_bytes());
    assert!(refused(&bad));
    let mut bad = b.clone();
    bad[list + 48..list + 52].copy_from_slice(&200u32.to_le_bytes());
    assert!(refused(&bad));
    // Too many exceptions, a byte left over, a byte missing.
    let mut bad = b.clone();
    bad[13..17].copy_from_slice(&201u32.to_le_bytes());
    assert!(refused(&bad));
    let mut bad = b.clone();
    bad.push(0);
    assert!(refused(&bad));
    assert!(refused(&b[..b.len() - 1]));
    // PFOR in a minor-0/1 position is refused by the directory check (see
    // codec_and_minor_rules_of_the_directory).
}

/// ARITH (codec 8, minor 6): a column whose deltas are one value but for a few (the
/// breaks) is written as its line and its breaks whenever that is smaller than the other
/// codecs, and reads back through `Col` (get, range, lower_bound) and the full decoder as
/// the values, wrapping included; any other column, and every column of a minor-4 image,
/// keeps the other codecs.
#[test]
fn piecewise_arithmetic_columns_are_arith_in_minor_6_only() {
    let ident: Vec<i64> = (0..10_000).collect();
    let down: Vec<i64> = (0..500).map(|i| 7_000_000 - 3 * i).collect();
    let big: Vec<i64> = (0..40).map(|i| i64::MAX - 1_000_000 + i * 25_000).collect();
    // Row identities after a few corrections: the identity with some values repeated.
    let mut fixed: Vec<i64> = (0..20_000).collect();
    for at in [17usize, 5_000, 5_001, 19_000] {
        fixed.insert(at, fixed[at]);
    }
    // Mostly one value: an origin column with a few corrections.
    let flags: Vec<i64> = (0..20_000)
        .map(|i| if i % 4_999 == 7 { 3 } else { 4 })
        .collect();
    let wraps = vec![i64::MAX - 1, i64::MAX, i64::MIN, i64::MIN + 1];
    for (v, breaks) in [
        (&ident, 0),
        (&down, 0),
        (&big, 0),
        (&fixed, 4),
        (&flags, 8),
        (&wraps, 0),
    ] {
        let mut b = vec![0xAA; 3];
        let c = seg::put_int_image(&mut b, v, seg::SEG_MINOR_ARITH);
        assert_eq!(c, codec::ARITH);
        assert_eq!(b.len() - 3, seg::ARITH_HEAD + seg::ARITH_BREAK * breaks);
        assert_eq!(seg::decode_int(&b[3..], c, v.len()).unwrap(), *v);
        let col = Col::parse(&b, 3, b.len(), c).unwrap();
        assert_eq!(col.len(), v.len());
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(col.get(&b, i), x, "value {i}");
        }
        assert_eq!(col.get(&b, v.len()), 0);
        assert_eq!(col.range(&b, 0, v.len()), *v);
        for (a, e) in [(1, 4), (16, 20), (5_000, 5_010), (v.len() - 2, v.len() + 5)] {
            let (a2, e2) = (a.min(v.len()), e.min(v.len()));
            assert_eq!(col.range(&b, a, e), v[a2..e2], "range {a}..{e}");
        }
        if v.windows(2).all(|w| w[0] <= w[1]) {
            let hi = v[v.len() - 1];
            for x in [
                v[0] - 1,
                v[0],
                v[17] - 1,
                v[17],
                v[17] + 1,
                v[5_001.min(v.len() - 1)],
                hi,
            ] {
                assert_eq!(col.lower_bound(&b, x), v.partition_point(|&y| y < x), "{x}");
            }
        }
        // A minor-4 image has no ARITH.
        assert_ne!(
            seg::put_int_image(&mut Vec::new(), v, seg::SEG_MINOR_SORTED),
            codec::ARITH
        );
    }
    // Every search of the column with breaks, around each break.
    let mut b = Vec::new();
    seg::put_int_image(&mut b, &fixed, seg::SEG_MINOR_ARITH);
    let col = Col::parse(&b, 0, b.len(), codec::ARITH).unwrap();
    for x in -1..=20_001 {
        assert_eq!(
            col.lower_bound(&b, x),
            fixed.partition_point(|&y| y < x),
            "{x}"
        );
    }
    // Deltas of more than one value, too many breaks, or too few values to gain: the
    // other codecs.
    let mut r = Rng::new(5);
    let noise: Vec<i64> = (0..1000).map(|_| r.int(0, 1 << 20)).collect();
    let twos: Vec<i64> = (0..100_000).map(|i| i + i / 10).collect();
    let short = [4i64, 5, 6];
    for v in [&noise[..], &twos[..], &short[..], &[][..], &[9][..]] {
        assert_ne!(
            seg::put_int_image(&mut Vec::new(), v, seg::SEG_MINOR_ARITH),
            codec::ARITH
        );
    }
    assert!(twos.windows(2).filter(|w| w[1] - w[0] != 1).count() > seg::ARITH_MAX_BREAKS);
}

/// Any column reads back from ARITH, whatever the step (every other delta is a break).
fn check_arith_access(v: &[i64]) {
    let steps = [
        0,
        1,
        v.get(1)
            .zip(v.first())
            .map_or(7, |(y, x)| y.wrapping_sub(*x)),
    ];
    for step in steps {
        let mut b = vec![0xAA; 5];
        seg::put_arith(&mut b, v, step);
        assert_eq!(seg::decode_int(&b[5..], codec::ARITH, v.len()).unwrap(), v);
        let col = Col::parse(&b, 5, b.len(), codec::ARITH).unwrap();
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(col.get(&b, i), x, "step {step} value {i}");
            let next = v.get(i + 1).copied().unwrap_or(0);
            assert_eq!(col.pair(&b, i), (x, next), "step {step} pair {i}");
        }
        assert_eq!(col.range(&b, 0, v.len()), v);
        for (a, e) in [(1, 2), (100, 300), (127, 129), (5, 5)] {
            let (a2, e2) = (a.min(v.len()), e.min(v.len()).max(a.min(v.len())));
            assert_eq!(col.range(&b, a, e), v[a2..e2], "range {a}..{e}");
        }
    }
}

/// An order column searched by the key of the row each entry names
/// (`Col::first_not_below_by`, the valid-time index's search): the first position whose
/// row's key is not below `t` is the one a search of the decoded positions finds, for the
/// ARITH form of minor 6 (through its pieces) and the other codecs of minor 4 alike.
#[test]
fn order_columns_are_searched_by_the_key_of_their_rows() {
    // Rows 0..n in order, but for a few corrected rows whose key belongs elsewhere: the
    // order lists rows by key, so those rows sit out of row order (ARITH breaks).
    let n = 5_000usize;
    let mut key: Vec<i64> = (0..n as i64).map(|r| 10 * r).collect();
    for (r, k) in [
        (40usize, 12_345i64),
        (41, 12_346),
        (2_000, 3),
        (4_999, 49_991),
    ] {
        key[r] = k;
    }
    let mut order: Vec<i64> = (0..n as i64).collect();
    order.sort_by_key(|&r| (key[r as usize], r));
    for minor in [seg::SEG_MINOR_ARITH, seg::SEG_MINOR_SORTED] {
        let mut b = Vec::new();
        let c = seg::put_int_image(&mut b, &order, minor);
        assert_eq!(c == codec::ARITH, minor == seg::SEG_MINOR_ARITH);
        let col = Col::parse(&b, 0, b.len(), c).unwrap();
        for t in (-1..=50_001)
            .step_by(7)
            .chain([3, 4, 12_345, 12_346, 12_347, 49_991])
        {
            let want = order.partition_point(|&r| key[r as usize] < t);
            let got = col.first_not_below_by(&b, |r| key[r as usize] < t);
            assert_eq!(got, want, "minor {minor}, key {t}");
        }
    }
}

/// A damaged ARITH column is refused by the open-time parse and the full decoder: cut
/// short, bytes left over, more breaks than values, or breaks out of order or range.
#[test]
fn arith_corruption_is_refused() {
    let mut v: Vec<i64> = (0..1000).map(|i| 1_000 + 2 * i).collect();
    v[400] = 5;
    v[700] = 9;
    let mut b = Vec::new();
    assert_eq!(
        seg::put_int_image(&mut b, &v, seg::SEG_MINOR_ARITH),
        codec::ARITH
    );
    assert_eq!(b.len(), seg::ARITH_HEAD + 4 * seg::ARITH_BREAK);
    let refused = |b: &[u8], n: usize| {
        Col::parse(b, 0, b.len(), codec::ARITH).is_err()
            && seg::decode_int(b, codec::ARITH, n).is_err()
    };
    assert!(!refused(&b, v.len()));
    assert!(refused(&b[..23], v.len()));
    assert!(refused(&b[..b.len() - 1], v.len()));
    let mut long = b.clone();
    long.push(0);
    assert!(refused(&long, v.len()));
    // Break `k`'s index (the indexes come first, then the offsets).
    let brk = |k: usize| seg::ARITH_HEAD + 4 * k;
    for (k, index) in [(1, 400u32), (1, 10), (3, 1000), (3, 7_000)] {
        let mut bad = b.clone();
        bad[brk(k)..brk(k) + 4].copy_from_slice(&index.to_le_bytes());
        assert!(refused(&bad, v.len()), "break {k} at {index}");
    }
    let mut many = b.clone();
    many[20..24].copy_from_slice(&1001u32.to_le_bytes());
    assert!(refused(&many, v.len()));
    // The full decoder also checks the count against the table's.
    assert!(seg::decode_int(&b, codec::ARITH, v.len() + 1).is_err());
}

#[test]
fn dfors_full_decode_checks_the_skip_values() {
    let v: Vec<i64> = (0..300).map(|i| i * 3).collect();
    let mut b = Vec::new();
    put_dfors(&mut b, &v);
    // The skip column (every DFORS_STRIDE-th value) and the exception starts (all 0:
    // no exceptions) end the chunk; the skip column's min is the first skip value, the
    // starts' min is 0: change either.
    let skips: Vec<i64> = v.iter().step_by(DFORS_STRIDE).copied().collect();
    let mut tail = Vec::new();
    put_for(&mut tail, &skips);
    let skip_len = tail.len();
    put_for(&mut tail, &vec![0; skips.len()]);
    let at = b.len() - tail.len();
    assert_eq!(&b[at..], &tail[..]);
    assert!(seg::decode_int(&b, codec::DFORS, v.len()).is_ok());
    for flip in [at + 4, at + skip_len + 4] {
        let mut bad = b.clone();
        bad[flip] ^= 1;
        assert!(seg::decode_int(&bad, codec::DFORS, v.len()).is_err());
    }
    b[at + 4] ^= 1;
    // The DFOR part alone is not a valid DFORS column (the skip column is missing).
    let mut d = Vec::new();
    seg::put_dfor(&mut d, &v);
    assert!(seg::decode_int(&d, codec::DFORS, v.len()).is_err());
    assert!(Col::parse(&d, 0, d.len(), codec::DFORS).is_err());
}

// ---------------------------------------------------------------- randomized stores

/// The seeded generator of the randomized stores (shared with `compact`'s tests).
pub(crate) use tgms_testkit::Rng;

/// Uids of random stores: short, non-ASCII, with a zero byte, and long ones that share
/// their first 8 bytes (the name order's sort key, `store/compact.rs` `name_prefix`).
const UIDS: &[&str] = &[
    "a",
    "b",
    "c",
    "d",
    "é",
    "日本",
    "zz",
    "a\u{0}b",
    "B",
    "ab",
    "account-17",
    "account-2",
    "account-",
];
const RELS: &[&str] = &["R", "S", "knows", "É"];
const DISCS: &[&str] = &["x", "#3", "#0", "y", "ü"];

pub(crate) fn random_op(r: &mut Rng) -> Value {
    let u = |r: &mut Rng| r.pick(UIDS);
    let vt = |r: &mut Rng| {
        let s = r.below(100) as i64;
        (s, s + 1 + r.below(50) as i64)
    };
    match r.below(8) {
        0 => {
            let (s, e) = vt(r);
            json!({"op":"assert_node","uid":u(r),"label":r.pick(&["N","M"]),
                   "props":{"p": r.below(3)},"vt_s":s,"vt_e":e})
        }
        1 | 2 => {
            let (s, e) = vt(r);
            let mut o = json!({"op":"assert_edge","src":u(r),"dst":u(r),"rel_type":r.pick(RELS),
                   "props":{"w": r.below(4)},"vt_s":s,"vt_e":e});
            if r.below(2) == 0 {
                o["disc"] = json!(r.pick(DISCS));
            }
            if r.below(3) == 0 {
                o["reason"] = json!(r.pick(&["seen", "told"]));
            }
            o
        }
        3 | 4 => {
            let n = 1 + r.below(6);
            let events: Vec<Value> = (0..n)
                .map(|_| {
                    let mut e = json!({"src":u(r),"dst":u(r),"rel_type":r.pick(RELS),
                                       "vt_s": r.below(100)});
                    if r.below(3) == 0 {
                        e["vt_e"] = json!(200 + r.below(10));
                    }
                    if r.below(4) == 0 {
                        e["props"] = json!({"k": r.below(3)});
                    }
                    e
                })
                .collect();
            json!({"op":"ingest_events","events":events})
        }
        5 => json!({"op":"retract","ref":{"kind":"node","uid":u(r)},
                    "t": r.below(120), "reason":"gone"}),
        6 => {
            let mut rf = json!({"kind":"edge","src":u(r),"dst":u(r),"rel_type":r.pick(RELS)});
            if r.below(2) == 0 {
                rf["disc"] = json!(r.pick(DISCS));
            }
            json!({"op":"retract","ref":rf,"t": r.below(120),"reason":"x"})
        }
        _ => {
            let (s, e) = vt(r);
            json!({"op":"correct","ref":{"kind":"node","uid":u(r)},
                   "props":{"p": 9},"vt_s":s,"vt_e":e,"reason":"fix"})
        }
    }
}

/// Builds a random store, flushing now and then, compacts it and returns the compacted
/// segment's bytes.
fn random_compacted(seed: u64, batches: usize) -> Vec<u8> {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let mut s = manual_store(&dir);
    let mut r = Rng::new(seed);
    let mut tt = 1000;
    for k in 0..batches {
        let n = 1 + r.below(3);
        let ops: Vec<Op> = (0..n).map(|_| Op::from_json(&random_op(&mut r))).collect();
        tt += 1 + r.below(3) as i64;
        let _ = s.write_at(tt, ops);
        if k % 7 == 3 || k == 0 {
            s.flush().unwrap();
        }
    }
    s.compact().unwrap();
    seg::only_segment(&dir)
}

fn row_eq(a: &Row, b: &Row) -> bool {
    (
        a.ident,
        a.content,
        a.vt_s,
        a.vt_e,
        a.tt_s,
        a.tt_e,
        a.reason,
        a.close_reason,
        a.origin,
        a.closed_by,
        a.alive,
    ) == (
        b.ident,
        b.content,
        b.vt_s,
        b.vt_e,
        b.tt_s,
        b.tt_e,
        b.reason,
        b.close_reason,
        b.origin,
        b.closed_by,
        b.alive,
    )
}

/// Compares every accessor of `Base` with the state loaded from the same bytes; returns
/// how many closed rows, retired rows, mapped identities, string discs and empty slots
/// it saw.
fn compare(bytes: &[u8]) -> [usize; 5] {
    let minor = seg::header_minor(bytes).unwrap();
    assert!([seg::SEG_MINOR_SORTED, seg::SEG_MINOR_ARITH].contains(&minor));
    seg::verify(bytes).unwrap();
    let (seq, d) = seg::decode(bytes).unwrap();
    // Every name is found by the search and by the writers' hash tables; others by
    // neither.
    {
        let b = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
        for (k, names) in [(Dict::Uids, &d.uids), (Dict::Strings, &d.strings)] {
            for (id, name) in names.iter().enumerate() {
                assert_eq!(b.find_hashed(k, name), Some(id as u32), "{name:?}");
                let found = match k {
                    Dict::Uids => b.uid_id(name),
                    Dict::Strings => b.string_id(name),
                };
                assert_eq!(found, Some(id as u32), "{name:?}");
            }
            for absent in ["", "absent", "a\u{0}", "日"] {
                if !names.iter().any(|n| n == absent) {
                    assert_eq!(b.find_hashed(k, absent), None, "{absent:?}");
                }
            }
        }
        // Every content is found (the first id holding it); a content no id holds is not.
        for (id, c) in d.contents.iter().enumerate() {
            let first = d.contents.iter().position(|x| x == c).unwrap() as u32;
            assert_eq!(b.find_content(*c), Some(first), "content {id}");
        }
        let absent = Content {
            label: NONE,
            props: 0,
            source: 0,
            provenance: 0,
        };
        if !d.contents.contains(&absent) {
            assert_eq!(b.find_content(absent), None);
        }
    }
    // The valid-time index against a brute-force sort of the rows.
    {
        let b = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
        for (k, rows) in Table::BOTH.into_iter().zip([&d.nodes, &d.edges]) {
            let mut by_start: Vec<(i64, u32)> =
                (0..rows.len()).map(|r| (rows[r].vt_s, r as u32)).collect();
            by_start.sort();
            let mut by_end: Vec<(i64, u32)> = (0..rows.len())
                .filter(|&r| rows[r].vt_e != rows[r].vt_s + 1)
                .map(|r| (rows[r].vt_e, r as u32))
                .collect();
            by_end.sort();
            let ids = |v: &[(i64, u32)]| v.iter().map(|p| p.1).collect::<Vec<u32>>();
            assert_eq!(b.time_rows(k, false, 0, rows.len()), ids(&by_start));
            assert_eq!(b.n_long(k), by_end.len());
            assert_eq!(b.time_rows(k, true, 0, by_end.len()), ids(&by_end));
            for t in [
                i64::MIN,
                -1,
                0,
                1,
                5,
                50,
                120,
                199,
                200,
                250,
                OPEN_END,
                i64::MAX,
            ] {
                let below = |v: &[(i64, u32)]| v.iter().filter(|p| p.0 < t).count();
                assert_eq!(b.time_rank(k, false, t), below(&by_start), "start rank {t}");
                assert_eq!(b.time_rank(k, true, t), below(&by_end), "end rank {t}");
            }
        }
    }
    // The same segment decoded: every row in a delta above the image of no rows, whose
    // lookups are built from the rows, not read from the image's indexes.
    let mut st = Rows::empty(Default::default());
    {
        let Rows { base, delta, .. } = &mut st;
        delta.load(d, base).unwrap();
    }
    let base = Base::open(SegBytes::Heap(bytes.to_vec())).unwrap();
    assert_eq!(base.seq(), seq);
    let m = st.delta.end();
    assert_eq!(base.marks(), m);
    for id in 0..m.uids as u32 {
        let name = st.uid_name(id);
        assert_eq!(base.uid_name(id), name);
        assert_eq!(base.uid_id(name), Some(id));
        assert_eq!(base.node_postings(id), st.node_postings(id));
        assert_eq!(base.out_adj(id), st.adjacency(id, true));
        assert_eq!(base.in_adj(id), st.adjacency(id, false));
    }
    for id in 0..m.strings as u32 {
        let s = st.string(id);
        assert_eq!(base.string(id), s);
        assert_eq!(base.string_id(s), Some(id));
    }
    for absent in ["", "nope", "a\u{1}", "日", "zzz", "\u{10FFFF}"] {
        assert_eq!(base.uid_id(absent), st.uid_id(absent), "{absent:?}");
        assert_eq!(base.string_id(absent), st.string_id(absent), "{absent:?}");
    }
    for id in 0..m.contents as u32 {
        assert!(base.content(id) == st.content(id));
    }
    for id in 0..m.idents as u32 {
        let e = st.ident(id);
        assert_eq!(base.ident(id), e);
        assert_eq!(base.edge_postings(id), st.edge_postings(id));
        let found = base.find_mapped_ident(e.src, e.dst, e.rel, e.disc);
        assert_eq!(found, e.mapped.then_some(id), "identity {id}");
        // Absent keys: another disc, another rel.
        for disc in [Disc::Ordinal(987_654), Disc::Str(NONE - 1)] {
            assert_eq!(base.find_mapped_ident(e.src, e.dst, e.rel, disc), None);
        }
        assert_eq!(base.find_mapped_ident(e.src, e.dst, NONE - 1, e.disc), None);
    }
    for k in 0..m.slots {
        let s = st.delta.slots[k as usize];
        assert_eq!(base.slot(k), (s != NONE).then_some(s));
    }
    for r in 0..m.nodes as u32 {
        assert!(
            row_eq(&base.row(Table::Nodes, r), &st.row(Table::Nodes, r)),
            "node row {r}"
        );
    }
    for r in 0..m.edges as u32 {
        assert!(
            row_eq(&base.row(Table::Edges, r), &st.row(Table::Edges, r)),
            "edge row {r}"
        );
    }
    // Out of range: defaults, no panic.
    let (nu, ns) = (m.uids as u32, m.strings as u32);
    assert_eq!(base.uid_name(nu), "");
    assert_eq!(base.uid_name(u32::MAX), "");
    assert_eq!(base.string(ns), "");
    assert!(base.node_postings(nu).is_empty() && base.out_adj(u32::MAX).is_empty());
    assert!(base.in_adj(nu).is_empty());
    assert!(base.edge_postings(m.idents as u32).is_empty());
    assert_eq!(base.slot(m.slots), None);
    assert_eq!(base.slot(u64::MAX), None);
    assert_eq!(base.content(m.contents as u32).label, NONE);
    assert_eq!(base.ident(m.idents as u32).src, NONE);
    assert_eq!(base.row(Table::Nodes, m.nodes as u32).ident, NONE);
    assert!(!base.row(Table::Edges, u32::MAX).alive);
    let rows = || {
        st.delta.rows[Table::Nodes]
            .iter()
            .chain(st.delta.rows[Table::Edges].iter())
    };
    [
        rows().filter(|r| r.tt_e != OPEN_END).count(),
        rows().filter(|r| !r.alive).count(),
        st.delta.idents.iter().filter(|e| e.mapped).count(),
        st.delta
            .idents
            .iter()
            .filter(|e| matches!(e.disc, Disc::Str(_)))
            .count(),
        st.delta.slots.iter().filter(|&&s| s == NONE).count(),
    ]
}

#[test]
fn base_accessors_equal_the_loaded_state_on_random_stores() {
    let mut seen = [0usize; 5];
    for seed in 1..=12u64 {
        let bytes = random_compacted(seed, 20 + 10 * seed as usize);
        let c = compare(&bytes);
        seen.iter_mut().zip(c).for_each(|(a, b)| *a += b);
    }
    // The workload exercises closures, retired rows, mapped identities, string discs.
    assert!(seen[..4].iter().all(|&n| n > 0), "{seen:?}");
    eprintln!("closed, retired, mapped, string discs, empty slots: {seen:?}");
}

/// A store that flushes and compacts only when told to.
fn manual_store(dir: &std::path::Path) -> Store {
    Store::create_with(
        dir,
        Options {
            flush_rows: Some(0),
            compact_segments: Some(0),
            ..Options::default()
        },
    )
    .unwrap()
}

#[test]
fn base_of_a_larger_store_with_long_columns() {
    // Enough rows for DFORS columns with several skip blocks.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let mut s = manual_store(&dir);
    let mut r = Rng::new(7);
    for k in 0..6 {
        let events: Vec<Value> = (0..700)
            .map(|i| {
                json!({"src": format!("u{}", r.below(90)), "dst": format!("u{}", r.below(90)),
                       "rel_type": RELS[(i % 3) as usize], "vt_s": k * 1000 + i})
            })
            .collect();
        s.write_at(
            1000 + 2 * k,
            vec![Op::from_json(
                &json!({"op":"ingest_events","events":events}),
            )],
        )
        .unwrap();
        let ops: Vec<Op> = (0..5).map(|_| Op::from_json(&random_op(&mut r))).collect();
        let _ = s.write_at(1001 + 2 * k, ops);
        s.flush().unwrap();
    }
    s.compact().unwrap();
    let bytes = seg::only_segment(&dir);
    let dir = seg::read_dir(&bytes).unwrap();
    assert!(dir.codecs.contains(&codec::DFORS));
    assert!(!dir.codecs.contains(&codec::DFOR));
    compare(&bytes);
}

#[test]
fn flush_segments_stay_minor_5_and_compaction_writes_minor_6() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let mut s = manual_store(&dir);
    let mut r = Rng::new(99);
    for k in 0..3 {
        let ops: Vec<Op> = (0..4).map(|_| Op::from_json(&random_op(&mut r))).collect();
        let _ = s.write_at(1000 + k, ops);
        s.flush().unwrap();
    }
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "tgs") {
            let b = std::fs::read(&p).unwrap();
            assert_eq!(seg::header_minor(&b).unwrap(), seg::SEG_MINOR_FLUSH);
            let err = Base::open(SegBytes::Heap(b)).err().unwrap();
            assert!(err.1.to_string().contains("no index chunks"), "{err:?}");
        }
    }
    let minors = |dir: &std::path::Path| -> Vec<u16> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "tgs"))
            .map(|p| {
                let b = std::fs::read(p).unwrap();
                seg::header_minor(&b).unwrap()
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(minors(&dir), [5, 5, 5]);
    assert_eq!(s.compact().unwrap(), 3);
    assert_eq!(minors(&dir), [seg::SEG_MINOR_ARITH]);
    // An indexed image is not rewritten again.
    assert_eq!(s.compact().unwrap(), 0);
    // A store with a single (first-flush, minor-1) segment: compaction rewrites it as
    // an indexed image.
    let dir2 = t.path().join("s2");
    let mut s2 = Store::create_with(&dir2, Options::default()).unwrap();
    let ops: Vec<Op> = (0..6).map(|_| Op::from_json(&random_op(&mut r))).collect();
    let _ = s2.write_at(1000, ops);
    s2.flush().unwrap();
    assert_eq!(minors(&dir2), [5]);
    assert_eq!(s2.compact().unwrap(), 1);
    assert_eq!(minors(&dir2), [seg::SEG_MINOR_ARITH]);
    drop(s2);
    let mut s3 = Store::create_with(&t.path().join("s3"), Options::default()).unwrap();
    assert_eq!(s3.compact().unwrap(), 0);
    assert!(minors(&t.path().join("s3")).is_empty());
    // Without segments, compaction's flush writes the indexed image directly.
    let ops: Vec<Op> = (0..6).map(|_| Op::from_json(&random_op(&mut r))).collect();
    let _ = s3.write_at(1000, ops);
    assert_eq!(s3.compact().unwrap(), 0);
    assert_eq!(minors(&t.path().join("s3")), [seg::SEG_MINOR_ARITH]);
    assert!(t.path().join("s3/seg-00000001.tgs").exists());
}

#[test]
fn corruption_of_any_byte_is_caught_by_open() {
    let bytes = random_compacted(5, 25);
    let dir = seg::read_dir(&bytes).unwrap();
    // Every index chunk: a flipped byte fails the open (its crc).
    for (k, &(id, _)) in dir.layout.iter().enumerate() {
        if id < chunk::UID_OFFS || dir.lens[k] == 0 {
            continue;
        }
        let mut b = bytes.clone();
        let at = dir.offsets[k] as usize + dir.lens[k] / 2;
        b[at] ^= 0x10;
        let err = Base::open(SegBytes::Heap(b))
            .err()
            .expect("corruption caught");
        assert!(
            err.1.to_string().contains("checksum"),
            "chunk {id}: {err:?}"
        );
    }
    // Every byte of the file: never a panic, always an error.
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x01;
        assert!(Base::open(SegBytes::Heap(b)).is_err(), "byte {at}");
    }
    // Truncations.
    for n in [0, 10, 88, bytes.len() / 2, bytes.len() - 1] {
        assert!(Base::open(SegBytes::Heap(bytes[..n].to_vec())).is_err());
    }
}

/// A file whose crcs hold but whose index chunks lie: `verify` reports it, `Base::open`
/// validates what it can cheaply (offsets, counts) and never panics on access.
#[test]
fn forged_index_chunks_with_valid_crcs() {
    let bytes = random_compacted(3, 30);
    let (seq, d) = seg::decode(&bytes).unwrap();
    let good = seg::encode_as(seq, &d, &|_| 0, seg::SEG_MINOR_ARITH).0;
    assert_eq!(good, bytes);
    // Rewrite with a wrong uid order (reversed): crcs recomputed, so only the
    // content check of `verify` notices; Base still answers without panicking.
    let forged = forge(&bytes, chunk::UID_ORDER, |v| v.reverse());
    assert!(seg::decode(&forged).is_ok());
    assert!(seg::verify(&forged)
        .unwrap_err()
        .1
        .to_string()
        .contains("S8"));
    let b = Base::open(SegBytes::Heap(forged)).unwrap();
    for id in 0..b.marks().uids as u32 {
        let _ = b.uid_id(b.uid_name(id));
    }
    // Offsets that do not end at the heap's end are refused by open.
    let forged = forge(&bytes, chunk::UID_OFFS, |v| {
        if let Some(x) = v.last_mut() {
            *x += 1
        }
    });
    assert!(Base::open(SegBytes::Heap(forged)).is_err());
    // Postings naming no row: refused at open (`structure`), naming chunk and value.
    let forged = forge(&bytes, chunk::OUT, |v| v.iter_mut().for_each(|x| *x = -7));
    let e = Base::open(SegBytes::Heap(forged))
        .err()
        .unwrap()
        .1
        .to_string();
    assert!(e.contains("chunk 73: value -7 at index 0"), "{e}");
    // A closed-row set naming other rows than the closures: `verify` notices, and so
    // does open (a close row missing from the set); one of another size is refused.
    let (bytes, d) = (3..)
        .map(|seed| {
            let b = random_compacted(seed, 60);
            let d = seg::decode(&b).unwrap().1;
            (b, d)
        })
        .find(|(_, d)| !d.closes[Table::Edges].is_empty())
        .unwrap();
    let first = i64::from(d.closes[Table::Edges][0].row);
    let other = (0..d.edges.len() as i64)
        .find(|r| {
            d.closes[Table::Edges]
                .iter()
                .all(|c| i64::from(c.row) != *r)
        })
        .unwrap();
    let swapped = forge(&bytes, chunk::EDGE_CLOSED, |v| {
        v.retain(|&x| x != first);
        v.push(other);
        v.sort();
    });
    assert!(seg::decode(&swapped).is_ok());
    let e = seg::verify(&swapped).unwrap_err().1.to_string();
    assert!(e.contains("closed-row set 82") && e.contains("S8"), "{e}");
    let e = Base::open(SegBytes::Heap(swapped))
        .err()
        .unwrap()
        .1
        .to_string();
    assert!(e.contains(&format!("chunk 82: close row {first} ")), "{e}");
    let grown = forge(&bytes, chunk::EDGE_CLOSED, |v| {
        v.push(other);
        v.sort();
    });
    let e = Base::open(SegBytes::Heap(grown))
        .err()
        .unwrap()
        .1
        .to_string();
    assert!(e.contains("chunk 82") && e.contains("size"), "{e}");
}

/// A random compacted image with edge closures, slots, mapped identities and long
/// rows, so every forgery below has a value to change.
fn rich_compacted() -> Vec<u8> {
    (3..)
        .map(|seed| random_compacted(seed, 60))
        .find(|b| {
            let (_, d) = seg::decode(b).unwrap();
            !d.closes[Table::Edges].is_empty()
                && !d.slots.is_empty()
                && d.idents.iter().any(|i| i.mapped)
                && d.edges.iter().any(|r| r.vt_e != r.vt_s + 1)
                && !d.nodes.is_empty()
        })
        .unwrap()
}

/// Values a writer could not have written, in files whose checksums hold (`forge`
/// recomputes them): every one is refused by `Base::open` with an error naming the
/// chunk and the value, where the open used to succeed and the accessors answered with
/// defaults (an empty adjacency list, a row of `NONE` ids, `Origin::Assert`, …).
#[test]
fn forged_values_with_valid_crcs_are_refused_at_open() {
    use chunk::*;
    let bytes = rich_compacted();
    let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
    let (nu, ns, nc, ni) = (
        m.uids as i64,
        m.strings as i64,
        m.contents as i64,
        m.idents as i64,
    );
    let (nn, ne) = (m.nodes as i64, m.edges as i64);
    type Edit = Box<dyn Fn(&mut Vec<i64>)>;
    type Forgery = (u16, Edit, String);
    let first = |x: i64| -> Edit { Box::new(move |v| v[0] = x) };
    let last = |x: i64| -> Edit { Box::new(move |v| *v.last_mut().unwrap() = x) };
    let cases: Vec<Forgery> = vec![
        (CONTENT_LABEL, first(ns), format!("value {ns} at index 0")),
        (CONTENT_PROPS, last(-1), "value -1".into()),
        (CONTENT_SOURCE, first(ns + 5), format!("value {}", ns + 5)),
        (IDENT_SRC, first(nu), format!("value {nu} at index 0")),
        (IDENT_DST, last(nu + 1), format!("value {}", nu + 1)),
        (IDENT_REL, first(ns), format!("value {ns}")),
        (IDENT_DISC_TAG, first(4), "value 4".into()),
        (SLOTS, first(ni), format!("value {ni}")),
        (ROWS_NODE + IDENT, first(nu), format!("value {nu}")),
        (ROWS_EDGE + IDENT, first(ni), format!("value {ni}")),
        (ROWS_EDGE + CONTENT, last(nc), format!("value {nc}")),
        (
            ROWS_EDGE + VT_S,
            first(OPEN_END),
            format!("value {OPEN_END}"),
        ),
        (ROWS_EDGE + VT_LEN, first(-3), "value -3".into()),
        (
            ROWS_EDGE + REASON,
            first(ns + 1),
            format!("value {}", ns + 1),
        ),
        (ROWS_EDGE + ORIGIN, first(0), "value 0".into()),
        (ROWS_NODE + ORIGIN, first(5), "value 5".into()),
        (ROWS_EDGE + ALIVE, first(2), "value 2".into()),
        (ROWS_EDGE + CLOSE_ROW, last(ne), format!("close row {ne}")),
        (ROWS_EDGE + CLOSE_TT_E, first(-1), "value -1".into()),
        (ROWS_EDGE + CLOSE_BY, first(9), "value 9".into()),
        (ROWS_EDGE + CLOSE_REASON, first(-1), "value -1".into()),
        (UID_ORDER, first(nu), format!("value {nu}")),
        (STR_ORDER, last(-2), "value -2".into()),
        (NODE_POST, first(nn), format!("value {nn}")),
        (EDGE_POST, last(ne), format!("value {ne}")),
        (
            EDGE_POST_OFF,
            Box::new(move |v| v[1] = ne + 1),
            format!("value {}", ne + 1),
        ),
        (OUT, first(-7), "value -7".into()),
        (IN, last(ne), format!("value {ne}")),
        (MAPPED_ORDER, first(ni), format!("value {ni}")),
        (NODE_BY_START, first(nn), format!("value {nn}")),
        (EDGE_BY_START, last(ne), format!("value {ne}")),
        (EDGE_LONG_BY_END, first(-1), "value -1".into()),
    ];
    for (id, f, want) in cases {
        let forged = forge(&bytes, id, f);
        assert!(seg::read_dir(&forged).is_ok(), "chunk {id}: crcs hold");
        let e = Base::open(SegBytes::Heap(forged.clone()))
            .err()
            .unwrap_or_else(|| panic!("chunk {id}: the forgery opened"))
            .1
            .to_string();
        assert!(
            e.starts_with(&format!("chunk {id}: ")) && e.contains(&want),
            "chunk {id}: {e}"
        );
        assert!(open_image(&forged).is_err());
    }
    // A valid time that runs past the open end (start and length each legal).
    let near = OPEN_END - 2;
    let forged = forge(&bytes, ROWS_EDGE + VT_S, |v| v[0] = near);
    let forged = forge(&forged, ROWS_EDGE + VT_LEN, |v| v[0] = 5);
    let e = Base::open(SegBytes::Heap(forged))
        .err()
        .unwrap()
        .1
        .to_string();
    assert!(e.contains("row 0: valid time from"), "{e}");
    // A string disc naming no string: find an identity with a string disc.
    let (_, d) = seg::decode(&bytes).unwrap();
    if let Some(i) = d.idents.iter().position(|e| matches!(e.disc, Disc::Str(_))) {
        let forged = forge(&bytes, IDENT_DISC_VAL, |v| v[i] = ns);
        let e = Base::open(SegBytes::Heap(forged))
            .err()
            .unwrap()
            .1
            .to_string();
        assert!(
            e.contains(&format!("string disc {ns} of identity {i}")),
            "{e}"
        );
    }
    // The unforged image opens and reads.
    open_image(&bytes).unwrap();
}

/// The checks at open make random access agree with the full decoder: for every bit
/// flip of a DFORS and a PFOR column with exceptions (their skip values and exception
/// starts are redundant, and random reads go through them), the open-time parse and
/// checks accept exactly what the full decoder accepts, and then `get` and `range`
/// give the decoder's values.
#[test]
fn open_checks_make_random_access_agree_with_the_full_decoder() {
    let mut dv: Vec<i64> = (0..150).map(|i| i * 3).collect();
    for i in [5usize, 40, 41, 99] {
        dv[i] += 1_000_000 + i as i64;
    }
    for i in 100..150 {
        dv[i] = dv[i - 1] + 2;
    }
    let mut pv = vec![7i64; 150];
    for i in [3usize, 40, 41, 100, 149] {
        pv[i] = 5_000_000 + i as i64;
    }
    // A DFORS column of one repeated delta packs its deltas at width 0 (the check sums
    // its blocks in closed form).
    let cv: Vec<i64> = (0..300).map(|i| 10 + i * 3).collect();
    for (v, c) in [(dv, codec::DFORS), (pv, codec::PFOR), (cv, codec::DFORS)] {
        let mut b = Vec::new();
        if c == codec::DFORS {
            put_dfors(&mut b, &v);
        } else {
            put_pfor(&mut b, &v);
        }
        // What `Base::open` does with a column: parse, count against its table, check.
        let open = |b: &[u8]| {
            Col::parse(b, 0, b.len(), c)
                .and_then(|col| match col.len() == v.len() {
                    true => Ok(col),
                    false => Err("count".into()),
                })
                .and_then(|col| col.check_codec(b).map(|_| col))
        };
        assert!(open(&b).is_ok());
        for at in 0..b.len() {
            for bit in 0..8 {
                let mut bad = b.clone();
                bad[at] ^= 1 << bit;
                let full = seg::decode_int(&bad, c, v.len());
                match (open(&bad), full) {
                    (Ok(col), Ok(want)) => {
                        let got: Vec<i64> = (0..v.len()).map(|i| col.get(&bad, i)).collect();
                        assert_eq!(got, want, "codec {c} byte {at} bit {bit}: get");
                        assert_eq!(col.range(&bad, 0, v.len()), want, "range");
                    }
                    (Err(_), Err(_)) => {}
                    (o, f) => panic!(
                        "codec {c} byte {at} bit {bit}: open {:?}, full decoder {:?}",
                        o.map(|_| ()),
                        f.map(|_| ())
                    ),
                }
            }
        }
    }
}

/// A store at `dir` of 40 random batches (some fail), compacted into one image.
fn compacted_random_store(dir: &std::path::Path, r: &mut Rng) -> Store {
    let mut s = manual_store(dir);
    for k in 0..40 {
        let ops: Vec<Op> = (0..2).map(|_| Op::from_json(&random_op(r))).collect();
        let _ = s.write_at(1000 + k, ops);
    }
    s.compact().unwrap();
    s
}

/// Writes `bytes` as the store's image file (the first of `entries`) and republishes the
/// manifest with their length and BLAKE3 digest, so no checksum layer notices the change.
fn publish_as_image(
    dir: &std::path::Path,
    entries: &mut [crate::format::manifest::SegEntry],
    bytes: &[u8],
) {
    use crate::format::manifest;
    std::fs::write(dir.join(manifest::seg_name(entries[0].seq)), bytes).unwrap();
    entries[0].file_len = bytes.len() as u64;
    entries[0].blake3 = *blake3::hash(bytes).as_bytes();
    manifest::write_fresh(dir, entries, true).unwrap();
}

/// End to end: a store whose compacted image is forged, with the chunk crcs, the file
/// length and the BLAKE3 digest in the manifest recomputed so that no checksum layer
/// notices. The store's open refuses it and `check` reports it, both naming the chunk
/// and the value (the open used to read from it).
#[test]
fn a_store_with_a_forged_image_and_matching_digests_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    drop(compacted_random_store(&dir, &mut Rng::new(77)));
    let bytes = seg::only_segment(&dir);
    let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
    let forged = forge(&bytes, chunk::ROWS_EDGE + chunk::IDENT, |v| {
        v[0] = m.idents as i64 + 3
    });
    let (mut entries, _) = crate::format::manifest::read(&dir.join("MANIFEST")).unwrap();
    // The compaction's writer checked the image it wrote and left its check record: one
    // for the old bytes, which the forged ones do not match.
    let record = dir.join(crate::format::checked::record_name(entries[0].seq));
    let e = &entries[0];
    assert!(crate::format::checked::holds(
        &std::fs::read(&record).unwrap(),
        e.seq,
        e.file_len,
        &e.blake3
    )
    .is_some());
    publish_as_image(&dir, &mut entries, &forged);
    // The store's open refuses it, naming the chunk, the index and the value…
    let want = format!("chunk 32: value {} at index 0", m.idents + 3);
    for read_only in [true, false] {
        let opened = match read_only {
            true => crate::store::Store::open_read_only(&dir),
            false => crate::store::Store::open(&dir),
        };
        match opened {
            Err(crate::Error::Corruption { kind, .. }) => {
                assert!(kind.to_string().contains(&want))
            }
            other => panic!("a forged image opened: {:?}", other.map(|_| ())),
        }
    }
    // …and `check` reports it.
    let report = crate::store::check(&dir).unwrap();
    let found = format!("{:?}", report.problems);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.kind.to_string().contains(&want)),
        "{found}"
    );
}

/// The check record (`format/checked.rs`): a writer's open writes it, a read-only open
/// writes none, an open that finds one for the image's digest does not run the checks
/// again (so a record forged together with the image and its manifest digest is trusted,
/// as the manifest is; `check` still finds the forgery), and a compaction collects the
/// record of the image it replaces.
#[test]
fn an_image_checked_once_is_not_checked_again() {
    use crate::format::{checked, manifest};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    let mut r = Rng::new(78);
    drop(compacted_random_store(&dir, &mut r));
    let (mut entries, _) = manifest::read(&dir.join("MANIFEST")).unwrap();
    let seq = entries[0].seq;
    let record = dir.join(checked::record_name(seq));
    let holds = |e: &manifest::SegEntry| {
        checked::holds(
            &std::fs::read(&record).unwrap(),
            e.seq,
            e.file_len,
            &e.blake3,
        )
    };
    assert!(holds(&entries[0]).is_some());
    // Read-only opens write no record.
    std::fs::remove_file(&record).unwrap();
    drop(Store::open_read_only(&dir).unwrap());
    assert!(!record.exists());
    // A writable open checks and writes it.
    let digest = Store::open(&dir).unwrap().digest();
    assert!(holds(&entries[0]).is_some());
    let good = std::fs::read(&record).unwrap();
    assert_eq!(Store::open_read_only(&dir).unwrap().digest(), digest);
    // A forged image with its digest in the manifest and a record for that digest opens:
    // the record says these bytes passed the checks, so they are not run.
    let bytes = seg::only_segment(&dir);
    let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
    let forged = forge(&bytes, chunk::ROWS_EDGE + chunk::IDENT, |v| {
        v[0] = m.idents as i64 + 3
    });
    publish_as_image(&dir, &mut entries, &forged);
    let forged_record = checked::encode(seq, entries[0].file_len, &entries[0].blake3, None);
    std::fs::write(&record, forged_record).unwrap();
    assert!(Store::open_read_only(&dir).is_ok());
    // `check` does not read records: it reports the forged value.
    let report = crate::store::check(&dir).unwrap();
    let want = format!("chunk 32: value {} at index 0", m.idents + 3);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.kind.to_string().contains(&want)),
        "{:?}",
        report.problems
    );
    // A torn record is no record: the checks run and refuse the image.
    std::fs::write(&record, &forged_record[..10]).unwrap();
    assert!(matches!(
        Store::open_read_only(&dir),
        Err(crate::Error::Corruption { .. })
    ));
    // Restore the image; a compaction replaces it, and its writer collects the old
    // record and leaves the new image's.
    publish_as_image(&dir, &mut entries, &bytes);
    std::fs::write(&record, &good).unwrap();
    let mut s = Store::open(&dir).unwrap();
    s.write_at(5000, vec![Op::from_json(&random_op(&mut r))])
        .ok();
    s.compact().unwrap();
    drop(s);
    let (entries, _) = manifest::read(&dir.join("MANIFEST")).unwrap();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".checked"))
        .collect();
    assert_eq!(names, vec![checked::record_name(entries[0].seq)]);
    assert_ne!(entries[0].seq, seq);
}

/// A check record that names the image file (`format/checked.rs`, `FileIdentity`): a
/// writer's open records the file (its last change older than the record's own temporary
/// file); an open that finds the same file (device, inode, length, times) does
/// not hash it (a file changed without moving its times, which only a forged record can
/// pretend, opens), and one whose file differs in any of them hashes it and refuses bytes
/// that are not the manifest's.
#[cfg(unix)]
#[test]
fn an_unchanged_image_file_is_not_hashed_again() {
    use crate::format::{checked, manifest};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("s");
    drop(compacted_random_store(&dir, &mut Rng::new(79)));
    let (entries, _) = manifest::read(&dir.join("MANIFEST")).unwrap();
    let e = entries[0].clone();
    let image = dir.join(manifest::seg_name(e.seq));
    let record = dir.join(checked::record_name(e.seq));
    let identity =
        |p: &std::path::Path| checked::FileIdentity::of(&std::fs::metadata(p).unwrap()).unwrap();
    // The compaction's writer recorded the file it wrote; so does a writer's open of an
    // image written a moment ago (it waits for the filesystem's coarse clock to move past
    // the image's last change).
    let recorded = || {
        let r = std::fs::read(&record).unwrap();
        checked::holds(&r, e.seq, e.file_len, &e.blake3).and_then(|h| h.identity)
    };
    assert_eq!(recorded(), Some(identity(&image)));
    std::fs::remove_file(&record).unwrap();
    let digest = Store::open(&dir).unwrap().digest();
    assert_eq!(recorded(), Some(identity(&image)));
    assert_eq!(Store::open_read_only(&dir).unwrap().digest(), digest);
    // Other bytes in the image file, the manifest unchanged: a record naming the file as
    // it now is (a forgery: no writer hashed these bytes) lets it open unhashed…
    let bytes = std::fs::read(&image).unwrap();
    let m = Base::open(SegBytes::Heap(bytes.clone())).unwrap().marks();
    let forged = forge(&bytes, chunk::ROWS_EDGE + chunk::IDENT, |v| {
        v[0] = m.idents as i64 + 3
    });
    std::fs::write(&image, &forged).unwrap();
    let now = identity(&image);
    let named = |id| checked::encode(e.seq, e.file_len, &e.blake3, Some(id));
    std::fs::write(&record, named(now)).unwrap();
    assert!(Store::open_read_only(&dir).is_ok());
    // …and a record naming the file as it was before any one change is not about this
    // file: the open hashes it and refuses it.
    let others = [
        checked::FileIdentity {
            dev: now.dev + 1,
            ..now
        },
        checked::FileIdentity {
            ino: now.ino + 1,
            ..now
        },
        checked::FileIdentity {
            mtime_ns: now.mtime_ns - 1,
            ..now
        },
        checked::FileIdentity {
            ctime_ns: now.ctime_ns - 1,
            ..now
        },
    ];
    for other in others {
        std::fs::write(&record, named(other)).unwrap();
        match Store::open_read_only(&dir) {
            Err(crate::Error::Corruption { kind, .. }) => {
                assert!(kind.to_string().contains("blake3"), "{kind}")
            }
            other => panic!("a changed image opened: {:?}", other.map(|_| ())),
        }
    }
    // `check` reads no record.
    std::fs::write(&record, named(now)).unwrap();
    assert!(!crate::store::check(&dir).unwrap().problems.is_empty());
}

/// Manual measurement: `TGMS_BASE_SEG=path cargo test --release -p tgms-engine --lib
/// base_open_timing -- --ignored --nocapture` opens a compacted segment as a base and
/// times the open (mapped), a decode + load_seg of the same file, and point lookups.
#[test]
#[ignore]
fn base_open_timing() {
    let Ok(p) = std::env::var("TGMS_BASE_SEG") else {
        return;
    };
    let path = std::path::Path::new(&p);
    let t = std::time::Instant::now();
    let bytes = SegBytes::open(path, crate::format::mmap::IoMode::Mmap).unwrap();
    let crc_only = {
        let t = std::time::Instant::now();
        seg::read_dir(bytes.bytes()).unwrap();
        t.elapsed()
    };
    let base = Base::open(bytes).unwrap();
    let open = t.elapsed();
    let m = base.marks();
    // The structural checks alone (part of `open` above), run again a few times.
    let structure: Vec<_> = (0..5)
        .map(|_| {
            let t = std::time::Instant::now();
            base.check_structure(&|id, w| (u64::from(id), w)).unwrap();
            t.elapsed()
        })
        .collect();
    eprintln!("structure checks, 5 runs: {structure:?}");
    let t = std::time::Instant::now();
    let mut hits = 0usize;
    for k in 0..10_000u32 {
        let u = (k as u64 * 7919 % m.uids.max(1)) as u32;
        hits += base.uid_id(base.uid_name(u)).is_some() as usize;
        hits += base.out_adj(u).len() + base.node_postings(u).len();
        let r = (k as u64 * 104_729 % m.edges.max(1)) as u32;
        hits += base.row(Table::Edges, r).alive as usize;
    }
    let lookups = t.elapsed();
    let time = |what: &str, f: &dyn Fn(u32) -> usize| {
        let t = std::time::Instant::now();
        let n: usize = (0..10_000u32).map(f).sum();
        eprintln!("  10k × {what}: {:?} ({n})", t.elapsed());
    };
    let uid = |k: u32| (k as u64 * 7919 % m.uids.max(1)) as u32;
    let row = |k: u32| (k as u64 * 104_729 % m.edges.max(1)) as u32;
    time("uid_name", &|k| base.uid_name(uid(k)).len());
    time("uid_id", &|k| {
        base.uid_id(base.uid_name(uid(k))).is_some() as usize
    });
    time("out_adj", &|k| base.out_adj(uid(k)).len());
    time("node_postings", &|k| base.node_postings(uid(k)).len());
    time("edge_row", &|k| {
        base.row(Table::Edges, row(k)).alive as usize
    });
    time("ident", &|k| base.ident(row(k)).src as usize);
    let t = std::time::Instant::now();
    let all = std::fs::read(path).unwrap();
    let (_, d) = seg::decode(&all).unwrap();
    let mut st = Rows::empty(Default::default());
    let Rows {
        base: b0, delta, ..
    } = &mut st;
    delta.load(d, b0).unwrap();
    let full = t.elapsed();
    let (seq, d) = seg::decode(&all).unwrap();
    let plain = seg::encode(seq, &d, &|_| 0).0.len();
    let dir = seg::read_dir(&all).unwrap();
    let index_bytes: usize = dir
        .layout
        .iter()
        .zip(&dir.lens)
        .filter(|((id, _), _)| *id >= chunk::UID_OFFS)
        .map(|(_, l)| l)
        .sum();
    eprintln!(
        "file {} bytes, index chunks {index_bytes} bytes ({:.2} per edge row); the same \
         image as minor 1: {plain} bytes",
        all.len(),
        index_bytes as f64 / m.edges.max(1) as f64
    );
    eprintln!(
        "{m:?}\nBase::open {open:?} (crc pass {crc_only:?}); 10k × (uid name+id, out_adj, \
         node postings, edge row) {lookups:?} ({hits}); decode+load into a delta {full:?}"
    );
}

/// An image directory naming codec 4 (DFOR) is refused; so is a minor-1 directory
/// naming codec 5 or 6, an image header with non-zero base marks, an unknown minor, an
/// image directory under the flush minor 5, and a minor-3 `tt_s` chunk that is not runs;
/// a minor-4 image whose rows are out of segment order fails `verify` (S9).
#[test]
fn codec_and_minor_rules_of_the_directory() {
    let bytes = random_compacted(11, 40);
    let dir = seg::read_dir(&bytes).unwrap();
    let k = dir.codecs.iter().position(|&c| c == codec::ARITH).unwrap();
    let err = |b: &[u8]| seg::decode(b).err().expect("refused").1.to_string();
    let recrc = |b: &mut Vec<u8>| {
        let h = crc32fast::hash(&b[..80]);
        b[80..84].copy_from_slice(&h.to_le_bytes());
    };
    let b = with_codec(&bytes, k, codec::DFOR);
    assert!(err(&b).contains("inconsistent"), "{}", err(&b));
    assert!(Base::open(SegBytes::Heap(b)).is_err());
    let mut b = bytes.clone();
    b[24] = 1; // base uids = 1
    recrc(&mut b);
    assert!(err(&b).contains("full image"), "{}", err(&b));
    assert!(Base::open(SegBytes::Heap(b)).is_err());
    let mut b = bytes.clone();
    b[10] = 7; // minor 7
    recrc(&mut b);
    assert!(err(&b).contains("not supported"), "{}", err(&b));
    // ARITH is a minor-6 codec: the same image as minor 4 is refused (the edge start
    // order of an image in segment order is the identity, an ARITH column).
    assert_eq!(seg::header_minor(&bytes), Some(seg::SEG_MINOR_ARITH));
    assert!(dir.codecs.contains(&codec::ARITH));
    let mut b = bytes.clone();
    b[10] = 4;
    recrc(&mut b);
    assert!(err(&b).contains("inconsistent"), "{}", err(&b));
    assert!(Base::open(SegBytes::Heap(b)).is_err());
    // An image's directory is not a flush segment's (minor 5: no index chunks).
    let mut b = bytes.clone();
    b[10] = 5;
    recrc(&mut b);
    assert!(err(&b).contains("chunks of segment minor 5"), "{}", err(&b));
    // `tt_s` may be an integer column in a minor-4 image, never in a minor-3 one.
    let (seq, d) = seg::decode(&bytes).unwrap();
    let b3 = seg::encode_as(seq, &d, &|_| 0, SEG_MINOR_TIME_INDEX).0;
    let dir3 = seg::read_dir(&b3).unwrap();
    let k = dir3.layout.iter().position(|c| c.0 == 36).unwrap();
    assert_eq!(dir3.codecs[k], codec::RUNS);
    let b = with_codec(&b3, k, codec::PFOR);
    assert!(err(&b).contains("inconsistent"), "{}", err(&b));
    // Rows out of segment order: a minor-4 image fails S9, the same rows as minor 3 pass.
    let mut d = d;
    let i = (1..d.edges.len())
        .find(|&i| d.edges[i].vt_s != d.edges[i - 1].vt_s)
        .unwrap();
    d.edges.swap(i - 1, i);
    let (a, z) = (i as u32 - 1, i as u32);
    for c in &mut d.closes[Table::Edges] {
        c.row = if c.row == a {
            z
        } else if c.row == z {
            a
        } else {
            c.row
        };
    }
    d.closes[Table::Edges].sort_by_key(|c| c.row);
    seg::verify(&seg::encode_as(seq, &d, &|_| 0, SEG_MINOR_TIME_INDEX).0).unwrap();
    let e = seg::verify(&seg::encode_as(seq, &d, &|_| 0, seg::SEG_MINOR_SORTED).0)
        .unwrap_err()
        .1
        .to_string();
    assert!(
        e.contains("invariant S9") && e.contains(&format!("row {i} ")),
        "{e}"
    );
    // A minor-1 file with a codec-5 directory entry.
    let (seq, d) = seg::decode(&bytes).unwrap();
    let plain = seg::encode(seq, &d, &|_| 0).0;
    assert!(seg::decode(&plain).is_ok());
    let pdir = seg::read_dir(&plain).unwrap();
    let k = pdir
        .layout
        .iter()
        .position(|&(_, c)| c == codec::FOR)
        .unwrap();
    let b = with_codec(&plain, k, codec::DFORS);
    assert!(err(&b).contains("inconsistent"), "{}", err(&b));
    // Nor codec 6 (PFOR) in a minor-1 file.
    let b = with_codec(&plain, k, codec::PFOR);
    assert!(err(&b).contains("inconsistent"), "{}", err(&b));
}

/// `bytes` with directory entry `k` naming codec `c` (footer crc recomputed).
fn with_codec(bytes: &[u8], k: usize, c: u8) -> Vec<u8> {
    let t = bytes.len() - seg::SEG_TRAILER_LEN;
    let f_off = u64::from_le_bytes(bytes[t..t + 8].try_into().unwrap()) as usize;
    let mut b = bytes.to_vec();
    b[f_off + 4 + seg::DIR_ENTRY_LEN * k + 2] = c;
    let crc = crc32fast::hash(&b[f_off..t]);
    b[t + 16..t + 20].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Re-encodes `bytes` with index chunk `id`'s values (or set, for a closed-row set)
/// changed by `f` (crcs recomputed).
fn forge(bytes: &[u8], id: u16, f: impl Fn(&mut Vec<i64>)) -> Vec<u8> {
    let dir = seg::read_dir(bytes).unwrap();
    let mut out = bytes[..seg::SEG_HEADER_LEN].to_vec();
    let mut entries = Vec::new();
    for (k, &(cid, _)) in dir.layout.iter().enumerate() {
        let (o, l) = (dir.offsets[k] as usize, dir.lens[k]);
        let mut body = bytes[o..o + l].to_vec();
        let mut c = dir.codecs[k];
        if cid == id && c == codec::ROARING {
            let mut v: Vec<i64> = crate::format::bitmap::values(&body)
                .unwrap()
                .into_iter()
                .map(i64::from)
                .collect();
            f(&mut v);
            body = crate::format::bitmap::serialize(v.into_iter().map(|x| x as u32));
        } else if cid == id {
            let n = u32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
            let mut v = seg::decode_int(&body, c, n).unwrap();
            f(&mut v);
            body.clear();
            c = seg::put_int_image(&mut body, &v, dir.minor);
        }
        entries.push((
            cid,
            c,
            out.len() as u64,
            body.len() as u32,
            crc32fast::hash(&body),
        ));
        out.extend_from_slice(&body);
    }
    let f_off = out.len() as u64;
    let mut footer = (entries.len() as u32).to_le_bytes().to_vec();
    for (cid, c, o, l, crc) in entries {
        footer.extend_from_slice(&cid.to_le_bytes());
        footer.extend_from_slice(&[c, 0]);
        footer.extend_from_slice(&o.to_le_bytes());
        footer.extend_from_slice(&l.to_le_bytes());
        footer.extend_from_slice(&crc.to_le_bytes());
        footer.extend_from_slice(&0u32.to_le_bytes());
    }
    out.extend_from_slice(&footer);
    out.extend_from_slice(&f_off.to_le_bytes());
    out.extend_from_slice(&(footer.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&footer).to_le_bytes());
    out.extend_from_slice(seg::SEG_TRAILER_MAGIC);
    out
}
