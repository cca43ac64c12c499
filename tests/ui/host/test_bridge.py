"""The bridge object of one frame: calls one by one and in batches, answers at once and later."""

from __future__ import annotations

import asyncio
from typing import Any

from pytestqt.qtbot import QtBot

from broker.context import CallContext
from broker.summary import Confirmer
from tests.e2e.host.kit import RefuseConfirmer
from ui.aio import emitted
from ui.host.bridge import MAX_BATCH_CALLS, Bridge

CTX = CallContext("ws", "com.example.test", "frame-1")


class Answers:
    """Answers at once with the operation's name; ``wait`` waits for ``release`` first."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.seen: list[str] = []

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        self.seen.append(operation)
        if operation == "wait":
            await asyncio.wait_for(self.release.wait(), 5.0)
        return f'{{"ok":true,"data":"{operation}","error":null}}'


def _listen(bridge: Bridge) -> tuple[list[tuple[str, str]], list[list[list[str]]]]:
    single: list[tuple[str, str]] = []
    many: list[list[list[str]]] = []
    bridge.done.connect(lambda rid, text: single.append((rid, text)))
    bridge.doneMany.connect(many.append)
    return single, many


def test_the_answers_a_batch_has_at_once_go_back_in_one_message(qtbot: QtBot, run: Any) -> None:
    bridge = Bridge(Answers(), CTX, RefuseConfirmer())
    single, many = _listen(bridge)

    async def scenario() -> None:
        bridge.callMany([["1", "c", "a", "{}"], ["2", "c", "b", "{}"], ["3", "c", "d", "{}"]])

    run(scenario())
    assert single == []
    assert many == [
        [
            ["1", '{"ok":true,"data":"a","error":null}'],
            ["2", '{"ok":true,"data":"b","error":null}'],
            ["3", '{"ok":true,"data":"d","error":null}'],
        ]
    ]


def test_a_call_of_a_batch_that_waits_is_answered_on_its_own_when_it_ends(qtbot: QtBot, run: Any) -> None:
    answers = Answers()
    bridge = Bridge(answers, CTX, RefuseConfirmer())
    single, many = _listen(bridge)

    async def scenario() -> None:
        bridge.callMany([["1", "c", "wait", "{}"], ["2", "c", "now", "{}"]])
        assert single == [("2", '{"ok":true,"data":"now","error":null}')]  # the one ready: alone
        later = emitted(bridge.done, 5.0, lambda rid, _text: rid == "1")
        answers.release.set()
        await later

    run(scenario())
    assert single == [
        ("2", '{"ok":true,"data":"now","error":null}'),
        ("1", '{"ok":true,"data":"wait","error":null}'),
    ]
    assert many == []


def test_a_batch_is_read_up_to_its_bound_and_entries_of_another_shape_are_skipped(
    qtbot: QtBot, run: Any
) -> None:
    answers = Answers()
    bridge = Bridge(answers, CTX, RefuseConfirmer())
    _single, many = _listen(bridge)
    malformed: list[Any] = [["x", "c", "op"], ["y", "c", 3, "{}"], "z", None]
    calls = [[str(i), "c", f"op{i}", "{}"] for i in range(MAX_BATCH_CALLS + 5)]

    async def scenario() -> None:
        bridge.callMany(malformed + calls)

    run(scenario())
    read = MAX_BATCH_CALLS - len(malformed)
    assert answers.seen == [f"op{i}" for i in range(read)]
    assert [rid for rid, _ in many[0]] == [str(i) for i in range(read)]


def test_a_closed_bridge_takes_no_more_calls_and_ends_those_running_unanswered(
    qtbot: QtBot, run: Any
) -> None:
    answers = Answers()
    bridge = Bridge(answers, CTX, RefuseConfirmer())
    single, many = _listen(bridge)
    connected: list[bool] = []
    bridge.pageReady.connect(lambda: connected.append(True))

    async def scenario() -> None:
        bridge.call("1", "c", "wait", "{}")
        bridge.close()  # the frame is cut off; what its page sends from now on is dropped
        bridge.call("2", "c", "now", "{}")
        bridge.callMany([["3", "c", "now", "{}"], ["4", "c", "now", "{}"]])
        bridge.ready()
        await bridge.aclose()

    run(scenario())
    assert bridge.closed
    assert answers.seen == ["wait"]
    assert bridge.in_flight == 0
    assert (single, many, connected) == ([], [], [])
