"""A real rsyslogd of the test's own: UDP and TCP on 127.0.0.1 and a unix socket in a temp folder.

It runs in the foreground (``-n``) with its own config file (``-f``), no pid file (``-iNONE``) and
its work folder in the temp folder; the config loads imuxsock with the system socket off, so
/dev/log and the system's own configuration are never touched. Every message it receives on
any input is written to ``received.jsonl`` by a JSON template: the RFC 5424 fields as rsyslog
parsed them (``version`` is ``"1"`` only for a message it read as RFC 5424) and the message.
``stop`` and ``start`` again keep the same ports, as a restarted receiver would.
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from tests.support import LOOPBACK, ServerProcess, free_port, require, start_server

_CONFIG = """\
global(workDirectory="{work}" maxMessageSize="64k")
module(load="imudp")
module(load="imtcp")
module(load="imuxsock" SysSock.Use="off")
template(name="fields" type="list" option.jsonf="on") {{
  property(outname="pri" name="pri" format="jsonf")
  property(outname="version" name="protocol-version" format="jsonf")
  property(outname="time" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="hostname" name="hostname" format="jsonf")
  property(outname="app" name="app-name" format="jsonf")
  property(outname="procid" name="procid" format="jsonf")
  property(outname="msgid" name="msgid" format="jsonf")
  property(outname="sd" name="structured-data" format="jsonf")
  property(outname="msg" name="msg" format="jsonf")
  property(outname="input" name="inputname" format="jsonf")
}}
ruleset(name="helm") {{ action(type="omfile" file="{out}" template="fields") }}
input(type="imudp" address="127.0.0.1" port="{udp}" ruleset="helm")
input(type="imtcp" address="127.0.0.1" port="{tcp}" ruleset="helm")
input(type="imuxsock" Socket="{sock}" ruleset="helm" UseSpecialParser="off" ParseHostname="on")
"""


def rsyslogd() -> str:
    path = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    require(Path(path).exists(), "rsyslogd (Debian package rsyslog) is not installed")
    return path


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


class Rsyslog:
    """One rsyslogd; ``start``/``stop`` it (a context manager stops it at the end)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.udp_port, self.tcp_port = free_udp_port(), free_port()
        self.socket_path = folder / "log.sock"
        self.out = folder / "received.jsonl"
        self.config = folder / "rsyslog.conf"
        work = folder / "work"
        work.mkdir(exist_ok=True)
        self.config.write_text(
            _CONFIG.format(
                work=work, out=self.out, udp=self.udp_port, tcp=self.tcp_port, sock=self.socket_path
            )
        )
        self.process: ServerProcess | None = None

    def start(self) -> Rsyslog:
        binary = rsyslogd()
        self.socket_path.unlink(missing_ok=True)
        argv = [binary, "-n", "-iNONE", "-f", str(self.config)]
        self.process = start_server("rsyslogd", argv, port=self.tcp_port, cwd=self.folder)
        deadline = time.monotonic() + 30
        while not self.socket_path.exists():  # its unix socket: the one signal it gives
            if time.monotonic() > deadline:
                raise TimeoutError(f"rsyslogd made no socket:\n{self.process.output()}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def __enter__(self) -> Rsyslog:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def received(self) -> list[dict[str, Any]]:
        """Every message it wrote so far, each as rsyslog parsed it."""
        try:
            text = self.out.read_text("utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.endswith("}")]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """At least ``count`` messages (rsyslog writes its file when it has them; no other signal)."""
        deadline = time.monotonic() + timeout
        while len(got := self.received()) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"rsyslogd wrote {len(got)} of {count} messages")
            time.sleep(0.05)
        return got
