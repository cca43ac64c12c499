"""The Helm home, followed while the window runs: what a terminal (or another Helm) changed.

``helm workspace add``, ``helm agent add``, ``helm service add``, ``helm ext install`` and Stop in
another window all write the home's files, each saved whole by a rename. ``HomeWatch`` watches
the home folder itself (a rename changes the folder, so no change is missed, whichever file was
replaced), waits a moment for a burst of saves to end, and says which of the files it follows
changed since it last looked. The window then refreshes what those files feed, keeping what the
user is editing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ui.qt import QFileSystemWatcher, QObject, QTimer, Signal

FOLLOWED = ("settings.json", "stopped.json")
"""The files whose changes the window shows: profiles, workspaces, extensions and approvals,
agents; and what the user stopped."""
SETTLE_MS = 150
"""A save is a temp file, a rename and perhaps another save right after: one look at the end."""

Stamp = tuple[int, int, int] | None


def stamp(path: Path) -> Stamp:
    """What tells one version of a file from another: inode, size and change time (None: gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class HomeWatch(QObject):
    changed = Signal(frozenset)
    """The names (of ``FOLLOWED``) whose file changed since the last look."""

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.seen = {name: stamp(home / name) for name in FOLLOWED}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.look)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(lambda _path: self._timer.start())
        if home.is_dir():
            self._watcher.addPath(str(home))

    def look(self) -> frozenset[str]:
        """Compare the followed files with the last look; emit and return what changed."""
        now = {name: stamp(self.home / name) for name in FOLLOWED}
        changed = frozenset(name for name in FOLLOWED if now[name] != self.seen[name])
        self.seen = now
        if changed:
            self.changed.emit(changed)
        return changed
