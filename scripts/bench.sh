#!/usr/bin/env bash
# Runs the benchmarks in tests/bench and prints one table of their results; with HELM_BENCH_JSON
# set to a path, also writes the rows there as JSON (tests/bench/conftest.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HELM_BENCH=1
exec dbus-run-session -- scripts/test-session.sh .venv/bin/python -m pytest tests/bench \
  -m bench -q "$@"
