"""A canary on 127.0.0.1: counts every TCP connection and UDP datagram that reaches it."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nAccess-Control-Allow-Origin: *\r\n"
    b"Content-Length: 6\r\nConnection: close\r\n\r\ncanary"
)


class Canary:
    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.port: int = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.tcp.listen(64)
        self.tcp.settimeout(0.2)
        self.udp.settimeout(0.2)
        self.hits: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._accept, daemon=True),
            threading.Thread(target=self._receive, daemon=True),
        ]
        for t in self._threads:
            t.start()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.hits)

    def _record(self, what: str) -> None:
        with self._lock:
            self.hits.append(what)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                # Counted before anything is answered, so whoever sees the reply also sees
                # the count.
                conn.settimeout(1.0)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0]
                except OSError:
                    first = b""
                self._record("tcp " + first.decode("latin-1"))
                with contextlib.suppress(OSError):
                    conn.sendall(_RESPONSE)

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                self.udp.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self._record("udp datagram")

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2.0)
        self.tcp.close()
        self.udp.close()


@contextmanager
def canary() -> Iterator[Canary]:
    c = Canary()
    try:
        yield c
    finally:
        c.close()
