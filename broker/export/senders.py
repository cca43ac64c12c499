"""The blocking senders behind each sink; only the sink's own thread calls them.

``send(entries)`` delivers every entry or raises ``OSError`` (the sink is down: the caller keeps
the entries and tries again later). Nothing here is ever called on the event loop.

* ``JsonlSender`` appends whole lines under ``flock`` and fsyncs them (``broker.jsonl``), opening
  the file for each batch: a shipper's rotation (rename, then a new file) is followed at once.
  The file's folder is never created: a missing folder (an unmounted share) is a sink down.
* ``SyslogSender`` keeps one socket. UDP is one datagram per message (it cannot tell whether
  anyone listens: use TCP or a local socket where every record must arrive). TCP frames each
  message by octet counting (RFC 6587) and, before each batch, checks that the receiver has not
  closed the connection, so a restarted receiver is reconnected to instead of written into a
  dead socket. A unix socket takes datagrams (a stream socket is framed like TCP).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import socket
from collections.abc import Sequence
from typing import Protocol

from broker import jsonl
from broker.export.config import JsonlSinkConfig, SinkConfig, SyslogSinkConfig
from broker.export.records import Entry, hostname, json_text, syslog_message

CONNECT_SECONDS = 5.0
"""How long a connection or one send may take before the receiver counts as down."""
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Sender(Protocol):
    def send(self, entries: Sequence[Entry]) -> None: ...

    def close(self) -> None: ...


def sender_for(config: SinkConfig) -> Sender:
    if isinstance(config, JsonlSinkConfig):
        return JsonlSender(config)
    return SyslogSender(config)


class JsonlSender:
    def __init__(self, config: JsonlSinkConfig) -> None:
        self.path = config.path

    def send(self, entries: Sequence[Entry]) -> None:
        data = "".join(json_text(e) + "\n" for e in entries).encode("ascii")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            jsonl.append(fd, data, jsonl.torn_path(self.path), sync=True)
        finally:
            os.close(fd)

    def close(self) -> None:
        return None


class SyslogSender:
    def __init__(self, config: SyslogSinkConfig, host: str | None = None) -> None:
        self.config = config
        self.host = host or hostname()
        self._sock: socket.socket | None = None
        self._stream = config.transport == "tcp"

    def send(self, entries: Sequence[Entry]) -> None:
        sock = self._connected()
        try:
            for entry in entries:
                message = syslog_message(entry, self.config.facility_code, self.host)
                if self._stream:
                    sock.sendall(b"%d %s" % (len(message), message))
                else:
                    sock.send(message)
        except OSError:
            self.close()
            raise

    def _connected(self) -> socket.socket:
        if self._sock is not None and self._stream and _closed_by_peer(self._sock):
            self.close()
        if self._sock is None:
            self._sock = self._connect()
        return self._sock

    def _connect(self) -> socket.socket:
        c = self.config
        if c.transport == "tcp":
            return socket.create_connection((c.host, c.port), timeout=CONNECT_SECONDS)
        if c.transport == "udp":
            info = socket.getaddrinfo(c.host, c.port, type=socket.SOCK_DGRAM)[0]
            sock = socket.socket(info[0], socket.SOCK_DGRAM)
            target: object = info[4]
        else:
            sock, target = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), c.path
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect(target)  # type: ignore[arg-type]
        except OSError as exc:
            sock.close()
            if c.transport == "unix" and exc.errno == errno.EPROTOTYPE:  # a stream socket
                return self._unix_stream()
            raise
        return sock

    def _unix_stream(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect(self.config.path)
        except OSError:
            sock.close()
            raise
        self._stream = True
        return sock

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self._stream = self.config.transport == "tcp"
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether a syslog receiver closed (or reset) the stream: it never sends anything, so a
    readable socket means the end of it."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
