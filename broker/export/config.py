"""Where audit records go besides the home's own log: the sink configurations, as plain data.

A sink is one of:

* ``{"type": "jsonl", "path": "/var/log/helm/audit.jsonl"}`` — a JSON Lines file (the schema is
  ``resources/audit-export.schema.json``), for any log shipper;
* ``{"type": "syslog", "transport": "udp" | "tcp" | "unix", "address": "host:port" | "/path"}``
  — RFC 5424 messages; over TCP framed by octet counting (RFC 6587), over a local socket one
  datagram per message (a stream socket is framed like TCP).

Optional keys: ``"activity": true`` also sends the activity records (one per call), and for
syslog ``"facility"`` (a name: ``local0``…``local7``, ``user``, ``auth``, ``authpriv``,
``audit``; default ``local0``). ``parse_sink`` turns one such object into a ``SinkConfig`` and
reports every problem at once, each with its path. The user's sinks are named (``helm audit
sink add NAME …``); the organisation's policy hands its own through ``parse_sink`` too, marked
``managed`` (the user cannot remove those).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from broker.errors import SettingsError

Transport = Literal["udp", "tcp", "unix"]
TRANSPORTS: tuple[Transport, ...] = ("udp", "tcp", "unix")
DEFAULT_PORT = 514
FACILITIES = {
    "user": 1, "auth": 4, "authpriv": 10, "audit": 13,
    **{f"local{i}": 16 + i for i in range(8)},
}  # fmt: skip
DEFAULT_FACILITY = "local0"
_KEYS = {
    "jsonl": {"type", "path", "activity"},
    "syslog": {"type", "transport", "address", "facility", "activity"},
}


@dataclass(frozen=True)
class JsonlSinkConfig:
    """A JSON Lines file Helm appends the records to (created 0600; its folder must exist)."""

    path: Path
    activity: bool = False
    name: str = ""
    managed: bool = False

    @property
    def target(self) -> str:
        return f"JSON Lines file {self.path}"


@dataclass(frozen=True)
class SyslogSinkConfig:
    """A syslog receiver: ``host``/``port`` for udp and tcp, ``path`` for a unix socket."""

    transport: Transport
    host: str = ""
    port: int = DEFAULT_PORT
    path: str = ""
    facility: str = DEFAULT_FACILITY
    activity: bool = False
    name: str = ""
    managed: bool = False

    @property
    def target(self) -> str:
        where = self.path if self.transport == "unix" else f"{self.host}:{self.port}"
        return f"syslog over {self.transport} to {where}"

    @property
    def facility_code(self) -> int:
        return FACILITIES[self.facility]


SinkConfig = JsonlSinkConfig | SyslogSinkConfig


def parse_sink(raw: Any, where: str = "sink", *, name: str = "", managed: bool = False) -> SinkConfig:
    """The sink ``raw`` describes; ``SettingsError`` naming every problem (with its path)."""
    if not isinstance(raw, Mapping):
        raise SettingsError(f"{where} must be a JSON object")
    kind = raw.get("type")
    if kind not in _KEYS:
        raise SettingsError(f'{where}.type must be "jsonl" or "syslog" (it is {kind!r})')
    problems = [f"{where}.{key} is not a setting of a {kind} sink" for key in sorted(set(raw) - _KEYS[kind])]
    activity = raw.get("activity", False)
    if not isinstance(activity, bool):
        problems.append(f"{where}.activity must be true or false")
    sink = _jsonl(raw, where, problems) if kind == "jsonl" else _syslog(raw, where, problems)
    if problems or sink is None:
        raise SettingsError("; ".join(problems))
    fields: dict[str, Any] = {"activity": activity is True, "name": name, "managed": managed}
    if isinstance(sink, JsonlSinkConfig):
        return JsonlSinkConfig(sink.path, **fields)
    return SyslogSinkConfig(sink.transport, sink.host, sink.port, sink.path, sink.facility, **fields)


def _jsonl(raw: Mapping[str, Any], where: str, problems: list[str]) -> JsonlSinkConfig | None:
    path = raw.get("path")
    if not isinstance(path, str) or not path or "\0" in path:
        problems.append(f"{where}.path must be the path of a file")
        return None
    if not Path(path).expanduser().is_absolute():
        problems.append(f"{where}.path must be absolute (it is {path!r})")
        return None
    return JsonlSinkConfig(Path(path).expanduser())


def _syslog(raw: Mapping[str, Any], where: str, problems: list[str]) -> SyslogSinkConfig | None:
    transport, address = raw.get("transport"), raw.get("address")
    facility = raw.get("facility", DEFAULT_FACILITY)
    if facility not in FACILITIES:
        problems.append(f"{where}.facility must be one of {', '.join(FACILITIES)} (it is {facility!r})")
    if transport not in TRANSPORTS:
        problems.append(f'{where}.transport must be "udp", "tcp" or "unix" (it is {transport!r})')
        return None
    if not isinstance(address, str) or not address or "\0" in address:
        problems.append(f"{where}.address must be text: host:port, or the path of a unix socket")
        return None
    if transport == "unix":
        if not address.startswith("/"):
            problems.append(f"{where}.address must be the absolute path of a unix socket")
        return SyslogSinkConfig("unix", path=address, facility=str(facility))
    host_port = split_address(address)
    if host_port is None:
        problems.append(f"{where}.address must be host:port (it is {address!r})")
        return None
    return SyslogSinkConfig(transport, host_port[0], host_port[1], facility=str(facility))


def split_address(address: str) -> tuple[str, int] | None:
    """``host:port``, ``[v6]:port`` or a bare host (port 514) as (host, port); None when wrong."""
    host, port = address, str(DEFAULT_PORT)
    if address.startswith("["):
        close = address.find("]")
        rest = address[close + 1 :]
        if close < 0 or (rest and not rest.startswith(":")):
            return None
        host, port = address[1:close], rest[1:] if rest else port
    elif address.count(":") == 1:
        host, port = address.split(":")
    if not host or any(c.isspace() for c in host) or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def sink_json(sink: SinkConfig) -> dict[str, Any]:
    """``sink`` as the JSON object ``parse_sink`` reads (how settings store it)."""
    out: dict[str, Any]
    if isinstance(sink, JsonlSinkConfig):
        out = {"type": "jsonl", "path": str(sink.path)}
    else:
        address = sink.path if sink.transport == "unix" else _joined(sink.host, sink.port)
        out = {"type": "syslog", "transport": sink.transport, "address": address}
        if sink.facility != DEFAULT_FACILITY:
            out["facility"] = sink.facility
    if sink.activity:
        out["activity"] = True
    return out


def _joined(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
