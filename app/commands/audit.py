"""``helm audit``: the log of write decisions and redactions, and where else it goes.

``helm audit sink add|list|remove`` manage the user's own audit sinks (``broker.teams``): a JSON
Lines file or a syslog receiver that every audit record (and, with ``--activity``, every call)
is exported to while Helm runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from app.commands.common import add_home_option, fail, home, home_path, print_json
from broker import teams
from broker.audit import AuditLog
from broker.export.config import FACILITIES, TRANSPORTS, sink_json
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="show the log of write decisions and redactions")
    p.add_argument("--json", action="store_true")
    p.add_argument("--limit", type=int, default=50, help="show the last N records (default 50)")
    add_home_option(p)
    p.set_defaults(handler=_show)
    actions = p.add_subparsers(dest="audit_action", metavar="sink")
    sink = actions.add_parser("sink", help="where audit records are exported").add_subparsers(
        dest="sink_action", metavar="add|list|remove", required=True
    )
    add = sink.add_parser("add", help="export audit records to a JSON Lines file or a syslog receiver")
    add.add_argument("name")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument("--jsonl", metavar="PATH", help="append JSON Lines to this file (absolute path)")
    where.add_argument(
        "--syslog", nargs=2, metavar=("TRANSPORT", "ADDRESS"),
        help=f"send RFC 5424 messages: {'|'.join(TRANSPORTS)} and host:port or a socket's path",
    )  # fmt: skip
    add.add_argument("--facility", choices=sorted(FACILITIES), help="syslog facility (default local0)")
    add.add_argument("--activity", action="store_true", help="also export every call's activity record")
    add_home_option(add)
    add.set_defaults(handler=_add)
    listing = sink.add_parser("list", help="show the audit sinks")
    listing.add_argument("--json", action="store_true")
    add_home_option(listing)
    listing.set_defaults(handler=_list)
    remove = sink.add_parser("remove", help="stop exporting to one of your sinks")
    remove.add_argument("name")
    add_home_option(remove)
    remove.set_defaults(handler=_remove)


def _add(args: argparse.Namespace) -> int:
    raw: dict[str, Any]
    if args.jsonl is not None:
        if args.facility is not None:
            fail("--facility is a setting of a syslog sink")
        raw = {"type": "jsonl", "path": args.jsonl}
    else:
        raw = {"type": "syslog", "transport": args.syslog[0], "address": args.syslog[1]}
        if args.facility is not None:
            raw["facility"] = args.facility
    if args.activity:
        raw["activity"] = True
    sink = teams.add_sink(home(args), args.name, raw)
    print(visible(f"audit sink {args.name}: {sink.target}" + (" (and activity)" if sink.activity else "")))
    return 0


def _list(args: argparse.Namespace) -> int:
    sinks = teams.audit_sinks(home(args).settings())
    if args.json:
        print_json({s.name: sink_json(s) for s in sinks})
        return 0
    if not sinks:
        print("no audit sinks: records stay in this home's audit log only")
    for s in sinks:
        print(visible(f"{s.name}: {s.target}" + (" (and activity)" if s.activity else "")))
    if sinks:
        print("(Helm's Audit log window shows whether each one is up and what it queued or dropped)")
    return 0


def _remove(args: argparse.Namespace) -> int:
    teams.remove_sink(home(args), args.name)
    print(visible(f"audit sink {args.name} removed"))
    return 0


def _show(args: argparse.Namespace) -> int:
    log = AuditLog.in_home(home_path(args))
    scan = log.scan()
    records = list(scan.records)[-args.limit :]
    problems = scan.problems(log.path)
    if problems:  # on stderr, so --json stays one JSON document
        print(visible(f"helm: {problems}"), file=sys.stderr)
    if args.json:
        print_json([asdict(r) for r in records])
        return 0
    if not records:
        print("nothing recorded yet (write decisions and redactions appear here)")
    for r in records:
        file = f", file {r.file}" if r.file else ""
        print(
            visible(
                f"{r.time}  {r.decision:<9} {r.outcome:<14} {r.workspace}/{r.extension} "
                f"{r.connection}.{r.operation}  {r.title}  (asked by {r.who}{file})"
            )
        )
    return 0
