"""``ActivityFeed``: the broker's activity records, delivered to Qt in batches.

The broker tells its listeners about each call as it ends, inside the call path; the feed only
appends the record to a list there, and a short timer hands the batch to the windows (the
Activity view, the dashboard's error strips), so a flood of calls costs the call path nothing
and repaints the screen a few times a second at most.
"""

from __future__ import annotations

from broker.activity import Activity, ActivityRecord
from ui.qt import QObject, QTimer, Signal

BATCH_MS = 100


class ActivityFeed(QObject):
    records = Signal(list)
    """A list of ``ActivityRecord``s, oldest first."""

    def __init__(
        self, activity: Activity, parent: QObject | None = None, *, batch_ms: int = BATCH_MS
    ) -> None:
        super().__init__(parent)
        self.activity = activity
        self._pending: list[ActivityRecord] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(batch_ms)
        self._timer.timeout.connect(self.deliver)
        self._unsubscribe = activity.subscribe(self._heard)
        self.destroyed.connect(lambda _=None, off=self._unsubscribe: off())

    def _heard(self, record: ActivityRecord) -> None:
        self._pending.append(record)
        if not self._timer.isActive():
            self._timer.start()

    def deliver(self) -> None:
        """Hand what arrived to the listeners now."""
        self._timer.stop()
        batch, self._pending = self._pending, []
        if batch:
            self.records.emit(batch)

    def close(self) -> None:
        self._timer.stop()
        self._unsubscribe()
