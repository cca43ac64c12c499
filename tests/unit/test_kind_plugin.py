"""A kind is one folder: the test-only ``echo`` kind (tests/kinds/echo), built by following
docs/architecture.md, is validated, reviewed, called, confirmed and given a ``helm`` command
group with no change anywhere else."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from app.cli import main
from broker import Broker, Decision, envelope
from broker.credentials import FileStore
from broker.errors import CallError, ErrorCode
from broker.kinds import KINDS, registered
from broker.manifest import schema, validate
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension, write_extension
from tests.kinds.echo import ECHO

ROOM = {"id": "e", "kind": "echo", "room": "lobby", "operations": ["hello"], "writes": ["hey"]}


@pytest.fixture
def echo() -> Iterator[None]:
    with registered(ECHO):
        yield


def helm(home: Path, monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    return main(["--home", str(home), *argv])


def test_the_kind_is_known_only_while_registered(echo: None) -> None:
    assert "echo" in KINDS
    assert validate(manifest_dict([ROOM], write=True)) == []
    both = {**ROOM, "writes": ["hello"]}
    assert [i.path for i in validate(manifest_dict([both], write=True))] == ["$.connections[0].writes[0]"]


def test_the_schema_with_the_kind_added_is_valid_json_schema(echo: None) -> None:
    # Helm checks no schema against the metaschema when it runs: a kind's schema is checked here.
    composed = schema()
    jsonschema.validators.validator_for(composed).check_schema(composed)
    assert "echo" in composed["$defs"]["connection"]["properties"]["kind"]["enum"]


def test_without_the_kind_its_connections_are_refused_by_the_schema() -> None:
    assert "echo" not in KINDS
    assert any(i.path == "$.connections[0].kind" for i in validate(manifest_dict([ROOM], write=True)))


def test_the_kind_has_the_envelope_its_spec_declares(echo: None) -> None:
    failed = envelope.failure("echo", CallError(ErrorCode.REFUSED, "no"))
    assert set(failed) == {"ok", "data", "error"}


def test_plugin_review_on_the_terminal_shows_the_kinds_lines(
    echo: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_extension(tmp_path / "ext", manifest_dict([ROOM], write=True))
    assert helm(tmp_path / "home", monkeypatch, "ext", "review", str(folder)) == 0
    out = capsys.readouterr().out
    assert "[e] echo — room lobby" in out
    assert "read   say hello" in out
    assert "WRITE  shout hey" in out


def test_the_kinds_command_group_adds_lists_and_removes_rooms(
    echo: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert helm(home, monkeypatch, "echo", "add", "lobby", "--greeting", "hi", stdin="tok-1\n") == 0
    assert json.loads((home / "settings.json").read_text())["rooms"] == {"lobby": {"greeting": "hi"}}
    assert FileStore(home / "credentials.json").get("rooms/lobby/token") == "tok-1"
    capsys.readouterr()
    assert helm(home, monkeypatch, "echo", "list", "--json") == 0
    assert json.loads(capsys.readouterr().out) == [{"name": "lobby", "greeting": "hi"}]
    assert helm(home, monkeypatch, "echo", "remove", "lobby") == 0
    assert FileStore(home / "credentials.json").get("rooms/lobby/token") is None
    assert helm(home, monkeypatch, "echo", "add", "bad name", "--greeting", "hi", stdin="t\n") == 1
    assert "letters, digits" in capsys.readouterr().err


def add_room(broker: Broker) -> None:
    assert ECHO.profiles is not None
    ECHO.profiles.store(broker.home, broker.credentials).save(
        ECHO.profiles.parse("lobby", {"greeting": "hi"}), {"token": "t"}
    )


async def test_a_read_and_a_confirmed_write_go_through_the_kind(echo: None, tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        add_room(broker)
        ctx = await setup_extension(broker, tmp_path, manifest_dict([ROOM], write=True))
        said = await broker.call(ctx, "e", "hello", {"to": "you"})
        confirm = ScriptedConfirmer(Decision.CONFIRMED)
        shouted = await broker.request(ctx, "e", "hey", {"loud": True}, confirm)
    assert said == {
        "ok": True,
        "data": {"greeting": "hi", "said": "hello", "args": {"to": "you"}},
        "error": None,
    }
    assert shouted["ok"] is True
    (summary,) = confirm.shown
    assert (summary.kind, summary.title) == ("echo", "Confirm shout")
    assert summary.fields == (("Room", "lobby"), ("Phrase", "hey"))


async def test_the_test_button_of_a_room_reaches_the_running_kind(echo: None, tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        add_room(broker)
        assert ECHO.probe is not None
        outcome = await ECHO.probe(await broker.kind(ECHO), "lobby", {})
    assert outcome.ok
    assert "'hi'" in outcome.message
