//! In-process latency of `tgms sql` queries (bench/sql/compare.py): opens a store read-only,
//! makes one session, runs each query of a JSON file `[{"name", "tgms"}, …]` `warmups + reps`
//! times and prints one JSON line per query: the median, min and max of the reps in ms, the
//! result's rows, and the time to open the store and type its props.
//!
//! `cargo run --release -p tgms-sql --example sql_bench -- STORE QUERIES.json [REPS]`

use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, store, queries, rest @ ..] = &args[..] else {
        return Err("usage: sql_bench STORE QUERIES.json [REPS]".into());
    };
    let reps: usize = rest.first().map_or(Ok(5), |r| r.parse())?;
    let t = Instant::now();
    let st = Arc::new(tgms_engine::Store::open_read_only(std::path::Path::new(
        store,
    ))?);
    let ctx = tgms_sql::session(st, None)?;
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let qs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(queries)?)?;
    for q in qs.as_array().ok_or("QUERIES.json is not an array")? {
        let (name, sql) = (
            q["name"].as_str().unwrap_or("?"),
            q["tgms"].as_str().unwrap_or(""),
        );
        let mut ms = Vec::new();
        let mut rows = 0;
        for i in 0..reps + 1 {
            let t = Instant::now();
            let (_, batches) = tgms_sql::query(&ctx, sql)?;
            if i > 0 {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            rows = batches.iter().map(|b| b.num_rows()).sum::<usize>();
        }
        ms.sort_by(f64::total_cmp);
        let line = serde_json::json!({
            "name": name, "median_ms": ms[ms.len() / 2], "min_ms": ms[0],
            "max_ms": ms[ms.len() - 1], "rows": rows, "open_ms": open_ms,
        });
        println!("{line}");
    }
    Ok(())
}
