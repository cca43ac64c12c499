"""A child process that runs hostile frames with chosen layers of the sandbox switched off.

Run inside a test's network namespace (tests/e2e/host/netns.py): ``python -m
tests.e2e.host.nsframe '<config JSON>'``. The engine's switches are process-wide, so each
combination of them is its own process (Qt's event loop is entered once here). Prints one line,
``RESULT <JSON>``: what each frame's page believed got through, and the start-up check's answer.

Config: ``engine`` is ``production`` (Helm's own start-up, on whatever flags the parent put in
the environment) or ``layers`` (only the switches named: ``proxy``, ``resolver``); ``frames``
name, for each frame, its canary ``address`` and whether its page ``policy``, its request
``interceptor`` and its ``dns_prefetch`` setting are Helm's (a layer off is the engine's default).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

PORT = 8080
RTC_PORT = 3478
ZONE = "leak.test"
WAIT_MS = 3000
"""How long the page waits for an attempt that never answers: the engine has long since opened
(or not) any connection by then, and the namespace's catcher counts until this process ends."""


def engine_flags(config: dict[str, Any]) -> Any:
    """Set the engine's switches for this process; returns what must live as long as it."""
    if config["engine"] == "production":
        from ui.host import prepare_engine

        return prepare_engine()
    from ui.host.egress import FLAGS_VARIABLE, RESOLVE_NOTHING, DeadEnd, proxy_switches
    from ui.host.scheme import register_scheme

    dead = DeadEnd()
    switches = ["--no-sandbox"] if os.geteuid() == 0 else []
    if config.get("proxy"):
        switches += proxy_switches(dead.port)
    if config.get("resolver"):
        switches.append(f'"--host-resolver-rules={RESOLVE_NOTHING}"')
    os.environ[FLAGS_VARIABLE] = " ".join(switches)
    register_scheme()
    return dead


def frame(spec: dict[str, Any], folder: Path) -> Any:
    """An extension frame with the layers ``spec`` switches off replaced by the engine's defaults."""
    from tests.e2e.host.kit import EchoHandler, NoPolicyHandler, make_view
    from ui.host import ExtensionProfile, extension_host
    from ui.qt import QWebEngineSettings

    profile = ExtensionProfile(folder, extension_host("ws", f"com.example.{spec['name']}"))
    if not spec.get("policy", True):
        profile.profile.removeUrlScheme(b"helm-ext")
        profile.test_handler = NoPolicyHandler(folder, profile.host, profile)  # type: ignore[attr-defined]
        profile.profile.installUrlSchemeHandler(b"helm-ext", profile.test_handler)  # type: ignore[attr-defined]
    if not spec.get("interceptor", True):
        profile.profile.setUrlRequestInterceptor(None)  # type: ignore[arg-type]
    if spec.get("dns_prefetch", False):
        profile.profile.settings().setAttribute(QWebEngineSettings.WebAttribute.DnsPrefetchEnabled, True)
    view = make_view(folder, EchoHandler(), extension=f"com.example.{spec['name']}", profile=profile)
    view.show()
    return view


async def escape(view: Any, spec: dict[str, Any], production: bool) -> Any:
    from tests.e2e.host.kit import evaluate
    from ui.qt import QUrl

    fragment = (
        f"port={PORT}&rtc={RTC_PORT}&address={spec['address']}&zone={spec['name']}.{ZONE}"
        f"&other=none&wait={WAIT_MS}"
    )
    ready: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    view.ready.connect(lambda: ready.done() or ready.set_result(True))
    view.loadFailed.connect(lambda: ready.done() or ready.set_result(False))
    if production:
        view.load(fragment)
    else:
        # Straight to the page: the frames here must load even where Helm's start-up check
        # (rightly) refuses to host any.
        view.page.load(QUrl(f"{view.url}#{fragment}"))
    if not await asyncio.wait_for(ready, 30):
        return {"got_through": "not loaded"}
    return await evaluate(view, "hostile.escape()", 60)


async def refused(folder: Path) -> str | None:
    """What a frame loaded the normal way shows instead of its page, or None if it loaded."""
    view = frame({"name": "after-check"}, folder)
    outcome: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    view.ready.connect(lambda: outcome.done() or outcome.set_result(None))
    view.loadFailed.connect(lambda: outcome.done() or outcome.set_result(view.refusal.text()))
    view.load()
    try:
        return await asyncio.wait_for(outcome, 30)
    finally:
        await view.aclose()


async def main(config: dict[str, Any]) -> dict[str, Any]:
    from tests.e2e.host.kit import copy_page
    from ui.host.egress_check import ENGINE_CHECK

    production = config["engine"] == "production"
    # At start-up, before any frame, as in Helm (where frames wait for it).
    first = await ENGINE_CHECK.result()
    with tempfile.TemporaryDirectory() as tmp:
        folder = copy_page("hostile", Path(tmp) / "hostile")
        views = {spec["name"]: frame(spec, folder) for spec in config["frames"]}
        results = await asyncio.gather(*(escape(views[s["name"]], s, production) for s in config["frames"]))
        for view in views.values():
            await view.aclose()
        check = ENGINE_CHECK.outcome or first  # a late failure would have replaced the first
        refusal = await refused(folder)
    return {
        "frames": {s["name"]: r["got_through"] for s, r in zip(config["frames"], results, strict=True)},
        "check": {"passed": check.passed, "heard": list(check.heard)},
        "refusal": refusal,
    }


def run() -> int:
    config = json.loads(sys.argv[1])
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    keep = engine_flags(config)
    import qasync

    from ui.qt import QApplication

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        result = loop.run_until_complete(asyncio.wait_for(main(config), 120))
    print("RESULT " + json.dumps(result), flush=True)
    del keep
    return 0


if __name__ == "__main__":
    sys.exit(run())
