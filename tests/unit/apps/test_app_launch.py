"""The tool that opens an app: its settings form, its run through the one path, and the
tools the user marks as only reading (pinned with their definition)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from broker import CallContext
from broker.apps import launch, review
from broker.apps.errors import AppChanged, AppError
from broker.apps.meta import AppTool, too_big
from broker.apps.verify import open_app
from broker.errors import CallError, ErrorCode
from broker.summary import Decision
from tests.helpers import ScriptedConfirmer, new_broker
from tests.servers.services import mcp_app_command
from tests.unit.apps.app_setup import BOARD, added, app_home, harness
from tests.unit.kinds.mcp_setup import add_stdio

COHORT = {
    "type": "object",
    "properties": {
        "metric": {"type": "string", "enum": ["retention", "revenue"], "default": "retention"},
        "cohorts": {"type": "integer", "minimum": 3, "maximum": 24, "default": 12, "title": "Cohorts"},
        "url": {"type": "string", "description": "A PDF"},
        "dark": {"type": "boolean"},
        "filters": {"type": "object"},
        "page-size": {"type": "number"},
    },
    "required": ["url", "filters", "page-size"],
}


def test_the_settings_form_follows_the_input_schema_with_its_defaults() -> None:
    form, unset = launch.settings_form(COHORT)
    assert form == {
        "metric": {"type": "choice", "choices": ["retention", "revenue"], "default": "retention"},
        "cohorts": {"type": "integer", "minimum": 3, "maximum": 24, "default": 12, "label": "Cohorts"},
        "url": {"type": "string", "maxLength": 4096, "description": "A PDF", "required": True},
        "dark": {"type": "boolean"},
    }
    assert unset == (
        launch.Unset("filters", "Helm's settings cannot hold its type"),
        launch.Unset("page-size", "its name cannot be a setting"),
    )


@pytest.mark.parametrize(
    ("values", "args", "missing"),
    [
        pytest.param({}, {"metric": "retention", "cohorts": 12}, ["url"], id="defaults-only"),
        pytest.param(
            {"url": "/tmp/a.pdf", "dark": True, "other": 1},
            {"metric": "retention", "cohorts": 12, "url": "/tmp/a.pdf", "dark": True},
            [],
            id="user-set-only-the-forms-fields",
        ),
        pytest.param({"url": "", "cohorts": None}, {"metric": "retention"}, ["url"], id="empty-left-out"),
    ],
)
def test_the_arguments_are_the_settings_and_a_required_empty_one_is_missing(
    values: dict[str, Any], args: dict[str, Any], missing: list[str]
) -> None:
    form, _ = launch.settings_form(COHORT)
    assert launch.arguments(form, values) == args
    assert launch.missing(form, launch.arguments(form, values)) == missing


def test_the_opening_tool_is_one_the_model_calls_visible_to_the_app_first() -> None:
    def tool(name: str, *visibility: str) -> AppTool:
        return AppTool(name, "", visibility, False, "ui://x")

    assert launch.opener([tool("a", "app"), tool("b", "model"), tool("c", "model", "app")]).name == "c"
    assert launch.opener([tool("a", "app"), tool("b", "model")]).name == "b"
    assert launch.opener([tool("z", "app"), tool("y", "app")]).name == "y"
    assert launch.opener([]) is None


async def test_opening_calls_the_linked_tool_and_tells_the_app_its_input_then_its_result(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed)
        h = await harness(broker, manifest.id)
        opening = launch.run(h.session, "show_board", {})
        await h.ask("ui/initialize", {"appCapabilities": {}, "protocolVersion": "2026-01-26"})
        h.session.receive(json.dumps({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}))
        envelope = await opening
        activity = [(r.connection, r.operation) for r in broker.activity.recent]
    notes = [m for m in h.window.sent if "method" in m]
    assert reviewed.opener is not None and reviewed.opener.name == "show_board"
    assert manifest.app is not None and manifest.app.opener == "show_board"
    assert envelope["ok"] is True
    assert [m["method"] for m in notes] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    assert notes[0]["params"] == {"arguments": {}}
    assert notes[1]["params"]["structuredContent"] == {"items": ["first"]}
    assert ("app", "show_board") in activity


async def test_an_opening_write_is_confirmed_and_a_decline_tells_the_app_it_was_cancelled(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed)
        confirm = ScriptedConfirmer(Decision.DECLINED)
        h = await harness(broker, manifest.id, confirm=confirm)
        h.session.receive(json.dumps({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}))
        envelope = await launch.run(h.session, "add_item", {"text": "x"})
    assert envelope["error"]["code"] == "declined" and len(confirm.shown) == 1
    cancelled = [m for m in h.window.sent if m.get("method") == "ui/notifications/tool-cancelled"]
    assert len(cancelled) == 1 and "declined" in cancelled[0]["params"]["reason"]


async def test_a_tool_marked_as_only_reading_runs_without_confirmation(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed, reads=["add_item"])
        confirm = ScriptedConfirmer(Decision.DECLINED)  # a question would decline the call
        h = await harness(broker, manifest.id, confirm=confirm)
        answer = await h.call("add_item", {"text": "milk"})
        lines = review.lines(await review.review_installed(broker, "ws", manifest.id))
    assert manifest.app is not None and manifest.app.marked_reads == ("add_item",)
    assert ("add_item", False) in manifest.app.tools
    assert answer["result"]["structuredContent"] == {"items": ["first", "milk"]}
    assert confirm.shown == []
    assert any("add_item — marked by you as only reading" in line for line in lines)


async def test_only_a_tool_helm_would_confirm_can_be_marked_as_only_reading(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        for wrong in ("list_items", "no_such_tool"):
            with pytest.raises(AppError, match="only those can be marked"):
                await review.add(broker, reviewed, reads=[wrong])
        assert reviewed.ext_id not in broker.home.settings().workspace("ws").extensions


async def test_a_marked_tool_that_changed_refuses_the_app_and_its_review_asks_again(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed, reads=["add_item"])
        kept = await review.review_installed(broker, "ws", manifest.id)
        add_stdio(broker, "board", mcp_app_command("--add-help", " (now it also mails someone)"))
        with pytest.raises(AppChanged) as refused:
            await open_app(broker, "ws", manifest.id)
        again = await review.review_installed(broker, "ws", manifest.id)
        ctx = CallContext("ws", manifest.id, "i1")
        call = await broker.request(ctx, "app", "add_item", {"text": "x"}, ScriptedConfirmer())
    assert kept.marked == ("add_item",), "an unchanged marked tool stays marked"
    assert any("tool add_item: description changed" in c for c in refused.value.changes)
    assert again.marked == (), "a changed tool asks again"
    assert call["error"]["code"] == "refused"


async def test_resources_list_names_only_the_resources_the_app_may_read(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        listed = await h.ask("resources/list")
        activity = [(r.connection, r.operation, r.outcome) for r in broker.activity.recent]
    assert sorted(r["uri"] for r in listed["result"]["resources"]) == ["helm-test://notes/readme", BOARD]
    assert all("mimeType" in r and "mime_type" not in r for r in listed["result"]["resources"]), "wire names"
    assert ("app", "resources/list", "ok") in activity


async def test_an_app_too_large_is_refused_with_how_much_it_is_over(tmp_path: Path) -> None:
    extra = tmp_path / "extra.html"
    extra.write_text("x" * (9 * 1024 * 1024), encoding="utf-8")
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--extra", str(extra))
        with pytest.raises(CallError) as refused:
            await review.review(broker, "ws", "board", BOARD)
    assert refused.value.code is ErrorCode.TOO_LARGE
    assert refused.value.message.startswith(f"the app's HTML {BOARD} is 9.")
    assert "more than Helm takes (8.0 MiB (8388608 bytes))" in refused.value.message


def test_a_size_refusal_says_what_and_by_how_much() -> None:
    assert too_big("the app's HTML ui://x", 4_500_000, 4 * 1024 * 1024) == (
        "the app's HTML ui://x is 4.3 MiB (4500000 bytes), 298.5 KiB (305696 bytes) more than Helm "
        "takes (4.0 MiB (4194304 bytes))"
    )


async def test_after_stop_neither_the_opening_call_nor_a_marked_read_reaches_the_server(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed, reads=["add_item"])
        h = await harness(broker, manifest.id)
        h.session.receive(json.dumps({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}))
        broker.activity.stop("ws", manifest.id)
        opening = await launch.run(h.session, "show_board", {})
        marked = await h.call("add_item", {"text": "never"})
        broker.activity.resume("ws", manifest.id)
        items = await h.call("list_items")
        activity = [(r.operation, r.outcome) for r in broker.activity.recent]
    assert opening["error"]["code"] == "refused"
    assert marked["error"]["data"]["code"] == "refused"
    assert items["result"]["structuredContent"] == {"items": ["first"]}, "nothing was added"
    assert ("show_board", "refused") in activity and ("add_item", "refused") in activity
    cancelled = [m for m in h.window.sent if m.get("method") == "ui/notifications/tool-cancelled"]
    assert len(cancelled) == 1
