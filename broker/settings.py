"""Helm's settings: one versioned JSON file in the Helm home.

Format (``settings.json``, version 1)::

    {
      "version": 1,
      "services":    {NAME: {...http profile...}},
      "mcp_servers": {NAME: {...mcp profile...}},
      "databases":   {NAME: {...db profile...}},
      "agents":      {"version": 1, "profiles": {NAME: {...agent profile...}}},
      "teams":       {"version": 1, "audit_sinks": {NAME: {...sink...}},
                      "decision_point": {...} | null},
      "workspaces":  {NAME: {"root": PATH, "projects": {ID: PATH},
                             "everyday": false, "tdt_command": [ARG, ...] | null,
                             "author_mode": false,
                             "extensions": {EXT_ID: {"path": DIR, "enabled": true,
                                                     "approval": {"digest": HEX,
                                                                  "approved_at": ISO,
                                                                  "pins": {...}} | null}}}}
    }

Every top-level key but ``version``, ``workspaces``, ``agents`` and ``teams`` is a **profile section**:
the profiles of one connection kind, by name, as plain JSON objects. A kind declares its
section (``broker.profiles.ProfileSpec``) and reads and writes it only through its
``ProfileStore``; ``services``, ``mcp_servers`` and ``databases`` are the sections of the
http, mcp and db kinds. A section no kind of this Helm declares (a kind of a newer Helm) is
kept exactly as it is. Agent profiles live in the
``agents`` section, which carries its own version, so its format can change without touching
the rest of the file. ``teams`` (optional, with its own version too) holds the user's audit
sinks and the organisation's decision point; ``broker.teams`` reads and changes it. Secrets
never go here: they live in the credential store. Every change is
written atomically under a lock; a file that cannot be read is reported and left exactly as it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import HomeWriteError, SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict

VERSION = 1
AGENTS_VERSION = 1
AGENTS = "agents"
TEAMS = "teams"
TEAMS_VERSION = 1
_RESERVED = frozenset({"version", "workspaces", AGENTS, TEAMS})


@dataclass
class Approval:
    digest: str
    approved_at: str
    pins: dict[str, Any] = field(default_factory=dict)


@dataclass
class InstalledExtension:
    id: str
    path: Path
    enabled: bool = True
    approval: Approval | None = None
    origin: str | None = None
    """The catalogue it was installed from (``broker.catalogue``); None when from a folder."""


@dataclass
class Workspace:
    name: str
    root: Path
    projects: dict[str, Path] = field(default_factory=dict)
    extensions: dict[str, InstalledExtension] = field(default_factory=dict)
    everyday: bool = False
    tdt_command: list[str] | None = None
    author_mode: bool = False
    """Created by ``helm dev`` for author mode (where ``--yes-dev`` may approve)."""
    build_agent: str | None = None
    """The agent profile that runs the builds tools start here (``broker.orchestrate``)."""


@dataclass
class Settings:
    sections: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """Profile sections by name (``services``, ``mcp_servers``…), each: profile name → JSON."""
    workspaces: dict[str, Workspace] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Coding-agent profiles by name (the ``agents.profiles`` section)."""
    teams: dict[str, Any] = field(default_factory=dict)
    """The ``teams`` section as plain JSON, without its version (``broker.teams`` reads it)."""

    def workspace(self, name: str) -> Workspace:
        try:
            return self.workspaces[name]
        except KeyError:
            raise SettingsError(f"no workspace named {name!r}") from None

    def profiles(self, section: str) -> dict[str, dict[str, Any]]:
        """The profiles of one section by name (``agents`` is the agent profiles), created
        empty on first use; a ``ProfileStore`` is the way to read and change them."""
        if section == AGENTS:
            return self.agents
        if section in _RESERVED:
            raise ValueError(f"{section!r} is not a profile section")
        return self.sections.setdefault(section, {})

    # -- serialisation -------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            **self.sections,
            "workspaces": {n: _workspace_to_json(w) for n, w in sorted(self.workspaces.items())},
            AGENTS: {"version": AGENTS_VERSION, "profiles": self.agents},
            **({TEAMS: {"version": TEAMS_VERSION, **self.teams}} if self.teams else {}),
        }

    @classmethod
    def from_json(cls, raw: Any) -> Settings:
        if not isinstance(raw, dict):
            raise SettingsError("the top level must be a JSON object")
        version = raw.get("version")
        if version != VERSION:
            raise SettingsError(
                f"unsupported settings version {version!r} (this Helm reads version {VERSION})"
            )
        try:
            settings = cls(
                sections={str(s): _profiles(v, str(s)) for s, v in raw.items() if s not in _RESERVED},
                workspaces={
                    str(n): _workspace_from_json(str(n), w)
                    for n, w in _object(raw.get("workspaces", {}), "workspaces").items()
                },
                agents=_agents(raw.get(AGENTS, {"version": AGENTS_VERSION})),
                teams=_teams(raw.get(TEAMS, {"version": TEAMS_VERSION})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SettingsError(f"malformed settings: {exc}") from exc
        return settings


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SettingsError(f"{where} must be a JSON object")
    return value


def _profiles(value: Any, where: str) -> dict[str, dict[str, Any]]:
    out = _object(value, where)
    for name, profile in out.items():
        _object(profile, f"{where}.{name}")
    return out


def _agents(value: Any) -> dict[str, dict[str, Any]]:
    section = _object(value, "agents")
    version = section.get("version")
    if version != AGENTS_VERSION:
        raise SettingsError(
            f"unsupported agents section version {version!r} (this Helm reads version {AGENTS_VERSION})"
        )
    unknown = sorted(set(section) - {"version", "profiles"})
    if unknown:
        raise SettingsError(f"agents has unknown key(s): {', '.join(unknown)}")
    return _profiles(section.get("profiles", {}), "agents.profiles")


def _teams(value: Any) -> dict[str, Any]:
    section = _object(value, TEAMS)
    version = section.get("version")
    if version != TEAMS_VERSION:
        raise SettingsError(
            f"unsupported teams section version {version!r} (this Helm reads version {TEAMS_VERSION})"
        )
    return {k: v for k, v in section.items() if k != "version"}


def _workspace_to_json(w: Workspace) -> dict[str, Any]:
    return {
        "root": str(w.root),
        "projects": {k: str(v) for k, v in sorted(w.projects.items())},
        "everyday": w.everyday,
        "tdt_command": w.tdt_command,
        "author_mode": w.author_mode,
        **({"build_agent": w.build_agent} if w.build_agent is not None else {}),
        "extensions": {
            e.id: {
                "path": str(e.path),
                "enabled": e.enabled,
                **({"origin": e.origin} if e.origin is not None else {}),
                "approval": None
                if e.approval is None
                else {
                    "digest": e.approval.digest,
                    "approved_at": e.approval.approved_at,
                    "pins": e.approval.pins,
                },
            }
            for e in sorted(w.extensions.values(), key=lambda e: e.id)
        },
    }


def _workspace_from_json(name: str, raw: Any) -> Workspace:
    raw = _object(raw, f"workspaces.{name}")
    extensions = {}
    for ext_id, e in _object(raw.get("extensions", {}), f"workspaces.{name}.extensions").items():
        e = _object(e, f"workspaces.{name}.extensions.{ext_id}")
        a = e.get("approval")
        approval = (
            None if a is None else Approval(str(a["digest"]), str(a["approved_at"]), dict(a.get("pins", {})))
        )
        origin = e.get("origin")
        if origin is not None and not isinstance(origin, str):
            raise SettingsError(f"workspaces.{name}.extensions.{ext_id}.origin must be a catalogue's name")
        extensions[ext_id] = InstalledExtension(
            ext_id, Path(e["path"]), bool(e.get("enabled", True)), approval, origin
        )
    tdt = raw.get("tdt_command")
    return Workspace(
        name=name,
        root=Path(raw["root"]),
        projects={str(k): Path(v) for k, v in _object(raw.get("projects", {}), "projects").items()},
        extensions=extensions,
        everyday=bool(raw.get("everyday", False)),
        tdt_command=None if tdt is None else [str(a) for a in tdt],
        author_mode=raw.get("author_mode") is True,
        build_agent=_build_agent(name, raw.get("build_agent")),
    )


def _build_agent(workspace: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SettingsError(f"workspaces.{workspace}.build_agent must be an agent's name")
    return value


class Home:
    """The Helm home folder: settings, credentials fallback, audit log.

    ``settings`` is re-read when the file changes on disk (another Helm process, the CLI), so
    a long-running broker always acts on what the user last saved.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.settings_path = path / "settings.json"
        self._settings_file = str(self.settings_path)  # every call stats it: no Path work each time
        self._cached: Settings | None = None
        self._stamp: tuple[int, int, int] | None = None

    @classmethod
    def default_path(cls) -> Path:
        env = os.environ.get("HELM_HOME")
        return Path(env).expanduser() if env else Path.home() / ".helm"

    @classmethod
    def chosen_path(cls, explicit: str | None) -> Path:
        """The home a command's ``--home`` names, or else the default one."""
        return Path(explicit).expanduser() if explicit else cls.default_path()

    def ensure(self) -> None:
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._settings_file)
        except FileNotFoundError:
            return None
        # Every save replaces the file (a new inode), so a save within one mtime tick still counts.
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def settings(self) -> Settings:
        stamp = self._stat()
        if self._cached is None or stamp != self._stamp:
            self._cached = self._read()
            self._stamp = stamp
        return self._cached

    def _read(self) -> Settings:
        try:
            text = self.settings_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Settings()
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"cannot read {self.settings_path}: {exc}") from exc
        try:
            raw = loads_strict(text)
        except (ValueError, DuplicateKeyError) as exc:
            raise SettingsError(
                f"{self.settings_path} is not valid JSON ({exc}); it was left as it is — "
                "fix or move it away, then start Helm again"
            ) from exc
        try:
            return Settings.from_json(raw)
        except SettingsError as exc:
            raise SettingsError(f"{self.settings_path}: {exc}; it was left as it is") from exc

    @contextlib.contextmanager
    def update(self) -> Iterator[Settings]:
        """Read, let the caller change, and write back atomically, under an exclusive lock.

        If the body raises, nothing is written.
        """
        try:
            self.ensure()
            lock = open(self.path / ".settings.lock", "a")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise HomeWriteError(self.settings_path, exc) from exc
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                settings = self._read()
                yield settings
                data = json.dumps(settings.to_json(), indent=2, sort_keys=False) + "\n"
                write_atomic(self.settings_path, data.encode("utf-8"), mode=0o600)
                self._cached = None
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
