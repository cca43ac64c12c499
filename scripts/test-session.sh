#!/usr/bin/env bash
# Runs a command inside a private D-Bus session that has an unlocked GNOME keyring, so tests can
# use a real Secret Service. Called through dbus-run-session by scripts/check.sh and bench.sh.
# The keyring lives in a throw-away folder: tests never touch the user's own keychain.
set -euo pipefail

SESSION_DIR="$(mktemp -d "${TMPDIR:-/tmp}/helm-test-session.XXXXXX")"
trap 'rm -rf "$SESSION_DIR"' EXIT
chmod 700 "$SESSION_DIR"
export XDG_DATA_HOME="$SESSION_DIR/data" XDG_RUNTIME_DIR="$SESSION_DIR/run"
export XDG_CONFIG_HOME="$SESSION_DIR/config" XDG_CACHE_HOME="$SESSION_DIR/cache"
mkdir -p -m 700 "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME"

export HELM_TEST_KEYRING=0
if command -v gnome-keyring-daemon >/dev/null; then
  # The password only protects this throw-away keyring; it is not a secret.
  if keyring_env="$(printf 'helm-test' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)"; then
    eval "$(printf '%s\n' "$keyring_env" | sed -n 's/^\([A-Z_]*\)=\(.*\)$/export \1="\2"/p')"
    export HELM_TEST_KEYRING=1
  fi
fi

export QT_QPA_PLATFORM=offscreen
export QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox${QTWEBENGINE_CHROMIUM_FLAGS:+ $QTWEBENGINE_CHROMIUM_FLAGS}"
"$@"
