#!/usr/bin/env bash
# Adds this Helm bundle to your desktop: the launcher, the icons, and `helm` on your PATH.
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
# The icon at each size it was drawn for (icons/<N>x<N>/apps/helm.png), and the drawing itself.
SIZES="$(cd "$HERE/icons" && ls -d *x*)"
if [ "$UNINSTALL" = 1 ]; then
  rm -f "$APPS/helm.desktop" "$ICONS/scalable/apps/helm.svg"
  for size in $SIZES; do rm -f "$ICONS/$size/apps/helm.png"; done
  [ -L "$BIN/helm" ] && rm -f "$BIN/helm"
  echo "Helm removed from the desktop (the folder $HERE is still there)."
  exit 0
fi

mkdir -p "$APPS" "$ICONS/scalable/apps" "$BIN"
for size in $SIZES; do
  mkdir -p "$ICONS/$size/apps"
  install -m 0644 "$HERE/icons/$size/apps/helm.png" "$ICONS/$size/apps/helm.png"
done
install -m 0644 "$HERE/helm.svg" "$ICONS/scalable/apps/helm.svg"
# The launcher names this folder's program, so it works without `helm` on the PATH.
sed -e "s|^Exec=helm|Exec=\"$HERE/helm\"|" -e "s|^TryExec=helm|TryExec=$HERE/helm|" \
  "$HERE/helm.desktop" > "$APPS/helm.desktop"
chmod 0644 "$APPS/helm.desktop"
ln -sfn "$HERE/helm" "$BIN/helm"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
echo "Helm added to the desktop; \`helm\` is linked from $BIN."
