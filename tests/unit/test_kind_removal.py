"""Removing a kind breaks nothing else: in a copy of Helm whose folder of one kind (files, mcp,
http or db) is deleted, every other module of broker/, app/ and ui/ imports (the file guard
agents use, MCP Apps' sessions and discovery included), the test-only echo kind still works end
to end, and the main window is built without what that kind supplied to it (the sign-in of
http's profiles, the DB explorer) and with everything else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app import demo
from broker.kinds import KINDS
from tests.support import REPO

COPIED = ("broker", "app", "ui", "resources", "tests/kinds")
COPIED_FILES = (
    "tests/__init__.py",
    "tests/helpers.py",
    "tests/unit/__init__.py",
    "tests/unit/kind_removed_child.py",
)


def helm_without(kind: str, where: Path) -> Path:
    """A copy of Helm's sources with ``broker/kinds/<kind>/`` (and its Qt part, if any) gone."""
    for folder in COPIED:
        # The bytecode comes along: copied with their sources' times it stays valid, so the child
        # does not compile all of Helm again (the deleted kind's goes with its folder).
        shutil.copytree(REPO / folder, where / folder)
    for file in COPIED_FILES:
        (where / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / file, where / file)
    shutil.rmtree(where / "broker" / "kinds" / kind)
    shutil.rmtree(where / "ui" / "kinds" / kind, ignore_errors=True)
    return where


WINDOW_PART = {"http": "oauth", "db": "explorer"}


@pytest.mark.parametrize("kind", ["files", "mcp", "http", "db"])
def test_helm_without_a_kinds_folder_imports_whole_and_runs_another_kind(kind: str, tmp_path: Path) -> None:
    copy = helm_without(kind, tmp_path / "helm")
    env = {**os.environ, "PYTHONPATH": str(copy), "QT_QPA_PLATFORM": "offscreen"}
    child = "tests.unit.kind_removed_child"
    argv = [sys.executable, "-m", child, str(tmp_path / "home"), str(tmp_path / "work")]
    result = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["broker"] == str(copy / "broker" / "__init__.py")  # the copy, not this tree
    assert report["failed"] == {}
    gone = {name for name, spec in KINDS.items() if spec.adapter.startswith(f"broker.kinds.{kind}.")}
    assert kind in gone and report["kinds"] == sorted(set(KINDS) - gone)  # the folder's kinds only
    read, write = report["echo"]
    assert read == {
        "ok": True,
        "data": {"greeting": "hi", "said": "hello", "args": {"to": "you"}},
        "error": None,
    }
    assert write["ok"] is True
    window = report["window"]
    for part in ("oauth", "explorer"):  # a part is there exactly when its kind is
        assert window[part] is (WINDOW_PART.get(kind) != part)
    assert ("explorer" in window["menu"]) is (kind != "db")
    shown = [name for name in demo.EXTENSIONS if not demo._kinds_of(name) & gone]
    assert report["demo"] == shown  # the demo shows the widgets whose kinds are there
