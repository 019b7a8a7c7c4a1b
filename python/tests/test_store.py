"""Every public method of tgms.Store round-trips and agrees with the CLI: write, call, stats,
history, run_plan, verify, ingest (a file, a pyarrow table, a polars DataFrame), refresh,
close; errors raise the exception of their code with the CLI's payload; a read-only handle
beside the CLI writing."""

import json

import polars as pl
import pyarrow as pa
import pytest

import tgms
from conftest import T0, cli, cli_json

DAY = 86_400_000_000


def no_utc(d):
    """The CLI adds `<field>_utc` companions for people; the Python dicts keep integers."""
    if isinstance(d, dict):
        return {k: no_utc(v) for k, v in d.items() if not k.endswith("_utc")}
    return d


def test_write_ack_and_stats_and_history_match_cli(store, events):
    ack = store.write([{"op": "assert_edge", "src": "u0", "dst": "u3", "rel_type": "MSG",
                        "vt_s": T0, "vt_e": T0 + 1}])
    assert set(ack) == {"batch", "tt", "ops"} and ack["ops"] == 1 and ack["batch"] == 3
    st = store.stats()
    assert st == no_utc(cli_json("stats", store.path, "--json"))
    assert st["n_edge_versions"] == len(events) + 1
    assert st["last_tt"] == ack["tt"]
    h = store.history("u1", edges=True)
    assert h == cli_json("history", store.path, "u1", "--edges", "--format", "json")
    # Two versions of u1's node: the asserted one (closed by the correction) and the correction.
    assert len(h["rows"]) == 2 and h["rows"][1]["reason"] == "moved teams"
    assert len(h["edges"]) == sum(1 for s, d, *_ in events if "u1" in (s, d))


def test_batch_key_is_idempotent(store):
    op = [{"op": "assert_node", "uid": "z", "label": "X", "vt_s": T0}]
    a = store.write(op, batch_key="k1")
    b = store.write(json.dumps(op), batch_key="k1")
    assert b["duplicate"] is True and b["tt"] == a["tt"] and "duplicate" not in a


def test_run_plan_and_verify_match_cli(store, tmp_path):
    plan = {"plan_id": "p1", "steps": [
        {"id": "s1", "op": "entity_history", "args": {"uid": "u1", "include_edges": True}}],
        "answer_spec": {"kind": "count", "from": "s1.edges_total"}}
    run = store.run_plan(plan)
    n_edges = store.history("u1", edges=True)["edges"]
    assert run.ok and run.answer_complete
    assert run.answer == len([e for e in n_edges if e["tt_e"] == tgms.OPEN_END])
    assert run.steps["s1"].result_digest == store.call(
        "entity_history", uid="u1", include_edges=True).result_digest
    assert run.trace["trace_id"] == run.trace_id
    # The CLI runs the same plan to the same trace id and finds Python's trace in the store.
    pf = tmp_path / "plan.json"
    pf.write_text(json.dumps(plan))
    assert cli_json("plan", "run", store.path, pf)["trace_id"] == run.trace_id
    answer = {"text": f"u1 has {run.answer} edges.", "claims": [
        {"id": "c1", "type": "count", "value": run.answer, "from": "s1.edges_total",
         "evidence": ["s1"]},
        {"id": "c2", "type": "count", "value": run.answer + 1, "from": "s1.edges_total",
         "evidence": ["s1"]}]}
    rep = store.verify(answer, run.trace_id)
    af = tmp_path / "answer.json"
    af.write_text(json.dumps(answer))
    assert rep == cli_json("verify", store.path, af, "--trace", run.trace_id)
    verdicts = {c["id"]: c["verdict"] for c in rep["claims"]}
    assert verdicts == {"c1": "supported", "c2": "unsupported"}
    # A trace dict verifies the same way.
    assert store.verify(json.dumps(answer), run.trace) == rep


def test_errors_raise_typed_exceptions_with_the_cli_payload(store, tmp_path):
    # An operator argument of the wrong type: E_SCHEMA, as the CLI prints it.
    with pytest.raises(tgms.InvalidArgumentError) as e:
        store.call("entity_history", uid=5)
    rc, out, err = cli("call", store.path, "entity_history", '{"uid": 5}', check=False)
    assert rc != 0
    # The CLI prints the payload on stdout (and a pointer to the docs on stderr).
    assert e.value.code == "E_SCHEMA" and e.value.payload == json.loads(out)
    assert isinstance(e.value, tgms.TgmsError)
    with pytest.raises(tgms.NotFoundError) as e:
        store.call("entity_history", uid="nobody")
    assert e.value.code == "E_NOT_FOUND"
    with pytest.raises(tgms.NotFoundError):
        store.history("nobody")
    with pytest.raises(tgms.TgmsError) as e:
        store.call("no_such_op")
    assert e.value.payload["error"] in ("E_SCHEMA", "E_NOT_FOUND", "E_INVALID_ARG")
    # A batch with an unknown field or not a list is refused before anything is logged ...
    before = store.stats()
    with pytest.raises(tgms.InvalidArgumentError) as e:
        store.write([{"op": "assert_node", "uid": "x", "label": "X", "vt_s": 1, "vt_start": 1}])
    assert "vt_start" in e.value.message
    with pytest.raises(tgms.InvalidArgumentError):
        store.write({"op": "assert_node"})
    assert store.stats()["n_batches"] == before["n_batches"]
    # ... one whose values do not apply is logged as a failed batch, as with `tgms write`.
    with pytest.raises(tgms.InvalidArgumentError) as e:
        store.write([{"op": "assert_edge", "src": "a", "rel_type": "MSG", "vt_s": 1}])
    assert "dst" in e.value.message
    after = store.stats()
    assert after["n_failed_batches"] == before["n_failed_batches"] + 1
    assert after["n_edge_versions"] == before["n_edge_versions"]
    # A plan the static verifier refuses: the report with a repair per violation.
    with pytest.raises(tgms.PlanInvalidError) as e:
        store.run_plan({"plan_id": "bad", "steps": [
            {"id": "s1", "op": "state_at", "args": {"uid": "u1", "at": "2004-13-01"}}],
            "answer_spec": {"kind": "count", "from": "s1.rows_total"}})
    assert e.value.details["valid"] is False and e.value.details["violations"]
    with pytest.raises(tgms.NotFoundError):
        store.verify({"text": "", "claims": []}, "0" * 64)
    # One writer per store; a read-only handle refuses writes.
    with pytest.raises(tgms.StateError):
        tgms.Store.open(store.path)
    ro = tgms.Store.open(store.path, read_only=True)
    with pytest.raises(tgms.StateError):
        ro.write([{"op": "assert_node", "uid": "q", "label": "X", "vt_s": 1}])
    ro.close()
    with pytest.raises(tgms.StateError):
        ro.stats()


def test_read_only_handle_while_the_cli_writes(tmp_path):
    path = tmp_path / "s"
    with tgms.Store.create(path) as w:
        w.write([{"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10}])
    ro = tgms.Store.open(path, read_only=True)
    r1 = ro.call("entity_history", uid="a", include_edges=True)
    assert pa.table(r1.table("edges")).num_rows == 1
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps([{"op": "assert_edge", "src": "a", "dst": "c", "rel_type": "MSG",
                                  "vt_s": 20}]))
    cli("write", path, batch)  # the CLI takes the writer lock beside the Python reader
    stale = ro.call("entity_history", uid="a", include_edges=True)
    assert stale.result_digest == r1.result_digest
    ro.refresh()
    fresh = ro.call("entity_history", uid="a", include_edges=True)
    assert fresh.envelope_dict == cli_json("call", path, "entity_history",
                                           '{"uid": "a", "include_edges": true}')
    assert pa.table(fresh.table("edges")).column("dst").to_pylist() == ["b", "c"]
    # The earlier result object is unchanged.
    assert pa.table(r1.table("edges")).num_rows == 1
    with pytest.raises(tgms.StateError):
        tgms.Store.open(path).refresh()


def test_open_modes_read_the_same_store(tmp_path, events):
    """io="pread" / eager=True (the CLI's TGMS_IO / TGMS_OPEN) read what the default reads,
    from a compacted image and its log tail; refresh() keeps the handle's mode."""
    path = tmp_path / "s"
    with tgms.Store.create(path, io="pread") as w:
        w.write([{"op": "assert_edge", "src": s, "dst": d, "rel_type": "MSG", "vt_s": t}
                 for s, d, t, *_ in events])
    cli("compact", path)
    with tgms.Store.open(path, eager=True) as w:
        w.write([{"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "MSG", "vt_s": T0}])
    args = {"window": {"t_a": 0, "t_b": T0 + 400 * DAY}, "group_by": [{"dim": "rel_type"}],
            "aggregates": [{"agg": "count"}]}
    want = cli_json("call", path, "aggregate_events", json.dumps(args))
    for kw in [{}, {"io": "pread"}, {"eager": True}, {"io": "pread", "eager": True}]:
        st = tgms.Store.open(path, read_only=True, **kw)
        assert st.call("aggregate_events", **args).envelope_dict == want, kw
        st.refresh()
        assert st.call("aggregate_events", **args).result_digest == want["result_digest"], kw
        st.close()
    with pytest.raises(tgms.InvalidArgumentError, match="pread"):
        tgms.Store.open(path, read_only=True, io="mmapped")
    with pytest.raises(tgms.InvalidArgumentError, match="pread"):
        tgms.Store.create(tmp_path / "t", io="")


def digest(path):
    return cli("digest", path)[1].strip()


def calls_digests(path):
    """Result digests of calls that do not show transaction times (equal across loads)."""
    st = tgms.Store.open(path, read_only=True)
    out = [st.call("aggregate_events", window={"t_a": T0, "t_b": T0 + 91 * DAY}, stride="7d",
                   group_by=[{"dim": "time_bucket"}, {"dim": "endpoint", "role": "src"}],
                   aggregates=[{"agg": "count"}, {"agg": "mean", "of": "prop", "prop": "weight"}],
                   limit=10000).result_digest,
           st.call("snapshot_subgraph", seeds=[f"u{i}" for i in range(25)], hops=0,
                   t_valid=T0 + 40 * DAY, limit=10000).meta["set_digest"]]
    st.close()
    return out


def test_ingest_path_table_and_dataframe_agree_with_the_cli(tmp_path, events, events_csv):
    mapping = dict(src="src", dst="dst", time="t", rel_type="MSG", props=["weight", "kind"])
    # The CLI loads the CSV ...
    a = tmp_path / "a"
    tgms.Store.create(a).close()
    cli("ingest", a, events_csv, "--format", "csv", "--src", "src", "--dst", "dst",
        "--time-col", "t", "--rel-type", "MSG", "--props", "weight,kind")
    # ... Python loads the same file, a pyarrow table and a polars DataFrame of the rows.
    cols = {"src": [e[0] for e in events], "dst": [e[1] for e in events],
            "t": [e[2] for e in events], "weight": [e[3] for e in events],
            "kind": [e[4] for e in events]}
    sources = {"b": events_csv, "c": pa.table(cols), "d": pl.DataFrame(cols)}
    summaries = {}
    for name, src in sources.items():
        with tgms.Store.create(tmp_path / name) as st:
            summaries[name] = st.ingest(src, **mapping)
            assert summaries[name]["committed"] == len(events)
            # The same input again is recognized and not repeated.
            again = st.ingest(src, **mapping)
            assert again["already_ingested"] is True and again["committed"] == 0
    # The same file through Python is the CLI's load.
    ref = calls_digests(a)
    assert calls_digests(tmp_path / "b") == ref
    # Tables keep their types: CSV prop cells are text, Arrow integers stay integers. The
    # edges are the same either way; the tables agree with each other.
    tables = calls_digests(tmp_path / "c")
    assert tables[1] == ref[1] and tables[0] != ref[0]
    assert calls_digests(tmp_path / "d") == tables
    for name, weight in (("b", str), ("c", int), ("d", int)):
        st = tgms.Store.open(tmp_path / name, read_only=True)
        assert st.stats()["n_edge_versions"] == len(events)
        e = st.history(events[0][0], edges=True)["edges"]
        assert {type(x["props"]["weight"]) for x in e} == {weight}
        st.close()
    # A table streamed in several record batches is the same load.
    t = pa.table(cols)
    with tgms.Store.create(tmp_path / "e") as st:
        st.ingest(pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=7)),
                  **mapping)
    assert calls_digests(tmp_path / "e") == tables


def test_ingest_bad_row_raises_with_the_line(tmp_path):
    t = pa.table({"s": ["a", "b", None], "d": ["b", "c", "d"], "t": [1, 2, 3]})
    with tgms.Store.create(tmp_path / "s") as st:
        with pytest.raises(tgms.InvalidArgumentError) as e:
            st.ingest(t, src="s", dst="d", time="t", rel_type="MSG")
        assert e.value.details["line"] == 3 and e.value.details["field"] == "s"
        assert st.stats()["n_edge_versions"] == 0
        s = st.ingest(t, src="s", dst="d", time="t", rel_type="MSG", on_error="skip")
        assert s["committed"] == 2 and s["skipped_lines"] == 1
        with pytest.raises(tgms.InvalidArgumentError):
            st.ingest(t, src="nope", dst="d", time="t", rel_type="MSG")
        with pytest.raises(tgms.InvalidArgumentError):
            st.ingest(t, src="s", dst="d", time="t", rel_type="MSG", time_unit="minutes")


def test_timestamps_and_dictionaries_in_tables(tmp_path):
    ts = pa.array([T0, T0 + 5], type=pa.timestamp("us", tz="UTC"))
    t = pa.table({"s": pa.array(["a", "b"]).dictionary_encode(), "d": ["b", "c"], "t": ts})
    with tgms.Store.create(tmp_path / "s") as st:
        st.ingest(t, src="s", dst="d", time="t", rel_type="MSG")
        e = pa.table(st.call("entity_history", uid="b", include_edges=True).table("edges"))
        assert sorted(e.column("vt_s").to_pylist()) == [T0, T0 + 5]
