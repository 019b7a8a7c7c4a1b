//! Calendar buckets and time zones (`docs/times.md#calendar-buckets-and-time-zones`): the
//! `timezone` argument (an IANA name such as `"Europe/Berlin"`, `"UTC"`, or a fixed offset
//! such as `"+05:30"`) and the calendar strides `day`, `iso_week`, `month` and `year`, whose
//! buckets start at local midnight of the unit's first day in that zone (daylight saving
//! included, so a local day may last 23 or 25 hours).

use crate::error::{Code, OpError};
use crate::ops::MAX_BUCKETS;
use chrono::{DateTime, Datelike, Duration, FixedOffset, LocalResult, NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;
use serde_json::json;

/// A calendar stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalUnit {
    /// Local calendar days (`day`).
    Day,
    /// ISO weeks, starting on Monday (`iso_week`).
    IsoWeek,
    /// Calendar months (`month`).
    Month,
    /// Calendar years (`year`).
    Year,
}

/// The names `stride` accepts for calendar buckets.
pub const CAL_UNITS: [&str; 4] = ["day", "iso_week", "month", "year"];

impl CalUnit {
    /// The unit named `s`, if it is one of [`CAL_UNITS`].
    pub fn parse(s: &str) -> Option<CalUnit> {
        Some(match s {
            "day" => CalUnit::Day,
            "iso_week" => CalUnit::IsoWeek,
            "month" => CalUnit::Month,
            "year" => CalUnit::Year,
            _ => return None,
        })
    }
}

/// A time zone: an IANA zone or a fixed offset from UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset from UTC (`+02:00`, `UTC`).
    Fixed(FixedOffset),
    /// An IANA zone (`Europe/Paris`), with its daylight-saving transitions.
    Iana(Tz),
}

impl Default for Zone {
    fn default() -> Self {
        Zone::Fixed(FixedOffset::east_opt(0).expect("zero offset"))
    }
}

/// Parses a `timezone` argument: `"UTC"`/`"Z"`, a fixed offset `"+02:00"`, `"-0530"`,
/// `"+05"`, or an IANA name (`"America/New_York"`, exact spelling). The error is
/// `E_INVALID_ARG` naming the value and the accepted forms.
pub fn parse_zone(s: &str) -> Result<Zone, OpError> {
    if let Some(off) = fixed_offset(s) {
        return Ok(Zone::Fixed(off));
    }
    s.parse::<Tz>().map(Zone::Iana).map_err(|_| {
        OpError::with(
            Code::InvalidArg,
            format!("unknown timezone '{s}'"),
            json!({"repair": {"accepted_forms": ["an IANA zone name such as \"Europe/Berlin\" or \"America/New_York\" (exact spelling)", "\"UTC\"", "a fixed offset such as \"+02:00\", \"-0530\" or \"+05\""],
                "docs": "docs/times.md#calendar-buckets-and-time-zones"}}),
        )
    })
}

fn fixed_offset(s: &str) -> Option<FixedOffset> {
    if s == "UTC" || s == "Z" {
        return FixedOffset::east_opt(0);
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = s[1..].chars().filter(|c| *c != ':').collect();
    let colon_ok = match s.len() {
        3 | 5 => !s.contains(':'),
        6 => s.as_bytes()[3] == b':',
        _ => false,
    };
    if !colon_ok || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits.get(..2)?.parse().ok()?;
    let m: i32 = digits
        .get(2..)
        .filter(|x| !x.is_empty())
        .map_or(Some(0), |x| x.parse().ok())?;
    if h >= 24 || m >= 60 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

impl Zone {
    /// The local civil date of the instant `t_us`.
    fn local_date(self, t_us: i64) -> Option<NaiveDate> {
        let utc = DateTime::from_timestamp_micros(t_us)?;
        Some(match self {
            Zone::Fixed(o) => utc.with_timezone(&o).date_naive(),
            Zone::Iana(z) => utc.with_timezone(&z).date_naive(),
        })
    }

    /// A fixed offset of `minutes` east of UTC (`tz_offset_minutes`, within ±1440).
    pub fn fixed_minutes(minutes: i64) -> Zone {
        let secs = i32::try_from(minutes * 60).unwrap_or(0);
        Zone::Fixed(FixedOffset::east_opt(secs).unwrap_or_else(|| Zone::default().fixed()))
    }

    fn fixed(self) -> FixedOffset {
        match self {
            Zone::Fixed(o) => o,
            Zone::Iana(_) => FixedOffset::east_opt(0).expect("zero offset"),
        }
    }

    /// The UTC offset in µs at the instant `t_us`.
    pub fn offset_us(self, t_us: i64) -> i64 {
        let secs = match self {
            Zone::Fixed(o) => o.local_minus_utc(),
            Zone::Iana(z) => match DateTime::from_timestamp_micros(t_us) {
                Some(utc) => z
                    .offset_from_utc_datetime(&utc.naive_utc())
                    .fix()
                    .local_minus_utc(),
                None => 0,
            },
        };
        i64::from(secs) * 1_000_000
    }

    /// The instant (µs) of local time `local`: the earlier of two when the local time occurs
    /// twice; an error in words when it does not occur (a daylight-saving gap).
    pub fn local_to_utc_us(self, local: chrono::NaiveDateTime) -> Result<i64, String> {
        let r = match self {
            Zone::Fixed(o) => o.from_local_datetime(&local).map(|x| x.timestamp_micros()),
            Zone::Iana(z) => z.from_local_datetime(&local).map(|x| x.timestamp_micros()),
        };
        match r {
            LocalResult::Single(t) => Ok(t),
            LocalResult::Ambiguous(a, b) => Ok(a.min(b)),
            LocalResult::None => Err(format!(
                "{local} does not exist in the call's timezone (the clocks skip it); give an explicit offset such as \"{}+01:00\"",
                local.format("%Y-%m-%dT%H:%M:%S")
            )),
        }
    }

    /// The first instant (µs) of local day `d`: its midnight, or, when midnight falls in a
    /// daylight-saving gap, the first local time that exists that day.
    fn day_start(self, d: NaiveDate) -> Option<i64> {
        let midnight = d.and_hms_opt(0, 0, 0)?;
        for step_min in (0..=24 * 60).step_by(15) {
            let local = midnight + Duration::minutes(step_min);
            let r = match self {
                Zone::Fixed(o) => o.from_local_datetime(&local).map(|x| x.timestamp_micros()),
                Zone::Iana(z) => z.from_local_datetime(&local).map(|x| x.timestamp_micros()),
            };
            match r {
                LocalResult::Single(t) => return Some(t),
                LocalResult::Ambiguous(a, b) => return Some(a.min(b)),
                LocalResult::None => {}
            }
        }
        None
    }
}

/// Days in one Gregorian cycle of 400 years: the calendar repeats itself after it.
const GREGORIAN_CYCLE_DAYS: i64 = 146_097;

/// The proleptic Gregorian month (1..=12) of `day`, counted in days from 1970-01-01.
///
/// Total over every `i64`: the day is first reduced modulo the 400-year cycle (`day` and
/// `day + 146,097` always fall in the same month), so chrono, whose dates end near year
/// ±262,000, always has a date to answer with.
pub fn month_of_epoch_day(day: i64) -> u32 {
    // 1970-01-01 is day 719,163 counted from 0001-01-01 (chrono's day 1).
    const EPOCH_FROM_CE: i64 = 719_163;
    let in_cycle = day.rem_euclid(GREGORIAN_CYCLE_DAYS);
    i32::try_from(EPOCH_FROM_CE + in_cycle)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        // Unreachable: the value lies in 1970..2370, inside chrono's range.
        .map_or(1, |d| d.month())
}

/// The first day of the unit containing local date `d`.
fn unit_first_day(unit: CalUnit, d: NaiveDate) -> Option<NaiveDate> {
    match unit {
        CalUnit::Day => Some(d),
        CalUnit::IsoWeek => d.checked_sub_signed(Duration::days(i64::from(
            d.weekday().num_days_from_monday(),
        ))),
        CalUnit::Month => NaiveDate::from_ymd_opt(d.year(), d.month(), 1),
        CalUnit::Year => NaiveDate::from_ymd_opt(d.year(), 1, 1),
    }
}

/// The first day of the unit after the one starting on `d`.
fn next_first_day(unit: CalUnit, d: NaiveDate) -> Option<NaiveDate> {
    match unit {
        CalUnit::Day => d.succ_opt(),
        CalUnit::IsoWeek => d.checked_add_signed(Duration::days(7)),
        CalUnit::Month if d.month() == 12 => NaiveDate::from_ymd_opt(d.year() + 1, 1, 1),
        CalUnit::Month => NaiveDate::from_ymd_opt(d.year(), d.month() + 1, 1),
        CalUnit::Year => NaiveDate::from_ymd_opt(d.year() + 1, 1, 1),
    }
}

/// The calendar buckets of `[t_a, t_b)` (`t_a < t_b`): one per unit of `zone` that the
/// window touches, `[max(t_a, unit start), min(t_b, next unit start))`, in order. More than
/// 2,000 → `E_LIMIT` naming a coarser unit.
pub fn buckets(t_a: i64, t_b: i64, unit: CalUnit, zone: Zone) -> Result<Vec<(i64, i64)>, OpError> {
    let bad = || OpError::invalid(format!("window [{t_a}, {t_b}) is outside the calendar"));
    let mut day = unit_first_day(unit, zone.local_date(t_a).ok_or_else(bad)?).ok_or_else(bad)?;
    let mut out = Vec::new();
    let mut lo = t_a;
    while lo < t_b {
        if out.len() == MAX_BUCKETS as usize {
            return Err(OpError::new(
                Code::Limit,
                "bucket count exceeds cap 2000; use a coarser calendar unit (day < iso_week < month < year) or a shorter window",
            ));
        }
        day = next_first_day(unit, day).ok_or_else(bad)?;
        let next = zone.day_start(day).ok_or_else(bad)?;
        let hi = next.min(t_b);
        out.push((lo, hi));
        lo = hi;
    }
    Ok(out)
}

/// The `timezone` argument of a call (UTC when absent or null).
pub fn zone_arg(args: &crate::args::Args) -> Result<Zone, OpError> {
    match args.get("timezone").and_then(serde_json::Value::as_str) {
        Some(z) => parse_zone(z),
        None => Ok(Zone::default()),
    }
}

/// Validator: a `timezone` argument must name a zone.
pub fn validate_timezone(args: &crate::args::Args) -> Result<(), OpError> {
    zone_arg(args).map(|_| ())
}

/// The calendar unit of a `stride` argument, when it names one.
pub fn stride_unit(args: &crate::args::Args) -> Option<CalUnit> {
    args.get("stride")
        .and_then(serde_json::Value::as_str)
        .and_then(CalUnit::parse)
}

/// The index of the bucket of `buckets` (as from [`buckets`]) holding `t`, which must lie
/// in the window.
pub fn bucket_index(buckets: &[(i64, i64)], t: i64) -> usize {
    buckets.partition_point(|b| b.1 <= t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000_000;

    fn us(s: &str) -> i64 {
        crate::timeparse::parse_instant_us(s).unwrap()
    }

    #[test]
    fn zones_parse_and_refuse() {
        assert_eq!(parse_zone("UTC").unwrap(), Zone::default());
        for (s, secs) in [("+02:00", 7200), ("-0530", -19800), ("+05", 18000)] {
            assert_eq!(
                parse_zone(s).unwrap(),
                Zone::Fixed(FixedOffset::east_opt(secs).unwrap())
            );
        }
        assert!(matches!(
            parse_zone("Europe/Berlin").unwrap(),
            Zone::Iana(_)
        ));
        for bad in [
            "Mars/Base",
            "+24:00",
            "+2",
            "europe/berlin",
            "",
            "+02:60",
            "CET+1",
        ] {
            let e = parse_zone(bad).unwrap_err();
            assert_eq!(e.code, Code::InvalidArg, "{bad}");
            assert!(e.message.contains("unknown timezone"), "{bad}");
        }
    }

    #[test]
    fn month_of_every_day_of_one_gregorian_cycle_and_of_the_extremes() {
        // An independent walk: month lengths by the leap-year rule, from 1970-01-01 on,
        // for the whole 400-year cycle, then the same walk backwards from 1969-12-31.
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut day = 0i64;
        for y in 1970..2370 {
            for m in 1..=12 {
                for _ in 0..len(y, m) {
                    assert_eq!(month_of_epoch_day(day), m, "day {day} ({y}-{m})");
                    day += 1;
                }
            }
        }
        assert_eq!(day, GREGORIAN_CYCLE_DAYS);
        let mut day = -1i64;
        for y in (1570..1970).rev() {
            for m in (1..=12).rev() {
                for _ in 0..len(y, m) {
                    assert_eq!(month_of_epoch_day(day), m, "day {day} ({y}-{m})");
                    day -= 1;
                }
            }
        }
        // The µs clock's ends: -290308-12-21 and 294247-01-10, outside chrono's dates.
        assert_eq!(month_of_epoch_day(i64::MIN.div_euclid(86_400_000_000)), 12);
        assert_eq!(month_of_epoch_day(i64::MAX.div_euclid(86_400_000_000)), 1);
    }

    #[test]
    fn months_weeks_and_years_in_utc_and_berlin() {
        let utc = Zone::default();
        let b = buckets(us("2004-04-15"), us("2004-07-02"), CalUnit::Month, utc).unwrap();
        assert_eq!(
            b,
            vec![
                (us("2004-04-15"), us("2004-05-01")),
                (us("2004-05-01"), us("2004-06-01")),
                (us("2004-06-01"), us("2004-07-01")),
                (us("2004-07-01"), us("2004-07-02")),
            ]
        );
        // 2004-04-15 was a Thursday: its ISO week began Monday 2004-04-12.
        let w = buckets(us("2004-04-15"), us("2004-04-27"), CalUnit::IsoWeek, utc).unwrap();
        assert_eq!(w[0], (us("2004-04-15"), us("2004-04-19")));
        assert_eq!(w[1], (us("2004-04-19"), us("2004-04-26")));
        assert_eq!(w.len(), 3);
        let y = buckets(us("2010-11-08"), us("2016-01-25"), CalUnit::Year, utc).unwrap();
        assert_eq!(y.len(), 7);
        assert_eq!(y[1], (us("2011-01-01"), us("2012-01-01")));
        // Berlin: CET (+01) in winter, CEST (+02) from 2004-03-28 to 2004-10-31.
        let berlin = parse_zone("Europe/Berlin").unwrap();
        let m = buckets(
            us("2004-10-01T00:00:00+02:00"),
            us("2004-12-01T00:00:00+01:00"),
            CalUnit::Month,
            berlin,
        )
        .unwrap();
        assert_eq!(
            m,
            vec![
                (
                    us("2004-10-01T00:00:00+02:00"),
                    us("2004-11-01T00:00:00+01:00")
                ),
                (
                    us("2004-11-01T00:00:00+01:00"),
                    us("2004-12-01T00:00:00+01:00")
                ),
            ]
        );
        // The day the clocks went back lasted 25 hours; the spring one 23.
        let d = buckets(
            us("2004-10-31T00:00:00+02:00"),
            us("2004-11-02T00:00:00+01:00"),
            CalUnit::Day,
            berlin,
        )
        .unwrap();
        assert_eq!(d[0].1 - d[0].0, 25 * H);
        let s = buckets(
            us("2004-03-28T00:00:00+01:00"),
            us("2004-03-29T00:00:00+02:00"),
            CalUnit::Day,
            berlin,
        )
        .unwrap();
        assert_eq!(
            s,
            vec![(
                us("2004-03-28T00:00:00+01:00"),
                us("2004-03-29T00:00:00+02:00")
            )]
        );
        assert_eq!(s[0].1 - s[0].0, 23 * H);
        assert_eq!(bucket_index(&m, us("2004-10-31T23:59:59+01:00")), 0);
        assert_eq!(bucket_index(&m, us("2004-11-01T00:00:00+01:00")), 1);
        // Midnight that does not exist (Sao Paulo moved clocks forward at 00:00 on
        // 2004-11-02): the day starts at 01:00 local.
        let sp = parse_zone("America/Sao_Paulo").unwrap();
        let d = buckets(
            us("2004-11-01T00:00:00-03:00"),
            us("2004-11-03T00:00:00-02:00"),
            CalUnit::Day,
            sp,
        )
        .unwrap();
        assert_eq!(
            d[0],
            (
                us("2004-11-01T00:00:00-03:00"),
                us("2004-11-02T01:00:00-02:00")
            )
        );
        // Too many buckets: E_LIMIT naming a coarser unit.
        let e = buckets(0, us("2010-01-01"), CalUnit::Day, utc).unwrap_err();
        assert_eq!(e.code, Code::Limit);
        assert!(e.message.contains("coarser calendar unit"));
    }
}
