"""``helm dev``: which workspace author mode runs in (no window needed to decide)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.commands.common import CommandFailed
from app.commands.dev import DEV_WORKSPACE, choose_workspace
from broker.errors import SettingsError
from broker.settings import Home
from broker.workspaces import add_workspace


def home_with(tmp: Path, *names: str) -> Home:
    home = Home(tmp / "home")
    home.ensure()
    for name in names:
        (tmp / name).mkdir()
        add_workspace(home, name, tmp / name)
    return home


def test_a_home_without_workspaces_gets_a_dev_workspace_rooted_at_the_extension(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    ext = tmp_path / "ext"
    ext.mkdir()

    assert choose_workspace(home, None, ext) == (DEV_WORKSPACE, True)
    assert home.settings().workspace(DEV_WORKSPACE).root == ext.resolve()


def test_the_only_workspace_is_used_without_asking(tmp_path: Path) -> None:
    assert choose_workspace(home_with(tmp_path, "work"), None, tmp_path) == ("work", False)


def test_several_workspaces_need_a_choice(tmp_path: Path) -> None:
    home = home_with(tmp_path, "work", "play")
    with pytest.raises(CommandFailed, match=r"--workspace \(play, work\)"):
        choose_workspace(home, None, tmp_path)
    assert choose_workspace(home, "play", tmp_path) == ("play", False)


def test_a_named_workspace_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="no workspace named 'nope'"):
        choose_workspace(home_with(tmp_path, "work"), "nope", tmp_path)


def test_helm_dev_on_a_missing_folder_fails_before_opening_a_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dev", str(tmp_path / "missing"), "--home", str(tmp_path / "home")]) == 1
    assert "is not a folder" in capsys.readouterr().err
