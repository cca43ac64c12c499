"""Property-based tests of the files kind's two pure decisions, and of the guard on a real tree:

* glob matching agrees with a plain recursive reference matcher, within a bounded number of steps;
* the "is inside" check accepts exactly the normalized paths below a root;
* no path whatever, read or written through the guard, reaches a file outside the root, a
  symlink, a hard link, a FIFO or Helm's home.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.errors import CallError
from broker.fs.guard import FileGuard, GuardRoot, locate
from broker.kinds.files.globs import MATCH_STEPS, GlobSet
from broker.kinds.files.wildcard import Budget
from tests.unit.kinds.files_setup import sha

# ---- the reference: the documented rules, written as plainly as possible (exponential) ----


@functools.cache
def ref_segment(pattern: str, name: str) -> bool:
    """``*`` any run, ``?`` one character, anything else itself."""
    if not pattern:
        return not name
    if pattern[0] == "*":
        return ref_segment(pattern[1:], name) or (bool(name) and ref_segment(pattern, name[1:]))
    if not name:
        return False
    return pattern[0] in ("?", name[0]) and ref_segment(pattern[1:], name[1:])


def ref_name(pattern: str, name: str) -> bool:
    """A wildcard never matches a leading dot."""
    if pattern[0] in "*?" and name.startswith("."):
        return False
    return ref_segment(pattern, name)


@functools.cache
def ref_path(segments: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """``**`` is zero or more folders, none of them a dot-folder."""
    if not segments:
        return not path
    if segments[0] == "**":
        return ref_path(segments[1:], path) or (
            bool(path) and not path[0].startswith(".") and ref_path(segments, path[1:])
        )
    return bool(path) and ref_name(segments[0], path[0]) and ref_path(segments[1:], path[1:])


def ref_glob(glob: str, path: tuple[str, ...]) -> bool:
    segments = glob.split("/")
    if segments[-1] == "**":
        segments.append("*")  # a trailing ** means every file below
    return ref_path(tuple(segments), path)


# ---- strategies: small alphabets, so that matches and near misses are both common ----

pattern_segments = st.one_of(
    st.just("**"), st.text("ab.*?", min_size=1, max_size=6).filter(lambda s: "**" not in s)
)
names = st.text("ab.", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
globs = st.lists(pattern_segments, min_size=1, max_size=4).map("/".join)
paths = st.lists(names, min_size=1, max_size=5).map(tuple)


@given(st.lists(globs, min_size=1, max_size=3), paths)
def test_glob_matching_agrees_with_the_reference(patterns: list[str], path: tuple[str, ...]) -> None:
    expected = any(ref_glob(g, path) for g in patterns)
    assert GlobSet(patterns).matches(path, Budget(MATCH_STEPS)) is expected


@given(globs, st.lists(names, min_size=0, max_size=3).map(tuple), names)
def test_the_walks_file_check_agrees_with_full_matching(
    glob: str, folders: tuple[str, ...], name: str
) -> None:
    compiled, budget = GlobSet([glob]), Budget(MATCH_STEPS)
    states = compiled.start
    for folder in folders:
        states = compiled.step(states, folder, budget)
    assert compiled.file_matches(states, name, budget) is ref_glob(glob, (*folders, name))


hostile_segments = st.text("ab*?", min_size=1, max_size=40).filter(lambda s: "**" not in s)


@settings(max_examples=60)
@given(hostile_segments, st.text("ab", min_size=0, max_size=255))
def test_one_segment_takes_steps_linear_in_the_name(pattern: str, name: str) -> None:
    """Steps grow as (name + pattern) times (longest ?-run + 2), never with the ways stars split."""
    budget = Budget(MATCH_STEPS)
    GlobSet([pattern]).matches((name or "x",), budget)
    runs = max(len(piece.split("?")) for piece in pattern.split("*"))
    assert budget.spent <= (len(name) + len(pattern) + 2) * (runs + 2)


one_star_segments = (
    st.tuples(st.text("ab?", max_size=12), st.booleans(), st.text("ab?", max_size=12))
    .map(lambda t: t[0] + ("*" if t[1] else "") + t[2])
    .filter(bool)
)


@settings(max_examples=80)
@given(
    st.lists(one_star_segments, min_size=1, max_size=3),
    st.lists(st.text("ab", min_size=1, max_size=255), min_size=1, max_size=3),
)
def test_a_glob_of_one_star_a_segment_is_one_regular_expression_that_agrees_with_the_reference(
    segments: list[str], path: list[str]
) -> None:
    """Its only repeats are its stars, one a segment, so backtracking cannot multiply (see
    globs.py); what it matches is exactly what the reference matches, on long names too."""
    compiled = GlobSet(["/".join(segments)])
    assert compiled.regexes is not None
    regex, _cost = compiled.regexes[len(segments)]
    assert regex.pattern.count("*") == sum(seg.count("*") for seg in segments)
    expected = ref_glob("/".join(segments), tuple(path))
    assert compiled.matches(path, Budget(MATCH_STEPS)) is expected


one_segment_globs = st.one_of(one_star_segments, st.text("ab.", max_size=6).map(lambda t: "*" + t))


@settings(max_examples=100)
@given(
    st.lists(one_segment_globs, min_size=1, max_size=3),
    st.lists(st.text("ab*", min_size=1, max_size=6).map(lambda t: t + "/b"), max_size=1),
    st.text("ab.", max_size=12),
)
def test_a_name_against_globs_of_one_segment_is_matched_as_the_reference_and_the_states_match_it(
    patterns: list[str], deeper: list[str], name: str
) -> None:
    """A path of one name takes a shorter way (no join, plain string tests for ``*.md``): it
    agrees with the reference and with the state machine, and costs what the whole path's
    expression for one segment costs."""
    compiled, budget = GlobSet(patterns + deeper), Budget(MATCH_STEPS)
    found = compiled.matches((name,), budget)
    assert found is any(ref_glob(g, (name,)) for g in patterns + deeper)
    assert found is compiled.accepts(compiled.step(compiled.start, name, Budget(MATCH_STEPS)))
    if compiled.regexes is not None:
        assert budget.spent == compiled.regexes[1][1]


# ---- the one "is inside" check ----

ROOTS = [Path("/w"), Path("/w/p"), Path("/x")]
path_parts = st.lists(st.sampled_from(["w", "p", "x", "a", "wp", "..", ".", ""]), min_size=0, max_size=5)


@given(st.booleans(), path_parts)
def test_locate_accepts_exactly_the_normalized_paths_below_a_root(absolute: bool, parts: list[str]) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    absolute = path.startswith("/")  # an empty first part makes it absolute too
    full = path if absolute else f"/w/{path}"
    below = [r for r in ROOTS if full.startswith(f"{r}/")]
    inside = (
        bool(below)
        and posixpath.normpath(full) == full
        and not any(seg in (".", "..") for seg in full.split("/"))
    )
    try:
        where = locate(ROOTS, path)
    except CallError as err:
        refusal = err.code.value
    else:
        refusal = None
    assert refusal == (None if inside else "refused"), path
    if refusal is not None:
        return
    root = ROOTS[where.root]
    # An absolute path belongs to the longest root it is under; a relative one to the first.
    assert root == (max(below, key=lambda r: len(str(r))) if absolute else ROOTS[0])
    assert f"{root}/{where.path.text}" == full


# ---- and on a real tree: nothing outside, linked, special or in Helm's home is ever reached ----


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[FileGuard, Path]:
    base = tmp_path_factory.mktemp("guard-tree")
    root, outside, home = base / "root", base / "outside", base / "root" / ".helm"
    for folder in (root / "a" / "b", outside, home):
        folder.mkdir(parents=True)
    for path in (root / "f.txt", root / "a" / "f.txt", root / "a" / "b" / "f.txt"):
        path.write_text("inside")
    for path in (outside / "f.txt", outside / "g.txt", home / "f.txt"):
        path.write_text("SECRET")
    os.symlink(outside, root / "a" / "out")
    os.symlink(outside / "f.txt", root / "a" / "l.txt")
    os.symlink("f.txt", root / "a" / "self.txt")
    os.link(outside / "g.txt", root / "a" / "g.txt")
    os.mkfifo(root / "a" / "fifo")
    return FileGuard([GuardRoot(root)], home), base


segments = st.sampled_from(
    ["a", "b", "f.txt", "g.txt", "l.txt", "self.txt", "out", "fifo", ".helm", "..", "."]
)


def outcome(attempt: Callable[[], object]) -> object:
    """What ``attempt`` returned, or the code of the CallError it raised."""
    try:
        return attempt()
    except CallError as err:
        return err.code.value


@settings(max_examples=150)
@given(st.booleans(), st.lists(segments, min_size=1, max_size=4))
def test_no_path_reads_or_writes_anything_but_a_file_inside(
    tree: tuple[FileGuard, Path], absolute: bool, parts: list[str]
) -> None:
    guard, base = tree
    path = (f"{base}/root/" if absolute else "") + "/".join(parts)
    read = outcome(lambda: guard.read_text(path).text)
    assert read in ("inside", "refused")
    written = outcome(lambda: guard.write_text(path, "inside", sha("SECRET")))
    assert written in ("refused", "conflict")
    for secret in ("outside/f.txt", "outside/g.txt", "root/.helm/f.txt"):
        assert (base / secret).read_text() == "SECRET"
