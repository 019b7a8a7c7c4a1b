#!/usr/bin/env python3
"""`tgms sql` (DataFusion over the live store's segments) against DuckDB over the typed
Parquet export of the same store, side by side in one run, on the aggregation queries of
bench/sql/queries.json. Both run in-process (one session each, the same thread count), each
query `warmups + reps` times; prints the medians and their ratio, and checks that both
answer the same.

    python3 bench/sql/compare.py STORE [--reps 5] [--threads 2]

Needs a release build of the bench example (`cargo build --release -p tgms-sql --example
sql_bench`) and DuckDB (`bench/eval/duckdb-venv.sh VENV`, then run this with VENV's python).
Writes STORE.parquet next to the store with `tgms export-rows --typed` when it is missing.
"""
import argparse, json, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    import duckdb

    queries = os.path.join(ROOT, "bench/sql/queries.json")
    qs = json.load(open(queries))
    parquet = a.store.rstrip("/") + ".parquet"
    if not os.path.exists(parquet):
        subprocess.run([os.path.join(ROOT, "target/release/tgms"), "export-rows", a.store, parquet, "--typed"], check=True)
    env = dict(os.environ, DATAFUSION_EXECUTION_TARGET_PARTITIONS=str(a.threads))
    out = subprocess.run([os.path.join(ROOT, "target/release/examples/sql_bench"), a.store, queries, str(a.reps)],
                         check=True, capture_output=True, text=True, env=env).stdout
    ours = {r["name"]: r for r in map(json.loads, out.splitlines())}
    c = duckdb.connect()
    c.execute(f"SET threads = {a.threads}")
    c.execute(f"CREATE VIEW r AS SELECT * FROM read_parquet('{parquet}')")
    print(f"{'query':<14} {'tgms sql ms':>12} {'duckdb ms':>10} {'ratio':>7}  rows")
    for q in qs:
        ms = []
        for i in range(a.reps + 1):
            t = time.perf_counter()
            rows = c.execute(q["duckdb"]).fetchall()
            if i:
                ms.append((time.perf_counter() - t) * 1e3)
        d = statistics.median(ms)
        o = ours[q["name"]]
        same = "same" if o["rows"] == len(rows) else f"DIFFERENT ({o['rows']} vs {len(rows)})"
        print(f"{q['name']:<14} {o['median_ms']:>12.1f} {d:>10.1f} {o['median_ms'] / d:>7.2f}  {same}")
    print(f"tgms open + prop typing: {next(iter(ours.values()))['open_ms']:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
