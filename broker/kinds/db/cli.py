"""``helm db add|list|remove|test``: database profiles.

The password is read from the terminal (no echo) or the first line of stdin, never from argv,
and goes to the credential store only. ``add`` and ``test`` connect and warn when the account
may do more than read.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from broker.errors import ProfileError
from broker.kinds.base import KindEnv
from broker.kinds.cli import CliIO, Row, add_list, add_remove, store_of
from broker.kinds.db.profiles import DATABASES, DEFAULT_PORTS, ENGINES, DbProfile, normalize_path


def register(sub: Any, io: CliIO) -> None:
    p = sub.add_parser("db", help="add, list, test and remove database profiles")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser(
        "add",
        help="add or replace a database profile",
        description="SQLite: --engine sqlite --path FILE. PostgreSQL or MySQL: --engine postgres|mysql "
        "--host H [--port P] --database D --user U; the password is read from the terminal or stdin.",
    )
    add.add_argument("name")
    add.add_argument("--engine", required=True, choices=ENGINES)
    add.add_argument("--path", help="SQLite: the database file")
    add.add_argument("--host", help="PostgreSQL/MySQL: host name or IP address")
    add.add_argument("--port", type=int, help="default 5432 (postgres) or 3306 (mysql)")
    add.add_argument("--database", help="PostgreSQL/MySQL: database name")
    add.add_argument("--user", help="PostgreSQL/MySQL: user (use one that can only read)")
    add.add_argument("--no-password", action="store_true", help="the account signs in without a password")
    add.add_argument("--no-check", action="store_true", help="save without connecting")
    io.add_home_option(add)
    add.set_defaults(handler=lambda args: _add(io, args))
    add_list(s, io, "list database profiles", lambda args: _rows(io, args),
             lambda r: f"{r['name']}\t{r['engine']}\t{r['where']}",
             "no database profiles (add one with: helm db add NAME --engine …)")  # fmt: skip
    add_remove(s, io, DATABASES, "database", "remove a database profile and its password")
    test = s.add_parser("test", help="connect with a profile and report what its account may do")
    test.add_argument("name")
    io.add_home_option(test)
    test.set_defaults(handler=lambda args: _test(io, args))


def _profile(io: CliIO, args: argparse.Namespace) -> DbProfile:
    if args.engine == "sqlite":
        if not args.path or any((args.host, args.port, args.database, args.user)):
            io.fail("a sqlite profile takes --path only")
        return DbProfile(name=args.name, engine="sqlite", path=normalize_path(args.path))
    if args.path:
        io.fail(f"a {args.engine} profile takes --host, --port, --database and --user, not --path")
    missing = [f"--{n}" for n in ("host", "database", "user") if not getattr(args, n)]
    if missing:
        io.fail(f"a {args.engine} profile needs {', '.join(missing)}")
    return DbProfile(
        name=args.name,
        engine=args.engine,
        host=args.host,
        port=args.port or DEFAULT_PORTS[args.engine],
        database=args.database,
        user=args.user,
        password=not args.no_password,
    )


def _add(io: CliIO, args: argparse.Namespace) -> int:
    store = store_of(io, args, DATABASES)
    try:
        profile = store.check(_profile(io, args))
    except ProfileError as exc:
        io.fail(str(exc))
    password = None
    if profile.engine != "sqlite" and profile.password:
        password = io.read_secret(f"Password for {profile.user} on database {profile.name}: ")
    replaced = store.raw(profile.name) is not None
    store.save(profile, {"password": password})
    io.say(f"database {profile.name} {'updated' if replaced else 'added'} ({profile.engine})")
    if password is not None:
        io.say(f"its password is in the {store.credentials.description}")
    return 0 if args.no_check else _report(io, args, profile.name)


def _report(io: CliIO, args: argparse.Namespace, name: str) -> int:
    from broker.kinds.db.check import check_profile  # the engines' libraries, only when needed

    check = asyncio.run(check_profile(KindEnv(io.home(args), io.credentials(args)), name))
    for warning in check.warnings:
        io.warn(f"warning: {warning}")
    if not check.ok:
        io.warn(f"helm: {check.message} (fix the profile, then run: helm db test {name})")
        return 1
    io.say(check.message)  # may quote the database server
    return 0


def _rows(io: CliIO, args: argparse.Namespace) -> list[Row]:
    return [
        {"name": p.name, "engine": p.engine, "where": p.where} for p in store_of(io, args, DATABASES).all()
    ]


def _test(io: CliIO, args: argparse.Namespace) -> int:
    if store_of(io, args, DATABASES).raw(args.name) is None:
        io.fail(f"no database profile named {args.name!r}")
    return _report(io, args, args.name)
