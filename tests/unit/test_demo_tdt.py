"""The demo's TDT widgets: a real TDT workspace when tdt is installed, else the stand-in, which
says so. Calls go through the broker as each demo widget makes them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.demo import EXTENSIONS, SOURCE, set_up_demo
from broker import CallContext
from broker.mcp.session import McpLimits
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.kinds.mcp_setup import use_limits


@pytest.fixture(autouse=True)
def roomy_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_limits(monkeypatch, McpLimits(call_timeout=30.0, start_timeout=60.0, cancel_grace=1.0))


def widget(name: str) -> CallContext:
    return CallContext("demo", f"dev.helm.demo.{name}", "test")


def test_the_tdt_widget_set_is_first_party_and_declares_what_it_calls() -> None:
    tdt_widgets = {}
    for name in EXTENSIONS:
        manifest: dict[str, Any] = json.loads((SOURCE / "extensions" / name / "manifest.json").read_text())
        for conn in manifest["connections"]:
            if conn["kind"] == "tdt-mcp":
                tdt_widgets[name] = (sorted(conn["operations"]), sorted(conn.get("writes", [])))
    assert tdt_widgets == {
        "status": (["tdt_workspace_status"], []),
        "reminders": (
            ["tdt_reminder_list"],
            ["tdt_reminder_complete", "tdt_reminder_create", "tdt_reminder_snooze"],
        ),
        "brain": (["tdt_brain_search"], []),
        "candidates": (
            ["tdt_candidate_list", "tdt_candidate_read", "tdt_candidate_review_status"],
            ["tdt_candidate_review"],
        ),
    }


async def test_with_tdt_installed_the_demo_is_a_real_tdt_workspace(
    tmp_path: Path, tdt_program: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{Path(tdt_program[0]).parent}{os.pathsep}{os.environ['PATH']}")
    async with new_broker(tmp_path / "home") as broker:
        await set_up_demo(broker)
        ws = broker.home.settings().workspace("demo")
        status = await broker.call(widget("status"), "tdt", "tdt_workspace_status", {})
        reminders = await broker.call(widget("reminders"), "tdt", "tdt_reminder_list", {})
        found = await broker.call(widget("brain"), "tdt", "tdt_brain_search", {"query": "broker"})
        listed = await broker.call(widget("candidates"), "tdt", "tdt_candidate_list", {})
        [candidate] = listed["data"]["items"]
        read = await broker.call(
            widget("candidates"), "tdt", "tdt_candidate_read", {"reference": candidate["id"]}
        )
        review = {
            "id": candidate["id"],
            "expected_sha256": read["data"]["revision"],
            "decision": {"action": "approve"},
        }
        confirmer = ScriptedConfirmer()
        reviewed = await broker.request(
            widget("candidates"), "tdt", "tdt_candidate_review", review, confirmer
        )
        first = reminders["data"]["items"][0]
        done = {"id": first["id"], "reminder_revision": first["reminder_revision"]}
        completed = await broker.request(
            widget("reminders"), "tdt", "tdt_reminder_complete", done, ScriptedConfirmer()
        )
        # The notes widget's files are still there beside TDT's own.
        notes = await broker.call(widget("notes"), "notes", "list", {})
    assert (ws.root / ".tdt").is_dir() and ws.everyday and ws.tdt_command is None
    assert status["ok"] and status["warnings"] == [] and status["data"]["pending_candidates"] == 1
    assert [r["title"] for r in reminders["data"]["items"]] == [
        "Look at every widget",
        "Review the demo's candidate",
    ]
    assert {i["title"] for i in found["data"]["items"]} == {
        "Helm brokers every call",
        "Every write is confirmed",
    }
    assert dict(confirmer.shown[0].fields)["Action"] == f"Approve candidate {candidate['id']}"
    assert confirmer.shown[0].diff == read["data"]["markdown"]
    assert reviewed["data"]["status"] == "approved"
    assert completed["data"]["status"] == "done"
    assert "notes/welcome.md" in {f["path"] for f in notes["data"]["files"]}


async def test_without_tdt_the_demo_uses_the_stand_in_which_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    async with new_broker(tmp_path / "home") as broker:
        await set_up_demo(broker)
        ws = broker.home.settings().workspace("demo")
        status = await broker.call(widget("status"), "tdt", "tdt_workspace_status", {})
        reminders = await broker.call(widget("reminders"), "tdt", "tdt_reminder_list", {})
        confirmer = ScriptedConfirmer()
        write = {"title": "x", "body": "x", "due_at": "2030-01-01T00:00:00+00:00", "timezone": "UTC"}
        created = await broker.request(widget("reminders"), "tdt", "tdt_reminder_create", write, confirmer)
    assert not (ws.root / ".tdt").exists() and not ws.everyday
    assert status["ok"] and status["api_version"] == 1
    assert "stand-in" in status["warnings"][0] and "nothing is stored" in status["warnings"][0]
    assert len(reminders["data"]["items"]) == 2 and "stand-in" in reminders["warnings"][0]
    assert created["error"]["code"] == "refused" and confirmer.shown == []
