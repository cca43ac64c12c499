"""``helm audit``: the log of write decisions and redactions."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from app.commands.common import add_home_option, home_path, print_json
from broker.audit import AuditLog
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="show the log of write decisions and redactions")
    p.add_argument("--json", action="store_true")
    p.add_argument("--limit", type=int, default=50, help="show the last N records (default 50)")
    add_home_option(p)
    p.set_defaults(handler=_show)


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
