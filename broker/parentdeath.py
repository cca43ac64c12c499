"""A child that ends when Helm does, even when Helm is killed without a chance to stop it.

Helm stops its children itself when it exits (``broker.agents.process``), but a SIGKILL, an
out-of-memory kill or a crash leaves no chance to. On Linux the kernel can do it instead: a
child started with ``ends_with_helm()`` as its ``preexec_fn`` asks, between fork and exec, for
SIGKILL as soon as the thread that started it ends (``prctl(PR_SET_PDEATHSIG)``). Helm starts
its children from the event loop's thread, which lives as long as Helm does. If Helm died
already between the fork and that request, the child exits at once instead.

Only the child itself is covered; what it started in turn sees its pipes to Helm close. Other
systems get None: their children end on that end of input alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable
from functools import cache

PR_SET_PDEATHSIG = 1


@cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    prctl: Callable[..., int] = libc.prctl
    return prctl


def ends_with_helm() -> Callable[[], None] | None:
    """The ``preexec_fn`` that ties a child's life to Helm's, or None where it cannot."""
    prctl = _prctl()  # found before any fork: the child only calls it
    if prctl is None:
        return None
    helm = os.getpid()

    def tie() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != helm:  # Helm ended before the request took effect
            os._exit(1)

    return tie
