//! tgms-testkit: support shared by the workspace's tests (issue 23): [`Rng`], the one seeded
//! generator every randomized test draws its cases from, and [`Shared`], the counters of
//! the fault-injection hooks.
//!
//! A dev-dependency only. It depends on no other workspace crate, so any crate's tests,
//! the engine's `#[cfg(test)]` modules included, can use it without a dependency cycle.
#![warn(missing_docs)]

mod shared;
pub use shared::Shared;

/// The seeded generator of the tests: **splitmix64** (Steele, Lea and Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014; the `SplittableRandom` /
/// `splitmix64.c` stream), with the state initialised to the seed as given.
///
/// The stream is part of the tests: a randomized test names a seed, and the cases it checks
/// (and any minimum of interesting cases it asserts) follow from that seed. So the
/// algorithm, the seeding and every method's way of consuming draws are fixed; changing any
/// of them changes every randomized test's cases and needs the same review as changing the
/// tests themselves.
///
/// Any seed is valid, zero included. Streams of seeds that differ by a multiple of the
/// increment `0x9E37_79B9_7F4A_7C15` overlap (seed `s + γ` is seed `s`'s stream advanced by
/// one draw), so derive per-round seeds by adding small integers or hashing, not by
/// multiplying by that constant.
///
/// Not for product code: the bounded draws take a plain modulus (a bias of at most
/// `n / 2^64`, irrelevant for tests) and nothing here is cryptographic.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The splitmix64 increment: the odd integer nearest `2^64 / φ`.
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `[0, n)`, of `n`'s type (`next_u64() % n`; one draw).
    ///
    /// # Panics
    ///
    /// If `n` is not positive.
    pub fn below<N: Bound>(&mut self, n: N) -> N {
        let m = n
            .positive()
            .unwrap_or_else(|| panic!("Rng::below: the bound must be positive"));
        N::from_u64(self.next_u64() % m)
    }

    /// A value in `[lo, hi)` (one draw).
    ///
    /// # Panics
    ///
    /// If `hi <= lo`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo < hi, "Rng::int: empty range {lo}..{hi}");
        lo.wrapping_add(self.below(hi.wrapping_sub(lo) as u64) as i64)
    }

    /// True with probability `percent`/100 (one draw: `below(100) < percent`).
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100u64) < percent
    }

    /// A uniformly chosen element of `xs` (one draw).
    ///
    /// # Panics
    ///
    /// If `xs` is empty.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// The integer types [`Rng::below`] takes a bound of (and returns a draw of): `u8` to
/// `u64`, `usize`, `i32` and `i64`.
pub trait Bound: Copy + sealed::Sealed {
    /// The bound as a `u64` when it is positive, else `None`.
    fn positive(self) -> Option<u64>;
    /// A draw reduced below the bound, back in the bound's type (always in range).
    fn from_u64(x: u64) -> Self;
}

mod sealed {
    /// Keeps [`super::Bound`] to the integer types this crate implements it for.
    pub trait Sealed {}
}

macro_rules! bound {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Bound for $t {
            fn positive(self) -> Option<u64> {
                (self > 0).then_some(self as u64)
            }
            fn from_u64(x: u64) -> Self {
                x as $t
            }
        }
    )*};
}

bound!(u8, u16, u32, u64, usize, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream is splitmix64's: the reference outputs for seed 1234567 (`splitmix64.c`).
    #[test]
    fn reference_stream() {
        let mut r = Rng::new(1234567);
        let got: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    /// Bounded draws stay in range, in every bound type.
    #[test]
    fn draws_stay_in_range() {
        let mut r = Rng::new(0);
        for _ in 0..1000 {
            assert!(r.below(7u8) < 7);
            assert!((0..3).contains(&r.below(3i64)));
            assert!(r.below(5usize) < 5);
            assert!((-4..9).contains(&r.int(-4, 9)));
            assert!(["a", "b"].contains(&r.pick(&["a", "b"])));
        }
        assert!(!r.chance(0));
        assert!(r.chance(100));
    }

    /// A non-positive bound is refused, not reduced modulo zero.
    #[test]
    #[should_panic(expected = "must be positive")]
    fn empty_bound_panics() {
        Rng::new(1).below(-3i64);
    }
}
