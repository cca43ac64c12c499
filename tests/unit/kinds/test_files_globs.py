"""files globs: * and ? within a segment, ** at any depth, dotfiles only by a literal dot."""

from __future__ import annotations

import pytest

from broker.kinds.files.globs import GlobSet, globs_for


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        pytest.param("*.md", "a.md", True, id="star"),
        pytest.param("*.md", "d/a.md", False, id="star-stays-in-one-segment"),
        pytest.param("?.md", "a.md", True, id="question-one-char"),
        pytest.param("?.md", "ab.md", False, id="question-not-two"),
        pytest.param("a/**/x.md", "a/x.md", True, id="double-star-zero-folders"),
        pytest.param("a/**/x.md", "a/b/c/x.md", True, id="double-star-many-folders"),
        pytest.param("a/**", "a/b/c/x.md", True, id="trailing-double-star-any-depth"),
        pytest.param("a/**", "a", False, id="trailing-double-star-not-the-folder-itself"),
        pytest.param("**", "x", True, id="all"),
        pytest.param("*.md", ".a.md", False, id="star-skips-dotfiles"),
        pytest.param("?a", ".a", False, id="question-skips-leading-dot"),
        pytest.param("**/*.md", ".git/a.md", False, id="double-star-skips-dot-folders"),
        pytest.param("**", ".env", False, id="all-skips-dotfiles"),
        pytest.param(".*", ".env", True, id="literal-dot-reaches-dotfiles"),
        pytest.param(".tdt-project/**", ".tdt-project/a/b.json", True, id="literal-dot-folder"),
        pytest.param("**/.env", "a/b/.env", True, id="literal-dot-after-double-star"),
        pytest.param("a*b", "a.x.b", True, id="inner-dot-is-fine"),
        pytest.param("a.md", "a.md", True, id="literal"),
        pytest.param("a.md", "A.md", False, id="case-sensitive"),
        pytest.param("a+(b).md", "a+(b).md", True, id="regex-characters-are-literal"),
        pytest.param("x*", "x\ny", True, id="star-matches-newline-in-name"),
    ],
)
def test_glob_matching(glob: str, path: str, matches: bool) -> None:
    globs = GlobSet([glob])
    assert globs.matches(path.split("/")) is matches


def test_file_matches_agrees_with_stepping() -> None:
    globs = GlobSet(["a/**/*.md", "b/?", "**/x", "c/**"])
    states = globs.start
    for folder in ("a", "b", "c", "q"):
        inner = globs.step(states, folder)
        for name in ("x", "y.md", ".md", "z"):
            assert globs.file_matches(inner, name) is globs.accepts(globs.step(inner, name))


def test_literal_names_are_offered_only_when_every_glob_is_literal_there() -> None:
    globs = GlobSet(["a/b/*.md", "c/d"])
    assert globs.literal_names(globs.start) == ["a", "c"]
    assert globs.literal_names(globs.step(globs.start, "a")) == ["b"]
    mixed = GlobSet(["a/*", "*.md"])
    assert mixed.literal_names(mixed.start) is None


def test_globs_are_compiled_once_per_declaration() -> None:
    conn = {"id": "x", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
    assert globs_for(conn) is globs_for(dict(conn))
    assert globs_for({**conn, "paths": ["*.txt"]}) is not globs_for(conn)
