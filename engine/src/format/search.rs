//! Binary search over positions whose keys are read on demand (encoded columns, bitmap
//! containers), where no slice exists for `partition_point`.

/// The first index in `0..n` at which `below` is false, for a `below` that holds on a prefix
/// of the range (a binary search over positions whose keys are read on demand).
pub(crate) fn first_not_below(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
