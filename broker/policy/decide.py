"""The organisation's policy, decided: one pure function for each question Helm asks of it.

Each returns ``None`` (the policy allows it) or a ``Refusal``: the rule that applies and why,
worded for a person. Every refusal's message starts "refused by your organisation's policy",
names the rule (``extensions.allow``, ``kinds.http.write``…) and never a value an extension must
not see (a profile's URL, host or program): it names the profile instead. With several policy
files each must allow; with a policy file Helm refuses (``broker.policy.source``) nothing runs.

The parts of Helm that ask: ``broker.approval`` (where an extension stands: at install, review,
approval and every call), the broker's pipeline (every call: its kind, its writes, what its
profile reaches), ``ProfileStore.check`` (a profile saved in Settings or on the command line),
``broker.mcp.servers`` (every MCP server Helm starts or reaches, for calls, apps and Tests),
agents (a session's start and each permission request) and ``helm dev``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from broker.errors import PolicyRefusal
from broker.policy.model import Policy, ServerEntry
from broker.policy.source import PolicyState
from broker.profiles import Reach

if TYPE_CHECKING:
    from broker.manifest import Manifest

WORDS = "refused by your organisation's policy"
LAUNCHER = ("agent", "start-adapter")
"""The words after Helm's own command in an agent profile that starts a catalogue adapter."""


@dataclass(frozen=True)
class Refusal:
    """The policy refuses: ``rule`` is the rule that applies, ``why`` says what it refuses."""

    rule: str
    why: str
    source: Path | None = None

    @property
    def message(self) -> str:
        return f"{WORDS} ({self.rule}): {self.why}"

    def error(self) -> PolicyRefusal:
        return PolicyRefusal(self.rule, self.message)


def _file_refused(state: PolicyState) -> Refusal | None:
    if not state.refused:
        return None
    bad = state.refused[0]
    return Refusal("policy file", bad.message, bad.path)


# -- extensions ----------------------------------------------------------------------------
def extension(
    state: PolicyState, extension_id: str, manifest: Manifest | None, origin: str | None = None
) -> Refusal | None:
    """Whether ``extension_id`` may be installed, approved and run. ``manifest`` is its
    manifest when it could be read; ``origin`` the catalogue it was installed from (None: a
    folder). An MCP App is ruled by ``apps``, not by ``extensions``."""
    refused = _file_refused(state)
    if refused is not None:
        return refused
    for policy in state.policies:
        found = _extension(policy, extension_id, manifest, origin)
        if found is not None:
            return found
    return None


def _extension(policy: Policy, ext_id: str, manifest: Manifest | None, origin: str | None) -> Refusal | None:
    src = policy.source
    app = manifest.app if manifest is not None else None
    if app is None:
        rules = policy.extensions
        if rules.allow is not None:
            entries = [e for e in rules.allow if e.id == ext_id]
            if not entries:
                return Refusal("extensions.allow", f"{ext_id} is not one of the extensions it allows", src)
            if manifest is not None and all(e.digest not in (None, manifest.digest()) for e in entries):
                why = (
                    f"{ext_id} is allowed only as another version (its manifest digest is not the one named)"
                )
                return Refusal("extensions.allow", why, src)
        if rules.catalogues is not None and origin not in rules.catalogues:
            names = ", ".join(rules.catalogues) or "none"
            why = f"{ext_id} must be installed from one of the catalogues it names ({names})"
            return Refusal("extensions.catalogues", why, src)
    elif app.allowed_resource_domains and not policy.apps.resource_domains:
        return Refusal(
            "apps.resource_domains", f"the app {ext_id} allows resource domains, which it never allows", src
        )
    for conn in manifest.connections if manifest is not None and policy.kinds is not None else ():
        if conn.kind not in (policy.kinds or {}):
            why = f"{ext_id} declares connection {conn.id!r} of kind {conn.kind}, a kind it does not allow"
            return Refusal("kinds", why, src)
    return None


# -- calls ---------------------------------------------------------------------------------
def call(
    state: PolicyState, kind: str, write: bool, reaches: Iterable[Reach], who: str, *, app: bool = False
) -> Refusal | None:
    """Whether one call may go on: its kind, whether it writes, and what its profile (``who``:
    "service 'github'") reaches. An app's calls also meet ``apps.servers``."""
    refused = _file_refused(state)
    if refused is not None or not state.policies:
        return refused
    reached = tuple(reaches)
    for policy in state.policies:
        if policy.kinds is not None:
            rule = policy.kinds.get(kind)
            if rule is None:
                return Refusal("kinds", f"connections of kind {kind} are not allowed", policy.source)
            if write and not rule.write:
                return Refusal(
                    f"kinds.{kind}.write", f"writes through {kind} connections are not allowed", policy.source
                )
        for reach in reached:
            found = reach_refusal(policy, reach, who)
            if found is None and app:
                found = _app_server(policy, reach, who)
            if found is not None:
                return found
    return None


def profile(state: PolicyState, reaches: Iterable[Reach], who: str) -> Refusal | None:
    """Whether a profile (a service, an MCP server, a database, an agent) may be used at all."""
    refused = _file_refused(state)
    if refused is not None:
        return refused
    for reach in reaches:
        for policy in state.policies:
            found = reach_refusal(policy, reach, who)
            if found is not None:
                return found
    return None


def reach_refusal(policy: Policy, reach: Reach, who: str) -> Refusal | None:
    src, value = policy.source, reach.value
    if reach.what == "service_url" and not _any_url(policy.services.base_urls, value):
        return Refusal("services.base_urls", f"{who} is not at a base URL it allows", src)
    if reach.what == "oauth_url" and not _any_url(policy.services.oauth_urls, value):
        return Refusal("services.oauth_urls", f"{who} signs in at a URL it does not allow", src)
    if reach.what == "mcp_command" and not _any_executable(policy.mcp.commands, value):
        return Refusal("mcp.commands", f"{who} runs a program it does not allow", src)
    if reach.what == "mcp_url" and not _any_url(policy.mcp.urls, value):
        return Refusal("mcp.urls", f"{who} is at a URL it does not allow", src)
    hosts = policy.databases.hosts
    if reach.what == "db_host" and hosts is not None and value.lower() not in {h.lower() for h in hosts}:
        return Refusal("databases.hosts", f"{who} is on a host it does not allow", src)
    engines = policy.databases.engines
    if reach.what == "db_engine" and engines is not None and value not in engines:
        return Refusal("databases.engines", f"{who} is a {value} database, an engine it does not allow", src)
    return None


def _app_server(policy: Policy, reach: Reach, who: str) -> Refusal | None:
    servers = policy.apps.servers
    if servers is None or reach.what not in ("mcp_command", "mcp_url"):
        return None
    if any(_server_matches(s, reach) for s in servers):
        return None
    return Refusal("apps.servers", f"apps of {who} are not allowed", policy.source)


def _server_matches(entry: ServerEntry, reach: Reach) -> bool:
    if reach.what == "mcp_command":
        return entry.command is not None and same_executable(reach.value, entry.command)
    return entry.url is not None and url_matches(entry.url, reach.value)


# -- agents and author mode -------------------------------------------------------------------
def agent(state: PolicyState, name: str, command: Sequence[str]) -> Refusal | None:
    """Whether the agent profile ``name`` (its ``command``) may run."""
    refused = _file_refused(state)
    if refused is not None:
        return refused
    package = adapter_of(command)
    for policy in state.policies:
        allow = policy.agents.allow
        if allow is None:
            continue
        if package is not None and any(e.package == package for e in allow):
            continue
        if command and any(e.command is not None and same_executable(command[0], e.command) for e in allow):
            continue
        return Refusal("agents.allow", f"agent {name!r} is not one of the agents it allows", policy.source)
    return None


def agent_writes(state: PolicyState) -> Refusal | None:
    """Whether agents may change files."""
    return _first(state, lambda p: None if p.agents.write else Refusal(
        "agents.write", "agents may not change files", p.source))  # fmt: skip


def allow_always(state: PolicyState) -> Refusal | None:
    """Whether the user may answer an agent's request with "allow always"."""
    why = '"allow always" is not available; each request is asked'
    return _first(
        state, lambda p: None if p.agents.allow_always else Refusal("agents.allow_always", why, p.source)
    )


def dev_mode(state: PolicyState) -> Refusal | None:
    """Whether author mode (``helm dev``) is available."""
    return _first(state, lambda p: None if p.dev_mode else Refusal(
        "dev_mode", "author mode (helm dev) is not available on this computer", p.source))  # fmt: skip


def _first(state: PolicyState, rule: Callable[[Policy], Refusal | None]) -> Refusal | None:
    refused = _file_refused(state)
    if refused is not None:
        return refused
    for policy in state.policies:
        found = rule(policy)
        if found is not None:
            return found
    return None


def helm_command() -> list[str]:
    """This Helm's own command line (an agent profile that starts a catalogue adapter begins
    with it)."""
    return [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "app.cli"]


def adapter_of(command: Sequence[str]) -> str | None:
    """The catalogue adapter an agent profile starts through this Helm's launcher, if it does."""
    helm = helm_command()
    words = list(command)
    if words[: len(helm)] != helm:
        return None
    rest = words[len(helm) :]
    return rest[2] if len(rest) >= 3 and tuple(rest[:2]) == LAUNCHER else None


# -- matching ------------------------------------------------------------------------------
def _any_url(patterns: tuple[str, ...] | None, url: str) -> bool:
    return patterns is None or any(url_matches(p, url) for p in patterns)


def _any_executable(allowed: tuple[str, ...] | None, argv0: str) -> bool:
    return allowed is None or any(same_executable(argv0, a) for a in allowed)


@lru_cache(maxsize=256)
def _path_pattern(path: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in path.split("*")))


def url_matches(pattern: str, url: str) -> bool:
    """Whether ``url`` matches ``pattern``: the same scheme, the same host (``*.example.com``:
    any subdomain of it) and port, and a path (with the query) that the pattern's path matches,
    ``*`` matching anything; a pattern without a path, or ending in ``/*``, matches the bare
    origin too. A URL with user information matches nothing."""
    try:
        want, got = urlsplit(pattern), urlsplit(url)
        got_port, want_port = got.port, want.port
    except ValueError:
        return False
    if got.username is not None or got.password is not None or got.scheme.lower() != want.scheme.lower():
        return False
    host, wanted = (got.hostname or "").lower(), (want.hostname or "").lower()
    if wanted.startswith("*."):
        if not (host.endswith(wanted[1:]) and len(host) > len(wanted) - 1):
            return False
    elif host != wanted:
        return False
    if _port(got.scheme, got_port) != _port(want.scheme, want_port):
        return False
    rest = got.path + (f"?{got.query}" if got.query else "")
    path = want.path + (f"?{want.query}" if want.query else "")
    if path in ("", "/*") or (path.endswith("/*") and rest == path[:-2]):
        return True
    return _path_pattern(path).fullmatch(rest) is not None or (path == "/" and rest == "")


def _port(scheme: str, port: int | None) -> int:
    return port if port is not None else (443 if scheme.lower() == "https" else 80)


def same_executable(argv0: str, allowed: str) -> bool:
    """Whether ``argv0`` (found on PATH when it is a bare name) is the executable ``allowed``
    names: the same path, or the same file once symbolic links are followed."""
    if os.path.isabs(argv0):
        found: str | None = argv0
    elif os.sep in argv0 or (os.altsep and os.altsep in argv0):
        return False  # relative to a folder that is not known here
    else:
        found = shutil.which(argv0)
    if found is None:
        return False
    if os.path.normpath(found) == os.path.normpath(allowed):
        return True
    return os.path.realpath(found) == os.path.realpath(allowed)


# -- what Settings marks as managed ------------------------------------------------------------
def managed(state: PolicyState) -> dict[str, str]:
    """What the organisation's policy manages, by the setting it governs, in words for the
    place that shows it: a profile section (``services``, ``mcp_servers``, ``databases``,
    ``agents``) or a switch the user cannot turn (``agents.write``, ``agents.allow_always``,
    ``apps.resource_domains``, ``dev_mode``)."""
    out: dict[str, list[str]] = {}
    for refused in state.refused:
        out.setdefault("all", []).append(refused.message)
    for p in state.policies:
        _note(out, "services", "base URLs", p.services.base_urls)
        _note(out, "services", "OAuth2 sign-in URLs", p.services.oauth_urls)
        _note(out, "mcp_servers", "programs", p.mcp.commands)
        _note(out, "mcp_servers", "URLs", p.mcp.urls)
        _note(out, "databases", "hosts", p.databases.hosts)
        _note(out, "databases", "engines", p.databases.engines)
        agents = (
            None if p.agents.allow is None else tuple(e.package or e.command or "" for e in p.agents.allow)
        )
        _note(out, "agents", "agents", agents)
        for key, allowed, text in (
            ("agents.write", p.agents.write, "agents may not change files"),
            ("agents.allow_always", p.agents.allow_always, '"allow always" is not available'),
            ("apps.resource_domains", p.apps.resource_domains, "apps' resource domains are never allowed"),
            ("dev_mode", p.dev_mode, "author mode (helm dev) is not available"),
        ):
            if not allowed:
                out.setdefault(key, []).append(text)
    return {key: f"Managed by your organisation's policy: {'; '.join(lines)}" for key, lines in out.items()}


def _note(out: dict[str, list[str]], key: str, what: str, allowed: tuple[str, ...] | None) -> None:
    if allowed is not None:
        out.setdefault(key, []).append(f"only these {what}: {', '.join(allowed) or 'none'}")
