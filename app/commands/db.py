"""``helm db add|list|remove|test``: database profiles.

The password is read from the terminal (no echo) or the first line of stdin, never from argv,
and goes to the credential store only. ``add`` and ``test`` connect and warn when the account
may do more than read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from app.commands.common import add_home_option, credentials, fail, home, print_json, read_secret
from broker.errors import ProfileError
from broker.kinds.base import KindEnv
from broker.kinds.db import profiles
from broker.kinds.db.check import check_profile
from broker.kinds.db.profiles import DbProfile
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("db", help="add, list, test and remove database profiles")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser(
        "add",
        help="add or replace a database profile",
        description="SQLite: --engine sqlite --path FILE. PostgreSQL or MySQL: --engine postgres|mysql "
        "--host H [--port P] --database D --user U; the password is read from the terminal or stdin.",
    )
    add.add_argument("name")
    add.add_argument("--engine", required=True, choices=profiles.ENGINES)
    add.add_argument("--path", help="SQLite: the database file")
    add.add_argument("--host", help="PostgreSQL/MySQL: host name or IP address")
    add.add_argument("--port", type=int, help="default 5432 (postgres) or 3306 (mysql)")
    add.add_argument("--database", help="PostgreSQL/MySQL: database name")
    add.add_argument("--user", help="PostgreSQL/MySQL: user (use one that can only read)")
    add.add_argument("--no-password", action="store_true", help="the account signs in without a password")
    add.add_argument("--no-check", action="store_true", help="save without connecting")
    add_home_option(add)
    add.set_defaults(handler=_add)
    ls = s.add_parser("list", help="list database profiles")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    rm = s.add_parser("remove", help="remove a database profile and its password")
    rm.add_argument("name")
    add_home_option(rm)
    rm.set_defaults(handler=_remove)
    test = s.add_parser("test", help="connect with a profile and report what its account may do")
    test.add_argument("name")
    add_home_option(test)
    test.set_defaults(handler=_test)


def _profile(args: argparse.Namespace) -> DbProfile:
    if args.engine == "sqlite":
        if not args.path or any((args.host, args.port, args.database, args.user)):
            fail("a sqlite profile takes --path only")
        return DbProfile(name=args.name, engine="sqlite", path=profiles.normalise_path(args.path))
    if args.path:
        fail(f"a {args.engine} profile takes --host, --port, --database and --user, not --path")
    missing = [f"--{n}" for n in ("host", "database", "user") if not getattr(args, n)]
    if missing:
        fail(f"a {args.engine} profile needs {', '.join(missing)}")
    return DbProfile(
        name=args.name,
        engine=args.engine,
        host=args.host,
        port=args.port or profiles.DEFAULT_PORTS[args.engine],
        database=args.database,
        user=args.user,
        password=not args.no_password,
    )


def _add(args: argparse.Namespace) -> int:
    profile = _profile(args)
    try:
        profile.check()
    except ProfileError as exc:
        fail(str(exc))
    password = None
    if profile.engine != "sqlite" and profile.password:
        password = read_secret(f"Password for {profile.user} on database {profile.name}: ")
    h, store = home(args), credentials(args)
    replaced = profile.name in h.settings().databases
    profiles.save(h, store, profile, password)
    print(f"database {profile.name} {'updated' if replaced else 'added'} ({profile.engine})")
    if password is not None:
        print(f"its password is in the {store.description}")
    return 0 if args.no_check else _report(args, profile.name)


def _report(args: argparse.Namespace, name: str) -> int:
    check = asyncio.run(check_profile(KindEnv(home(args), credentials(args)), name))
    for warning in check.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not check.ok:
        print(
            visible(f"helm: {check.message} (fix the profile, then run: helm db test {name})"),
            file=sys.stderr,
        )
        return 1
    print(visible(check.message))  # may quote the database server
    return 0


def _list(args: argparse.Namespace) -> int:
    rows = [{"name": p.name, "engine": p.engine, "where": p.where} for p in profiles.all_profiles(home(args))]
    if args.json:
        print_json(rows)
    elif not rows:
        print("no database profiles (add one with: helm db add NAME --engine …)")
    for r in [] if args.json else rows:
        print(f"{r['name']}\t{r['engine']}\t{r['where']}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    try:
        profiles.remove(home(args), credentials(args), args.name)
    except ProfileError as exc:
        fail(str(exc))
    print(f"database {args.name} removed")
    return 0


def _test(args: argparse.Namespace) -> int:
    if args.name not in home(args).settings().databases:
        fail(f"no database profile named {args.name!r}")
    return _report(args, args.name)
