"""Replay through the real broker: recorded envelopes with no profile or server, every check
before the kind unchanged, and a write answered only after the confirmation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, Decision
from broker.authoring.fixtures import FixtureBook
from broker.authoring.replay import REPLAY_NOTE, replay_kinds
from broker.credentials import FileStore
from broker.kinds import KINDS
from tests.helpers import ScriptedConfirmer, manifest_dict, setup_extension

API = {
    "id": "api",
    "kind": "http",
    "service": "nowhere",  # no such profile in this home
    "calls": {
        "posts": {"method": "GET", "path": "/posts", "query": {"_limit": "{limit}"}},
        "close": {"method": "PATCH", "path": "/posts/{id}", "body": {"state": "closed"}, "write": True},
    },
}
POSTS = {"ok": True, "status": 200, "data": [{"id": 1, "title": "recorded"}], "error": None}
CLOSED = {"ok": True, "status": 200, "data": {"id": 1, "state": "closed"}, "error": None}


@pytest.fixture
async def replayed(tmp_path: Path) -> Any:
    book = FixtureBook(tmp_path / "fixtures")
    book.record("api", "posts", {"limit": 1}, POSTS)
    book.record("api", "close", {"id": 1}, CLOSED)
    home = tmp_path / "home"
    broker = Broker(
        home, credentials=FileStore(home / "credentials.json"), kinds=replay_kinds(book, tuple(KINDS))
    )
    async with broker:
        ctx = await setup_extension(broker, tmp_path, manifest_dict([API], write=True))
        yield broker, ctx, book


async def test_a_read_gets_its_recorded_envelope_with_no_profile_or_server(
    replayed: tuple[Broker, CallContext, FixtureBook],
) -> None:
    broker, ctx, _ = replayed
    assert broker.home.settings().profiles("services") == {}
    assert await broker.call(ctx, "api", "posts", {"limit": 1}) == POSTS


async def test_a_call_without_a_fixture_is_unavailable_and_says_where_to_add_one(
    replayed: tuple[Broker, CallContext, FixtureBook],
) -> None:
    broker, ctx, book = replayed
    result = await broker.call(ctx, "api", "posts", {"limit": 2})
    assert result["error"]["code"] == "unavailable"
    assert str(book.file("api")) in result["error"]["message"]


async def test_undeclared_operations_and_bad_arguments_are_refused_as_without_replay(
    replayed: tuple[Broker, CallContext, FixtureBook],
) -> None:
    broker, ctx, _ = replayed
    assert (await broker.call(ctx, "api", "delete_all", {}))["error"]["code"] == "refused"
    assert (await broker.call(ctx, "api", "posts", {"limit": [1]}))["error"]["code"] == "refused"


async def test_a_replayed_write_is_answered_only_after_the_confirmation(
    replayed: tuple[Broker, CallContext, FixtureBook],
) -> None:
    broker, ctx, book = replayed
    cancel, confirm = ScriptedConfirmer(Decision.DECLINED), ScriptedConfirmer(Decision.CONFIRMED)
    declined = await broker.request(ctx, "api", "close", {"id": 1}, cancel)
    confirmed = await broker.request(ctx, "api", "close", {"id": 1}, confirm)
    without = await broker.call(ctx, "api", "close", {"id": 1})
    assert declined["error"]["code"] == "declined"
    assert confirmed == CLOSED
    assert without["error"]["code"] == "confirmation_required"
    (summary,) = confirm.shown
    assert REPLAY_NOTE in summary.request
    assert ("Fixture", f"{book.file('api')} (ok)") in summary.fields


async def test_an_extension_not_approved_is_refused_in_replay_too(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path / "fixtures")
    book.record("api", "posts", {"limit": 1}, POSTS)
    home = tmp_path / "home"
    async with Broker(
        home, credentials=FileStore(home / "c.json"), kinds=replay_kinds(book, ("http",))
    ) as broker:
        ctx = await setup_extension(broker, tmp_path, manifest_dict([API], write=True), approved=False)
        result = await broker.call(ctx, "api", "posts", {"limit": 1})
    assert result["error"]["code"] == "refused"
    assert "not approved yet" in result["error"]["message"]
