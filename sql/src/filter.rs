//! The filters a scan of the version rows evaluates itself (pushed down by DataFusion):
//! `kind = 'node' | 'edge'` and comparisons of the four time columns with timestamp
//! literals (`=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, and conjunctions of them). A filter the
//! scan understands whole is pushed *exactly*: the scan compares the very values the
//! columns show (the time columns are never null; an open end is `OPEN_END`), so
//! DataFusion neither applies it again nor reads its columns for it. A conjunction of which
//! the scan understands one side is pushed *inexactly*: DataFusion applies it again to the
//! rows a scan returns, so a scan only has to keep every row that can pass. What the scan
//! gains is not building the rows (or, for `kind`, not visiting the table) that cannot.

use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use datafusion::scalar::ScalarValue;

/// Which tables (node rows, edge rows) can hold a passing row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kinds {
    pub node: bool,
    pub edge: bool,
}

/// A bound on one time column: a row passes when `time · scale  op  value` (exact integer
/// arithmetic: `scale` is 1000 for a nanosecond literal, else 1 with the literal in µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bound {
    /// 0..4: `vt_s, vt_e, tt_s, tt_e`.
    time: usize,
    op: Operator,
    scale: i128,
    value: i128,
}

/// The pushed filters of one scan, all of which a kept row passes.
#[derive(Clone, Debug)]
pub(crate) struct Pushed {
    pub kinds: Kinds,
    bounds: Vec<Bound>,
}

impl Pushed {
    /// The filters among `filters` that a scan understands (the others are ignored here and
    /// applied by DataFusion alone).
    pub fn of(filters: &[Expr]) -> Pushed {
        let mut p = Pushed {
            kinds: Kinds {
                node: true,
                edge: true,
            },
            bounds: Vec::new(),
        };
        for f in filters {
            p.add(f);
        }
        p
    }

    /// True when the scan understands `e` (all of it, or one side of a conjunction).
    pub fn understands(e: &Expr) -> bool {
        let mut p = Pushed::of(&[]);
        p.add(e)
    }

    /// True when the scan understands all of `e`: the rows it keeps are exactly those that
    /// pass `e`.
    pub fn exact(e: &Expr) -> bool {
        match e {
            Expr::BinaryExpr(BinaryExpr {
                left,
                op: Operator::And,
                right,
            }) => Pushed::exact(left) && Pushed::exact(right),
            Expr::BinaryExpr(_) => Pushed::understands(e),
            // Both bounds understood (one is enough for `understands`).
            Expr::Between(b) if !b.negated => {
                let x = || b.expr.as_ref().clone();
                Pushed::understands(&x().gt_eq(b.low.as_ref().clone()))
                    && Pushed::understands(&x().lt_eq(b.high.as_ref().clone()))
            }
            _ => false,
        }
    }

    /// Adds what `e` says; false when it says nothing understood.
    fn add(&mut self, e: &Expr) -> bool {
        match e {
            Expr::BinaryExpr(BinaryExpr {
                left,
                op: Operator::And,
                right,
            }) => {
                let l = self.add(left);
                self.add(right) || l
            }
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                if let Some((col, op, lit)) = comparison(left, *op, right) {
                    self.compare(col, op, lit)
                } else {
                    false
                }
            }
            Expr::Between(b) if !b.negated => {
                let (Some(col), Some(lo), Some(hi)) =
                    (column(&b.expr), literal(&b.low), literal(&b.high))
                else {
                    return false;
                };
                let l = self.compare(col, Operator::GtEq, lo);
                self.compare(col, Operator::LtEq, hi) || l
            }
            _ => false,
        }
    }

    fn compare(&mut self, col: &str, op: Operator, lit: &ScalarValue) -> bool {
        if col == "kind" {
            let (ScalarValue::Utf8(Some(k)) | ScalarValue::Utf8View(Some(k))) = lit else {
                return false;
            };
            if op != Operator::Eq {
                return false;
            }
            self.kinds.node &= k == "node";
            self.kinds.edge &= k == "edge";
            return true;
        }
        let Some(time) = ["vt_s", "vt_e", "tt_s", "tt_e"]
            .iter()
            .position(|c| *c == col)
        else {
            return false;
        };
        if !matches!(
            op,
            Operator::Eq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
        ) {
            return false;
        }
        let (scale, value) = match lit {
            ScalarValue::TimestampMicrosecond(Some(v), _) => (1, *v as i128),
            ScalarValue::TimestampNanosecond(Some(v), _) => (1000, *v as i128),
            ScalarValue::TimestampMillisecond(Some(v), _) => (1, *v as i128 * 1000),
            ScalarValue::TimestampSecond(Some(v), _) => (1, *v as i128 * 1_000_000),
            _ => return false,
        };
        self.bounds.push(Bound {
            time,
            op,
            scale,
            value,
        });
        true
    }

    /// True when a bound compares time `time` (0..4: `vt_s, vt_e, tt_s, tt_e`).
    pub fn reads(&self, time: usize) -> bool {
        self.bounds.iter().any(|b| b.time == time)
    }

    /// True when a row with times `[vt_s, vt_e, tt_s, tt_e]` (as the scan returns them)
    /// passes every bound.
    pub fn passes(&self, times: &[i64; 4]) -> bool {
        self.bounds.iter().all(|b| {
            let t = times[b.time] as i128 * b.scale;
            match b.op {
                Operator::Eq => t == b.value,
                Operator::Lt => t < b.value,
                Operator::LtEq => t <= b.value,
                Operator::Gt => t > b.value,
                Operator::GtEq => t >= b.value,
                _ => true,
            }
        })
    }
}

/// `column op literal`, or `literal op column` turned around.
fn comparison<'e>(
    left: &'e Expr,
    op: Operator,
    right: &'e Expr,
) -> Option<(&'e str, Operator, &'e ScalarValue)> {
    if let (Some(c), Some(l)) = (column(left), literal(right)) {
        return Some((c, op, l));
    }
    let (c, l) = (column(right)?, literal(left)?);
    Some((c, op.swap()?, l))
}

fn column(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

fn literal(e: &Expr) -> Option<&ScalarValue> {
    match e {
        Expr::Literal(v, _) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};

    fn ts_us(v: i64) -> Expr {
        Expr::Literal(ScalarValue::TimestampMicrosecond(Some(v), None), None)
    }

    #[test]
    fn time_bounds_keep_exactly_the_rows_that_pass() {
        let p = Pushed::of(&[col("vt_s").gt_eq(ts_us(10)), ts_us(20).gt(col("vt_s"))]);
        let at = |vt_s| p.passes(&[vt_s, 0, 0, 0]);
        assert!(!at(9) && at(10) && at(19) && !at(20));
        // A nanosecond literal compares exactly: 10 µs < 10_001 ns <= 11 µs.
        let ns = Expr::Literal(ScalarValue::TimestampNanosecond(Some(10_001), None), None);
        let p = Pushed::of(&[col("tt_e").gt(ns)]);
        assert!(!p.passes(&[0, 0, 0, 10]) && p.passes(&[0, 0, 0, 11]));
        let p = Pushed::of(&[col("vt_e").between(ts_us(5), ts_us(7))]);
        assert!(!p.passes(&[0, 4, 0, 0]) && p.passes(&[0, 5, 0, 0]) && !p.passes(&[0, 8, 0, 0]));
    }

    #[test]
    fn only_filters_understood_whole_are_exact() {
        let kind = col("kind").eq(lit("edge"));
        let time = col("tt_e").eq(ts_us(7));
        assert!(Pushed::exact(&kind) && Pushed::exact(&time));
        assert!(Pushed::exact(&kind.clone().and(time.clone())));
        assert!(Pushed::exact(&col("vt_s").between(ts_us(1), ts_us(2))));
        for e in [
            kind.clone().or(time.clone()),
            col("vt_s").not_between(ts_us(1), ts_us(2)),
            col("vt_s").between(ts_us(1), lit(2i64)),
            kind.and(col("src").eq(lit("n1"))),
            col("kind").not_eq(lit("edge")),
            !time,
        ] {
            assert!(!Pushed::exact(&e), "{e}");
        }
    }

    #[test]
    fn kind_selects_tables_and_other_filters_are_left_to_datafusion() {
        let p = Pushed::of(&[col("kind").eq(lit("edge"))]);
        assert_eq!(
            p.kinds,
            Kinds {
                node: false,
                edge: true
            }
        );
        let p = Pushed::of(&[col("kind").eq(lit("bogus"))]);
        assert!(!p.kinds.node && !p.kinds.edge);
        // Not understood: other columns, other operators, disjunctions, casts.
        for e in [
            col("src").eq(lit("n1")),
            col("vt_s").not_eq(ts_us(1)),
            col("vt_s").gt(ts_us(1)).or(col("vt_s").lt(ts_us(0))),
            col("vt_s").gt(lit(5i64)),
        ] {
            assert!(!Pushed::understands(&e), "{e}");
            assert!(Pushed::of(&[e]).passes(&[0, 0, 0, 0]));
        }
        // One understood side of a conjunction is enough (the scan keeps a superset).
        let e = col("src").eq(lit("n1")).and(col("vt_s").lt(ts_us(3)));
        assert!(Pushed::understands(&e) && !Pushed::exact(&e));
        assert!(!Pushed::of(&[e]).passes(&[3, 0, 0, 0]));
    }
}
