"""``helm --self-test``: proves an installed Helm works, headless, without touching the user.

It starts as a new user's first start does, on a temporary Helm home: the main window, then the
demo set up in it. It waits for the Notes widget in the real web view (offscreen), reports how
long after the process started the window was painted and the widget was ready, reads a note
through the page's ``helm.call`` and the bridge, then tries to write
it twice — once through the bridge with a confirmer that always clicks Cancel, once straight
to the broker with no token — and checks the file on disk is unchanged. Last, it makes one
read on each of the demo's other connections (its MCP and TDT servers, children of this
installation, and its SQLite database) and loads every kind's adapter. Packagers run it on a
built bundle (QtWebEngine, its resources and the shipped data must all be there to pass).
Exit 0 when every check passed, 1 on a failed check or the time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where they are used: the start is timed like the desktop's
    from broker import Broker, Decision, WriteSummary

TIME_LIMIT = 90.0
EXTENSION = "dev.helm.demo.notes"
CLOCK = "dev.helm.demo.clock"
NOTE = "notes/welcome.md"
REFUSALS = {"declined", "confirmation_required"}


class Failed(Exception):
    """One check did not hold; the message says which."""


class AlwaysCancel:
    """Answers every write as a user clicking Cancel, and counts the questions."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, summary: WriteSummary) -> Decision:
        from broker import Decision

        self.asked += 1
        return Decision.DECLINED


def process_uptime() -> float | None:
    """Seconds since this process started, where the system says (Linux); start-up time with
    the interpreter's own start and, in a bundle, its unpacking included."""
    try:
        fields = Path("/proc/self/stat").read_text().rpartition(")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def headless_environment() -> None:
    """Offscreen Qt; Chromium refuses to start its sandbox as root, so root runs without it."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--no-sandbox" not in flags:
        os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = f"{flags} --no-sandbox".strip()


def main(args: argparse.Namespace) -> int:
    """The same engine set-up and single qasync loop as the desktop app, on a throwaway home."""
    headless_environment()
    from app.gui import run_qt

    with tempfile.TemporaryDirectory(prefix="helm-self-test-") as home:
        return run_qt(lambda: run(Path(home)))


async def run(home: Path) -> int:
    from app.cli import helm_version

    started = time.perf_counter()
    report = [f"helm {helm_version()} self-test"]
    try:
        async with asyncio.timeout(TIME_LIMIT):
            await checks(home, started, report)
    except (Failed, TimeoutError) as exc:
        reason = str(exc) or f"timed out after {TIME_LIMIT:.0f} s"
        print("\n".join([*report, f"FAIL  {reason}"]))
        return 1
    print("\n".join([*report, f"self-test passed in {time.perf_counter() - started:.2f} s"]))
    return 0


async def checks(home: Path, started: float, report: list[str]) -> None:
    # As the desktop does: Helm is imported in a worker thread while the start-up check runs.
    await asyncio.to_thread(importlib.import_module, "app.window")
    from app.demo import WORKSPACE as DEMO
    from app.gui import set_up_demo
    from app.window import open_window
    from broker import Broker
    from broker.credentials import open_store
    from ui.host.egress_check import ENGINE_CHECK

    async with Broker(home, credentials=open_store(home, use_keychain=False)) as broker:
        # As a new user's first start: the window first, then the demo, then its frames.
        confirm = AlwaysCancel()
        window = open_window(broker, confirm, fill=False)
        painted: list[float | None] = []
        window.window.painted.connect(lambda: painted.append(process_uptime()))
        try:
            await set_up_demo(window)
            workspace = DEMO
            report.append(f"ok    demo workspace set up in a temporary home ({workspace})")
            view = await window.wait_frame(EXTENSION, TIME_LIMIT)
            check = ENGINE_CHECK.outcome
            if check is not None and not check.passed:
                raise Failed(check.message)
            if view is None:
                raise Failed("the Notes widget did not load in the web view")
            if check is not None:
                report.append(f"ok    start-up check: {check.message}")
            if painted and painted[0] is not None:
                report.append(f"ok    window painted {painted[0]:.2f} s after the process started")
            ready = f"ok    Notes widget ready in {time.perf_counter() - started:.2f} s"
            uptime = process_uptime()
            report.append(ready if uptime is None else f"{ready} ({uptime:.2f} s after the process started)")
            note = home / "demo" / "workspace" / NOTE
            await call_checks(broker, view, confirm, note, report)
        finally:
            await window.aclose()
        await demo_checks(broker, workspace, report)
    kinds_check(report)


async def call_checks(
    broker: Broker, view: Any, confirm: AlwaysCancel, note: Path, report: list[str]
) -> None:
    """A read through the bridge, then two unconfirmed writes that must leave ``note`` alone."""
    before = await asyncio.to_thread(note.read_bytes)
    read = await evaluate(view, f"helm.call('notes', 'read', {{path: {json.dumps(NOTE)}}})")
    if not read.get("ok") or read["data"]["text"].encode("utf-8") != before:
        raise Failed(f"reading {NOTE} through the bridge gave {short(read)}")
    report.append(f"ok    read {NOTE} through the bridge ({len(before)} bytes)")
    args = {"path": NOTE, "text": "self-test\n", "expected_sha256": hashlib.sha256(before).hexdigest()}
    wrote = await evaluate(view, f"helm.call('notes', 'write', {json.dumps(args)})")
    refused(wrote, note, before, "through the bridge")
    if confirm.asked != 1:
        raise Failed(f"the confirmer was asked {confirm.asked} times for one write")
    report.append(f"ok    write through the bridge: {wrote['error']['code']} (Cancel), file unchanged")
    from broker import CallContext

    ctx = CallContext(view.ctx.workspace, EXTENSION, "self-test")
    direct = await broker.call(ctx, "notes", "write", args)
    refused(direct, note, before, "without a token")
    report.append(f"ok    write without a token: {direct['error']['code']}, file unchanged")


DEMO_READS: tuple[tuple[str, str, str, str, dict[str, Any]], ...] = (
    ("the demo MCP server", "dev.helm.demo.clock", "demo", "current_time", {}),
    ("the demo TDT server", "dev.helm.demo.status", "tdt", "tdt_workspace_status", {}),
    ("the demo SQLite database", "dev.helm.demo.tasks", "tasks", "counts", {}),
)
"""One read per other kind of the demo, straight to the broker: the servers are child
processes of this installation (a bundle runs them itself) and each kind has its libraries."""


async def demo_checks(broker: Broker, workspace: str, report: list[str]) -> None:
    from broker import CallContext

    for label, extension, connection, operation, args in DEMO_READS:
        ctx = CallContext(workspace, extension, "self-test")
        answer = await broker.call(ctx, connection, operation, args)
        if not answer.get("ok"):
            raise Failed(f"{label} gave {failure(answer)}")
        report.append(f"ok    {label} answered {connection}.{operation}")


def kinds_check(report: list[str]) -> None:
    """Every kind's adapter imports (they are loaded by name, so a bundle may lack one)."""
    from broker.kinds import KINDS

    for name, spec in KINDS.items():
        try:
            spec.load()
        except ImportError as exc:
            raise Failed(f"the {name} kind cannot be loaded: {exc}") from exc
    report.append(f"ok    every kind loads: {', '.join(KINDS)}")


def refused(result: dict[str, Any], note: Path, before: bytes, how: str) -> None:
    code = (result.get("error") or {}).get("code")
    if result.get("ok") or code not in REFUSALS:
        raise Failed(f"an unconfirmed write {how} gave {short(result)}")
    if note.read_bytes() != before:
        raise Failed(f"an unconfirmed write {how} changed {NOTE}")


def failure(answer: dict[str, Any]) -> str:
    """A failed envelope as its error's code and whole message (bounded), which say why."""
    error = answer.get("error")
    if not isinstance(error, dict):
        return short(answer)
    message = str(error.get("message", ""))
    return f"{error.get('code')}: {message if len(message) <= 1000 else message[:1000] + '…'}"


def short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:200] + "…"


async def evaluate(view: Any, expression: str, within: float = 30.0) -> Any:
    """The JSON value of ``expression`` in the page; a page failure fails the self-test."""
    from ui.host.evaluate import PageScriptError
    from ui.host.evaluate import evaluate as evaluate_in_page

    try:
        return await evaluate_in_page(view, expression, within)
    except PageScriptError as err:
        raise Failed(f"the page failed: {err}") from err


if __name__ == "__main__":
    sys.exit(main(argparse.Namespace()))
