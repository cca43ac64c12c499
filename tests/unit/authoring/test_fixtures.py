"""Fixture files: plain JSON an author edits, recorded call by call, read back exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from broker.authoring.fixtures import MAX_PER_OPERATION, FixtureBook
from broker.errors import FixtureError

OK = {"ok": True, "status": 200, "data": [1, 2], "error": None}
HTTP_404 = {
    "ok": False,
    "status": 404,
    "data": {"detail": "gone"},
    "error": {"code": "http_error", "message": "404"},
}


def write(book: FixtureBook, connection: str, document: Any) -> Path:
    book.folder.mkdir(parents=True, exist_ok=True)
    file = book.folder / f"{connection}.json"
    file.write_text(json.dumps(document), encoding="utf-8")
    return file


def test_a_recorded_call_is_answered_for_the_same_arguments_in_any_key_order(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path / "fx")
    assert book.record("gh", "issues", {"owner": "me", "limit": 2}, OK)
    found = book.find("gh", "issues", {"limit": 2, "owner": "me"})
    assert found is not None and found.envelope == OK
    assert book.find("gh", "issues", {"owner": "you", "limit": 2}) is None
    saved = json.loads((tmp_path / "fx" / "gh.json").read_text("utf-8"))
    assert saved == {
        "version": 1,
        "connection": "gh",
        "calls": [{"operation": "issues", "args": {"owner": "me", "limit": 2}, "envelope": OK}],
    }


def test_recording_the_same_call_again_replaces_its_answer_and_other_calls_stay(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path)
    book.record("gh", "issues", {"n": 1}, OK)
    book.record("gh", "issues", {"n": 2}, OK)
    book.record("gh", "issues", {"n": 1}, HTTP_404)
    entries = book.read("gh")
    assert [(e.args, e.envelope["ok"]) for e in entries] == [({"n": 2}, True), ({"n": 1}, False)]


def test_an_entry_without_args_answers_any_arguments_after_exact_matches(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path)
    write(book, "gh", {"version": 1, "connection": "gh", "calls": [
        {"operation": "issues", "envelope": OK},
        {"operation": "issues", "args": {"owner": "me"}, "envelope": HTTP_404},
    ]})  # fmt: skip
    assert book.find("gh", "issues", {"owner": "me"}).envelope == HTTP_404  # type: ignore[union-attr]
    assert book.find("gh", "issues", {"owner": "anyone"}).envelope == OK  # type: ignore[union-attr]
    assert book.find("gh", "other", {}) is None


@pytest.mark.parametrize("code", ["refused", "declined", "confirmation_required", "rate_limited"])
def test_answers_helm_decides_itself_are_not_recorded(tmp_path: Path, code: str) -> None:
    book = FixtureBook(tmp_path)
    envelope = {"ok": False, "data": None, "error": {"code": code, "message": "no"}}
    assert not book.record("gh", "issues", {}, envelope)
    assert not (tmp_path / "gh.json").exists()
    assert book.record("gh", "issues", {}, HTTP_404)


def test_each_operation_keeps_its_latest_entries_only(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path)
    book.record("gh", "other", {}, OK)
    for n in range(MAX_PER_OPERATION + 3):
        book.record("gh", "issues", {"n": n}, OK)
    kept = [e.args["n"] for e in book.read("gh") if e.operation == "issues" and e.args is not None]
    assert kept == list(range(3, MAX_PER_OPERATION + 3))
    assert book.read("gh")[0].operation == "other"


def test_a_connection_id_that_is_not_a_manifest_id_never_becomes_a_path(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path / "fx")
    assert not book.record("../outside", "x", {}, OK)
    with pytest.raises(FixtureError, match="not a connection id"):
        book.file("../outside")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ([], "$: must be an object"),
        ({"version": 2, "connection": "gh", "calls": []}, "$.version: must be 1"),
        ({"version": 1, "connection": "other", "calls": []}, "$.connection: must be 'gh'"),
        ({"version": 1, "connection": "gh", "calls": [{"operation": "x"}]},
         "$.calls[0].envelope: must be an object"),
        ({"version": 1, "connection": "gh", "calls": [{"operation": "x", "args": [], "envelope": OK}]},
         "$.calls[0].args: must be an object"),
        ({"version": 1, "connection": "gh", "calls": [{"operation": "x", "envelope": {
            "ok": False, "error": {"code": "oops", "message": "m"}}}]},
         "$.calls[0].envelope: error.code 'oops' is not one of Helm's error codes"),
        ({"version": 1, "connection": "gh", "calls": [{"operation": "x", "envelope": OK, "note": 1}]},
         "$.calls[0]: unknown field(s) ['note']"),
    ],
)  # fmt: skip
def test_a_fixture_file_not_in_the_format_names_the_file_and_the_json_path(
    tmp_path: Path, document: Any, where: str
) -> None:
    book = FixtureBook(tmp_path)
    file = write(book, "gh", document)
    with pytest.raises(FixtureError) as caught:
        book.read("gh")
    assert str(caught.value) == f"{file}: {where}" or str(caught.value).startswith(f"{file}: {where}")
    assert book.problems() == [str(caught.value)]


def test_a_fixture_that_is_not_json_is_reported_with_its_file(tmp_path: Path) -> None:
    (tmp_path / "gh.json").write_text('{"version": 1,', encoding="utf-8")
    assert FixtureBook(tmp_path).problems()[0].startswith(f"{tmp_path / 'gh.json'}: not valid JSON")


def test_answered_tells_a_recorded_failure_from_one_replay_made(tmp_path: Path) -> None:
    book = FixtureBook(tmp_path)
    book.record("gh", "issues", {}, HTTP_404)
    assert book.answered("gh", "issues", {}, HTTP_404)
    missing = {"ok": False, "data": None, "error": {"code": "unavailable", "message": "no fixture"}}
    assert not book.answered("gh", "issues", {"x": 1}, missing)
