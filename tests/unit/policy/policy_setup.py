"""A policy file for tests: root-owned (the tests run as root), named by ``HELM_POLICY``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

NOBODY = 65534
"""An unprivileged user id (``nobody``), for a policy file someone else could have written."""


@dataclass
class PolicyFile:
    path: Path
    monkeypatch: pytest.MonkeyPatch

    def write(self, doc: dict[str, Any] | str, *, mode: int = 0o644) -> Path:
        """Deploy ``doc`` (a new file, renamed into place, as a deployment tool does) and name
        it in ``HELM_POLICY``."""
        text = doc if isinstance(doc, str) else json.dumps({"version": 1, **doc})
        staged = self.path.with_name(".policy.json.new")
        staged.write_text(text, encoding="utf-8")
        os.chmod(staged, mode)
        os.replace(staged, self.path)
        self.monkeypatch.setenv("HELM_POLICY", str(self.path))
        return self.path

    def remove(self) -> None:
        """No policy any more (the file and the variable gone)."""
        self.path.unlink(missing_ok=True)
        self.monkeypatch.delenv("HELM_POLICY", raising=False)


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PolicyFile:
    folder = tmp_path / "etc-helm"
    folder.mkdir()
    os.chmod(folder, 0o755)
    monkeypatch.delenv("HELM_POLICY", raising=False)
    return PolicyFile(folder / "policy.json", monkeypatch)
