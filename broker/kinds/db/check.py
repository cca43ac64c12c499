"""Checking a database profile for Settings and ``helm db add|test``: reachable, and how safe.

A check connects with the profile, runs a trivial read-only query and asks what the account
may do beyond reading: a PostgreSQL superuser or a role that can write, a MySQL user with
write or administrative privileges. Helm keeps every extension query read-only, but functions
can have side effects outside the transaction, so Helm says so and suggests a read-only account.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.errors import CallError
from broker.kinds.base import KindEnv
from broker.kinds.db.adapter import DbKind

PROBES = {"sqlite": "SELECT count(*) FROM sqlite_master", "postgres": "SELECT 1", "mysql": "SELECT 1"}


@dataclass(frozen=True)
class ProfileCheck:
    ok: bool
    message: str
    warnings: tuple[str, ...] = ()


async def check_profile(env: KindEnv, name: str) -> ProfileCheck:
    """Connect with profile ``name`` and report; never raises for a database problem."""
    kind = DbKind(env)
    try:
        profile = kind.profile(name)
        engine = await kind.engine(profile)
        await engine.read(PROBES[profile.engine], [])
        warnings = tuple(await engine.role_warnings())
    except CallError as err:
        return ProfileCheck(False, err.message)
    finally:
        await kind.aclose()
    return ProfileCheck(True, f"Helm can read database {name}", warnings)
