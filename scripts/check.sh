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

# Helm's own bytecode, compiled once: the tests start hundreds of Python processes (the CLI,
# agents, servers, the mutants' children), and with PYTHONDONTWRITEBYTECODE set each of them
# would compile every Helm module it imports again, about 0.5 s of a core each.
.venv/bin/python -m compileall -q -j 0 app broker ui tests resources > /dev/null

OUT="$(mktemp -d "${TMPDIR:-/tmp}/helm-check.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
whole=0
[ "$#" -gt 0 ] || { whole=1; set -- tests; }
# The whole gate also runs a seeded sample of mutants of the boundary modules: a change to a
# decision that no test notices fails it (tests/mutation/). It runs beside the tests, which spend
# most of their time waiting on real servers and the web view, and its report follows theirs.
mutate_pid=""
if [ "$whole" -eq 1 ]; then
  scripts/mutate.sh --sample "${HELM_MUTATE_SAMPLE:-6}" --seed "${HELM_MUTATE_SEED:-helm}" \
    > "$OUT/mutate.log" 2>&1 &
  mutate_pid=$!
fi

# The whole gate runs in two shards side by side, each in a D-Bus session and keychain of its
# own: most tests wait on real servers, processes and the web view, so one process leaves a core
# idle. The split is by folder, about even in time (see --durations in each shard's log). A
# focused run (arguments given) is one process, its output shown as it comes.
FIRST="tests/unit/agents tests/unit/kinds tests/unit/apps tests/unit/policy tests/e2e/host tests/e2e/dev"
SHARDS=("$FIRST" "tests $(printf -- '--ignore=%s ' $FIRST)")
pytest_in_session() {  # SHARD-INDEX PYTEST-ARGS...
  local i="$1"
  shift
  dbus-run-session -- scripts/test-session.sh .venv/bin/python -m pytest \
    --ignore=tests/bench -m "not bench" --junitxml="$OUT/junit-$i.xml" -o junit_family=xunit2 \
    --basetemp="$OUT/tmp-$i" --durations=15 "$@"
}

set +e
statuses=()
if [ "$whole" -eq 1 ]; then
  pids=()
  for i in "${!SHARDS[@]}"; do
    # shellcheck disable=SC2086  # a shard is a list of words
    pytest_in_session "$i" ${SHARDS[$i]} > "$OUT/pytest-$i.log" 2>&1 &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do
    wait "$pid"
    statuses+=("$?")
  done
  for i in "${!SHARDS[@]}"; do
    echo "[check] shard $((i + 1)) of ${#SHARDS[@]}: ${SHARDS[$i]}"
    cat "$OUT/pytest-$i.log"
  done
else
  SHARDS=("$*")
  pytest_in_session 0 "$@" 2>&1 | tee "$OUT/pytest-0.log"
  statuses+=("${PIPESTATUS[0]}")
fi
set -e

mutate_status=0
if [ -n "$mutate_pid" ]; then
  wait "$mutate_pid" || mutate_status=$?
  cat "$OUT/mutate.log"
fi

summaries=""
skipped=0
collected_none=0
status=0
for i in "${!SHARDS[@]}"; do
  line="$(grep -E '^=+ .*( in [0-9.]+s).* =+$' "$OUT/pytest-$i.log" | tail -n 1 || true)"
  [ -z "$line" ] && line="$(grep -E '^[0-9]+ (passed|failed).* in [0-9.]+s' "$OUT/pytest-$i.log" | tail -n 1 || true)"
  summaries+="${line:-[check] shard $((i + 1)): no pytest summary line}"$'\n'
  if [ -f "$OUT/junit-$i.xml" ]; then
    skipped=$((skipped + $(.venv/bin/python scripts/junit_skips.py "$OUT/junit-$i.xml")))
  fi
  case "${statuses[$i]}" in
    0) ;;
    5) collected_none=1 ;;
    *) status="${statuses[$i]}" ;;
  esac
done

fail=0
if [ "$lint_status" -ne 0 ]; then
  echo "[check] FAILED: lint or type check (see above)"; fail=1
fi
if [ "$collected_none" -eq 1 ]; then
  echo "[check] FAILED: pytest collected no tests"; fail=1
fi
if [ "$status" -ne 0 ]; then
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
printf '%s' "$summaries"
exit "$fail"
