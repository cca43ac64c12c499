"""The command palette: fuzzy matching, and every action of the window reached by typing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytestqt.qtbot import QtBot

from tests.ui.dashboard_kit import home_with, manifest, open_main_window
from ui import extension_tree
from ui.palette import Command, fuzzy_score, ranked
from ui.qt import QKeySequence, Qt

BOARD = "com.example.board"


@pytest.mark.parametrize(
    ("query", "text"),
    [
        pytest.param("addws", "Add workspace…", id="initials-and-runs"),
        pytest.param("CONN", "Settings — Connections…", id="case"),
        pytest.param("stop b", "Stop Board", id="spaces-ignored"),
        pytest.param("", "Anything", id="empty-matches-all"),
    ],
)
def test_typed_characters_in_order_match(query: str, text: str) -> None:
    assert fuzzy_score(query, text) is not None


@pytest.mark.parametrize(("query", "text"), [("eda", "Add workspace…"), ("x", "Audit log…")])
def test_a_character_missing_or_out_of_order_does_not_match(query: str, text: str) -> None:
    assert fuzzy_score(query, text) is None


def test_word_starts_and_runs_rank_first() -> None:
    commands = [Command(t, lambda: None) for t in ("Show Activity", "Audit log…", "Add workspace…")]
    assert next(c.title for c in ranked("a", commands)) in {"Audit log…", "Add workspace…"}
    assert [c.title for c in ranked("act", commands)] == ["Show Activity"]
    assert next(c.title for c in ranked("aw", commands)) == "Add workspace…"


@given(st.text(max_size=12), st.text(max_size=40))
def test_a_match_means_every_typed_character_appears_in_order(query: str, text: str) -> None:
    if fuzzy_score(query, text) is None:
        return
    hay = iter(text.lower())
    assert all(ch in hay for ch in "".join(query.lower().split()))


def test_ctrl_k_finds_and_runs_the_kill_switch_and_the_menu(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    window = open_main_window(qtbot, broker)
    assert window.menu_actions["palette"].shortcut() == QKeySequence("Ctrl+K")
    palette = window.open_palette()
    qtbot.keyClicks(palette.search, "stop board")
    assert palette.list.currentItem().text() == f"Stop Board — {BOARD}"
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    item = extension_tree.find(window.tree, BOARD, None)
    assert item is not None and item.text(1).startswith("stopped")
    assert not palette.isVisible()
    window.open_palette()
    assert palette.search.text() == ""
    qtbot.keyClicks(palette.search, "audit")
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert window.windows["audit"].isVisible()
    titles = [c.title for c in palette.commands]
    for expected in ("Connect a service…", "Install extension…", "Show Activity", "Turn on Board"):
        assert expected in titles
