#!/usr/bin/env python3
"""Peers side by side: tgms vs DuckDB and chDB on the same version rows.

Usage (from the repository root, after `cargo build --release`):

    python3 bench/peers/peers.py --scale 100000 [--rounds 3] [--reps 10] [--json OUT.json]

The script
  1. creates bench/peers/.venv (git-ignored) and installs duckdb and chdb from PyPI into it
     on first use, then re-runs itself with that interpreter;
  2. generates the synthetic log (`tgms bench generate --scale N`, fixed clock, with its
     corrections) and exports every stored row (`tgms export-rows STORE rows.csv`);
  3. loads the rows into DuckDB and chDB (both in-process) and runs the registry queries
     they can express in SQL over version rows (belief and valid-time predicates written
     out by hand);
  4. checks that every peer answer agrees with tgms's (`tgms call`), and exits 1 if not;
  5. times in alternating rounds (tgms in-process via `tgms bench run --only …`, then DuckDB,
     then chDB, per round) and prints p50s and the ratio tgms/peer (< 1: tgms is faster),
     the median over rounds.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(HERE, ".venv")
OPEN_END = 1 << 62


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(py):
        print(f"creating {VENV} and installing duckdb, chdb …", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    try:
        subprocess.check_call([py, "-c", "import duckdb, chdb"], stderr=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        subprocess.check_call([py, "-m", "pip", "install", "-q", "duckdb", "chdb"])
    os.execv(py, [py] + sys.argv)


def tgms(exe, *args, capture=True):
    r = subprocess.run([exe, *map(str, args)], capture_output=capture, text=True)
    if r.returncode != 0:
        raise SystemExit(f"tgms {' '.join(map(str, args))} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def queries(n):
    """The registry queries expressible over version rows, with their tgms call and SQL."""
    t0, t1 = 0, n
    span = t1 - t0
    mid = t0 + span // 2
    stride = max(1, span // 100)
    tt_epoch1 = 1_700_000_000_000_000 + -(-n // 50_000) + 1
    believed = f"tt_e = {OPEN_END}"
    return [
        {
            "id": "hist.single", "op": "entity_history", "args": {"uid": "n1"},
            "tgms": lambda e: e["rows_total"],
            "sql": f"SELECT count(*) FROM rows WHERE kind = 'node' AND uid = 'n1' AND {believed}",
        },
        {
            "id": "hist.asof", "op": "entity_history", "args": {"uid": "n1", "as_of_tt": tt_epoch1},
            "tgms": lambda e: e["rows_total"],
            "sql": f"SELECT count(*) FROM rows WHERE kind = 'node' AND uid = 'n1' "
                   f"AND tt_s <= {tt_epoch1} AND {tt_epoch1} < tt_e",
        },
        {
            "id": "series.count", "op": "graph_metric_timeseries",
            "args": {"metric": "edge_event_count", "window": {"t_a": t0, "t_b": t1}, "stride": stride},
            "tgms": lambda e: [r["value"] for r in e["rows"]],
            "sql": {
                "duckdb": f"SELECT (vt_s - {t0}) // {stride} AS b, count(*) FROM rows WHERE kind = 'edge' "
                          f"AND {believed} AND vt_s >= {t0} AND vt_s < {t1} GROUP BY b ORDER BY b",
                "chdb": f"SELECT intDiv(vt_s - {t0}, {stride}) AS b, count(*) FROM rows WHERE kind = 'edge' "
                        f"AND {believed} AND vt_s >= {t0} AND vt_s < {t1} GROUP BY b ORDER BY b",
            },
            "buckets": -(-span // stride),
        },
        {
            "id": "resolve.substr", "op": "resolve_entities", "args": {"query": "n1"},
            "tgms": lambda e: e["rows_total"],
            # uid substring matches; on the synthetic log no name matches beyond them.
            "sql": f"SELECT count(DISTINCT uid) FROM rows WHERE kind = 'node' AND {believed} "
                   f"AND lower(uid) LIKE '%n1%'",
        },
        {
            "id": "state.at", "op": "state_at", "args": {"uid": "n1", "at": mid, "direction": "both"},
            "tgms": lambda e: e["rows_total"],
            "sql": f"SELECT count(DISTINCT vid) FROM rows WHERE kind = 'edge' AND {believed} "
                   f"AND (src = 'n1' OR dst = 'n1') AND vt_s <= {mid} AND {mid} < vt_e",
        },
    ]


def sql_for(q, system):
    s = q["sql"]
    return s[system] if isinstance(s, dict) else s


def normalize(q, rows):
    if "buckets" in q:
        out = [0] * q["buckets"]
        for b, c in rows:
            out[int(b)] = int(c)
        return out
    return int(rows[0][0])


class Duck:
    name = "duckdb"

    def __init__(self, csv):
        import duckdb
        self.version = duckdb.__version__
        self.con = duckdb.connect()
        t = time.perf_counter()
        self.con.execute(
            f"CREATE TABLE rows AS SELECT * FROM read_csv('{csv}', header = true, "
            "types = {'vt_s': 'BIGINT', 'vt_e': 'BIGINT', 'tt_s': 'BIGINT', 'tt_e': 'BIGINT'})")
        self.load_s = time.perf_counter() - t

    def run(self, sql):
        return self.con.execute(sql).fetchall()


class Ch:
    name = "chdb"

    def __init__(self, csv):
        import chdb
        from chdb import session
        self.version = chdb.__version__
        self.sess = session.Session()
        t = time.perf_counter()
        self.sess.query("CREATE DATABASE IF NOT EXISTS b ENGINE = Memory")
        self.sess.query(
            "CREATE TABLE b.rows (kind String, vid String, uid Nullable(String), label Nullable(String), "
            "eid Nullable(String), src Nullable(String), dst Nullable(String), rel_type Nullable(String), "
            "disc Nullable(String), vt_s Int64, vt_e Int64, tt_s Int64, tt_e Int64, props String, "
            "source String, provenance_ref String, origin String, reason Nullable(String), "
            "closed_by Nullable(String), close_reason Nullable(String)) ENGINE = MergeTree ORDER BY (kind, vid)")
        self.sess.query(f"INSERT INTO b.rows SELECT * FROM file('{csv}', CSVWithNames)")
        self.load_s = time.perf_counter() - t

    def run(self, sql):
        r = self.sess.query(sql.replace("FROM rows", "FROM b.rows"), "JSONCompact")
        return json.loads(r.bytes() if hasattr(r, "bytes") else str(r))["data"]


def time_sql(db, sql, warmups, reps):
    for _ in range(warmups):
        db.run(sql)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        db.run(sql)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmups", type=int, default=5)
    ap.add_argument("--tgms", default=os.environ.get("TGMS", os.path.join(ROOT, "target", "release", "tgms")))
    ap.add_argument("--work", default=os.path.join(HERE, ".work"))
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    ensure_venv()

    os.makedirs(a.work, exist_ok=True)
    store = os.path.join(a.work, f"synthetic-{a.scale}")
    csv = os.path.join(a.work, f"rows-{a.scale}.csv")
    if not os.path.isdir(store):
        print(tgms(a.tgms, "bench", "generate", "--scale", a.scale, store).strip(), file=sys.stderr)
    if not os.path.exists(csv):
        tgms(a.tgms, "export-rows", store, csv)
    qs = queries(a.scale)
    peers = [Duck(csv), Ch(csv)]
    for p in peers:
        print(f"{p.name} {p.version}: loaded {csv} in {p.load_s:.2f} s", file=sys.stderr)

    # Agreement.
    agree = {}
    for q in qs:
        env = json.loads(tgms(a.tgms, "call", store, q["op"], json.dumps(q["args"])))
        want = q["tgms"](env)
        for p in peers:
            got = normalize(q, p.run(sql_for(q, p.name)))
            agree[(q["id"], p.name)] = got == want
            if got != want:
                print(f"DISAGREE {q['id']} {p.name}: tgms {str(want)[:80]} vs {str(got)[:80]}", file=sys.stderr)

    # Alternating rounds.
    ids = ",".join(q["id"] for q in qs)
    p50 = {(q["id"], s): [] for q in qs for s in ["tgms"] + [p.name for p in peers]}
    for r in range(a.rounds):
        out = os.path.join(a.work, f"tgms-round{r}.json")
        tgms(a.tgms, "bench", "run", "--scale", a.scale, "--store", store, "--only", ids,
             "--warmups", a.warmups, "--reps", a.reps, "--json", out)
        rec = json.load(open(out))
        for qr in rec["queries"]:
            p50[(qr["id"], "tgms")].append(qr["p50_ms"])
        for p in peers:
            for q in qs:
                p50[(q["id"], p.name)].append(time_sql(p, sql_for(q, p.name), a.warmups, a.reps))

    med = {k: statistics.median(v) for k, v in p50.items()}
    print(f"\nscale {a.scale}: {a.rounds} alternating rounds, {a.warmups} warm-ups + {a.reps} timed runs each; "
          "p50 in ms; ratio = tgms / peer (< 1: tgms faster)")
    print(f"{'query':<16} {'tgms':>9} {'duckdb':>9} {'chdb':>9} {'tgms/duckdb':>12} {'tgms/chdb':>10}  agree")
    results = []
    for q in qs:
        t, d, c = med[(q["id"], "tgms")], med[(q["id"], "duckdb")], med[(q["id"], "chdb")]
        ok = all(agree[(q["id"], p.name)] for p in peers)
        print(f"{q['id']:<16} {t:>9.3f} {d:>9.3f} {c:>9.3f} {t / d:>12.3f} {t / c:>10.3f}  {'yes' if ok else 'NO'}")
        results.append({"id": q["id"], "tgms_p50_ms": t, "duckdb_p50_ms": d, "chdb_p50_ms": c,
                        "ratio_tgms_duckdb": t / d, "ratio_tgms_chdb": t / c, "agree": ok})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scale": a.scale, "rounds": a.rounds, "reps": a.reps, "warmups": a.warmups,
                       "duckdb": peers[0].version, "chdb": peers[1].version,
                       "load_s": {p.name: p.load_s for p in peers}, "queries": results}, f, indent=1)
    if not all(agree.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
