"""Settings → Connections → MCP servers: a stdio command or a URL; Test lists the tools."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from ui.settings.page import FieldSpec, ProfilePage
from ui.settings.validation import FormCheck, check_mcp


class McpPage(ProfilePage):
    FIELDS = (
        FieldSpec("name", "Name", placeholder="github"),
        FieldSpec(
            "transport",
            "Runs as",
            "choice",
            (("stdio", "A command Helm starts (stdio)"), ("http", "A URL (streamable HTTP)")),
            default="stdio",
        ),
        FieldSpec("command", "Command", when=("transport", "stdio"), placeholder="npx"),
        FieldSpec("args", "Arguments", when=("transport", "stdio"), placeholder="-y @scope/server --flag"),
        FieldSpec(
            "token_env",
            "Token variable",
            when=("transport", "stdio"),
            placeholder="MY_SERVER_TOKEN (optional)",
        ),
        FieldSpec("url", "URL", when=("transport", "http"), placeholder="https://mcp.example.com/mcp"),
        FieldSpec("token", "Token", "secret", placeholder="optional"),
    )
    SECRETS = ("token",)
    TEST_LABEL = "Test — list tools"

    def check(self, values: Mapping[str, str]) -> FormCheck:
        return check_mcp(values)

    def values_from(self, raw: Mapping[str, Any]) -> dict[str, str]:
        if "url" in raw:
            return {"transport": "http", "url": str(raw["url"])}
        command = [str(a) for a in raw.get("command", [])]
        return {
            "transport": "stdio",
            "command": command[0] if command else "",
            "args": shlex.join(command[1:]),
            "token_env": str(raw.get("token_env") or ""),
        }
