"""The verdicts kept in the home (broker.verdicts): an unchanged manifest is not validated by the
schema again, and nothing else about a load changes; real files throughout."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker import manifest as manifest_module
from broker import verdicts as verdicts_module
from broker.errors import ManifestError
from broker.kinds import registered
from broker.kinds.base import Issue
from broker.manifest import load
from broker.verdicts import Verdicts, installed_version
from tests.helpers import manifest_dict, new_broker, setup_extension, write_extension
from tests.kinds.echo import ECHO

FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir(mode=0o700)
    return folder


@pytest.fixture
def schema_runs(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each manifest the schema validates (the real validation, counted)."""
    seen: list[object] = []
    real = manifest_module._schema_issues

    def counted(raw: Any) -> Iterator[Issue]:
        seen.append(raw)
        return real(raw)

    monkeypatch.setattr(manifest_module, "_schema_issues", counted)
    return seen


@pytest.fixture
def fresh_versions() -> Iterator[None]:
    installed_version.cache_clear()
    yield
    installed_version.cache_clear()


def extension(tmp_path: Path, name: str = "a", **extra: Any) -> Path:
    return write_extension(tmp_path / name, manifest_dict([FILES], id=f"com.example.{name}", **extra))


def kept(home: Path) -> list[str]:
    valid: list[str] = json.loads((home / "cache" / "manifest-verdicts.json").read_text("utf-8"))["valid"]
    return valid


def test_an_unchanged_manifest_is_not_validated_by_the_schema_again(
    tmp_path: Path, home: Path, schema_runs: list[object]
) -> None:
    folder = extension(tmp_path)
    first = load(folder, Verdicts.in_home(home))
    again = load(folder, Verdicts.in_home(home))  # as the next start reads it
    assert len(schema_runs) == 1
    plain = load(folder)
    assert again == first == plain and again.connections == plain.connections
    assert again.digest() == plain.digest()


def test_a_start_where_no_manifest_changed_does_not_import_jsonschema(tmp_path: Path, home: Path) -> None:
    folder = extension(tmp_path)
    code = (
        "import sys; from pathlib import Path; from broker.resolution import Manifests\n"
        f"Manifests.in_home(Path({str(home)!r})).load(Path({str(folder)!r}))\n"
        "print('jsonschema' in sys.modules)"
    )

    def fresh_process() -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        return done.stdout.strip()

    assert fresh_process() == "True"  # the first read validates and keeps the verdict
    assert fresh_process() == "False"
    with (folder / "manifest.json").open("ab") as f:
        f.write(b"\n")
    assert fresh_process() == "True"


FILL = (  # what the window's fill reads: each extension's row, through the broker's manifests
    "import sys; from pathlib import Path; from tests.helpers import new_broker\n"
    "from ui.workspace_model import WorkspaceModel\n"
    "rows = WorkspaceModel(new_broker(Path({home!r}))).extensions('ws')\n"
    "print(rows[0].decision.standing.value, 'jsonschema' in sys.modules)"
)
LIST = (
    "import sys; from app.cli import main\n"
    "main(['--home', {home!r}, 'ext', 'list', '-w', 'ws'])\n"
    "print('jsonschema' in sys.modules)"
)


async def test_the_window_and_helm_ext_list_read_an_approved_manifest_without_jsonschema(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with new_broker(home) as broker:
        await setup_extension(broker, tmp_path, manifest_dict([FILES]))  # its approval keeps the verdict
    for code, last in ((FILL, "approved False"), (LIST, "False")):
        argv = [sys.executable, "-c", code.format(home=str(home))]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        assert done.stdout.strip().splitlines()[-1] == last, done.stdout
    assert "approved" in done.stdout


def test_a_one_byte_change_is_validated_again(tmp_path: Path, home: Path, schema_runs: list[object]) -> None:
    folder = extension(tmp_path)
    first = load(folder, Verdicts.in_home(home))
    with (folder / "manifest.json").open("ab") as f:
        f.write(b" ")  # the same manifest, in other bytes
    assert load(folder, Verdicts.in_home(home)) == first
    assert len(schema_runs) == 2 and len(kept(home)) == 2
    text = (folder / "manifest.json").read_text("utf-8")
    (folder / "manifest.json").write_text(text.replace('"list"', '"lisT"'), encoding="utf-8")
    with pytest.raises(ManifestError, match="must be one of"):  # one letter: validated again
        load(folder, Verdicts.in_home(home))


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param({"kind": "gadget"}, id="the-schema-refuses-it"),
        pytest.param({"connections": [FILES | {"operations": ["write"]}]}, id="a-rule-refuses-it"),
        pytest.param({"entry": "missing.html"}, id="its-entry-is-missing"),
    ],
)
def test_an_invalid_manifest_is_never_kept(
    tmp_path: Path, home: Path, schema_runs: list[object], broken: dict[str, Any]
) -> None:
    folder = extension(tmp_path)
    raw = json.loads((folder / "manifest.json").read_text("utf-8")) | broken
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ManifestError) as failed:
            load(folder, Verdicts.in_home(home))
        with pytest.raises(ManifestError) as plain:
            load(folder)
        assert failed.value.issues == plain.value.issues
    assert len(schema_runs) == 4
    assert not (home / "cache").exists()


def test_the_rules_beside_the_schema_still_run_on_a_kept_manifest(
    tmp_path: Path, home: Path, schema_runs: list[object]
) -> None:
    folder = extension(tmp_path)
    load(folder, Verdicts.in_home(home))
    (folder / "index.html").unlink()
    with pytest.raises(ManifestError, match=r"index\.html does not exist"):
        load(folder, Verdicts.in_home(home))
    assert len(schema_runs) == 1


def test_another_schema_finds_no_verdict(tmp_path: Path, home: Path, schema_runs: list[object]) -> None:
    folder = extension(tmp_path)
    load(folder, Verdicts.in_home(home))
    with registered(ECHO):  # one more kind: the composed schema changes
        load(folder, Verdicts.in_home(home))
    assert len(schema_runs) == 2 and len(kept(home)) == 2


@pytest.mark.parametrize("distribution", ["helm_desktop", "jsonschema"])
def test_another_version_of_helm_or_jsonschema_finds_no_verdict(
    tmp_path: Path,
    home: Path,
    schema_runs: list[object],
    fresh_versions: None,
    monkeypatch: pytest.MonkeyPatch,
    distribution: str,
) -> None:
    folder = extension(tmp_path)
    load(folder, Verdicts.in_home(home))
    upgraded = tmp_path / "site"
    (upgraded / f"{distribution}-99.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(upgraded))  # found first, as importlib.metadata would
    installed_version.cache_clear()
    assert installed_version(distribution.replace("_", "-")) == "99.0"
    load(folder, Verdicts.in_home(home))
    assert len(schema_runs) == 2 and len(kept(home)) == 2


def test_the_versions_are_those_importlib_metadata_reads(fresh_versions: None) -> None:
    from importlib.metadata import version

    assert installed_version("jsonschema") == version("jsonschema")
    assert installed_version("helm-desktop") == version("helm-desktop")
    assert installed_version("no-such-distribution") is None


def test_without_the_versions_no_verdict_is_kept_or_used(
    tmp_path: Path,
    home: Path,
    schema_runs: list[object],
    fresh_versions: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = extension(tmp_path)
    plain = load(folder)  # jsonschema imported, before its metadata is out of sight
    monkeypatch.setattr(sys, "path", [str(tmp_path / "no-metadata")])  # an egg, a bare bundle
    installed_version.cache_clear()
    for _ in range(2):
        assert load(folder, Verdicts.in_home(home)) == plain
    assert len(schema_runs) == 3 and not (home / "cache").exists()


def test_the_store_is_one_owner_only_file_written_once_per_new_verdict(tmp_path: Path, home: Path) -> None:
    a, b = extension(tmp_path, "a"), extension(tmp_path, "b")
    verdicts = Verdicts.in_home(home)
    load(a, verdicts)
    store = home / "cache" / "manifest-verdicts.json"
    assert store.stat().st_mode & 0o777 == 0o600 and (home / "cache").stat().st_mode & 0o777 == 0o700
    written = store.stat().st_ino
    for _ in range(3):
        load(a, verdicts)
        load(a, Verdicts.in_home(home))
    assert store.stat().st_ino == written  # a verdict found is never written again
    load(b, verdicts)
    assert store.stat().st_ino != written and len(kept(home)) == 2
    assert sorted(os.listdir(home / "cache")) == ["manifest-verdicts.json"]


def test_two_processes_keep_each_others_verdicts(tmp_path: Path, home: Path) -> None:
    first, second = Verdicts.in_home(home), Verdicts.in_home(home)
    assert "x" not in first and "x" not in second  # both have read the (missing) file
    load(extension(tmp_path, "a"), first)
    load(extension(tmp_path, "b"), second)
    assert len(kept(home)) == 2


DAMAGED = [
    pytest.param(b'{"version": 1, "valid": ["', id="cut-short"),
    pytest.param(b"not json", id="not-json"),
    pytest.param(b'{"version": 1, "valid": ["\xff"]}', id="not-utf8"),
    pytest.param(b"[]", id="not-an-object"),
    pytest.param(b'{"version": 2, "valid": []}', id="another-version"),
    pytest.param(b'{"version": 1, "valid": {"a": 1}}', id="valid-not-a-list"),
    pytest.param(b'{"version": 1, "valid": [1, 2]}', id="entries-not-text"),
    pytest.param(b'{"version": 1, "version": 1, "valid": []}', id="a-repeated-key"),
    pytest.param(b"[" * 600 + b"]" * 600, id="nested-too-deep"),
    pytest.param(b'{"version": 1, "valid": ["' + b"0" * 70_000 + b'"]}', id="too-large"),
]


@pytest.mark.parametrize("text", DAMAGED)
def test_a_damaged_store_is_ignored_and_replaced_at_the_next_write(
    tmp_path: Path, home: Path, schema_runs: list[object], text: bytes
) -> None:
    folder = extension(tmp_path)
    (home / "cache").mkdir()
    (home / "cache" / "manifest-verdicts.json").write_bytes(text)
    assert load(folder, Verdicts.in_home(home)) == load(folder)
    assert len(kept(home)) == 1
    load(folder, Verdicts.in_home(home))
    assert len(schema_runs) == 2  # the load without verdicts, and the first with


def test_a_store_that_cannot_be_read_or_written_leaves_the_load_working(
    tmp_path: Path, home: Path, schema_runs: list[object]
) -> None:
    folder = extension(tmp_path)
    (home / "cache" / "manifest-verdicts.json").mkdir(parents=True)  # a folder where the file goes
    assert load(folder, Verdicts.in_home(home)) == load(folder)
    assert load(folder, Verdicts.in_home(home)) == load(folder)
    assert len(schema_runs) == 4
    assert os.listdir(home / "cache") == ["manifest-verdicts.json"]  # no temp file left


def test_a_full_disk_leaves_the_load_working_and_the_store_as_it_was(
    tmp_path: Path, home: Path, schema_runs: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = extension(tmp_path, "a"), extension(tmp_path, "b")
    load(a, Verdicts.in_home(home))
    before = kept(home)
    tries: list[object] = []

    def full(src: object, dst: object) -> None:
        tries.append(dst)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    verdicts = Verdicts.in_home(home)
    with monkeypatch.context() as disk:
        disk.setattr(os, "replace", full)
        assert load(b, verdicts) == load(b)
        load(b, verdicts)  # known in this process: not written again
    assert len(tries) == 1
    assert kept(home) == before
    assert sorted(os.listdir(home / "cache")) == ["manifest-verdicts.json"]
    load(b, Verdicts.in_home(home))  # the next process validates it again, and keeps it
    assert len(schema_runs) == 4 and len(kept(home)) == 2


def test_no_home_is_made_to_keep_a_verdict(tmp_path: Path) -> None:
    folder = extension(tmp_path)
    assert load(folder, Verdicts.in_home(tmp_path / "no-home")) == load(folder)
    assert not (tmp_path / "no-home").exists()


def test_the_oldest_verdicts_go_first(
    tmp_path: Path, home: Path, schema_runs: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verdicts_module, "KEEP", 3)
    folders = [extension(tmp_path, name) for name in "abcd"]
    for folder in folders:
        load(folder, Verdicts.in_home(home))
    assert len(kept(home)) == 3
    for folder in folders[1:]:
        load(folder, Verdicts.in_home(home))
    assert len(schema_runs) == 4
    load(folders[0], Verdicts.in_home(home))  # dropped: validated again, and kept in place of b
    assert len(schema_runs) == 5
    load(folders[1], Verdicts.in_home(home))
    assert len(schema_runs) == 6


def test_a_full_store_stays_readable(tmp_path: Path, home: Path) -> None:
    full = [f"{i:064x}" for i in range(verdicts_module.KEEP)]
    Verdicts.in_home(home).add(full[0])
    (home / "cache" / "manifest-verdicts.json").write_text(json.dumps({"version": 1, "valid": full}))
    Verdicts.in_home(home).add("new")
    assert kept(home) == [*full[1:], "new"]
    assert (home / "cache" / "manifest-verdicts.json").stat().st_size <= verdicts_module.MAX_FILE_BYTES
    assert full[1] in Verdicts.in_home(home)
