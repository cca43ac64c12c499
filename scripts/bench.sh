#!/usr/bin/env bash
# Runs the benchmarks and prints one table of their results; with HELM_BENCH_JSON set to a path,
# also writes the rows there as JSON (tests/bench/conftest.py). With no file or folder named,
# every file of tests/bench, each in a process of its own; `scripts/bench.sh
# tests/bench/test_bench_x.py` runs that file alone. Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export HELM_BENCH=1
named=0
for arg in "$@"; do
  [ -e "${arg%%::*}" ] && named=1  # a file, folder or test id (not an option's value)
done
if [ "$named" -eq 1 ]; then
  exec dbus-run-session -- scripts/test-session.sh .venv/bin/python -m pytest -m bench -q "$@"
fi
# A whole run takes each file in a process of its own: the web engine is entered once per
# process, and one file's frames are gone before the next file's measurements start. The rows
# of every file are printed as one table at the end (and written to HELM_BENCH_JSON).
parts="$(mktemp -d "${TMPDIR:-/tmp}/helm-bench.XXXXXX")"
trap 'rm -rf "$parts"' EXIT
status=0
for file in tests/bench/test_bench_*.py; do
  name="$(basename "$file" .py)"
  HELM_BENCH_PART=1 HELM_BENCH_JSON="$parts/$name.json" dbus-run-session -- scripts/test-session.sh \
    .venv/bin/python -m pytest -m bench -q "$file" "$@" || { echo "[bench] $file failed"; status=1; }
done
.venv/bin/python -m tests.bench.combine "$parts"/*.json
exit "$status"
