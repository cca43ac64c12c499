"""``http`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from broker.kinds.base import JSON, Connection, ConnectionReview, Issue, ReviewItem
from broker.templates import names, placeholder_problem, unused_arguments, whole
from broker.urls import url_problem

READ_METHODS = frozenset({"GET", "POST"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class HttpCall:
    """One named call: the request template the arguments fill in (``broker.kinds.http.render``)."""

    method: str
    path: str
    query: Mapping[str, str]
    body: JSON
    """The body template; only meaningful when ``has_body`` (a template may be JSON null)."""
    has_body: bool
    write: bool


@dataclass(frozen=True)
class OAuth2:
    """The connection's ``oauth2`` block: where it signs in and the scopes it needs."""

    authorize_url: str
    token_url: str
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class HttpConnection(Connection):
    service: str
    calls: Mapping[str, HttpCall]
    oauth2: OAuth2 | None

    @property
    def profile(self) -> str:
        return self.service


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    return {name: bool(call.get("write", False)) for name, call in conn["calls"].items()}


def parse_call(call: Mapping[str, Any]) -> HttpCall:
    return HttpCall(
        method=str(call["method"]),
        path=str(call["path"]),
        query=dict(call.get("query", {})),
        body=call.get("body"),
        has_body="body" in call,
        write=bool(call.get("write", False)),
    )


def parse(conn: Mapping[str, Any]) -> HttpConnection:
    oauth2 = conn.get("oauth2")
    return HttpConnection(
        id=str(conn["id"]),
        kind=str(conn["kind"]),
        operations=operations(conn),
        service=str(conn["service"]),
        calls={name: parse_call(call) for name, call in conn["calls"].items()},
        oauth2=None
        if oauth2 is None
        else OAuth2(oauth2["authorizeUrl"], oauth2["tokenUrl"], tuple(oauth2.get("scopes", []))),
    )


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


def hints(conn: HttpConnection, operation: str, args: Mapping[str, JSON]) -> tuple[str, ...]:
    """A query placeholder with no value (its parameter is not sent) and arguments no
    placeholder of the call uses: both legal, both often a typo (author mode shows them)."""
    call = conn.calls.get(operation)
    if call is None:
        return ()
    found: list[str] = []
    used = set(names(call.path))
    for key, template in call.query.items():
        for name in names(template):
            used.add(name)
            if args.get(name) is None:
                found.append(
                    f"query placeholder {{{name}}} had no value: query parameter {key!r} was not sent"
                )
    if call.has_body:
        used |= {whole_name for text in _body_strings(call.body) if (whole_name := whole(text))}
    return (*found, *unused_arguments(args, used, "any placeholder of this call"))


def describe_call(call: HttpCall) -> str:
    parts = []
    if call.query:
        parts.append("query " + "&".join(f"{k}={v}" for k, v in call.query.items()))
    if call.has_body:
        parts.append("body " + json.dumps(call.body, ensure_ascii=False, sort_keys=True))
    return "; ".join(parts)


def review(conn: HttpConnection) -> ConnectionReview:
    items = [
        ReviewItem(f"{name}: {call.method} {call.path}", describe_call(call), call.write)
        for name, call in conn.calls.items()
    ]
    if conn.oauth2 is not None:
        oauth2 = conn.oauth2
        scopes = " ".join(oauth2.scopes) or "(none)"
        items.insert(
            0,
            ReviewItem(
                "OAuth2 sign-in",
                f"authorize {oauth2.authorize_url}; token {oauth2.token_url}; scopes {scopes}",
            ),
        )
    return ConnectionReview(conn.id, "http", f"service {conn.service}", tuple(items))
