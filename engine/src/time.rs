//! Time rules of `data-model.md` §2: µs since the epoch, the open bound, half-open intervals.

/// The open upper bound of every interval: 2^62 µs.
pub const OPEN_END: i64 = 1 << 62;

/// `min(x, OPEN_END − 1)`: so `as_of_tt = OPEN_END` selects exactly the believed rows.
pub fn clamp_tt(x: i64) -> i64 {
    x.min(OPEN_END - 1)
}

/// `[a, b)` and `[c, d)` overlap iff `a < d && c < b` (meeting is not overlap).
pub fn overlaps(a: i64, b: i64, c: i64, d: i64) -> bool {
    a < d && c < b
}

/// A legal interval `[s, e)` inside the timestamp domain: `0 <= s < e <= OPEN_END`.
pub fn legal_interval(s: i64, e: i64) -> bool {
    0 <= s && s < e && e <= OPEN_END
}

/// The remainder of `[vs, ve)` outside `[cs, ce)` (`data-model.md` §6.2): up to two parts.
pub fn remainder(vs: i64, ve: i64, cs: i64, ce: i64) -> impl Iterator<Item = (i64, i64)> {
    let left = (vs < cs).then_some((vs, ve.min(cs)));
    let right = (ce < ve).then_some((vs.max(ce), ve));
    left.into_iter().chain(right).filter(|(s, e)| s < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remainder_parts() {
        assert_eq!(
            remainder(0, 100, 40, 60).collect::<Vec<_>>(),
            vec![(0, 40), (60, 100)]
        );
        assert_eq!(
            remainder(10, 20, 15, 25).collect::<Vec<_>>(),
            vec![(10, 15)]
        );
        assert_eq!(remainder(10, 20, 5, 15).collect::<Vec<_>>(), vec![(15, 20)]);
        assert_eq!(remainder(10, 20, 10, 30).count(), 0);
        assert_eq!(clamp_tt(OPEN_END), OPEN_END - 1);
        assert!(overlaps(0, 10, 9, 20) && !overlaps(0, 10, 10, 20));
    }
}
