"""Removing a kind breaks nothing else: in a copy of Helm whose folder of the files or the mcp
kind is deleted, every other module of broker/, app/ and ui/ imports (the file guard agents use,
MCP Apps' sessions and discovery included), and the test-only echo kind still works end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in COPIED:
        shutil.copytree(REPO / folder, where / folder, ignore=ignore)
    for file in COPIED_FILES:
        (where / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / file, where / file)
    shutil.rmtree(where / "broker" / "kinds" / kind)
    shutil.rmtree(where / "ui" / "kinds" / kind, ignore_errors=True)
    return where


@pytest.mark.parametrize("kind", ["files", "mcp"])
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
    assert kind not in report["kinds"] and "http" in report["kinds"]
    read, write = report["echo"]
    assert read == {
        "ok": True,
        "data": {"greeting": "hi", "said": "hello", "args": {"to": "you"}},
        "error": None,
    }
    assert write["ok"] is True
