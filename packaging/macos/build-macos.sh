#!/usr/bin/env bash
# Builds Helm for macOS on a Mac: dist/Helm.app and dist/helm-<version>-macos-<arch>.dmg.
# Needs: Xcode command line tools (codesign, hdiutil), Python 3.12 (`make bootstrap`).
# Optional: HELM_CODESIGN_IDENTITY="Developer ID Application: …" to sign with the hardened
# runtime; HELM_NOTARY_PROFILE=<notarytool keychain profile> to notarize and staple the .dmg.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
"$PY" -m pip install -q --disable-pip-version-check -r "$ROOT/packaging/requirements.txt"

VERSION="$("$PY" -c 'from app.cli import helm_version; print(helm_version())')"
ARCH="$(uname -m)"
DMG="$ROOT/dist/helm-$VERSION-macos-$ARCH.dmg"
rm -rf "$ROOT/dist/helm" "$ROOT/dist/Helm.app" "$DMG" "$ROOT/build/pyinstaller"
PYI_LOG_LEVEL=WARN "$PY" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" "$ROOT/packaging/helm.spec"

# The app must pass its own self-test before it is packed.
QT_QPA_PLATFORM=offscreen "$ROOT/dist/Helm.app/Contents/MacOS/helm" --version
QT_QPA_PLATFORM=offscreen "$ROOT/dist/Helm.app/Contents/MacOS/helm" --self-test

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
cp -R "$ROOT/dist/Helm.app" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
hdiutil create -volname "Helm $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$DMG"

if [ -n "${HELM_CODESIGN_IDENTITY:-}" ]; then
  codesign --force --timestamp --sign "$HELM_CODESIGN_IDENTITY" "$DMG"
  if [ -n "${HELM_NOTARY_PROFILE:-}" ]; then
    xcrun notarytool submit "$DMG" --keychain-profile "$HELM_NOTARY_PROFILE" --wait
    xcrun stapler staple "$DMG"
  fi
fi
echo "[bundle] $(du -sh "$ROOT/dist/Helm.app" | cut -f1) app, $(du -sh "$DMG" | cut -f1) dmg: $DMG"
