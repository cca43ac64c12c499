"""files under races and crashes: swapped symlinks, concurrent writers, a killed writer."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from broker import Broker, Decision
from broker.errors import CallError
from broker.fs.guard import FileGuard, GuardRoot
from broker.fs.writing import TEMP_RE
from broker.kinds.files.globs import LIST_MATCH_STEPS, GlobSet
from broker.kinds.files.listing import list_files
from broker.kinds.files.wildcard import Budget
from tests.helpers import ScriptedConfirmer
from tests.support import REPO
from tests.unit.kinds import files_child
from tests.unit.kinds.files_setup import broker, code, files_conn, make_setup, sha

__all__ = ["broker"]

WAIT = 20.0


@pytest.fixture
def tree(tmp_path: Path) -> tuple[FileGuard, Path, Path]:
    """A root with d/f.txt ("inside") and an outside folder with the same names ("SECRET")."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for folder, text in ((root, "inside"), (outside, "SECRET")):
        (folder / "d").mkdir(parents=True)
        (folder / "d" / "f.txt").write_text(text)
    return FileGuard([GuardRoot(root)], tmp_path / "home"), root, outside


class Flipper(threading.Thread):
    """Swaps a real entry and a symlink to the outside in and out, as fast as it can."""

    def __init__(self, real: Path, target: Path) -> None:
        super().__init__(daemon=True)
        self.real, self.target = real, target
        self.aside = real.with_name(real.name + ".aside")
        self.link = real.with_name(real.name + ".link")
        self.stop = threading.Event()
        self.flips = 0

    def run(self) -> None:
        while not self.stop.is_set():
            os.rename(self.real, self.aside)
            if self.aside.is_dir():
                os.symlink(self.target, self.real)
                os.unlink(self.real)
                os.rename(self.aside, self.real)
            else:
                # Renames over the name only: a writer under test may have put a file there.
                os.symlink(self.target, self.link)
                os.replace(self.link, self.real)
                os.replace(self.aside, self.real)
            self.flips += 1


def race(flipper: Flipper, attempt: Callable[[], str]) -> set[str]:
    """Run ``attempt`` against the flipper until both outcomes were seen (or time is up)."""
    outcomes: set[str] = set()
    flipper.start()
    deadline = time.monotonic() + WAIT
    tries = 0
    try:
        while time.monotonic() < deadline and (tries < 300 or not {"ok", "refused"} <= outcomes):
            outcomes.add(attempt())
            tries += 1
    finally:
        flipper.stop.set()
        flipper.join(WAIT)
    return outcomes


def read_outcome(guard: FileGuard, path: str) -> str:
    try:
        got = guard.read_text(path)
    except CallError as err:
        return err.code.value
    return "ok" if got.text == "inside" else f"LEAKED {got.text!r}"


@pytest.mark.parametrize("swapped", ["d", "d/f.txt"], ids=["folder", "file"])
def test_a_symlink_swapped_in_during_reads_never_leads_outside(
    tree: tuple[FileGuard, Path, Path], swapped: str
) -> None:
    guard, root, outside = tree
    outcomes = race(Flipper(root / swapped, outside / swapped), lambda: read_outcome(guard, "d/f.txt"))
    assert not [o for o in outcomes if o.startswith("LEAKED")]
    assert {"ok", "refused"} <= outcomes


def test_a_symlinked_folder_swapped_in_during_a_list_is_never_entered(
    tree: tuple[FileGuard, Path, Path],
) -> None:
    guard, root, outside = tree
    (outside / "d" / "only-outside.txt").write_text("SECRET")
    globs = GlobSet(["**"])

    def attempt() -> str:
        with guard.opened() as opened:
            paths = [f["path"] for f in list_files(opened, globs, Budget(LIST_MATCH_STEPS))["files"]]
        if any("only-outside" in p for p in paths):
            return "LEAKED"
        return "ok" if "d/f.txt" in paths else "refused"  # "d" was away or a symlink

    outcomes = race(Flipper(root / "d", outside / "d"), attempt)
    assert "LEAKED" not in outcomes
    assert "ok" in outcomes


@pytest.mark.parametrize("swapped", ["d", "d/f.txt"], ids=["folder", "file"])
def test_a_symlink_swapped_in_during_writes_never_writes_outside(
    tree: tuple[FileGuard, Path, Path], swapped: str
) -> None:
    guard, root, outside = tree
    (outside / "d" / "f.txt").write_text("inside")  # same hash: only the path check can stop it
    outside_inode = os.stat(outside / "d" / "f.txt").st_ino

    def attempt() -> str:
        try:
            guard.write_text("d/f.txt", "inside", sha("inside"))
        except CallError as err:
            return err.code.value
        return "ok"

    outcomes = race(Flipper(root / swapped, outside / swapped), attempt)
    assert outcomes <= {"ok", "refused", "conflict"}
    assert "ok" in outcomes
    assert os.stat(outside / "d" / "f.txt").st_ino == outside_inode
    assert (root / "d" / "f.txt").read_text() == "inside"


def write_at_once(guard: FileGuard, texts: list[str], expected: str) -> list[str]:
    """Each text written by its own thread, all released together; their outcomes."""
    barrier = threading.Barrier(len(texts))
    results = [""] * len(texts)

    def write(i: int) -> None:
        barrier.wait(WAIT)
        try:
            guard.write_text("d/f.txt", texts[i], expected)
            results[i] = "ok"
        except CallError as err:
            results[i] = err.code.value

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    return results


def test_concurrent_threads_with_the_same_hash_exactly_one_wins(tree: tuple[FileGuard, Path, Path]) -> None:
    guard, root, _ = tree
    for round_ in range(10):
        before = (root / "d" / "f.txt").read_bytes()
        texts = [f"round {round_} writer {i}" for i in range(6)]
        results = write_at_once(guard, texts, sha(before))
        assert sorted(results) == ["conflict"] * 5 + ["ok"]
        assert (root / "d" / "f.txt").read_text() == texts[results.index("ok")]


async def test_two_concurrent_writes_through_the_broker_exactly_one_wins(
    broker: Broker, tmp_path: Path
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["f.txt"])])
    (s.root / "f.txt").write_text("old")
    confirm = ScriptedConfirmer(Decision.CONFIRMED)

    def args(text: str) -> dict[str, str]:
        return {"path": "f.txt", "text": text, "expected_sha256": sha("old")}

    one, two = await asyncio.gather(
        broker.request(s.ctx, "fs", "write", args("one"), confirm),
        broker.request(s.ctx, "fs", "write", args("two"), confirm),
    )
    assert sorted([str(code(one)), str(code(two))]) == ["None", "conflict"]
    winner = "one" if one["ok"] else "two"
    assert (s.root / "f.txt").read_text() == winner


def child(mode: str, root: Path, home: Path, path: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.unit.kinds.files_child", mode, str(root), str(home), path],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def lines_of(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    """The child's stdout lines, delivered by a reader thread (so waits can time out)."""
    q: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:  # closed here, at the end of output: the main thread never races this read
            for line in proc.stdout:
                q.put(line.strip())

    threading.Thread(target=pump, daemon=True).start()
    return q


def temps(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if TEMP_RE.fullmatch(n)]


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(WAIT)
    if proc.stdin is not None:  # its stdout is closed by the thread reading it
        proc.stdin.close()


def test_concurrent_processes_with_the_same_hash_exactly_one_wins(tree: tuple[FileGuard, Path, Path]) -> None:
    guard, root, _ = tree
    procs = [child("race", root, guard.home, "d/f.txt") for _ in range(3)]
    try:
        outputs = [lines_of(p) for p in procs]
        for lines in outputs:
            assert lines.get(timeout=WAIT) == "ready"
        for p in procs:  # all started: let them go at once
            assert p.stdin is not None
            p.stdin.write(sha("inside") + "\n")
            p.stdin.flush()
        outs = sorted(lines.get(timeout=WAIT) for lines in outputs)
    finally:
        for p in procs:
            kill(p)
    assert outs == ["conflict", "conflict", "ok"]
    assert (root / "d" / "f.txt").read_text().startswith("written by ")


async def test_a_writer_killed_mid_write_leaves_the_old_file_and_its_temp_is_cleaned_next_time(
    broker: Broker, tmp_path: Path
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    (s.root / "d").mkdir()
    (s.root / "d" / "f.txt").write_text("old\n")
    (s.root / "d" / "g.txt").write_text("other\n")
    proc = child("hang", s.root, broker.home.path, "d/f.txt")
    try:
        assert lines_of(proc).get(timeout=WAIT) == "in-write"
        # While its writer lives, another write in the folder leaves its temp file alone.
        live = {"path": "d/g.txt", "text": "other\n", "expected_sha256": sha("other\n")}
        assert (await broker.request(s.ctx, "fs", "write", live, ScriptedConfirmer()))["ok"]
        assert len(temps(s.root / "d")) == 1
    finally:
        kill(proc)
    assert (s.root / "d" / "f.txt").read_text() == "old\n"
    assert len(temps(s.root / "d")) == 1
    # The next write to the folder (of another file) removes the dead writer's temp file.
    args = {"path": "d/g.txt", "text": "new\n", "expected_sha256": sha("other\n")}
    assert (await broker.request(s.ctx, "fs", "write", args, ScriptedConfirmer()))["ok"]
    assert temps(s.root / "d") == []
    assert (s.root / "d" / "f.txt").read_text() == "old\n"


def test_a_writer_killed_at_any_moment_leaves_a_whole_file(tree: tuple[FileGuard, Path, Path]) -> None:
    guard, root, _ = tree
    target = root / "d" / "f.txt"
    whole = {"inside", files_child.TEXT_A, files_child.TEXT_B}
    for wait_for in (1, 2, 5):
        proc = child("loop", root, guard.home, "d/f.txt")
        try:
            lines = lines_of(proc)
            for _ in range(wait_for):
                assert lines.get(timeout=WAIT) == "wrote"
        finally:
            kill(proc)  # somewhere inside the next write
        text = target.read_text()
        assert text in whole
        guard.write_text("d/f.txt", "inside", sha(text))
        assert temps(root / "d") == []
