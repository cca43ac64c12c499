"""MCP server profiles: the settings section ``mcp_servers`` and the child environment.

A profile is one of::

    {"command": [ARGV0, ARG, ...], "token_env": "VAR" | null,    # a stdio child
     "pass_env": ["VAR", ...]}                                    #   (optional)
    {"url": "https://…/mcp", "auth": "bearer" | "none"}          # streamable HTTP

The token (if any) lives in the credential store under ``mcp_servers/<name>/token``; settings
never hold it. A stdio child gets only ``SAFE_VARIABLES`` and ``NETWORK_VARIABLES`` (certificates
and proxies) from Helm's environment, the names its profile passes (``pass_env``, never a
secret-looking or loader name), plus the one token variable, and the token variable may not be
a name that changes how programs load or run (``LD_PRELOAD``, ``PATH``, ``PYTHONPATH``,
``NODE_OPTIONS``…). ``MCP_SERVERS`` is the kind's ``ProfileSpec``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The child environment is shared with coding agents; re-exported for the mcp kind's callers.
from broker.childenv import SAFE_VARIABLES as SAFE_VARIABLES
from broker.childenv import command_problem, pass_env_problem
from broker.childenv import env_name_problem as env_name_problem
from broker.childenv import safe_environment as safe_environment
from broker.errors import ProfileError
from broker.profiles import ProfileSpec, Reach, SavePlan
from broker.urls import url_problem


@dataclass(frozen=True)
class StdioProfile:
    name: str
    command: tuple[str, ...]
    token_env: str | None
    pass_env: tuple[str, ...] = ()
    """Further variables of Helm's environment the child gets (``childenv.pass_env_problem``)."""

    @property
    def wants_token(self) -> bool:
        return self.token_env is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": list(self.command), "token_env": self.token_env}
        return out | ({"pass_env": list(self.pass_env)} if self.pass_env else {})


@dataclass(frozen=True)
class HttpProfile:
    name: str
    url: str
    bearer: bool

    @property
    def wants_token(self) -> bool:
        return self.bearer

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "auth": "bearer" if self.bearer else "none"}


Profile = StdioProfile | HttpProfile


def parse(name: str, raw: Mapping[str, Any]) -> Profile:
    """Validate a stored profile (raises ``ProfileError`` naming what is wrong)."""
    if "command" in raw and "url" in raw:
        raise ProfileError(f"MCP server {name!r}: give either a command or a URL, not both")
    if "command" in raw:
        command = raw["command"]
        problem = command_problem(command)
        if problem:
            raise ProfileError(f"MCP server {name!r}: {problem}")
        token_env = raw.get("token_env")
        if token_env is not None:
            problem = env_name_problem(token_env) if isinstance(token_env, str) else "must be text"
            if problem:
                raise ProfileError(f"MCP server {name!r}: token variable {token_env!r} {problem}")
        return StdioProfile(name, tuple(command), token_env, _pass_env(name, raw.get("pass_env", [])))
    if "url" in raw:
        url = raw["url"]
        problem = url_problem(url) if isinstance(url, str) else "must be a URL"
        if problem:
            raise ProfileError(f"MCP server {name!r}: the URL {problem}")
        auth = raw.get("auth", "bearer")
        if auth not in ("bearer", "none"):
            raise ProfileError(f"MCP server {name!r}: auth must be 'bearer' or 'none'")
        return HttpProfile(name, url, auth == "bearer")
    raise ProfileError(f"MCP server {name!r}: a profile needs a command or a URL")


def _pass_env(name: str, raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ProfileError(f"MCP server {name!r}: pass_env must be a list of variable names")
    for variable in raw:
        problem = pass_env_problem(variable)
        if problem:
            raise ProfileError(f"MCP server {name!r}: {variable!r} {problem}")
    return tuple(dict.fromkeys(raw))


def plan_save(
    profile: Profile, given: Mapping[str, str | None], previous: Profile | None
) -> SavePlan[Profile]:
    """A profile that sends a token needs one, and one that sends none takes none."""
    token = given.get("token")
    if profile.wants_token and not token:
        raise ProfileError(f"MCP server {profile.name!r} needs a token (or add it without one)")
    if token and not profile.wants_token:
        raise ProfileError(f"MCP server {profile.name!r} has nowhere to send a token")
    if token and any(c in token for c in "\r\n\0"):
        raise ProfileError("the token must be one line")
    return SavePlan(profile, {"token": token or None})


def reaches(profile: Profile) -> tuple[Reach, ...]:
    """The program a stdio server runs, or the URL of an HTTP one (for the organisation's policy)."""
    if isinstance(profile, HttpProfile):
        return (Reach("mcp_url", profile.url),)
    return (Reach("mcp_command", profile.command[0]),)


MCP_SERVERS: ProfileSpec[Profile] = ProfileSpec(
    section="mcp_servers", noun="MCP server", parse=parse, secrets=("token",), plan_save=plan_save,
    reaches=reaches,
)  # fmt: skip
