#!/usr/bin/env bash
# Lint and strict type check: the same gate locally and in CI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=.venv/bin
echo "[lint] ruff check"
"$VENV/ruff" check .
echo "[lint] ruff format --check"
"$VENV/ruff" format --check .
echo "[lint] mypy --strict app broker ui"
"$VENV/mypy" --strict app broker ui
