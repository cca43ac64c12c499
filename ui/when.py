"""Times, durations and sizes as a person reads them, in the user's local time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def local_time(when: datetime | float, now: datetime | None = None) -> str:
    """``14:03:22`` today, ``yesterday 14:03``, ``3 Jan 14:03`` this year, else ``3 Jan 2025 14:03``."""
    moment = datetime.fromtimestamp(when, UTC) if isinstance(when, float | int) else when
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone()
    today = (now or datetime.now(UTC)).astimezone().date()
    if local.date() == today:
        return local.strftime("%H:%M:%S")
    if local.date() == today - timedelta(days=1):
        return local.strftime("yesterday %H:%M")
    day = f"{local.day} {local.strftime('%b')}"
    if local.year == today.year:
        return f"{day} {local.strftime('%H:%M')}"
    return f"{day} {local.year} {local.strftime('%H:%M')}"


def local_time_of(iso: str, now: datetime | None = None) -> str:
    """``local_time`` of an ISO 8601 time; the text as it is when it is not one."""
    try:
        return local_time(datetime.fromisoformat(iso), now)
    except ValueError:
        return iso


def full_local_time(when: datetime | float) -> str:
    """The whole local date and time with its zone, for a tooltip or a detail pane."""
    moment = datetime.fromtimestamp(when, UTC) if isinstance(when, float | int) else when
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%A %d %B %Y, %H:%M:%S %Z")


def duration(ms: float) -> str:
    if ms < 1:
        return "<1 ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def full_local_time_of(iso: str) -> str:
    """``full_local_time`` of an ISO 8601 time; the text as it is when it is not one."""
    try:
        return full_local_time(datetime.fromisoformat(iso))
    except ValueError:
        return iso
