#!/usr/bin/env python3
"""The whole job, timed end to end: tgms `init` + `ingest` of a SNAP text file followed by the
all-36 temporal-motif census, and `init` + `ingest` followed by whole-span reachability, with
each time printed as a ratio against a brute-force enumeration run in the same process on the
same small input (and checked against it: every one of the 36 counts, every reached node and
its earliest arrival).

Usage (from the repository root, after `cargo build --release`):

    python3 bench/peers/endtoend.py                       # CollegeMsg (shipped), brute force on its first 2,000 events
    python3 bench/peers/endtoend.py --events 1000000      # also a random SNAP file of 1M events (tgms only; no brute force)
    python3 bench/peers/endtoend.py --file my.txt --delta-s 86400 --rounds 3
    python3 bench/peers/endtoend.py --snap-dir ~/snap     # also SNAP's temporalmotifs counter, if its sources are there
    python3 bench/peers/endtoend.py --fast-cmd './FAST {input} {delta_s}' --fast-dir ~/FAST

What it runs, per round (rounds alternate the systems; the median is printed):
  * small input: the first `--brute-events` events of the input. tgms's whole job (a fresh
    store each time: `tgms init`, `tgms ingest`, `tgms call`) against a plain Python brute
    force (parse the text, enumerate every time-ordered triple within delta and classify it
    by the table of Paranjape, Benson and Leskovec; relax every event to a fixpoint for
    reachability). The answers must agree (exit 1 otherwise); the ratio tgms/brute < 1 means
    tgms's whole job is faster.
  * the full input (`--file`, `--events N` or CollegeMsg): tgms's whole job, its phases
    (ingest events/s, query time) and, when their sources are present locally, SNAP's
    temporal-motif counter and FAST on the same text, as ratios tgms/peer. Nothing is
    downloaded: a peer whose sources are absent is skipped with a message.

The census uses `tie_mode: "strict"` against the brute force (no tie order to agree on) and
the default `"ordered"` against SNAP and FAST, which break ties by input order like tgms's
`(t, eid)` order does on a file whose equal-time lines are in eid order (docs/operators.md).
"""

import argparse
import collections
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLLEGEMSG = os.path.join(ROOT, "datasets", "CollegeMsg.txt.gz")
US = 1_000_000

# Paranjape et al.'s catalogue (spec operators.md §14.5): node 0 = src of e1, 1 = its dst,
# 2 = the first other node met; row i from the shape of e2, column j from e3.
ROW = {(2, 1): 1, (1, 2): 2, (2, 0): 3, (0, 2): 4, (1, 0): 5, (0, 1): 6}
COL = {(0, 1): 1, (1, 0): 2, (0, 2): 3, (2, 0): 4, (1, 2): 5, (2, 1): 6}


def parse_snap(path):
    """(src, dst, t_s) of every data line of a SNAP text file (comments, blank lines and a
    header on line 1 left out), in file order."""
    out = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            t = line.strip()
            if not t or t[0] in "#%":
                continue
            p = t.split()
            if no == 1 and not p[0].lstrip("+-")[:1].isdigit():
                continue
            out.append((int(p[0]), int(p[1]), int(p[2])))
    return out


def brute_census(events, delta_s):
    """The 36 counts of strict δ-temporal motifs, by enumerating every triple."""
    ev = sorted(events, key=lambda e: e[2])
    counts = {f"M_{i}_{j}": 0 for i in range(1, 7) for j in range(1, 7)}
    n = len(ev)
    for a in range(n):
        s0, d0, t0 = ev[a]
        if s0 == d0:
            continue
        for b in range(a + 1, n):
            s1, d1, t1 = ev[b]
            if t1 - t0 > delta_s:
                break
            if t1 == t0 or s1 == d1:
                continue
            for c in range(b + 1, n):
                s2, d2, t2 = ev[c]
                if t2 - t0 > delta_s:
                    break
                if t2 == t1 or s2 == d2:
                    continue
                lab = {s0: 0, d0: 1}
                ok = True
                for x in (s1, d1, s2, d2):
                    if x not in lab:
                        if len(lab) == 3:
                            ok = False
                            break
                        lab[x] = 2
                if not ok:
                    continue
                i = ROW.get((lab[s1], lab[d1]))
                j = COL.get((lab[s2], lab[d2]))
                if i and j:
                    counts[f"M_{i}_{j}"] += 1
    return counts


def brute_reach(events, src, t_a, t_b):
    """Earliest arrival (µs) of every node reachable from `src` by time-respecting paths of
    instant events in [t_a, t_b) (spec §12: τ = max(a, t) must equal t), by relaxing every
    event until nothing changes."""
    ev = sorted(((t * US, s, d) for s, d, t in events), key=lambda e: e[0])
    arr = {src: t_a}
    changed = True
    while changed:
        changed = False
        for t, s, d in ev:
            if t < t_a or t >= t_b:
                continue
            a = arr.get(s)
            if a is not None and a <= t and (d not in arr or t < arr[d]):
                arr[d] = t
                changed = True
    arr.pop(src, None)
    return arr


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def tgms_job(exe, work, path, op, args):
    """tgms's whole job on a fresh store: (answer envelope, total s, ingest s, query s,
    events ingested). Every page of `rows` is read (the paging is part of the job)."""
    store = os.path.join(work, "store")
    shutil.rmtree(store, ignore_errors=True)
    t0 = time.perf_counter()
    run([exe, "init", store])
    summary = json.loads(run([exe, "ingest", store, path]))
    t1 = time.perf_counter()
    env = json.loads(run([exe, "call", store, op, json.dumps(args)]))
    rows = list(env.get("rows", []))
    while env.get("cursor"):
        env = json.loads(run([exe, "call", store, op, json.dumps(dict(args, cursor=env["cursor"]))]))
        rows += env.get("rows", [])
    t2 = time.perf_counter()
    if "error" in env:
        raise SystemExit(f"tgms call {op}: {env}")
    env["rows"] = rows
    return env, t2 - t0, t1 - t0, t2 - t1, summary["events"]


def brute_job(path, kind, delta_s, src_id):
    """The brute force's whole job (parse the text, answer): (answer, seconds)."""
    t0 = time.perf_counter()
    ev = parse_snap(path)
    if kind == "census":
        ans = brute_census(ev, delta_s)
    else:
        t_a = min(e[2] for e in ev) * US
        t_b = (max(e[2] for e in ev) + 1) * US
        ans = {f"n{k}": v for k, v in brute_reach(ev, src_id, t_a, t_b).items()}
    return ans, time.perf_counter() - t0


def job_args(kind, events, delta_s, tie_mode):
    t_a = min(e[2] for e in events) * US
    t_b = (max(e[2] for e in events) + 1) * US
    w = {"t_a": t_a, "t_b": t_b}
    if kind == "census":
        a = {"motif": "all", "delta": delta_s * US, "window": w}
        if tie_mode:
            a["tie_mode"] = tie_mode
        return "count_temporal_motifs", a
    return "temporal_reachability", {"src": f"n{busiest_src(events)}", "window": w, "limit": 10000}


def busiest_src(events):
    """The node with the most outgoing events (the smallest id among equals): the source
    of the reachability job, so that it reaches far."""
    n = collections.Counter(s for s, _, _ in events)
    return min(n, key=lambda v: (-n[v], v))


def tgms_answer(kind, env):
    if kind == "census":
        return {k: int(v) for k, v in env["counts"].items()}
    return {r["uid"]: int(r["earliest_arrival"]) for r in env["rows"]}


def write_snap(path, events):
    with open(path, "w") as f:
        f.writelines(f"{s} {d} {t}\n" for s, d, t in events)


def peer_snap(snap_dir, path, delta_s, work):
    """SNAP's temporal-motif counter (examples/temporalmotifs), built from local sources:
    (6×6 counts, seconds) or None when the sources are absent."""
    if not snap_dir:
        print("SNAP: skipped (no --snap-dir: give a local SNAP checkout to build its temporalmotifs counter)")
        return None
    ex = os.path.join(snap_dir, "examples", "temporalmotifs")
    if not os.path.isdir(ex):
        print(f"SNAP: skipped (no sources at {ex})")
        return None
    main = os.path.join(ex, "temporalmotifsmain")
    if not os.path.exists(main):
        run(["make", "-C", ex])
    out = os.path.join(work, "snap-counts.txt")
    t0 = time.perf_counter()
    run([main, f"-i:{path}", f"-o:{out}", f"-delta:{delta_s}"])
    secs = time.perf_counter() - t0
    with open(out) as f:
        grid = [[int(x) for x in line.split()] for line in f if line.strip()]
    return {f"M_{i + 1}_{j + 1}": grid[i][j] for i in range(6) for j in range(6)}, secs


def peer_fast(fast_dir, fast_cmd, path, delta_s):
    """FAST, built from local sources (`make` in --fast-dir) and run by --fast-cmd:
    (None, seconds) — its output format is not parsed — or None when absent."""
    if not fast_dir or not fast_cmd:
        print("FAST: skipped (no --fast-dir / --fast-cmd: give a local FAST checkout and its command line)")
        return None
    if not os.path.isdir(fast_dir):
        print(f"FAST: skipped (no sources at {fast_dir})")
        return None
    if os.path.exists(os.path.join(fast_dir, "Makefile")):
        run(["make", "-C", fast_dir])
    cmd = fast_cmd.format(input=path, delta_s=delta_s)
    t0 = time.perf_counter()
    run(["sh", "-c", cmd], cwd=fast_dir)
    return None, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgms", default=os.path.join(ROOT, "target", "release", "tgms"), help="the tgms binary")
    ap.add_argument("--file", help="SNAP text file of the full run (default: CollegeMsg)")
    ap.add_argument("--events", type=int, help="generate a random SNAP file of N events for the full run")
    ap.add_argument("--nodes", type=int, default=0, help="nodes of --events (default N/10)")
    ap.add_argument("--brute-events", type=int, default=2000, help="events of the brute-force input (first lines)")
    ap.add_argument("--delta-s", type=int, default=3600, help="motif delta in seconds (default 1 h)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (median printed)")
    ap.add_argument("--snap-dir", help="a local SNAP checkout (examples/temporalmotifs is built)")
    ap.add_argument("--fast-dir", help="a local FAST checkout (built with make if it has a Makefile)")
    ap.add_argument("--fast-cmd", help="FAST's command line, with {input} and {delta_s}")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    if not os.path.exists(a.tgms):
        raise SystemExit(f"{a.tgms} not found: run `cargo build --release` first (or pass --tgms)")
    work = a.work or tempfile.mkdtemp(prefix="tgms-endtoend-")
    os.makedirs(work, exist_ok=True)

    if a.events:
        full = os.path.join(work, f"random-{a.events}.txt")
        r = random.Random(7)
        nodes = a.nodes or max(1000, a.events // 10)
        t0 = 1_100_000_000
        ts = sorted(r.randrange(t0, t0 + 86400 * 365) for _ in range(a.events))
        write_snap(full, [(r.randrange(nodes), r.randrange(nodes), t) for t in ts])
        name = f"random {a.events} events over {nodes} nodes"
    elif a.file:
        full, name = a.file, a.file
    else:
        full = os.path.join(work, "CollegeMsg.txt")
        with gzip.open(COLLEGEMSG, "rt") as g, open(full, "w") as f:
            f.write(g.read())
        name = "CollegeMsg"
    small_ev = parse_snap(full)[: a.brute_events]
    small = os.path.join(work, "small.txt")
    write_snap(small, small_ev)
    print(f"machine: {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    print(f"small input: the first {len(small_ev)} events of {name}; delta {a.delta_s} s; {a.rounds} rounds\n")

    failed = False
    print(f"{'job':<28} {'tgms s':>9} {'brute s':>9} {'tgms/brute':>11}  agree")
    for kind in ("census", "reach"):
        op, args = job_args(kind, small_ev, a.delta_s, "strict")
        t_tgms, t_brute = [], []
        for _ in range(a.rounds):
            env, total, _, _, _ = tgms_job(a.tgms, work, small, op, args)
            t_tgms.append(total)
            ans, secs = brute_job(small, kind, a.delta_s, busiest_src(small_ev))
            t_brute.append(secs)
        got = tgms_answer(kind, env)
        agree = got == ans
        if not agree:
            failed = True
            diff = {k: (got.get(k), ans.get(k)) for k in set(got) | set(ans) if got.get(k) != ans.get(k)}
            print(f"DISAGREEMENT in {kind}: (tgms, brute) {dict(list(diff.items())[:10])}")
        tm, bm = statistics.median(t_tgms), statistics.median(t_brute)
        label = "ingest + all-36 census" if kind == "census" else "ingest + reachability"
        print(f"{label:<28} {tm:>9.3f} {bm:>9.3f} {tm / bm:>11.3f}  {'yes' if agree else 'NO'}"
              f"  ({sum(ans.values()) if kind == 'census' else len(ans)} {'instances' if kind == 'census' else 'nodes reached'})")

    print(f"\nfull input: {name}")
    full_ev = parse_snap(full)
    print(f"{'job':<28} {'total s':>9} {'ingest s':>9} {'events/s':>11} {'query s':>9}")
    census = None
    for kind in ("census", "reach"):
        op, args = job_args(kind, full_ev, a.delta_s, None)
        runs = [tgms_job(a.tgms, work, full, op, args) for _ in range(a.rounds)]
        env = runs[-1][0]
        if kind == "census":
            census = tgms_answer(kind, env)
        tot = statistics.median(r[1] for r in runs)
        ing = statistics.median(r[2] for r in runs)
        q = statistics.median(r[3] for r in runs)
        label = "ingest + all-36 census" if kind == "census" else "ingest + reachability"
        print(f"{label:<28} {tot:>9.3f} {ing:>9.3f} {runs[-1][4] / ing:>11.0f} {q:>9.3f}")
        if kind == "census":
            census_total = tot

    for peer, res in (
        ("SNAP temporalmotifs", peer_snap(a.snap_dir, full, a.delta_s, work)),
        ("FAST", peer_fast(a.fast_dir, a.fast_cmd, full, a.delta_s)),
    ):
        if res is None:
            continue
        counts, secs = res
        same = "" if counts is None else ("; counts agree" if counts == census else "; COUNTS DIFFER")
        failed |= counts is not None and counts != census
        print(f"{peer}: {secs:.3f} s; tgms whole job / {peer} = {census_total / secs:.3f}{same}")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
