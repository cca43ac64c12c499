"""Checks for URLs: those the user or a manifest gives Helm (https, or http on loopback only),
and the links an app asks Helm to open in the browser (``link_decision``).

A link is shown to the user before it opens, so it must read as what it is. ``link_decision``
refuses anything a reader could take for something else — whitespace and control characters
(twelve line breaks push ``@evil.example`` out of sight), backslashes (a browser reads
``https://good.example\\@evil.example/`` one way, a URL parser another), invisible and bidi
characters, credentials (``https://bank.example@evil.example/`` goes to evil.example), a host
that is not plain ASCII letters, digits, dots and hyphens (or an IPv6 literal) — and names the
host. The desktop then normalises the link with the parser that opens it, and shows and opens
exactly that (``ui.apps.links``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from broker.visible import hidden

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})


def url_problem(url: str, *, allow_query: bool = True, allow_path: bool = True) -> str | None:
    """Why ``url`` is not acceptable, or None when it is.

    https anywhere; http only for the literal hosts 127.0.0.1 and localhost; no credentials,
    no fragment, no whitespace or control characters, a host, and a valid port.
    """
    if not isinstance(url, str) or not url:
        return "must be a non-empty URL"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url) or "\\" in url:
        return "must not contain spaces, backslashes or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not a valid URL"
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("https", "http"):
        return "must be https (http only for 127.0.0.1 or localhost)"
    if not host:
        return "must name a host"
    if scheme == "http" and host not in LOOPBACK_HOSTS:
        return "must be https; http is permitted only for 127.0.0.1 and localhost"
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        return "must not contain credentials"
    if parts.fragment or url.endswith("#"):
        return "must not contain a fragment"
    if not allow_query and (parts.query or url.endswith("?")):
        return "must not contain a query"
    if not allow_path and parts.path not in ("", "/"):
        return "must not contain a path"
    if port == 0:
        return "has an invalid port"
    return None


MAX_LINK_CHARS = 4096
_HOST = re.compile(r"(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?", re.IGNORECASE)


@dataclass(frozen=True)
class LinkDecision:
    """A link an app asked Helm to open: ``problem`` when refused, else its ``host``."""

    url: str
    host: str = ""
    problem: str | None = None

    @property
    def allowed(self) -> bool:
        return self.problem is None


def link_decision(url: object) -> LinkDecision:
    """Whether ``url`` may be put to the user as a link to open, and its host."""
    if not isinstance(url, str) or not url:
        return LinkDecision("", problem="the link must be a non-empty URL")
    if len(url) > MAX_LINK_CHARS:
        return LinkDecision(
            url[:MAX_LINK_CHARS], problem=f"the link is longer than {MAX_LINK_CHARS} characters"
        )
    problem = _link_problem(url)
    if problem is not None:
        return LinkDecision(url, problem=problem)
    host = urlsplit(url).hostname or ""
    return LinkDecision(url, host)


def _link_problem(url: str) -> str | None:
    if any(c.isspace() or c == "\\" or hidden(c) for c in url):
        return "the link holds whitespace, a backslash, or a control or invisible character"
    scheme, sep, rest = url.partition(":")
    if not sep or scheme.lower() not in ("https", "http") or not rest.startswith("//"):
        return "Helm opens http and https links only"
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        return "the link holds a user name or password (text before @ in its host)"
    if not _HOST.fullmatch(authority):
        return "the link's host is not a plain host name (ASCII letters, digits, dots, hyphens)"
    try:
        port = urlsplit(url).port
    except ValueError:
        return "the link's port is not valid"
    if port == 0:
        return "the link's port is not valid"
    return None
