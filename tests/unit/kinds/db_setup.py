"""Shared set-up for db kind tests: a real broker, a database profile and an extension."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker import Broker, CallContext, envelope
from broker.errors import CallError
from broker.kinds.db import profiles
from broker.kinds.db.adapter import DbKind
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.values import Scalar
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.databases import DatabaseServer


@dataclass
class DbWorld:
    broker: Broker
    ctx: CallContext

    async def call(self, op: str, args: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return await self.broker.call(self.ctx, "app", op, dict(args or {}), **kw)


def add_profile(broker: Broker, profile: DbProfile, password: str | None = None) -> None:
    profiles.DATABASES.store(broker.home, broker.credentials).save(profile, {"password": password})


def server_profile(server: DatabaseServer, role: str, name: str = "main") -> tuple[DbProfile, str]:
    profile = DbProfile(
        name=name,
        engine="postgres" if server.engine == "postgres" else "mysql",
        host=server.host,
        port=server.port,
        database=server.database,
        user=role,
        password=True,
    )
    return profile, server.password(role)


@asynccontextmanager
async def db_world(
    tmp: Path,
    engine: str,
    queries: Mapping[str, Any],
    *,
    profile: DbProfile | None = None,
    password: str | None = None,
    write: bool = False,
    service: str = "main",
) -> AsyncIterator[DbWorld]:
    conn = {"id": "app", "kind": "db", "service": service, "engine": engine, "queries": dict(queries)}
    async with new_broker(tmp / "home") as broker:
        if profile is not None:
            add_profile(broker, profile, password)
        ctx = await setup_extension(broker, tmp, manifest_dict([conn], write=write))
        yield DbWorld(broker, ctx)


async def run_sql(
    broker: Broker, profile: DbProfile, sql: str, args: Sequence[Scalar] = (), *, write: bool = False
) -> dict[str, Any]:
    """SQL straight through the db kind (the path the DB explorer uses, and no lint), as an envelope."""
    kind = broker.database()
    assert isinstance(kind, DbKind)
    try:
        return await kind.run(profile, sql, args, write=write)
    except CallError as err:
        return envelope.failure("db", err)


def mysql_scratch(db: DatabaseServer) -> str:
    """A fresh table ``helm.scratch_<hex>`` (id, label) with two rows, on the MariaDB server."""
    name = f"scratch_{secrets.token_hex(4)}"
    db.admin_sql(
        f"CREATE TABLE helm.{name} (id INT PRIMARY KEY, label VARCHAR(20));"
        f"INSERT INTO helm.{name} VALUES (1, 'one'), (2, 'two');"
        "GRANT CREATE TEMPORARY TABLES ON helm.* TO 'helm_rw'@'%';"
    )
    return name


def mysql_labels(db: DatabaseServer, table: str) -> str:
    out = db.admin_sql(f"SELECT GROUP_CONCAT(label ORDER BY id) FROM helm.{table};")
    return out.strip().splitlines()[-1]
