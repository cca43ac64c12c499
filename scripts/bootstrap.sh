#!/usr/bin/env bash
# Creates .venv with Python 3.12 and installs Helm (editable) with its test tools.
# Fast when nothing changed: a stamp newer than pyproject.toml skips the install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.helm-installed"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
  PY="$("$ROOT/scripts/find-python.sh")"
  echo "[bootstrap] creating .venv with $PY"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi

if [ -f "$STAMP" ] && [ "$STAMP" -nt "$ROOT/pyproject.toml" ] && "$VENV/bin/python" -c 'import app, broker, ui' 2>/dev/null; then
  exit 0
fi
echo "[bootstrap] installing Helm and its test tools into .venv"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
# This machine's pip configuration may name local mirrors that do not exist; keep that noise out.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[test]" \
  2> >(grep -v "^WARNING: Location" >&2)
touch "$STAMP"
echo "[bootstrap] done in ${SECONDS}s"
