"""The web engine's own connections: sent to a dead end, with no name ever resolved.

The page policy and the request interceptor see what a page *requests*. Some connections are
opened by Chromium's network service on its own and reach neither: WebRTC (STUN, TURN, peers)
and speculative connections (``<link rel=preconnect>``, DNS prefetch). Two engine switches close
them, each on its own:

- every connection goes through a SOCKS proxy on a loopback port that Helm holds bound and never
  listens on (the loopback bypass removed, so 127.0.0.1 goes there too), and WebRTC may only use
  proxied connections: every such connection is refused at once;
- every host name and address resolves to "not found", so a connection the engine would open
  directly fails before any DNS query or packet leaves.

The extension host serves everything from its own URL scheme, so none of this costs a page
anything. A user's ``QTWEBENGINE_CHROMIUM_FLAGS`` may carry switches that Chromium would obey
instead (``--no-proxy-server``, ``--proxy-auto-detect``, ``--blink-settings``…): Helm removes
them, says so, and keeps every other switch. Arguments after a bare ``--`` are not switches to
Chromium; Helm drops them too, or its own switches would land among them.

A debugging port is a way in rather than out: anything that reaches it drives every page of the
process, Helm's own included. ``QTWEBENGINE_REMOTE_DEBUGGING`` in the environment and the remote
debugging switches in the flags are removed the same way, with the same warning.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

FLAGS_VARIABLE = "QTWEBENGINE_CHROMIUM_FLAGS"

DEBUGGING_VARIABLE = "QTWEBENGINE_REMOTE_DEBUGGING"
"""Qt's own switch for a remote debugging port: never honoured in Helm's process."""

RESOLVE_NOTHING = "MAP * ~NOTFOUND"
"""Host resolver rules under which every name and address is unknown."""

# Decisions as data: switches a user may not bring, because each would send the engine's own
# connections elsewhere, resolve names, or undo a setting Helm gives every extension page.
REFUSED_SWITCHES = frozenset(
    {
        "proxy-server",
        "no-proxy-server",
        "proxy-auto-detect",
        "proxy-pac-url",
        "proxy-bypass-list",
        "winhttp-proxy-resolver",
        "host-resolver-rules",
        "host-rules",
        "force-webrtc-ip-handling-policy",
        "blink-settings",
        "disable-web-security",
        "enable-blink-features",
        "enable-experimental-web-platform-features",
        "remote-debugging-port",
        "remote-debugging-pipe",
        "remote-debugging-address",
        "remote-debugging-socket-name",
        "remote-allow-origins",
    }
)


def helm_switches(dead_port: int) -> tuple[str, ...]:
    """The switches that send the engine's own connections nowhere."""
    return (
        *proxy_switches(dead_port),
        f"--host-resolver-rules={RESOLVE_NOTHING}",
    )


def proxy_switches(dead_port: int) -> tuple[str, ...]:
    return (
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        f"--proxy-server=socks5://127.0.0.1:{dead_port}",
        "--proxy-bypass-list=<-loopback>",
    )


def split_flags(text: str) -> list[str]:
    """The arguments the engine reads from ``text``: spaces separate, double quotes group."""
    args: list[str] = []
    current: list[str] = []
    started = quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
            started = True
        elif char == " " and not quoted:
            if started:
                args.append("".join(current))
            current, started = [], False
        else:
            current.append(char)
            started = True
    if current:
        args.append("".join(current))
    return args


def join_flags(args: list[str] | tuple[str, ...]) -> str:
    return " ".join(f'"{arg}"' if " " in arg else arg for arg in args)


def switch_name(arg: str) -> str | None:
    """The switch ``arg`` sets (lower case, without prefix or value), or None for an argument.

    Chromium takes ``--name`` and ``-name`` (and ``/name`` on Windows) as the same switch.
    """
    prefixes = ("--", "-", "/") if sys.platform == "win32" else ("--", "-")
    for prefix in prefixes:
        if arg.startswith(prefix) and len(arg) > len(prefix):
            return arg[len(prefix) :].split("=", 1)[0].lower()
    return None


@dataclass(frozen=True, slots=True)
class EngineFlags:
    value: str
    """The engine's flags: the user's, less the refused ones, then Helm's."""
    removed: tuple[str, ...]
    """What Helm took out of the user's flags (to tell them)."""


def engine_flags(existing: str, dead_port: int) -> EngineFlags:
    kept: list[str] = []
    removed: list[str] = []
    args = split_flags(existing)
    for i, arg in enumerate(args):
        if arg == "--":
            removed.extend(args[i:])
            break
        if switch_name(arg) not in REFUSED_SWITCHES:
            kept.append(arg)
        elif not _is_helms(arg):
            removed.append(arg)
    return EngineFlags(join_flags([*kept, *helm_switches(dead_port)]), tuple(removed))


def _is_helms(arg: str) -> bool:
    """One of Helm's own switches, as a child process of Helm inherits them (another port)."""
    if arg.startswith("--proxy-server=socks5://127.0.0.1:"):
        return arg.rpartition(":")[2].isdigit()
    return arg in helm_switches(0)


class DeadEnd:
    """A loopback TCP port bound (so no one else can take it) and never listened on."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    def close(self) -> None:
        self._socket.close()


def close_egress(environ: MutableMapping[str, str] | None = None) -> DeadEnd:
    """Set the engine's flags; call before the first web page is created.

    Keep the returned ``DeadEnd`` for the life of the process.
    """
    env = os.environ if environ is None else environ
    debugging = env.pop(DEBUGGING_VARIABLE, None)
    if debugging is not None:
        log.warning(
            "Helm ignores %s=%r: a debugging port would let anything that reaches it drive "
            "every page in Helm",
            DEBUGGING_VARIABLE,
            debugging,
        )
    dead = DeadEnd()
    flags = engine_flags(env.get(FLAGS_VARIABLE, ""), dead.port)
    if flags.removed:
        log.warning(
            "Helm ignores these %s switches, which would let extension frames reach the network "
            "or change what they may do: %s",
            FLAGS_VARIABLE,
            " ".join(flags.removed),
        )
    env[FLAGS_VARIABLE] = flags.value
    return dead
