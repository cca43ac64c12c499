#!/usr/bin/env bash
# Runs a built Helm bundle headless: `helm --version`, `helm --help` (every command group), then
# `helm --self-test` (the demo's Notes widget in the real web view, a read through the bridge,
# unconfirmed writes refused, the demo's servers and database). Usage: packaging/smoke-test.sh [path/to/helm]   (default: dist/helm/helm)
# The bundle runs from a copy of its archive when one is given: packaging/smoke-test.sh x.tar.gz
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="$(realpath -m "${1:-$ROOT/dist/helm/helm}")"  # the script runs in a folder of its own
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if [[ "$TARGET" == *.tar.gz ]]; then
  tar -C "$WORK" -xzf "$TARGET"
  TARGET="$(echo "$WORK"/helm-*/helm)"
fi
[ -x "$TARGET" ] || { echo "smoke-test: no bundle at $TARGET (run \`make bundle\`)" >&2; exit 1; }

export QT_QPA_PLATFORM=offscreen
# Chromium will not start its sandbox as root (containers, CI); the self-test says the same.
if [ "$(id -u)" = 0 ]; then export QTWEBENGINE_CHROMIUM_FLAGS="${QTWEBENGINE_CHROMIUM_FLAGS:-} --no-sandbox"; fi
# Nothing of the developer's environment may leak in: no venv, no source tree, no user home.
unset VIRTUAL_ENV PYTHONPATH PYTHONHOME
export HOME="$WORK/home" HELM_HOME="$WORK/home/.helm"
mkdir -p "$HOME"
cd "$WORK"

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
start=$(now)
version="$("$TARGET" --version)"
echo "smoke-test: $version ($(since "$start") s)"
[[ "$version" =~ ^helm\ [0-9] ]] || { echo "smoke-test: unexpected --version output" >&2; exit 1; }

# `helm --help` builds every command group's parser: each group is imported by name, so one the
# bundle lacks crashes here.
start=$(now)
"$TARGET" --help > "$WORK/help.out" || { echo "smoke-test: \`helm --help\` failed" >&2; exit 1; }
for group in workspace ext decision-point policy; do
  grep -qE "^    $group( |$)" "$WORK/help.out" || { echo "smoke-test: \`helm --help\` lists no $group" >&2; exit 1; }
done
echo "smoke-test: helm --help lists every command group ($(since "$start") s)"

start=$(now)
if ! timeout 180 "$TARGET" --self-test > "$WORK/self-test.out" 2> "$WORK/self-test.err"; then
  cat "$WORK/self-test.out"
  echo "--- stderr" && tail -n 40 "$WORK/self-test.err"
  echo "smoke-test: FAILED" >&2
  exit 1
fi
cat "$WORK/self-test.out"
echo "smoke-test: self-test process took $(since "$start") s"
[ ! -e "$HELM_HOME" ] || { echo "smoke-test: the self-test wrote to the user's Helm home" >&2; exit 1; }
echo "smoke-test: passed"
