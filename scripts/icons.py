"""Render Helm's app icon from its drawings into the bitmaps the desktops and installers use.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/icons.py

Writes ``resources/icons/hicolor/<N>x<N>/apps/helm.png`` (the freedesktop icon theme layout
``install.sh`` copies), ``resources/icons/helm.png`` (256 px) and ``resources/icons/helm.ico``
(Windows: every size up to 256 in one file), each size from the drawing meant for it
(``ui.icons.app_drawing``). Run it after changing ``helm*.svg``; a test checks the bitmaps
still match the drawings.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from ui.icons import HICOLOR_SIZES, app_drawing, hicolor_path, render  # noqa: E402
from ui.qt import QBuffer, QByteArray, QGuiApplication, QIODevice  # noqa: E402

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICONS = REPO / "resources" / "icons"


def png(px: int) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not render(app_drawing(px), px).save(buffer, "PNG"):
        raise SystemExit(f"could not encode the {px} px icon")
    return bytes(data.data())


def ico(images: dict[int, bytes]) -> bytes:
    """A Windows icon file holding ``images`` (PNG-compressed entries, Vista and later)."""
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, blobs = b"", b""
    for px, blob in sorted(images.items()):
        side = 0 if px >= 256 else px  # 0 means 256 in the directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(blob), offset + len(blobs))
        blobs += blob
    return header + entries + blobs


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    rendered = {px: png(px) for px in sorted(set(HICOLOR_SIZES) | set(ICO_SIZES))}
    for px in HICOLOR_SIZES:
        target = hicolor_path(px)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rendered[px])
    (ICONS / "helm.png").write_bytes(rendered[256])
    (ICONS / "helm.ico").write_bytes(ico({px: rendered[px] for px in ICO_SIZES}))
    print(f"wrote {len(HICOLOR_SIZES)} sizes, helm.png and helm.ico in {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
