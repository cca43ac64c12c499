"""The full-disk check, run inside a small tmpfs that the test mounts (``test_full_disk``).

Usage: ``python -m tests.unit.full_disk_child DIR`` (DIR: the mounted filesystem)

It makes a Helm home with every kind of file, fills the disk, tries every kind of save, and then
frees the disk and saves again. It exits 0 after printing ``ok``, or fails an assertion.
"""

from __future__ import annotations

import contextlib
import errno
import io
import sys
from pathlib import Path

from app.cli import main as helm
from broker.audit import AuditLog
from broker.errors import CallError, HelmError
from tests.unit.crash_child import SAVES
from tests.unit.test_crash_harness import snapshot, temp_files


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    return filler


def try_every_save(home: Path, root: Path) -> dict[str, str]:
    """Each save on the full disk: what it raised ("" for none), and nothing changed."""
    before = snapshot(home, root)
    said: dict[str, str] = {}
    for kind, save in SAVES.items():
        try:
            save(home, root, 1)
            said[kind] = ""
        except (HelmError, CallError) as exc:
            said[kind] = str(exc)
        assert snapshot(home, root) == before, f"{kind} changed a file on a full disk"
        assert temp_files(home, root) == [], f"{kind} left a temp file on a full disk"
    return said


def main() -> None:
    disk = Path(sys.argv[1])
    home, root = disk / "home", disk / "root"
    (root / "notes").mkdir(parents=True)
    home.mkdir(mode=0o700)
    for save in SAVES.values():
        save(home, root, 0)
    records = len(AuditLog.in_home(home).scan().records)
    filler = fill(disk)
    said = try_every_save(home, root)
    for kind in ("settings", "credentials", "layout", "widget settings", "agent sessions"):
        assert said[kind].startswith("cannot write ") and "No space left on device" in said[kind], said
    assert "No space left on device (the record was not written)" in said["audit"], said
    assert said["state"] == "Helm could not save the state (No space left on device); nothing was stored"
    assert said["activity"] == "", said  # the activity log is a notebook: calls go on
    assert said["files write"] in (  # the ledger in the home is on the same full disk here
        "Helm could not record its temporary file in its home folder",
        "Helm could not access the file (an I/O error)",
    ), said
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = helm(["project", "add", "-w", "ws0", "more", str(root), "--home", str(home)])
    settings = home / "settings.json"
    assert (code, err.getvalue()) == (
        3, f"helm: cannot write {settings}: No space left on device (the file on disk is unchanged)\n"
    ), (code, err.getvalue())  # fmt: skip
    filler.unlink()
    for save in SAVES.values():
        save(home, root, 1)
    scan = AuditLog.in_home(home).scan()
    assert (len(scan.records), scan.skipped, scan.set_aside) == (records + 1, 0, 0), scan
    assert temp_files(home, root) == []
    print("ok")


if __name__ == "__main__":
    main()
