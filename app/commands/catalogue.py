"""``helm catalogue add|list|remove|poll`` (users) and ``keygen|add-release|set-status|sign`` (publishers).

A user adds a catalogue by its URL and the public key its publisher gives them; the index is
verified before the catalogue is added. A publisher keeps a folder that is the catalogue as it
is served, and a private key that never leaves their machine. See docs/teams.md#catalogues.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, fail, home, home_path, print_json
from broker.catalogue import CatalogueFault, Status, publish
from broker.catalogue.index import version_key
from broker.catalogue.source import CatalogueReader, check_key, check_location
from broker.catalogue.store import CatalogueEntry, CatalogueStore, check_name
from broker.errors import HelmError
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("catalogue", help="signed extension catalogues: add them, or publish one")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser("add", help="add a catalogue by its URL (or folder) and its publisher's public key")
    add.add_argument("name")
    add.add_argument("url", help="https://… (http only on 127.0.0.1/localhost), or an absolute folder")
    add.add_argument("--key", required=True, type=Path, help="the publisher's public key (PEM file)")
    add_home_option(add)
    add.set_defaults(handler=_add)
    ls = s.add_parser("list", help="the catalogues Helm installs from")
    ls.add_argument("--json", action="store_true")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    show = s.add_parser("show", help="what a catalogue offers: versions, status and capabilities (verified)")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    add_home_option(show)
    show.set_defaults(handler=_show)
    rm = s.add_parser("remove", help="stop using a catalogue (installed extensions stay)")
    rm.add_argument("name")
    add_home_option(rm)
    rm.set_defaults(handler=_remove)
    poll = s.add_parser("poll", help="whether the window checks for updates by itself (off unless turned on)")
    poll.add_argument("state", choices=["on", "off"])
    add_home_option(poll)
    poll.set_defaults(handler=_poll)
    _register_publisher(s)


def _register_publisher(s: Any) -> None:
    kg = s.add_parser("keygen", help="make a signing key (the private half owner-only)")
    kg.add_argument("--private-out", type=Path, required=True)
    kg.add_argument("--public-out", type=Path, required=True)
    kg.set_defaults(handler=_keygen)
    rel = s.add_parser(
        "add-release", help="add an archive (from helm ext pack) to a catalogue folder's index"
    )
    rel.add_argument("dir", type=Path)
    rel.add_argument("archive", type=Path)
    rel.set_defaults(handler=_add_release)
    st = s.add_parser("set-status", help="deprecate or withdraw a version (users see the reason)")
    st.add_argument("dir", type=Path)
    st.add_argument("release", metavar="ID@VERSION")
    st.add_argument("status", choices=[s.value for s in Status])
    st.add_argument("--reason", default="")
    st.set_defaults(handler=_set_status)
    sign = s.add_parser("sign", help="raise the index's serial and sign it")
    sign.add_argument("dir", type=Path)
    sign.add_argument("--key-file", type=Path, required=True, help="the private key (owner-only file)")
    sign.set_defaults(handler=_sign)


def _guard[T](call: Callable[[], T]) -> T:
    try:
        result: T = call()
    except (CatalogueFault, HelmError) as fault:
        fail(str(fault))
    except OSError as exc:
        fail(f"cannot use {exc.filename}: {exc.strerror}")
    return result


def _add(args: argparse.Namespace) -> int:
    home(args)
    store = CatalogueStore(home_path(args))
    try:
        key = args.key.read_text("ascii")
    except (OSError, UnicodeDecodeError):
        fail(f"cannot read the key file {args.key} (a PEM public key)")

    def entry() -> CatalogueEntry:
        return CatalogueEntry(check_name(args.name), check_location(args.url), check_key(key))

    made: CatalogueEntry = _guard(entry)
    if made.name in store.read().catalogues:
        fail(f"a catalogue named {made.name} exists: remove it first")
    index = _guard(lambda: asyncio.run(CatalogueReader(made).index(store)))
    with store.update() as state:
        state.catalogues[made.name] = made
    offered = len(index.releases)
    print(
        visible(f"added catalogue {made.name}: index serial {index.serial} verified, {offered} extension(s)")
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    state = CatalogueStore(home_path(args)).read()
    rows = [
        {"name": c.name, "url": c.url, "serial_seen": state.seen.get(c.name, {}).get("serial")}
        for c in state.catalogues.values()
    ]
    if args.json:
        print_json({"poll": state.poll, "catalogues": rows})
    else:
        for r in rows:
            print(visible(f"{r['name']}\t{r['url']}\tserial {r['serial_seen']}"))
        print(f"background update checks: {'on' if state.poll else 'off'}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from broker.catalogue.updates import catalogue_entry

    where = home_path(args)
    entry = _guard(lambda: catalogue_entry(where, args.name))
    index = _guard(lambda: asyncio.run(CatalogueReader(entry).index(CatalogueStore(where))))
    if args.json:
        print_json(index.to_json())
        return 0
    print(visible(f"catalogue {entry.name}, index serial {index.serial}"))
    for versions in (index.releases[ext_id] for ext_id in sorted(index.releases)):
        for version in sorted(versions, key=version_key, reverse=True):
            release = versions[version]
            why = f" — {release.reason}" if release.reason else ""
            print(visible(f"{release.label}  {release.status.value}{why}"))
            print(visible("\n".join(f"    {line}" for line in release.capabilities)))
    return 0


def _remove(args: argparse.Namespace) -> int:
    with CatalogueStore(home_path(args)).update() as state:
        if state.catalogues.pop(args.name, None) is None:
            fail(f"no catalogue named {args.name!r}")
    print(visible(f"removed catalogue {args.name}"))
    return 0


def _poll(args: argparse.Namespace) -> int:
    home(args)
    with CatalogueStore(home_path(args)).update() as state:
        state.poll = args.state == "on"
    print(f"background update checks {'on' if args.state == 'on' else 'off'}")
    return 0


def _keygen(args: argparse.Namespace) -> int:
    kid: str = _guard(lambda: publish.keygen(args.private_out, args.public_out))
    print(f"key {kid}: private half in {args.private_out} (keep it, share only the public half)")
    print(f"public half in {args.public_out}: users add the catalogue with it")
    return 0


def _add_release(args: argparse.Namespace) -> int:
    release = _guard(lambda: publish.add_release(args.dir, args.archive))
    print(visible(f"added {release.label} (sha256 {release.sha256}); sign the index to publish it"))
    return 0


def _set_status(args: argparse.Namespace) -> int:
    ext_id, _, version = args.release.partition("@")
    release = _guard(lambda: publish.set_status(args.dir, ext_id, version, Status(args.status), args.reason))
    print(visible(f"{release.label} is {release.status.value}; sign the index to publish it"))
    return 0


def _sign(args: argparse.Namespace) -> int:
    def go() -> int:
        return publish.sign(args.dir, publish.read_private_key(args.key_file))

    serial: int = _guard(go)
    print(f"signed {args.dir / 'index.json'} at serial {serial}")
    return 0
