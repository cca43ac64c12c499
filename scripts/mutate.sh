#!/usr/bin/env bash
# Mutation testing of the boundary modules (tests/mutation/targets.toml), inside the same private
# D-Bus session and keychain as the tests. No arguments: every mutant, a score per module, and a
# failure below 95 %. `--sample N [--seed S]`: N mutants per sampled module, failing on any
# survivor not listed in tests/mutation/equivalent.toml (what scripts/check.sh runs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Helm's bytecode once (scripts/check.sh says why): each mutant's child imports Helm afresh.
.venv/bin/python -m compileall -q -j 0 app broker ui tests resources > /dev/null
exec dbus-run-session -- scripts/test-session.sh .venv/bin/python -m tests.mutation.runner "$@"
