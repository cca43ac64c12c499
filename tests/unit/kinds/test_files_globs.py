"""files globs: * and ? within a segment, ** at any depth, dotfiles only by a literal dot;
matching without backtracking, paid from a bounded budget, off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from broker import Broker
from broker.errors import CallError
from broker.kinds.files.globs import LIST_MATCH_STEPS, MATCH_STEPS, GlobSet, globs_for
from broker.kinds.files.wildcard import Budget, OneStar, compile_wildcard
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


# -- what matching costs: every step is paid from the call's budget ------------------------------


def spent(globs: list[str], path: str) -> int:
    b = budget()
    GlobSet(globs).matches(path.split("/"), b)
    return b.spent


def test_each_literal_and_double_star_step_costs_one() -> None:
    # a/**/b over a/x/y/b: "a" (1), then for x, y and b the ** (1) and the literal b (1).
    assert spent(["a/**/b"], "a/x/y/b") == 7
    assert spent(["**/**/b"], "x/b") == spent(["**/b"], "x/b")  # "**/**" is one ** and costs as one


def test_a_whole_path_glob_costs_its_segments_and_a_path_of_no_glob_length_costs_one() -> None:
    star = compile_wildcard("*.md")
    assert isinstance(star, OneStar)
    assert spent(["a/b.md"], "a/b.md") == 2
    assert spent(["a/b.md", "c/*.md"], "c/d.md") == 2 + 1 + star.cost
    assert spent(["a/b.md"], "a/b/c.md") == 1


def test_a_whole_path_glob_past_the_budget_is_too_large() -> None:
    with pytest.raises(CallError) as err:
        GlobSet(["a/b/c.md"]).matches(["a", "b", "c.md"], Budget(2))
    assert err.value.code.value == "too_large"
    exact = Budget(3)
    assert GlobSet(["a/b/c.md"]).matches(["a", "b", "c.md"], exact) and exact.left == 0


def by_states(globs: GlobSet, name: str) -> bool:
    """The state machine's answer for a path of one name, as if no glob were one expression."""
    return globs.accepts(globs.step(globs.start, name, budget()))


@pytest.mark.parametrize(
    "globs",
    [
        pytest.param(["*.md"], id="one-suffix"),
        pytest.param(["*.md", "*.txt"], id="suffixes"),
        pytest.param(["*"], id="star"),
        pytest.param(["*?.md"], id="star-and-question"),
        pytest.param(["*.md", "a?"], id="suffix-and-question"),
        pytest.param(["a.md", "b*"], id="literal-and-prefix"),
        pytest.param(["a*.md"], id="prefix-and-suffix"),
        pytest.param(["a?", "*.txt/b"], id="question-and-two-segments"),
        pytest.param(["a?.md", "c/*.md"], id="one-and-two-segments"),
    ],
)
def test_a_name_against_the_globs_of_one_segment_is_matched_as_the_states_match_it(globs: list[str]) -> None:
    compiled = GlobSet(globs)
    names = ["a.md", "ab.md", ".a.md", ".md", "amd", "x.txt", "ab", "a\nb.md", "b", "", "c"]
    assert [compiled.matches([n], budget()) for n in names] == [by_states(compiled, n) for n in names]
    assert any(compiled.matches([n], budget()) for n in names)


def test_a_name_costs_the_globs_of_one_segment_and_past_the_budget_is_too_large() -> None:
    star, question = compile_wildcard("*.md"), compile_wildcard("a?")
    assert isinstance(star, OneStar) and isinstance(question, OneStar)
    assert spent(["*.md", "c/*.md"], "a.md") == star.cost
    assert spent(["*.md", "a?", "c/*.md"], ".md") == star.cost + question.cost
    assert spent(["c/*.md"], "a.md") == 1  # no glob of one segment
    empty = budget()
    assert GlobSet(["*.md"]).matches([], empty) is False and empty.spent == 1
    for globs in (["*.md"], ["a?.md"]):
        with pytest.raises(CallError) as err:
            GlobSet(globs).matches(["ab.md"], Budget(1))
        assert err.value.code.value == "too_large"


def test_every_glob_of_a_length_is_tried_not_only_the_first() -> None:
    globs = GlobSet(["a.md", "b.md", "c/*.md", "d/*.txt"])
    assert [globs.matches([p], budget()) for p in ("a.md", "b.md", "x.md")] == [True, True, False]
    assert globs.matches(["d", "e.txt"], budget()) and not globs.matches(["c", "e.txt"], budget())


def test_a_second_double_star_further_on_is_kept() -> None:
    assert GlobSet(["**/x/**/y"]).matches(["x", "z", "y"], budget())
    assert GlobSet(["**/x/**/y"]).matches(["q", "x", "z", "w", "y"], budget())


def test_one_folders_files_are_filtered_at_the_cost_file_test_would_charge() -> None:
    globs = GlobSet(["*.md", "b*/*.txt"])
    star = compile_wildcard("*.md")
    assert isinstance(star, OneStar)
    found = globs.file_filter(globs.start)
    assert found is not None
    b = budget()
    assert list(found(["a.md", "b.txt", "c.md", "bq"], b)) == ["a.md", "c.md"]
    assert b.spent == 4 * star.cost
    literal = GlobSet(["a/x.md"])
    inner = literal.step(literal.start, "a", budget())
    only = literal.file_filter(inner)
    assert only is not None and list(only(["x.md", "y.md"], budget())) == ["x.md"]
    assert literal.file_filter(literal.start) is None  # no file at the root can match a/x.md


def test_a_file_at_a_folder_level_does_not_match_that_folders_segment() -> None:
    globs = GlobSet(["b*/x", "**/q/z"])
    assert not globs.file_matches(globs.start, "bx", budget())
    assert globs.file_test(globs.start) is None


def test_a_matched_file_opens_no_folder_and_other_globs_go_on() -> None:
    globs = GlobSet(["a", "a/b", "a/c", "a/d", "**/a/e"])
    inner = globs.step(globs.start, "a", budget())
    assert globs.accepts(inner)
    assert globs.literal_names(inner) is None  # the ** still wants anything
    plain = GlobSet(["a", "a/b", "a/c", "a/d"])
    after = plain.step(plain.start, "a", budget())
    assert plain.literal_names(after) == ["b", "c", "d"]
    one = GlobSet(["a"])
    assert not one.live(one.step(one.start, "a", budget()))  # a matched file is no folder to enter
    deep = GlobSet(["**/a", "**/a/b", "**/a/c", "**/a/d"])
    for last in ("b", "c", "d"):
        assert deep.matches(["x", "a", last], budget())


def test_the_compiled_globs_are_kept_for_the_latest_512_declarations() -> None:
    conn = {"id": "x", "kind": "files", "root": "workspace", "operations": ["list"]}
    first = globs_for({**conn, "paths": ["first/*"]})
    for i in range(511):
        globs_for({**conn, "paths": [f"other-{i}/*"]})
    assert globs_for({**conn, "paths": ["first/*"]}) is first
    globs_for({**conn, "paths": ["other-511/*"]})
    assert globs_for({**conn, "paths": ["first/*"]}) is not first


def test_the_budgets_are_a_million_steps_a_call_and_ten_million_a_list() -> None:
    assert (MATCH_STEPS, LIST_MATCH_STEPS) == (1_000_000, 10_000_000)
