"""MCP Apps: an app's ``tools/call`` round trip against an extension's ``helm.call``.

Both in the real web view, through the real broker, to the same tool of the same MCP server
(the ext-apps SDK test server): the app's call is the SDK's ``App.callServerTool`` sent to
Helm's host page over the app frame's port, relayed by its isolated world, answered by the
app's session; the
extension's is ``helm.call`` over the bridge. The goal is at most 1.5 times the extension's. Each
side makes 50 sequential calls per row from its own instance, within the rate limit.

The other rows say where an app's time goes:
* the same JSON-RPC posted by hand, without the SDK, so what the SDK itself costs (its
  validation, its logging) shows apart;
* ``ping`` by hand: Helm's relay and the app's session, without the broker or the server;
* the engine's cost of a window message: one posted from the app's frame to its host page
  (``window.top``) and answered there by a plain listener, with nothing of Helm on the way (the
  relay drops it unread: it carries a BigInt, which JSON cannot hold). The app's frame is
  sandboxed, an opaque origin, so such a message crosses between frames of different origins,
  and costs milliseconds;
* the same echo over a ``MessageChannel`` whose port the host page handed to the app's frame:
  what a message over the port the app's frame speaks to Helm by costs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bench.conftest import Bench
from tests.e2e.apps.kit import Links, in_app, open_frame
from tests.e2e.conftest import QT_NOISE  # engine set-up
from tests.e2e.host.kit import Dialogs, copy_page, evaluate, make_view, wait_ready
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.unit.apps.app_setup import added, app_home
from ui.apps.host import AppHost
from ui.apps.view import AppView
from ui.qt import QWebEngineScript

pytestmark = [pytest.mark.qt_log_ignore(*QT_NOISE), pytest.mark.usefixtures("mcp_app_server")]

CALLS = 50
BY_HAND = """((post) => {{
  let id = 0;
  const waiting = new Map();
  window.addEventListener("message", (e) => {{
    const d = e.data;
    if (e.source === window.parent && d && waiting.has(d.id)) {{
      waiting.get(d.id)(d);
      waiting.delete(d.id);
    }}
  }});
  return () => new Promise((resolve) => {{
    const i = "bench-" + (id += 1);
    waiting.set(i, resolve);
    post(i);
  }});
}})({post})"""
PING = "(id) => window.parent.postMessage({jsonrpc: '2.0', id, method: 'ping', params: {}}, '*')"
ECHO = "(id) => window.top.postMessage({id, unreadable: 1n}, '*')"  # a window message, not the port
ECHOER = """window.addEventListener("message", (e) => { const d = e.data;
  if (d && typeof d.unreadable === "bigint") e.source.postMessage({ id: d.id, echoed: true }, "*"); });"""
# The host page keeps one port of a channel and hands the other to the app's frame, which waits
# for it first (APP_PORT), then echoes over it (PORT_SEND).
HOST_PORT = """(() => { const channel = new MessageChannel();
  channel.port1.onmessage = (e) => channel.port1.postMessage({ id: e.data.id, echoed: true });
  document.querySelector("iframe").contentWindow.postMessage("bench-port", "*", [channel.port2]); })()"""
APP_PORT = """(window.benchPort = new Promise((resolve) => window.addEventListener("message", (e) => {
  if (e.source === window.parent && e.data === "bench-port") resolve(e.ports[0]); })), true)"""
PORT_SEND = """(async () => { const port = await window.benchPort; let id = 0; const waiting = new Map();
  port.onmessage = (e) => { waiting.get(e.data.id)(e.data); waiting.delete(e.data.id); };
  window.benchPortSend = () => new Promise((resolve) => {
    id += 1; waiting.set(id, resolve); port.postMessage({ id }); });
  return true; })()"""
TIMED = """(async () => {{ const t = performance.now();
  for (let i = 0; i < {n}; i++) {{ const r = await {call}; if ({failed}) throw new Error("failed"); }}
  return (performance.now() - t) / 1000 / {n}; }})()"""


async def by_hand(app: AppView, post: str, failed: str) -> Any:
    """The mean round trip of ``CALLS`` messages posted by ``post`` from the app's frame."""
    await in_app(app, f"(window.benchSend = {BY_HAND.format(post=post)}, true)")
    return await in_app(app, TIMED.format(n=CALLS, call="window.benchSend()", failed=failed))


def test_an_apps_tool_call_against_an_extensions_helm_call_on_the_same_server(
    run: Any, bench: Bench, tmp_path: Path
) -> None:
    async def scenario() -> tuple[float, float, float, float, float, float]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path)
            ext_id = await added(broker)
            conn = {"id": "m", "kind": "mcp", "server": "board", "operations": ["list_items"]}
            ctx = await setup_extension(broker, tmp_path, manifest_dict([conn]))
            folder = copy_page("probe", tmp_path / "ext" / ctx.extension)
            view = make_view(folder, broker, extension=ctx.extension, instance="bench-ext")
            apps = AppHost(broker, dialogs=Dialogs(), open_url=Links())
            try:
                await wait_ready(view)
                extension = await evaluate(
                    view, TIMED.format(n=CALLS, call="helm.call('m', 'list_items', {})", failed="!r.ok")
                )
                app = await open_frame(apps, ext_id, "bench-app")
                result = await in_app(
                    app, TIMED.format(n=CALLS, call="board.call('list_items')", failed="!r.structuredContent")
                )
                plain = await open_frame(apps, ext_id, "bench-plain")  # its own rate limit
                raw = await in_app(
                    plain, TIMED.format(n=CALLS, call="board.rawCall('list_items')", failed="!r.result")
                )
                ping = await by_hand(plain, PING, "!r.result")
                plain.page.runJavaScript(ECHOER, QWebEngineScript.ScriptWorldId.MainWorld.value)
                echo = await by_hand(plain, ECHO, "!r.echoed")
                await in_app(plain, APP_PORT)
                plain.page.runJavaScript(HOST_PORT, QWebEngineScript.ScriptWorldId.MainWorld.value)
                await in_app(plain, PORT_SEND)
                over_port = TIMED.format(n=CALLS, call="window.benchPortSend()", failed="!r.echoed")
                port = await in_app(plain, over_port)
                values = (result, raw, ping, echo, port)
                return (*(float(v["value"]) for v in values), float(extension))
            finally:
                await apps.aclose()
                await view.aclose()

    app, raw, ping, echo, port, extension = run(scenario(), timeout=180)
    same = "helm.call, same server and tool"
    bench.record("MCP Apps: tools/call round trip, SDK App (per call)", app, extension, note=same)
    bench.record("MCP Apps: tools/call round trip, plain postMessage (per call)", raw, extension, note=same)
    bench.record("MCP Apps: ping round trip, Helm's relay only (per call)", ping, extension, note=same)
    bench.record("MCP Apps: frame to host page and back, no Helm (per call)", echo, extension, note=same)
    bench.record("MCP Apps: the same over a MessagePort, no Helm (per call)", port, extension, note=same)
    assert min(app, raw, ping, echo, port, extension) > 0
