"""What reaches the terminal from a Qt start: Helm's own lines, and the engine's only on request.

The web engine and Qt print remarks on every start (GPU and Vulkan fall-backs, D-Bus, platform
plug-ins) that say nothing about Helm. Unless ``verbose``, Chromium logs only fatal errors and Qt
only its critical ones; Helm's own warnings (and, with ``verbose``, its notes) go to the handler
the caller gives: ``helm:`` lines on stderr for the desktop, the terminal report for ``helm dev``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

FLAGS_VARIABLE = "QTWEBENGINE_CHROMIUM_FLAGS"
QUIET_SWITCH = "--log-level=3"
"""Chromium logs only fatal errors (its own ``ERROR:`` lines about D-Bus, GPU, sandbox…)."""
LOGGING_SWITCHES = ("--log-level", "--enable-logging", "--v=", "--vmodule")

_KEPT: list[Callable[..., None]] = []  # Qt holds no Python reference to its message handler


def quiet_engine(verbose: bool, helm_lines: logging.Handler) -> None:
    """Before Qt starts: the engine's and Qt's own messages off unless ``verbose``; Helm's own
    log records at WARNING (INFO with ``verbose``) to ``helm_lines``."""
    level = logging.INFO if verbose else logging.WARNING
    helm_lines.setLevel(level)
    root = logging.getLogger()
    root.addHandler(helm_lines)
    root.setLevel(level)
    if verbose:
        return
    flags = os.environ.get(FLAGS_VARIABLE, "")
    if not any(switch in flags for switch in LOGGING_SWITCHES):  # the user's own choice stays
        os.environ[FLAGS_VARIABLE] = f"{flags} {QUIET_SWITCH}".strip()
    from ui.qt import QtMsgType, qInstallMessageHandler

    def qt_message(kind: Any, _context: Any, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            print(message, file=sys.stderr)

    _KEPT.append(qt_message)
    qInstallMessageHandler(qt_message)


def stderr_lines() -> logging.Handler:
    """Helm's own log records as ``helm: …`` lines on stderr (the desktop's terminal)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("helm: %(message)s"))
    return handler
