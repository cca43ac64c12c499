"""Database profiles: where a database is and who Helm signs in as.

A profile lives in the settings section ``databases`` as a plain JSON object::

    {"engine": "sqlite", "path": "/home/me/app.db"}
    {"engine": "postgres", "host": "127.0.0.1", "port": 5432, "database": "app",
     "user": "reader", "password": true}

``password`` says whether the profile signs in with a password; the password itself lives only
in the credential store under ``databases/<name>/password``. The extension never sees any of
these values (host, path, password); error messages never carry them either. ``DATABASES`` is
the kind's ``ProfileSpec``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from broker.errors import ProfileError
from broker.jsonutil import digest
from broker.names import NAME_RULE, valid_name
from broker.profiles import ProfileSpec, Reach, SavePlan

ENGINES = ("sqlite", "postgres", "mysql")
DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306}
# Host names and IP literals only: no URL, no user info, no path.
HOST = re.compile(r"^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?|\[?[0-9A-Fa-f:.]+\]?)$")
IDENT = re.compile(r"^[^\x00-\x1f\x7f]{1,128}$")

Engine = Literal["sqlite", "postgres", "mysql"]


@dataclass(frozen=True)
class DbProfile:
    """One database profile, validated."""

    name: str
    engine: Engine
    path: str | None = None
    host: str | None = None
    port: int | None = None
    database: str | None = None
    user: str | None = None
    password: bool = False

    def to_json(self) -> dict[str, Any]:
        if self.engine == "sqlite":
            return {"engine": self.engine, "path": self.path}
        return {
            "engine": self.engine,
            "host": self.host,
            "port": self.port,
            "database": self.database,
            "user": self.user,
            "password": self.password,
        }

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever the profile changes (pools and the explorer's write toggle key on it)."""
        return digest({"name": self.name, **self.to_json()})

    @property
    def where(self) -> str:
        """Where the database is, for the user (never shown to an extension)."""
        if self.engine == "sqlite":
            return str(self.path)
        return f"{self.user}@{self.host}:{self.port}/{self.database}"

    @classmethod
    def from_json(cls, name: str, raw: Any) -> DbProfile:
        if not isinstance(raw, dict):
            raise ProfileError(f"database {name!r}: the profile must be a JSON object")
        engine = raw.get("engine")
        if engine == "sqlite":
            profile = cls(name=name, engine="sqlite", path=raw.get("path"))
        else:
            port = raw.get("port", DEFAULT_PORTS.get(str(engine)))
            profile = cls(
                name=name,
                engine=str(engine),  # type: ignore[arg-type]  # check() refuses other engines
                host=raw.get("host"),
                port=port,
                database=raw.get("database"),
                user=raw.get("user"),
                password=raw.get("password", True),
            )
        profile.check()
        return profile

    def check(self) -> None:
        """Raise ProfileError naming what is wrong with this profile."""
        where = f"database {self.name!r}"
        if not valid_name(self.name):
            raise ProfileError(f"{where}: {NAME_RULE}")
        if self.engine not in ENGINES:
            raise ProfileError(f"{where}: engine must be one of {', '.join(ENGINES)}")
        if self.engine == "sqlite":
            if not isinstance(self.path, str) or not self.path or not Path(self.path).is_absolute():
                raise ProfileError(f"{where}: path must be an absolute file path")
            if "\x00" in self.path:
                raise ProfileError(f"{where}: path must not contain NUL")
            return
        if not isinstance(self.host, str) or not HOST.match(self.host):
            raise ProfileError(f"{where}: host must be a host name or an IP address (no URL)")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise ProfileError(f"{where}: port must be a number from 1 to 65535")
        for field_name in ("database", "user"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not IDENT.match(value):
                raise ProfileError(f"{where}: {field_name} must be 1 to 128 printable characters")
        if not isinstance(self.password, bool):
            raise ProfileError(f"{where}: password must be true or false")


def normalize_path(path: str) -> str:
    """An absolute path for a SQLite profile (relative paths are resolved now, once)."""
    return str(Path(path).expanduser().resolve())


def parse(name: str, raw: Any) -> DbProfile:
    return DbProfile.from_json(name, raw)


def plan_save(
    profile: DbProfile, given: Mapping[str, str | None], previous: DbProfile | None
) -> SavePlan[DbProfile]:
    """A server profile that signs in with a password needs one; any other keeps none."""
    password = given.get("password")
    if profile.engine == "sqlite" or not profile.password:
        return SavePlan(profile, {"password": None})
    if password is None:
        raise ProfileError(f"database {profile.name!r}: a password is needed (or choose no password)")
    return SavePlan(profile, {"password": password})


def reaches(profile: DbProfile) -> tuple[Reach, ...]:
    """Its engine and, but for SQLite, its host (for the organisation's policy)."""
    engine = Reach("db_engine", profile.engine)
    return (engine,) if profile.host is None else (engine, Reach("db_host", profile.host))


DATABASES = ProfileSpec(
    section="databases", noun="database profile", parse=parse, secrets=("password",), plan_save=plan_save,
    reaches=reaches,
)  # fmt: skip
