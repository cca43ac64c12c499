"""The official MCP Apps example servers (npm ``@modelcontextprotocol/server-*``, pinned in
tests/servers/apps-examples), added to one Helm home as a user adds them:
``helm mcp add NAME --command node --arg=…/dist/index.js --arg=--stdio``."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker import Broker
from broker.apps import review
from broker.mcp import discovery
from broker.workspaces import add_workspace
from tests.e2e.apps.kit import Links, in_app
from tests.e2e.host.kit import Dialogs
from tests.helpers import new_broker
from tests.qtloop import drive
from tests.servers import services
from tests.support import require
from tests.unit.kinds.mcp_setup import add_stdio
from ui.aio import emitted
from ui.apps.frame import AppFrame
from ui.apps.host import AppHost
from ui.apps.view import AppView

EXAMPLES = services.TEST_DEPS / "apps-examples" / "node_modules" / "@modelcontextprotocol"

# A one-page PDF that says "Helm reads this PDF", written by hand (offsets computed below).
PDF_TEXT = "Helm reads this PDF"


def example_entry(name: str) -> Path:
    return EXAMPLES / f"server-{name}" / "dist" / "index.js"


def tiny_pdf() -> bytes:
    stream = f"BT /F1 24 Tf 72 700 Td ({PDF_TEXT}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    start = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{start}\n%%EOF\n".encode()
    return bytes(out)


@dataclass
class Examples:
    """One Helm home with every example server added, and one app host for all of them."""

    broker: Broker
    host: AppHost
    dialogs: Dialogs
    pdf: Path
    loop: asyncio.AbstractEventLoop
    calls: Counter[str] = field(default_factory=Counter)
    """How many calls of each tool the apps made (every requester's, from Activity)."""

    def run[T](self, coro: Any, timeout: float = 120.0) -> T:
        result: T = drive(self.loop, coro, timeout)
        return result


def examples_home(loop: asyncio.AbstractEventLoop, tmp: Path, names: tuple[str, ...]) -> Iterator[Examples]:
    require(services.node(), "the MCP Apps examples need node")
    require(EXAMPLES.is_dir(), "the MCP Apps examples are not installed in .test-deps/apps-examples")
    pdf = tmp / "papers" / "helm.pdf"
    pdf.parent.mkdir(parents=True)
    pdf.write_bytes(tiny_pdf())
    broker = new_broker(tmp / "home")
    drive(loop, broker.__aenter__())
    root = tmp / "root"
    root.mkdir()
    add_workspace(broker.home, "ws", root)
    for name in names:
        extra = [str(pdf)] if name == "pdf" else []
        add_stdio(broker, name, [services.node() or "node", str(example_entry(name)), "--stdio", *extra])
    dialogs = Dialogs()
    host = AppHost(broker, dialogs=dialogs, open_url=Links(), guard_ms=0)
    examples = Examples(broker, host, dialogs, pdf, loop)
    stop = broker.activity.subscribe(
        lambda r: examples.calls.update([r.operation]) if r.connection == "app" else None
    )
    try:
        yield examples
    finally:
        stop()
        drive(loop, host.aclose(), 60)
        drive(loop, broker.aclose(), 60)


async def add_app(examples: Examples, server: str, *, reads: str = "all") -> tuple[str, review.AppReview]:
    """Add the server's one app; ``reads``: "all" marks every tool Helm would confirm as only
    reading, "none" marks none."""
    (app,) = await discovery.list_apps(examples.broker, "ws", server)
    reviewed = await review.review(examples.broker, "ws", server, app.uri)
    marked = [t.name for t in reviewed.writes] if reads == "all" else []
    if reads == "all" and reviewed.opener is not None and reviewed.opener.write:
        marked.append(reviewed.opener.name)
    await review.add(examples.broker, reviewed, reads=sorted(set(marked)))
    return reviewed.ext_id, reviewed


async def open_app_frame(
    examples: Examples, ext_id: str, settings: dict[str, Any] | None = None, within: float = 60.0
) -> tuple[AppFrame, AppView]:
    """The app's frame, shown; returns once its opening tool has run (the envelope is kept)."""
    frame = examples.host.frame("ws", ext_id, f"i-{ext_id[-6:]}", None, settings)
    frame.resize(900, 640)
    launched = emitted(frame.launched, within)
    frame.show()
    await asyncio.wait_for(frame.opening, within)
    if frame.view is None:
        launched.close()
        raise AssertionError(f"the app did not open: {frame.notice.text()}")
    await asyncio.wait_for(frame.view.session.started.wait(), within)
    (envelope,) = await launched
    frame.setProperty("envelope", envelope)
    return frame, frame.view


async def text_of(view: AppView) -> str:
    found = await in_app(view, "document.body.innerText")
    return str(found.get("value") or "")


async def until_text(view: AppView, wanted: str | re.Pattern[str], within: float = 30.0) -> str:
    """The app's text once it holds ``wanted`` (polled: the app renders when it likes)."""

    def found(text: str) -> bool:
        return wanted in text if isinstance(wanted, str) else wanted.search(text) is not None

    text = ""
    async with asyncio.timeout(within):
        while not found(text := await text_of(view)):
            await asyncio.sleep(0.2)
    return text
