"""``helm ext test DIR --fixtures FIXTURES``: the page headless against recorded envelopes, for CI.

It lints the manifest and reads every fixture first (problems: exit 1 before anything starts),
then loads the page in a real, offscreen frame on a temporary Helm home where the extension is
installed and approved and every kind answers from the fixtures — no profile, server or
keychain is used, and the user's own home is never read. Writes are confirmed (a line says so).
It prints a line per call and console message, then PASS or FAIL.

Exit codes: 0 the page loaded and ran with no uncaught error and no failed call (a failure its
fixture recorded on purpose does not count); 1 anything else; 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.commands.dev import checked_fixtures, checked_manifest
from broker.authoring.fixtures import FixtureBook
from broker.manifest import Manifest

TEST_WORKSPACE = "test"


def register(actions: Any) -> None:
    """Adds ``test`` to the ``helm ext`` actions."""
    t = actions.add_parser(
        "test",
        help="load the page headless against fixtures; report uncaught errors and failed calls",
        description="Exit 0 when the page loads and runs with no uncaught error and no failed call; "
        "1 otherwise. Every write is confirmed.",
    )
    t.add_argument("dir", type=Path, help="the extension folder")
    t.add_argument("--fixtures", type=Path, required=True, metavar="FIXTURES", help="the recorded envelopes")
    t.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="give up after (default 60)"
    )
    t.add_argument(
        "--settle",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="end once no call has run for this long after the page loaded (default 1)",
    )
    t.add_argument("--verbose", action="store_true", help="also show the web engine's and Qt's own messages")
    t.set_defaults(handler=_test)


def _test(args: argparse.Namespace) -> int:
    folder: Path = args.dir.expanduser().resolve()
    manifest = checked_manifest(folder)
    book = checked_fixtures(args.fixtures)
    from app.devmode import ReportLines
    from app.enginelog import quiet_engine
    from app.gui import run_qt
    from app.selftest import headless_environment
    from ui.dev.terminal import TerminalReport

    headless_environment()
    report = TerminalReport(sys.stdout)
    quiet_engine(args.verbose, ReportLines(report))
    with tempfile.TemporaryDirectory(prefix="helm-ext-test-") as home:
        return run_qt(lambda: _run(Path(home), manifest, book, report, args))


async def _run(
    home: Path, manifest: Manifest, book: FixtureBook, report: Any, args: argparse.Namespace
) -> int:
    from app.devmode import DevRun, open_dev_broker
    from broker.extensions import install, review_and_approve
    from broker.workspaces import add_workspace
    from ui.dev.headless import PageTest
    from ui.dev.terminal import call_line
    from ui.dev.window import DevOptions

    run = DevRun(manifest.folder, TEST_WORKSPACE, home, DevOptions(replay=book))
    async with open_dev_broker(run) as broker:
        add_workspace(broker.home, TEST_WORKSPACE, manifest.folder, author_mode=True)
        install(broker.home, TEST_WORKSPACE, manifest.folder)
        await review_and_approve(broker, TEST_WORKSPACE, manifest.id)  # a throwaway home
        report.line("test", f"{manifest.name} {manifest.version} ({manifest.id}) against {book.folder}")
        outcome = await PageTest(broker, TEST_WORKSPACE, book, report).run(
            manifest, limit=args.timeout, settle=args.settle
        )
    for record in outcome.failed:
        report.line("failed", call_line(record))
    for error in outcome.uncaught:
        report.line("failed", error)
    report.line("result", outcome.summary())
    return 0 if outcome.passed else 1
