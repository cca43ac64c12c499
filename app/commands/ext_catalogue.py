"""``helm ext install --catalogue``, ``helm ext update|rollback|pack``: extensions from catalogues.

Each update is shown as what it adds to what the user approved, then the usual review, and
asks; nothing lands without a yes (``--yes`` for scripts). See docs/teams.md#catalogues.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, ask_yes_no, fail, home, home_path, open_broker
from broker.catalogue import CatalogueFault, archive, updates
from broker.catalogue.store import CatalogueStore
from broker.errors import ApprovalChanged, ManifestError
from broker.visible import visible


def register(s: Any) -> None:
    up = s.add_parser(
        "update", help="show each update from its catalogue, what it adds, and ask before it lands"
    )
    up.add_argument("ids", nargs="*", metavar="ID", help="only these extensions (default: every one)")
    up.add_argument("--workspace", "-w", required=True)
    up.add_argument("--yes", action="store_true", help="approve every update without asking (for scripts)")
    up.add_argument("--check", action="store_true", help="only show what is available; change nothing")
    add_home_option(up)
    up.set_defaults(handler=_update)
    rb = s.add_parser("rollback", help="go back to the version before the last update, as you approved it")
    rb.add_argument("id")
    rb.add_argument("--workspace", "-w", required=True)
    add_home_option(rb)
    rb.set_defaults(handler=_rollback)
    pk = s.add_parser("pack", help="make a reproducible archive of an extension, for a catalogue")
    pk.add_argument("dir", type=Path)
    pk.add_argument("--out", type=Path, help="the archive to write (default: ID-VERSION.tar.gz here)")
    pk.set_defaults(handler=_pack)


def install(args: argparse.Namespace) -> int:
    """``helm ext install ID[@VERSION] --catalogue NAME``: download, verify, review, install."""
    from app.commands.ext import review_and_install

    ext_id, _, version = str(args.dir).partition("@")
    where = home_path(args)
    known = CatalogueStore(where).provenance(args.workspace, ext_id)
    if known is not None and ext_id in home(args).settings().workspace(args.workspace).extensions:
        fail(
            f"{ext_id} is installed from catalogue {known.catalogue} ({known.version}): use `helm ext update`"
        )

    async def go() -> updates.Fetched:
        entry = updates.catalogue_entry(where, args.catalogue)
        return await updates.fetch(where, entry, ext_id, version or None)

    fetched = _catalogue(go())
    release = fetched.release
    checked = "signature, archive sha256 and manifest verified"
    print(visible(f"{release.label} from catalogue {fetched.catalogue}: {checked}"))
    if fetched.notice:
        print(visible(f"note: {fetched.notice}"))
    code = 1
    try:
        code = review_and_install(args, fetched.manifest.folder, fetched.catalogue)
    finally:
        installed = home(args).settings().workspace(args.workspace).extensions.get(ext_id)
        if installed is not None and installed.path == fetched.manifest.folder:
            updates.record_install(where, args.workspace, fetched)
    return code


def _catalogue[T](coro: Coroutine[Any, Any, T]) -> T:
    try:
        result: T = asyncio.run(coro)
    except CatalogueFault as fault:
        fail(str(fault))
    return result


def _update(args: argparse.Namespace) -> int:
    async def go() -> updates.UpdateCheck:
        async with open_broker(args) as broker:
            return await updates.check(broker, args.workspace, args.ids)

    found: updates.UpdateCheck = _catalogue(go())
    for gone in found.withdrawn:
        print(visible(f"STOPPED: {gone.message}"))
    for line in (*found.problems, *found.notices):
        print(visible(f"note: {line}"))
    if not found.updates:
        print("no updates" if not (found.withdrawn or found.problems) else "no updates to approve")
        return 1 if found.withdrawn or found.problems else 0
    declined = 0
    for update in found.updates:
        declined += not _one_update(args, update)
    return 1 if declined or found.withdrawn or found.problems else 0


def format_update(update: updates.Update) -> str:
    """What an update adds to what the user approved, in words (the window says the same)."""
    versions = f"{update.installed_version} → {update.version}"
    head = f"Update {update.extension} {versions} (catalogue {update.fetched.catalogue})"
    lines = [head, "Compared with what you approved:", *(f"  - {line}" for line in update.diff.lines())]
    if update.fetched.notice:
        lines.append(f"note: {update.fetched.notice}")
    return visible("\n".join(lines))


def _one_update(args: argparse.Namespace, update: updates.Update) -> bool:
    from app.commands.ext import format_reviewed

    async def review() -> Any:
        async with open_broker(args) as broker:
            return await updates.review_update(broker, update)

    reviewed = asyncio.run(review())
    print()
    print(format_update(update))
    print()
    print(format_reviewed(reviewed))
    print()
    if args.check:
        return True
    question = "Approve this update?" if update.diff.grows else "Approve this update (no new capabilities)?"
    if not args.yes and not ask_yes_no(question):
        print(
            visible(f"not updated: {update.extension} {update.installed_version} keeps running as approved")
        )
        return False

    async def land() -> None:
        async with open_broker(args) as broker:
            await updates.approve_update(broker, update, reviewed)

    try:
        asyncio.run(land())
    except ApprovalChanged as err:
        fail(str(err))
    print(visible(f"updated {update.extension} to {update.version}; `helm ext rollback` steps back"))
    return True


def _rollback(args: argparse.Namespace) -> int:
    async def go() -> str:
        async with open_broker(args) as broker:
            return await updates.rollback(broker, args.workspace, args.id)

    version: str = _catalogue(go())
    print(visible(f"{args.id} is back at {version}, as you approved it"))
    return 0


def _pack(args: argparse.Namespace) -> int:
    try:
        manifest, data = archive.pack(args.dir)
    except CatalogueFault as fault:
        fail(str(fault))
    except ManifestError as exc:
        for issue in exc.issues:
            print(visible(f"{issue.path}: {issue.message}"), file=sys.stderr)
        fail(f"{len(exc.issues)} problem(s) in {args.dir / 'manifest.json'}: nothing was packed")
    out = args.out or Path.cwd() / archive.archive_name(manifest)
    out.write_bytes(data)
    print(visible(f"{out}  {len(data)} bytes  sha256 {hashlib.sha256(data).hexdigest()}"))
    return 0
