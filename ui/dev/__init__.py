"""Author mode (``helm dev``): one extension in a window with a call inspector, live lint and
reload on save, on the real bridge, broker and dialogs."""

from __future__ import annotations

from ui.dev.inspector import CallInspector, CallRecord, ObservedHandler
from ui.dev.lint import LintPanel
from ui.dev.watcher import FolderWatcher
from ui.dev.window import DevWindow

__all__ = ["CallInspector", "CallRecord", "DevWindow", "FolderWatcher", "LintPanel", "ObservedHandler"]
