"""Frames get Helm's look as CSS variables, follow it live, and the sandbox stays as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from ui.preferences import PreferencesStore
from ui.preferences_dialog import PreferencesDialog
from ui.qt import QApplication, Qt
from ui.theme import Theme
from ui.theme_data import DARK, LIGHT, RADIUS, SPACE, Appearance

VARIABLE = "getComputedStyle(document.documentElement).getPropertyValue({!r}).trim()"
BACKGROUND = "getComputedStyle(document.body).backgroundColor"


def rgb(colour: str) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_a_frame_gets_the_look_as_css_variables_and_follows_the_system_scheme_live(
    run: Any, frames: Any, tmp_path: Path, theme: Theme, qapp: QApplication
) -> None:
    view = frames(copy_page("theme", tmp_path / "theme"), EchoHandler())

    async def scenario() -> dict[str, Any]:
        await wait_ready(view)
        seen = {"light": await evaluate(view, BACKGROUND)}
        seen["light-fg"] = await evaluate(view, VARIABLE.format("--helm-fg"))
        seen["light-bg"] = await evaluate(view, VARIABLE.format("--helm-bg"))
        seen["space"] = await evaluate(view, VARIABLE.format("--helm-space-2"))
        seen["radius"] = await evaluate(view, VARIABLE.format("--helm-radius"))
        qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # the system turned dark
        seen["dark"] = await evaluate(view, BACKGROUND)
        seen["dark-scheme"] = await evaluate(view, VARIABLE.format("--helm-scheme"))
        seen["dark-bg"] = await evaluate(view, VARIABLE.format("--helm-bg"))
        view.reload()
        await wait_ready(view)
        seen["dark-after-reload"] = await evaluate(view, BACKGROUND)
        return seen

    seen = run(scenario(), timeout=60)
    assert seen["light"] == rgb(LIGHT.surface)
    assert seen["light-fg"] == LIGHT.text
    assert (seen["light-bg"], seen["dark-bg"]) == (LIGHT.surface, DARK.surface)
    assert (seen["space"], seen["radius"]) == (f"{SPACE[1]}px", f"{RADIUS}px")
    assert seen["dark"] == rgb(DARK.surface)
    assert seen["dark-scheme"] == "dark"
    assert seen["dark-after-reload"] == rgb(DARK.surface)


def test_frames_follow_the_text_size_and_appearance_chosen_in_preferences(
    run: Any, frames: Any, tmp_path: Path, theme: Theme, qtbot: QtBot
) -> None:
    view = frames(copy_page("theme", tmp_path / "theme"), EchoHandler())
    preferences = PreferencesDialog(PreferencesStore(tmp_path / "preferences.json"))
    qtbot.addWidget(preferences)

    async def scenario() -> tuple[str, str, str]:
        await wait_ready(view)
        preferences.appearance.setCurrentIndex(preferences.appearance.findData(Appearance.DARK.value))
        preferences.system_size.setChecked(False)
        preferences.font_size.setValue(18.0)
        size = await evaluate(view, "getComputedStyle(document.body).fontSize")
        variable = await evaluate(view, VARIABLE.format("--helm-font-size"))
        return size, variable, await evaluate(view, BACKGROUND)

    size, variable, background = run(scenario(), timeout=60)
    assert variable == "24px"  # 18 pt
    assert size == "24px"
    assert background == rgb(DARK.surface)


def test_the_look_adds_no_script_or_style_to_the_page_and_its_setter_is_not_the_pages(
    run: Any, frames: Any, tmp_path: Path, theme: Theme
) -> None:
    view = frames(copy_page("theme", tmp_path / "theme"), EchoHandler())

    async def scenario() -> dict[str, Any]:
        await wait_ready(view)
        return await evaluate(
            view,
            "({elements: document.querySelectorAll('script, style').length,"
            " inlineStyle: document.documentElement.getAttribute('style'),"
            " setter: typeof window.__helmTheme,"
            " adopted: document.adoptedStyleSheets.length})",
        )

    seen = run(scenario(), timeout=60)
    # The page's world sees Helm's adopted sheet, but no element, attribute or function of Helm's.
    assert seen == {"elements": 0, "inlineStyle": None, "setter": "undefined", "adopted": 1}
