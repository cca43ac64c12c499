"""The organisation's policy in the window: what it stops says so, and Settings marks what it
manages, where the user cannot change it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker.apps import review
from broker.settings import Home
from tests.helpers import new_broker
from tests.ui.dashboard_kit import home_with, manifest, open_main_window
from tests.unit.apps.app_setup import BOARD as APP_URI
from tests.unit.apps.app_setup import app_home
from tests.unit.policy.policy_setup import PolicyFile, policy
from ui import extension_tree
from ui.agents.picker import Picker
from ui.apps.dialogs import AppReviewDialog
from ui.settings.page import ProfilePage

__all__ = ["policy"]

BOARD = "com.example.board"


def state(window: Any) -> tuple[str, str]:
    item = extension_tree.find(window.tree, BOARD)
    assert item is not None
    return item.text(1), item.toolTip(1)


def test_an_extension_the_policy_forbids_is_shown_stopped_with_why(
    qtbot: QtBot, run: Any, tmp_path: Path, policy: PolicyFile
) -> None:
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    window = open_main_window(qtbot, broker)
    assert state(window)[0] == "approved"
    policy.write({"extensions": {"allow": [{"id": "com.example.other"}]}})
    window.follow_policy()
    assert window.notice.text().startswith(f"Your organisation's policy stopped {BOARD}.")
    assert "refused by your organisation's policy (extensions.allow)" in window.notice.text()
    shown, tip = state(window)
    assert shown == "stopped by policy"
    assert "refused by your organisation's policy (extensions.allow)" in tip
    policy.remove()
    window.follow_policy()
    assert state(window)[0] == "approved"
    run(broker.aclose())


def test_a_refused_policy_file_is_said_at_once(
    qtbot: QtBot, run: Any, tmp_path: Path, policy: PolicyFile
) -> None:
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    policy.write({}, mode=0o666)
    window = open_main_window(qtbot, broker)
    assert window.notice.text().startswith(f"Helm refuses the policy file {policy.path}")
    assert state(window)[0] == "stopped by policy"
    run(broker.aclose())


def test_settings_marks_the_profiles_the_policy_manages(
    qtbot: QtBot, run: Any, tmp_path: Path, policy: PolicyFile
) -> None:
    policy.write({"services": {"base_urls": ["https://*.example.com/*"]}})
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    window = open_main_window(qtbot, broker)
    page = window.open_connections()
    notes = {p.section.managed(): p.managed for p in page.findChildren(ProfilePage)}
    managed = "Managed by your organisation's policy: only these base URLs: https://*.example.com/*"
    assert managed in notes
    assert not notes[managed].isHidden()
    assert all(label.isHidden() for text, label in notes.items() if not text)
    run(broker.aclose())


def test_the_agent_write_switch_is_off_and_cannot_be_turned_on_under_a_policy(
    qtbot: QtBot, tmp_path: Path, policy: PolicyFile
) -> None:
    policy.write({"agents": {"write": False}})
    home = Home(tmp_path / "home")
    home.ensure()
    picker = Picker(home)
    qtbot.addWidget(picker)
    assert not picker.write.isEnabled() and not picker.write.isChecked()
    assert "agents may not change files" in picker.write.toolTip()
    policy.remove()
    picker.reload()
    assert picker.write.isEnabled()


@pytest.mark.usefixtures("mcp_app_server")
def test_an_apps_resource_domains_cannot_be_allowed_when_the_policy_never_allows_them(
    qtbot: QtBot, run: Any, tmp_path: Path, policy: PolicyFile
) -> None:
    broker = new_broker(tmp_path / "home")
    run(app_home(broker, tmp_path, "--resource", "https://cdn.example.com"))
    policy.write({"apps": {"resource_domains": False}})
    reviewed = run(review.review(broker, "ws", "board", APP_URI))
    dialog = AppReviewDialog(reviewed, guard_ms=0)
    qtbot.addWidget(dialog)
    check = dialog.allow["https://cdn.example.com"]
    assert not check.isEnabled() and not check.isChecked()
    assert "apps' resource domains are never allowed" in check.toolTip()
    assert dialog.allowed == []
    run(broker.aclose())
