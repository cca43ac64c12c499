"""Properties of the catalogue's pure decisions: what an update adds, and version order."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.catalogue import capabilities
from broker.catalogue.index import version_key
from broker.manifest import Manifest
from tests.unit.catalogue.conftest import FILES, board

GLOBS = st.lists(
    st.sampled_from(["*.md", "notes/*.md", "a/**", "b/*.txt", "c/d/*.json"]), min_size=1, unique=True
)
OPS = st.lists(st.sampled_from(["list", "read"]), min_size=1, unique=True)


def files(paths: list[str], ops: list[str]) -> Manifest:
    raw = board("1.0.0", connections=[dict(FILES, paths=paths, operations=ops)])
    return Manifest(raw, Path("/nonexistent"))


@settings(max_examples=200, deadline=None)
@given(GLOBS, GLOBS, OPS, OPS)
def test_an_update_grows_exactly_when_it_adds_a_glob_or_an_operation(
    old: list[str], new: list[str], old_ops: list[str], new_ops: list[str]
) -> None:
    diff = capabilities.diff(files(old, old_ops), files(new, new_ops))
    added = [g for g in new if g not in old] + [o for o in new_ops if o not in old_ops]
    assert diff.grows == bool(added)
    lines = diff.lines()
    for glob in new:
        assert (f"[notes] new glob {glob}" in lines) == (glob not in old)
    for glob in old:
        assert (f"[notes] glob {glob} removed" in lines) == (glob not in new)
    if not added:
        assert lines[0] == "no new capabilities"


@settings(max_examples=200, deadline=None)
@given(GLOBS, OPS)
def test_the_same_capabilities_are_no_change_at_all(paths: list[str], ops: list[str]) -> None:
    assert capabilities.diff(files(paths, ops), files(paths, ops)).changes == ()


VERSIONS = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))


@given(VERSIONS, VERSIONS)
def test_versions_order_as_numbers_and_a_pre_release_comes_before_its_release(
    a: tuple[int, int, int], b: tuple[int, int, int]
) -> None:
    text_a, text_b = ".".join(map(str, a)), ".".join(map(str, b))
    assert (version_key(text_a) < version_key(text_b)) == (a < b)
    assert version_key(text_a + "-beta.1") < version_key(text_a)
