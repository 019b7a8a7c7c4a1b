//! The standard normal quantile function Φ⁻¹ (Wichura's algorithm AS 241, `PPND16`, Applied
//! Statistics 37 (1988) 477–484: relative accuracy about 1e-16 over (0, 1)), used for the
//! critical value `z` of the approximate motif counts' confidence intervals.

// The coefficients are written as published (20 significant digits), so they can be
// checked against the paper; the compiler rounds them to the nearest f64.
#![allow(clippy::excessive_precision)]

/// Φ⁻¹(`p`) for `p` in (0, 1); `None` outside (the quantile is infinite or undefined).
pub fn normal_quantile(p: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        let num = poly(
            &[
                3.387_132_872_796_366_608,
                1.331_416_678_917_843_774_5e2,
                1.971_590_950_306_551_442_7e3,
                1.373_169_376_550_946_112_5e4,
                4.592_195_393_154_987_145_7e4,
                6.726_577_092_700_870_085_3e4,
                3.343_057_558_358_812_810_5e4,
                2.509_080_928_730_122_672_7e3,
            ],
            r,
        );
        let den = poly(
            &[
                1.0,
                4.231_333_070_160_091_125_2e1,
                6.871_870_074_920_579_083e2,
                5.394_196_021_424_751_107_7e3,
                2.121_379_430_158_659_586_7e4,
                3.930_789_580_009_271_061e4,
                2.872_908_573_572_194_267_4e4,
                5.226_495_278_852_854_561e3,
            ],
            r,
        );
        return Some(q * num / den);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let val = if r <= 5.0 {
        let r = r - 1.6;
        poly(
            &[
                1.423_437_110_749_683_577_34,
                4.630_337_846_156_545_295_9,
                5.769_497_221_460_691_405_5,
                3.647_848_324_763_204_605_04,
                1.270_458_252_452_368_382_58,
                2.417_807_251_774_506_117_7e-1,
                2.272_384_498_926_918_458_33e-2,
                7.745_450_142_783_414_076_4e-4,
            ],
            r,
        ) / poly(
            &[
                1.0,
                2.053_191_626_637_758_821_87,
                1.676_384_830_183_803_849_4,
                6.897_673_349_851_000_045_5e-1,
                1.481_039_764_274_800_745_9e-1,
                1.519_866_656_361_645_719_66e-2,
                5.475_938_084_995_344_946e-4,
                1.050_750_071_644_416_843_24e-9,
            ],
            r,
        )
    } else {
        let r = r - 5.0;
        poly(
            &[
                6.657_904_643_501_103_777_2,
                5.463_784_911_164_114_369_9,
                1.784_826_539_917_291_335_8,
                2.965_605_718_285_048_912_3e-1,
                2.653_218_952_657_612_309_3e-2,
                1.242_660_947_388_078_438_6e-3,
                2.711_555_568_743_487_578_15e-5,
                2.010_334_399_292_288_132_65e-7,
            ],
            r,
        ) / poly(
            &[
                1.0,
                5.998_322_065_558_879_376_9e-1,
                1.369_298_809_227_358_053_1e-1,
                1.487_536_129_085_061_485_25e-2,
                7.868_691_311_456_132_591e-4,
                1.846_318_317_510_054_681_8e-5,
                1.421_511_758_316_445_888_7e-7,
                2.044_263_103_389_939_785_64e-15,
            ],
            r,
        )
    };
    Some(if q < 0.0 { -val } else { val })
}

/// `c[0] + c[1]·x + … + c[7]·x⁷` by Horner's rule.
fn poly(c: &[f64; 8], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &k| acc * x + k)
}

#[cfg(test)]
mod tests {
    use super::normal_quantile;

    /// Reference values: the standard normal table (Abramowitz and Stegun 26.2, and the
    /// Python's `statistics.NormalDist().inv_cdf`).
    #[test]
    fn matches_tabulated_quantiles() {
        let cases = [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.95, 1.644_853_626_951_472_2),
            (0.995, 2.575_829_303_548_900_4),
            (0.999, 3.090_232_306_167_813_5),
            (0.841_344_746_068_542_9, 1.0),
            (0.025, -1.959_963_984_540_054),
            (1e-10, -6.361_340_902_404_056),
            (1e-300, -37.047_096_299_361_2),
            (0.3, -0.524_400_512_708_040_7),
        ];
        for (p, z) in cases {
            let got = normal_quantile(p).unwrap();
            assert!(
                (got - z).abs() <= 1e-12 * z.abs().max(1.0),
                "Φ⁻¹({p}) = {got}, expected {z}"
            );
        }
    }

    #[test]
    fn refuses_the_ends() {
        for p in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(normal_quantile(p), None);
        }
    }
}
