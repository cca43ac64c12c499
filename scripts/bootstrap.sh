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
# pip's own remarks (this machine's mirror configuration, setuptools' editable-install banner)
# say nothing about Helm: its output is shown only when it fails.
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
quiet_pip() {
  if ! "$VENV/bin/python" -m pip --disable-pip-version-check "$@" >"$LOG" 2>&1; then
    cat "$LOG" >&2
    echo "[bootstrap] pip $1 failed (above)" >&2
    exit 1
  fi
}
quiet_pip install -q --upgrade pip
quiet_pip install -q -e "$ROOT[test]"
touch "$STAMP"
echo "[bootstrap] done in ${SECONDS}s"
