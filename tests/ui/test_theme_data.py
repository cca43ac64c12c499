"""The two schemes as data: every text legible on every background it sits on (WCAG 2: 4.5:1
for text, 3:1 for borders and icons), and the frames' variables as authors are told."""

from __future__ import annotations

import re

import pytest

from tests.support import REPO
from ui.theme_data import (
    LIGHT,
    SCHEMES,
    Appearance,
    Colours,
    Look,
    Scheme,
    app_style_variables,
    choose_scheme,
    contrast,
    css_text,
    css_variables,
)

TEXTS = ("text", "muted", "link", "danger", "success", "warning")
BACKGROUNDS = ("window", "surface", "surface_alt")


@pytest.mark.parametrize("scheme", list(Scheme))
@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("background", BACKGROUNDS)
def test_every_text_colour_reads_on_every_background(scheme: Scheme, text: str, background: str) -> None:
    c = SCHEMES[scheme]
    assert contrast(getattr(c, text), getattr(c, background)) >= 4.5


@pytest.mark.parametrize("scheme", list(Scheme))
def test_borders_icons_and_the_accent_are_seen(scheme: Scheme) -> None:
    c: Colours = SCHEMES[scheme]
    assert contrast(c.border, c.window) >= 3 and contrast(c.border, c.surface) >= 3
    assert contrast(c.accent, c.window) >= 3
    assert contrast(c.on_accent, c.accent) >= 4.5
    assert contrast(c.text, c.warning_surface) >= 4.5
    assert contrast(c.warning, c.warning_surface) >= 3


def test_the_contrast_ratio_is_wcags() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize(
    ("appearance", "system", "scheme"),
    [
        (Appearance.SYSTEM, Scheme.DARK, Scheme.DARK),
        (Appearance.SYSTEM, None, Scheme.LIGHT),
        (Appearance.LIGHT, Scheme.DARK, Scheme.LIGHT),
        (Appearance.DARK, Scheme.LIGHT, Scheme.DARK),
    ],
)
def test_the_users_appearance_wins_else_the_systems_else_light(
    appearance: Appearance, system: Scheme | None, scheme: Scheme
) -> None:
    assert choose_scheme(appearance, system) is scheme


def test_a_font_name_that_could_break_out_of_the_css_is_left_out() -> None:
    look = Look(font_family='Evil"; } body { display: none', font_pt=12)
    assert css_variables(look)["--helm-font-family"] == "system-ui, sans-serif"
    assert "display" not in css_text(look)
    assert (
        css_variables(Look(font_family="DejaVu Sans"))["--helm-font-family"]
        == '"DejaVu Sans", system-ui, sans-serif'
    )


def test_every_css_variable_is_documented_for_authors() -> None:
    doc = (REPO / "docs" / "authors.md").read_text("utf-8")
    documented = set(re.findall(r"`(--helm-[a-z0-9-]+)`", doc))
    assert set(css_variables(Look())) == documented


def test_apps_get_the_same_colours_as_frames() -> None:
    frame, app = css_variables(Look()), app_style_variables(Look())
    assert app["--color-background-primary"] == frame["--helm-bg"] == LIGHT.surface
    assert app["--color-text-primary"] == frame["--helm-fg"]
    assert app["--font-text-md-size"] == frame["--helm-font-size"]


def test_the_demo_widgets_and_the_scaffold_use_only_variables_helm_sets() -> None:
    looks = [
        REPO / "resources" / "demo" / "look.css",
        REPO / "resources" / "scaffold" / "common" / "style.css",
    ]
    own = sorted((REPO / "resources" / "demo" / "extensions").glob("*/style.css"))  # a widget's extras
    assert own, "no demo widget has styles of its own"
    known = set(css_variables(Look()))
    for sheet in [*looks, *own]:
        used = set(re.findall(r"var\((--helm-[a-z0-9-]+)", sheet.read_text("utf-8")))
        if sheet in looks:
            assert {"--helm-bg", "--helm-fg", "--helm-font-size", "--helm-scheme"} <= used, sheet.name
        assert used <= known, f"{sheet}: {used - known}"
