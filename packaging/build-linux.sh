#!/usr/bin/env bash
# Builds Helm's Linux bundle from this checkout:
#   dist/helm/                                   the one-folder bundle (run dist/helm/helm)
#   dist/helm-<version>-linux-<arch>.tar.gz      the same folder, archived as helm-<version>/
# Uses the project's .venv (`make bootstrap`) and installs the pinned PyInstaller into it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
# The pinned PyInstaller (packaging/requirements.txt); pip does nothing when it is there already.
"$PY" -m pip install -q --disable-pip-version-check -r "$ROOT/packaging/requirements.txt" \
  2> >(grep -v "^WARNING: Location" >&2)

VERSION="$("$PY" -c 'from app.cli import helm_version; print(helm_version())')"
ARCH="$(uname -m)"
OUT="$ROOT/dist/helm"
ARCHIVE="$ROOT/dist/helm-$VERSION-linux-$ARCH.tar.gz"

echo "[bundle] building Helm $VERSION for linux-$ARCH"
rm -rf "$OUT" "$ARCHIVE" "$ROOT/build/pyinstaller"
# PYI_LOG_LEVEL too: under ``python -m`` PyInstaller's own start-up lines ignore --log-level.
PYI_LOG_LEVEL=WARN "$PY" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" "$ROOT/packaging/helm.spec"

# Desktop integration beside the program; install.sh puts them where the desktop finds them.
install -m 0644 packaging/linux/helm.desktop resources/icons/helm.png resources/icons/helm.svg "$OUT/"
cp -r resources/icons/hicolor "$OUT/icons"
install -m 0755 packaging/linux/install.sh "$OUT/"

tar -C "$ROOT/dist" -czf "$ARCHIVE" --transform "s,^helm,helm-$VERSION," helm
echo "[bundle] $(du -sh "$OUT" | cut -f1) folder: dist/helm/"
echo "[bundle] $(du -sh "$ARCHIVE" | cut -f1) archive: dist/$(basename "$ARCHIVE")"
echo "[bundle] done in ${SECONDS}s"
