"""The ``db`` kind: named statements from the manifest, run on the user's database profile.

One engine (with its small connection pool) per profile, created on first use and replaced
when the profile changes in Settings. Arguments are checked before any I/O; the engine of the
manifest must equal the profile's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from broker.envelope import PLAIN
from broker.errors import CallError, ErrorCode, ProfileError
from broker.jsonutil import canonical
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.db import DB
from broker.kinds.db.engine import Engine
from broker.kinds.db.profiles import DATABASES, DbProfile
from broker.kinds.db.rules import DbConnection
from broker.kinds.db.values import Scalar, bind_args
from broker.policy import PolicyState
from broker.settings import Settings, Workspace


class DbKind:
    """The running part of the ``db`` kind (see ``broker.kinds.base.Kind``)."""

    def __init__(self, env: KindEnv) -> None:
        self.env = env
        self.profiles = DATABASES.store(env.home, env.credentials)
        self._engines: dict[str, tuple[str, Engine]] = {}

    # -- profiles and engines ------------------------------------------------------------
    def profile(
        self, name: str, settings: Settings | None = None, policy: PolicyState | None = None
    ) -> DbProfile:
        """The named profile (from ``settings`` when given), or ``not_configured``; ``refused``
        when the organisation's policy (``policy``: the one in force now unless given) forbids
        what it reaches."""
        try:
            profile = self.profiles.get(name, settings)
        except ProfileError as exc:
            raise CallError(
                ErrorCode.NOT_CONFIGURED, f"database profile {name!r} is invalid; fix it in Settings"
            ) from exc
        if profile is None:
            raise CallError(
                ErrorCode.NOT_CONFIGURED,
                f"no database profile named {name!r}; add it in Settings or with: helm db add {name} …",
            )
        refusal = self.profiles.refusal(profile, policy)  # the organisation's, for the explorer too
        if refusal is not None:
            raise CallError(ErrorCode.REFUSED, refusal)
        return profile

    async def engine(self, profile: DbProfile) -> Engine:
        """The profile's engine; a changed profile gets a new one (the old pool is closed)."""
        current = self._engines.get(profile.name)
        if current is not None and current[0] == profile.fingerprint:
            return current[1]
        if current is not None:
            del self._engines[profile.name]
            await current[1].aclose()
        engine = self._build(profile)
        self._engines[profile.name] = (profile.fingerprint, engine)
        return engine

    def _build(self, profile: DbProfile) -> Engine:
        if profile.engine == "sqlite":
            from broker.kinds.db.sqlite import SqliteEngine

            return SqliteEngine(str(profile.path))
        password = self._password(profile)
        if profile.engine == "postgres":
            from broker.kinds.db.postgres import PostgresEngine

            return PostgresEngine(profile, password)
        from broker.kinds.db.mysql import MysqlEngine

        return MysqlEngine(profile, password)

    def _password(self, profile: DbProfile) -> str | None:
        if not profile.password:
            return None
        password = self.profiles.secret(profile.name, "password")
        if password is None:
            raise CallError(
                ErrorCode.NOT_CONFIGURED,
                f"the password of database profile {profile.name!r} is not in the credential store; "
                "set it again in Settings",
            )
        return password

    # -- the Kind protocol ---------------------------------------------------------------
    async def pin(self, workspace: Workspace, conn: DbConnection) -> Mapping[str, JSON]:
        return {}

    def _prepare(self, call: Call[DbConnection]) -> tuple[DbProfile, str, list[Scalar]]:
        conn = call.connection
        query = conn.queries.get(call.operation)
        if query is None:
            raise CallError(ErrorCode.REFUSED, f"query {call.operation!r} is not declared")
        args = bind_args(query.params, call.args)
        profile = self.profile(conn.service, call.settings, call.policy)
        if profile.engine != conn.engine:
            raise CallError(
                ErrorCode.REFUSED,
                f"the connection declares engine {conn.engine} but database profile "
                f"{profile.name!r} is {profile.engine}",
            )
        return profile, query.sql, args

    async def describe(self, call: Call[DbConnection]) -> WriteDetails:
        profile, sql, args = self._prepare(call)
        return describe_write(
            profile,
            sql,
            args,
            query=call.operation,
            connection=f"{call.connection_id} → database {profile.name} ({profile.engine})",
        )

    async def execute(self, call: Call[DbConnection]) -> dict[str, Any]:
        profile, sql, args = self._prepare(call)
        return await self.run(profile, sql, args, write=call.write)

    async def run(
        self, profile: DbProfile, sql: str, args: Sequence[Scalar], *, write: bool
    ) -> dict[str, Any]:
        """One statement on ``profile``, as the success envelope (the explorer uses this too). An
        unavailable database is named, so the user knows which one."""
        try:
            engine = await self.engine(profile)
            if write:
                written = await engine.write(sql, args)
                return PLAIN.success(written.result(), None)
            return PLAIN.success(await engine.read(sql, args), None)
        except CallError as err:
            if err.code is not ErrorCode.UNAVAILABLE:
                raise
            raise CallError(ErrorCode.UNAVAILABLE, f"database {profile.name!r}: {err.message}") from err

    async def aclose(self) -> None:
        engines, self._engines = self._engines, {}
        for _fingerprint, engine in engines.values():
            await engine.aclose()


def describe_write(
    profile: DbProfile, sql: str, args: Sequence[Scalar], *, query: str, connection: str
) -> WriteDetails:
    """The dialog for one write statement; the token binds the profile, the SQL and the args."""
    shown_args = canonical(list(args))
    return DB.confirm.details(
        fields=(("Query", query), ("Connection", connection), ("SQL", sql), ("Args", shown_args)),
        request=f"{sql}\n\nargs: {shown_args}",
        binding={
            "service": profile.name,
            "engine": profile.engine,
            "profile": profile.fingerprint,
            "query": query,
            "sql": sql,
            "args": list(args),
        },
    )
