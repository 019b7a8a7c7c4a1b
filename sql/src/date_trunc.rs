//! `date_trunc` over `TIMESTAMP … UTC` columns at the speed of timestamps without a zone.
//!
//! Every time column of `rows` is `TIMESTAMP(µs, UTC)`. DataFusion's `date_trunc` truncates
//! a timestamp with a zone one value at a time through the zone's calendar (a zone lookup
//! and a formatted error text per value, ~85 % of `GROUP BY date_trunc('week', vt_s)`),
//! while it truncates a timestamp without a zone, which it reads as UTC, by integer
//! arithmetic. UTC has no offset, so this `date_trunc` hands DataFusion's the UTC column as
//! a timestamp without a zone (the same buffers) and puts the zone back on the result: the
//! same instants, for every granularity. One difference, in the caller's favour: a UTC
//! instant beyond the nanosecond range (after 2262, such as `open_end()`) truncates to the
//! hour or the day as a timestamp without a zone does, where DataFusion's fails the query.

use datafusion::arrow::array::{make_array, Array, ArrayRef};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::Result;
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature,
};
use std::sync::Arc;

/// DataFusion's `date_trunc` (`inner`), with UTC timestamp arrays truncated as timestamps
/// without a zone.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct UtcDateTrunc {
    inner: Arc<ScalarUDF>,
}

impl UtcDateTrunc {
    /// The function, replacing DataFusion's `date_trunc` (and its alias `datetrunc`).
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(UtcDateTrunc {
            inner: datafusion::functions::datetime::date_trunc(),
        })
    }
}

/// `a` with data type `to` (a timestamp of the same unit with or without a zone): the same
/// buffers.
fn retyped(a: &dyn Array, to: DataType) -> Result<ArrayRef> {
    Ok(make_array(
        a.to_data().into_builder().data_type(to).build()?,
    ))
}

impl ScalarUDFImpl for UtcDateTrunc {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }
    fn signature(&self) -> &Signature {
        self.inner.signature()
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }
    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        self.inner.output_ordering(inputs)
    }
    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // The timestamp argument, where it is an array of UTC instants.
        let utc = match args.args.get(1) {
            Some(ColumnarValue::Array(a)) => match a.data_type() {
                DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == "UTC" => {
                    Some((a.clone(), *unit))
                }
                _ => None,
            },
            _ => None,
        };
        let Some((a, unit)) = utc else {
            return self.inner.invoke_with_args(args);
        };
        let naive = DataType::Timestamp(unit, None);
        args.args[1] = ColumnarValue::Array(retyped(&a, naive.clone())?);
        // The types DataFusion's function is checked against.
        if let Some(f) = args.arg_fields.get_mut(1) {
            *f = Arc::new(f.as_ref().clone().with_data_type(naive.clone()));
        }
        args.return_field = Arc::new(args.return_field.as_ref().clone().with_data_type(naive));
        match self.inner.invoke_with_args(args)? {
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(retyped(
                &a,
                DataType::Timestamp(unit, Some("UTC".into())),
            )?)),
            scalar => Ok(scalar),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::TimestampMicrosecondArray;
    use datafusion::arrow::datatypes::{Field, TimeUnit};
    use datafusion::config::ConfigOptions;
    use datafusion::scalar::ScalarValue;

    fn call(f: &ScalarUDF, unit: &str, a: ArrayRef) -> Result<ArrayRef> {
        let n = a.len();
        let field = Arc::new(Field::new("t", a.data_type().clone(), true));
        let args = ScalarFunctionArgs {
            args: vec![
                ColumnarValue::Scalar(ScalarValue::Utf8(Some(unit.into()))),
                ColumnarValue::Array(a),
            ],
            arg_fields: vec![
                Arc::new(Field::new("u", DataType::Utf8, false)),
                field.clone(),
            ],
            number_rows: n,
            return_field: field,
            config_options: Arc::new(ConfigOptions::default()),
        };
        match f.invoke_with_args(args)? {
            ColumnarValue::Array(a) => Ok(a),
            ColumnarValue::Scalar(s) => s.to_array_of_size(n),
        }
    }

    #[test]
    fn equals_datafusions_date_trunc_on_every_granularity() {
        let ours = UtcDateTrunc::udf();
        let theirs = datafusion::functions::datetime::date_trunc();
        // Instants on both sides of the epoch, at the edges of weeks, months and years
        // (1970-01-01 was a Thursday), leap days, with nulls.
        let day = 86_400_000_000i64;
        let mut v: Vec<Option<i64>> = vec![None];
        for d in [
            -100_000i64,
            -366,
            -4,
            -3,
            -1,
            0,
            3,
            4,
            58,
            59,
            789,
            11_016,
            20_000,
            100_000,
        ] {
            for us in [0, 1, day / 2, day - 1] {
                v.push(Some(d * day + us));
                v.push(Some(d * day - us));
            }
        }
        let utc: ArrayRef = Arc::new(TimestampMicrosecondArray::from(v).with_timezone("UTC"));
        let granularities = [
            "microsecond",
            "millisecond",
            "second",
            "minute",
            "hour",
            "day",
            "week",
            "month",
            "quarter",
            "year",
        ];
        for g in granularities {
            let a = call(&ours, g, utc.clone()).unwrap();
            let b = call(&theirs, g, utc.clone()).unwrap();
            assert_eq!(
                a.data_type(),
                &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            );
            assert_eq!(a.to_data(), b.to_data(), "date_trunc('{g}')");
        }
        // Other zones are DataFusion's own.
        let paris: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![Some(0), Some(5 * day + 3)])
                .with_timezone("Europe/Paris"),
        );
        let a = call(&ours, "day", paris.clone()).unwrap();
        assert_eq!(a.to_data(), call(&theirs, "day", paris).unwrap().to_data());
        // Beyond the nanosecond range: a day truncates (DataFusion's fails), a week fails
        // as DataFusion's does.
        let open: ArrayRef =
            Arc::new(TimestampMicrosecondArray::from(vec![Some(1i64 << 62)]).with_timezone("UTC"));
        assert!(call(&theirs, "day", open.clone()).is_err());
        let a = call(&ours, "day", open.clone()).unwrap();
        let a = a
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(a.value(0), (1i64 << 62) - (1i64 << 62).rem_euclid(day));
        assert!(call(&ours, "week", open).is_err());
    }
}
