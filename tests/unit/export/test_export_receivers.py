"""Audit records reach a real rsyslogd (UDP, TCP with octet counting, a unix socket) and a JSON
Lines file, in the documented schema, and never carry an argument value or a secret.

Each test starts its own rsyslogd (``tests.servers.rsyslog``) and reads back the file it writes:
what rsyslog parsed (an RFC 5424 message is ``version`` 1 with Helm's fields in place) and the
JSON message. The calls are real: a files write with a canary in its path and its text, a
declined one, and an http read whose answer echoes a canary token (a redaction record).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from broker import Broker, CallContext, Decision, teams
from broker.export.config import FACILITIES
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.servers.rsyslog import Rsyslog
from tests.servers.services import HttpServer
from tests.support import REPO

CANARY_VALUE = "canary-value-5e1f"
CANARY_SECRET = "canary-secret-9a7b3c"
SCHEMA = json.loads((REPO / "resources" / "audit-export.schema.json").read_text("utf-8"))
NOTES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["notes/*.md"],
         "operations": ["read", "write"]}  # fmt: skip
API = {
    "id": "api",
    "kind": "http",
    "service": "svc",
    "calls": {"bearer": {"method": "GET", "path": "/bearer"}},
}


@pytest.fixture
def rsyslog(tmp_path: Path) -> Iterator[Rsyslog]:
    system_socket = Path("/dev/log").exists()
    with Rsyslog(tmp_path / "rsyslog") as server:
        yield server
    assert Path("/dev/log").exists() is system_socket  # the system's socket was left alone


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


async def extension(broker: Broker, tmp_path: Path, base_url: str) -> CallContext:
    profile = ServiceProfile("svc", base_url, "token", "Authorization", "bearer")
    SERVICES.store(broker.home, broker.credentials).save(profile, {"token": CANARY_SECRET})
    ctx = await setup_extension(broker, tmp_path, manifest_dict([NOTES, API], write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / f"{CANARY_VALUE}.md").write_text("hello\n")
    return ctx


def write_args() -> dict[str, Any]:
    return {
        "path": f"notes/{CANARY_VALUE}.md",
        "text": f"the {CANARY_VALUE} text\n",
        "expected_sha256": hashlib.sha256(b"hello\n").hexdigest(),
    }


def add_sinks(broker: Broker, rsyslog: Rsyslog, jsonl: Path) -> None:
    teams.add_sink(broker.home, "file", {"type": "jsonl", "path": str(jsonl), "activity": True})
    for transport, address in (
        ("udp", f"127.0.0.1:{rsyslog.udp_port}"),
        ("tcp", f"127.0.0.1:{rsyslog.tcp_port}"),
        ("unix", str(rsyslog.socket_path)),
    ):
        teams.add_sink(broker.home, transport, {"type": "syslog", "transport": transport, "address": address})


def jsonl_entries(path: Path, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text("ascii").splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)


async def test_audit_records_reach_rsyslog_over_udp_tcp_and_a_socket_and_the_json_lines_file(
    broker: Broker, tmp_path: Path, rsyslog: Rsyslog, httpbin_server: HttpServer
) -> None:
    jsonl = tmp_path / "export" / "helm.jsonl"
    jsonl.parent.mkdir()
    add_sinks(broker, rsyslog, jsonl)
    ctx = await extension(broker, tmp_path, httpbin_server.url)
    assert (await broker.request(ctx, "notes", "write", write_args(), ScriptedConfirmer()))["ok"]
    declined = await broker.request(ctx, "notes", "write", write_args(), ScriptedConfirmer(Decision.DECLINED))
    assert declined["error"]["code"] == "declined"
    assert (await broker.call(ctx, "api", "bearer", {}))["ok"]  # httpbin echoes the token: redacted
    local = [(r.decision, r.outcome) for r in broker.audit.records()]
    assert local == [
        ("confirmed", "sending"),
        ("confirmed", "ok"),
        ("declined", "nothing sent"),
        ("redacted", "ok"),
    ]

    messages = rsyslog.wait_for(3 * len(local))
    by_input = {name: [m for m in messages if m["input"] == name] for name in ("imudp", "imtcp", "imuxsock")}
    for name, got in by_input.items():
        entries = [json.loads(m["msg"]) for m in got]
        assert sorted((e["decision"], e["outcome"]) for e in entries) == sorted(local), name
        for m in got:  # rsyslog read every field of an RFC 5424 message where Helm put it
            assert (m["version"], m["app"], m["msgid"], m["sd"]) == ("1", "helm", "audit", "-")
            assert int(m["pri"]) // 8 == FACILITIES["local0"]
    severities = {json.loads(m["msg"])["decision"]: int(m["pri"]) % 8 for m in by_input["imtcp"]}
    assert severities == {"confirmed": 6, "declined": 5, "redacted": 4}

    entries = jsonl_entries(jsonl, len(local) + 3)
    assert [e["type"] for e in entries].count("audit") == len(local)
    assert [e["type"] for e in entries].count("activity") == 3  # this sink takes the calls too
    for entry in entries:
        jsonschema.validate(entry, SCHEMA)
    write = next(e for e in entries if e["type"] == "audit")
    assert write["requester"] == {"role": "extension", "id": ctx.extension, "instance": ctx.instance}
    assert (write["workspace"], write["connection"], write["kind"], write["operation"]) == (
        "ws",
        "notes",
        "files",
        "write",
    )
    assert write["request_digest"] == next(broker.audit.records()).request_digest

    everything = rsyslog.out.read_text("utf-8") + jsonl.read_text("ascii")
    assert CANARY_VALUE in broker.audit.path.read_text("utf-8")  # the local log names the file…
    assert CANARY_VALUE not in everything  # …no sink gets a path, a title or a value
    assert CANARY_SECRET not in everything


async def test_a_write_goes_through_while_every_sink_is_down_and_its_records_stay_in_the_local_log(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
) -> None:
    rsyslog = Rsyslog(tmp_path / "never-started")
    add_sinks(broker, rsyslog, tmp_path / "no-such-folder" / "helm.jsonl")
    ctx = await extension(broker, tmp_path, httpbin_server.url)
    assert (await broker.request(ctx, "notes", "write", write_args(), ScriptedConfirmer()))["ok"]
    assert [(r.decision, r.outcome) for r in broker.audit.records()] == [
        ("confirmed", "sending"),
        ("confirmed", "ok"),
    ]
    status = wait_status(broker, lambda s: all(x.state == "down" for x in s if x.name != "udp"))
    assert {s.name: s.queued for s in status if s.name != "udp"} == {
        "file": 3,
        "tcp": 2,
        "unix": 2,
    }  # file: + 1 call
    assert not (tmp_path / "no-such-folder").exists()  # a sink's folder is never made


def wait_status(broker: Broker, done: Any, timeout: float = 30.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while not done(status := broker.export.status()):
        if time.monotonic() > deadline:
            raise TimeoutError([s.line() for s in status])
        time.sleep(0.05)
    return status
