"""A sink that is down never blocks or loses the local audit: its records queue (bounded) and
arrive once it is back, with a counted notice of those it had to drop.

Real receivers going away and coming back: rsyslogd stopped and started again on its ports, a
JSON Lines file whose folder (an unmounted share) appears later. A receiver that hangs in the
middle of a send is the one fake (``Stuck``): it is how a misbehaving one looks from inside.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from broker.audit import AuditLog, AuditRecord
from broker.errors import SettingsError
from broker.export import AuditExporter, SinkConfig, SinkStatus, parse_sink
from broker.export.records import Entry
from broker.export.senders import sender_for
from tests.servers.rsyslog import Rsyslog

FAST = (0.05, 0.2)


def record(n: int) -> AuditRecord:
    return AuditRecord(
        "ws", "com.example.x", "notes", "files", "write", "confirmed", "ok", request_digest=f"{n:064x}"
    )


@pytest.fixture
def exporters() -> Iterator[Callable[..., AuditExporter]]:
    made: list[AuditExporter] = []

    def make(sinks: Sequence[SinkConfig] = (), **kw: Any) -> AuditExporter:
        exporter = AuditExporter(lambda: tuple(sinks), retry=FAST, **kw)
        made.append(exporter)
        return exporter

    yield make
    for exporter in made:
        exporter.close(0.5)


def wait_until(done: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := done()):
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.02)
    return value


def state(exporter: AuditExporter) -> SinkStatus:
    [status] = exporter.status()
    return status


def digests(entries: list[dict[str, Any]]) -> list[Any]:
    return [e.get("request_digest", e.get("dropped")) for e in entries]


def test_a_stopped_rsyslog_gets_the_queued_records_and_a_drop_count_once_it_is_back(
    tmp_path: Path, exporters: Callable[..., AuditExporter]
) -> None:
    with Rsyslog(tmp_path / "rs") as rs:
        sink = parse_sink({"type": "syslog", "transport": "tcp", "address": f"127.0.0.1:{rs.tcp_port}"})
        exporter = exporters([sink], bound=3)
        log = AuditLog(tmp_path / "audit.jsonl", tap=exporter.audit)
        log.record(record(1))
        rs.wait_for(1)
        rs.stop()
        for n in range(2, 8):  # 2, 3, 4 wait; 5, 6, 7 are dropped
            log.record(record(n))
        down = wait_until(lambda: (s := state(exporter)).state == "down" and s.dropped == 3 and s, "down")
        assert (down.queued, down.dropped) == (3, 3)
        assert "3 record(s) dropped while it was down" in down.line()
        assert len(list(log.records())) == 7  # the local audit has every one
        rs.start()
        got = [json.loads(m["msg"]) for m in rs.wait_for(5)]
    assert digests(got) == [f"{n:064x}" for n in (1, 2, 3, 4)] + [3]
    notice = got[-1]
    assert notice["type"] == "dropped" and notice["first"] <= notice["last"]
    assert state(exporter).state == "ok"


def test_a_json_lines_sink_whose_folder_appears_later_gets_every_queued_record(
    tmp_path: Path, exporters: Callable[..., AuditExporter]
) -> None:
    share = tmp_path / "share"
    exporter = exporters([parse_sink({"type": "jsonl", "path": str(share / "helm.jsonl")})])
    log = AuditLog(tmp_path / "audit.jsonl", tap=exporter.audit)
    for n in range(3):
        log.record(record(n))
    wait_until(lambda: state(exporter).state == "down", "down")
    assert not share.exists()
    share.mkdir()
    lines = wait_until(lambda: (share / "helm.jsonl").exists() and len(_lines(share / "helm.jsonl")) == 3 and
                       _lines(share / "helm.jsonl"), "the records")  # fmt: skip
    assert digests(lines) == [f"{n:064x}" for n in range(3)]
    assert (share / "helm.jsonl").stat().st_mode & 0o777 == 0o600


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("ascii").splitlines()]


class Stuck:
    """A receiver that takes the first batch and then hangs until released."""

    def __init__(self) -> None:
        self.release, self.inside = threading.Event(), threading.Event()
        self.sent: list[Entry] = []

    def send(self, entries: Sequence[Entry]) -> None:
        self.inside.set()
        self.release.wait(30)
        self.sent.extend(entries)

    def close(self) -> None:
        return None


def test_a_sink_that_hangs_holds_up_no_record_and_drops_past_its_bound(
    tmp_path: Path, exporters: Callable[..., AuditExporter]
) -> None:
    stuck = Stuck()
    sink = parse_sink({"type": "jsonl", "path": str(tmp_path / "x.jsonl")})
    exporter = exporters([sink], bound=10, senders=lambda _config: stuck)
    log = AuditLog(tmp_path / "audit.jsonl", tap=exporter.audit)
    log.record(record(0))
    assert stuck.inside.wait(10)  # the sink's thread is now stuck inside its send
    for n in range(1, 100):
        log.record(record(n))  # each returns: nothing waits for the sink
    assert len(list(log.records())) == 100
    status = state(exporter)
    assert (status.queued, status.dropped) == (10, 90)  # record 0 (being sent) and 1..9 wait
    stuck.release.set()
    wait_until(lambda: len(stuck.sent) == 11, "the queue")
    assert digests(stuck.sent) == [f"{n:064x}" for n in range(10)] + [90]


def test_the_organisations_sinks_are_used_beside_the_users_and_a_broken_user_sink_stops_neither(
    tmp_path: Path, exporters: Callable[..., AuditExporter]
) -> None:
    user = parse_sink({"type": "jsonl", "path": str(tmp_path / "user.jsonl")}, name="mine")
    wanted: list[Any] = [user]

    def users() -> tuple[SinkConfig, ...]:
        if wanted == ["broken"]:
            raise SettingsError('teams.audit_sinks.x.type must be "jsonl" or "syslog"')
        return tuple(wanted)

    exporter = AuditExporter(users, retry=FAST)
    try:
        exporter.set_managed([parse_sink({"type": "jsonl", "path": str(tmp_path / "org.jsonl")})])
        log = AuditLog(tmp_path / "audit.jsonl", tap=exporter.audit)
        log.record(record(1))
        wanted[:] = ["broken"]
        log.record(record(2))
        wait_until(lambda: len(_maybe(tmp_path / "org.jsonl")) == 2, "the organisation's sink")
        wait_until(lambda: len(_maybe(tmp_path / "user.jsonl")) == 2, "the last good user sinks")
        statuses = wait_until(lambda: (s := exporter.status())[1].state == "ok" and s, "ok")
        assert [(s.managed, s.state) for s in statuses] == [
            (True, "ok"),
            (False, "ok"),
            (False, "misconfigured"),
        ]
        assert "set by your organisation" in statuses[0].line()
        wanted[:] = []
        log.record(record(3))
        wait_until(lambda: len(_maybe(tmp_path / "org.jsonl")) == 3, "the organisation's sink")
        assert [s.managed for s in exporter.status()] == [True]  # the user removed theirs
    finally:
        assert exporter.close(1.0) == 0
    assert len(_maybe(tmp_path / "user.jsonl")) == 2


def _maybe(path: Path) -> list[dict[str, Any]]:
    return _lines(path) if path.exists() else []


def test_closing_gives_up_on_a_sink_that_stays_down_and_counts_what_was_left(tmp_path: Path) -> None:
    sink = parse_sink({"type": "jsonl", "path": str(tmp_path / "missing" / "x.jsonl")})
    exporter = AuditExporter(lambda: (sink,), retry=FAST, senders=sender_for)
    log = AuditLog(tmp_path / "audit.jsonl", tap=exporter.audit)
    for n in range(4):
        log.record(record(n))
    assert exporter.close(0.2) == 4
    log.record(record(5))  # a closed export takes nothing, and the local log still does
    assert len(list(log.records())) == 5
