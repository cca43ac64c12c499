"""No worker runs in an app, and why they stay closed: the real web view, the real SDK app, two
content servers on 127.0.0.1 recording every request they get.

One app (with one resource domain allowed) opens four frames, each with a layer of Helm's
sandbox turned off in turn: Helm's policy as it is; the policy with only ``worker-src`` opened;
the policy off (the request filter alone); the policy and the request filter off (the engine's
dead-end proxy alone — the proxy is an engine switch, on for the whole process; that it holds
alone for every request a page makes is tests/e2e/host/test_layers.py). In each frame the app
tries a dedicated worker from ``blob:``, from ``data:`` and from its own origin, a
SharedWorker and a ServiceWorker, and every worker that starts tries ``fetch``, a WebSocket and
``importScripts`` of the other server, of the allowed one, and of the loader's origin directly.
Each request names its frame, so the servers' logs say which layer let what through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import ui.apps.profile
from broker.apps.loader import operation
from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs
from tests.qtloop import drive
from tests.servers.cdn import Cdn, cdn
from ui.apps.policy import AppHosts, app_csp, app_hosts, decide_request
from ui.host.policy import RequestDecision

pytestmark = pytest.mark.usefixtures("mcp_app_server")

FRAMES = ("helm", "worker-src", "filter", "proxy")
"""Helm's sandbox; only worker-src opened; the request filter alone; the dead-end proxy alone."""

OPEN = "default-src * helm-load: data: blob: 'unsafe-inline' 'unsafe-eval'"
"""A policy that refuses nothing (``*`` names no custom scheme, hence the loader's)."""

WORKER = r"""self.onmessage = async (event) => {
  const to = event.data, tried = {origin: self.origin};
  tried.fetch = [];
  for (const url of to.fetch) {
    try { await fetch(url); tried.fetch.push("sent"); } catch (e) { tried.fetch.push(e.name); }
  }
  tried.socket = await new Promise((done) => {
    try {
      const s = new WebSocket(to.socket);
      s.onopen = () => done("open");
      s.onerror = () => done("error");
    }
    catch (e) { done(e.name); }
  });
  tried.scripts = to.scripts.map((url) => {
    try { importScripts(url); return "ran"; } catch (e) { return e.name; }
  });
  postMessage(tried);
};"""

PROBE = """(async () => {
  const code = %(worker)s, to = %(to)s;
  const started = (make) => new Promise((done) => {
    let worker;
    try { worker = make(); } catch (e) { return done({refused: e.name}); }
    worker.onmessage = (event) => done(event.data);
    worker.onerror = (event) => { event.preventDefault(); done({failed: true}); };
    worker.postMessage(to);
    setTimeout(() => done({silent: true}), 10000);
  });
  const blob = () => URL.createObjectURL(new Blob([code], {type: "text/javascript"}));
  const out = {
    blob: await started(() => new Worker(blob())),
    data: await started(() => new Worker("data:text/javascript," + encodeURIComponent(code))),
    own: await started(() => new Worker("worker.js")),
  };
  try { new SharedWorker(blob()); out.shared = "made"; } catch (e) { out.shared = e.name; }
  try { out.service = typeof navigator.serviceWorker; } catch (e) { out.service = e.name; }
  return out;
})()"""


def targets(frame: str, hosts: AppHosts, allowed: Cdn, other: Cdn) -> dict[str, Any]:
    tag = f"frame={frame}"
    return {
        "fetch": [
            f"{other.origin}/fetch?{tag}",
            f"{hosts.loader_origin}/http/127.0.0.1:{allowed.port}/pixel.png?{tag}&via=loader-fetch",
        ],
        "socket": f"ws://127.0.0.1:{other.port}/socket?{tag}",
        "scripts": [
            f"{other.origin}/lib.js?{tag}",
            f"{allowed.origin}/lib.js?{tag}",
            f"{hosts.loader_origin}/http/127.0.0.1:{other.port}/lib.js?{tag}&via=loader",
        ],
    }


@pytest.fixture(scope="module")
def tried(qloop: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    layer = {"frame": "helm"}

    def policy(hosts: AppHosts, allowed: Any) -> str:
        helm = app_csp(hosts, allowed)
        if layer["frame"] == "worker-src":
            return helm.replace("worker-src 'none'", "worker-src blob: data:")
        return helm if layer["frame"] == "helm" else OPEN

    def filter_(*args: Any) -> RequestDecision:
        if layer["frame"] == "proxy":
            return RequestDecision(True, "the request filter is off")
        return decide_request(*args)

    tmp = tmp_path_factory.mktemp("workers")
    with cdn() as allowed, cdn() as other, pytest.MonkeyPatch.context() as patch:
        patch.setattr(ui.apps.profile, "app_csp", policy)
        patch.setattr(ui.apps.profile, "decide_request", filter_)

        async def scenario() -> dict[str, Any]:
            options = ("--resource", allowed.origin)
            async with app_broker(tmp, *options, allow=(allowed.origin,)) as (broker, ext_id):
                host = app_host(broker, Dialogs(), Links())
                hosts = app_hosts("ws", ext_id)
                out: dict[str, Any] = {}
                try:
                    for frame in FRAMES:
                        layer["frame"] = frame
                        view = await open_frame(host, ext_id, instance=frame)
                        to = json.dumps(targets(frame, hosts, allowed, other))
                        out[frame] = await in_app(view, PROBE % {"worker": json.dumps(WORKER), "to": to})
                    out["loads"] = [
                        r.outcome for r in broker.activity.recent if r.operation == operation(allowed.origin)
                    ]
                    return out
                finally:
                    await host.aclose()

        out = drive(qloop, scenario(), timeout=120)
        out["allowed"], out["other"] = allowed.paths(), other.paths()
        yield out


def heard(paths: list[str], frame: str) -> list[str]:
    return [p for p in paths if f"frame={frame}" in p]


def test_no_worker_starts_in_an_app_and_no_server_hears_one(tried: dict[str, Any]) -> None:
    probe = tried["helm"]["value"]
    assert probe["blob"] == {"failed": True}  # worker-src 'none'
    assert probe["data"] == {"failed": True}
    assert probe["own"] == {"refused": "SecurityError"}  # the app's origin is opaque
    assert (probe["shared"], probe["service"]) == ("SecurityError", "SecurityError")
    assert heard(tried["allowed"], "helm") == heard(tried["other"], "helm") == []


@pytest.mark.parametrize("frame", FRAMES[1:])
def test_shared_and_service_workers_stay_refused_with_the_policy_or_the_filter_off(
    tried: dict[str, Any], frame: str
) -> None:
    # The sandboxed frame's opaque origin refuses them whatever the policy says.
    probe = tried[frame]["value"]
    assert probe["own"] == {"refused": "SecurityError"}
    assert (probe["shared"], probe["service"]) == ("SecurityError", "SecurityError")


@pytest.mark.parametrize("frame", FRAMES[1:])
def test_a_started_worker_reaches_no_server_by_fetch_socket_or_a_script_of_another_origin(
    tried: dict[str, Any], frame: str
) -> None:
    probe = tried[frame]["value"]
    for started in (probe["blob"], probe["data"]):
        assert started["origin"] == "null"  # it ran, and tried
        assert started["fetch"] == ["TypeError", "TypeError"]  # the other server; the loader
        assert started["socket"] == "error"
        assert started["scripts"][0] == started["scripts"][2] == "NetworkError"
    assert heard(tried["other"], frame) == []  # the loader refuses an origin not allowed, too
    assert not any("via=loader-fetch" in p for p in tried["allowed"])  # the loader serves no fetch


def test_a_worker_would_reach_an_allowed_domain_through_the_loader_so_workers_stay_closed(
    tried: dict[str, Any],
) -> None:
    # The request filter cannot tell a worker's importScripts from the page's own script of an
    # allowed domain: both are scripts, both go to the loader, and Helm fetches them.
    tag = "/lib.js?frame={}"
    assert heard(tried["allowed"], "worker-src") == [tag.format("worker-src")] * 2  # blob:, data:
    assert heard(tried["allowed"], "filter") == [tag.format("filter")] * 2
    assert heard(tried["allowed"], "proxy") == []  # straight to the network: the dead end
    # Each a load in Activity like the page's own: the three frames' pixel and these four.
    assert tried["loads"] == ["ok"] * 7
