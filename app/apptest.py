"""``helm app test --server S URI``: an MCP App headless, as the dashboard opens it, for CI.

The server's profile is read from the Helm home (its token, if it has one, from the home's
credential store); everything else happens in a temporary home that is deleted afterwards —
a workspace whose root is the one ``--workspace`` names (else the current folder), the app
reviewed and approved there with ``--read``'s tools (or, with ``--all-reads``, every tool Helm
would confirm) marked as only reading — so nothing is saved: no workspace, no approval, no
activity or audit record, no state. Then ``ui.apps.headless`` opens the app through the
dashboard's own path with ``--args`` as its settings and waits until it settles.

Exit codes: 0 the app rendered and no call failed, nothing was refused or blocked and it logged
no console error; 1 anything else (an unknown server or URI, ``--args`` that do not fit the
opening tool, a wrong ``--read`` included); 2 a usage error (``--args`` that are not a JSON
object among them).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, fail, home_path
from broker.apps.errors import AppError
from broker.apps.trial import parse_arguments
from broker.broker import Broker
from broker.credentials import CredentialStore, open_store
from broker.errors import CallError, ProfileError
from broker.mcp.profiles import MCP_SERVERS
from broker.settings import Home
from broker.visible import one_line as shown

TEST_WORKSPACE = "test"


def register(actions: Any) -> None:
    """Adds ``test`` to the ``helm app`` actions."""
    t = actions.add_parser(
        "test",
        help="open an app headless as the dashboard does; report its calls, refusals and errors",
        description="Exit 0 when the app renders and no call fails, nothing is refused or blocked "
        "and it logs no console error; 1 otherwise. Every write is declined; nothing is saved.",
    )
    t.add_argument("uri", help="the app's ui:// resource (helm app list)")
    t.add_argument("--server", "-s", required=True, help="the MCP server (helm mcp list)")
    t.add_argument(
        "--args",
        type=_json_object,
        default={},
        metavar="JSON",
        help="the opening tool's arguments, as a JSON object (default: its settings' defaults)",
    )
    t.add_argument(
        "--read",
        action="append",
        default=[],
        metavar="TOOL",
        help="treat a tool Helm would confirm as one that only reads; repeat",
    )
    t.add_argument(
        "--all-reads", action="store_true", help="treat every tool of the app as one that only reads"
    )
    t.add_argument(
        "--allow-resource-domain",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow one declared resource domain (images, fonts, styles, scripts); repeat",
    )
    t.add_argument(
        "--workspace", "-w", help="run the server in this workspace's root (default: the current folder)"
    )
    t.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="give up after (default 60)"
    )
    t.add_argument(
        "--settle",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="end once no call ran and the page did not change for this long (default 1)",
    )
    t.add_argument("--verbose", action="store_true", help="also show the web engine's and Qt's own messages")
    add_home_option(t)
    t.set_defaults(handler=_test)


def _json_object(text: str) -> dict[str, Any]:
    try:
        return parse_arguments(text)
    except AppError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


@dataclass(frozen=True)
class Trial:
    """What one run is given: the user's home (read only), the server and the app."""

    home: Path
    credentials: CredentialStore
    server: str
    uri: str
    root: Path
    arguments: dict[str, Any]
    reads: tuple[str, ...]
    all_reads: bool
    allow: tuple[str, ...] = ()


def trial_of(args: argparse.Namespace) -> Trial:
    """The run ``args`` asks for, checked against the home before anything starts."""
    path = home_path(args)
    user = Home(path)
    try:
        profile = MCP_SERVERS.store(user).get(args.server)
    except ProfileError as err:
        fail(shown(str(err)))
    if profile is None:
        fail(shown(MCP_SERVERS.store(user).missing(args.server)) + f" in the Helm home {path}")
    root = Path.cwd()
    if args.workspace is not None:
        root = user.settings().workspace(args.workspace).root
    return Trial(path, open_store(path), args.server, args.uri, root, dict(args.args),
                 tuple(args.read), args.all_reads, tuple(args.allow_resource_domain))  # fmt: skip


def _test(args: argparse.Namespace) -> int:
    trial = trial_of(args)
    from app.devmode import ReportLines
    from app.enginelog import quiet_engine
    from app.gui import run_qt
    from app.selftest import headless_environment
    from ui.dev.terminal import TerminalReport

    headless_environment()
    report = TerminalReport(sys.stdout)
    quiet_engine(args.verbose, ReportLines(report))
    with tempfile.TemporaryDirectory(prefix="helm-app-test-") as tmp:
        return run_qt(lambda: _run(trial, Path(tmp), report, args.timeout, args.settle))


def throwaway_home(trial: Trial, folder: Path) -> Home:
    """A home in ``folder`` holding only the server's profile and one workspace."""
    from broker.workspaces import add_workspace

    raw = MCP_SERVERS.store(Home(trial.home)).raw(trial.server)
    home = Home(folder)
    home.ensure()
    with home.update() as settings:
        settings.profiles(MCP_SERVERS.section)[trial.server] = dict(raw or {})
    add_workspace(home, TEST_WORKSPACE, trial.root)
    return home


async def prepare(broker: Broker, trial: Trial) -> tuple[Any, dict[str, Any]]:
    """Review the app, check the arguments and the reads, and add it to the throwaway home:
    its manifest and settings (``CommandFailed`` for what is wrong)."""
    from broker.apps import review
    from broker.apps import trial as decide

    try:
        reviewed = await review.review(broker, TEST_WORKSPACE, trial.server, trial.uri)
        reads = decide.marked(reviewed, trial.reads, all_reads=trial.all_reads)
        reviewed.spec(trial.allow, reads)  # a domain the app does not declare is refused
        settings = decide.opening_settings(reviewed, trial.arguments)
        manifest = await review.add(broker, reviewed, trial.allow, reads)
    except CallError as err:
        fail(shown(f"{err.code.value}: {err.message}"))
    except AppError as err:
        fail(shown(str(err)))
    return manifest, settings


async def _run(trial: Trial, folder: Path, report: Any, limit: float, settle: float) -> int:
    from broker.apps import launch
    from ui.apps.headless import AppTrial

    throwaway_home(trial, folder)
    async with Broker(folder, credentials=trial.credentials) as broker:
        manifest, settings = await prepare(broker, trial)
        opener = manifest.app.opener if manifest.app is not None else ""
        sent = json.dumps(launch.arguments(manifest.settings_form, settings), ensure_ascii=False)
        how = f"opened by calling {opener} with {sent}" if opener else "opened with no tool call"
        report.line("test", f"{manifest.name} ({trial.uri}) of MCP server {trial.server}, {how}")
        outcome = await AppTrial(broker, TEST_WORKSPACE, report).run(
            manifest, settings, limit=limit, settle=settle
        )
    report.line("result", outcome.summary())
    return 0 if outcome.passed else 1
