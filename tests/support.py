"""Shared helpers for Helm's tests: real parts or a clear reason why not.

A test that cannot run its real part fails when ``CI=true`` (the CI machine is expected to have
everything ``scripts/test-deps.sh`` installs) and skips with the reason on a developer machine.
Server processes run in their own process group so tearing one down also ends whatever it
spawned (npm wrappers, worker processes), and every wait has a timeout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_DEPS = REPO / ".test-deps"
LOOPBACK = "127.0.0.1"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require(condition_or_tool: object, reason: str) -> None:
    """Demand a real part: fail under CI, skip otherwise.

    ``condition_or_tool`` is either a truthy/falsy value or a string naming an executable that
    must be on PATH (or an existing path to one).
    """
    if isinstance(condition_or_tool, str | os.PathLike):
        text = os.fspath(condition_or_tool)
        ok = bool(shutil.which(text)) or (os.sep in text and os.access(text, os.X_OK))
    else:
        ok = bool(condition_or_tool)
    if ok:
        return
    message = f"{reason} (install with scripts/test-deps.sh)"
    if in_ci():
        pytest.fail(f"missing in CI: {message}", pytrace=False)
    pytest.skip(message)


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


def wait_for_port(host: str, port: int, timeout: float = 30.0) -> None:
    """Block until something accepts TCP connections on host:port, or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(host, port):
            return
        # Polling a socket is the only signal a foreign process gives us; keep it short.
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout:.0f}s")


@dataclass
class ServerProcess:
    """A child server in its own process group, with its output kept for diagnostics."""

    name: str
    popen: subprocess.Popen[str]
    stop_signal: signal.Signals = signal.SIGTERM
    lines: list[str] = field(default_factory=list)
    _ready_line: threading.Event = field(default_factory=threading.Event)
    _pattern: str | None = None
    _pump_thread: threading.Thread | None = None

    def output(self) -> str:
        return "".join(self.lines[-60:])

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        stop_group(self.popen, timeout, self.stop_signal)
        if self._pump_thread is not None:
            self._pump_thread.join(timeout)  # the output ends once the group is gone
        if self.popen.stdout is not None:
            self.popen.stdout.close()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line)
            if self._pattern is not None and self._pattern in line:
                self._ready_line.set()
        self._ready_line.set()  # EOF: wake any waiter so it can report the exit


def stop_group(
    popen: subprocess.Popen[str],
    timeout: float = 10.0,
    first: signal.Signals = signal.SIGTERM,
) -> None:
    """Signal the child's whole process group (SIGTERM), then SIGKILL it if it lingers."""
    if popen.poll() is not None and not _group_exists(popen.pid):
        return
    for sig in (first, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, sig)
        try:
            popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue
        if not _group_exists(popen.pid):
            return
        # The leader is gone but members may remain; give them the same chance.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _group_exists(popen.pid):
            time.sleep(0.05)
        if not _group_exists(popen.pid):
            return


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_children() -> dict[int, list[int]]:
    """Every running process's children, by the parent's pid (read from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # ended meanwhile
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> set[int]:
    """Every process descended from ``pid`` now, its children's children included."""
    children = process_children()
    found: set[int] = set()
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        if child not in found:
            found.add(child)
            todo.extend(children.get(child, []))
    return found


def start_server(
    name: str,
    argv: Sequence[str],
    *,
    port: int | None = None,
    host: str = LOOPBACK,
    ready_line: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float = 30.0,
    user: str | None = None,
    stop_signal: signal.Signals = signal.SIGTERM,
) -> ServerProcess:
    """Start ``argv`` in a new process group and wait until it is ready.

    Ready means ``ready_line`` appeared in its combined output and/or ``port`` accepts
    connections. On failure the group is stopped and the error carries the server's output.
    ``user`` runs the server as that OS account (only when we are root).
    """
    full_env = dict(os.environ)
    full_env.update(env or {})
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=full_env,
        cwd=cwd,
        start_new_session=True,
        **as_user(user),
    )
    server = ServerProcess(name=name, popen=popen, stop_signal=stop_signal, _pattern=ready_line)
    server._pump_thread = threading.Thread(target=server._pump, name=f"{name}-output", daemon=True)
    server._pump_thread.start()
    try:
        _wait_ready(server, port, host, ready_line, timeout)
    except BaseException:
        server.stop()
        raise
    return server


def as_user(user: str | None) -> dict[str, Any]:
    """Popen keyword arguments that drop to ``user`` (with its own group) when we are root."""
    if user is None or os.geteuid() != 0:
        return {}
    import pwd

    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _wait_ready(
    server: ServerProcess, port: int | None, host: str, ready_line: str | None, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    if ready_line is not None:
        server._ready_line.wait(timeout)
        if ready_line not in "".join(server.lines):
            raise RuntimeError(f"{server.name} did not become ready:\n{server.output()}")
    while port is not None:
        if port_open(host, port):
            return
        if not server.alive():
            raise RuntimeError(f"{server.name} exited early:\n{server.output()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{server.name} not listening on {host}:{port}:\n{server.output()}")
        time.sleep(0.05)


@contextlib.contextmanager
def running_server(name: str, argv: Sequence[str], **kwargs: Any) -> Iterator[ServerProcess]:
    """``start_server`` as a context manager that always tears the group down."""
    server = start_server(name, argv, **kwargs)
    try:
        yield server
    finally:
        server.stop()
