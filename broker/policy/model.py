"""The organisation's policy as typed, frozen data: what ``resources/policy.schema.json`` allows.

``parse`` takes a document the schema accepted (``broker.policy.schema``) and returns a
``Policy``. Every rule is optional: ``None`` (or ``True`` for a permission) restricts nothing; a
tuple that is present allows only what it holds (an empty one allows nothing). ``Policy.to_json``
is the policy in effect, with every default spelled out, as ``helm policy show`` prints it.

``catalogues``, ``audit_sinks`` and ``decision_point`` are read, checked and shown here; the
audit export and the decision point client take the last two through ``broker.policy.managed``,
at each use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True)
class ExtensionEntry:
    """One allowed extension: its id, and the manifest digest it must have (None: any)."""

    id: str
    digest: str | None = None


@dataclass(frozen=True)
class ExtensionRules:
    allow: tuple[ExtensionEntry, ...] | None = None
    catalogues: tuple[str, ...] | None = None
    """Only extensions installed from one of these catalogues."""


@dataclass(frozen=True)
class KindRule:
    write: bool = True


@dataclass(frozen=True)
class ServiceRules:
    base_urls: tuple[str, ...] | None = None
    oauth_urls: tuple[str, ...] | None = None


@dataclass(frozen=True)
class McpRules:
    commands: tuple[str, ...] | None = None
    urls: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DatabaseRules:
    hosts: tuple[str, ...] | None = None
    engines: tuple[str, ...] | None = None


@dataclass(frozen=True)
class AgentEntry:
    """An allowed agent: an adapter of Helm's catalogue (``package``) or an executable."""

    package: str | None = None
    command: str | None = None


@dataclass(frozen=True)
class AgentRules:
    allow: tuple[AgentEntry, ...] | None = None
    write: bool = True
    allow_always: bool = True


@dataclass(frozen=True)
class ServerEntry:
    """An MCP server by its executable (``command``) or a URL pattern (``url``)."""

    command: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class AppRules:
    servers: tuple[ServerEntry, ...] | None = None
    resource_domains: bool = True


@dataclass(frozen=True)
class CatalogueRule:
    name: str
    url: str
    public_key: str
    required: bool = False


@dataclass(frozen=True)
class JsonlSinkRule:
    path: str
    activity: bool = False
    type: Literal["jsonl"] = "jsonl"


@dataclass(frozen=True)
class SyslogSinkRule:
    transport: Literal["udp", "tcp", "unix"]
    address: str
    facility: str = "local0"
    activity: bool = False
    type: Literal["syslog"] = "syslog"


AuditSinkRule = JsonlSinkRule | SyslogSinkRule


@dataclass(frozen=True)
class DecisionPointRule:
    url: str
    tenant_id: str
    principal_id: str
    key_ref: str
    """The name of its key in Helm's credential store; the key itself is never in the policy."""
    writes: bool = False


@dataclass(frozen=True)
class Policy:
    """One policy file, parsed. ``source`` is the file it came from."""

    source: Path
    extensions: ExtensionRules = ExtensionRules()
    kinds: Mapping[str, KindRule] | None = None
    services: ServiceRules = ServiceRules()
    mcp: McpRules = McpRules()
    databases: DatabaseRules = DatabaseRules()
    agents: AgentRules = AgentRules()
    apps: AppRules = AppRules()
    dev_mode: bool = True
    catalogues: tuple[CatalogueRule, ...] = ()
    audit_sinks: tuple[AuditSinkRule, ...] = ()
    decision_point: DecisionPointRule | None = None

    def to_json(self) -> dict[str, Any]:
        """The policy in effect, every default written out (``None``: no restriction)."""
        return {
            "source": str(self.source),
            "extensions": {
                "allow": _rows(self.extensions.allow, lambda e: {"id": e.id, "digest": e.digest}),
                "catalogues": _list(self.extensions.catalogues),
            },
            "kinds": None
            if self.kinds is None
            else {k: {"write": r.write} for k, r in sorted(self.kinds.items())},
            "services": {
                "base_urls": _list(self.services.base_urls),
                "oauth_urls": _list(self.services.oauth_urls),
            },
            "mcp": {"commands": _list(self.mcp.commands), "urls": _list(self.mcp.urls)},
            "databases": {"hosts": _list(self.databases.hosts), "engines": _list(self.databases.engines)},
            "agents": {
                "allow": _rows(self.agents.allow, _entry),
                "write": self.agents.write,
                "allow_always": self.agents.allow_always,
            },
            "apps": {
                "servers": _rows(self.apps.servers, _entry),
                "resource_domains": self.apps.resource_domains,
            },
            "dev_mode": self.dev_mode,
            "catalogues": [
                {"name": c.name, "url": c.url, "public_key": c.public_key, "required": c.required}
                for c in self.catalogues
            ],
            "audit_sinks": [_sink(s) for s in self.audit_sinks],
            "decision_point": None if self.decision_point is None else _decision_point(self.decision_point),
        }


def _list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def _rows(values: tuple[Any, ...] | None, row: Any) -> list[dict[str, Any]] | None:
    return None if values is None else [row(v) for v in values]


def _entry(e: AgentEntry | ServerEntry) -> dict[str, Any]:
    return {k: v for k, v in vars(e).items() if v is not None}


def _sink(s: AuditSinkRule) -> dict[str, Any]:
    if isinstance(s, JsonlSinkRule):
        return {"type": "jsonl", "path": s.path, "activity": s.activity}
    return {"type": "syslog", "transport": s.transport, "address": s.address, "facility": s.facility,
            "activity": s.activity}  # fmt: skip


def _decision_point(d: DecisionPointRule) -> dict[str, Any]:
    return {"url": d.url, "tenant_id": d.tenant_id, "principal_id": d.principal_id,
            "key_ref": d.key_ref, "writes": d.writes}  # fmt: skip


def _strings(raw: Any) -> tuple[str, ...] | None:
    return None if raw is None else tuple(str(v) for v in raw)


def parse(source: Path, raw: Mapping[str, Any]) -> Policy:
    """A ``Policy`` from a document that ``resources/policy.schema.json`` accepted."""
    ext = raw.get("extensions", {})
    allow = ext.get("allow")
    kinds = raw.get("kinds")
    services, mcp, dbs = raw.get("services", {}), raw.get("mcp", {}), raw.get("databases", {})
    agents, apps = raw.get("agents", {}), raw.get("apps", {})
    agent_allow, servers = agents.get("allow"), apps.get("servers")
    point = raw.get("decision_point")
    return Policy(
        source=source,
        extensions=ExtensionRules(
            None if allow is None else tuple(ExtensionEntry(e["id"], e.get("digest")) for e in allow),
            _strings(ext.get("catalogues")),
        ),
        kinds=None if kinds is None else {k: KindRule(v.get("write", True)) for k, v in kinds.items()},
        services=ServiceRules(_strings(services.get("base_urls")), _strings(services.get("oauth_urls"))),
        mcp=McpRules(_strings(mcp.get("commands")), _strings(mcp.get("urls"))),
        databases=DatabaseRules(_strings(dbs.get("hosts")), _strings(dbs.get("engines"))),
        agents=AgentRules(
            None
            if agent_allow is None
            else tuple(AgentEntry(a.get("package"), a.get("command")) for a in agent_allow),
            agents.get("write", True),
            agents.get("allow_always", True),
        ),
        apps=AppRules(
            None if servers is None else tuple(ServerEntry(s.get("command"), s.get("url")) for s in servers),
            apps.get("resource_domains", True),
        ),
        dev_mode=raw.get("dev_mode", True),
        catalogues=tuple(
            CatalogueRule(c["name"], c["url"], c["public_key"], c.get("required", False))
            for c in raw.get("catalogues", ())
        ),
        audit_sinks=tuple(_sink_rule(s) for s in raw.get("audit_sinks", ())),
        decision_point=None if point is None else _point_rule(point),
    )


def _sink_rule(s: Mapping[str, Any]) -> AuditSinkRule:
    if s["type"] == "jsonl":
        return JsonlSinkRule(s["path"], s.get("activity", False))
    return SyslogSinkRule(s["transport"], s["address"], s.get("facility", "local0"), s.get("activity", False))


def _point_rule(point: Mapping[str, Any]) -> DecisionPointRule:
    return DecisionPointRule(
        point["url"], point["tenant_id"], point["principal_id"], point["key_ref"], point.get("writes", False)
    )
