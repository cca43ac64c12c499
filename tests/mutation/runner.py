"""Mutation testing of Helm's boundary modules: does a small change to a decision fail a test?

``python -m tests.mutation.runner`` runs every mutant of every module in ``targets.toml``
against that module's fast tests and prints a score per module (killed / not equivalent).
``--sample N`` runs N mutants of each module marked ``sampled`` (those whose every mutant is
killed or reviewed as equivalent), picked by ``--seed``, and fails on any survivor not listed
in ``equivalent.toml``; ``--module PATH`` limits either run to some modules.

One mutant at a time: the mutated source is imported in place of the module (an import hook in
a forked child, so the working tree is never touched and third-party imports are paid once),
then pytest runs the module's tests with ``-x``. A test failure, an import error or a timeout
(a mutant that loops: it times out twice, the second time with twice the time) kills the
mutant; all tests passing lets it survive. A survivor is printed with its key and its line, the
two an entry of ``equivalent.toml`` names.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import select
import signal
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from tests.mutation.operators import Mutant, mutants, mutate

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TARGETS = HERE / "targets.toml"
EQUIVALENT = HERE / "equivalent.toml"
THRESHOLD = 95.0
TIMEOUT_ATTEMPTS = 2
"""A mutant that times out runs once more with twice the time before it counts as killed."""
TIMEOUT_SLACK = (2.0, 2.0)
"""A mutant's first run may take 2 s plus twice its module's unmutated run (timed under the
same load, at the start), and its second run twice that: a mutant that loops costs a core that
long, twice."""


def deadline(attempt: int, baseline: float) -> float:
    """How long the ``attempt``-th run of a mutant may take, its module's tests taking ``baseline``."""
    fixed, factor = TIMEOUT_SLACK
    return attempt * (fixed + factor * baseline)


# Imported once before forking: what every test run needs and takes long to import.
_PRELOAD = (
    "pytest",
    "hypothesis",
    "PySide6.QtCore",
    "PySide6.QtGui",
    "PySide6.QtWidgets",
    "httpx",
    "jsonschema",
    "cryptography.fernet",
    "asyncpg",
    "mcp",
    "keyring",
)
_OURS = ("app", "broker", "ui", "tests")


@dataclass(frozen=True)
class Target:
    """A module under mutation and the tests that guard it."""

    path: str
    tests: tuple[str, ...]
    sampled: bool = False

    @property
    def module(self) -> str:
        return self.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@dataclass
class Tally:
    target: Target
    killed: int = 0
    equivalent: int = 0
    survivors: list[Mutant] = field(default_factory=list)
    timed_out: int = 0

    @property
    def score(self) -> float:
        counted = self.killed + len(self.survivors)
        return 100.0 if counted == 0 else 100.0 * self.killed / counted


def load_targets(path: Path = TARGETS) -> list[Target]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Target(path=p, tests=tuple(spec["tests"]), sampled=bool(spec.get("sampled", False)))
        for p, spec in data["module"].items()
    ]


def load_equivalents(path: Path = EQUIVALENT) -> dict[str, dict[str, str]]:
    """Module path -> key -> source line of each mutant reviewed as equivalent. Every entry
    gives its reason, and the line the mutant changes (stripped), so an entry whose key has come
    to name another mutant after the code moved is caught (``stale_equivalents``)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    found: dict[str, dict[str, str]] = {}
    for entry in data.get("equivalent", []):
        for field_name in ("reason", "line"):
            if not str(entry.get(field_name, "")).strip():
                raise SystemExit(f"equivalent.toml: {entry.get('key')!r} has no {field_name}")
        found.setdefault(entry["module"], {})[entry["key"]] = entry["line"]
    return found


def source_lines(source: str) -> dict[str, str]:
    """Each mutant's key -> the (stripped) line of ``source`` it changes."""
    lines = source.splitlines()
    return {m.key: lines[m.line - 1].strip() for m in mutants(source)}


def stale_equivalents(targets: list[Target], equivalents: dict[str, dict[str, str]]) -> list[str]:
    """The entries of ``equivalents`` that no longer describe a mutant of their module as it
    is now: a module not in ``targets``, a key no mutant has, or a key now on another line."""
    paths = {t.path for t in targets}
    stale = []
    for module, listed in sorted(equivalents.items()):
        if module not in paths:
            stale.append(f"{module}: not in targets.toml")
            continue
        current = source_lines((ROOT / module).read_text(encoding="utf-8"))
        for key, line in sorted(listed.items()):
            if key not in current:
                stale.append(f"{module}: {key!r} is no longer a mutant")
            elif current[key] != line:
                stale.append(f"{module}: {key!r} now changes {current[key]!r}, not {line!r}: review it again")
    return stale


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module's mutated source instead of its file."""

    def __init__(self, name: str, filename: str, source: str) -> None:
        self._name, self._filename, self._source = name, filename, source

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self._name:
            return None
        return importlib.util.spec_from_file_location(fullname, self._filename, loader=self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(compile(self._source, self._filename, "exec"), module.__dict__)


def _child(target: Target, source: str, log: int) -> None:
    """In the forked child: import ``source`` for the module, run its tests, exit with pytest's code."""
    os.dup2(log, 1)
    os.dup2(log, 2)
    code = 3
    try:
        sys.meta_path.insert(0, _MutantFinder(target.module, str(ROOT / target.path), source))
        import pytest

        # Plugins imported before the fork cannot have their asserts rewritten; that is all it says.
        quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
        code = int(pytest.main(["-x", "-q", *quiet, *target.tests]))
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _Pool:
    """Up to ``jobs`` forked children at once, each with a deadline."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.running: dict[int, tuple[object, float, int]] = {}

    def start(self, tag: object, target: Target, source: str, timeout: float) -> None:
        log = os.open(
            os.devnull if not os.environ.get("HELM_MUTATE_LOG") else os.environ["HELM_MUTATE_LOG"],
            os.O_WRONLY | os.O_CREAT | os.O_APPEND,
            0o600,
        )
        pid = os.fork()
        if pid == 0:
            _child(target, source, log)
        os.close(log)
        self.running[pid] = (tag, time.monotonic() + timeout, pid)

    def stop(self) -> None:
        """Kills and reaps every child still running (the run was interrupted)."""
        for pid in list(self.running):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            del self.running[pid]

    def wait_one(self) -> tuple[object, int | None]:
        """The next finished child's tag and exit code (None when it ran past its deadline)."""
        while True:
            for pid, (tag, deadline, _) in list(self.running.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    del self.running[pid]
                    return tag, os.waitstatus_to_exitcode(status)
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    del self.running[pid]
                    return tag, None
            select.select([], [], [], 0.02)


def _preload() -> None:
    os.environ.setdefault("CI", "true")  # Hypothesis's derandomized profile: the same run each time.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for name in _PRELOAD:
        __import__(name)
    loaded = [m for m in sys.modules if m.split(".")[0] in _OURS and m != "tests"]
    loaded = [m for m in loaded if not m.startswith("tests.mutation")]
    if loaded:
        raise SystemExit(f"mutation runner: Helm modules imported before forking: {loaded}")


def _baseline(pool: _Pool, targets: list[Target]) -> dict[str, float]:
    """Each module's tests on the unchanged source: they must pass; their time sets the timeout."""
    times: dict[str, float] = {}
    started: dict[str, float] = {}
    pending = list(targets)
    while pending or pool.running:
        while pending and len(pool.running) < pool.jobs:
            t = pending.pop(0)
            started[t.path] = time.monotonic()
            pool.start(t, t, (ROOT / t.path).read_text(encoding="utf-8"), 600)
        tag, code = pool.wait_one()
        assert isinstance(tag, Target)
        if code != 0:
            raise SystemExit(f"mutation runner: the tests of {tag.path} fail unmutated ({code})")
        times[tag.path] = time.monotonic() - started[tag.path]
    return times


def choose(target: Target, found: list[Mutant], sample: int | None, seed: str) -> list[Mutant]:
    """All mutants, or ``sample`` of them picked by ``seed`` (per module, so one file's edits
    do not reshuffle another's sample)."""
    if sample is None or sample >= len(found):
        return found
    return sorted(random.Random(f"{seed}:{target.path}").sample(found, sample), key=lambda m: m.index)


def run(targets: list[Target], sample: int | None, seed: str, jobs: int) -> list[Tally]:
    _preload()
    pool = _Pool(jobs)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _run(pool, targets, sample, seed)
    finally:
        pool.stop()


def _run(pool: _Pool, targets: list[Target], sample: int | None, seed: str) -> list[Tally]:
    equivalents = load_equivalents()
    stale = stale_equivalents(load_targets(), equivalents)
    if stale:
        raise SystemExit("equivalent.toml: stale entries:\n  " + "\n  ".join(stale))
    jobs = pool.jobs
    times = _baseline(pool, targets)
    tallies = {t.path: Tally(t) for t in targets}
    queue: list[tuple[Target, Mutant, str, int]] = []
    lines: dict[str, dict[str, str]] = {}
    for t in targets:
        source = (ROOT / t.path).read_text(encoding="utf-8")
        lines[t.path] = source_lines(source)
        for m in choose(t, mutants(source), sample, seed):
            if m.key in equivalents.get(t.path, {}):
                tallies[t.path].equivalent += 1
            else:
                queue.append((t, m, mutate(source, m.index), 1))
    total = len(queue)
    done = 0
    while queue or pool.running:
        while queue and len(pool.running) < jobs:
            t, m, mutated, attempt = queue.pop(0)
            pool.start((t, m, mutated, attempt), t, mutated, deadline(attempt, times[t.path]))
        tag, code = pool.wait_one()
        t, m, mutated, attempt = tag  # type: ignore[misc]
        if code is None and attempt < TIMEOUT_ATTEMPTS:
            # A loaded machine can make a passing run late: only a second, longer timeout
            # counts as the mutant looping.
            print(f"[mutate] timed out, once more with more time: {t.path}:{m.line} {m.key}", flush=True)
            queue.append((t, m, mutated, attempt + 1))
            continue
        done += 1
        tally = tallies[t.path]
        if code == 0:
            tally.survivors.append(m)
            print(f"[mutate] {done}/{total} SURVIVED {t.path}:{m.line} {m.key}", flush=True)
            print(f"         line = {json.dumps(lines[t.path][m.key], ensure_ascii=False)}", flush=True)
        else:
            tally.killed += 1
            tally.timed_out += code is None
        if done % 25 == 0:
            print(f"[mutate] {done}/{total} run", flush=True)
    return list(tallies.values())


def report(tallies: list[Tally]) -> None:
    width = max(len(t.target.path) for t in tallies)
    print(f"\n{'module'.ljust(width)}  killed  (timed out)  survived  equivalent  score")
    for t in tallies:
        print(
            f"{t.target.path.ljust(width)}  {t.killed:6}  {t.timed_out:11}  {len(t.survivors):8}"
            f"  {t.equivalent:10}  {t.score:5.1f} %"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation.runner", description=__doc__)
    parser.add_argument("--sample", type=int, help="mutants per module (default: all)")
    parser.add_argument("--seed", default="helm", help="picks the sample (default: %(default)s)")
    parser.add_argument("--module", action="append", help="a module path from targets.toml")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    targets = load_targets()
    if args.module:
        unknown = set(args.module) - {t.path for t in targets}
        if unknown:
            parser.error(f"not in targets.toml: {', '.join(sorted(unknown))}")
        targets = [t for t in targets if t.path in args.module]
    elif args.sample is not None:
        targets = [t for t in targets if t.sampled]
    began = time.monotonic()
    tallies = run(targets, args.sample, args.seed, args.jobs)
    report(tallies)
    print(f"[mutate] {time.monotonic() - began:.0f}s, seed {args.seed!r}")
    if args.sample is not None:
        survivors = sum(len(t.survivors) for t in tallies)
        if survivors:
            print(
                f"[mutate] FAILED: {survivors} mutant(s) survived (kill them, or list them in "
                f"{EQUIVALENT.relative_to(ROOT)} with the reason they change nothing)"
            )
            return 1
        return 0
    low = [t.target.path for t in tallies if t.score < THRESHOLD]
    if low:
        print(f"[mutate] below {THRESHOLD:.0f} %: {', '.join(low)}")
        return 1
    return 0


if __name__ == "__main__":
    tempfile.tempdir = None
    sys.exit(main())
