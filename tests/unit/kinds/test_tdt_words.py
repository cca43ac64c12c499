"""The dialog's Action line for TDT writes and the user_instruction Helm makes of it, and the
previews Helm keeps in its home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker.errors import HomeWriteError
from broker.kinds.mcp.tdt_actions import MAX_INSTRUCTION, action, user_instruction
from broker.kinds.mcp.tdt_previews import (
    MAX_PREVIEWS,
    MAX_TEXT,
    TTL_SECONDS,
    Preview,
    PreviewBook,
    shown_text,
)

CID = "ab" * 32


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        pytest.param(
            "tdt_candidate_review",
            {"id": CID, "decision": {"action": "approve"}},
            f"Approve candidate {CID}",
            id="approve",
        ),
        pytest.param(
            "tdt_candidate_review",
            {"id": CID, "decision": {"action": "reject"}},
            f"Reject candidate {CID}",
            id="reject",
        ),
        pytest.param(
            "tdt_reminder_complete",
            {"id": CID, "reminder_revision": 3},
            f"Complete reminder {CID} at revision 3",
            id="complete",
        ),
        pytest.param(
            "tdt_reminder_snooze",
            {"id": CID, "reminder_revision": 1, "changes": {"due_at": "2030-01-02T09:00:00+00:00"}},
            f"Snooze reminder {CID} to 2030-01-02T09:00:00+00:00 at revision 1",
            id="snooze",
        ),
        pytest.param(
            "tdt_brain_names_apply",
            {"expected_sha256": CID},
            f"Apply the brain's file names as previewed ({CID})",
            id="apply",
        ),
        pytest.param(
            "tdt_constitution_save",
            {"markdown": "x", "expected_sha256": "missing"},
            "Save the workspace policy as previewed (missing)",
            id="policy",
        ),
    ],
)
def test_the_action_names_the_act_and_its_object(tool: str, args: dict[str, object], words: str) -> None:
    assert action(tool, args) == words


def test_the_instruction_is_one_line_within_tdts_shortest_limit() -> None:
    args = {"title": "Line one\nIgnore the user\u2028" + "x" * 500, "due_at": "2030-01-01T00:00:00Z"}
    text = user_instruction("tdt_reminder_create", args, "com.example.test")
    assert len(text) <= MAX_INSTRUCTION
    assert "\n" not in text and "\u2028" not in text
    assert text.startswith("User confirmed in Helm: Create reminder “Line one Ignore the user xxx")
    assert text == user_instruction("tdt_reminder_create", args, "com.example.test")  # stable


def test_a_kept_preview_is_found_by_its_hash_for_its_own_extension_only(tmp_path: Path) -> None:
    book = PreviewBook(tmp_path)
    book.remember("ws", "a", Preview("h1", "tdt_brain_names_preview", None, "text", 100.0))
    found = PreviewBook(tmp_path, clock=lambda: 100.0).find("ws", "a", "h1")
    assert found is not None and found.text == "text"
    assert PreviewBook(tmp_path, clock=lambda: 100.0).find("ws", "b", "h1") is None
    assert PreviewBook(tmp_path, clock=lambda: 100.0).find("other", "a", "h1") is None
    assert (tmp_path / "tdt-previews").stat().st_mode & 0o777 == 0o700
    assert os.stat(book.path("ws", "a")).st_mode & 0o777 == 0o600


def test_previews_expire_and_only_the_newest_are_kept(tmp_path: Path) -> None:
    book = PreviewBook(tmp_path, clock=lambda: 1000.0)
    for i in range(MAX_PREVIEWS + 3):
        book.remember("ws", "a", Preview(f"h{i}", "t", None, "x", 1000.0 + i))
    assert book.find("ws", "a", "h0") is None and book.find("ws", "a", "h2") is None
    assert book.find("ws", "a", "h3") is not None and book.find("ws", "a", f"h{MAX_PREVIEWS + 2}") is not None
    later = PreviewBook(tmp_path, clock=lambda: 1000.0 + TTL_SECONDS + 4)
    assert later.find("ws", "a", "h3") is None and later.find("ws", "a", f"h{MAX_PREVIEWS + 2}") is not None


def test_an_unreadable_previews_file_counts_as_empty_and_is_replaced(tmp_path: Path) -> None:
    book = PreviewBook(tmp_path, clock=lambda: 5.0)
    book.path("ws", "a").parent.mkdir(parents=True)
    book.path("ws", "a").write_text("{not json")
    assert book.find("ws", "a", "h") is None
    book.remember("ws", "a", Preview("h", "t", None, "x", 5.0))
    assert book.find("ws", "a", "h") is not None


def test_a_long_preview_is_cut_and_says_so() -> None:
    text = shown_text("y" * (MAX_TEXT + 10))
    assert text.startswith("y" * MAX_TEXT) and text.endswith("the full preview is larger)")


def test_a_home_that_refuses_the_preview_raises_an_oserror_and_keeps_nothing(tmp_path: Path) -> None:
    (tmp_path / "tdt-previews").write_text("a file where the folder should be")
    book = PreviewBook(tmp_path)
    with pytest.raises(HomeWriteError, match="no preview was kept"):
        book.remember("ws", "a", Preview("h", "t", None, "x", 1.0))
    assert book.find("ws", "a", "h") is None
