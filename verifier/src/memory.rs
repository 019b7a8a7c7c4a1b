//! The memory a reducer's complete input is estimated to take (the executor's
//! `max_reducer_bytes` ceiling, `docs/plans.md#ceilings`): the heap a `serde_json` value
//! holds, and the estimate of a complete result from the rows of the page it was cut from.
//!
//! The row budget alone cannot protect the process: rows are as wide as their operator makes
//! them, and a reducer over a million `version_history` rows held as JSON values takes
//! several GB per copy. The estimate is made before the producing call is re-run, from
//! the page the plan already holds, so a plan over the budget is refused with `E_LIMIT`
//! instead of being killed for memory.

use serde_json::Value;
use tgms_operators::json::project_row;

/// Bytes an allocation costs beyond its size (the allocator's header and rounding).
const ALLOC_OVERHEAD_BYTES: u64 = 16;
/// `size_of::<Value>()`: the inline part of every value, held by its parent.
const VALUE_BYTES: u64 = std::mem::size_of::<Value>() as u64;
/// One `BTreeMap` node of `serde_json::Map`: 11 `(String, Value)` slots and the links.
const MAP_NODE_BYTES: u64 = 11 * (24 + VALUE_BYTES) + 48;
/// Entries of a map per node beyond the first (nodes are half to wholly full).
const MAP_ENTRIES_PER_NODE: u64 = 6;
/// Page rows sampled for the per-row estimate.
const SAMPLE_ROWS: usize = 256;

/// Copies of the complete input that a `compute` step holds at its peak: the producing
/// step's complete envelope, the list its `$ref` selects, and the reducer's own working
/// rows and output. Measured, not derived: the peak resident memory that a plan step added
/// on the bench VM was 4.2× this module's estimate of one copy over 300,009
/// `version_history` rows and 2.7× over 99,712 `aggregate_events` pair rows
/// (`bench/RESULTS.md`, seventeenth session); rounded up with a margin.
pub const PEAK_COPIES: u64 = 5;

/// Heap bytes `v` holds beyond its own inline [`Value`] (strings, numbers' digits under
/// `arbitrary_precision`, array buffers, map nodes and keys).
pub fn heap_bytes(v: &Value) -> u64 {
    fn text(len: usize) -> u64 {
        if len == 0 {
            0
        } else {
            len as u64 + ALLOC_OVERHEAD_BYTES
        }
    }
    match v {
        Value::Null | Value::Bool(_) => 0,
        Value::Number(n) => text(n.as_str().len()),
        Value::String(s) => text(s.capacity()),
        Value::Array(a) => {
            let buf = if a.capacity() == 0 {
                0
            } else {
                a.capacity() as u64 * VALUE_BYTES + ALLOC_OVERHEAD_BYTES
            };
            buf + a.iter().map(heap_bytes).sum::<u64>()
        }
        Value::Object(m) => {
            let n = m.len() as u64;
            let nodes = if n == 0 {
                0
            } else {
                1 + n.saturating_sub(11).div_ceil(MAP_ENTRIES_PER_NODE)
            };
            nodes * (MAP_NODE_BYTES + ALLOC_OVERHEAD_BYTES)
                + m.iter()
                    .map(|(k, x)| text(k.len()) + heap_bytes(x))
                    .sum::<u64>()
        }
    }
}

/// The estimated bytes of a complete list of `total` rows held as JSON values, one copy,
/// from the page's rows (the first 256 of them, `SAMPLE_ROWS`); `None` for an empty page
/// (nothing to estimate from: the row budget alone applies).
pub fn list_bytes(page: &[Value], total: i64) -> Option<u64> {
    let sample = &page[..page.len().min(SAMPLE_ROWS)];
    if sample.is_empty() {
        return None;
    }
    let bytes: u64 = sample.iter().map(|r| VALUE_BYTES + heap_bytes(r)).sum();
    let per_row = bytes.div_ceil(sample.len() as u64);
    Some(per_row.saturating_mul(u64::try_from(total).unwrap_or(0)))
}

/// Copies of the complete list of whole rows that a `compute` step reading only some
/// columns holds at its peak: the producer's complete envelope while it is built and kept.
/// Measured with [`PEAK_COPIES`]: a `median` over 300,009 `version_history` rows cut to one
/// column peaked at 2.2× the estimate of one whole copy, for an estimate of 2× whole plus
/// 5× the cut rows = 3.9× (`bench/RESULTS.md`, eighteenth session).
pub const PRODUCER_COPIES: u64 = 2;

/// Copies of the rows cut to columns that a `compute` step holds at its peak when the
/// producer rendered them cut (`streamed`): the step's resolved args, the operator's own
/// arguments, and the reducer's working set; the producer's cut list moves into the args
/// unless a later step reads it too. Measured: a `median` over 1,002,318 `version_history`
/// rows peaked at 1.90 GB of resident memory for the whole `tgms plan run`, against this
/// module's estimate of 2.58 GB (`bench/RESULTS.md`, thirty-seventh session).
pub const STREAMED_CUT_COPIES: u64 = 3;

/// The estimated peak bytes of a `compute` step over the complete list: [`list_bytes`]
/// times [`PEAK_COPIES`]; for a reducer that reads only `columns` of each row (the executor
/// copies only those), the rows cut to the columns plus what the producer holds: with
/// `streamed` (the producer renders the list chunk by chunk, cut as it goes) the canonical
/// text of the whole rows ([`text_bytes`]) and [`STREAMED_CUT_COPIES`] copies of the cut
/// rows, else [`PRODUCER_COPIES`] whole copies and [`PEAK_COPIES`] of the cut rows.
pub fn reducer_peak_bytes(
    page: &[Value],
    total: i64,
    columns: Option<&[String]>,
    streamed: bool,
) -> Option<u64> {
    let whole = list_bytes(page, total)?;
    let Some(cols) = columns else {
        return Some(whole.saturating_mul(PEAK_COPIES));
    };
    let cut: Vec<Value> = page
        .iter()
        .take(SAMPLE_ROWS)
        .map(|r| project_row(r, cols))
        .collect();
    let cut = list_bytes(&cut, total)?;
    Some(if streamed {
        text_bytes(page, total)?.saturating_add(cut.saturating_mul(STREAMED_CUT_COPIES))
    } else {
        whole
            .saturating_mul(PRODUCER_COPIES)
            .saturating_add(cut.saturating_mul(PEAK_COPIES))
    })
}

/// The estimated length of the canonical text of a complete list of `total` rows, from the
/// page's rows (the first 256 of them, `SAMPLE_ROWS`); `None` for an empty page.
pub fn text_bytes(page: &[Value], total: i64) -> Option<u64> {
    let sample = &page[..page.len().min(SAMPLE_ROWS)];
    if sample.is_empty() {
        return None;
    }
    let bytes: u64 = sample
        .iter()
        .map(|r| tgms_engine::canon::to_string(r).len() as u64 + 1)
        .sum();
    Some(
        bytes
            .div_ceil(sample.len() as u64)
            .saturating_mul(u64::try_from(total).unwrap_or(0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_strings_and_containers() {
        assert_eq!(heap_bytes(&json!(null)), 0);
        assert_eq!(heap_bytes(&json!(true)), 0);
        assert_eq!(heap_bytes(&json!("")), 0);
        // arbitrary_precision keeps a number's digits on the heap.
        assert_eq!(heap_bytes(&json!(12345)), 5 + ALLOC_OVERHEAD_BYTES);
        assert_eq!(
            heap_bytes(&Value::String("abcdefgh".into())),
            8 + ALLOC_OVERHEAD_BYTES
        );
        let a = Value::Array(vec![json!(null), json!(false)]);
        assert_eq!(heap_bytes(&a), 2 * VALUE_BYTES + ALLOC_OVERHEAD_BYTES);
        // A map of up to 11 entries is one node; the 12th needs more.
        let small: serde_json::Map<String, Value> =
            (0..11).map(|i| (format!("k{i:02}"), json!(null))).collect();
        let node = MAP_NODE_BYTES + ALLOC_OVERHEAD_BYTES;
        let keys = 11 * (3 + ALLOC_OVERHEAD_BYTES);
        assert_eq!(heap_bytes(&Value::Object(small.clone())), node + keys);
        let mut big = small;
        big.insert("k11".into(), json!(null));
        assert_eq!(
            heap_bytes(&Value::Object(big)),
            2 * node + keys + 3 + ALLOC_OVERHEAD_BYTES
        );
    }

    #[test]
    fn a_list_is_estimated_from_its_page() {
        assert_eq!(list_bytes(&[], 10), None);
        let row = json!({"uid": "node-1", "t": 5});
        let one = VALUE_BYTES + heap_bytes(&row);
        assert_eq!(
            list_bytes(&[row.clone(), row.clone()], 1000),
            Some(1000 * one)
        );
        for streamed in [false, true] {
            assert_eq!(
                reducer_peak_bytes(std::slice::from_ref(&row), 10, None, streamed),
                Some(10 * one * PEAK_COPIES)
            );
        }
        // Cut to one column: the whole rows twice, the cut rows five times.
        let cut = VALUE_BYTES + heap_bytes(&json!({"t": 5}));
        assert!(cut < one);
        let t = ["t".to_string()];
        assert_eq!(
            reducer_peak_bytes(std::slice::from_ref(&row), 10, Some(&t), false),
            Some(10 * (one * PRODUCER_COPIES + cut * PEAK_COPIES))
        );
        // Streamed: the whole rows' text once (`{"t":5,"uid":"node-1"}` and a comma).
        assert_eq!(text_bytes(std::slice::from_ref(&row), 10), Some(10 * 23));
        assert_eq!(
            reducer_peak_bytes(std::slice::from_ref(&row), 10, Some(&t), true),
            Some(10 * (23 + cut * STREAMED_CUT_COPIES))
        );
        // Wider rows, a larger estimate for the same count.
        let wide = json!({"uid": "node-1", "t": 5, "props": {"note": "x".repeat(500)}});
        assert!(list_bytes(&[wide], 1000).unwrap() > 1000 * (one + 500));
    }
}
