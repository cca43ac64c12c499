"""Each http lint rule reports its problem at the right JSON path; review shows what matters."""

from __future__ import annotations

from typing import Any

import pytest

from broker.kinds.http import rules
from broker.manifest import validate
from tests.helpers import manifest_dict


def conn(calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "api", "kind": "http", "service": "svc", "calls": calls, **extra}


def issues(c: dict[str, Any], *, write: bool = True) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in validate(manifest_dict([c], write=write))]


AT = "$.connections[0]"
OAUTH = {"authorizeUrl": "https://auth.example/authorize", "tokenUrl": "https://auth.example/token"}


@pytest.mark.parametrize(
    ("call", "path", "fragment"),
    [
        pytest.param({"method": "GET", "path": "/x", "write": True}, ".method", "POST, PUT", id="write-get"),
        pytest.param({"method": "PUT", "path": "/x"}, ".method", '"write": true', id="read-put"),
        pytest.param({"method": "DELETE", "path": "/x"}, ".method", '"write": true', id="read-delete"),
        pytest.param({"method": "POST", "path": "/x"}, ".body", "declare its body", id="read-post-no-body"),
        pytest.param({"method": "GET", "path": "/x", "body": {}}, ".body", "GET call cannot", id="get-body"),
        pytest.param({"method": "GET", "path": "x"}, ".path", "exactly one /", id="no-leading-slash"),
        pytest.param(
            {"method": "GET", "path": "//evil.example/x"}, ".path", "exactly one /", id="double-slash"
        ),
        pytest.param({"method": "GET", "path": "/x?a=1"}, ".path", "use query", id="query-in-path"),
        pytest.param({"method": "GET", "path": "/x#f"}, ".path", "use query", id="fragment"),
        pytest.param({"method": "GET", "path": "/x\\y"}, ".path", "backslashes", id="backslash"),
        pytest.param({"method": "GET", "path": "/x y"}, ".path", "spaces", id="space"),
        pytest.param({"method": "GET", "path": "/a/../b"}, ".path", ". or ..", id="dot-dot"),
        pytest.param({"method": "GET", "path": "/a/%2e%2e/b"}, ".path", ". or ..", id="encoded-dot-dot"),
        pytest.param({"method": "GET", "path": "/a/{x"}, ".path", "braces", id="path-brace"),
        pytest.param(
            {"method": "GET", "path": "/a", "query": {"q": "{1}"}}, ".query.q", "braces", id="query-brace"
        ),
    ],
)
def test_each_call_rule_reports_at_its_path(call: dict[str, Any], path: str, fragment: str):
    found = issues(conn({"c": call}))
    assert any(p == f"{AT}.calls.c{path}" and fragment in m for p, m in found), found


@pytest.mark.parametrize(
    ("field", "url", "fragment"),
    [
        ("authorizeUrl", "http://auth.example/authorize", "https"),
        ("authorizeUrl", "https://user:pw@auth.example/authorize", "credentials"),
        ("authorizeUrl", "https://auth.example/authorize#x", "fragment"),
        ("tokenUrl", "https://auth.example/token?x=1", "query"),
        ("tokenUrl", "http://10.0.0.1/token", "https"),
    ],
)
def test_oauth2_urls_are_checked(field: str, url: str, fragment: str):
    found = issues(conn({"c": {"method": "GET", "path": "/x"}}, oauth2={**OAUTH, field: url}))
    assert any(p == f"{AT}.oauth2.{field}" and fragment in m for p, m in found), found


def test_loopback_http_oauth2_urls_and_provider_parameters_are_accepted():
    oauth = {
        "authorizeUrl": "http://127.0.0.1:9/authorize?access_type=offline",
        "tokenUrl": "http://localhost:9/t",
    }
    assert issues(conn({"c": {"method": "GET", "path": "/x"}}, oauth2=oauth)) == []


def test_a_write_needs_the_write_permission():
    found = issues(conn({"w": {"method": "PATCH", "path": "/x", "write": True}}), write=False)
    assert any(p == AT and "permissions" in m for p, m in found), found


def test_review_shows_method_path_query_body_and_the_oauth2_urls_and_scopes():
    c = conn(
        {"s": {"method": "POST", "path": "/graphql", "query": {"a": "{b}"}, "body": {"q": "{x}"}}},
        oauth2={**OAUTH, "scopes": ["read", "write"]},
    )
    review = rules.review(rules.parse(c))
    assert review.items[0].label == "OAuth2 sign-in"
    assert "https://auth.example/token" in review.items[0].detail
    assert "read write" in review.items[0].detail
    assert review.items[1].label == "s: POST /graphql"
    assert review.items[1].detail == 'query a={b}; body {"q": "{x}"}'
