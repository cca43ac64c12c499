"""Workspace settings: the everyday profile switch, the TDT command, projects."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from broker import atomic
from broker.settings import Home
from broker.workspaces import add_workspace
from ui.workspace_settings import WorkspaceSettings


def settings_for(qtbot: QtBot, tmp_path: Path) -> tuple[Home, WorkspaceSettings]:
    home = Home(tmp_path / "home")
    (tmp_path / "root").mkdir()
    add_workspace(home, "main", tmp_path / "root")
    page = WorkspaceSettings(home, "main")
    qtbot.addWidget(page)
    page.show()
    return home, page


def test_the_everyday_switch_is_saved_for_the_workspace(qtbot: QtBot, tmp_path: Path) -> None:
    home, page = settings_for(qtbot, tmp_path)
    assert not page.everyday.isChecked()
    page.everyday.click()
    assert home.settings().workspace("main").everyday
    page.everyday.click()
    assert not home.settings().workspace("main").everyday


def test_the_tdt_command_is_checked_and_saved_as_arguments(qtbot: QtBot, tmp_path: Path) -> None:
    home, page = settings_for(qtbot, tmp_path)
    qtbot.keyClicks(page.command, "tdt mcp serve --root '/my work")
    assert page.command_error.text() == "a quote is not closed"
    assert not page.save_command_button.isEnabled()
    qtbot.keyClicks(page.command, "'")
    page.save_command_button.click()
    assert home.settings().workspace("main").tdt_command == ["tdt", "mcp", "serve", "--root", "/my work"]


def test_a_project_folder_is_added(qtbot: QtBot, tmp_path: Path) -> None:
    home, page = settings_for(qtbot, tmp_path)
    (tmp_path / "app").mkdir()
    page.project_id.setText("app")
    page.add_project(str(tmp_path / "app"))
    assert home.settings().workspace("main").projects == {"app": (tmp_path / "app").resolve()}
    assert page.projects.count() == 1
    page.project_id.setText("bad id!")
    page.add_project(str(tmp_path / "app"))
    assert "not a valid name" in page.status.text()


def test_a_full_disk_shows_a_notice_naming_the_file_and_changes_nothing(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, page = settings_for(qtbot, tmp_path)
    (tmp_path / "app").mkdir()
    before = home.settings_path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "write", full)
    page.project_id.setText("app")
    page.add_project(str(tmp_path / "app"))
    assert page.status.text() == (
        f"cannot write {home.settings_path}: No space left on device (the file on disk is unchanged)"
    )
    assert home.settings_path.read_bytes() == before


def test_the_build_agent_is_chosen_from_the_agents_and_saved(qtbot: QtBot, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    (tmp_path / "root").mkdir()
    add_workspace(home, "main", tmp_path / "root")
    with home.update() as settings:
        settings.agents["claude"] = {"command": ["claude-code-acp"]}
    page = WorkspaceSettings(home, "main")
    qtbot.addWidget(page)
    assert page.build_agent.currentData() is None
    page.build_agent.setCurrentIndex(page.build_agent.findData("claude"))
    assert home.settings().workspace("main").build_agent == "claude"
    page.build_agent.setCurrentIndex(0)
    assert home.settings().workspace("main").build_agent is None
