"""Each layer of the sandbox alone, against a canary no other layer can mask.

A hostile page runs in a child process inside a network namespace whose every route leads to a
catcher and whose DNS is a catcher too (tests/e2e/host/netns.py): a connection attempt, a
datagram or a name lookup is counted wherever it goes, so the dead proxy cannot swallow what
another layer let through. The engine's switches are per process, so the combinations run as
four processes at once:

- layers-off: no proxy, no resolver rules; one frame with nothing (the canary must hear it),
  one with only the page policy, one with only the request interceptor, one with only the
  DNS-prefetch setting; Helm's start-up check must refuse to host frames here;
- proxy: only the dead-end proxy; resolver: only the empty host resolver (with the page setting);
- production: Helm's own start-up under a user's ``--no-proxy-server`` and ``--blink-settings``.

A page's attempt is known by the host name it used (``<attempt>.<frame>.leak.test``), or by
the port for the frame's address: 8080 (a preconnect or fetch to the address) and 3478 (WebRTC).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host import netns
from tests.e2e.host.netns import Hit
from tests.e2e.host.nsframe import RTC_PORT, ZONE

ROOT = Path(__file__).resolve().parents[3]

ENGINE_OWN = {"preconnect", "dns-prefetch", "tcp to the address", "webrtc"}
"""What the engine opens on its own, which neither the page policy nor the interceptor sees."""

FRAMES = {
    "control": {"policy": False, "interceptor": False, "dns_prefetch": True},
    "policy": {"policy": True, "interceptor": False, "dns_prefetch": True},
    "interceptor": {"policy": False, "interceptor": True, "dns_prefetch": True},
    "settings": {"policy": False, "interceptor": False, "dns_prefetch": False},
    "proxy": {"policy": False, "interceptor": False, "dns_prefetch": True},
    "resolver": {"policy": False, "interceptor": False, "dns_prefetch": False},
    "production": {},
}
ADDRESSES = {name: f"{netns.NETWORK}.{10 + i}" for i, name in enumerate(FRAMES)}

PROCESSES: dict[str, dict[str, Any]] = {
    "layers-off": {"engine": "layers", "frames": ["control", "policy", "interceptor", "settings"]},
    "proxy": {"engine": "layers", "proxy": True, "frames": ["proxy"]},
    "resolver": {"engine": "layers", "resolver": True, "frames": ["resolver"]},
    "production": {"engine": "production", "frames": ["production"]},
}
USERS_SWITCHES = "--no-proxy-server --blink-settings=dnsPrefetchingEnabled=true"


@dataclass(frozen=True)
class Run:
    result: dict[str, Any]
    hits: list[Hit]

    def heard(self, frame: str) -> set[str]:
        """The attempts of ``frame`` that reached the catcher."""
        suffix, address = f".{frame}.{ZONE}", ADDRESSES[frame] + ":"
        labels = set()
        for hit in self.hits:
            if hit.kind == "dns" and hit.target.endswith(suffix):
                labels.add(hit.target.removesuffix(suffix))
            elif hit.kind in ("tcp", "udp") and hit.target.startswith(address):
                port = int(hit.target.rpartition(":")[2])
                labels.add("webrtc" if port == RTC_PORT else f"{hit.kind} to the address")
        return labels

    def stray(self) -> list[Hit]:
        """Hits no frame of this process explains (the engine's own traffic, say)."""
        frames = list(self.result["frames"])
        zones = tuple(f".{f}.{ZONE}" for f in frames)
        addresses = tuple(ADDRESSES[f] + ":" for f in frames)
        return [h for h in self.hits if not (h.target.endswith(zones) or h.target.startswith(addresses))]


def _config(spec: dict[str, Any]) -> dict[str, Any]:
    frames = [{"name": f, "address": ADDRESSES[f], **FRAMES[f]} for f in spec["frames"]]
    return {**spec, "frames": frames}


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Run]]:
    reason = netns.available()
    if reason is not None:
        pytest.skip(reason)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    flags = ("--no-sandbox " if os.geteuid() == 0 else "") + USERS_SWITCHES
    with ExitStack() as stack:
        started = {}
        for name, spec in PROCESSES.items():
            ns = stack.enter_context(netns.namespace())
            argv = ns.command([sys.executable, "-m", "tests.e2e.host.nsframe", json.dumps(_config(spec))])
            child_env = {**env, "QTWEBENGINE_CHROMIUM_FLAGS": flags} if name == "production" else env
            child = subprocess.Popen(
                argv, cwd=ROOT, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            started[name] = (ns, child)
        done = {}
        for name, (ns, child) in started.items():
            out, err = child.communicate(timeout=180)
            lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
            assert child.returncode == 0 and lines, f"{name} failed:\n{err[-3000:]}"
            assert ns.catcher is not None
            done[name] = Run(json.loads(lines[0].removeprefix("RESULT ")), ns.catcher.hits)
        yield done


def test_with_every_layer_off_the_namespace_canary_hears_the_page(runs: dict[str, Run]) -> None:
    heard = runs["layers-off"].heard("control")
    assert {"fetch", "xhr", "img", "script", "stylesheet", "beacon", "websocket"} <= heard
    assert heard >= ENGINE_OWN, "the engine's own connections get out when no switch stops them"


def test_the_page_policy_alone_stops_every_request_a_page_makes(runs: dict[str, Run]) -> None:
    assert runs["layers-off"].heard("policy") <= ENGINE_OWN


def test_the_request_interceptor_alone_stops_every_request_a_page_makes(runs: dict[str, Run]) -> None:
    assert runs["layers-off"].heard("interceptor") <= ENGINE_OWN


def test_the_page_setting_alone_stops_dns_prefetch(runs: dict[str, Run]) -> None:
    heard = runs["layers-off"].heard("settings")
    assert "fetch" in heard, "every other layer is off for this frame"
    assert "dns-prefetch" not in heard


def test_the_dead_end_proxy_alone_stops_every_connection_but_not_a_dns_prefetch(
    runs: dict[str, Run],
) -> None:
    # A DNS prefetch is a lookup, not a connection: the proxy never sees it. The page setting
    # and the empty resolver stop it (above and below).
    assert runs["proxy"].heard("proxy") <= {"dns-prefetch"}


def test_resolving_nothing_alone_stops_every_request_preconnect_and_lookup_but_not_webrtc(
    runs: dict[str, Run],
) -> None:
    # WebRTC sends to addresses without resolving them: only the dead-end proxy stops it.
    assert runs["resolver"].heard("resolver") <= {"webrtc"}


def test_no_layer_run_sends_anything_the_pages_did_not_ask_for(runs: dict[str, Run]) -> None:
    assert [(name, run.stray()) for name, run in runs.items() if run.stray()] == []


def test_helm_under_a_users_no_proxy_switch_lets_nothing_out(runs: dict[str, Run]) -> None:
    production = runs["production"]
    assert production.hits == []
    assert production.result["check"] == {"passed": True, "heard": []}
    assert production.result["refusal"] is None
    assert production.result["frames"]["production"]["ownImage"] is True


def test_the_start_up_check_refuses_to_host_frames_when_a_preconnect_gets_out(
    runs: dict[str, Run],
) -> None:
    layers_off = runs["layers-off"].result
    assert layers_off["check"]["passed"] is False
    assert layers_off["check"]["heard"] == ["a TCP connection"]
    assert "QTWEBENGINE_CHROMIUM_FLAGS" in layers_off["refusal"]
