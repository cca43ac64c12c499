"""Watch an extension folder and say once when a burst of changes has settled.

Editors save in bursts (a temporary file, a rename, a second write), so ``changed`` is
emitted ``debounce_ms`` after the last event. New folders are watched as they appear; an
editor that replaces a file by renaming drops it from the watch, so every path is watched
again after each burst.
"""

from __future__ import annotations

import os
from pathlib import Path

from ui.qt import QFileSystemWatcher, QObject, QTimer, Signal

DEBOUNCE_MS = 150
MAX_WATCHED = 2000
"""An extension folder is small; past this many paths (a node_modules?) the rest is not watched."""

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})


def watched_paths(root: Path, limit: int = MAX_WATCHED) -> list[str]:
    """The folder, its sub-folders and files, minus version control and dependency trees."""
    paths = [str(root)]
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        here = Path(current)
        paths += [str(here / d) for d in dirs]
        paths += [str(here / f) for f in sorted(files)]
        if len(paths) >= limit:
            return paths[:limit]
    return paths


class FolderWatcher(QObject):
    """Emits ``changed`` once per settled burst of changes under ``root``."""

    changed = Signal()

    def __init__(self, root: Path, parent: QObject | None = None, *, debounce_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self.root = root
        self._watcher = QFileSystemWatcher(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._settled)
        self._watcher.fileChanged.connect(self._touched)
        self._watcher.directoryChanged.connect(self._touched)
        self._rewatch()

    def _touched(self, _path: str) -> None:
        self._timer.start()  # restarts: the burst is not over yet

    def _settled(self) -> None:
        self._rewatch()
        self.changed.emit()

    def _rewatch(self) -> None:
        current = set(self._watcher.files()) | set(self._watcher.directories())
        wanted = set(watched_paths(self.root)) if self.root.is_dir() else set()
        gone = current - wanted
        if gone:
            self._watcher.removePaths(sorted(gone))
        # A file replaced by a rename is a new inode: watch every file again, not just new ones.
        files = self._watcher.files()
        if files:
            self._watcher.removePaths(files)
        fresh = sorted(wanted - set(self._watcher.directories()))
        if fresh:
            self._watcher.addPaths(fresh)

    def stop(self) -> None:
        self._timer.stop()
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
