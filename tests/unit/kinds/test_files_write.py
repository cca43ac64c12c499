"""files write: a confirmed, hash-checked, atomic replacement of one existing file."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, Decision
from broker.fs.ledger import TempLedger, temp_name
from broker.fs.safe import FileId
from broker.fs.writing import TEMP_RE
from tests.helpers import ScriptedConfirmer
from tests.unit.kinds.files_setup import Setup, broker, code, files_conn, make_setup, register_project, sha

__all__ = ["broker"]

OLD = "line 1\nline 2\nline 3\n"
NEW = "line 1\nline two\nline 3\n"


@pytest.fixture
async def s(broker: Broker, tmp_path: Path) -> Setup:
    setup = await make_setup(broker, tmp_path, [files_conn(["notes/*.md"])])
    (setup.root / "notes").mkdir()
    (setup.root / "notes" / "a.md").write_text(OLD)
    return setup


def ident(path: Path) -> FileId:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def args(text: str = NEW, expected: str | None = None, path: str = "notes/a.md") -> dict[str, Any]:
    return {"path": path, "text": text, "expected_sha256": expected or sha(OLD)}


async def confirmed(s: Setup, a: dict[str, Any], decision: Decision = Decision.CONFIRMED) -> dict[str, Any]:
    return await s.broker.request(s.ctx, "fs", "write", a, ScriptedConfirmer(decision))


async def test_a_confirmed_write_replaces_the_file_and_returns_its_new_hash(s: Setup) -> None:
    result = await confirmed(s, args())
    assert result == {"ok": True, "data": {"path": "notes/a.md", "sha256": sha(NEW)}, "error": None}
    assert (s.root / "notes" / "a.md").read_text() == NEW
    assert not [n for n in os.listdir(s.root / "notes") if TEMP_RE.fullmatch(n)]


async def test_the_summary_shows_workspace_path_and_a_line_diff(s: Setup) -> None:
    summary = await s.broker.describe_write(s.ctx, "fs", "write", args())
    assert summary.title == "Confirm file change"
    assert ("Workspace", "ws") in summary.fields
    assert ("Path", "notes/a.md") in summary.fields
    assert summary.diff is not None
    assert "--- a/notes/a.md\n+++ b/notes/a.md\n" in summary.diff
    assert "-line 2\n+line two\n" in summary.diff
    assert "notes/a.md" in summary.request


async def test_the_summary_of_a_project_write_names_the_project(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"], root="project")])
    register_project(broker, "app", tmp_path / "app")
    (tmp_path / "app" / "r.md").write_text(OLD)
    a = {**args(path="r.md"), "project": "app"}
    summary = await s.broker.describe_write(s.ctx, "fs", "write", a)
    assert ("Project", "app") in summary.fields
    assert (await confirmed(s, a))["ok"]
    assert (tmp_path / "app" / "r.md").read_text() == NEW


async def test_a_diff_marks_a_last_line_without_newline(s: Setup) -> None:
    summary = await s.broker.describe_write(s.ctx, "fs", "write", args(text="line 1\nend"))
    assert summary.diff is not None
    assert "+end\n\\ No newline at end of file\n" in summary.diff


async def test_a_token_is_bound_to_the_exact_text(s: Setup) -> None:
    summary = await s.broker.describe_write(s.ctx, "fs", "write", args())
    other = await s.broker.call(s.ctx, "fs", "write", args(text="other\n"), confirmation=summary.token)
    assert code(other) == "confirmation_required"
    assert (s.root / "notes" / "a.md").read_text() == OLD


async def test_a_declined_write_changes_nothing(s: Setup) -> None:
    assert code(await confirmed(s, args(), Decision.DECLINED)) == "declined"
    assert (s.root / "notes" / "a.md").read_text() == OLD


async def test_a_mismatched_hash_is_a_conflict_and_writes_nothing(s: Setup) -> None:
    before = os.stat(s.root / "notes" / "a.md")
    result = await confirmed(s, args(expected=sha("something else")))
    assert code(result) == "conflict"
    after = os.stat(s.root / "notes" / "a.md")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


async def test_the_write_keeps_the_file_mode(s: Setup) -> None:
    target = s.root / "notes" / "a.md"
    os.chmod(target, 0o640)
    assert (await confirmed(s, args()))["ok"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


async def test_the_write_drops_setuid_bits(s: Setup) -> None:
    target = s.root / "notes" / "a.md"
    os.chmod(target, 0o4755)
    assert (await confirmed(s, args()))["ok"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755


async def test_write_never_creates_a_file(s: Setup) -> None:
    result = await confirmed(s, args(path="notes/new.md", expected=sha("")))
    assert code(result) == "refused"
    assert not (s.root / "notes" / "new.md").exists()


async def test_text_over_256_kib_is_too_large(s: Setup) -> None:
    result = await confirmed(s, args(text="x" * (256 * 1024 + 1)))
    assert code(result) == "too_large"
    assert (s.root / "notes" / "a.md").read_text() == OLD


async def test_a_call_message_over_256_kib_is_too_large(s: Setup) -> None:
    # The text alone fits; with the other arguments the message does not.
    result = await confirmed(s, args(text="x" * (256 * 1024 - 10)))
    assert code(result) == "too_large"


async def test_multibyte_text_is_written_as_utf8(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["a"])])
    (s.root / "a").write_text(OLD)
    text = "é" * (128 * 1024 - 64)  # just under 256 KiB of UTF-8, with room for the other args
    assert (await confirmed(s, args(text=text, path="a")))["ok"]
    assert (s.root / "a").read_text(encoding="utf-8") == text


async def test_a_malformed_expected_hash_is_refused(s: Setup) -> None:
    for bad in ("abc", 42, None, "g" * 64):
        a = {"path": "notes/a.md", "text": NEW, "expected_sha256": bad}
        assert code(await confirmed(s, a)) == "refused"


async def test_an_uppercase_expected_hash_is_accepted(s: Setup) -> None:
    assert (await confirmed(s, args(expected=sha(OLD).upper())))["ok"]


_WRITE_AS_USER = """
import os, sys
from pathlib import Path
from broker.errors import CallError
from broker.fs.guard import FileGuard, GuardRoot
folder, uid, expected = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if uid >= 0:  # imports done as root; the write itself runs as the other user
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
try:
    FileGuard([GuardRoot(folder)], folder / "home").write_text("a.md", "new", expected)
    print("ok")
except CallError as err:
    print(f"{err.code.value} {err.message}")
"""


def _write_as_user(folder: Path, uid: int | None) -> str:
    """Run the real write in a child process, as ``uid`` when given; return its outcome."""
    argv = [sys.executable, "-c", _WRITE_AS_USER, str(folder), str(-1 if uid is None else uid), sha(OLD)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip() or f"crashed: {done.stderr[-2000:]}"


async def test_a_file_without_its_owners_write_bit_is_read_only_even_for_root(s: Setup) -> None:
    # CI runs as root, for whom every file is writable (os.access says yes): the mode bits decide.
    target = s.root / "notes" / "a.md"
    for mode in (0o444, 0o466):
        os.chmod(target, mode)
        result = await confirmed(s, args())
        assert code(result) == "refused"
        assert "read-only" in result["error"]["message"]
        assert target.read_text() == OLD


def test_a_file_helms_user_may_not_write_is_refused(tmp_path: Path) -> None:
    # The file is writable by its owner, but not by the user Helm runs as; as root that user
    # is nobody and the file is root's, otherwise the file is read-only for its owner.
    folder = Path(tempfile.mkdtemp(prefix="helm-ro-"))
    try:
        (folder / "a.md").write_text(OLD)
        os.chmod(folder / "a.md", 0o644 if os.geteuid() == 0 else 0o444)
        uid = None
        if os.geteuid() == 0:
            uid = pwd.getpwnam("nobody").pw_uid
            os.chmod(folder, 0o777)
        out = _write_as_user(folder, uid)
        assert out.startswith("refused"), out
        assert "read-only" in out
        assert (folder / "a.md").read_text() == OLD
    finally:
        shutil.rmtree(folder)


async def test_a_write_in_a_connection_without_write_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"], ops=("list", "read"))])
    (s.root / "a.md").write_text(OLD)
    assert code(await confirmed(s, args(path="a.md"))) == "refused"
    assert (s.root / "a.md").read_text() == OLD


async def test_read_then_write_round_trips_the_hash(s: Setup) -> None:
    read = await s.call("read", {"path": "notes/a.md"})
    result = await confirmed(s, args(expected=read["data"]["sha256"]))
    again = await s.call("read", {"path": "notes/a.md"})
    assert result["data"]["sha256"] == again["data"]["sha256"] == sha(NEW)


async def test_a_write_leaves_the_users_own_files_named_like_helm_temp_files(s: Setup) -> None:
    mine = s.root / "notes" / ".helm-write-0123456789abcdef.tmp"
    mine.write_text("the user's own file")
    assert (await confirmed(s, args()))["ok"]
    assert mine.read_text() == "the user's own file"


async def test_a_dead_writers_temp_is_kept_if_another_file_took_its_name(s: Setup) -> None:
    # A writer records its temp file and dies (its lock on the record goes with it); then the
    # name is taken by another file. The next write removes the record, not that file.
    folder = s.root / "notes"
    name = temp_name("00112233445566aa")
    (folder / name).write_text("Helm's temp")
    ledger = TempLedger(s.broker.home.path)
    dead = ledger.claim(ident(folder), "00112233445566aa")
    ledger.record(dead, ident(folder / name))
    os.close(dead.fd)
    (folder / "other").write_text("someone else's")
    os.replace(folder / "other", folder / name)
    assert (await confirmed(s, args()))["ok"]
    assert (folder / name).read_text() == "someone else's"
    assert os.listdir(ledger.folder) == []


async def test_a_writer_killed_before_recording_its_temp_still_gets_it_cleaned(s: Setup) -> None:
    # The entry is made before the temp file; a writer that dies after creating the file but
    # before writing its identity into the entry leaves a file the next write still removes.
    folder = s.root / "notes"
    ledger = TempLedger(s.broker.home.path)
    dead = ledger.claim(ident(folder), "00112233445566bb")
    (folder / temp_name("00112233445566bb")).write_text("half a write")
    os.close(dead.fd)
    assert (await confirmed(s, args()))["ok"]
    assert sorted(os.listdir(folder)) == ["a.md"]
    assert os.listdir(ledger.folder) == []


async def test_a_look_alike_older_than_a_dead_writers_entry_is_kept(s: Setup) -> None:
    # A writer died between making its entry and finding the name taken: the file that took the
    # name was there before the entry, so it is not Helm's.
    folder = s.root / "notes"
    name = temp_name("00112233445566cc")
    (folder / name).write_text("the user's")
    ledger = TempLedger(s.broker.home.path)
    dead = ledger.claim(ident(folder), "00112233445566cc")
    later = os.stat(folder / name).st_ctime_ns + 10**9
    os.utime(dead.path, ns=(later, later))
    os.close(dead.fd)
    assert (await confirmed(s, args()))["ok"]
    assert (folder / name).read_text() == "the user's"
    assert os.listdir(ledger.folder) == []


async def test_helm_temp_files_are_not_listed(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["notes/*", "notes/.*"])])
    (s.root / "notes").mkdir()
    (s.root / "notes" / ".hidden").write_text("x")
    (s.root / "notes" / ".helm-write-0123456789abcdef.tmp").write_text("x")
    paths = [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
    assert paths == ["notes/.hidden"]
