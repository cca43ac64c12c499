"""Helm's icons: drawn for each size and each scheme, crisp at 200 %, set on its windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker.kinds import KINDS
from tests.support import REPO
from ui import icons
from ui.icons import HICOLOR_SIZES, hicolor_path
from ui.qt import QApplication, QImage, QSize
from ui.theme_data import Look, Scheme, contrast


def pixels(image: QImage) -> list[int]:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return [image.pixel(x, y) for y in range(image.height()) for x in range(image.width())]


def difference(a: QImage, b: QImage) -> float:
    """Mean difference of the alpha and colour channels, 0 to 255."""
    total = 0
    for p, q in zip(pixels(a), pixels(b), strict=True):
        total += sum(abs(((p >> s) & 255) - ((q >> s) & 255)) for s in (0, 8, 16, 24))
    return total / (4 * a.width() * a.height())


@pytest.mark.parametrize("px", HICOLOR_SIZES)
def test_the_app_icons_bitmaps_are_its_drawings_rendered_for_their_size(qapp: QApplication, px: int) -> None:
    shipped = QImage(str(hicolor_path(px)))
    assert (shipped.width(), shipped.height()) == (px, px)
    # scripts/icons.py wrote them; after a change of the drawings, run it again.
    assert difference(shipped, icons.render(icons.app_drawing(px), px)) < 1.0


def test_small_sizes_use_the_simpler_drawings(qapp: QApplication) -> None:
    assert icons.app_drawing(16) != icons.app_drawing(32) != icons.app_drawing(48)


def test_at_200_percent_an_icon_is_drawn_at_twice_the_pixels_not_scaled_up(qapp: QApplication) -> None:
    look = Look(Scheme.LIGHT)
    for icon, svg in (
        (icons.kind_icon(look, "db"), icons.svg_text("ui/kind-db")),
        (icons.app_icon(), icons.app_drawing(32)),
    ):
        sharp = icon.pixmap(QSize(16, 16), 2.0)
        assert (sharp.width(), sharp.height()) == (32, 32)
        assert sharp.devicePixelRatio() == 2.0
        drawn = icons.render(svg.replace("currentColor", look.colours.text), 32)
        assert difference(sharp.toImage(), drawn) < 1.0


def test_every_kind_and_state_has_an_icon_that_reads_on_both_schemes(qapp: QApplication) -> None:
    assert set(KINDS) <= set(icons.KINDS)
    for scheme in Scheme:
        look = Look(scheme)
        for kind in icons.KINDS:
            assert not icons.kind_icon(look, kind).isNull()
        for state in icons.STATES:
            assert not icons.state_icon(look, state).isNull()
            assert contrast(icons.state_colour(look, state), look.colours.window) >= 3
            assert contrast(icons.state_colour(look, state), look.colours.surface) >= 3


def test_an_icon_is_drawn_in_the_schemes_text_colour(qapp: QApplication) -> None:
    light = icons.kind_icon(Look(Scheme.LIGHT), "files").pixmap(24).toImage()
    dark = icons.kind_icon(Look(Scheme.DARK), "files").pixmap(24).toImage()
    assert difference(light, dark) > 5


def test_helms_windows_carry_its_icon(run: Any, tmp_path: Path) -> None:
    from app.window import open_window
    from tests.helpers import new_broker

    async def scenario() -> list[int]:
        async with new_broker(tmp_path / "home") as broker:
            window = open_window(broker)
            try:
                return sorted(s.width() for s in window.window.windowIcon().availableSizes())
            finally:
                await window.aclose()

    assert run(scenario()) == sorted(HICOLOR_SIZES)


def test_the_desktop_file_names_the_icon_the_bundle_installs() -> None:
    entry = (REPO / "packaging" / "linux" / "helm.desktop").read_text("utf-8")
    assert "Icon=helm\n" in entry
    assert (REPO / "resources" / "icons" / "helm.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"


@pytest.mark.parametrize("scheme", list(Scheme))
def test_on_a_selected_row_an_icon_is_drawn_in_the_selections_text_colour(
    qapp: QApplication, scheme: Scheme
) -> None:
    from ui.qt import QIcon

    look = Look(scheme)
    icon = icons.extension_icon(look, "widget")
    selected = icon.pixmap(QSize(24, 24), 1.0, QIcon.Mode.Selected).toImage()
    drawn = icons.render(icons.svg_text("ui/ext-widget").replace("currentColor", look.colours.on_accent), 24)
    assert difference(selected, drawn) < 1.0
