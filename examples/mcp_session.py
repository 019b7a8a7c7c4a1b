"""A real MCP session with `tgms serve`, through the official MCP Python SDK (`pip install mcp`).

    python examples/mcp_session.py STORE [--tgms target/release/tgms]

Lists the tools, reads the dataset card, calls state_at, runs a plan, and verifies an
answer with one true and one false claim. docs/mcp.md shows its output on CollegeMsg.
"""

import argparse
import asyncio
import json

from mcp import Client, StdioServerParameters


def show(title, value):
    text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
    lines = text.splitlines()
    print(f"### {title}\n" + "\n".join(lines[:40]) + ("\n..." if len(lines) > 40 else "") + "\n")


async def main(a):
    server = StdioServerParameters(command=a.tgms, args=["serve", "--store", a.store, "--readonly"])
    async with Client(server) as c:
        print(f"connected: {c.server_info.name} {c.server_info.version}, protocol {c.protocol_version}\n")
        tools = (await c.list_tools()).tools
        show("tools/list", [t.name for t in tools])
        card = json.loads((await c.read_resource("tgms://dataset-card")).contents[0].text)
        show("resources/read tgms://dataset-card", {k: card[k] for k in ["extent", "extent_utc", "n_entities", "n_edge_versions", "transaction_time"]})
        mid = (card["extent"]["vt_min"] + card["extent"]["vt_max"]) // 2
        r = await c.call_tool("state_at", {"uid": "n9", "at": mid, "direction": "both", "limit": 3})
        env = r.structured_content
        summary = {k: (f"[{len(v)} rows]" if isinstance(v, list) else v) for k, v in env.items() if k != "args_echo"}
        show(f"tools/call state_at {{uid: n9, at: {mid}, limit: 3}}", summary)
        plan = {"plan_id": "contacts-of-n9", "question": "How many messages did n9 exchange?",
                "steps": [{"id": "s1", "op": "entity_history", "args": {"uid": "n9", "include_edges": True, "limit": 10000}}],
                "answer_spec": {"kind": "count", "from": "s1.edges_total"}}
        r = await c.call_tool("run_plan", {"plan": plan, "report": True})
        run = r.structured_content
        show("tools/call run_plan", {k: run[k] for k in ["valid", "ok", "trace_id", "answer", "answer_complete"]})
        answer = {"text": f"n9 exchanged {run['answer']} messages.",
                  "claims": [{"id": "c1", "type": "count", "value": run["answer"], "from": "s1.edges_total", "evidence": ["s1"]},
                             {"id": "c2", "type": "count", "value": run["answer"] + 1, "from": "s1.edges_total", "evidence": ["s1"]}]}
        r = await c.call_tool("verify_answer", {"trace_id": run["trace_id"], "answer_object": answer})
        v = r.structured_content
        show("tools/call verify_answer (c2 is deliberately wrong)",
             {"claims": v["claims"], "gated_claims": [x["id"] for x in v["gated_answer_object"]["claims"]]})


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("store")
    p.add_argument("--tgms", default="target/release/tgms")
    asyncio.run(main(p.parse_args()))
