#!/usr/bin/env bash
# Installs everything Helm's tests start for real: database servers, a Secret Service keychain,
# the libraries QtWebEngine needs headless, Node test servers and Python MCP/HTTP servers.
# Idempotent: each step is skipped when already done, so a second run takes a second or two.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$ROOT/.test-deps"
mkdir -p "$DEPS"

say() { printf '[test-deps] %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# --- Debian packages -------------------------------------------------------------------------
APT_PACKAGES=(
  postgresql mariadb-server
  gnome-keyring dbus dbus-user-session libsecret-tools
  git iproute2 xvfb fonts-dejavu-core
  # A real syslog receiver for the audit export tests (they start their own rsyslogd):
  rsyslog
  # A real window manager and real key presses for the stacking tests under Xvfb:
  openbox xdotool x11-utils
  # Qt (xcb and offscreen platforms) and QtWebEngine, read off `ldd` of PySide6's libraries:
  libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3 libegl1 libgl1 libglx0 libopengl0
  libgbm1 libdrm2 libwayland-server0 libnss3 libnspr4 libasound2 libxkbfile1 libxshmfence1
  libx11-6 libx11-xcb1 libxext6 libxfixes3 libxrender1 libxtst6 libxcomposite1 libxdamage1
  libxrandr2 libxkbcommon0 libxkbcommon-x11-0 libxcb1 libxcb-cursor0 libxcb-dri3-0
  libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0
  libxcb-render0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0
  libxcb-xkb1 libxcb-xinerama0
)
# Node.js 20.19+ is needed (oauth2-mock-server 8); Debian 12's own nodejs is older, so only
# fall back to it when no node is installed at all.
command -v node >/dev/null || APT_PACKAGES+=(nodejs npm)
missing_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing_apt+=("$pkg")
done
if [ "${#missing_apt[@]}" -gt 0 ]; then
  say "apt: installing ${missing_apt[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing_apt[@]}" >/dev/null
  say "apt: installed (${SECONDS}s so far)"
  # Debian starts the packaged servers; tests run their own, so keep the machine quiet.
  if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
    as_root systemctl disable --now mariadb postgresql rsyslog >/dev/null 2>&1 || true
  fi
else
  say "apt: all present"
fi

# An unprivileged account for the database servers, which refuse to run as root.
if [ "$(id -u)" -eq 0 ] && ! id helmtest >/dev/null 2>&1; then
  say "creating OS user helmtest for database servers"
  useradd --system --no-create-home --shell /usr/sbin/nologin helmtest
fi

# --- Node test servers (pinned by tests/servers/node/package-lock.json) -----------------------
NODE_SRC="$ROOT/tests/servers/node"
# The physical path: npm ci mistakes a prefix reached through a symlink (a worktree's
# .test-deps linked to another checkout's) for a package of its own and refuses the lock.
NODE_DIR="$(cd "$DEPS" && pwd -P)/node"
if ! cmp -s "$NODE_SRC/package-lock.json" "$NODE_DIR/package-lock.json" \
   || [ ! -d "$NODE_DIR/node_modules" ]; then
  say "npm: installing test servers into .test-deps/node"
  mkdir -p "$NODE_DIR"
  cp "$NODE_SRC/package.json" "$NODE_SRC/package-lock.json" "$NODE_DIR/"
  npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error >/dev/null
  say "npm: installed (${SECONDS}s so far)"
else
  say "npm: up to date"
fi

# --- The official MCP Apps example servers (pinned by tests/servers/apps-examples) -----------
# A folder of their own, so installing or updating them never touches .test-deps/node.
APPS_SRC="$ROOT/tests/servers/apps-examples"
APPS_DIR="$(cd "$DEPS" && pwd -P)/apps-examples"
if ! cmp -s "$APPS_SRC/package-lock.json" "$APPS_DIR/package-lock.json" \
   || [ ! -d "$APPS_DIR/node_modules" ]; then
  say "npm: installing the MCP Apps examples into .test-deps/apps-examples"
  mkdir -p "$APPS_DIR"
  cp "$APPS_SRC/package.json" "$APPS_SRC/package-lock.json" "$APPS_DIR/"
  npm ci --prefix "$APPS_DIR" --no-audit --no-fund --loglevel=error >/dev/null
  say "npm: installed (${SECONDS}s so far)"
else
  say "npm: MCP Apps examples up to date"
fi

# --- Python servers, each in its own venv (their dependencies clash with Helm's) --------------
PY="$("$ROOT/scripts/find-python.sh")"
py_venv() {  # py_venv NAME PACKAGES...  (reinstalls when the pinned list changes)
  local name="$1"; shift
  local want="$*"
  local dir="$DEPS/$name"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ]; then
    say "venv $name: up to date"
    return
  fi
  say "venv $name: installing $*"
  rm -rf "$dir"
  "$PY" -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check "$@" 2> >(grep -v "^WARNING: Location" >&2)
  echo "$want" > "$dir/.installed"
  say "venv $name: installed (${SECONDS}s so far)"
}
# The installs are independent: run them side by side and fail if any failed.
pids=()
py_venv mcp-time "mcp-server-time==2026.10.19" & pids+=($!)
py_venv mcp-git "mcp-server-git==2026.10.19" & pids+=($!)
py_venv httpbin "httpbin==0.10.4" "gunicorn==27.0.1" & pids+=($!)
# The real TDT for tdt-mcp: its MCP server needs mcp>=2.3, never Helm's own mcp.
py_venv tdt "thisdamnthing[mcp]==0.1.11" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done

say "done in ${SECONDS}s"

# --- more test dependencies ---
