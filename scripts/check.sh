#!/usr/bin/env bash
# The whole gate: lint + strict types, then every test except benchmarks, with real servers and a
# real keychain. Under CI=true a skipped test is a failure: CI must have every real part.
# Extra arguments go to pytest (default: the whole tests/ tree).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Lint first, but run the tests even when it fails, so one run shows every problem.
lint_status=0
scripts/lint.sh || lint_status=$?

OUT="$(mktemp -d "${TMPDIR:-/tmp}/helm-check.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
whole=0
[ "$#" -gt 0 ] || { whole=1; set -- tests; }
# The whole gate also runs a seeded sample of mutants of the boundary modules: a change to a
# decision that no test notices fails it (tests/mutation/). It runs beside the tests, which spend
# most of their time waiting on real servers and the web view, and its report follows theirs.
mutate_pid=""
if [ "$whole" -eq 1 ]; then
  scripts/mutate.sh --sample "${HELM_MUTATE_SAMPLE:-8}" --seed "${HELM_MUTATE_SEED:-helm}" \
    > "$OUT/mutate.log" 2>&1 &
  mutate_pid=$!
fi

set +e
dbus-run-session -- scripts/test-session.sh .venv/bin/python -m pytest \
  --ignore=tests/bench -m "not bench" --junitxml="$OUT/junit.xml" -o junit_family=xunit2 \
  --durations=15 "$@" 2>&1 | tee "$OUT/pytest.log"
status="${PIPESTATUS[0]}"
set -e

mutate_status=0
if [ -n "$mutate_pid" ]; then
  wait "$mutate_pid" || mutate_status=$?
  cat "$OUT/mutate.log"
fi

summary="$(grep -E '^=+ .*( in [0-9.]+s).* =+$' "$OUT/pytest.log" | tail -n 1 || true)"
skipped=0
if [ -f "$OUT/junit.xml" ]; then
  skipped="$(.venv/bin/python scripts/junit_skips.py "$OUT/junit.xml")"
fi

fail=0
if [ "$lint_status" -ne 0 ]; then
  echo "[check] FAILED: lint or type check (see above)"; fail=1
fi
if [ "$status" -eq 5 ]; then
  echo "[check] FAILED: pytest collected no tests"; fail=1
elif [ "$status" -ne 0 ]; then
  echo "[check] FAILED: pytest exited with $status"; fail=1
fi
if [ "$mutate_status" -ne 0 ]; then
  echo "[check] FAILED: a sampled mutant survived (see [mutate] above)"; fail=1
fi
case "${CI:-}" in true|1|yes)
  if [ "$skipped" -ne 0 ]; then
    echo "[check] FAILED: $skipped test(s) skipped; CI must run every test for real"; fail=1
  fi
esac
echo "${summary:-[check] no pytest summary line}"
exit "$fail"
