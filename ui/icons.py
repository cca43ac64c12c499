"""Helm's icons: the app icon and the icons of the kinds, the extension states and actions.

Every icon is an SVG drawing in ``resources/icons`` rendered at each size a screen can ask for,
so nothing is ever scaled from a smaller bitmap: at 200 % a 16-pixel icon is drawn at 32 pixels
(the app icon's bitmaps are rendered from its drawings by ``scripts/icons.py``, one per size of
the desktop's icon theme). The app icon has three drawings: a detailed one, and simpler ones for
32 pixels and under and for 20 and under, where the detailed wheel would blur into a blot. The
other icons are line drawings in ``currentColor``, drawn in the colour of the look in force (the
text colour, or the state's own colour), so they read on light and dark backgrounds alike; each
shape differs too, so a state is not told by its colour alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import resources
from ui.qt import QByteArray, QIcon, QImage, QPainter, QPixmap, QRectF, QSvgRenderer, Qt
from ui.theme_data import Look

HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
"""The sizes of the app icon's bitmaps, in the desktop icon theme's layout (``hicolor``)."""
SMALL_APP_MAX = 32
"""At this many pixels and under, the app icon uses its simpler drawing; at ``TINY_APP_MAX``
and under, the simplest (a ring, its handles and the hub)."""
TINY_APP_MAX = 20
ICON_SIZES = (16, 20, 24, 32, 40, 48, 64)

KINDS = ("http", "mcp", "tdt-mcp", "files", "db")
STATES = ("approved", "needs-approval", "invalid", "disabled", "stopped")
EXTENSION_KINDS = ("widget", "tool")
ACTIONS = ("workspace", "extension")


@cache
def svg_text(name: str) -> str:
    """The drawing ``resources/icons/<name>.svg``."""
    return resources.path("icons", f"{name}.svg").read_text("utf-8")


def render(svg: str, px: int) -> QImage:
    """``svg`` drawn into a transparent image of ``px`` by ``px``."""
    image = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise ValueError("not a drawing Qt can render")
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, px, px))
    painter.end()
    return image


def hicolor_path(px: int) -> Path:
    return resources.path("icons", "hicolor", f"{px}x{px}", "apps", "helm.png")


def app_drawing(px: int) -> str:
    if px <= TINY_APP_MAX:
        return svg_text("helm-16")
    return svg_text("helm-small" if px <= SMALL_APP_MAX else "helm")


@cache
def app_icon() -> QIcon:
    """Helm's icon, for its windows and the task bar: the bitmaps ``scripts/icons.py`` renders
    from the drawings for the desktop's icon theme (16 to 512 pixels), so Helm's windows and
    its launcher show the same pixels, and start-up only reads a few small files."""
    icon = QIcon()
    for px in HICOLOR_SIZES:
        icon.addFile(str(hicolor_path(px)))
    return icon


def tinted(name: str, colour: str, selected: str | None = None) -> QIcon:
    """The line drawing ``ui/<name>`` in ``colour`` (``#rrggbb``), at every icon size; on a
    selected row, in ``selected`` (the text colour of the selection)."""
    return _tinted(name, colour, selected)


@cache
def _tinted(name: str, colour: str, selected: str | None) -> QIcon:
    icon = QIcon()
    for mode, tint in ((QIcon.Mode.Normal, colour), (QIcon.Mode.Selected, selected)):
        if tint is None:
            continue
        svg = svg_text(f"ui/{name}").replace("currentColor", tint)
        for px in ICON_SIZES:
            icon.addPixmap(QPixmap.fromImage(render(svg, px)), mode)
    return icon


def state_colour(look: Look, state: str) -> str:
    c = look.colours
    return {
        "approved": c.success,
        "needs-approval": c.warning,
        "invalid": c.danger,
        "stopped": c.danger,
    }.get(state, c.muted)


def kind_icon(look: Look, kind: str) -> QIcon:
    """The icon of a connection kind (an unknown kind gets none)."""
    c = look.colours
    return tinted(f"kind-{kind}", c.text, c.on_accent) if kind in KINDS else QIcon()


def state_icon(look: Look, state: str) -> QIcon:
    return tinted(f"state-{state}", state_colour(look, state), look.colours.on_accent)


def extension_icon(look: Look, kind: str) -> QIcon:
    c = look.colours
    return tinted(f"ext-{kind}", c.text, c.on_accent) if kind in EXTENSION_KINDS else QIcon()


def action_icon(look: Look, action: str) -> QIcon:
    return tinted(f"action-{action}", look.colours.text)
