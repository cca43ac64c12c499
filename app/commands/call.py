"""``helm call``: one call as an extension would make it; prints the envelope as JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.commands.common import add_home_option, ask_yes_no, fail, open_broker, print_json, run
from broker import CallContext, Decision, WriteSummary
from broker.jsonutil import DuplicateKeyError, loads_strict


def register(sub: Any) -> None:
    p = sub.add_parser(
        "call",
        help="make one call as an extension; prints the envelope (exit 0 when ok, 1 when not)",
        description="A write prints the same summary the dialog shows and asks y/N (default No).",
    )
    p.add_argument("--workspace", "-w", required=True)
    p.add_argument("--extension", "-e", required=True, help="the extension id")
    p.add_argument("connection")
    p.add_argument("operation")
    p.add_argument("--args", default="{}", metavar="JSON", help="the arguments as a JSON object")
    add_home_option(p)
    p.set_defaults(handler=_call)


async def _terminal_confirm(summary: WriteSummary) -> Decision:
    # as_text shows every hidden character as [U+XXXX]: a file's ESC sequences stay text.
    print(summary.as_text(), file=sys.stderr)
    print(file=sys.stderr)
    return Decision.CONFIRMED if ask_yes_no("Send this write?") else Decision.DECLINED


def _call(args: argparse.Namespace) -> int:
    try:
        call_args = loads_strict(args.args)
    except (DuplicateKeyError, ValueError) as exc:
        fail(f"--args is not valid JSON: {exc}")
    if not isinstance(call_args, dict):
        fail("--args must be a JSON object")

    async def go() -> int:
        async with open_broker(args) as broker:
            ctx = CallContext(args.workspace, args.extension, "cli")
            result = await broker.request(ctx, args.connection, args.operation, call_args, _terminal_confirm)
        print_json(result)
        return 0 if result.get("ok") else 1

    return run(go())
