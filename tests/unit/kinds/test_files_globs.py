"""files globs: * and ? within a segment, ** at any depth, dotfiles only by a literal dot;
matching without backtracking, paid from a bounded budget, off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from broker import Broker
from broker.errors import CallError
from broker.kinds.files.globs import MATCH_STEPS, GlobSet, globs_for
from broker.kinds.files.wildcard import Budget
from tests.unit.kinds.files_setup import broker, code, files_conn, make_setup

__all__ = ["broker"]


def budget() -> Budget:
    return Budget(MATCH_STEPS)


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
    assert globs.matches(path.split("/"), budget()) is matches


def test_file_matches_agrees_with_stepping() -> None:
    globs = GlobSet(["a/**/*.md", "b/?", "**/x", "c/**"])
    states, b = globs.start, budget()
    for folder in ("a", "b", "c", "q"):
        inner = globs.step(states, folder, b)
        for name in ("x", "y.md", ".md", "z"):
            assert globs.file_matches(inner, name, b) is globs.accepts(globs.step(inner, name, b))


def test_literal_names_are_offered_only_when_every_glob_is_literal_there() -> None:
    globs = GlobSet(["a/b/*.md", "c/d"])
    assert globs.literal_names(globs.start) == ["a", "c"]
    assert globs.literal_names(globs.step(globs.start, "a", budget())) == ["b"]
    mixed = GlobSet(["a/*", "*.md"])
    assert mixed.literal_names(mixed.start) is None


def test_globs_are_compiled_once_per_declaration() -> None:
    conn = {"id": "x", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
    assert globs_for(conn) is globs_for(dict(conn))
    assert globs_for({**conn, "paths": ["*.txt"]}) is not globs_for(conn)


PATHOLOGICAL = [
    "notes/*a*a*a*a*b",
    "notes/*a*a*a*a*a*b",
    "notes/" + "*a" * 40 + "*b",
    "notes/*a?a?a?a?a?a?a?a?b*",
    "notes/" + "*?" * 60 + "b",
]


@pytest.mark.parametrize("glob", PATHOLOGICAL)
def test_a_many_star_glob_against_a_long_name_takes_linear_work(glob: str) -> None:
    # A backtracking regular expression takes minutes on these; the matcher's steps grow with
    # the name (times the pieces of one ?-run), not with the ways the stars could split it.
    b = budget()
    assert GlobSet([glob]).matches(["notes", "a" * 255], b) is False
    assert b.spent <= (255 + len(glob)) * (glob.count("?") + 2)


async def test_a_read_against_a_many_star_glob_answers_without_freezing(
    broker: Broker, tmp_path: Path
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["notes/*a*a*a*a*a*b"])])
    result = await s.call("read", {"path": "notes/" + "a" * 255})
    assert code(result) == "refused"
    assert "does not match" in result["error"]["message"]


def deep_globs() -> list[str]:
    """16 globs of alternating ** and "a": over a/a/a/… each keeps about 200 states alive."""
    return ["/".join(["**", "a"] * 100) + f"/x{i:02}" for i in range(16)]


def test_matching_past_the_budget_stops_with_too_large() -> None:
    small = Budget(10_000)
    with pytest.raises(CallError) as err:
        GlobSet(deep_globs()).matches(["a"] * 1000, small)
    assert err.value.code.value == "too_large"
    assert "10,000 steps" in err.value.message
    assert small.left < 0


async def test_a_call_whose_matching_would_exceed_the_budget_is_too_large(
    broker: Broker, tmp_path: Path
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(deep_globs(), ops=("read",))])
    result = await s.call("read", {"path": "/".join(["a"] * 2000)})
    assert code(result) == "too_large"
    assert f"{MATCH_STEPS:,} steps" in result["error"]["message"]


async def test_glob_matching_runs_off_the_event_loop(
    broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["notes/*.md"])])
    (s.root / "notes").mkdir()
    (s.root / "notes" / "a.md").write_text("x")
    threads: list[threading.Thread] = []
    real = GlobSet.matches

    def spy(self: GlobSet, *args: object, **kwargs: object) -> bool:
        threads.append(threading.current_thread())
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GlobSet, "matches", spy)
    assert (await s.call("read", {"path": "notes/a.md"}))["ok"]
    assert threads
    assert threading.main_thread() not in threads
