"""``helm dev``: which workspace author mode runs in (no window needed to decide)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.common import CommandFailed
from app.commands.dev import DEV_WORKSPACE, choose_workspace
from app.scaffold import create
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
    assert home.settings().workspace(DEV_WORKSPACE).author_mode


def test_the_only_workspace_is_used_without_asking(tmp_path: Path) -> None:
    home = home_with(tmp_path, "work")
    assert choose_workspace(home, None, tmp_path) == ("work", False)
    assert not home.settings().workspace("work").author_mode


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


def dev(tmp: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["dev", *argv, "--home", str(tmp / "home")])
    return code, capsys.readouterr().err


def scaffold(tmp: Path) -> Path:
    return create(tmp / "ext", "widget", ext_id="com.example.notes", name="Notes").folder


def test_helm_dev_on_a_folder_without_a_manifest_stops_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = dev(tmp_path, capsys, str(tmp_path))
    assert code == 1
    assert f"{tmp_path} has no manifest.json" in err


def test_helm_dev_on_a_broken_manifest_prints_every_problem_with_its_path_and_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = scaffold(tmp_path)
    raw = json.loads((folder / "manifest.json").read_text("utf-8"))
    raw["kind"], raw["connections"][0]["paths"] = "gadget", ["../secrets/*"]
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    code, err = dev(tmp_path, capsys, str(folder))
    assert code == 1
    lines = err.splitlines()
    assert any(line.startswith("$.kind: ") for line in lines)
    assert any(line.startswith("$.connections[0].paths[0]: ") for line in lines)
    assert lines[-1] == f"helm: 2 problem(s) in {folder / 'manifest.json'}: fix them, then try again"
    assert not (tmp_path / "home" / "settings.json").exists()  # stopped before anything was set up


def test_yes_dev_is_refused_in_a_workspace_helm_dev_did_not_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home_with(tmp_path, "work")
    code, err = dev(tmp_path, capsys, str(scaffold(tmp_path)), "--yes-dev")
    assert code == 1
    assert "--yes-dev approves only in the workspace helm dev created for itself; 'work' is not one" in err
    assert home_with(tmp_path).settings().workspace("work").extensions == {}


def test_replay_runs_in_a_home_of_its_own_so_a_workspace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = scaffold(tmp_path)
    (tmp_path / "fx").mkdir()
    code, err = dev(tmp_path, capsys, str(folder), "--replay", str(tmp_path / "fx"), "-w", "work")
    assert code == 1
    assert "--replay runs in a temporary Helm home of its own" in err


def test_record_and_replay_cannot_be_given_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as usage:
        dev(tmp_path, capsys, str(tmp_path), "--record", "a", "--replay", "b")
    assert usage.value.code == 2


def test_a_fixture_not_in_the_format_stops_replay_with_its_file_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = scaffold(tmp_path)
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "notes.json").write_text('{"version": 1, "connection": "notes", "calls": {}}', "utf-8")
    code, err = dev(tmp_path, capsys, str(folder), "--replay", str(tmp_path / "fx"))
    assert code == 1
    assert f"{(tmp_path / 'fx' / 'notes.json').resolve()}: $.calls: must be a list" in err
