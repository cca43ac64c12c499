"""What ``helm --self-test`` says about a failed read: the error's code and its whole message."""

from __future__ import annotations

from app.selftest import failure


def test_a_failed_read_is_reported_by_its_code_and_whole_message_within_a_bound() -> None:
    why = "the TDT server could not be started: it exited with code 1 before answering " + "x" * 300
    answer = {"api_version": 1, "ok": False, "data": None, "error": {"code": "unavailable", "message": why}}
    assert failure(answer) == f"unavailable: {why}"
    long = failure({"ok": False, "error": {"code": "timeout", "message": "y" * 5000}})
    assert long == "timeout: " + "y" * 1000 + "…"
    assert failure({"ok": False}) == '{"ok": false}'
