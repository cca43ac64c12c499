"""Discovering, reviewing and adding an MCP App, against the server built with the real SDK."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from broker import extensions
from broker.approval import Standing
from broker.apps import review
from broker.apps.errors import AppChanged, AppError
from broker.apps.verify import open_app
from broker.mcp import discovery
from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, added, app_home

pytestmark = pytest.mark.usefixtures("mcp_app_server")


async def test_discovery_lists_the_ui_resource_with_the_tools_linked_to_it(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        apps = await discovery.list_apps(broker, "ws", "board")
        other = await discovery.list_apps(broker, "ws", "other")
    assert [(a.uri, a.name) for a in apps] == [(BOARD, "Board")]
    assert [t.name for t in apps[0].linked] == ["add_item", "list_items", "model_only", "show_board"]
    assert other == []


async def test_review_shows_only_app_visible_tools_with_writes_apart_and_what_the_html_declares(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(
            broker, tmp_path, "--connect", "http://127.0.0.1:9", "--resource", "https://cdn.example.com"
        )
        reviewed = await review.review(broker, "ws", "board", BOARD)
    assert [t.name for t in reviewed.reads] == ["list_items", "show_board"]
    assert [t.name for t in reviewed.writes] == ["add_item"]
    assert [t.name for t in reviewed.hidden] == ["model_only"]
    assert reviewed.document.csp.get("connectDomains") == ("http://127.0.0.1:9",)
    assert reviewed.document.permissions == ("clipboardWrite",)
    assert reviewed.resources == ("helm-test://notes/readme",)
    text = "\n".join(review.lines(reviewed))
    assert reviewed.document.sha256 in text
    assert "WRITE  tool add_item" in text
    assert "echo" not in text  # a model-only tool that is not even linked is not the app's business
    assert "connectDomains: http://127.0.0.1:9 — blocked" in text
    assert "resourceDomains: https://cdn.example.com — blocked unless you allow them" in text
    assert "clipboardWrite — not granted" in text


async def test_adding_an_app_installs_an_approved_extension_whose_manifest_pins_the_review(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--resource", "https://cdn.example.com")
        reviewed = await review.review(broker, "ws", "board", BOARD)
        manifest = await review.add(broker, reviewed, ["https://cdn.example.com"])
        current = broker.standing("ws", manifest.id).standing is Standing.CURRENT
        opened = await open_app(broker, "ws", manifest.id)
    app = manifest.app
    assert current and app is not None
    assert app.sha256 == reviewed.document.sha256 == opened.spec.sha256
    assert app.tools == (("add_item", True), ("list_items", False), ("show_board", False))
    assert app.allowed_resource_domains == ("https://cdn.example.com",)
    assert manifest.may_write
    assert (manifest.folder / "app.html").read_bytes() == opened.html


async def test_a_resource_domain_the_app_does_not_declare_cannot_be_allowed(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        with pytest.raises(AppError, match="not a resource domain the app declares"):
            await review.add(broker, reviewed, ["https://evil.example.com"])
        assert reviewed.ext_id not in broker.home.settings().workspace("ws").extensions


async def test_a_changed_html_is_refused_until_the_app_is_reviewed_and_added_again(tmp_path: Path) -> None:
    extra = tmp_path / "extra.html"
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--extra", str(extra))
        ext_id = await added(broker)
        extra.write_text("<p>changed</p>", encoding="utf-8")
        with pytest.raises(AppChanged) as refused:
            await open_app(broker, "ws", ext_id)
        again = await review.review(broker, "ws", "board", BOARD)
        await review.add(broker, again)
        opened = await open_app(broker, "ws", ext_id)
    assert refused.value.changes[0].startswith("the HTML changed")
    assert again.changes and again.changes[0].startswith("the HTML changed")
    assert opened.html.endswith(b"<p>changed</p></body></html>")


async def test_an_app_without_approval_does_not_open(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        with broker.home.update() as settings:
            settings.workspace("ws").extensions[ext_id].approval = None
        with pytest.raises(AppError, match="not approved"):
            await open_app(broker, "ws", ext_id)


async def test_a_tool_that_changed_since_the_review_leaves_nothing_approved(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        reviewed = await review.review(broker, "ws", "board", BOARD)
        tools = dict(reviewed.pins["tools"])
        tools["add_item"] = {**tools["add_item"], "digest": "0" * 64}  # what the user was shown
        seen = dataclasses.replace(reviewed, pins={"tools": tools})
        with pytest.raises(AppChanged, match="add it again") as changed:
            await review.add(broker, seen)
        installed = broker.home.settings().workspace("ws").extensions
    assert changed.value.changes == ("tool add_item: its definition changed",)
    assert reviewed.ext_id not in installed


async def test_reviewing_an_added_app_again_shows_its_allowed_domains_and_approving_keeps_it_disabled(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--resource", "https://cdn.example.com")
        ext_id = await added(broker, allow=("https://cdn.example.com",))
        extensions.set_enabled(broker.home, "ws", ext_id, False)
        again = await review.review_installed(broker, "ws", ext_id)
        await review.add(broker, again, again.allowed)
        standing = broker.standing("ws", ext_id).standing
    assert again.installed and again.changes == ()
    assert again.allowed == ("https://cdn.example.com",)
    assert "https://cdn.example.com — blocked unless you allow them (images, fonts, styles, scripts) " \
        "(allowed by your last approval)" in "\n".join(review.lines(again))  # fmt: skip
    assert standing is Standing.DISABLED  # approved, and still off as the user left it


async def test_a_tool_that_changed_while_an_added_app_was_reviewed_again_leaves_its_earlier_approval(
    tmp_path: Path,
) -> None:
    extra = tmp_path / "extra.html"
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--extra", str(extra))
        ext_id = await added(broker)
        approved = broker.manifest("ws", ext_id).digest()
        extra.write_text("<p>changed</p>", encoding="utf-8")
        again = await review.review_installed(broker, "ws", ext_id)
        tools = dict(again.pins["tools"])
        tools["add_item"] = {**tools["add_item"], "digest": "0" * 64}  # what the user was shown
        with pytest.raises(AppChanged, match="nothing was approved"):
            await review.add(broker, dataclasses.replace(again, pins={"tools": tools}))
        standing = broker.standing("ws", ext_id).standing
        digest = broker.manifest("ws", ext_id).digest()
        with pytest.raises(AppChanged, match="changed since you approved it"):
            await open_app(broker, "ws", ext_id)  # the new HTML still needs an approval
    assert standing is Standing.CURRENT and digest == approved


async def test_an_app_not_approved_names_the_command_that_shows_its_own_review(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        with broker.home.update() as settings:
            settings.workspace("ws").extensions[ext_id].approval = None
        message = broker.standing("ws", ext_id).message
    assert f"`helm app add -w ws -s board {BOARD}`" in message
    assert "helm ext approve" not in message
