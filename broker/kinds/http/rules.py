"""Manifest rules and review for ``http`` connections (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from broker.kinds.base import ConnectionReview, Issue, ReviewItem
from broker.templates import placeholder_problem
from broker.urls import url_problem

READ_METHODS = frozenset({"GET", "POST"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    return {name: bool(call.get("write", False)) for name, call in conn["calls"].items()}


def path_problem(path: str) -> str | None:
    if not path.startswith("/") or path.startswith("//"):
        return "must start with exactly one /"
    if any(c in path for c in "?#\\") or any(ord(c) < 0x21 or ord(c) == 0x7F for c in path):
        return "must not contain ?, #, backslashes, spaces or control characters (use query)"
    for segment in path.split("/")[1:]:
        if unquote(segment) in (".", ".."):
            return "must not contain . or .. segments"
    return placeholder_problem(path)


def _body_strings(body: Any) -> Iterator[str]:
    if isinstance(body, str):
        yield body
    elif isinstance(body, dict):
        for v in body.values():
            yield from _body_strings(v)
    elif isinstance(body, list):
        for v in body:
            yield from _body_strings(v)


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    for name, call in conn["calls"].items():
        at = f"{path}.calls.{name}"
        method, write, has_body = call["method"], bool(call.get("write")), "body" in call
        if write and method not in WRITE_METHODS:
            yield Issue(f"{at}.method", "a write call must use POST, PUT, PATCH or DELETE")
        if not write and method not in READ_METHODS:
            yield Issue(f"{at}.method", f'{method} changes data: mark the call "write": true')
        if not write and method == "POST" and not has_body:
            yield Issue(f"{at}.body", "a read POST must declare its body")
        if method == "GET" and has_body:
            yield Issue(f"{at}.body", "a GET call cannot have a body")
        if (problem := path_problem(call["path"])) is not None:
            yield Issue(f"{at}.path", problem)
        for key, value in call.get("query", {}).items():
            if (problem := placeholder_problem(value)) is not None:
                yield Issue(f"{at}.query.{key}", problem)
    oauth2 = conn.get("oauth2")
    if oauth2 is not None:
        if (problem := url_problem(oauth2["authorizeUrl"])) is not None:
            yield Issue(f"{path}.oauth2.authorizeUrl", problem)
        if (problem := url_problem(oauth2["tokenUrl"], allow_query=False)) is not None:
            yield Issue(f"{path}.oauth2.tokenUrl", problem)


def describe_call(call: Mapping[str, Any]) -> str:
    parts = []
    if call.get("query"):
        parts.append("query " + "&".join(f"{k}={v}" for k, v in call["query"].items()))
    if "body" in call:
        parts.append("body " + json.dumps(call["body"], ensure_ascii=False, sort_keys=True))
    return "; ".join(parts)


def review(conn: Mapping[str, Any]) -> ConnectionReview:
    items = [
        ReviewItem(f"{name}: {call['method']} {call['path']}", describe_call(call), bool(call.get("write")))
        for name, call in conn["calls"].items()
    ]
    oauth2 = conn.get("oauth2")
    if oauth2 is not None:
        scopes = " ".join(oauth2.get("scopes", [])) or "(none)"
        items.insert(
            0,
            ReviewItem(
                "OAuth2 sign-in",
                f"authorize {oauth2['authorizeUrl']}; token {oauth2['tokenUrl']}; scopes {scopes}",
            ),
        )
    return ConnectionReview(conn["id"], "http", f"service {conn['service']}", tuple(items))
