"""`Store.ask` against a local OpenAI-compatible replay server (a real HTTP server on
127.0.0.1 in this process): the model's plan runs through the static verifier and the
executor, the answer is gated claim by claim (mechanical and model reporters), the result
equals what `tgms ask --json` gives for the same replies, a read-only handle keeps nothing,
and configuration and transport failures raise typed exceptions."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import tgms
from conftest import cli

Q = "How many edges does u1 have?"
PLAN = {"plan_id": "p-ask", "steps": [
    {"id": "s1", "op": "entity_history", "args": {"uid": "u1", "include_edges": True},
     "depends_on": []}],
    "answer_spec": {"kind": "count", "from": "s1.edges_total"}}


class Replay:
    """Serves chat completions: the planner's requests get `planner`, the reporter's get
    `reporter` (by the system message, as the Rust replay server keys them); every request
    body is logged."""

    def __init__(self, planner, reporter=None):
        self.bodies = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                replay.bodies.append(body)
                system = body["messages"][0]["content"]
                content = planner if system.startswith("You are the query planner") else reporter
                out = json.dumps({"id": "replay", "object": "chat.completion", "model": "replay",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": content}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(out.encode())

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def roles(self):
        return ["planner" if b["messages"][0]["content"].startswith("You are the query planner")
                else "reporter" for b in self.bodies]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def no_llm_env(monkeypatch):
    for k in ("TGMS_LLM_MODEL", "TGMS_LLM_BASE_URL", "TGMS_LLM_GUIDED", "TGMS_LLM_EXTRA_BODY"):
        monkeypatch.delenv(k, raising=False)


def current_edges(store, uid):
    return len([e for e in store.history(uid, edges=True)["edges"] if e["tt_e"] == tgms.OPEN_END])


def test_mechanical_answer_is_supported_and_equals_the_cli(store, tmp_path, no_llm_env):
    want = current_edges(store, "u1")
    srv = Replay(planner="```json\n" + json.dumps(PLAN) + "\n```")
    try:
        out = store.ask(Q, model="replay", base_url=srv.base_url, reporter="mechanical")
        assert srv.roles() == ["planner"], "the mechanical reporter calls no model"
        assert out["ok"] is True
        claims = out["answer"]["claims"]
        assert [c["value"] for c in claims if c["type"] == "count"] == [want]
        assert [c["verdict"] for c in out["verification"]["claims"]] == ["supported"] * len(claims)
        assert str(want) in out["answer"]["text"]
        assert out["record"]["question"] == Q
        assert out["record_path"] is not None and (tmp_path / "store").exists()
        # The CLI asks the same question of the same replies: the same gated answer.
        path = store.path
        store.close()
        rc, stdout, err = cli("ask", path, Q, "--model", "replay", "--llm-base-url",
                              srv.base_url, "--reporter", "mechanical", "--json")
        rec = json.loads(stdout)
        assert rec["gated_answer_object"] == out["answer"]
        assert rec["plan_result"]["plan"] == out["record"]["plan_result"]["plan"]
    finally:
        srv.close()


def test_model_answer_is_gated_claim_by_claim(store, no_llm_env):
    want = current_edges(store, "u1")
    report = json.dumps({"text": f"u1 has {want} edges. It also has {want + 3} neighbours.",
                         "claims": [
                             {"id": "c1", "type": "count", "value": want, "from": "s1.edges_total",
                              "evidence": ["s1"]},
                             {"id": "c2", "type": "count", "value": want + 3,
                              "from": "s1.edges_total", "evidence": ["s1"]}]})
    srv = Replay(planner=json.dumps(PLAN), reporter=report)
    try:
        out = store.ask(Q, model="replay", base_url=srv.base_url)
        assert srv.roles() == ["planner", "reporter"]
        # The model's answer as it came, with each claim's verdict; then what survives.
        first = {c["id"]: c["verdict"] for c in out["record"]["verification"]["claims"]}
        assert first == {"c1": "supported", "c2": "unsupported"}
        assert [c["id"] for c in out["answer"]["claims"]] == ["c1"]
        assert {c["id"]: c["verdict"] for c in out["verification"]["claims"]} == {"c1": "supported"}
        assert str(want + 3) not in out["answer"]["text"], "the unsupported claim is withheld"
    finally:
        srv.close()


def test_read_only_handle_answers_and_keeps_nothing(store, no_llm_env):
    path = store.path
    store.close()
    srv = Replay(planner=json.dumps(PLAN))
    ro = tgms.Store.open(path, read_only=True)
    try:
        before = sorted(p.name for p in path.rglob("*"))
        out = ro.ask(Q, model="replay", base_url=srv.base_url, reporter="mechanical",
                     as_of_tt="2100-01-01")
        assert out["ok"] and out["record_path"] is None
        assert sorted(p.name for p in path.rglob("*")) == before
    finally:
        ro.close()
        srv.close()


def test_configuration_and_transport_errors_raise_typed_exceptions(store, no_llm_env):
    with pytest.raises(tgms.InvalidArgumentError) as e:
        store.ask(Q)
    assert e.value.code == "E_INVALID_ARG" and "fix" in e.value.details
    with pytest.raises(tgms.InvalidArgumentError) as e:
        store.ask(Q, model="m", base_url="ftp://127.0.0.1/v1")
    assert e.value.details["setting"] == "llm base URL"
    with pytest.raises(tgms.InvalidArgumentError):
        store.ask(Q, model="m", base_url="http://127.0.0.1:9/v1", reporter="poet")
    with pytest.raises(tgms.InvalidArgumentError):
        store.ask(Q, model="m", base_url="http://127.0.0.1:9/v1", as_of_tt="next tuesday")
    # Nothing listens on port 9 (discard): the transport error after the retries.
    with pytest.raises(tgms.InternalError) as e:
        store.ask(Q, model="m", base_url="http://127.0.0.1:9/v1", retries=0, timeout_s=2)
    assert e.value.code == "E_INTERNAL" and e.value.details["tries"] >= 1
