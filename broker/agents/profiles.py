"""Coding-agent profiles: the ``agents.profiles`` section of settings.json.

A profile::

    {"command": [ARGV0, ARG, ...], "key_env": "VAR" | null, "allow_reads": false}

``command`` is started without a shell. The key (if any) lives in the credential store under
``agents/<name>/key`` and reaches the agent only as the variable ``key_env``; settings never hold
it. ``allow_reads`` lets the policy allow the agent's low-risk read requests without asking
(off unless the user turns it on for this profile).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker.childenv import command_problem, env_name_problem
from broker.credentials import CredentialStore
from broker.errors import ProfileError
from broker.settings import Home
from broker.workspaces import NAME

_KEYS = frozenset({"command", "key_env", "allow_reads"})


@dataclass(frozen=True)
class AgentProfile:
    name: str
    command: tuple[str, ...]
    key_env: str | None = None
    allow_reads: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"command": list(self.command), "key_env": self.key_env, "allow_reads": self.allow_reads}


def key_key(name: str) -> str:
    """Where the agent's key lives in the credential store."""
    return f"agents/{name}/key"


def check_name(name: str) -> None:
    if not NAME.match(name):
        raise ProfileError(
            f"agent name {name!r} is not valid: use letters, digits, '_', '.', '-' "
            "(up to 64, starting with a letter or digit)"
        )


def parse(name: str, raw: Mapping[str, Any]) -> AgentProfile:
    """Validate a stored profile (raises ``ProfileError`` naming what is wrong)."""
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ProfileError(f"agent {name!r}: unknown setting(s) {', '.join(unknown)}")
    command = raw.get("command")
    problem = command_problem(command)
    if problem:
        raise ProfileError(f"agent {name!r}: {problem}")
    key_env = raw.get("key_env")
    if key_env is not None:
        why = env_name_problem(key_env) if isinstance(key_env, str) else "must be text"
        if why:
            raise ProfileError(f"agent {name!r}: key variable {key_env!r} {why}")
    allow_reads = raw.get("allow_reads", False)
    if not isinstance(allow_reads, bool):
        raise ProfileError(f"agent {name!r}: allow_reads must be true or false")
    assert isinstance(command, list)
    return AgentProfile(name, tuple(command), key_env, allow_reads)


def load(home: Home, name: str) -> AgentProfile:
    raw = home.settings().agents.get(name)
    if raw is None:
        raise ProfileError(f"no agent named {name!r} (add one with: helm agent add {name} --command CMD)")
    return parse(name, raw)


def all_profiles(home: Home) -> list[AgentProfile]:
    return [parse(n, raw) for n, raw in sorted(home.settings().agents.items())]


def add(home: Home, credentials: CredentialStore, profile: AgentProfile, key: str | None) -> None:
    """Validate and store ``profile`` (replacing one of the same name) and its key."""
    check_name(profile.name)
    parse(profile.name, profile.as_json())
    if profile.key_env is not None and not key:
        raise ProfileError(
            f"agent {profile.name!r} needs a key for ${profile.key_env} (or add it with --no-key)"
        )
    if key and profile.key_env is None:
        raise ProfileError(f"agent {profile.name!r} has no variable to receive a key")
    if key and any(c in key for c in "\r\n\0"):
        raise ProfileError("the key must be one line")
    if key:
        credentials.set(key_key(profile.name), key)
    else:
        credentials.delete(key_key(profile.name))
    with home.update() as settings:
        settings.agents[profile.name] = profile.as_json()


def remove(home: Home, credentials: CredentialStore, name: str) -> None:
    with home.update() as settings:
        if settings.agents.pop(name, None) is None:
            raise ProfileError(f"no agent named {name!r}")
    credentials.delete(key_key(name))


def key_for(credentials: CredentialStore, profile: AgentProfile) -> str | None:
    """The stored key, or None for a profile without one; a missing key is an error."""
    if profile.key_env is None:
        return None
    key = credentials.get(key_key(profile.name))
    if not key:
        raise ProfileError(f"the key of agent {profile.name!r} is missing; add the agent again")
    return key
