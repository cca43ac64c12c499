"""files list over a 100,000-file tree against a plain os.walk + fnmatch over the same tree,
and Helm's glob matcher against fnmatch on one name.

Two globs for list: one that must visit every folder (``**/*.md``) and one that reaches a single
subtree (``t007/**``), where Helm does not enter the folders no glob can reach.

For one name: an ordinary glob, and many-star globs against a 255-character name, where a
backtracking regular expression takes seconds to minutes (fnmatch uses atomic groups and does
not backtrack either; the regex row shows what Helm's matcher avoids, on a 3-star glob). A glob
of one star a segment is one regular expression in Helm too: its 255-character row shows that a
single star cannot blow up.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext
from broker.kinds.files.globs import MATCH_STEPS, GlobSet
from broker.kinds.files.wildcard import Budget
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension

TOPS, SUBS, FILES = 100, 10, 100  # 100,000 files


def _make_tree(root: Path) -> None:
    for t in range(TOPS):
        for s in range(SUBS):
            folder = root / f"t{t:03}" / f"s{s:02}"
            folder.mkdir(parents=True)
            for f in range(FILES):
                ext = "md" if (f + s) % 200 == 0 else "txt"
                os.close(os.open(folder / f"f{f:03}.{ext}", os.O_CREAT | os.O_WRONLY, 0o644))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files-bench") / "root"
    _make_tree(root)
    return root


def walk_and_match(root: Path, pattern: str) -> list[dict[str, Any]]:
    """The plain way: os.walk the whole tree, fnmatch each relative path, stat, sort, cut."""
    found = []
    for folder, _dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        for name in files:
            path = name if rel == "." else f"{rel}/{name}"
            if fnmatch.fnmatchcase(path, pattern):
                found.append({"path": path, "size": os.stat(os.path.join(folder, name)).st_size})
    found.sort(key=lambda f: f["path"])
    return found[:1000]


@pytest.fixture
async def helm(tmp_path: Path, tree: Path) -> Iterator[tuple[Broker, CallContext]]:
    async with new_broker(tmp_path / "home") as broker:
        conns = [
            {"id": "md", "kind": "files", "root": "workspace", "paths": ["**/*.md"], "operations": ["list"]},
            {"id": "one", "kind": "files", "root": "workspace", "paths": ["t007/**"], "operations": ["list"]},
        ]
        (tmp_path / "root").symlink_to(tree)  # setup_extension's workspace root is tmp/root
        ctx = await setup_extension(broker, tmp_path, manifest_dict(conns))
        yield broker, ctx


async def test_files_list_over_100k_files(bench: Bench, helm: tuple[Broker, CallContext], tree: Path):
    broker, ctx = helm
    instances = itertools.count()

    async def list_(conn: str) -> dict[str, Any]:
        # A fresh instance per call: the bench measures the walk, not the rate limit.
        return await broker.call(
            CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}"), conn, "list", {}
        )

    for conn, pattern, fn_pattern in (("md", "**/*.md", "*.md"), ("one", "t007/**", "t007/*")):
        first = await list_(conn)
        assert first["ok"], first
        assert first["data"]["files"] == walk_and_match(tree, fn_pattern)
        # Taken in turns, so that load from other work on the machine falls on both alike.
        helm_runs, raw_runs = [], []
        for _ in range(7):
            helm_runs.append(await bench.atime(lambda c=conn: list_(c), repeat=1, warmup=0))
            raw_runs.append(bench.time(lambda p=fn_pattern: walk_and_match(tree, p), repeat=1, warmup=0))
        helm_s, raw_s = statistics.median(helm_runs), statistics.median(raw_runs)
        bench.record(f"files list {pattern} over 100,000 files", helm_s, raw_s, note="vs os.walk + fnmatch")


def test_files_glob_match_of_one_name(bench: Bench) -> None:
    long = "a" * 255
    for glob, name in (
        ("*.md", "notes-2024-01-01.md"),
        ("*a*a*a*a*a*b", long),
        ("*a?a?a?a?b*", long),
        ("*a?a?a?a?a?a?a?b", long),  # one star: the regular expression's worst case
    ):
        compiled = GlobSet([glob])
        assert compiled.matches([name], Budget(MATCH_STEPS)) is fnmatch.fnmatchcase(name, glob)
        helm_s = bench.time(lambda g=compiled, n=name: g.matches([n], Budget(MATCH_STEPS)), repeat=200)
        raw_s = bench.time(lambda g=glob, n=name: fnmatch.fnmatchcase(n, g), repeat=200)
        bench.record(f"files glob {glob} vs a {len(name)}-char name", helm_s, raw_s, note="vs fnmatch")
    backtracking = re.compile("[^/]*a[^/]*a[^/]*a[^/]*b", re.DOTALL)  # how globs were matched before
    helm_s = bench.time(lambda: GlobSet(["*a*a*a*b"]).matches([long], Budget(MATCH_STEPS)), repeat=20)
    raw_s = bench.time(lambda: backtracking.fullmatch(long), repeat=3, warmup=0)
    bench.record("files glob *a*a*a*b vs a 255-char name", helm_s, raw_s, note="vs a backtracking regex")
