"""Helm's look as data, no Qt: the two colour schemes, the text size, and what frames get.

A ``Look`` is everything Helm's own widgets and the extension frames are drawn with: the
scheme (light or dark), its colours, and the font. ``choose_scheme`` decides the scheme from the
user's Appearance preference and the system's colour scheme. The frames get the look as the
CSS variables ``css_variables`` lists (documented for authors in docs/authors.md); MCP Apps get
the same look under the names of the MCP Apps specification (``app_style_variables``).

Every text colour of a scheme is legible on its backgrounds: ``contrast`` is the WCAG contrast
ratio, and the tests hold each pair to 4.5:1 (3:1 for borders and icons).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Scheme(StrEnum):
    LIGHT = "light"
    DARK = "dark"


class Appearance(StrEnum):
    """The user's choice in Preferences: follow the system, or always light or dark."""

    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


@dataclass(frozen=True)
class Colours:
    window: str
    """Behind everything: the window, the sidebar, dialogs."""
    surface: str
    """Inputs, lists, and the frames' page background."""
    surface_alt: str
    """Alternate rows, code, strips."""
    text: str
    muted: str
    """Secondary text: hints, captions."""
    border: str
    button: str
    accent: str
    """Selection and the focus ring."""
    on_accent: str
    link: str
    danger: str
    success: str
    warning: str
    warning_surface: str
    """The background of a warning box (its text is ``text``, its border ``warning``)."""


LIGHT = Colours(
    window="#f3f4f6",
    surface="#ffffff",
    surface_alt="#eceef2",
    text="#1b1e23",
    muted="#565d6b",
    border="#7c8391",
    button="#e6e8ec",
    accent="#2457a6",
    on_accent="#ffffff",
    link="#1f56b3",
    danger="#a4211b",
    success="#1b6a2c",
    warning="#8a5a00",
    warning_surface="#fff4d6",
)
DARK = Colours(
    window="#1e2127",
    surface="#16181d",
    surface_alt="#272b33",
    text="#e6e8ec",
    muted="#a5acb8",
    border="#6b7280",
    button="#2f343d",
    accent="#4f86e0",
    on_accent="#0b1220",
    link="#8ab4ff",
    danger="#ff8a80",
    success="#7ddc8b",
    warning="#f3c04d",
    warning_surface="#3a3020",
)
SCHEMES = {Scheme.LIGHT: LIGHT, Scheme.DARK: DARK}

DEFAULT_FONT_PT = 10.0
MIN_FONT_PT = 8.0
MAX_FONT_PT = 24.0
GENERIC_SANS = "system-ui, sans-serif"
GENERIC_MONO = "ui-monospace, monospace"
_SAFE_FAMILY = re.compile(r"[A-Za-z0-9 ._-]{1,64}")


SPACE = (4, 8, 12, 16)
"""Helm's spacing scale in px, smallest first: inside a control, between related items,
between groups, around a panel. Helm's widgets and the frames (``--helm-space-1..4``) use it."""
RADIUS = 6
"""The corner radius of cards, panels and controls, in px."""
TYPE_SCALE = {"sm": 0.875, "md": 1.0, "lg": 1.15, "xl": 1.4}
"""The type scale, relative to the user's text size: captions, body, card titles, page titles."""


@dataclass(frozen=True)
class Look:
    scheme: Scheme = Scheme.LIGHT
    font_pt: float = DEFAULT_FONT_PT
    """Helm's text size in points (the Preferences entry, or the system's)."""
    font_family: str = ""
    mono_family: str = ""

    @property
    def colours(self) -> Colours:
        return SCHEMES[self.scheme]

    @property
    def font_px(self) -> int:
        """The text size in CSS pixels (1 pt is 4/3 px); web pages scale it for the screen."""
        return round(self.font_pt * 4 / 3)

    def font_stack(self, mono: bool = False) -> str:
        family = self.mono_family if mono else self.font_family
        generic = GENERIC_MONO if mono else GENERIC_SANS
        return f'"{family}", {generic}' if _SAFE_FAMILY.fullmatch(family or "") else generic


def choose_scheme(appearance: Appearance, system: Scheme | None) -> Scheme:
    """The scheme in force: the user's choice, else the system's, else light."""
    if appearance is Appearance.LIGHT:
        return Scheme.LIGHT
    if appearance is Appearance.DARK:
        return Scheme.DARK
    return system or Scheme.LIGHT


def clamp_font(pt: float) -> float:
    return min(max(pt, MIN_FONT_PT), MAX_FONT_PT)


def css_variables(look: Look) -> dict[str, str]:
    """The custom properties every extension frame gets on ``:root`` (docs/authors.md)."""
    c = look.colours
    return {
        "--helm-scheme": look.scheme.value,
        "--helm-bg": c.surface,
        "--helm-bg-alt": c.surface_alt,
        "--helm-fg": c.text,
        "--helm-fg-muted": c.muted,
        "--helm-border": c.border,
        "--helm-accent": c.accent,
        "--helm-accent-fg": c.on_accent,
        "--helm-link": c.link,
        "--helm-danger": c.danger,
        "--helm-success": c.success,
        "--helm-warning": c.warning,
        "--helm-font-family": look.font_stack(),
        "--helm-font-mono": look.font_stack(mono=True),
        "--helm-font-size": f"{look.font_px}px",
        "--helm-font-size-sm": f"{round(look.font_px * TYPE_SCALE['sm'])}px",
        "--helm-font-size-lg": f"{round(look.font_px * TYPE_SCALE['lg'])}px",
        "--helm-radius": f"{RADIUS}px",
        **{f"--helm-space-{i}": f"{px}px" for i, px in enumerate(SPACE, 1)},
    }


def css_text(look: Look) -> str:
    """The variables as one ``:root`` rule (values are Helm's own: colours, sizes, font names
    that passed ``_SAFE_FAMILY``)."""
    body = "".join(f"{name}:{value};" for name, value in css_variables(look).items())
    return f":root{{{body}}}"


def app_style_variables(look: Look) -> dict[str, str]:
    """The same look for MCP Apps, under the specification's variable names."""
    c, px = look.colours, look.font_px
    return {
        "--color-background-primary": c.surface,
        "--color-background-secondary": c.surface_alt,
        "--color-background-tertiary": c.window,
        "--color-text-primary": c.text,
        "--color-text-secondary": c.muted,
        "--color-text-danger": c.danger,
        "--color-text-success": c.success,
        "--color-text-warning": c.warning,
        "--color-border-primary": c.border,
        "--color-ring-primary": c.accent,
        "--font-sans": look.font_stack(),
        "--font-mono": look.font_stack(mono=True),
        "--font-text-sm-size": f"{round(px * 0.875)}px",
        "--font-text-md-size": f"{px}px",
        "--font-text-lg-size": f"{round(px * 1.125)}px",
    }


def luminance(colour: str) -> float:
    """The relative luminance of ``#rrggbb`` (WCAG 2)."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
