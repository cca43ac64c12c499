"""The db kind's profile form (a SQLite file, or host, port, database and user) and its Test
button (one trivial read with the profile)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from broker.errors import CallError, HelmError
from broker.kinds.db import profiles
from broker.kinds.forms import FormCheck, FormField, ProfileForm, Values, check_name, done
from broker.kinds.spec import Outcome

if TYPE_CHECKING:
    from broker.kinds.db.adapter import DbKind

ENGINES = (("sqlite", "SQLite"), ("postgres", "PostgreSQL"), ("mysql", "MySQL / MariaDB"))
SERVER = ("engine", "sqlite")
"""A field that only a server profile has is hidden while the engine is SQLite."""

FIELDS = (
    FormField("name", "Name", placeholder="local-app"),
    FormField("engine", "Engine", "choice", ENGINES, default="sqlite"),
    FormField("path", "SQLite file", "file", when=("engine", "sqlite"), placeholder="/home/me/app.db"),
    FormField("host", "Host", unless=SERVER, placeholder="127.0.0.1"),
    FormField("port", "Port", unless=SERVER),
    FormField("database", "Database", unless=SERVER),
    FormField("user", "User", unless=SERVER),
    FormField(
        "use_password",
        "Password",
        "choice",
        (("yes", "Sign in with a password"), ("no", "No password")),
        unless=SERVER,
        default="yes",
    ),
    FormField("password", "", "secret", when=("use_password", "yes"), unless=SERVER, placeholder="password"),
)


def check(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    check_name(values, problems)
    engine = values.get("engine", "sqlite")
    if engine == "sqlite":
        return done(_sqlite(values, problems), problems)
    return done(_server(engine, values, problems), problems)


def _sqlite(values: Values, problems: dict[str, str]) -> dict[str, Any]:
    path = values.get("path", "").strip()
    if not path:
        problems["path"] = "choose the SQLite file"
    elif not Path(path).expanduser().is_absolute():
        problems["path"] = "give the full path of the file (it starts with /)"
    elif not Path(path).expanduser().is_file():
        problems["path"] = "there is no file at this path"
    return {"engine": "sqlite", "path": str(Path(path).expanduser()) if path else ""}


def _server(engine: str, values: Values, problems: dict[str, str]) -> dict[str, Any]:
    host = values.get("host", "").strip()
    if not profiles.HOST.match(host):
        problems["host"] = "a host name or IP address (not a URL)"
    port_text = values.get("port", "").strip() or str(profiles.DEFAULT_PORTS.get(engine, ""))
    port = int(port_text) if port_text.isdigit() else 0
    if not 0 < port < 65536:
        problems["port"] = "a number from 1 to 65535"
    for name in ("database", "user"):
        if not profiles.IDENT.match(values.get(name, "")):
            problems[name] = f"the {name} name: 1 to 128 printable characters"
    return {
        "engine": engine,
        "host": host,
        "port": port,
        "database": values.get("database", ""),
        "user": values.get("user", ""),
        "password": values.get("use_password", "yes") == "yes",
    }


def values_from(raw: Mapping[str, Any]) -> dict[str, str]:
    values = {k: str(v) for k, v in raw.items() if v is not None and k != "password"}
    values["use_password"] = "yes" if raw.get("password", True) else "no"
    return values


FORM = ProfileForm("Databases", FIELDS, check, values_from)


async def probe(kind: DbKind, name: str, _inputs: Mapping[str, str]) -> Outcome:
    """The Test button: one trivial read with the profile."""
    try:
        profile = kind.profile(name)
        envelope = await kind.run(profile, "SELECT 1", [], write=False)
    except CallError as err:
        return Outcome(False, err.message)
    except HelmError as err:
        return Outcome(False, str(err))
    if envelope.get("ok"):
        return Outcome(True, f"connected to {profile.where}")
    return Outcome(False, str((envelope.get("error") or {}).get("message", "failed")))
