"""A resource domain the user allowed loads through Helm's loader, and nothing else does: the
real web view, the real SDK app, two content servers on 127.0.0.1 recording every request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from broker.apps.loader import MAX_RESOURCE_BYTES, operation
from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs
from tests.servers.cdn import cdn

pytestmark = pytest.mark.usefixtures("mcp_app_server")

SETTLED = """Promise.all(%s.map(id => new Promise(r => { const i = document.getElementById(id);
  if (i.complete) r(i.naturalWidth);
  else { i.onload = () => r(i.naturalWidth); i.onerror = () => r(0); } })))"""
STYLED = """document.fonts.load("1em face").then(() => 0, () => 0).then(() =>
  getComputedStyle(document.getElementById("styled")).width)"""
LOAD = """new Promise(r => { const i = new Image(); i.onload = () => r(i.naturalWidth);
  i.onerror = () => r(0); i.src = %s; })"""


def test_allowed_domains_load_through_helm_and_everything_else_is_blocked_reported_and_stopped(
    run: Any, tmp_path: Path
) -> None:
    with cdn(big=MAX_RESOURCE_BYTES + 1) as allowed, cdn() as other:
        allowed.hop_to = f"{other.origin}/pixel.png"
        extra = tmp_path / "extra.html"
        extra.write_text(
            f'<script src="{allowed.origin}/lib.js"></script><img id="other" src="{other.origin}/pixel.png">'
            f'<img id="hop" src="{allowed.origin}/hop.png"><img id="big" src="{allowed.origin}/big.png">'
            f'<img id="html" src="{allowed.origin}/page.html">'
            f'<link rel="stylesheet" href="{allowed.origin}/css/style.css"><div id="styled">x</div>',
            encoding="utf-8",
        )
        options = ("--resource", allowed.origin, "--extra", str(extra))

        async def scenario() -> dict[str, Any]:
            async with app_broker(tmp_path, *options, allow=(allowed.origin,)) as (broker, ext_id):
                host = app_host(broker, Dialogs(), Links())
                try:
                    view = await open_frame(host, ext_id)
                    out: dict[str, Any] = {
                        "sandbox": await in_app(view, "board.app.getHostCapabilities().sandbox")
                    }
                    out["settled"] = await in_app(
                        view, SETTLED % json.dumps(["remote", "other", "hop", "big", "html"])
                    )
                    out["script"] = await in_app(view, "window.cdnLoaded")
                    out["style"] = await in_app(view, STYLED)
                    out["again"] = await in_app(view, LOAD % json.dumps(f"{allowed.origin}/pixel.png?n=2"))
                    out["said"] = host.frames[0].said.text()
                    broker.activity.stop("ws", ext_id)
                    out["stopped"] = await in_app(view, LOAD % json.dumps(f"{allowed.origin}/pixel.png?n=3"))
                    out["records"] = [(r.operation, r.outcome, r.message) for r in broker.activity.recent
                                      if r.operation.startswith("load")]  # fmt: skip
                    return out
                finally:
                    await host.aclose()

        out = run(scenario(), timeout=90)
    assert out["settled"] == {"value": [1, 0, 0, 0, 0]}  # the allowed pixel; nothing else
    assert out["script"] == {"value": 1}
    assert out["style"] == {"value": "7px"}  # the stylesheet applied
    assert out["again"] == {"value": 1}
    assert out["stopped"] == {"value": 0}
    paths = allowed.paths()
    assert "/fonts/face.woff2" in paths  # a font (a CORS load), by a URL relative to its stylesheet
    assert "/pixel.png?n=2" in paths and "/pixel.png?n=3" not in paths
    assert all(s.method == "GET" for s in allowed.seen)
    assert not any("cookie" in s.headers or "authorization" in s.headers for s in allowed.seen)
    assert other.seen == []  # neither the page nor the redirect reached it
    assert other.origin in out["said"]
    records = out["records"]
    mine, theirs = operation(allowed.origin), operation(other.origin)
    assert (mine, "ok", "") in records
    assert any(op == mine and outcome == "too_large" for op, outcome, _ in records)
    assert any(op == mine and outcome == "refused" and other.origin in msg for op, outcome, msg in records)
    assert any(op == mine and outcome == "refused" and "text/html" in msg for op, outcome, msg in records)
    assert any(op == theirs and outcome == "refused" for op, outcome, _ in records)
    assert any(op == mine and outcome == "refused" and "stopped" in msg for op, outcome, msg in records)
    csp = {
        "connectDomains": [],
        "resourceDomains": [allowed.origin],
        "frameDomains": [],
        "baseUriDomains": [],
    }
    assert out["sandbox"] == {"value": {"permissions": {}, "csp": csp}}  # what Helm applies
