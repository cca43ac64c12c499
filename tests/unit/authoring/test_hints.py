"""Hints in author mode: a query placeholder with no value, arguments nothing uses."""

from __future__ import annotations

from typing import Any

from broker.authoring.hints import call_hints
from broker.kinds.db import DB
from broker.kinds.files import FILES
from broker.kinds.http import HTTP as HTTP_KIND

RAW: dict[str, Any] = {
    "id": "gh",
    "kind": "http",
    "service": "github",
    "calls": {
        "issues": {
            "method": "GET",
            "path": "/repos/{owner}/issues",
            "query": {"per_page": "{limit}", "q": "is:{state}"},
        },
        "create": {
            "method": "POST",
            "path": "/issues",
            "body": {"title": "{title}", "note": "{not whole}"},
            "write": True,
        },
    },
}


HTTP = HTTP_KIND.parse(RAW)


def test_a_query_placeholder_without_a_value_is_named_with_its_parameter() -> None:
    hints = call_hints(HTTP, "issues", {"owner": "me", "limit": None})
    assert hints == (
        "query placeholder {limit} had no value: query parameter 'per_page' was not sent",
        "query placeholder {state} had no value: query parameter 'q' was not sent",
    )


def test_an_argument_no_placeholder_uses_is_pointed_out() -> None:
    hints = call_hints(HTTP, "issues", {"owner": "me", "limit": 5, "state": "open", "user": "x"})
    assert hints == ("argument 'user' is not used by any placeholder of this call",)


def test_only_a_whole_string_of_the_body_is_a_placeholder() -> None:
    assert call_hints(HTTP, "create", {"title": "t"}) == ()
    assert call_hints(HTTP, "create", {"title": "t", "not whole": "x"}) == (
        "argument 'not whole' is not used by any placeholder of this call",
    )


def test_a_db_argument_outside_the_query_params_is_pointed_out() -> None:
    db = DB.parse({"id": "app", "kind": "db", "service": "local", "engine": "sqlite",
                   "queries": {"recent": {"sql": "SELECT ?", "params": ["limit"]}}})  # fmt: skip
    assert call_hints(db, "recent", {"limit": 1}) == ()
    assert call_hints(db, "recent", {"limit": 1, "lmit": 2}) == (
        "argument 'lmit' is not used by the params of query 'recent'",
    )


def test_kinds_without_templates_and_unknown_operations_have_no_hints() -> None:
    files = FILES.parse(
        {"id": "n", "kind": "files", "root": "workspace", "paths": ["*"], "operations": ["list"]}
    )
    assert call_hints(files, "list", {"x": 1}) == ()
    assert call_hints(HTTP, "nope", {"x": 1}) == ()
