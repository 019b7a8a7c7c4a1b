"""MCP conformance checks of `tgms serve`, driven by the official MCP Python SDK client.

Run by tests/mcp.rs (which builds the store, installs the SDK into a virtual environment
and starts HTTP servers); every check compares the server with an independent source: the
`tgms tools` / `tgms call` CLI output, the tool's own outputSchema, or a serial run.

    python suite.py conformance --tgms BIN --store DIR --calls CALLS.json --mode MODE
                                [--url URL] [--server-prefix "setpriv ..."] [--readonly]
    python suite.py concurrent  --tgms BIN --store DIR --calls CALLS.json --url URL
                                [--clients 8] [--rounds 3]
    python suite.py freshness   --tgms BIN --store DIR --mode MODE [--server-prefix ...]

Exit status 0 when every check passed; every failed check is printed as `FAIL: ...`.
"""

import argparse
import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import jsonschema
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

FAILS = []
PASSES = [0]


def check(cond, what):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("FAIL:", what, flush=True)


def cli(tgms, *args, stdin=None):
    """Runs the tgms CLI; returns (exit code, stdout without the trailing newline)."""
    p = subprocess.run([tgms, *args], input=stdin, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout.rstrip("\n")


def client(a, mode):
    """A Client over stdio (spawning `tgms serve`) or over streamable HTTP (--url)."""
    if a.url:
        return Client(a.url, mode=mode)
    cmd = shlex.split(a.server_prefix or "") + [a.tgms, "serve", "--store", a.store]
    if a.readonly:
        cmd.append("--readonly")
    return Client(StdioServerParameters(command=cmd[0], args=cmd[1:]), mode=mode)


EXPECTED_PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28", "2026-07-28": "2026-07-28"}
PLAN_TOOLS = ["validate_plan", "run_plan", "verify_answer", "get_trace", "get_result", "dataset_card"]


def untimed(v):
    """`v` without any `wall_ms` key, at any depth."""
    if isinstance(v, dict):
        return {k: untimed(x) for k, x in v.items() if k != "wall_ms"}
    if isinstance(v, list):
        return [untimed(x) for x in v]
    return v


def text_of(r):
    check(len(r.content) == 1 and r.content[0].type == "text", "one text content item")
    return r.content[0].text


async def conformance(a):
    calls = json.load(open(a.calls))
    code, out = cli(a.tgms, "tools", "--format", "mcp")
    check(code == 0, "tgms tools runs")
    cli_tools = {t["name"]: t for t in json.loads(out)}
    async with client(a, a.mode) as c:
        check(c.protocol_version == EXPECTED_PROTOCOL[a.mode],
              f"protocol {c.protocol_version} negotiated in mode {a.mode}")
        # Legacy connections always name the server; 2026-era ones carry the name in an
        # optional `_meta` stamp, which a pinned connection (no discover) may not see.
        info = c.server_info
        print(f"mode {a.mode}: protocol {c.protocol_version}, server {info}", flush=True)
        check((info is None and a.mode != "legacy") or info.name == "tgms", "server name tgms")

        # Tools: the registry's operators in name order, then the plan tools; schemas equal
        # to `tgms tools --format mcp`.
        listed = (await c.list_tools()).tools
        names = [t.name for t in listed]
        check(names == sorted(cli_tools) + PLAN_TOOLS, f"tool order {names}")
        tools = {t.name: t for t in listed}
        for n, t in cli_tools.items():
            got = tools.get(n)
            check(got is not None and got.input_schema == t["inputSchema"], f"{n} inputSchema")
            check(got is not None and got.output_schema == t["outputSchema"], f"{n} outputSchema")
            check(got is not None and got.input_schema.get("type") == "object", f"{n} root object")
        for n in PLAN_TOOLS:
            check(tools[n].input_schema.get("type") == "object", f"{n} root object")

        # Every operator: structuredContent validates and equals `tgms call`, the text item
        # is its canonical JSON byte for byte; the TGMS-style {"args": ...} wrapper agrees.
        covered = set()
        for q in calls:
            op, args = q["op"], q["args"]
            r = await c.call_tool(op, args)
            code, out = cli(a.tgms, "call", a.store, op, json.dumps(args))
            check(code == 0, f"tgms call {q['id']} succeeds ({out[:200]})")
            check(r.is_error is False, f"{q['id']} isError false: {text_of(r)[:300]}")
            check(text_of(r) == out, f"{q['id']} text equals tgms call byte for byte")
            check(r.structured_content == json.loads(out), f"{q['id']} structuredContent")
            try:
                jsonschema.validate(r.structured_content, tools[op].output_schema)
                check(True, "")
            except jsonschema.ValidationError as e:
                check(False, f"{q['id']} envelope violates outputSchema: {e.message}")
            w = await c.call_tool(op, {"args": args})
            check(text_of(w) == out, f"{q['id']} legacy args wrapper")
            covered.add(op)
        check(covered == set(cli_tools), f"every operator called: missing {set(cli_tools) - covered}")

        # Bad arguments are tool errors with the spec payload, never protocol failures.
        r = await c.call_tool("entity_history", {"uid": 5})
        check(r.is_error is True and r.structured_content["error"] == "E_SCHEMA", "wrong type is E_SCHEMA")
        code, out = cli(a.tgms, "call", a.store, "entity_history", '{"uid": 5}')
        check(text_of(r) == out, "error text equals tgms call's payload")
        r = await c.call_tool("entity_history", {"uid": "no-such-uid"})
        check(r.is_error is True and r.structured_content["error"] == "E_NOT_FOUND", "unknown uid")
        r = await c.call_tool("entity_history", {})
        check(r.is_error is True and r.structured_content["error"] == "E_SCHEMA", "missing arg")
        r = await c.call_tool("entity_history", {"uid": "n1", "bogus": 1})
        check(r.is_error is True, "unknown argument refused")
        r = await c.call_tool("entity_history", {"uid": "x" * 200_000})
        check(r.is_error is True, "huge argument is an error result")
        try:
            await c.call_tool("no_such_tool", {})
            check(False, "unknown tool must be a protocol error")
        except MCPError:
            check(True, "")
        r = await c.call_tool("get_trace", {"trace_id": "0" * 64})
        check(r.is_error is True and r.structured_content["error"] == "E_NOT_FOUND", "unknown trace")
        r = await c.call_tool("run_plan", {"plan": 17})
        check(r.is_error is True and r.structured_content["error"] == "E_INVALID_ARG", "plan of wrong type")
        r = await c.call_tool("run_plan", {"plan": "{not json"})
        check(r.is_error is True and r.structured_content["error"] == "E_SCHEMA", "plan text not JSON")

        # Plans: validate, run (with report), verify, fetch the trace and results.
        plan = {"plan_id": "mcp-test", "question": "How many messages did n1 exchange?",
                "steps": [{"id": "s1", "op": "entity_history",
                           "args": {"uid": "n1", "include_edges": True, "limit": 10000}}],
                "answer_spec": {"kind": "count", "from": "s1.edges_total"}}
        r = await c.call_tool("validate_plan", {"plan": plan})
        check(r.is_error is False and r.structured_content == {"valid": True, "violations": []}, "plan valid")
        bad = json.loads(json.dumps(plan))
        bad["steps"][0]["args"]["uid"] = "n2"
        r = await c.call_tool("validate_plan", {"plan": bad})
        check(r.structured_content["valid"] is False
              and any(v["code"] == "E_GROUNDING" for v in r.structured_content["violations"]),
              "ungrounded uid is a violation")
        r = await c.call_tool("validate_plan", {"plan": bad, "task_input_uids": ["n2"]})
        check(r.structured_content["valid"] is True, "explicit task_input_uids ground it")
        # `tgms plan run` keeps its trace in the store it runs on: run it on a copy, so the
        # served store stays untouched (the read-only checks hash it).
        work = tempfile.mkdtemp()
        copy = os.path.join(work, "store")
        shutil.copytree(a.store, copy)
        plan_path = os.path.join(work, "plan.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        code, out = cli(a.tgms, "plan", "run", copy, plan_path, "--report")
        shutil.rmtree(work)
        cli_run = json.loads(out)
        r = await c.call_tool("run_plan", {"plan": json.dumps(plan), "report": True})
        run = r.structured_content
        check(r.is_error is False and run["valid"] is True and run["ok"] is True, "run_plan ok")
        check(run["trace_id"] == cli_run["trace_id"], "trace_id equals tgms plan run's")
        check(run["answer"] == cli_run["answer"], "answer equals tgms plan run's")
        check(run["verification"] == cli_run["verification"], "verification equals the CLI's")
        tid = run["trace_id"]
        # Traces are content-addressed without their timings (trace_id excludes every
        # wall_ms) and the first stored copy wins: compare without wall_ms.
        r = await c.call_tool("get_trace", {"trace_id": tid})
        check(untimed(r.structured_content) == untimed(run["trace"]), "get_trace returns the trace")
        rr = await c.read_resource(f"tgms://trace/{tid}")
        check(untimed(json.loads(rr.contents[0].text)) == untimed(run["trace"]), "trace resource")
        digest = run["trace"]["steps"][0]["result_digest"]
        r = await c.call_tool("get_result", {"result_digest": digest})
        check(r.structured_content["result_digest"] == digest, "get_result")
        rr = await c.read_resource(f"tgms://result/{digest}")
        check(json.loads(rr.contents[0].text)["result_digest"] == digest, "result resource")
        answer = run["answer_object"]
        r = await c.call_tool("verify_answer", {"trace_id": tid, "answer_object": answer})
        verdicts = [x["verdict"] for x in r.structured_content["claims"]]
        check(verdicts and all(v == "supported" for v in verdicts), f"mechanical claims supported {verdicts}")
        wrong = json.loads(json.dumps(answer))
        wrong["claims"].append({"id": "c99", "type": "count", "value": run["answer"] + 1,
                                "from": "s1.edges_total", "evidence": ["s1"]})
        r = await c.call_tool("verify_answer", {"trace_id": tid, "answer_object": wrong})
        v = {x["id"]: x["verdict"] for x in r.structured_content["claims"]}
        check(v.get("c99") == "unsupported", f"the wrong count is unsupported ({v})")
        kept = [x["id"] for x in r.structured_content["gated_answer_object"]["claims"]]
        check("c99" not in kept and len(kept) == len(answer["claims"]), f"gating drops the wrong count ({v})")

        # Resources.
        res = [x.uri for x in (await c.list_resources()).resources]
        check(res == ["tgms://dataset-card", "tgms://manual"], f"resources {res}")
        tpl = [x.uri_template for x in (await c.list_resource_templates()).resource_templates]
        check(tpl == ["tgms://trace/{trace_id}", "tgms://result/{result_digest}"], f"templates {tpl}")
        card = json.loads((await c.read_resource("tgms://dataset-card")).contents[0].text)
        code, out = cli(a.tgms, "stats", a.store, "--json")
        st = json.loads(out)
        for k in ["n_entities", "n_node_versions", "n_edge_versions", "rel_type_counts"]:
            check(card[k] == st[k], f"card {k}")
        check(card["extent"] == {"vt_min": st["vt_min"], "vt_max": st["vt_max"]}, "card extent")
        check(card["transaction_time"]["n_batches"] == st["n_batches"], "card n_batches")
        check(card["clocks"].startswith("This store has two clocks."), "card clocks text")
        r = await c.call_tool("dataset_card", {})
        check(r.structured_content == card, "dataset_card tool equals the resource")
        manual = (await c.read_resource("tgms://manual")).contents[0].text
        check(all(f"### {n}" in manual for n in cli_tools), "manual names every operator")
        try:
            await c.read_resource("tgms://nothing")
            check(False, "unknown resource must be an error")
        except MCPError:
            check(True, "")


async def one_client(a, calls, rounds):
    out = []
    async with client(a, "auto") as c:
        for _ in range(rounds):
            for q in calls:
                r = await c.call_tool(q["op"], q["args"])
                out.append(text_of(r))
    return out


async def concurrent(a):
    calls = json.load(open(a.calls))
    serial = await one_client(a, calls, 1)
    check(len(serial) == len(calls), "serial run")
    t0 = asyncio.get_running_loop().time()
    results = await asyncio.gather(*[one_client(a, calls, a.rounds) for _ in range(a.clients)])
    dt = asyncio.get_running_loop().time() - t0
    n = sum(len(r) for r in results)
    for i, r in enumerate(results):
        check(r == serial * a.rounds, f"client {i}: every answer equals the serial answer")
    print(json.dumps({"clients": a.clients, "calls": n, "seconds": round(dt, 3),
                      "calls_per_s": round(n / dt, 1)}), flush=True)


async def freshness(a):
    """A read-only server sees a batch the writer commits during the session."""
    async with client(a, a.mode) as c:
        before = (await c.call_tool("dataset_card", {})).structured_content
        r = await c.call_tool("entity_history", {"uid": "fresh-node"})
        check(r.is_error and r.structured_content["error"] == "E_NOT_FOUND", "node absent before")
        batch = os.path.join(tempfile.mkdtemp(), "batch.json")
        with open(batch, "w") as f:
            json.dump([{"op": "assert_node", "uid": "fresh-node", "label": "N",
                        "props": {"k": 1}, "vt_s": 5}], f)
        code, out = cli(a.tgms, "write", a.store, batch)
        check(code == 0, f"writer commits beside the server ({out})")
        after = (await c.call_tool("dataset_card", {})).structured_content
        check(after["transaction_time"]["n_batches"] == before["transaction_time"]["n_batches"] + 1,
              "the next call sees the new batch")
        r = await c.call_tool("entity_history", {"uid": "fresh-node"})
        check(r.is_error is False and r.structured_content["rows_total"] >= 1, "new node visible")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["conformance", "concurrent", "freshness"])
    p.add_argument("--tgms", required=True)
    p.add_argument("--store", required=True)
    p.add_argument("--calls")
    p.add_argument("--mode", default="auto", choices=list(EXPECTED_PROTOCOL))
    p.add_argument("--url")
    p.add_argument("--server-prefix")
    p.add_argument("--readonly", action="store_true")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    asyncio.run({"conformance": conformance, "concurrent": concurrent, "freshness": freshness}[a.what](a))
    print(f"{PASSES[0]} passed, {len(FAILS)} failed", flush=True)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
