#!/usr/bin/env bash
# Runs the benchmarks and prints one table of their results; with HELM_BENCH_JSON set to a path,
# also writes the rows there as JSON (tests/bench/conftest.py). With no file or folder named,
# every benchmark in tests/bench; `scripts/bench.sh tests/bench/test_bench_x.py` runs that file
# alone. Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HELM_BENCH=1
named=0
for arg in "$@"; do
  [ -e "${arg%%::*}" ] && named=1  # a file, folder or test id (not an option's value)
done
[ "$named" -eq 1 ] || set -- tests/bench "$@"
exec dbus-run-session -- scripts/test-session.sh .venv/bin/python -m pytest -m bench -q "$@"
