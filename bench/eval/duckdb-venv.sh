#!/usr/bin/env bash
# Creates a virtual environment with DuckDB from PyPI for the sql-bitemporal baseline of
# `tgms eval run-suite` and prints its python (pass it as --python). Usage:
#   bench/eval/duckdb-venv.sh [VENV]        (default VENV: .venv-eval in the current directory)
set -euo pipefail
venv="${1:-.venv-eval}"
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" -c "import duckdb" 
echo "$venv/bin/python"
