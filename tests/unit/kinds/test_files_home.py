"""files never reaches Helm's own home folder, even from a root that contains it (a workspace at ~)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.cli import main
from broker import Decision, extensions
from broker.fs.guard import folder_holds
from broker.kinds.files.home import home_exposure
from broker.kinds.files.rules import HomeExposure, home_warning
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.kinds.files_setup import Setup, code, files_conn, make_setup, register_project, sha

GLOBS = [".helm/**", ".helm/*", "**", "notes/*"]


async def home_in_root(tmp_path: Path, home: Path) -> AsyncIterator[Setup]:
    async with new_broker(home) as broker:
        s = await make_setup(broker, tmp_path, [files_conn(GLOBS)])
        (tmp_path / "root" / "notes").mkdir()
        (tmp_path / "root" / "notes" / "a.md").write_text("inside")
        (tmp_path / "root" / ".helm" / "credentials.json").write_text('{"token": "SECRET"}')
        yield s


@pytest.fixture
async def s(tmp_path: Path) -> AsyncIterator[Setup]:
    """The workspace root tmp/root contains Helm's home tmp/root/.helm."""
    async for setup in home_in_root(tmp_path, tmp_path / "root" / ".helm"):
        yield setup


@pytest.fixture
async def via_link(tmp_path: Path) -> AsyncIterator[Setup]:
    """The same, but Helm's home is named through a symlink: only its identity gives it away."""
    (tmp_path / "root").mkdir()
    os.symlink(tmp_path / "root", tmp_path / "alias")
    async for setup in home_in_root(tmp_path, tmp_path / "alias" / ".helm"):
        yield setup


async def test_list_never_shows_files_in_helms_home(s: Setup) -> None:
    result = await s.call("list", {})
    paths = [f["path"] for f in result["data"]["files"]]
    assert paths == ["notes/a.md"]


@pytest.mark.parametrize("name", ["credentials.json", "settings.json"])
async def test_reading_a_file_in_helms_home_is_refused(s: Setup, name: str) -> None:
    result = await s.call("read", {"path": f".helm/{name}"})
    assert code(result) == "refused"
    assert "Helm's own folder" in result["error"]["message"]
    assert "SECRET" not in str(result)


async def test_a_batch_read_refuses_the_files_in_helms_home_and_reads_the_rest(s: Setup) -> None:
    result = await s.call("read", {"paths": [".helm/credentials.json", "notes/a.md"]})
    first, second = result["data"]["files"]
    assert first["error"]["code"] == "refused"
    assert second["text"] == "inside"


async def test_writing_helms_settings_is_refused(s: Setup) -> None:
    settings = s.root / ".helm" / "settings.json"
    before = settings.read_text()
    forged = {"path": ".helm/settings.json", "text": "{}", "expected_sha256": sha(before)}
    result = await s.broker.request(s.ctx, "fs", "write", forged, ScriptedConfirmer(Decision.CONFIRMED))
    assert code(result) == "refused"
    assert settings.read_text() == before


async def test_helms_home_named_through_a_symlink_is_still_refused(via_link: Setup) -> None:
    assert code(await via_link.call("read", {"path": ".helm/credentials.json"})) == "refused"
    assert [f["path"] for f in (await via_link.call("list", {}))["data"]["files"]] == ["notes/a.md"]


async def test_a_hard_link_to_helms_credentials_is_refused(s: Setup) -> None:
    os.link(s.root / ".helm" / "credentials.json", s.root / "notes" / "copy.md")
    result = await s.call("read", {"path": "notes/copy.md"})
    assert code(result) == "refused"
    assert "SECRET" not in str(result)


async def test_a_project_root_that_is_helms_home_is_refused(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        s = await make_setup(broker, tmp_path, [files_conn(["*"], root="project")])
        register_project(broker, "p", tmp_path / "home")
        for op, args in (("list", {}), ("read", {"path": "settings.json"})):
            result = await s.call(op, {"project": "p", **args})
            assert code(result) == "refused"
            assert "is Helm's own folder" in result["error"]["message"]


async def test_a_root_inside_helms_home_reaches_only_its_own_folder(tmp_path: Path) -> None:
    # As the demo workspace does (<home>/demo/workspace): nothing leads up to the home's files.
    async with new_broker(tmp_path / "home") as broker:
        s = await make_setup(broker, tmp_path, [files_conn(["**", "*"], root="project")])
        register_project(broker, "demo", tmp_path / "home" / "demo")
        (tmp_path / "home" / "demo" / "a.md").write_text("demo")
        listed = await s.call("list", {"project": "demo"})
        assert [f["path"] for f in listed["data"]["files"]] == ["a.md"]
        assert code(await s.call("read", {"project": "demo", "path": "../settings.json"})) == "refused"


def test_folder_holds_compares_identity_not_names(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / ".helm").mkdir(parents=True)
    os.symlink(tmp_path / "a", tmp_path / "link")
    home = tmp_path / "link" / "b" / ".helm"
    assert folder_holds(tmp_path / "a", home)
    assert folder_holds(tmp_path / "a" / "b" / ".helm", home)
    assert not folder_holds(tmp_path / "a" / "b" / ".helm" / "..", tmp_path / "elsewhere")
    (tmp_path / "c").mkdir()
    assert not folder_holds(tmp_path / "c", home)


async def test_home_exposure_names_the_roots_that_contain_the_home(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "root" / ".helm") as broker:
        await make_setup(broker, tmp_path, [files_conn(["*"])])
        register_project(broker, "wide", tmp_path / "root")
        register_project(broker, "narrow", tmp_path / "root" / "src")
        ws = broker.home.settings().workspace("ws")
        assert home_exposure(ws, broker.home.path) == HomeExposure(True, ("wide",))


@pytest.mark.parametrize(
    ("root", "exposure", "warned"),
    [
        pytest.param("workspace", HomeExposure(True), "The workspace root contains", id="workspace"),
        pytest.param("workspace", HomeExposure(False, ("p",)), None, id="workspace-safe"),
        pytest.param("project", HomeExposure(True, ("p", "q")), "project folder of p, q", id="projects"),
        pytest.param("project", HomeExposure(True), None, id="projects-safe"),
    ],
)
def test_review_warns_only_for_a_root_that_contains_the_home(
    root: str, exposure: HomeExposure, warned: str | None
) -> None:
    warning = home_warning(root, exposure)
    if warned is None:
        assert warning is None
    else:
        assert warning is not None
        assert warned in warning and "Helm's own folder" in warning


def test_adding_a_workspace_or_project_that_contains_the_home_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HELM_HOME", str(tmp_path / ".helm"))
    (tmp_path / "narrow").mkdir()
    assert main(["workspace", "add", "narrow", str(tmp_path / "narrow")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["workspace", "add", "wide", str(tmp_path)]) == 0
    assert "this workspace root contains Helm's own folder" in capsys.readouterr().err
    assert main(["project", "add", "-w", "narrow", "all", str(tmp_path)]) == 0
    assert "this project folder contains Helm's own folder" in capsys.readouterr().err


async def test_review_of_an_installed_extension_warns_that_its_root_holds_the_home(s: Setup) -> None:
    reviewed = await extensions.review(s.broker, s.ctx.workspace, s.ctx.extension)
    (fs,) = reviewed.review.connections
    assert len(fs.warnings) == 1 and "The workspace root contains Helm's own folder" in fs.warnings[0]
    assert reviewed.digest == s.broker.manifest(s.ctx.workspace, s.ctx.extension).digest()


async def test_review_does_not_warn_when_the_root_is_narrower_than_the_home(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "elsewhere" / ".helm") as broker:
        s = await make_setup(broker, tmp_path, [files_conn(GLOBS)])
        reviewed = await extensions.review(broker, s.ctx.workspace, s.ctx.extension)
        assert reviewed.review.connections[0].warnings == ()
