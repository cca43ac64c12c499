"""``http`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from broker.kinds.base import JSON, Connection, ConnectionReview, Issue, ReviewItem
from broker.templates import names, unused_arguments, whole


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
    """Nothing beyond the schema: each rule of an http connection concerns one call (its
    method, path, query and body) or one sign-in URL, and ``schema.py`` holds them all."""
    return iter(())


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
