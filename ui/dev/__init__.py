"""Author mode (``helm dev``): one extension in a window with a call inspector, live lint,
reload on save and a line on the terminal for each event, on the real bridge, broker and
dialogs; and ``helm ext test``, the same page headless against fixtures."""

from __future__ import annotations

from ui.dev.inspector import CallInspector, CallRecord, ObservedHandler
from ui.dev.lint import LintPanel
from ui.dev.terminal import TerminalReport
from ui.dev.watcher import FolderWatcher
from ui.dev.window import DevOptions, DevWindow

__all__ = [
    "CallInspector",
    "CallRecord",
    "DevOptions",
    "DevWindow",
    "FolderWatcher",
    "LintPanel",
    "ObservedHandler",
    "TerminalReport",
]
