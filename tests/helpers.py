"""Building blocks for broker tests: a Helm home with a workspace and installed extensions.

Real files on disk, the real broker; only the user's answer to a confirmation is scripted
(``ScriptedConfirmer``), as a person clicking would give it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from broker import Broker, CallContext, Decision, WriteSummary
from broker.credentials import FileStore
from broker.extensions import install, review_and_approve
from broker.workspaces import add_workspace


def manifest_dict(connections: list[dict[str, Any]], *, write: bool = False, **extra: Any) -> dict[str, Any]:
    """A valid manifest around ``connections``."""
    raw: dict[str, Any] = {
        "id": "com.example.test",
        "name": "Test extension",
        "version": "1.0.0",
        "kind": "widget",
        "entry": "index.html",
        "connections": connections,
    }
    if write:
        raw["permissions"] = {"write": True}
    raw.update(extra)
    return raw


def write_extension(
    folder: Path, manifest: Mapping[str, Any], html: str = "<!doctype html><p>test</p>"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (folder / str(manifest.get("entry", "index.html"))).write_text(html, encoding="utf-8")
    return folder


def new_broker(home: Path) -> Broker:
    """A broker on ``home`` with the 0600 file credential store (no keychain needed)."""
    return Broker(home, credentials=FileStore(home / "credentials.json"))


async def setup_extension(
    broker: Broker,
    tmp: Path,
    manifest: Mapping[str, Any],
    *,
    workspace: str = "ws",
    approved: bool = True,
) -> CallContext:
    """Create the workspace (root ``tmp/root``) if needed, install and approve an extension."""
    if workspace not in broker.home.settings().workspaces:
        root = tmp / "root"
        root.mkdir(parents=True, exist_ok=True)
        add_workspace(broker.home, workspace, root)
    folder = write_extension(tmp / "ext" / str(manifest["id"]), manifest)
    install(broker.home, workspace, folder)
    if approved:
        await review_and_approve(broker, workspace, str(manifest["id"]))
    return CallContext(workspace, str(manifest["id"]), "test-instance")


class ScriptedConfirmer:
    """Answers confirmations with a scripted decision and remembers what it was shown."""

    def __init__(self, decision: Decision = Decision.CONFIRMED) -> None:
        self.decision = decision
        self.shown: list[WriteSummary] = []

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.shown.append(summary)
        return self.decision


class WaitingConfirmer:
    """A user who has the write dialog open and has not answered yet (``asked`` is set then)."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")


FROM_FILE_SERVER = str(Path(__file__).resolve().parent / "servers" / "mcp_from_file.py")


def tools_file(path: Path, description: str = "echo, version 1") -> Path:
    """The tool definitions ``tests/servers/mcp_from_file.py`` serves: one tool, ``echo``.
    Call again with another description to change the tool as a server update would."""
    tool = {"name": "echo", "description": description, "inputSchema": {"type": "object"}}
    path.write_text(json.dumps([tool]), encoding="utf-8")
    return path


def from_file_command(path: Path) -> list[str]:
    import sys

    return [sys.executable, FROM_FILE_SERVER, str(path)]
