"""``helm ext new|schema|lint|review|install|approve|list|enable|disable|remove``, and (from
``app.commands.ext_catalogue``) ``update|rollback|pack``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from app import exttest
from app.commands import ext_catalogue
from app.commands.common import add_home_option, ask_yes_no, fail, home, open_broker, print_json, run
from app.scaffold import ScaffoldError, create
from broker import approval, extensions
from broker.errors import ApprovalChanged, ManifestError
from broker.manifest import MANIFEST_FILE, Manifest, Review
from broker.manifest import load as load_manifest
from broker.resolution import Manifests
from broker.visible import visible
from resources import path as resource_path

SCHEMA_FILE = resource_path("manifest.schema.json")


def register(sub: Any) -> None:
    p = sub.add_parser("ext", help="lint, review, install and manage extensions")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    new = s.add_parser("new", help="write a new widget or tool to start from")
    new.add_argument("dir", type=Path, help="an empty or new folder")
    new.add_argument("--kind", choices=["widget", "tool"], required=True)
    new.add_argument("--id", dest="ext_id", help="reverse-DNS id (default: com.example.<folder>)")
    new.add_argument("--name", help="display name (default: from the folder name)")
    new.set_defaults(handler=_new)
    sch = s.add_parser("schema", help="print the manifest JSON Schema (for editors that cannot fetch it)")
    sch.add_argument("--path", action="store_true", help="print where the schema file is instead")
    sch.set_defaults(handler=_schema)
    lint = s.add_parser(
        "lint",
        help="validate an extension's manifest; print every problem (exit 0 clean, 1 problems)",
    )
    lint.add_argument("dir", type=Path)
    lint.add_argument("--json", action="store_true", help="print the result as JSON on stdout (for CI)")
    lint.set_defaults(handler=_lint)
    exttest.register(s)
    review = s.add_parser("review", help="show what an extension may do, as plugin review shows it")
    review.add_argument("dir", type=Path)
    review.set_defaults(handler=_review)
    _register_workspace_actions(s)


def _register_workspace_actions(s: Any) -> None:
    """install, approve, list, enable, disable, remove: an extension in a workspace."""
    inst = s.add_parser("install", help="review and install an extension into a workspace")
    inst.add_argument("dir", metavar="DIR|ID[@VERSION]", help="its folder, or with --catalogue its id")
    inst.add_argument("--catalogue", "-c", metavar="NAME", help="download it from this catalogue (signed)")
    inst.add_argument("--workspace", "-w", required=True)
    inst.add_argument("--approve", action="store_true", help="approve without asking (for scripts)")
    add_home_option(inst)
    inst.set_defaults(handler=_install)
    appr = s.add_parser("approve", help="review an installed extension again and approve it")
    appr.add_argument("id")
    appr.add_argument("--workspace", "-w", required=True)
    appr.add_argument("--yes", action="store_true", help="approve without asking (for scripts)")
    add_home_option(appr)
    appr.set_defaults(handler=_approve)
    ls = s.add_parser("list", help="list the extensions of a workspace")
    ls.add_argument("--workspace", "-w", required=True)
    ls.add_argument("--json", action="store_true")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    for name, enabled in (("enable", True), ("disable", False)):
        e = s.add_parser(name, help=f"{name} an installed extension")
        e.add_argument("id")
        e.add_argument("--workspace", "-w", required=True)
        add_home_option(e)
        e.set_defaults(handler=_set_enabled, enabled=enabled)
    rm = s.add_parser("remove", help="remove an extension from a workspace (its folder is kept)")
    rm.add_argument("id")
    rm.add_argument("--workspace", "-w", required=True)
    add_home_option(rm)
    rm.set_defaults(handler=_remove)
    ext_catalogue.register(s)


def format_review(review: Review) -> str:
    """Plugin review as text for a terminal: every connection, reads then writes, warnings last.

    Names, labels and details come from the manifest: hidden characters are shown as
    ``[U+XXXX]`` (``broker.visible``), so nothing in them can act on the terminal.
    """
    lines = [f"{review.name} {review.version} ({review.id})"]
    lines.append("May write: " + ("yes — every write is confirmed by you" if review.may_write else "no"))
    if review.orchestrate is not None:
        lines += ["", "Builds (each one starts only when you click Start):"]
        lines += [f"  {label}: {value}" for label, value in review.orchestrate.review_lines()]
    for conn in review.connections:
        lines += ["", f"[{conn.id}] {conn.kind} — {conn.target}"]
        for item in conn.reads:
            lines.append(f"  read   {item.label}" + (f"  ({item.detail})" if item.detail else ""))
        for item in conn.writes:
            lines.append(f"  WRITE  {item.label}" + (f"  ({item.detail})" if item.detail else ""))
        lines += [f"  ! {w}" for w in conn.warnings]
    writes = [(c.id, w) for c in review.connections for w in c.writes]
    if writes:
        lines += ["", "Writes (each one asks for your confirmation):"]
        lines += [f"  - [{cid}] {w.label}" for cid, w in writes]
    return visible("\n".join(lines))


def format_reviewed(reviewed: extensions.Reviewed) -> str:
    """The review of an installed extension: the manifest's review, then what changed in the
    pinned tool definitions since the last approval and when tools are or were pinned."""
    text = format_review(reviewed.review)
    if reviewed.changes:
        text += "\n\nChanged since your last approval:\n" + "\n".join(f"  - {c}" for c in reviewed.changes)
    if reviewed.pinning:
        text += "\n\nTool pinning:\n" + "\n".join(f"  - {p}" for p in reviewed.pinning)
    return visible(text)


def _print_issues(exc: ManifestError) -> None:
    for issue in exc.issues:
        print(visible(f"{issue.path}: {issue.message}"), file=sys.stderr)


def _load(folder: Path) -> Manifest | None:
    try:
        return load_manifest(folder)
    except ManifestError as exc:
        _print_issues(exc)
        print(f"{len(exc.issues)} problem(s) in {folder / 'manifest.json'}", file=sys.stderr)
        return None


def _new(args: argparse.Namespace) -> int:
    try:
        made = create(args.dir, args.kind, ext_id=args.ext_id, name=args.name)
    except ScaffoldError as exc:
        fail(str(exc))
    print(f"created {made.kind} {made.id} in {made.folder}")
    print(f"next: helm dev {made.folder}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    if args.path:
        print(SCHEMA_FILE)
    else:
        print(SCHEMA_FILE.read_text(encoding="utf-8"), end="")
    return 0


def _lint(args: argparse.Namespace) -> int:
    """Exit 0 when the manifest is valid, 1 when it has problems or cannot be read."""
    if not args.json:
        manifest = _load(args.dir)
        if manifest is None:
            return 1
        print(f"{manifest.id}: manifest OK")
        return 0
    try:
        load_manifest(args.dir)
        issues: list[Any] = []
    except ManifestError as exc:
        issues = list(exc.issues)
    problems = [{"path": i.path, "message": i.message} for i in issues]
    print_json({"manifest": str(args.dir / MANIFEST_FILE), "ok": not problems, "problems": problems})
    return 1 if problems else 0


def _review(args: argparse.Namespace) -> int:
    manifest = _load(args.dir)
    if manifest is None:
        return 1
    print(format_review(manifest.review()))
    return 0


def _install(args: argparse.Namespace) -> int:
    if args.catalogue:
        return ext_catalogue.install(args)
    folder = Path(args.dir)
    if _load(folder) is None:
        return 1
    return review_and_install(args, folder)


def review_and_install(args: argparse.Namespace, folder: Path, origin: str | None = None) -> int:
    """Install the extension in ``folder``, show its review and approve it on the user's yes;
    ``origin`` is the catalogue it came from (None: a folder of the user's)."""
    manifest = extensions.install(home(args), args.workspace, folder, origin)
    reviewed = run_reviewed(args, manifest.id)
    print(format_reviewed(reviewed))
    print()
    if not args.approve and not ask_yes_no("Approve this extension?"):
        print(visible(f"installed {manifest.id}, NOT approved: its calls are refused until you approve it"))
        print(f"approve it later with: helm ext approve -w {args.workspace} {manifest.id}")
        return 1
    approve_reviewed(args, reviewed)
    print(visible(f"installed and approved {manifest.id} in {args.workspace}"))
    return 0


def _approve(args: argparse.Namespace) -> int:
    _not_an_app(args)
    reviewed = run_reviewed(args, args.id)
    print(format_reviewed(reviewed))
    if not args.yes and not ask_yes_no("Approve this extension?"):
        print("not approved")
        return 1
    approve_reviewed(args, reviewed)
    print(visible(f"approved {args.id}"))
    return 0


def _not_an_app(args: argparse.Namespace) -> None:
    """An MCP App is approved through its own review (the server's HTML, CSP and tools), never
    the generic one, which shows none of what the app's approval pins."""
    h = home(args)
    ws = h.settings().workspace(args.workspace)
    manifest = approval.check(ws, args.id, Manifests.in_home(h.path).load).manifest
    app = manifest.app if manifest is not None else None
    if app is not None:
        fail(
            f"{args.id} is an MCP App: review and approve it with "
            f"`helm app add -w {args.workspace} -s {app.server} {app.uri}`, or with Review… in Helm"
        )


def run_reviewed(args: argparse.Namespace, ext_id: str) -> extensions.Reviewed:
    """The review snapshot, read with its own broker (MCP servers are started for it and
    stopped again before the question is asked)."""

    async def go() -> extensions.Reviewed:
        async with open_broker(args) as broker:
            return await extensions.review(broker, args.workspace, ext_id)

    return asyncio.run(go())


def approve_reviewed(args: argparse.Namespace, reviewed: extensions.Reviewed) -> None:
    """Approve what was printed, with a fresh broker: a server's tools are read anew, so a
    change made while the question was open is seen and refused."""

    async def go() -> int:
        async with open_broker(args) as broker:
            await extensions.approve(broker, reviewed)
        return 0

    try:
        run(go())
    except ApprovalChanged as err:
        fail(str(err))


def _list(args: argparse.Namespace) -> int:
    h = home(args)
    ws = h.settings().workspace(args.workspace)
    manifests = Manifests.in_home(h.path)
    rows = []
    for e in sorted(ws.extensions.values(), key=lambda e: e.id):
        decision = approval.check(ws, e.id, manifests.load)
        m = decision.manifest
        name, version = (m.name, m.version) if m is not None else ("?", "?")
        state = "approved" if decision.approved else decision.standing.value
        rows.append(
            {
                "id": e.id,
                "name": name,
                "version": version,
                "enabled": e.enabled,
                "state": state,
                "path": str(e.path),
            }
        )
    if args.json:
        print_json(rows)
    else:
        for r in rows:
            flag = "enabled" if r["enabled"] else "disabled"
            print(visible(f"{r['id']}\t{r['version']}\t{flag}\t{r['state']}\t{r['path']}"))
    return 0


def _set_enabled(args: argparse.Namespace) -> int:
    extensions.set_enabled(home(args), args.workspace, args.id, args.enabled)
    print(f"{args.id} {'enabled' if args.enabled else 'disabled'}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    extensions.remove(home(args), args.workspace, args.id)
    print(f"{args.id} removed from {args.workspace}")
    return 0
