"""Pins recorded at a connection's first contact go only into the approval the call was checked
against (a real home and a real installed, approved extension)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext
from broker.approval import record_first_contact
from broker.errors import CallError, ErrorCode
from broker.kinds.base import Connection
from broker.resolution import pin_first_contact
from broker.settings import Home, Workspace
from tests.helpers import manifest_dict, new_broker, setup_extension

FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
EXT = "com.example.test"


async def approved(tmp_path: Path) -> tuple[Broker, str]:
    broker = new_broker(tmp_path / "home")
    await setup_extension(broker, tmp_path, manifest_dict([FILES]))
    record = broker.home.settings().workspaces["ws"].extensions[EXT]
    assert record.approval is not None
    return broker, record.approval.digest


def pins(broker: Broker) -> dict[str, object]:
    record = broker.home.settings().workspaces["ws"].extensions[EXT]
    assert record.approval is not None
    return dict(record.approval.pins)


async def test_a_first_contact_pins_into_the_approval_it_was_checked_against(tmp_path: Path) -> None:
    broker, digest = await approved(tmp_path)
    assert record_first_contact(broker.home, "ws", EXT, digest, "notes", {"tools": ["a"]}) == {"tools": ["a"]}
    assert pins(broker)["notes"] == {"tools": ["a"]}


async def test_the_first_of_two_first_contacts_keeps_its_pin(tmp_path: Path) -> None:
    broker, digest = await approved(tmp_path)
    record_first_contact(broker.home, "ws", EXT, digest, "notes", {"tools": ["first"]})
    assert record_first_contact(broker.home, "ws", EXT, digest, "notes", {"tools": ["second"]}) == {
        "tools": ["first"]
    }
    assert pins(broker)["notes"] == {"tools": ["first"]}


async def test_an_empty_pin_is_replaced_by_the_first_real_one(tmp_path: Path) -> None:
    broker, digest = await approved(tmp_path)
    record_first_contact(broker.home, "ws", EXT, digest, "notes", {})
    assert record_first_contact(broker.home, "ws", EXT, digest, "notes", {"tools": ["a"]}) == {"tools": ["a"]}


async def test_a_call_whose_approval_changed_meanwhile_is_refused_and_pins_nothing(tmp_path: Path) -> None:
    broker, _ = await approved(tmp_path)
    with pytest.raises(CallError) as caught:
        record_first_contact(broker.home, "ws", EXT, "another-digest", "notes", {"tools": ["a"]})
    assert caught.value.code is ErrorCode.REFUSED
    assert "changed during this call" in caught.value.message
    assert "notes" not in pins(broker)


@pytest.mark.parametrize("extension", ["com.example.missing", EXT])
async def test_a_call_whose_extension_lost_its_approval_or_install_is_refused(
    tmp_path: Path, extension: str
) -> None:
    broker, digest = await approved(tmp_path)
    if extension == EXT:
        with broker.home.update() as settings:
            settings.workspace("ws").extensions[EXT].approval = None
    with pytest.raises(CallError, match="changed during this call"):
        record_first_contact(broker.home, "ws", extension, digest, "notes", {"tools": ["a"]})


class ToolsNow:
    """A kind that pins, as the mcp kind does: what it would pin now."""

    async def pin(self, workspace: Workspace, conn: Connection) -> Mapping[str, Any]:
        return {"tools": ["a"]}


def _damage_settings(home: Home) -> None:
    home.settings_path.write_text("{ damaged", encoding="utf-8")


def _block_the_settings_lock(home: Home) -> None:
    lock = home.path / ".settings.lock"
    lock.unlink()
    lock.mkdir()  # opening the lock fails, as a full disk or a wrong mode would


@pytest.mark.parametrize(
    ("damage", "expected", "words"),
    [
        (_damage_settings, ErrorCode.NOT_CONFIGURED, "Helm's settings cannot be updated"),
        (
            _block_the_settings_lock,
            ErrorCode.UNAVAILABLE,
            "Helm could not record its first contact with 'notes' in its settings (Is a directory); "
            "nothing was sent",
        ),
    ],
    ids=["settings damaged", "settings cannot be written"],
)
async def test_a_first_contact_the_home_cannot_record_refuses_the_call_clearly_and_pins_nothing(
    tmp_path: Path, damage: Callable[[Home], None], expected: ErrorCode, words: str
) -> None:
    broker, _ = await approved(tmp_path)
    resolved = broker._resolve(CallContext("ws", EXT, "frame"), "notes", "list", {})
    damage(broker.home)
    with pytest.raises(CallError) as caught:
        await pin_first_contact(broker.home, broker.audit, resolved, ToolsNow())  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.message) == (expected, words)
    assert [r.decision for r in broker.audit.records() if r.decision == "pinned"] == []
