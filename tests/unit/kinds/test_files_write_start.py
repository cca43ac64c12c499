"""Temp files of files writes that a crash left are removed at the next start, from the ledger."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from broker import home_tidy
from broker.fs.ledger import TempLedger, temp_name
from broker.fs.safe import FileId
from tests.helpers import new_broker


def ident(path: Path) -> FileId:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def dead_write(home: Path, folder: Path, hex16: str, *, recorded: bool = True, alive: bool = False) -> Path:
    """What a writer killed after creating its temp file leaves (``alive``: one still running)."""
    ledger = TempLedger(home)
    parent = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        claim = ledger.claim(ident(folder), hex16, parent)
    finally:
        os.close(parent)
    temp = folder / temp_name(hex16)
    temp.write_text("half a write")
    if recorded:
        ledger.record(claim, ident(temp))
    if not alive:
        os.close(claim.fd)  # the process died: its lock went with it
    return temp


async def test_a_dead_writers_temp_file_is_removed_at_the_next_start(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "notes"
    folder.mkdir()
    recorded = dead_write(home, folder, "00112233445566aa")
    unrecorded = dead_write(home, folder, "00112233445566bb", recorded=False)
    async with new_broker(home) as broker:
        assert sorted(broker.tidied.write_temps) == sorted([recorded.name, unrecorded.name])
    assert os.listdir(folder) == []
    assert os.listdir(home / "write-temps") == []


def test_a_running_writers_temp_file_is_kept(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "notes"
    folder.mkdir()
    live = dead_write(home, folder, "00112233445566cc", alive=True)
    assert home_tidy.tidy(home).write_temps == ()
    assert live.exists()


def test_a_folder_replaced_since_the_crash_is_not_touched(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "notes"
    folder.mkdir()
    temp = dead_write(home, folder, "00112233445566dd")
    shutil.move(folder, tmp_path / "moved")
    folder.mkdir()
    lookalike = folder / temp.name
    lookalike.write_text("someone else's")
    assert home_tidy.tidy(home).write_temps == ()
    assert lookalike.read_text() == "someone else's"
    assert (tmp_path / "moved" / temp.name).exists()
