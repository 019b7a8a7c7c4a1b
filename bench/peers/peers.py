#!/usr/bin/env python3
"""Peers side by side: tgms vs DuckDB and chDB on the same version rows.

Usage (from the repository root, after `cargo build --release`):

    python3 bench/peers/peers.py --scale 100000 [--rounds 3] [--reps 10] [--json OUT.json]
    python3 bench/peers/peers.py --only reach.window,diff.global --rounds 1 --reps 3

The script
  1. creates bench/peers/.venv (git-ignored) and installs duckdb and chdb from PyPI into it
     on first use, then re-runs itself with that interpreter;
  2. generates the synthetic log (`tgms bench generate --scale N`, fixed clock, with its
     corrections) and exports every stored row (`tgms export-rows STORE rows.parquet`; a
     tgms without Parquet output falls back to `rows.csv`);
  3. loads the rows into DuckDB and chDB (both in-process) and runs the registry queries
     of ten kinds — history, 2-hop snapshot, diff, time series, burst, grouped aggregation,
     neighbourhood evolution, resolve, co-active, reachability (a Python loop of SQL steps)
     — plus `state.at`, with the registry's arguments, the belief and valid-time
     predicates written out by hand over version rows;
  4. checks that every peer answer agrees with tgms's (`tgms call` with the same arguments,
     every page): row sets, values and totals, not only sizes; prints each disagreement
     and exits 1 if there is one;
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
# `limit` of the agreement calls (the spec maximum): paged lists are read page by page,
# capped lists (diff, neighbour lists, snapshot nodes) are compared on their first 10,000
# entries and their totals.
FULL = 10_000


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


def tgms(exe, *args, check=True):
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"tgms {' '.join(map(str, args))} failed:\n{r.stdout}\n{r.stderr}")
    return r


def tgms_call(exe, store, op, args):
    """The answer of `op(args)` with `limit` = FULL and every page of `rows` concatenated."""
    args = dict(args, limit=FULL)
    env = json.loads(tgms(exe, "call", store, op, json.dumps(args)).stdout)
    if "error" in env:
        raise SystemExit(f"tgms call {op} {json.dumps(args)}: {env}")
    rows = list(env.get("rows", []))
    while env.get("cursor"):
        env = json.loads(tgms(exe, "call", store, op, json.dumps(dict(args, cursor=env["cursor"]))).stdout)
        rows += env["rows"]
    if "rows" in env:
        env["rows"] = rows
    return env


# ---- SQL dialects -------------------------------------------------------------------------


class Dialect:
    """The few spellings that differ between DuckDB and ClickHouse."""

    def __init__(self, name):
        self.name = name

    def rows(self):
        return "rows" if self.name == "duckdb" else "b.rows"

    def idiv(self, a, b):
        return f"({a}) // ({b})" if self.name == "duckdb" else f"intDiv({a}, {b})"

    def series(self, n):
        """A one-column table `i` = 0 … n−1 (BIGINT)."""
        if self.name == "duckdb":
            return f"(SELECT range AS i FROM range(0, {n}))"
        return f"(SELECT toInt64(number) AS i FROM numbers({n}))"


def believed_edges(d, extra=""):
    return f"SELECT * FROM {d.rows()} WHERE kind = 'edge' AND tt_e = {OPEN_END} {extra}"


def believed_nodes(d, extra=""):
    return f"SELECT * FROM {d.rows()} WHERE kind = 'node' AND tt_e = {OPEN_END} {extra}"


def valid_at(t):
    return f"AND vt_s <= {t} AND {t} < vt_e"


# ---- the queries --------------------------------------------------------------------------
# Each query: the registry id, the tgms operator and arguments (exactly those of
# bench/src/registry.rs), `want(env)` normalizing tgms's full answer, and `peer(db, limit)`
# computing the same normalized answer with the peer (`limit` = the registry call's list cap
# for capped lists: 100 when timed, FULL for the agreement check).


def q_history(p):
    def want(env):
        return {"vids": sorted(r["vid"] for r in env["rows"]), "total": env["rows_total"]}

    def peer_for(extra):
        def peer(db, limit):
            vids = sorted(r[0] for r in db.run(f"SELECT vid FROM {db.d.rows()} WHERE kind = 'node' "
                                               f"AND uid = 'n1' AND {extra} ORDER BY vid"))
            return {"vids": vids, "total": len(vids)}
        return peer

    t = p["tt_epoch1"]
    return [
        dict(id="hist.single", op="entity_history", args={"uid": "n1"}, want=want,
             peer=peer_for(f"tt_e = {OPEN_END}")),
        dict(id="hist.asof", op="entity_history", args={"uid": "n1", "as_of_tt": t}, want=want,
             peer=peer_for(f"tt_s <= {t} AND {t} < tt_e")),
    ]


def q_snapshot(p):
    mid, hops = p["mid"], 2

    def want(env):
        return {"nodes": sorted((n["uid"], n["hop"]) for n in env["nodes"]),
                "nodes_total": env["nodes_total"], "edges": sorted(r["vid"] for r in env["rows"])}

    def peer(db, limit):
        """Breadth-first search as a Python loop of SQL steps, one table per level (a CTE
        chain would be re-evaluated at every reference by chDB)."""
        d = db.d
        tag = db.fresh()
        e, n, v = f"se{tag}", f"sn{tag}", f"sv{tag}_0"
        made = [e, n, v]
        db.create(e, f"SELECT vid, src, dst FROM ({believed_edges(d, valid_at(mid))}) AS x")
        db.create(n, f"SELECT DISTINCT uid FROM ({believed_nodes(d, valid_at(mid))}) AS x")
        db.create(v, f"SELECT uid, 0 AS hop FROM {db.t(n)} WHERE uid IN ('n1')")
        for h in range(1, hops + 1):
            nv = f"sv{tag}_{h}"
            made.append(nv)
            db.create(nv, f"""
                SELECT uid, hop FROM {db.t(v)}
                UNION ALL SELECT DISTINCT x.uid AS uid, {h} AS hop FROM (
                    SELECT g.dst AS uid FROM {db.t(e)} AS g JOIN {db.t(v)} AS p ON g.src = p.uid WHERE p.hop = {h - 1}
                    UNION ALL
                    SELECT g.src AS uid FROM {db.t(e)} AS g JOIN {db.t(v)} AS p ON g.dst = p.uid WHERE p.hop = {h - 1}
                ) AS x
                WHERE x.uid IN (SELECT uid FROM {db.t(n)}) AND x.uid NOT IN (SELECT uid FROM {db.t(v)})""")
            v = nv
        res = db.run(f"""
            SELECT 'node' AS k, uid AS id, hop FROM {db.t(v)}
            UNION ALL SELECT 'edge' AS k, vid AS id, -1 AS hop FROM {db.t(e)}
                WHERE src IN (SELECT uid FROM {db.t(v)}) AND dst IN (SELECT uid FROM {db.t(v)})""")
        for t in made:
            db.drop(t)
        nodes = sorted((r[1], int(r[2])) for r in res if r[0] == "node")
        return {"nodes": nodes[:limit], "nodes_total": len(nodes),
                "edges": sorted(r[1] for r in res if r[0] == "edge")}

    return dict(id="snap.hop2", op="snapshot_subgraph", args={"seeds": ["n1"], "hops": hops, "t_valid": mid},
                want=want, peer=peer)


DIFF_LISTS = ["nodes_added", "nodes_removed", "edges_added", "edges_removed", "props_changed"]


def q_diff(p):
    t1, t2 = p["mid"], p["mid"] + p["span"] // 40

    def want(env):
        out = {}
        for k in DIFF_LISTS:
            items = env[k]
            if k.startswith("nodes"):
                ids = items
            elif k.startswith("edges"):
                ids = [e["eid"] for e in items]
            else:
                ids = [f"{c['kind']}:{c['id']}" for c in items]
            out[k] = (ids, env[k + "_total"])
        return out

    def peer(db, limit):
        d = db.d
        # props_changed: nodes (sort prefix 0) before edges (prefix 1), each by id.
        sql = f"""
        WITH pe1 AS (SELECT eid, vid, props FROM ({believed_edges(d, valid_at(t1))}) AS x),
        pe2 AS (SELECT eid, vid, props FROM ({believed_edges(d, valid_at(t2))}) AS x),
        pn1 AS (SELECT uid, vid, label, props FROM ({believed_nodes(d, valid_at(t1))}) AS x),
        pn2 AS (SELECT uid, vid, label, props FROM ({believed_nodes(d, valid_at(t2))}) AS x),
        dd AS (
            SELECT 'nodes_added' AS list, uid AS id FROM pn2 WHERE uid NOT IN (SELECT uid FROM pn1)
            UNION ALL SELECT 'nodes_removed' AS list, uid AS id FROM pn1 WHERE uid NOT IN (SELECT uid FROM pn2)
            UNION ALL SELECT 'edges_added' AS list, eid AS id FROM pe2 WHERE eid NOT IN (SELECT eid FROM pe1)
            UNION ALL SELECT 'edges_removed' AS list, eid AS id FROM pe1 WHERE eid NOT IN (SELECT eid FROM pe2)
            UNION ALL SELECT 'props_changed' AS list, concat('0node:', a.uid) AS id FROM pn1 AS a
                JOIN pn2 AS b ON a.uid = b.uid WHERE a.vid <> b.vid AND (a.props <> b.props OR a.label <> b.label)
            UNION ALL SELECT 'props_changed' AS list, concat('1edge:', a.eid) AS id FROM pe1 AS a
                JOIN pe2 AS b ON a.eid = b.eid WHERE a.vid <> b.vid AND a.props <> b.props)
        SELECT list, id, n FROM (
            SELECT list, id, row_number() OVER (PARTITION BY list ORDER BY id) AS rn,
                   count(*) OVER (PARTITION BY list) AS n FROM dd) AS r
        WHERE rn <= {limit} ORDER BY list, id"""
        out = {k: ([], 0) for k in DIFF_LISTS}
        for list_, id_, n in db.run(sql):
            ids, _ = out[list_]
            ids.append(id_[1:] if list_ == "props_changed" else id_)
            out[list_] = (ids, int(n))
        return out

    return dict(id="diff.global", op="diff_snapshots", args={"t1": t1, "t2": t2}, want=want, peer=peer)


def q_reach(p):
    ta, tb = p["t0"], p["t0"] + p["span"] // 10

    def want(env):
        return [(r["uid"], r["earliest_arrival"]) for r in env["rows"]]

    def peer(db, limit):
        """Earliest arrival by label-correcting relaxation: a Python loop of SQL steps over
        the frontier of improved labels (semi-naive), until no label improves."""
        d = db.d
        tag = db.fresh()
        cand, lab, front = f"c{tag}", f"l{tag}_0", f"f{tag}_0"
        made = [cand, lab, front]
        db.create(cand, f"SELECT src, dst, vt_s, vt_e FROM ({believed_edges(d, f'AND vt_e > {ta} AND vt_s < {tb}')}) AS x")
        db.create(lab, f"SELECT 'n1' AS uid, CAST({ta} AS BIGINT) AS arr")
        db.create(front, f"SELECT uid, arr FROM {db.t(lab)}")
        k = 0
        while True:
            k += 1
            tau = "greatest(f.arr, e.vt_s)"
            relax = (f"SELECT e.dst AS uid, min({tau}) AS arr FROM {db.t(cand)} AS e JOIN {db.t(front)} AS f "
                     f"ON e.src = f.uid WHERE {tau} < e.vt_e AND {tau} < {tb} GROUP BY e.dst")
            nlab, nfront = f"l{tag}_{k}", f"f{tag}_{k}"
            made += [nlab, nfront]
            db.create(nlab, f"SELECT uid, min(arr) AS arr FROM (SELECT uid, arr FROM {db.t(lab)} "
                            f"UNION ALL {relax}) AS x GROUP BY uid")
            db.create(nfront, f"SELECT uid, arr FROM {db.t(nlab)} EXCEPT SELECT uid, arr FROM {db.t(lab)}")
            lab, front = nlab, nfront
            if int(db.run(f"SELECT count(*) FROM {db.t(front)}")[0][0]) == 0:
                break
        res = db.run(f"SELECT uid, arr FROM {db.t(lab)} WHERE uid <> 'n1' ORDER BY arr, uid")
        for t in made:
            db.drop(t)
        return [(u, int(a)) for u, a in res]

    return dict(id="reach.window", op="temporal_reachability",
                args={"src": "n1", "window": {"t_a": ta, "t_b": tb}}, want=want, peer=peer)


def q_series(p):
    t0, t1, stride = p["t0"], p["t1"], p["stride"]
    nb = -(-(t1 - t0) // stride)

    def want(env):
        return [r["value"] for r in env["rows"]]

    def peer(db, limit):
        d = db.d
        res = db.run(f"SELECT {d.idiv(f'vt_s - {t0}', stride)} AS b, count(*) AS c "
                     f"FROM ({believed_edges(d, f'AND vt_s >= {t0} AND vt_s < {t1}')}) AS x GROUP BY b ORDER BY b")
        out = [0] * nb
        for b, c in res:
            out[int(b)] = int(c)
        return out

    return dict(id="series.count", op="graph_metric_timeseries",
                args={"metric": "edge_event_count", "window": {"t_a": t0, "t_b": t1}, "stride": stride},
                want=want, peer=peer)


def q_burst(p):
    t0, t1, stride, w, z = p["t0"], p["t1"], p["stride"], 10, 3.0
    nb = -(-(t1 - t0) // stride)

    def want(env):
        return [(r["t_a"], r["t_b"], r["value"], r["score"]) for r in env["rows"]]

    def peer(db, limit):
        d = db.d
        # zscore over the previous min(b, w) buckets with exact integer moments (spec §17).
        sql = f"""
        WITH c AS (SELECT {d.idiv(f'vt_s - {t0}', stride)} AS b, CAST(count(*) AS BIGINT) AS x
                   FROM ({believed_edges(d, f'AND vt_s >= {t0} AND vt_s < {t1}')}) AS y GROUP BY b),
        s AS (SELECT k.i AS b, CAST(coalesce(c.x, 0) AS BIGINT) AS x FROM {d.series(nb)} AS k LEFT JOIN c ON k.i = c.b),
        h AS (SELECT b, x,
                     CAST(count(*) OVER (ORDER BY b ROWS BETWEEN {w} PRECEDING AND 1 PRECEDING) AS BIGINT) AS n,
                     CAST(sum(x) OVER (ORDER BY b ROWS BETWEEN {w} PRECEDING AND 1 PRECEDING) AS BIGINT) AS s1,
                     CAST(sum(x * x) OVER (ORDER BY b ROWS BETWEEN {w} PRECEDING AND 1 PRECEDING) AS BIGINT) AS s2
              FROM s),
        sc AS (SELECT b, x, CASE WHEN n * s2 - s1 * s1 > 0
                                 THEN CAST(abs(n * x - s1) AS DOUBLE) / sqrt(CAST(n * s2 - s1 * s1 AS DOUBLE))
                                 WHEN n * x = s1 THEN 0.0 ELSE 1e9 END AS score
               FROM h WHERE b >= 1)
        SELECT {t0} + b * {stride} AS t_a, least({t0} + (b + 1) * {stride}, {t1}) AS t_b, x, score
        FROM sc WHERE round(score, 9) >= {z} ORDER BY b"""
        return [(int(a), int(b), float(x), round(float(s), 9)) for a, b, x, s in db.run(sql)]

    return dict(id="burst.zscore", op="burst_detection",
                args={"target": {"kind": "edge_event_rate"}, "window": {"t_a": t0, "t_b": t1}, "stride": stride,
                      "method": "zscore", "params": {"z": z}},
                want=want, peer=peer)


def q_nbr(p):
    uid, t1, t2 = "n1", p["mid"], p["mid"] + p["span"] // 10
    stride = max(1, (t2 - t1) // 20)
    samples = list(range(t1, t2, stride))

    def want(env):
        return {"gained": (env["neighbors_gained"], env["neighbors_gained_total"]),
                "lost": (env["neighbors_lost"], env["neighbors_lost_total"]),
                "degree": [(s["t"], s["degree"]) for s in env["degree_series"]]}

    def peer(db, limit):
        d = db.d
        nb = f"CASE WHEN src = '{uid}' THEN dst ELSE src END"
        sql = f"""
        WITH inc AS (SELECT src, dst, vt_s, vt_e FROM ({believed_edges(d, f"AND (src = '{uid}' OR dst = '{uid}')")}) AS x),
        a AS (SELECT DISTINCT {nb} AS nb FROM inc WHERE vt_s <= {t1} AND {t1} < vt_e),
        b AS (SELECT DISTINCT {nb} AS nb FROM inc WHERE vt_s <= {t2} AND {t2} < vt_e),
        ts AS (SELECT {t1} + i * {stride} AS t FROM {d.series(len(samples))} AS k)
        SELECT 'gained' AS k, nb AS id, 0 AS v FROM b WHERE nb <> '{uid}' AND nb NOT IN (SELECT nb FROM a)
        UNION ALL SELECT 'lost' AS k, nb AS id, 0 AS v FROM a WHERE nb <> '{uid}' AND nb NOT IN (SELECT nb FROM b)
        UNION ALL SELECT 'degree' AS k, CAST(t AS VARCHAR) AS id,
            sum(CASE WHEN vt_s <= t AND t < vt_e THEN 1 ELSE 0 END) AS v FROM ts CROSS JOIN inc GROUP BY t"""
        res = db.run(sql)
        gained = sorted(r[1] for r in res if r[0] == "gained")
        lost = sorted(r[1] for r in res if r[0] == "lost")
        deg = {int(r[1]): int(r[2]) for r in res if r[0] == "degree"}
        return {"gained": (gained[:limit], len(gained)), "lost": (lost[:limit], len(lost)),
                "degree": [(s, deg.get(s, 0)) for s in samples]}

    return dict(id="nbr.evolution", op="neighborhood_evolution", args={"uid": uid, "t1": t1, "t2": t2},
                want=want, peer=peer)


def q_coactive(p):
    def want(env):
        return [(r["a"]["vid"], r["b"]["vid"]) for r in env["rows"]]

    def peer(db, limit):
        d = db.d
        sql = f"""
        WITH a AS (SELECT vid, vt_s, vt_e FROM ({believed_edges(d, "AND src = 'n1'")}) AS x),
        b AS (SELECT vid, vt_s, vt_e FROM ({believed_edges(d, "AND src = 'n2'")}) AS x)
        SELECT a.vid AS av, b.vid AS bv FROM a CROSS JOIN b
        WHERE a.vt_s < b.vt_s AND b.vt_s < a.vt_e AND a.vt_e < b.vt_e AND a.vid <> b.vid
        ORDER BY a.vt_s, a.vid, b.vt_s, b.vid"""
        return [tuple(r) for r in db.run(sql)]

    return dict(id="coactive.narrow", op="co_active",
                args={"a_spec": {"src": "n1"}, "b_spec": {"src": "n2"}, "allen_relation": {"relation": "overlaps"}},
                want=want, peer=peer)


def q_resolve(p):
    def want(env):
        return sorted(r["uid"] for r in env["rows"])

    def peer(db, limit):
        # uid substring matches; on the synthetic log no `name` property matches beyond them
        # (n1's name is "alpha-corrected").
        return sorted(r[0] for r in db.run(
            f"SELECT DISTINCT uid FROM ({believed_nodes(db.d)}) AS x WHERE lower(uid) LIKE '%n1%'"))

    return dict(id="resolve.substr", op="resolve_entities", args={"query": "n1"}, want=want, peer=peer,
                note="the SQL matches uid substrings only; tgms also matches the `name` property")


def q_agg(p):
    t0, t1, stride = p["t0"], p["t1"], p["stride"]

    def want(env):
        return [(r["rel_type"], r["t_a"], r["t_b"], r["count"], r["distinct_dst"]) for r in env["rows"]]

    def peer(db, limit):
        d = db.d
        sql = f"""
        SELECT rel_type, {t0} + b * {stride} AS t_a, least({t0} + (b + 1) * {stride}, {t1}) AS t_b,
               count(*) AS c, count(DISTINCT dst) AS dd
        FROM (SELECT rel_type, dst, {d.idiv(f'vt_s - {t0}', stride)} AS b
              FROM ({believed_edges(d, f'AND vt_s >= {t0} AND vt_s < {t1}')}) AS x) AS y
        GROUP BY rel_type, b ORDER BY rel_type, b LIMIT 1000"""
        return [(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in db.run(sql)]

    return dict(id="agg.rel_bucket", op="aggregate_events",
                args={"group_by": [{"dim": "rel_type"}, {"dim": "time_bucket"}],
                      "aggregates": [{"agg": "count"}, {"agg": "count_distinct", "of": "dst"}],
                      "window": {"t_a": t0, "t_b": t1}, "stride": stride, "limit": 1000},
                want=want, peer=peer)


def q_state(p):
    mid = p["mid"]

    def want(env):
        return sorted(r["vid"] for r in env["rows"])

    def peer(db, limit):
        return sorted(r[0] for r in db.run(
            f"SELECT DISTINCT vid FROM ({believed_edges(db.d, valid_at(mid))}) AS x "
            f"WHERE src = 'n1' OR dst = 'n1'"))

    return dict(id="state.at", op="state_at", args={"uid": "n1", "at": mid, "direction": "both"},
                want=want, peer=peer)


def queries(n):
    """The registry queries (bench/src/registry.rs) with their peer implementations, in
    registry order. Not ported: paths.k (k shortest time-respecting paths), the motif counts
    and wtrav.seed."""
    t0, t1 = 0, n
    span = t1 - t0
    p = {"t0": t0, "t1": t1, "span": span, "mid": t0 + span // 2, "stride": max(1, span // 100),
         "tt_epoch1": 1_700_000_000_000_000 + -(-n // 50_000) + 1}
    return [*q_history(p), q_snapshot(p), q_diff(p), q_reach(p), q_series(p), q_burst(p), q_nbr(p),
            q_coactive(p), q_resolve(p), q_agg(p), q_state(p)]


# ---- the peers ----------------------------------------------------------------------------


class Duck:
    name = "duckdb"

    def __init__(self, path):
        import duckdb
        self.version = duckdb.__version__
        self.d = Dialect(self.name)
        self.con = duckdb.connect()
        self.n = 0
        t = time.perf_counter()
        if path.endswith(".parquet"):
            self.con.execute(f"CREATE TABLE rows AS SELECT * FROM read_parquet('{path}')")
        else:
            self.con.execute(
                f"CREATE TABLE rows AS SELECT * FROM read_csv('{path}', header = true, "
                "types = {'vt_s': 'BIGINT', 'vt_e': 'BIGINT', 'tt_s': 'BIGINT', 'tt_e': 'BIGINT'})")
        self.load_s = time.perf_counter() - t

    def run(self, sql):
        return self.con.execute(sql).fetchall()

    def fresh(self):
        self.n += 1
        return self.n

    def t(self, name):
        return name

    def create(self, name, select):
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {select}")

    def drop(self, name):
        self.con.execute(f"DROP TABLE IF EXISTS {name}")


class Ch:
    name = "chdb"

    def __init__(self, path):
        import chdb
        from chdb import session
        self.version = chdb.__version__
        self.d = Dialect(self.name)
        self.sess = session.Session()
        self.n = 0
        t = time.perf_counter()
        self.sess.query("CREATE DATABASE IF NOT EXISTS b ENGINE = Memory")
        # Scratch tables of the iterative queries (CREATE … AS needs an Atomic database).
        self.sess.query("CREATE DATABASE IF NOT EXISTS w")
        self.sess.query(
            "CREATE TABLE b.rows (kind String, vid String, uid Nullable(String), label Nullable(String), "
            "eid Nullable(String), src Nullable(String), dst Nullable(String), rel_type Nullable(String), "
            "disc Nullable(String), vt_s Int64, vt_e Int64, tt_s Int64, tt_e Int64, props String, "
            "source String, provenance_ref String, origin String, reason Nullable(String), "
            "closed_by Nullable(String), close_reason Nullable(String)) ENGINE = MergeTree ORDER BY (kind, vid)")
        fmt = "Parquet" if path.endswith(".parquet") else "CSVWithNames"
        self.sess.query(f"INSERT INTO b.rows SELECT * FROM file('{path}', {fmt})")
        self.load_s = time.perf_counter() - t

    def run(self, sql):
        r = self.sess.query(sql, "JSONCompact")
        text = r.bytes() if hasattr(r, "bytes") else str(r)
        return json.loads(text)["data"] if text.strip() else []

    def fresh(self):
        self.n += 1
        return self.n

    def t(self, name):
        return f"w.{name}"

    def create(self, name, select):
        self.sess.query(f"DROP TABLE IF EXISTS w.{name} SYNC")
        self.sess.query(f"CREATE TABLE w.{name} ENGINE = Memory AS {select}")

    def drop(self, name):
        self.sess.query(f"DROP TABLE IF EXISTS w.{name} SYNC")


def time_peer(db, q, warmups, reps):
    for _ in range(warmups):
        q["peer"](db, 100)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        q["peer"](db, 100)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


def size(ans):
    """A short description of an answer's size, for the agreement lines."""
    if isinstance(ans, dict):
        return ", ".join(f"{k} {size(v)}" for k, v in ans.items())
    if isinstance(ans, tuple) and len(ans) == 2 and isinstance(ans[0], list):
        return f"{ans[1]}"
    if isinstance(ans, list):
        return f"{len(ans)}"
    return str(ans)


def describe_diff(want, got):
    """Where two normalized answers differ, in one line."""
    if isinstance(want, dict):
        return "; ".join(f"{k}: {describe_diff(want[k], got.get(k))}" for k in want if want[k] != got.get(k))
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], list):
        return f"total tgms {want[1]} vs peer {got[1]}; list {describe_diff(want[0], got[0])}"
    if isinstance(want, list) and isinstance(got, list):
        sw, sg = set(want), set(got)
        only_t = [x for x in want if x not in sg]
        only_p = [x for x in got if x not in sw]
        first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        return (f"sizes {len(want)} vs {len(got)}, first difference at {first}, "
                f"only tgms {only_t[:3]}, only peer {only_p[:3]}")
    return f"tgms {str(want)[:80]} vs peer {str(got)[:80]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmups", type=int, default=5)
    ap.add_argument("--only", help="comma-separated query ids (default: all ported)")
    ap.add_argument("--format", choices=["parquet", "csv"], default="parquet",
                    help="row export the peers load (parquet falls back to csv if tgms cannot write it)")
    ap.add_argument("--tgms", default=os.environ.get("TGMS", os.path.join(ROOT, "target", "release", "tgms")))
    ap.add_argument("--work", default=os.path.join(HERE, ".work"))
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    ensure_venv()

    os.makedirs(a.work, exist_ok=True)
    store = os.path.join(a.work, f"synthetic-{a.scale}")
    if not os.path.isdir(store):
        print(tgms(a.tgms, "bench", "generate", "--scale", a.scale, store).stdout.strip(), file=sys.stderr)
    path = os.path.join(a.work, f"rows-{a.scale}.{a.format}")
    if not os.path.exists(path):
        r = tgms(a.tgms, "export-rows", store, path, check=a.format == "csv")
        if r.returncode != 0:
            print(f"no Parquet export ({r.stderr.strip()}); falling back to CSV", file=sys.stderr)
            path = os.path.join(a.work, f"rows-{a.scale}.csv")
            if not os.path.exists(path):
                tgms(a.tgms, "export-rows", store, path)
    qs = queries(a.scale)
    if a.only:
        keep = set(a.only.split(","))
        unknown = keep - {q["id"] for q in qs}
        if unknown:
            raise SystemExit(f"unknown or unported query ids: {sorted(unknown)}")
        qs = [q for q in qs if q["id"] in keep]
    peers = [Duck(path), Ch(path)]
    for p in peers:
        print(f"{p.name} {p.version}: loaded {path} in {p.load_s:.2f} s", file=sys.stderr)

    # Agreement: tgms's full answer against each peer's, value by value.
    agree = {}
    for q in qs:
        want = q["want"](tgms_call(a.tgms, store, q["op"], q["args"]))
        for p in peers:
            got = q["peer"](p, FULL)
            agree[(q["id"], p.name)] = got == want
            if got != want:
                why = f" (known limit of the port: {q['note']})" if "note" in q else ""
                print(f"DISAGREE {q['id']} {p.name}: {describe_diff(want, got)}{why}", file=sys.stderr)
        print(f"agreement {q['id']}: tgms answer size {size(want)}; "
              + ", ".join(f"{p.name} {'agrees' if agree[(q['id'], p.name)] else 'DISAGREES'}" for p in peers),
              file=sys.stderr)

    # Alternating rounds.
    ids = ",".join(q["id"] for q in qs)
    p50 = {(q["id"], s): [] for q in qs for s in ["tgms"] + [p.name for p in peers]}
    for r in range(a.rounds):
        out = os.path.join(a.work, f"tgms-round{r}.json")
        tgms(a.tgms, "bench", "run", "--scale", a.scale, "--store", store, "--only", ids,
             "--warmups", a.warmups, "--reps", a.reps, "--json", out)
        with open(out) as f:
            rec = json.load(f)
        for qr in rec["queries"]:
            p50[(qr["id"], "tgms")].append(qr["p50_ms"])
        for p in peers:
            for q in qs:
                p50[(q["id"], p.name)].append(time_peer(p, q, a.warmups, a.reps))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)

    med = {k: statistics.median(v) for k, v in p50.items()}
    print(f"\nscale {a.scale}: {a.rounds} alternating rounds, {a.warmups} warm-ups + {a.reps} timed runs each; "
          "p50 in ms; ratio = tgms / peer (< 1: tgms faster)")
    print(f"{'query':<16} {'tgms':>9} {'duckdb':>9} {'chdb':>9} {'tgms/duckdb':>12} {'tgms/chdb':>10}  agree")
    results = []
    for q in qs:
        t, d, c = med[(q["id"], "tgms")], med[(q["id"], "duckdb")], med[(q["id"], "chdb")]
        ok = all(agree[(q["id"], p.name)] for p in peers)
        print(f"{q['id']:<16} {t:>9.3f} {d:>9.3f} {c:>9.3f} {t / d:>12.3g} {t / c:>10.3g}  {'yes' if ok else 'NO'}")
        results.append({"id": q["id"], "op": q["op"], "tgms_p50_ms": t, "duckdb_p50_ms": d, "chdb_p50_ms": c,
                        "ratio_tgms_duckdb": t / d, "ratio_tgms_chdb": t / c, "agree": ok})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scale": a.scale, "rounds": a.rounds, "reps": a.reps, "warmups": a.warmups,
                       "rows_file": os.path.basename(path), "duckdb": peers[0].version,
                       "chdb": peers[1].version, "load_s": {p.name: p.load_s for p in peers},
                       "queries": results}, f, indent=1)
    if not all(agree.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
