"""Fixtures of the Python package tests: the `tgms` CLI to compare with (TGMS_BIN, set by
python/test.sh), a deterministic event set, and a store written through Python."""

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

T0 = 1_090_000_000_000_000  # 2004-07-16T17:46:40Z in µs


def cli_bin() -> str:
    b = os.environ.get("TGMS_BIN")
    if not b:
        pytest.fail("TGMS_BIN is not set: run python/test.sh")
    return b


def cli(*args, check=True, stdin=None):
    """Runs the tgms CLI; returns (returncode, stdout, stderr)."""
    p = subprocess.run(
        [cli_bin(), *[str(a) for a in args]],
        capture_output=True,
        text=True,
        input=stdin,
    )
    if check and p.returncode != 0:
        raise AssertionError(f"tgms {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    return json.loads(cli(*args)[1])


def make_events(n=300, nodes=25, seed=7):
    """(src, dst, t_us, weight, kind) rows, deterministic."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        s = rng.randrange(nodes)
        d = rng.randrange(nodes - 1)
        d = d + 1 if d >= s else d
        t = T0 + rng.randrange(0, 90 * 86_400) * 1_000_000
        rows.append((f"u{s}", f"u{d}", t, rng.randrange(1, 100), rng.choice(["a", "b"])))
    return rows


@pytest.fixture(scope="session")
def events():
    return make_events()


@pytest.fixture()
def events_csv(tmp_path, events):
    p = tmp_path / "events.csv"
    with open(p, "w") as f:
        f.write("src,dst,t,weight,kind\n")
        for s, d, t, w, k in events:
            f.write(f"{s},{d},{t},{w},{k}\n")
    return p


@pytest.fixture()
def store(tmp_path, events):
    """A store written through Python: the events as edges with props, nodes for u0..u4 and
    one correction (so beliefs differ across transaction time)."""
    import tgms

    st = tgms.Store.create(tmp_path / "store")
    nodes = [
        {"op": "assert_node", "uid": f"u{i}", "label": "Person", "vt_s": T0, "props": {"team": i % 2}}
        for i in range(5)
    ]
    st.write(nodes)
    ops = [
        {"op": "assert_edge", "src": s, "dst": d, "rel_type": "MSG", "vt_s": t, "vt_e": t + 10 * 86_400_000_000,
         "props": {"weight": w, "kind": k}}
        for s, d, t, w, k in events
    ]
    st.write(ops)
    st.write([{"op": "correct", "ref": {"kind": "node", "uid": "u1"}, "vt_s": T0,
               "props": {"team": 7}, "reason": "moved teams"}])
    yield st
    st.close()
