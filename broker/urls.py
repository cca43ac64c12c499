"""Checks for URLs the user or a manifest gives Helm: https, or http on loopback only."""

from __future__ import annotations

from urllib.parse import urlsplit

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
