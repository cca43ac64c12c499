"""Coding-agent profiles: the ``agents.profiles`` section of settings.json.

A profile::

    {"command": [ARGV0, ARG, ...], "key_env": "VAR" | null, "allow_reads": false}

``command`` is started without a shell. The key (if any) lives in the credential store under
``agents/<name>/key`` and reaches the agent only as the variable ``key_env``; settings never hold
it. ``allow_reads`` lets the policy allow the agent's low-risk read requests without asking
(off unless the user turns it on for this profile). ``AGENTS`` is the ``ProfileSpec``: agent
profiles are kept like every kind's, through ``AGENTS.store(home, credentials)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker.childenv import command_problem, env_name_problem
from broker.errors import ProfileError
from broker.profiles import ProfileSpec, ProfileStore, SavePlan

_KEYS = frozenset({"command", "key_env", "allow_reads"})


@dataclass(frozen=True)
class AgentProfile:
    name: str
    command: tuple[str, ...]
    key_env: str | None = None
    allow_reads: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"command": list(self.command), "key_env": self.key_env, "allow_reads": self.allow_reads}


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


def plan_save(
    profile: AgentProfile, given: Mapping[str, str | None], previous: AgentProfile | None
) -> SavePlan[AgentProfile]:
    """A profile with a key variable needs a key, and one without takes none."""
    key = given.get("key")
    if profile.key_env is not None and not key:
        raise ProfileError(
            f"agent {profile.name!r} needs a key for ${profile.key_env} (or add it with --no-key)"
        )
    if key and profile.key_env is None:
        raise ProfileError(f"agent {profile.name!r} has no variable to receive a key")
    if key and any(c in key for c in "\r\n\0"):
        raise ProfileError("the key must be one line")
    return SavePlan(profile, {"key": key or None})


AGENTS = ProfileSpec(
    section="agents",
    noun="agent",
    parse=parse,
    secrets=("key",),
    plan_save=plan_save,
    missing_hint=" (add one with: helm agent add {name} --command CMD)",
)


def key_for(store: ProfileStore[AgentProfile], profile: AgentProfile) -> str | None:
    """The stored key, or None for a profile without one; a missing key is an error."""
    if profile.key_env is None:
        return None
    key = store.secret(profile.name, "key")
    if not key:
        raise ProfileError(f"the key of agent {profile.name!r} is missing; add the agent again")
    return key
