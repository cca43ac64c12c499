#!/usr/bin/env bash
# Adds this Helm bundle to your desktop: the launcher, the icon, and `helm` on your PATH.
#   ./install.sh             for you (~/.local)
#   sudo ./install.sh --system   for everyone (/usr/local)
# Remove with the same arguments plus --uninstall. The bundle folder itself stays where it is.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="${XDG_DATA_HOME:-$HOME/.local/share}"
BIN="$HOME/.local/bin"
UNINSTALL=0
for arg in "$@"; do
  case "$arg" in
    --system) PREFIX=/usr/local/share; BIN=/usr/local/bin ;;
    --uninstall) UNINSTALL=1 ;;
    *) echo "usage: $0 [--system] [--uninstall]" >&2; exit 2 ;;
  esac
done

APPS="$PREFIX/applications"
ICONS="$PREFIX/icons/hicolor"
if [ "$UNINSTALL" = 1 ]; then
  rm -f "$APPS/helm.desktop" "$ICONS/256x256/apps/helm.png" "$ICONS/scalable/apps/helm.svg"
  [ -L "$BIN/helm" ] && rm -f "$BIN/helm"
  echo "Helm removed from the desktop (the folder $HERE is still there)."
  exit 0
fi

mkdir -p "$APPS" "$ICONS/256x256/apps" "$ICONS/scalable/apps" "$BIN"
install -m 0644 "$HERE/helm.png" "$ICONS/256x256/apps/helm.png"
install -m 0644 "$HERE/helm.svg" "$ICONS/scalable/apps/helm.svg"
# The launcher names this folder's program, so it works without `helm` on the PATH.
sed -e "s|^Exec=helm|Exec=\"$HERE/helm\"|" -e "s|^TryExec=helm|TryExec=$HERE/helm|" \
  "$HERE/helm.desktop" > "$APPS/helm.desktop"
chmod 0644 "$APPS/helm.desktop"
ln -sfn "$HERE/helm" "$BIN/helm"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
echo "Helm added to the desktop; \`helm\` is linked from $BIN."
