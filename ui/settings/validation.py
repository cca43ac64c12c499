"""Checking what the user types into a profile form, field by field, as they type.

Each ``check_*`` takes the form's values (field name → text) and returns a ``FormCheck``: the
profile as the kind stores it when every field is right, and a message for each field that is
not. The rules are the kind's own (``broker.kinds.*.profiles``), so the form and ``helm … add``
never disagree; this module only says which field each rule is about.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.kinds.db import profiles as db_profiles
from broker.kinds.http import profiles as http_profiles
from broker.kinds.mcp import profiles as mcp_profiles
from broker.urls import url_problem

NAME_PROBLEM = "use letters, digits, '_', '.', '-' (up to 64, starting with a letter or digit)"

Values = Mapping[str, str]


@dataclass(frozen=True)
class FormCheck:
    raw: dict[str, Any] | None
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _done(raw: dict[str, Any], problems: dict[str, str]) -> FormCheck:
    return FormCheck(None if problems else raw, problems)


def _name(values: Values, problems: dict[str, str]) -> None:
    name = values.get("name", "")
    if not name:
        problems["name"] = "give the profile a name"
    elif not http_profiles.NAME.match(name):
        problems["name"] = NAME_PROBLEM


def check_service(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    _name(values, problems)
    base = values.get("base_url", "").strip()
    base_problem = http_profiles.base_url_problem(base)
    if base_problem:
        problems["base_url"] = "the base URL " + base_problem
    auth = values.get("auth", "token")
    raw: dict[str, Any] = {"base_url": base, "auth": auth}
    if auth == "token":
        header = values.get("token_header", "").strip() or "Authorization"
        if not http_profiles.HEADER.match(header):
            problems["token_header"] = "a header name: letters, digits and - only"  # noqa: S105 - a message, not a secret
        elif header.lower() in http_profiles.RESERVED_HEADERS:
            problems["token_header"] = f"Helm sets {header} itself; choose another header"
        raw |= {"token_header": header, "token_format": values.get("token_format", "bearer")}
        if any(c in values.get("token", "") for c in "\r\n\0"):
            problems["token"] = "the token must be one line"  # noqa: S105 - a message, not a secret
    else:
        client_id = values.get("client_id", "").strip()
        if not client_id:
            problems["client_id"] = "enter the client id of your OAuth client"
        elif len(client_id) > 512:
            problems["client_id"] = "the client id is longer than 512 characters"
        urls = {key: values.get(key, "").strip() or None for key in ("authorize_url", "token_url")}
        problems |= http_profiles.sign_in_url_problems(urls["authorize_url"], urls["token_url"])
        raw |= {"client_id": client_id, **urls}
    return _done(raw, problems)


def check_mcp(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    _name(values, problems)
    raw: dict[str, Any]
    token = values.get("token", "")
    if values.get("transport", "stdio") == "stdio":
        command = values.get("command", "").strip()
        try:
            args = shlex.split(values.get("args", ""))
        except ValueError:
            args = []
            problems["args"] = "a quote is not closed"
        if not command:
            problems["command"] = "enter the program that starts the server"
        elif "\0" in command:
            problems["command"] = "the command must not contain NUL"
        variable = values.get("token_env", "").strip()
        raw = {"command": [command, *args], "token_env": variable or None}
        if variable:
            problem = mcp_profiles.env_name_problem(variable)
            if problem:
                problems["token_env"] = f"{variable} {problem}"
        elif token:
            problems["token"] = "name the environment variable that receives the token"  # noqa: S105 - a message, not a secret
    else:
        url = values.get("url", "").strip()
        problem = url_problem(url)
        if problem:
            problems["url"] = "the URL " + problem
        raw = {"url": url, "auth": "bearer" if token or values.get("has_token") else "none"}
    if any(c in token for c in "\r\n\0"):
        problems["token"] = "the token must be one line"  # noqa: S105 - a message, not a secret
    return _done(raw, problems)


def check_database(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    _name(values, problems)
    engine = values.get("engine", "sqlite")
    raw: dict[str, Any]
    if engine == "sqlite":
        path = values.get("path", "").strip()
        if not path:
            problems["path"] = "choose the SQLite file"
        elif not Path(path).expanduser().is_absolute():
            problems["path"] = "give the full path of the file (it starts with /)"
        elif not Path(path).expanduser().is_file():
            problems["path"] = "there is no file at this path"
        raw = {"engine": "sqlite", "path": str(Path(path).expanduser()) if path else ""}
        return _done(raw, problems)
    host = values.get("host", "").strip()
    if not db_profiles.HOST.match(host):
        problems["host"] = "a host name or IP address (not a URL)"
    port_text = values.get("port", "").strip() or str(db_profiles.DEFAULT_PORTS.get(engine, ""))
    port = int(port_text) if port_text.isdigit() else 0
    if not 0 < port < 65536:
        problems["port"] = "a number from 1 to 65535"
    for name in ("database", "user"):
        if not db_profiles.IDENT.match(values.get(name, "")):
            problems[name] = f"the {name} name: 1 to 128 printable characters"
    use_password = values.get("use_password", "yes") == "yes"
    raw = {
        "engine": engine,
        "host": host,
        "port": port,
        "database": values.get("database", ""),
        "user": values.get("user", ""),
        "password": use_password,
    }
    return _done(raw, problems)
