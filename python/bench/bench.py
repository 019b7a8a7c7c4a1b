"""Small benchmark of the Python package (bench/RESULTS.md, docs/python.md): the overhead of
`Store.call` over the same call in Rust for a small result, and the cost of handing large
results to pyarrow / polars. Run after python/test.sh built the extension:

    nice -n 10 target/tmp/py-venv/bin/python python/bench/bench.py --events 1000000
"""

import argparse
import statistics
import tempfile
import time

import polars as pl
import pyarrow as pa

import tgms

T0 = 1_090_000_000_000_000
DAY = 86_400_000_000


def timed(f, n):
    """Median seconds of n runs of f."""
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--nodes", type=int, default=10_000)
    args = ap.parse_args()
    n = args.events
    import random

    rng = random.Random(1)
    src = [f"u{rng.randrange(args.nodes)}" for _ in range(n)]
    dst = [f"u{rng.randrange(args.nodes)}" for _ in range(n)]
    t = sorted(T0 + rng.randrange(365 * DAY) for _ in range(n))
    table = pa.table({"src": src, "dst": dst, "t": t, "w": [rng.randrange(100) for _ in range(n)]})
    with tempfile.TemporaryDirectory() as d:
        st = tgms.Store.create(f"{d}/s")
        t0 = time.perf_counter()
        s = st.ingest(table, src="src", dst="dst", time="t", rel_type="MSG", props=["w"])
        ingest_s = time.perf_counter() - t0
        print(f"ingest of a {n}-row pyarrow table: {ingest_s:.2f} s "
              f"({s['committed'] / ingest_s:,.0f} events/s)")

        # Small result: one node's history with 10 edges, in the loaded store (the call
        # itself is ~0.2 ms, so its noise hides the crossing), and in a 20-event store, where
        # the call is a few tens of µs: Python's per-round median against the same call and
        # Arrow conversion in Rust, rounds interleaved.
        import json

        small = {"uid": "u1", "include_edges": True, "limit": 10}
        py_us = timed(lambda: st.call("entity_history", small), 2000) * 1e6
        rust_us = statistics.median(
            st._bench_rust_call_us("entity_history", json.dumps(small), 2000) for _ in range(5))
        print(f"small call (entity_history, 10 edges): Python {py_us:.1f} µs, "
              f"Rust {rust_us:.1f} µs, overhead {py_us - rust_us:.1f} µs")
        tiny = tgms.Store.create(f"{d}/tiny")
        tiny.ingest(pa.table({"src": [f"u{i % 5}" for i in range(20)],
                              "dst": [f"u{(i + 1) % 5}" for i in range(20)],
                              "t": [T0 + i for i in range(20)]}),
                    src="src", dst="dst", time="t", rel_type="MSG")
        py_r, rust_r = [], []
        for _ in range(7):
            py_r.append(timed(lambda: tiny.call("entity_history", small), 5000) * 1e6)
            rust_r.append(tiny._bench_rust_call_us("entity_history", json.dumps(small), 5000))
        py_us, rust_us = statistics.median(py_r), statistics.median(rust_r)
        print(f"small call on a 20-event store: Python {py_us:.1f} µs, Rust {rust_us:.1f} µs, "
              f"overhead {py_us - rust_us:.1f} µs (medians of 7 rounds of 5,000)")

        # A full page of rows (10,000, the limit of one page) into pyarrow and polars. The
        # window keeps the call under the default cost ceiling at 10^6 events (a listing of
        # every edge version is refused there with E_COST and a narrowing repair).
        page = {"kind": "edge", "limit": 10000,
                "window": {"t_a": T0, "t_b": T0 + max(1, 30 * 1_000_000 // n) * DAY}}
        r = st.call("version_history", page)
        call_s = timed(lambda: st.call("version_history", page), 5)
        rust_s = st._bench_rust_call_us("version_history", json.dumps(page), 5) / 1e6
        pa_s = timed(lambda: pa.table(r), 20)
        pl_s = timed(lambda: pl.DataFrame(r), 20)
        print(f"10,000-row page (version_history): call {call_s * 1e3:.1f} ms "
              f"(Rust {rust_s * 1e3:.1f} ms), pa.table {pa_s * 1e3:.3f} ms, "
              f"pl.DataFrame {pl_s * 1e3:.3f} ms")

        # Every page of the window's edge versions, concatenated into one pyarrow table.
        t0 = time.perf_counter()
        tables, cur, rows = [], None, 0
        while True:
            r = st.call("version_history", dict(page, cursor=cur) if cur else page)
            tables.append(pa.table(r))
            rows += len(r)
            cur = r.cursor
            if not cur:
                break
        whole = pa.concat_tables(tables)
        total_s = time.perf_counter() - t0
        handoff_s = sum(timed(lambda: pa.table(x), 1) for x in [r])
        print(f"{rows:,} rows in {len(tables)} pages to one pyarrow table: {total_s:.2f} s "
              f"({whole.num_rows:,} rows, {whole.nbytes / 1e6:.0f} MB); "
              f"pa.table of one page {handoff_s * 1e3:.3f} ms")
        st.close()


if __name__ == "__main__":
    main()
