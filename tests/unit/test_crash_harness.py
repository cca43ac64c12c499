"""The crash harness: a helper process is SIGKILLed at seeded random points of every kind of save.

For each kind (``crash_child.SAVES``) the home is prepared with an old version of the files,
one run to the end says how many disk-changing steps the save takes and what the new files are,
and then a helper making the same save is stopped at seeded random steps — in the middle of a
write, too — and SIGKILLed there. After each kill, and after the next start's tidy:

* every file of the home and of the workspace is its old or its new version, and parses — a log
  is its old lines followed by whole lines of the new ones (the activity log writes its records
  in batches: a kill during one keeps the batch's first records);
* no temp file is left anywhere, and the files-write ledger is empty;
* the logs read whole: no line is skipped, and at most the torn record is set aside.

``HELM_CRASH_SEED`` and ``HELM_CRASH_KILLS`` (kills per kind) reproduce or widen a run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from broker import atomic, home_tidy
from broker.audit import AuditLog
from broker.fs.ledger import LEDGER_FOLDER, TEMP_PREFIX
from broker.jsonl import TORN_SUFFIX
from broker.jsonutil import loads_strict
from tests.support import REPO
from tests.unit import crash_child

SEED = int(os.environ.get("HELM_CRASH_SEED", "24"))
KILLS = int(os.environ.get("HELM_CRASH_KILLS", "3"))

Snapshot = dict[str, bytes]


def snapshot(*folders: Path) -> Snapshot:
    """Every file below ``folders`` by path, but lock files, the ledger and torn side files."""
    found: Snapshot = {}
    for folder in folders:
        for path in folder.rglob("*"):
            name = path.name
            if path.is_dir() or name.endswith(".lock") or name.endswith(TORN_SUFFIX):
                continue
            if LEDGER_FOLDER in path.parts:
                continue
            found[str(path)] = path.read_bytes()
    return found


def prepare(tmp: Path, kind: str) -> tuple[Path, Path]:
    home, root = tmp / "home", tmp / "root"
    shutil.rmtree(tmp, ignore_errors=True)
    (root / "notes").mkdir(parents=True)
    home.mkdir(mode=0o700)
    crash_child.SAVES[kind](home, root, 0)  # the old version of the files
    return home, root


def run_child(kind: str, home: Path, root: Path, step: int) -> tuple[bool, str]:
    """Run the helper; with ``step`` it is SIGKILLed there. Returns (killed, its output)."""
    argv = [
        sys.executable,
        "-m",
        "tests.unit.crash_child",
        kind,
        str(home),
        str(root),
        str(step),
        str(SEED + step),
    ]
    with subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        killed = os.WIFSTOPPED(status)
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            proc.returncode = os.waitstatus_to_exitcode(status)
        out, err = proc.communicate()
    if not killed and proc.returncode != 0:
        raise AssertionError(f"the {kind} save failed: {err.decode()}")
    return killed, out.decode()


def temp_files(*folders: Path) -> list[str]:
    return [
        str(p)
        for folder in folders
        for p in folder.rglob("*")
        if atomic.TEMP_RE.fullmatch(p.name) or p.name.startswith(TEMP_PREFIX)
    ]


def check_parses(files: Snapshot) -> None:
    for path, data in files.items():
        if path.endswith(".json"):
            loads_strict(data.decode("utf-8"))
        elif path.endswith(".jsonl"):
            for line in data.splitlines():
                json.loads(line.decode("utf-8"))


def check_after_kill(home: Path, root: Path, old: Snapshot, new: Snapshot, where: str) -> None:
    home_tidy.tidy(home)  # what the next start does
    assert temp_files(home, root) == [], where
    ledger = home / LEDGER_FOLDER
    assert not ledger.exists() or os.listdir(ledger) == [], where
    now = snapshot(home, root)
    for path in set(old) | set(new) | set(now):
        was, will, got = old.get(path), new.get(path), now.get(path)
        if path.endswith(".jsonl") and got is not None and will is not None:
            assert got.startswith(was or b"") and will.startswith(got), f"{where}: {path} lost or tore a line"
            assert got.endswith(b"\n") or not got, f"{where}: {path} ends in a torn line"
        else:
            assert got in (was, will), f"{where}: {path} is neither old nor new"
    check_parses(now)
    for torn in home.glob(f"*{TORN_SUFFIX}"):
        assert len(torn.read_bytes().splitlines()) <= 1, f"{where}: more than the torn record set aside"
    scan = AuditLog.in_home(home).scan()
    assert scan.skipped == 0, where


@pytest.mark.parametrize("kind", list(crash_child.SAVES))
def test_a_helper_killed_at_random_points_of_a_save_leaves_every_file_old_or_new(
    kind: str, tmp_path: Path
) -> None:
    home, root = prepare(tmp_path / "run", kind)
    old = snapshot(home, root)
    killed, out = run_child(kind, home, root, 0)
    assert not killed
    steps = int(out)
    new = snapshot(home, root)
    assert new != old and steps > 0
    rng = random.Random(f"{SEED}-{kind}")
    for step in sorted(rng.sample(range(1, steps + 1), min(KILLS, steps))):
        home, root = prepare(tmp_path / "run", kind)
        killed, _ = run_child(kind, home, root, step)
        assert killed, f"{kind}: step {step} of {steps} was not reached"
        check_after_kill(home, root, old, new, f"{kind}, killed at step {step} of {steps} (seed {SEED})")
