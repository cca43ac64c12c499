"""Turning a declared call and its arguments into the exact request Helm sends (no I/O).

The rules (connection contract, HTTP):

* Each ``{name}`` in the path is required and is encoded as exactly one path segment: every
  character except the unreserved ``A-Z a-z 0-9 - . _ ~`` is percent-encoded, so ``/`` becomes
  ``%2F``; an empty value, or a segment that renders to ``.`` or ``..``, is refused.
* A query parameter whose template names a missing or null argument is not sent.
* In the body, a string that is exactly ``"{name}"`` becomes the argument's JSON value; every
  other string (GraphQL braces included) is sent as written. A missing argument is refused.
* The rendered URL is the base URL followed by the path, by concatenation (never ``urljoin``),
  and is checked to still be under the base URL.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from broker.errors import CallError, ErrorCode
from broker.kinds.http.rules import HttpCall
from broker.templates import PLACEHOLDER, whole

MAX_ARG_CHARS = 4096
UNRESERVED = "-._~"


@dataclass(frozen=True)
class Rendered:
    """One request exactly as Helm will send it."""

    method: str
    url: httpx.URL
    body: bytes | None

    @property
    def body_text(self) -> str | None:
        return None if self.body is None else self.body.decode("utf-8")


def refused(message: str) -> CallError:
    return CallError(ErrorCode.REFUSED, message)


def check_args(args: Mapping[str, Any]) -> None:
    """Arguments are strings (up to 4096 characters of Unicode text), numbers, booleans or null.

    JSON can spell a lone UTF-16 surrogate (``"\\ud800"``), which is not text: it has no UTF-8
    form to put in a URL or a body, so it is refused like any other bad argument.
    """
    for name, value in args.items():
        if isinstance(value, str):
            if len(value) > MAX_ARG_CHARS:
                raise refused(f"argument {name!r} is longer than {MAX_ARG_CHARS} characters")
            if not _is_text(value):
                raise refused(f"argument {name!r} is not valid Unicode text (a lone surrogate)")
        elif value is not None and not isinstance(value, bool | int | float):
            raise refused(f"argument {name!r} must be a string, number, boolean or null")


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def as_text(value: Any) -> str:
    """How a scalar argument reads inside a path segment or a query value."""
    if isinstance(value, str):
        return value
    return json.dumps(value)  # true/false, 20, 1.5: the JSON spelling


def render_path(template: str, args: Mapping[str, Any]) -> str:
    def fill(match: Any) -> str:
        name = match.group(1)
        value = args.get(name)
        if value is None:
            raise refused(f"argument {name!r} is required (it fills the path)")
        text = as_text(value)
        if not text:
            raise refused(f"argument {name!r} must not be empty (it fills the path)")
        return quote(text, safe=UNRESERVED)

    path = PLACEHOLDER.sub(fill, template)
    if any(segment in (".", "..") for segment in path.split("/")):
        raise refused("the path would contain a . or .. segment")
    return path


def render_query(query: Mapping[str, str], args: Mapping[str, Any]) -> str:
    pairs = []
    for key, template in query.items():
        if any(args.get(name) is None for name in PLACEHOLDER.findall(template)):
            continue  # a missing or null argument leaves the parameter out
        value = PLACEHOLDER.sub(lambda m: as_text(args[m.group(1)]), template)
        pairs.append(f"{quote(key, safe=UNRESERVED)}={quote(value, safe=UNRESERVED)}")
    return "&".join(pairs)


def render_body(template: Any, args: Mapping[str, Any]) -> Any:
    if isinstance(template, str):
        name = whole(template)
        if name is None:
            return template
        if name not in args:
            raise refused(f"argument {name!r} is required (it fills the body)")
        return args[name]
    if isinstance(template, dict):
        return {k: render_body(v, args) for k, v in template.items()}
    if isinstance(template, list):
        return [render_body(v, args) for v in template]
    return template


def check(decl: HttpCall, args: Mapping[str, Any]) -> None:
    """Refuse bad arguments without a profile (before Helm looks anything up)."""
    check_args(args)
    render_path(decl.path, args)
    render_query(decl.query, args)
    if decl.has_body:
        render_body(decl.body, args)


def render(base_url: str, decl: HttpCall, args: Mapping[str, Any]) -> Rendered:
    """The request for call declaration ``decl``; raises CallError(refused) for bad arguments."""
    check_args(args)
    path = render_path(decl.path, args)
    query = render_query(decl.query, args)
    text = base_url.rstrip("/") + path + (f"?{query}" if query else "")
    url = _under_base(base_url, text)
    body = None
    if decl.has_body:
        value = render_body(decl.body, args)
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    return Rendered(decl.method, url, body)


@functools.lru_cache(maxsize=64)
def _parsed_base(base_url: str) -> httpx.URL:
    return httpx.URL(base_url)


def _under_base(base_url: str, text: str) -> httpx.URL:
    """The URL httpx will send, checked to be under the base URL after parsing."""
    try:
        base, url = _parsed_base(base_url), httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise refused("the arguments do not make a valid URL") from exc
    prefix = base.raw_path.split(b"?")[0].rstrip(b"/") + b"/"
    path = url.raw_path.split(b"?")[0]
    if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port) or not path.startswith(prefix):
        raise refused("the rendered URL would leave the service's base URL")
    return url
