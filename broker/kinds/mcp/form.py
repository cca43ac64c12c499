"""The mcp kind's profile form (a stdio command or a URL) and its Test button (the tools)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from broker.childenv import NETWORK_VARIABLES, pass_env_problem
from broker.errors import CallError
from broker.kinds.forms import (
    FormCheck,
    FormField,
    ProfileForm,
    Values,
    check_name,
    command_line,
    done,
    one_line,
)
from broker.kinds.spec import Outcome
from broker.mcp.profiles import env_name_problem
from broker.settings import Workspace
from broker.urls import url_problem

if TYPE_CHECKING:
    from mcp import types

    from broker.kinds.base import KindEnv
    from broker.kinds.mcp.adapter import McpKind

DETAIL_LINES = 24
"""How many lines of why a server failed (its stderr's last lines) the Test button shows."""

FIELDS = (
    FormField("name", "Name", placeholder="github"),
    FormField(
        "transport",
        "Runs as",
        "choice",
        (("stdio", "A command Helm starts (stdio)"), ("http", "A URL (streamable HTTP)")),
        default="stdio",
    ),
    FormField("command", "Command", when=("transport", "stdio"), placeholder="npx"),
    FormField("args", "Arguments", when=("transport", "stdio"), placeholder="-y @scope/server --flag"),
    FormField(
        "token_env", "Token variable", when=("transport", "stdio"), placeholder="MY_SERVER_TOKEN (optional)"
    ),
    FormField(
        "pass_env",
        "Also pass",
        when=("transport", "stdio"),
        placeholder="MY_CONFIG_DIR (optional)",
        help="Variables of Helm's environment the server also gets. Always passed: PATH, HOME, the "
        "locale, and the certificate and proxy settings (" + ", ".join(NETWORK_VARIABLES[:9]) + ").",
    ),
    FormField("url", "URL", when=("transport", "http"), placeholder="https://mcp.example.com/mcp"),
    FormField("token", "Token", "secret", placeholder="optional"),
)


def check(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    check_name(values, problems)
    if values.get("transport", "stdio") == "stdio":
        raw = _stdio(values, problems)
    else:
        url = values.get("url", "").strip()
        problem = url_problem(url)
        if problem:
            problems["url"] = "the URL " + problem
        raw = {"url": url, "auth": "bearer" if values.get("token") or values.get("has_token") else "none"}
    one_line(values, "token", problems, "token")
    return done(raw, problems)


def _stdio(values: Values, problems: dict[str, str]) -> dict[str, Any]:
    argv = command_line(values, problems, "enter the program that starts the server")
    variable = values.get("token_env", "").strip()
    if variable:
        problem = env_name_problem(variable)
        if problem:
            problems["token_env"] = f"{variable} {problem}"
    elif values.get("token"):
        problems["token"] = "name the environment variable that receives the token"  # noqa: S105 - a message, not a secret
    passed = values.get("pass_env", "").replace(",", " ").split()
    bad = [f"{name} {problem}" for name in passed if (problem := pass_env_problem(name))]
    if bad:
        problems["pass_env"] = "; ".join(bad)
    return {"command": argv, "token_env": variable or None} | ({"pass_env": passed} if passed else {})


def values_from(raw: Mapping[str, Any]) -> dict[str, str]:
    if "url" in raw:
        return {"transport": "http", "url": str(raw["url"])}
    command = [str(a) for a in raw.get("command", [])]
    return {
        "transport": "stdio",
        "command": command[0] if command else "",
        "args": shlex.join(command[1:]),
        "token_env": str(raw.get("token_env") or ""),
        "pass_env": " ".join(str(v) for v in raw.get("pass_env", [])),
    }


FORM = ProfileForm("MCP servers", FIELDS, check, values_from, test_label="Test — list tools")


async def probe(kind: McpKind, name: str, _inputs: Mapping[str, str]) -> Outcome:
    """The Test button: start the server and list its tools."""
    try:
        tools = await kind.list_tools(trial_workspace(kind.env), name)
    except CallError as err:
        return Outcome(False, err.message, tuple(err.detail.splitlines()[-DETAIL_LINES:]))
    names = tuple(_tool_line(t) for t in tools)
    return Outcome(True, f"connected — {len(names)} tool(s)", names)


def trial_workspace(env: KindEnv) -> Workspace:
    """Where a server runs for a test: the first workspace, or the Helm home."""
    workspaces = env.settings.workspaces
    if workspaces:
        return workspaces[sorted(workspaces)[0]]
    return Workspace("settings-test", Path(env.home.path))


def _tool_line(tool: types.Tool) -> str:
    description = (tool.description or "").strip().splitlines()
    return f"{tool.name} — {description[0]}" if description else str(tool.name)
