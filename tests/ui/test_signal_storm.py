"""Qt signals carrying bools and other values arrive intact however many are emitted.

PySide6 on Python 3.11 could drop a reference to True/False per emission until the interpreter
aborted; Helm requires 3.12, where those objects are immortal. This guards both facts.
"""

from __future__ import annotations

import sys
from typing import Any

from pytestqt.qtbot import QtBot

from ui.qt import QObject, Qt, Signal

EMISSIONS = 20_000


class Emitter(QObject):
    flag = Signal(bool)
    mixed = Signal(int, str, bool, object)


class Receiver(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.flags: list[bool] = []
        self.mixed: list[tuple[int, str, bool, Any]] = []

    def on_flag(self, value: bool) -> None:
        self.flags.append(value)

    def on_mixed(self, number: int, text: str, value: bool, payload: Any) -> None:
        self.mixed.append((number, text, value, payload))


def expected_flags() -> list[bool]:
    return [i % 3 == 0 for i in range(EMISSIONS)]


def test_helm_runs_on_python_312_or_newer():
    assert sys.version_info >= (3, 12)


def test_direct_signal_storm_delivers_every_bool_and_value(qtbot: QtBot):
    emitter, receiver = Emitter(), Receiver()
    emitter.flag.connect(receiver.on_flag)
    emitter.mixed.connect(receiver.on_mixed)
    true_refs = sys.getrefcount(True)
    for i in range(EMISSIONS):
        emitter.flag.emit(i % 3 == 0)
        emitter.mixed.emit(i, f"n{i}", i % 2 == 0, {"i": i, "ok": True})
    assert receiver.flags == expected_flags()
    assert len(receiver.mixed) == EMISSIONS
    assert receiver.mixed[-1] == (EMISSIONS - 1, f"n{EMISSIONS - 1}", False, {"i": EMISSIONS - 1, "ok": True})
    assert sys.getrefcount(True) >= true_refs


def test_queued_signal_storm_delivers_every_bool_through_the_event_loop(qtbot: QtBot):
    emitter, receiver = Emitter(), Receiver()
    emitter.flag.connect(receiver.on_flag, Qt.ConnectionType.QueuedConnection)
    emitter.mixed.connect(receiver.on_mixed, Qt.ConnectionType.QueuedConnection)
    for i in range(EMISSIONS):
        emitter.flag.emit(i % 3 == 0)
        emitter.mixed.emit(i, str(i), i % 2 == 1, None)
    qtbot.waitUntil(lambda: len(receiver.mixed) == EMISSIONS, timeout=60_000)
    assert receiver.flags == expected_flags()
    assert [m[2] for m in receiver.mixed] == [i % 2 == 1 for i in range(EMISSIONS)]
