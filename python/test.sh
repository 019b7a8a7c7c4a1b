#!/usr/bin/env bash
# pytest of the Python package (docs/python.md): a virtual environment under
# target/tmp/py-venv with python/tests/requirements.txt from PyPI (maturin, pyarrow, polars,
# pytest), the extension built by maturin in the release profile (the workspace's warm
# target/) and installed into it, then python/tests/ against the `tgms` CLI of the same
# tree. Skips (exit 0, "SKIP: ...") only when the package index cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/tmp/py-venv
req=python/tests/requirements.txt
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/installed-requirements.txt"; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  if ! log=$("$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" 2>&1); then
    if grep -qiE "connection|resolve|network is unreachable|temporary failure|timed out|no matching distribution" <<<"$log"; then
      echo "SKIP: the Python test environment cannot be installed (package index unreachable):"
      echo "$log" | tail -5
      exit 0
    fi
    echo "$log"
    exit 1
  fi
  cp "$req" "$venv/installed-requirements.txt"
fi
# The CLI the tests compare with, and the extension (maturin develop installs it into the venv).
cargo build --release -p tgms -p tgms-python --bins
VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH" \
  "$venv/bin/maturin" develop --release --quiet -m python/Cargo.toml
TGMS_BIN="$PWD/target/release/tgms" "$venv/bin/python" -m pytest -q python/tests "$@"
