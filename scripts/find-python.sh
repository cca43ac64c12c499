#!/usr/bin/env bash
# Prints the path of a working Python 3.12 (Helm's supported version), or explains how to get one.
set -euo pipefail

works() { "$1" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; }

for candidate in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 \
                 /usr/local/bin/python3.12 /usr/bin/python3.12; do
  if command -v "$candidate" >/dev/null 2>&1 && works "$candidate"; then
    command -v "$candidate"
    exit 0
  fi
done
cat >&2 <<'MSG'
Helm needs Python 3.12, and none was found (tried python3.12 on PATH and ~/.pyenv/versions/3.12*).
Install Python 3.12 (for example `pyenv install 3.12` or your distribution's python3.12 package
with its venv module), then run this command again.
MSG
exit 1
