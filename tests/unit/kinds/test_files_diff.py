"""The write dialog's line diff: difflib's own output, or one coarse hunk past the budget."""

from __future__ import annotations

import difflib

import pytest

from broker.fs.diff import line_diff


def reference(old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/x", "b/x")
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("a\nb\nc\n", "a\nB\nc\n", id="one-line"),
        pytest.param("x", "y", id="no-final-newline"),
        pytest.param("", "a\n", id="from-empty"),
        pytest.param("a\n", "", id="to-empty"),
        pytest.param(
            "".join(f"{i}\n" for i in range(20)),
            "0\n1\nX\n3\n" + "".join(f"{i}\n" for i in range(4, 19)) + "Y\n",
            id="two-hunks",
        ),
    ],
)
def test_the_diff_is_the_unified_diff_of_the_two_texts(old: str, new: str) -> None:
    assert line_diff("x", old, new) == reference(old, new)


def test_only_newlines_end_lines_so_separators_stay_inside_their_line() -> None:
    old = "a\u2028b\x0cc\rd\n"
    new = "a\u2028B\x0cc\rd\n"
    lines = line_diff("x", old, new).split("\n")
    assert lines[2:5] == ["@@ -1 +1 @@", "-" + old[:-1], "+" + new[:-1]]


def test_identical_texts_have_an_empty_diff() -> None:
    assert line_diff("x", "same\n", "same\n") == ""


def test_past_the_budget_the_diff_is_one_hunk_between_the_common_ends() -> None:
    old = "".join(f"{i}\n" for i in range(10))
    new = old.replace("3\n", "three\n").replace("6\n", "six\n")
    diff = line_diff("x", old, new, budget=-1.0)
    assert diff == (
        "--- a/x\n+++ b/x\n@@ -1,10 +1,10 @@\n 0\n 1\n 2\n-3\n-4\n-5\n-6\n+three\n+4\n+5\n+six\n 7\n 8\n 9\n"
    )
