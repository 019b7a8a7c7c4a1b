//! The transaction clock (`data-model.md` §7): a hybrid logical clock over an injectable
//! wall clock. `tick() = max(wall_µs, last_tt + 1)`, so transaction times strictly increase
//! even when the wall clock stalls or jumps backwards.

use crate::error::{Error, Result};

/// A source of wall-clock readings in µs since the epoch.
pub type WallClock = Box<dyn FnMut() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> WallClock {
    Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    })
}

/// A clock that replays the given readings, then repeats the last one (for tests).
pub fn scripted_clock(readings: Vec<i64>) -> WallClock {
    let mut i = 0;
    Box::new(move || {
        let v = readings.get(i).or(readings.last()).copied().unwrap_or(0);
        i += 1;
        v
    })
}

/// The hybrid logical clock.
pub struct Hlc {
    wall: WallClock,
    last_tt: Option<i64>,
}

impl Hlc {
    /// A clock whose last issued tt is `last_tt` (the log's last record, §7).
    pub fn new(wall: WallClock, last_tt: Option<i64>) -> Self {
        Hlc { wall, last_tt }
    }

    /// The last tt issued or observed.
    pub fn last_tt(&self) -> Option<i64> {
        self.last_tt
    }

    /// The next tt: `max(wall, last_tt + 1)`. A tt outside the timestamp domain
    /// `[0, OPEN_END)` (a wall clock out of range, or no tt left after `OPEN_END − 1`) is
    /// refused with `E_STATE` and consumes nothing.
    pub fn tick(&mut self) -> Result<i64> {
        let wall = (self.wall)();
        let tt = match self.last_tt {
            Some(last) => wall.max(last.saturating_add(1)),
            None => wall,
        };
        if !(0..crate::time::OPEN_END).contains(&tt) {
            return Err(Error::state(format!(
                "transaction time {tt} is outside [0, {})",
                crate::time::OPEN_END
            )));
        }
        self.last_tt = Some(tt);
        Ok(tt)
    }

    /// Accepts an explicit tt, which must exceed the last one; nothing is consumed on error.
    pub fn explicit(&mut self, tt: i64) -> Result<i64> {
        if let Some(last) = self.last_tt {
            if tt <= last {
                return Err(Error::state(format!(
                    "non-monotonic tt {tt} (last is {last})"
                )));
            }
        }
        self.last_tt = Some(tt);
        Ok(tt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_and_backwards_clock() {
        let mut c = Hlc::new(scripted_clock(vec![1000, 1000, 1000, 5000, 10]), None);
        let t: Vec<i64> = (0..5).map(|_| c.tick().unwrap()).collect();
        assert_eq!(t, vec![1000, 1001, 1002, 5000, 5001]);
        assert!(c.explicit(5001).is_err());
        assert_eq!(c.last_tt(), Some(5001));
        assert_eq!(c.explicit(7000).unwrap(), 7000);
    }
}
