"""``helm service add|list|remove|connect|disconnect``: service profiles for http connections.

Secrets (the token, the OAuth2 client secret) are read from a prompt or stdin, never argv.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import webbrowser
from typing import Any

from app.commands.common import add_home_option, credentials, fail, home, print_json, read_secret, run
from broker.errors import ProfileError
from broker.kinds.http.connect import ConnectError, connect_status, disconnect, start_connect
from broker.kinds.http.profiles import ServiceProfile, list_profiles, remove_profile, save_profile


def register(sub: Any) -> None:
    p = sub.add_parser("service", help="service profiles for http connections (token or OAuth2)")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    add = s.add_parser(
        "add",
        help="add or replace a service profile",
        description="The token (or, with --oauth2, the client secret) is read from the prompt or stdin.",
    )
    add.add_argument("name")
    add.add_argument("--base-url", required=True, help="https URL (http only for 127.0.0.1/localhost)")
    add.add_argument("--token-header", default="Authorization", help="header for the token")
    add.add_argument("--token-format", choices=["bearer", "raw"], default="bearer")
    add.add_argument("--no-token", action="store_true", help="a public API: send no token")
    add.add_argument("--oauth2", action="store_true", help="sign in with OAuth2 instead of a token")
    add.add_argument("--client-id", help="the OAuth2 client id (with --oauth2)")
    add.add_argument(
        "--authorize-url", metavar="URL", help="the service's OAuth2 authorization endpoint (with --oauth2)"
    )
    add.add_argument("--token-url", metavar="URL", help="the service's OAuth2 token endpoint (with --oauth2)")
    add_home_option(add)
    add.set_defaults(handler=_add)

    ls = s.add_parser("list", help="list service profiles")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)

    rm = s.add_parser("remove", help="remove a profile and its secrets")
    rm.add_argument("name")
    add_home_option(rm)
    rm.set_defaults(handler=_remove)

    co = s.add_parser(
        "connect",
        help="sign in to an OAuth2 service for a workspace",
        description="Asks for the scopes the workspace's enabled extensions declare for the service.",
    )
    co.add_argument("name")
    co.add_argument("--workspace", "-w", required=True)
    co.add_argument("--no-browser", action="store_true", help="print the sign-in URL instead of opening it")
    co.add_argument("--wait", type=float, default=300.0, metavar="SECONDS", help="how long to wait")
    add_home_option(co)
    co.set_defaults(handler=_connect)

    dc = s.add_parser("disconnect", help="forget an OAuth2 sign-in (the profile stays)")
    dc.add_argument("name")
    add_home_option(dc)
    dc.set_defaults(handler=_disconnect)


def _add(args: argparse.Namespace) -> int:
    try:
        return _add_profile(args)
    except ProfileError as exc:
        fail(str(exc))


def _add_profile(args: argparse.Namespace) -> int:
    h, store = home(args), credentials(args)
    token = secret = None
    if args.oauth2:
        missing = [opt for opt in ("client_id", "authorize_url", "token_url") if not getattr(args, opt)]
        if missing:
            fail("--oauth2 needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
        profile = ServiceProfile(
            args.name, args.base_url, "oauth2", client_id=args.client_id,
            authorize_url=args.authorize_url, token_url=args.token_url,
        )  # fmt: skip
        profile.check()
        secret = read_secret("Client secret (empty for a public client): ", allow_empty=True)
    else:
        if args.client_id or args.authorize_url or args.token_url:
            fail("--client-id, --authorize-url and --token-url go with --oauth2")
        profile = ServiceProfile(args.name, args.base_url, "token", args.token_header, args.token_format)
        profile.check()
        if not args.no_token:
            token = read_secret("Token: ")
    saved = save_profile(h, store, profile, token=token, client_secret=secret)
    print(f"service {saved.name} saved ({saved.auth}); secrets in {store.description}")
    if saved.auth == "oauth2":
        print(f"connect it with: helm service connect {saved.name} --workspace WORKSPACE")
    return 0


def _list(args: argparse.Namespace) -> int:
    h, store = home(args), credentials(args)
    rows = []
    for p in list_profiles(h):
        row: dict[str, Any] = {"name": p.name, "base_url": p.base_url, "auth": p.auth}
        if p.auth == "oauth2":
            row |= {"client_id": p.client_id, "authorize_url": p.authorize_url, "token_url": p.token_url,
                    "connection": connect_status(store, p.name)}  # fmt: skip
        else:
            row |= {"token_header": p.token_header, "token_format": p.token_format}
        rows.append(row)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no services (add one with: helm service add NAME --base-url URL)")
    for r in rows:
        print(f"{r['name']}\t{r['auth']}\t{r['base_url']}\t{_summary(r)}")
    return 0


def _summary(row: dict[str, Any]) -> str:
    if row["auth"] != "oauth2":
        return str(row["token_format"])
    if row["authorize_url"] is None or row["token_url"] is None:
        return "sign-in URLs not set: add the profile again with --authorize-url and --token-url"
    return f"{row['connection']['summary']}; sign-in at {row['authorize_url']}, token {row['token_url']}"


def _remove(args: argparse.Namespace) -> int:
    remove_profile(home(args), credentials(args), args.name)
    print(f"service {args.name} removed")
    return 0


def _disconnect(args: argparse.Namespace) -> int:
    disconnect(home(args), credentials(args), args.name)
    print(f"service {args.name} disconnected; the profile stays")
    return 0


def _connect(args: argparse.Namespace) -> int:
    async def go() -> int:
        try:
            session = await start_connect(home(args), credentials(args), args.name, args.workspace)
        except (ConnectError, ProfileError) as exc:
            fail(str(exc))
        async with session:
            print(f"redirect URI: {session.redirect_uri}", flush=True)
            if args.no_browser:
                print(f"open this URL to sign in: {session.authorize_url}", flush=True)
            else:
                print("opening the browser to sign in…", flush=True)
                await asyncio.to_thread(webbrowser.open, session.authorize_url)
            try:
                grant = await session.wait(args.wait)
            except ConnectError as exc:
                fail(str(exc))
        print(f"service {args.name} connected; scopes: {' '.join(grant.scopes) or '(none)'}")
        return 0

    try:
        return run(go())
    except KeyboardInterrupt:
        print("sign-in cancelled", file=sys.stderr)
        return 130
