"""What the transcript says for each event, before any widget: entries, places, long lines."""

from __future__ import annotations

import pytest

from broker.agents import AgentFailed, FileAccess, PermissionDecided, ToolCallEvent
from ui.agents.story import Entry, Story, Style, break_long


def test_a_tool_call_update_keeps_what_it_did_not_change_and_replaces_its_place() -> None:
    story = Story()
    (first,) = story.entries(ToolCallEvent("t1", "Run tests", "execute", "pending", "make test"))
    (later,) = story.entries(ToolCallEvent("t1", "", "", "failed", update=True))
    assert first.place == later.place == "tool:t1"
    assert later == Entry(
        "Tool call: Run tests  [execute · failed]\n    make test", Style.FAILED, place="tool:t1"
    )


def test_each_turn_has_its_own_plan_place() -> None:
    story = Story()
    story.prompt("one")
    story.prompt("two")
    assert story.prompt("three") == [Entry("\nYou: three", Style.USER)]
    assert story.turn == 3


@pytest.mark.parametrize(
    ("event", "text", "style"),
    [
        pytest.param(
            PermissionDecided("d", "Edit a", "edit", "deny", "refused", "reject_once", "no --write"),
            "Permission: Edit a [edit] — refused by Helm's policy (no --write); answered “reject once”",
            Style.REFUSED, id="policy-refusal"),
        pytest.param(
            PermissionDecided("d", "Run", "execute", "ask", "confirmed", "allow_once", "user", sticky=True),
            "Permission: Run [execute] — allowed by you — always, for this session; answered “allow once”",
            Style.ALLOWED, id="sticky-allow"),
        pytest.param(FileAccess("read", "/w/a", "refused", "refused", "a symlink"),
                     "Helm refused to read /w/a: a symlink", Style.REFUSED, id="read-refused"),
        pytest.param(FileAccess("write", "/w/a", "expired", "declined"),
                     "Not written: /w/a — refused (no answer in time)", Style.REFUSED, id="write-expired"),
    ],
)  # fmt: skip
def test_verdicts_and_file_accesses_say_who_decided(event: object, text: str, style: Style) -> None:
    assert Story().entries(event) == [Entry(text, style)]  # type: ignore[arg-type]


def test_a_failure_shows_its_exit_code_and_stderr_apart() -> None:
    failed, tail = Story().entries(AgentFailed("it crashed", 3, "Traceback…\n"))
    assert failed == Entry("The agent failed: it crashed (exit code 3)", Style.FAILED)
    assert tail.text.endswith("Traceback…") and tail.style is Style.DETAIL


@pytest.mark.parametrize(
    ("text", "column", "broken"),
    [
        pytest.param("abcdefgh", 0, "abcd\nefgh", id="one-long-line"),
        pytest.param("abcdef", 3, "a\nbcde\nf", id="continues-a-line"),
        pytest.param("ab\ncdefg", 3, "a\nb\ncdef\ng", id="each-line-counted-apart"),
        pytest.param("abc", 0, "abc", id="short"),
    ],
)
def test_long_lines_are_broken_and_nothing_is_lost(text: str, column: int, broken: str) -> None:
    assert break_long(text, column, 4) == broken
    assert broken.replace("\n", "") == text.replace("\n", "")
