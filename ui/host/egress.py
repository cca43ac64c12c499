"""Closing the one way out that the CSP and the request interceptor do not see: WebRTC.

WebRTC's STUN, TURN and peer traffic is opened by Chromium's network service directly, not as
a page request. Helm forces WebRTC to use only proxied connections and points the proxy at a
port that Helm holds bound but never listens on, so every such connection is refused at once.
The loopback bypass is removed too, otherwise 127.0.0.1 would skip the dead proxy.

The extension host serves everything from its own URL scheme and lets no page request reach
the network, so sending the engine's own traffic into the same dead end costs nothing.
"""

from __future__ import annotations

import os
import socket
from collections.abc import MutableMapping

FLAGS_VARIABLE = "QTWEBENGINE_CHROMIUM_FLAGS"


def chromium_flags(dead_port: int) -> tuple[str, ...]:
    return (
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        f"--proxy-server=socks5://127.0.0.1:{dead_port}",
        "--proxy-bypass-list=<-loopback>",
    )


def merged_flags(existing: str, extra: tuple[str, ...]) -> str:
    present = existing.split()
    return " ".join([*present, *(f for f in extra if f not in present)])


class DeadEnd:
    """A loopback TCP port bound (so no one else can take it) and never listened on."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    def close(self) -> None:
        self._socket.close()


def close_webrtc_egress(environ: MutableMapping[str, str] | None = None) -> DeadEnd:
    """Add the flags to the engine's environment; call before the first web page is created.

    Keep the returned ``DeadEnd`` for the life of the process.
    """
    env = os.environ if environ is None else environ
    dead = DeadEnd()
    env[FLAGS_VARIABLE] = merged_flags(env.get(FLAGS_VARIABLE, ""), chromium_flags(dead.port))
    return dead
