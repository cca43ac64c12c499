"""Atomic saves of Helm's own files: unique owner-only temp files, removed after a crash."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

import pytest

from broker import atomic, home_tidy
from broker.atomic import remove_stale_temps, write_atomic
from broker.errors import HomeWriteError


def test_a_leftover_temp_file_at_this_pids_old_name_does_not_block_saving(tmp_path: Path) -> None:
    # In a PID namespace Helm gets the same PID every run; a leftover once blocked every save.
    (tmp_path / f".settings.json.{os.getpid()}.tmp").write_bytes(b"{}")
    write_atomic(tmp_path / "settings.json", b"new")
    assert (tmp_path / "settings.json").read_bytes() == b"new"


def test_two_saves_of_one_file_use_two_temp_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.replace

    def spy(src: object, dst: object) -> None:
        seen.append(os.path.basename(str(src)))
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic.os, "replace", spy)
    write_atomic(tmp_path / "a.json", b"1")
    write_atomic(tmp_path / "a.json", b"2")
    assert len(set(seen)) == 2 and all(atomic.TEMP_RE.fullmatch(n) for n in seen)


def test_the_temp_file_is_owner_only_while_it_is_written_even_for_a_readable_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modes: list[int] = []
    real = atomic.write_all

    def spy(fd: int, data: bytes) -> None:
        modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real(fd, data)

    monkeypatch.setattr(atomic, "write_all", spy)
    write_atomic(tmp_path / "fixture.json", b"x", mode=0o644)
    assert modes == [0o600]
    assert stat.S_IMODE((tmp_path / "fixture.json").stat().st_mode) == 0o644


def test_a_failed_save_raises_a_home_write_error_naming_the_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "settings.json"
    target.write_bytes(b"old")

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "write_all", full)
    with pytest.raises(HomeWriteError) as got:
        write_atomic(target, b"new")
    assert isinstance(got.value, OSError) and got.value.errno == errno.ENOSPC
    assert str(got.value) == f"cannot write {target}: No space left on device (the file on disk is unchanged)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert target.read_bytes() == b"old"


def test_a_short_write_is_continued_until_every_byte_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.write

    def short(fd: int, data: bytes) -> int:
        return real(fd, bytes(data[:3]))

    monkeypatch.setattr(atomic.os, "write", short)
    write_atomic(tmp_path / "a.json", b"0123456789")
    assert (tmp_path / "a.json").read_bytes() == b"0123456789"


def test_stale_temp_files_of_dead_saves_are_removed_and_a_live_saves_is_kept(tmp_path: Path) -> None:
    dead = tmp_path / f".credentials.json.{'a' * 32}.tmp"
    dead.write_bytes(b'{"secrets": {"k": "s3cret"}}')
    old_style = tmp_path / ".settings.json.4242.tmp"
    old_style.write_bytes(b"{}")
    live = tmp_path / f".layout.json.{'b' * 32}.tmp"
    live.write_bytes(b"")
    not_ours = tmp_path / ".notes.txt.tmp"
    not_ours.write_bytes(b"")
    link = tmp_path / f".x.json.{'c' * 32}.tmp"
    link.symlink_to(tmp_path / "elsewhere")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        removed = remove_stale_temps(tmp_path)
    finally:
        os.close(fd)
    assert sorted(removed) == sorted([dead.name, old_style.name])
    assert not dead.exists() and not old_style.exists()
    assert live.exists() and not_ours.exists() and link.is_symlink()


def test_a_start_removes_dead_saves_temp_files_in_every_save_folder_of_the_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folders = [
        home,
        home / "state",
        home / "agents",
        home / "cache",
        home / "apps" / "0123abcd" / "com.example.app",
    ]
    temps = []
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        temps.append(folder / f".credentials.json.{'d' * 32}.tmp")
        temps[-1].write_bytes(b'{"secrets": {"k": "s3cret"}}')
    tidied = home_tidy.tidy(home)
    assert sorted(tidied.temps) == sorted(str(t) for t in temps)
    assert not any(t.exists() for t in temps)


def test_a_start_sets_aside_a_torn_audit_tail(tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").write_bytes(b'{"a": 1}\n{"torn')
    assert home_tidy.tidy(tmp_path).torn_logs == ("audit.jsonl",)
    assert (tmp_path / "audit.jsonl").read_bytes() == b'{"a": 1}\n'
    assert (tmp_path / "audit.jsonl.torn").read_bytes() == b'{"torn\n'
