"""The kill switch: what a stop covers, how it is kept, and what a damaged file does."""

from __future__ import annotations

import fcntl
import json
import queue
import stat
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import IO

import pytest

import broker.killswitch
from broker.errors import SettingsError
from broker.killswitch import KillSwitch, Stop, stopped_message

REPO = Path(__file__).resolve().parents[2]
WAIT = 20.0


def test_a_stop_covers_only_its_own_extension_in_its_own_workspace() -> None:
    stop = Stop("ws", "com.example.a")
    assert stop.covers("ws", "com.example.a", "gh")
    assert not stop.covers("ws", "com.example.b", "gh")
    assert not stop.covers("other", "com.example.a", "gh")
    assert not stop.covers("other", "com.example.b", "gh")


def test_a_connection_stop_covers_only_that_connection() -> None:
    stop = Stop("ws", "com.example.a", "gh")
    assert stop.covers("ws", "com.example.a", "gh")
    assert not stop.covers("ws", "com.example.a", "db")
    assert not stop.covers("ws", "com.example.b", "gh")


def test_stopping_one_extension_refuses_its_calls_and_no_others(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.a", None, True)
    refused = switch.refusal("ws", "com.example.a", "gh")
    assert refused is not None and "the user stopped com.example.a" in refused.message
    assert switch.refusal("ws", "com.example.b", "gh") is None
    assert switch.refusal("ws2", "com.example.a", "gh") is None


def test_stopping_a_connection_refuses_only_that_connection(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.a", "gh", True)
    refused = switch.refusal("ws", "com.example.a", "gh")
    assert refused is not None and "connection 'gh' of com.example.a" in refused.message
    assert switch.refusal("ws", "com.example.a", "db") is None
    assert switch.is_stopped("ws", "com.example.a", "gh")
    assert not switch.is_stopped("ws", "com.example.a")


def test_a_stop_outlives_a_restart_until_turned_back_on(tmp_path: Path) -> None:
    KillSwitch(tmp_path).set("ws", "com.example.a", None, True)
    again = KillSwitch(tmp_path)
    assert [s.key for s in again.stops()] == [("ws", "com.example.a", None)]
    assert again.refusal("ws", "com.example.a", "gh") is not None
    again.set("ws", "com.example.a", None, False)
    assert KillSwitch(tmp_path).stops() == []
    assert KillSwitch(tmp_path).refusal("ws", "com.example.a", "gh") is None


def test_stopping_twice_keeps_the_first_time(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    first = switch.set("ws", "com.example.a", None, True)
    assert switch.set("ws", "com.example.a", None, True) == first
    assert first.since


def test_the_file_is_private_to_the_user(tmp_path: Path) -> None:
    home = tmp_path / "config" / "home"
    KillSwitch(home).set("ws", "com.example.a", None, True)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "stopped.json").stat().st_mode) == 0o600
    data = json.loads((home / "stopped.json").read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert data["stopped"][0]["connection"] is None


DAMAGED = [
    b"not json",
    b"[]",
    b'{"version": 2, "stopped": []}',
    b'{"stopped": []}',
    b'{"version": 1, "stopped": {}}',
    b'{"version": 1}',
    b'{"version": 1, "stopped": ["x"]}',
    b'{"version": 1, "stopped": [{"workspace": 1, "extension": "e"}]}',
    b'{"version": 1, "stopped": [{"workspace": "w", "extension": null}]}',
    b'{"version": 1, "stopped": [{"workspace": "w", "extension": "e", "connection": 3}]}',
    b'{"version": 1, "version": 1, "stopped": []}',
    b'{"version": 1, "stopped": [{"workspace": "w", "extension": "e", "by": 1, "reason": "r"}]}',
    b'{"version": 1, "stopped": [{"workspace": "w", "extension": "e", "by": "catalogue", "reason": 2}]}',
]


@pytest.mark.parametrize("content", DAMAGED)
def test_a_damaged_file_refuses_every_call_and_is_left_as_it_is(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "stopped.json").write_bytes(content)
    switch = KillSwitch(tmp_path)
    refused = switch.refusal("ws", "any.extension", "any")
    assert refused is not None and "damaged" in refused.message
    with pytest.raises(SettingsError):
        switch.stops()
    with pytest.raises(SettingsError):
        switch.set("ws", "com.example.a", None, True)
    assert (tmp_path / "stopped.json").read_bytes() == content


def test_a_valid_file_with_a_connection_and_no_since_is_read(tmp_path: Path) -> None:
    (tmp_path / "stopped.json").write_text(
        '{"version": 1, "stopped": [{"workspace": "w", "extension": "e", "connection": "c"}]}',
        encoding="utf-8",
    )
    assert KillSwitch(tmp_path).stops() == [Stop("w", "e", "c", "")]


def test_a_change_by_another_helm_process_is_seen(tmp_path: Path) -> None:
    mine, other = KillSwitch(tmp_path), KillSwitch(tmp_path)
    assert mine.refusal("ws", "com.example.a", "gh") is None
    other.set("ws", "com.example.a", None, True)
    assert mine.is_stopped("ws", "com.example.a")
    other.set("ws", "com.example.a", None, False)
    assert not mine.is_stopped("ws", "com.example.a")
    (tmp_path / "stopped.json").unlink()
    assert mine.stops() == []


def test_a_damaged_file_that_is_fixed_lets_calls_through_again(tmp_path: Path) -> None:
    (tmp_path / "stopped.json").write_bytes(b"not json")
    switch = KillSwitch(tmp_path)
    with pytest.raises(SettingsError):
        switch.stops()
    (tmp_path / "stopped.json").write_bytes(b'{"version": 1, "stopped": []}')
    assert switch.stops() == []
    assert switch.refusal("ws", "com.example.a", "gh") is None


def test_a_refused_call_and_a_cancelled_one_say_what_happened() -> None:
    stop = Stop("ws", "com.example.a", "gh")
    refused = stopped_message(stop)
    assert "nothing was sent" in refused and "while this call was running" not in refused
    cancelled = stopped_message(stop, running=True)
    assert "while this call was running; Helm cancelled it" in cancelled
    assert "connection 'gh' of com.example.a" in cancelled


def test_a_call_sees_another_processs_stop_within_half_a_second_and_not_sooner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [100.0]
    monkeypatch.setattr(broker.killswitch.time, "monotonic", lambda: now[0])
    mine, other = KillSwitch(tmp_path), KillSwitch(tmp_path)
    assert mine.refusal("ws", "com.example.a", "gh") is None
    other.set("ws", "com.example.a", None, True)
    now[0] = 100.49
    assert mine.refusal("ws", "com.example.a", "gh") is None  # the file is looked at twice a second
    now[0] = 100.5
    assert mine.refusal("ws", "com.example.a", "gh") is not None


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    KillSwitch(tmp_path).set("ws", "com.example.a", None, True)
    reads: list[Path] = []
    real = broker.killswitch._read

    def counted(path: Path) -> dict[tuple[str, str, str | None], Stop]:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(broker.killswitch, "_read", counted)
    switch = KillSwitch(tmp_path)
    for _ in range(3):
        assert switch.is_stopped("ws", "com.example.a")
    assert len(reads) == 1


def test_a_change_waits_for_another_helm_process_holding_the_lock(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.a", None, True)
    with open(tmp_path / ".stopped.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=switch.set, args=("ws", "com.example.b", None, True))
        worker.start()
        worker.join(0.3)
        blocked = worker.is_alive()
        fcntl.flock(held, fcntl.LOCK_UN)
    worker.join()
    assert blocked
    assert {s.extension for s in KillSwitch(tmp_path).stops()} == {"com.example.a", "com.example.b"}


def other_process(home: Path, extension: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    """A second Helm process stopping ``extension`` (``tests/unit/killswitch_child.py``), and
    its output lines as they come (so every wait on it can time out)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.unit.killswitch_child", str(home), extension],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:
            for line in proc.stdout:
                lines.put(line.strip())

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def test_a_change_waits_for_another_process_in_the_middle_of_its_own_so_both_stops_survive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The other process has read the file and, holding the lock, has not written yet. Had this
    # process written in between, the other's write (of what it read before) would drop its stop.
    proc, lines = other_process(tmp_path, "com.example.other")
    try:
        assert lines.get(timeout=WAIT) == "holding"
        asked = threading.Event()

        def flock(file: int | IO[str], operation: int) -> None:
            asked.set()  # asking for the lock (or, had it taken none, done writing)
            fcntl.flock(file, operation)

        locks = SimpleNamespace(flock=flock, LOCK_EX=fcntl.LOCK_EX, LOCK_UN=fcntl.LOCK_UN)
        monkeypatch.setattr(broker.killswitch, "fcntl", locks)
        mine = KillSwitch(tmp_path)
        worker = threading.Thread(target=mine.set, args=("ws", "com.example.mine", None, True))
        worker.start()
        assert asked.wait(WAIT)
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert lines.get(timeout=WAIT) == "done"
        worker.join(WAIT)
        assert not worker.is_alive()
        assert proc.wait(WAIT) == 0
    finally:
        proc.kill()
        proc.wait(WAIT)
        if proc.stdin is not None:
            proc.stdin.close()
    assert {s.extension for s in KillSwitch(tmp_path).stops()} == {"com.example.other", "com.example.mine"}


def test_a_change_keeps_the_stops_another_process_wrote_since_the_last_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(broker.killswitch.time, "monotonic", lambda: 100.0)  # no recheck is due
    mine, other = KillSwitch(tmp_path), KillSwitch(tmp_path)
    assert mine.refusal("ws", "com.example.a", "gh") is None
    other.set("ws", "com.example.b", None, True)
    mine.set("ws", "com.example.a", None, True)
    assert {s.extension for s in KillSwitch(tmp_path).stops()} == {"com.example.a", "com.example.b"}


def test_the_file_lists_stops_in_order_readably(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.ü", "gh", True)
    switch.set("ws", "com.example.ü", None, True)
    switch.set("a", "com.example.z", None, True)
    text = (tmp_path / "stopped.json").read_text(encoding="utf-8")
    rows = json.loads(text)["stopped"]
    assert [(r["workspace"], r["connection"]) for r in rows] == [("a", None), ("ws", None), ("ws", "gh")]
    assert '\n  "stopped": [\n    {\n      "workspace": "a",' in text
    assert "com.example.ü" in text
    assert text.endswith("}\n")


def test_a_stop_helm_made_keeps_who_and_why_over_a_restart_and_every_refusal_names_it(tmp_path: Path) -> None:
    KillSwitch(tmp_path).set(
        "ws", "com.example.a", None, True, by="catalogue", reason="catalogue acme withdrew it"
    )
    again = KillSwitch(tmp_path)
    (stop,) = again.stops()
    assert (stop.by, stop.reason) == ("catalogue", "catalogue acme withdrew it")
    refusal = again.refusal("ws", "com.example.a", "gh")
    assert refusal is not None
    assert refusal.message == "Helm stopped com.example.a: catalogue acme withdrew it; nothing was sent"
    assert "cancelled" in stopped_message(stop, running=True)


def test_helm_s_stop_replaces_the_user_s_with_its_reason_and_a_user_stop_is_written_as_before(
    tmp_path: Path,
) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.a", None, True)
    assert json.loads((tmp_path / "stopped.json").read_text())["stopped"][0].keys() == {
        "workspace", "extension", "connection", "since"
    }  # fmt: skip
    switch.set("ws", "com.example.a", None, True, by="catalogue", reason="withdrawn")
    assert [s.reason for s in switch.stops()] == ["withdrawn"]


def test_the_user_stopping_again_keeps_helm_s_reason_and_a_stop_by_helm_without_one_keeps_who(
    tmp_path: Path,
) -> None:
    switch = KillSwitch(tmp_path)
    switch.set("ws", "com.example.a", None, True, by="catalogue", reason="withdrawn")
    switch.set("ws", "com.example.a", None, True)
    assert [(s.by, s.reason) for s in KillSwitch(tmp_path).stops()] == [("catalogue", "withdrawn")]
    switch.set("ws", "com.example.b", None, True, by="catalogue")
    assert {s.extension: s.by for s in KillSwitch(tmp_path).stops()}["com.example.b"] == "catalogue"
