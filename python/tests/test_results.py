"""Operator results through Python equal `tgms call` envelopes; their Arrow tables have the
declared schema (read independently from `tgms tools --format markdown`) and carry the
envelope's rows value for value; pyarrow and polars take them through the PyCapsule interface."""

import json
import re

import polars as pl
import pyarrow as pa
import pytest

import contract
import tgms
from conftest import T0, cli, cli_json

DAY = 86_400_000_000


def declared_outputs():
    """{op: {field: contract text}} from the operator reference page."""
    md = cli("tools", "--format", "markdown")[1]
    out, op, in_outputs = {}, None, False
    for line in md.splitlines():
        if line.startswith("## "):
            op, in_outputs = line[3:].strip(), False
            out[op] = {}
        elif line.startswith("**Output fields**"):
            in_outputs = True
        elif line.startswith("**") and in_outputs:
            in_outputs = False
        elif in_outputs and line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            name = cells[0].strip("`")
            out[op][name] = cells[1].strip("`").replace("\\|", "|")
    return out


DECLARED = None


def declared(op):
    global DECLARED
    if DECLARED is None:
        DECLARED = declared_outputs()
    return DECLARED[op]


# (op, args): calls over the fixture store, covering fixed-object rows, open-object rows,
# capped lists beside paged rows, nested structs and past belief states.
CALLS = [
    ("entity_history", {"uid": "u1", "include_edges": True, "limit": 50}),
    ("entity_history", {"uid": "u1", "as_of_tt": "FIRST_TT"}),
    ("snapshot_subgraph", {"seeds": ["u0", "u1"], "hops": 1, "t_valid": T0 + 30 * DAY,
                           "limit": 20}),
    ("aggregate_events", {"window": {"t_a": T0, "t_b": T0 + 91 * DAY},
                          "group_by": [{"dim": "endpoint", "role": "src"}],
                          "aggregates": [{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "weight"}]}),
    ("state_at", {"uid": "u2", "at": T0 + 20 * DAY, "direction": "both"}),
    ("version_history", {"uid": "u1", "belief": "all"}),
    ("diff_snapshots", {"t1": T0 + 10 * DAY, "t2": T0 + 50 * DAY, "limit": 5}),
]


def resolve(args, st):
    a = dict(args)
    if a.get("as_of_tt") == "FIRST_TT":
        a["as_of_tt"] = st.stats()["first_tt"]
    return a


def cli_call(st, op, args):
    return cli_json("call", st.path, op, json.dumps(args))


def expected_schema(op, list_name, rows):
    """The declared schema of a list: one field per object field, or for open objects the
    types of the values (ints, numbers, strings, booleans; JSON text otherwise)."""
    c = contract.parse(declared(op)[list_name])
    assert c[0] == "list", (op, list_name, c)
    elem = c[1]
    if elem[0] == "obj":
        return pa.schema([pa.field(n, *contract.arrow_type(t)) for n, t in elem[1]]), elem[1]
    if elem[0] == "openobj":
        kinds = {}
        for r in rows:
            for k, v in r.items():
                kind = ("null" if v is None else "bool" if isinstance(v, bool) else
                        "int" if isinstance(v, int) else "float" if isinstance(v, float) else
                        "str" if isinstance(v, str) else "json")
                prev = kinds.get(k, "null")
                if prev == "null" or prev == kind:
                    kinds[k] = kind
                elif kind == "null":
                    pass
                elif {prev, kind} == {"int", "float"}:
                    kinds[k] = "float"
                else:
                    kinds[k] = "json"
        t = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
        fields = [pa.field(k, t.get(kinds[k], pa.string()), nullable=True) for k in sorted(kinds)]
        cols = [(k, ("null", ("any",) if kinds[k] in ("json", "null") else (kinds[k],)))
                for k in sorted(kinds)]
        return pa.schema(fields), cols
    return pa.schema([pa.field("value", *contract.arrow_type(elem))]), [("value", elem)]


def from_arrow(value, c):
    """An Arrow value (as to_pylist gives it) back as the envelope's JSON value."""
    if value is None:
        return None
    if contract.is_json_text(c):
        return json.loads(value)
    kind = c[1][0] if c[0] == "null" else c[0]
    inner = c[1] if c[0] == "null" else c
    if kind == "list":
        return [from_arrow(v, inner[1]) for v in value]
    if kind == "obj":
        return {n: from_arrow(value[n], t) for n, t in inner[1]}
    return value


@pytest.mark.parametrize("op,args", CALLS, ids=[f"{o}-{i}" for i, (o, _) in enumerate(CALLS)])
def test_call_equals_cli_and_arrow_is_declared(store, op, args):
    a = resolve(args, store)
    r = store.call(op, a)
    env = cli_call(store, op, a)
    # The envelope is the CLI's, byte for byte after parsing, digest included.
    assert json.loads(r.json()) == env
    assert r.envelope_dict == env
    assert r.result_digest == env["result_digest"]
    # Keyword arguments are the same call.
    assert store.call(op, **a).result_digest == env["result_digest"]
    # meta: the envelope without its lists, plus completeness.
    lists = r.lists
    assert lists and lists[0] == ("rows" if "rows" in declared(op) else lists[0])
    for k, v in env.items():
        if k in lists:
            assert k not in r.meta
        else:
            assert r.meta[k] == v
    assert r.meta["complete"] == r.complete
    whole = all(env.get(f"{l}_total", env.get("rows_total") if l == "rows" else None)
                in (None, len(env.get(l, []))) for l in lists)
    if env.get("truncated") or not whole:
        assert not r.complete
    elif not any(k.endswith("truncated") and v for k, v in env.items()) and "approx" not in env:
        assert r.complete
    # Every list: the declared schema, the envelope's values.
    for name in lists:
        rows = env.get(name, [])
        t = pa.table(r.table(name))
        schema, cols = expected_schema(op, name, rows)
        assert t.schema.remove_metadata() == schema, (op, name)
        assert t.num_rows == len(rows)
        got = t.to_pylist()
        for g, want in zip(got, rows):
            if cols == [("value", cols[0][1])] and not isinstance(want, dict):
                assert from_arrow(g["value"], cols[0][1]) == want
            else:
                back = {n: from_arrow(g[n], c) for n, c in cols if n in want or g[n] is not None}
                assert back == {n: want.get(n) for n in back}, (op, name)
    # The main list through the capsule interface, into pyarrow and polars.
    main = env.get(lists[0], [])
    t = pa.table(r)
    assert t.num_rows == len(main) == len(r)
    assert t.schema.metadata[b"tgms.op"] == op.encode()
    df = pl.DataFrame(r)
    assert df.height == len(main)
    assert df.columns == t.column_names
    if main and isinstance(main[0], dict):
        k = t.column_names[0]
        assert df[k].to_list() == t.column(k).to_pylist()


def test_paging_cursor_matches_cli(store):
    args = {"seeds": ["u0", "u1", "u2"], "hops": 1, "t_valid": T0 + 45 * DAY, "limit": 3}
    r = store.call("snapshot_subgraph", args)
    assert r.truncated and r.cursor
    nxt = store.call("snapshot_subgraph", dict(args, cursor=r.cursor))
    assert nxt.envelope_dict == cli_call(store, "snapshot_subgraph", dict(args, cursor=r.cursor))
    assert not r.complete


def test_pages_are_the_same_with_the_page_cache_off(store):
    """set_page_cache_bytes only changes where a page is read from, never its bytes."""
    args = {"seeds": ["u0", "u1", "u2"], "hops": 1, "t_valid": T0 + 45 * DAY, "limit": 3}
    pages = []
    for budget in [0, 1 << 20, None]:
        tgms.set_page_cache_bytes(budget)
        r = store.call("snapshot_subgraph", args)
        nxt = store.call("snapshot_subgraph", dict(args, cursor=r.cursor))
        pages.append((r.envelope_dict, nxt.envelope_dict))
    assert pages[0] == pages[1] == pages[2]
    with pytest.raises(OverflowError):
        tgms.set_page_cache_bytes(-1)


def test_past_belief_state_is_unchanged_by_later_writes(store):
    first_tt = store.stats()["first_tt"]
    before = store.call("entity_history", uid="u1", as_of_tt=first_tt)
    store.write([{"op": "correct", "ref": {"kind": "node", "uid": "u1"}, "vt_s": T0,
                  "props": {"team": 9}, "reason": "again"}])
    after = store.call("entity_history", uid="u1", as_of_tt=first_tt)
    assert before.result_digest == after.result_digest
    assert pa.table(before).equals(pa.table(after))
    now = store.call("entity_history", uid="u1")
    assert now.result_digest != before.result_digest
    assert json.loads(pa.table(now).column("props")[-1].as_py()) == {"team": 9}
