"""A network namespace made by a test, where every packet that leaves is caught and counted.

Inside it: loopback, and one veth link that holds the default route. Nothing answers on the
other end, so every TCP connection attempt and UDP datagram a process sends is seen there
(a raw packet socket on the far end), whatever its address and port. Names are resolved by
a catcher on 127.0.0.1:53 inside the namespace (``ip netns exec`` puts its resolv.conf in
place), which records every query and answers "no such name". A dead proxy on the loopback
cannot hide anything from this canary: only what leaves the namespace's loopback counts.

Needs root and iproute2 (CI has both).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import struct
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

ETH_P_ALL = 0x0003
NETWORK = "10.203.0"
"""The namespace's own address is .1; tests aim pages at the others."""

_names = itertools.count(1)


def available() -> str | None:
    """Why a namespace cannot be made here, or None when it can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed; scripts/test-deps.sh installs it"
    probe = f"helm-test-{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, check=False)
    if made.returncode != 0:
        return f"this machine does not allow network namespaces: {made.stderr.strip()}"
    return None


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str
    """tcp (a connection attempt), udp (a datagram), dns (a query) or other."""
    target: str
    """The address and port for tcp and udp, the name asked for dns."""


class Catcher:
    """Records every packet leaving the namespace and every DNS query asked inside it."""

    def __init__(self, sockets: tuple[socket.socket, socket.socket, socket.socket]) -> None:
        self._wire, self._dns_udp, self._dns_tcp = sockets
        self._lock = threading.Lock()
        self._hits: list[Hit] = []
        self._seen_syn: set[tuple[str, int, int]] = set()
        self._stop = threading.Event()
        for sock in sockets:
            sock.settimeout(0.2)
        self._threads = [
            threading.Thread(target=self._sniff, daemon=True),
            threading.Thread(target=self._answer_udp, daemon=True),
            threading.Thread(target=self._answer_tcp, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def hits(self) -> list[Hit]:
        with self._lock:
            return list(self._hits)

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self._hits.append(hit)

    def _sniff(self) -> None:
        while not self._stop.is_set():
            try:
                packet = self._wire.recv(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            hit = self._classify(packet)
            if hit is not None:
                self._record(hit)

    def _classify(self, packet: bytes) -> Hit | None:
        if len(packet) < 20 or packet[0] >> 4 != 4:
            # IPv6: the kernel's own neighbour discovery and group reports are not the page's.
            if len(packet) >= 40 and packet[6] not in (0, 58):
                return Hit("other", socket.inet_ntop(socket.AF_INET6, packet[24:40]))
            return None
        header = (packet[0] & 0x0F) * 4
        protocol, dest = packet[9], socket.inet_ntoa(packet[16:20])
        if protocol == 2:
            return None  # IGMP: the kernel joining groups on its own
        if protocol not in (6, 17):
            return Hit("other", f"{dest} protocol {protocol}")
        sport, dport = struct.unpack("!HH", packet[header : header + 4])
        if protocol == 17:
            return Hit("udp", f"{dest}:{dport}")
        syn_only = packet[header + 13] & 0x12 == 0x02
        key = (dest, dport, sport)
        if not syn_only or key in self._seen_syn:
            return None  # a retransmitted SYN is the same attempt
        self._seen_syn.add(key)
        return Hit("tcp", f"{dest}:{dport}")

    def _answer_udp(self) -> None:
        while not self._stop.is_set():
            try:
                query, peer = self._dns_udp.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            answer = self._no_such_name(query)
            if answer:
                with contextlib.suppress(OSError):
                    self._dns_udp.sendto(answer, peer)

    def _answer_tcp(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._dns_tcp.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2.0)
                with contextlib.suppress(OSError, struct.error):
                    (length,) = struct.unpack("!H", conn.recv(2))
                    answer = self._no_such_name(conn.recv(length))
                    if answer:
                        conn.sendall(struct.pack("!H", len(answer)) + answer)

    def _no_such_name(self, query: bytes) -> bytes:
        labels, i = [], 12
        while i < len(query) and query[i]:
            labels.append(query[i + 1 : i + 1 + query[i]].decode("ascii", "replace"))
            i += 1 + query[i]
        self._record(Hit("dns", ".".join(labels).lower()))
        if i + 5 > len(query):
            return b""
        # The question echoed back, flags: response, recursion available, NXDOMAIN.
        return query[:2] + b"\x81\x83" + query[4:6] + b"\x00" * 6 + query[12 : i + 5]

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
        for sock in (self._wire, self._dns_udp, self._dns_tcp):
            sock.close()


class Namespace:
    """A named network namespace with its catcher; ``command`` runs a program inside it."""

    def __init__(self) -> None:
        self.name = f"helm-test-{os.getpid()}-{next(_names)}"
        self._resolv = Path("/etc/netns") / self.name
        self.catcher: Catcher | None = None

    def open(self) -> None:
        ip = ["ip", "-n", self.name]
        _run(["ip", "netns", "add", self.name])
        _run([*ip, "link", "set", "lo", "up"])
        _run([*ip, "link", "add", "out0", "type", "veth", "peer", "name", "wire0"])
        _run([*ip, "address", "add", f"{NETWORK}.1/24", "dev", "out0"])
        # No neighbour discovery: packets for any address go straight onto the wire.
        _run([*ip, "link", "set", "out0", "arp", "off", "up"])
        _run([*ip, "link", "set", "wire0", "up"])
        _run([*ip, "route", "add", "default", "dev", "out0"])
        self._resolv.mkdir(parents=True, exist_ok=True)
        (self._resolv / "resolv.conf").write_text("nameserver 127.0.0.1\noptions attempts:1\n")
        self.catcher = Catcher(self.inside(_catcher_sockets))

    def inside(self, make: Callable[[], T]) -> T:
        """``make()`` run on a thread that entered the namespace (sockets made there stay in it)."""
        result: list[T] = []
        failure: list[BaseException] = []

        def enter() -> None:
            try:
                fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
                try:
                    os.setns(fd, os.CLONE_NEWNET)
                finally:
                    os.close(fd)
                result.append(make())
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)

        thread = threading.Thread(target=enter)
        thread.start()
        thread.join()
        if failure:
            raise failure[0]
        return result[0]

    def command(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def close(self) -> None:
        if self.catcher is not None:
            self.catcher.close()
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True, check=False)
        shutil.rmtree(self._resolv, ignore_errors=True)
        with contextlib.suppress(OSError):  # /etc/netns itself, once no namespace uses it
            self._resolv.parent.rmdir()


def _catcher_sockets() -> tuple[socket.socket, socket.socket, socket.socket]:
    wire = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    wire.bind(("wire0", 0))
    dns_udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns_udp.bind(("127.0.0.1", 53))
    dns_tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    dns_tcp.bind(("127.0.0.1", 53))
    dns_tcp.listen(16)
    return wire, dns_udp, dns_tcp


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True)


@contextmanager
def namespace() -> Iterator[Namespace]:
    ns = Namespace()
    try:
        ns.open()
        yield ns
    finally:
        ns.close()
