"""Settings: versioned, atomic, and a corrupt file is reported and never overwritten."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from broker.errors import SettingsError
from broker.settings import Home
from broker.workspaces import add_project, add_workspace


def test_settings_round_trip_with_a_version(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    add_workspace(home, "main", tmp_path)
    add_project(home, "main", "web", tmp_path)
    raw = json.loads(home.settings_path.read_text())
    assert raw["version"] == 1
    assert raw["workspaces"]["main"]["projects"] == {"web": str(tmp_path.resolve())}
    assert Home(tmp_path / "home").settings().workspace("main").projects["web"] == tmp_path.resolve()


def test_settings_file_is_private(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    add_workspace(home, "main", tmp_path)
    assert stat.S_IMODE(home.settings_path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{not json", "not valid JSON", id="not-json"),
        pytest.param('{"version": 1, "version": 2}', "duplicate key", id="duplicate-key"),
        pytest.param('{"version": 99}', "unsupported settings version 99", id="future-version"),
        pytest.param('{"version": 1, "workspaces": {"w": {"projects": {}}}}', "malformed", id="missing-root"),
        pytest.param("[]", "top level", id="not-an-object"),
    ],
)
def test_a_corrupt_settings_file_is_reported_and_kept(tmp_path: Path, content: str, message: str) -> None:
    home = Home(tmp_path)
    home.settings_path.write_text(content)
    with pytest.raises(SettingsError, match=message):
        home.settings()
    with pytest.raises(SettingsError), home.update() as s:
        s.profiles("services")["x"] = {}
    assert home.settings_path.read_text() == content


def test_a_failed_change_writes_nothing(tmp_path: Path) -> None:
    home = Home(tmp_path)
    add_workspace(home, "main", tmp_path)
    before = home.settings_path.read_bytes()

    def interrupted_change() -> None:
        with home.update() as s:
            s.workspaces.clear()
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        interrupted_change()
    assert home.settings_path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_changes_on_disk_are_picked_up(tmp_path: Path) -> None:
    reader = Home(tmp_path)
    assert reader.settings().workspaces == {}
    add_workspace(Home(tmp_path), "main", tmp_path)
    assert "main" in reader.settings().workspaces


@pytest.mark.parametrize("name", ["", "-x", "a b", "x" * 65, "../x"])
def test_bad_workspace_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(SettingsError, match="not a valid name"):
        add_workspace(Home(tmp_path), name, tmp_path)


def test_a_workspace_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="not an existing folder"):
        add_workspace(Home(tmp_path), "w", tmp_path / "missing")


def test_duplicate_workspace_and_project_are_refused(tmp_path: Path) -> None:
    home = Home(tmp_path)
    add_workspace(home, "w", tmp_path)
    with pytest.raises(SettingsError, match="already exists"):
        add_workspace(home, "w", tmp_path)
    add_project(home, "w", "p", tmp_path)
    with pytest.raises(SettingsError, match="already exists"):
        add_project(home, "w", "p", tmp_path)
    with pytest.raises(SettingsError, match="no workspace"):
        add_project(home, "nope", "p", tmp_path)


def test_helm_home_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HELM_HOME", str(tmp_path / "h"))
    assert Home.default_path() == tmp_path / "h"
    monkeypatch.delenv("HELM_HOME")
    assert Home.default_path() == Path(os.path.expanduser("~")) / ".helm"


def test_a_profile_section_no_kind_of_this_helm_declares_is_kept_through_a_change(tmp_path: Path) -> None:
    home = Home(tmp_path)
    boards = {"team": {"url": "https://boards.example.com", "anything": [1, 2]}}
    home.settings_path.write_text(json.dumps({"version": 1, "boards": boards}))
    add_workspace(home, "main", tmp_path)
    raw = json.loads(home.settings_path.read_text())
    assert raw["boards"] == boards
    assert "main" in raw["workspaces"]


def test_a_profile_section_that_is_not_an_object_of_profiles_is_reported_and_kept(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.settings_path.write_text('{"version": 1, "services": {"gh": 3}}')
    with pytest.raises(SettingsError, match=r"services\.gh must be a JSON object"):
        home.settings()
    assert home.settings_path.read_text() == '{"version": 1, "services": {"gh": 3}}'
