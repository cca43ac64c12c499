"""What an extension frame may load and where it may go: pure decisions, no Qt.

Every extension is served from its own origin, ``helm-ext://<host>/``, where ``<host>`` is a
digest of the workspace and the extension id. Nothing else is reachable: the request
interceptor, the navigation filter and the Content-Security-Policy all ask this module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import quote

SCHEME = "helm-ext"

# Local-only schemes a page may use for its own images and media; nothing leaves the machine
# through them, and the CSP below still decides where each may appear.
LOCAL_SCHEMES = frozenset({"data", "blob"})

# Decisions as data: each directive closes one way out. ``default-src 'none'`` covers every
# fetch directive left unnamed (connect, frame, child, worker, object, manifest, prefetch).
CSP_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'none'"),
    ("script-src", "'self'"),
    ("style-src", "'self' 'unsafe-inline'"),
    ("img-src", "'self' data: blob:"),
    ("font-src", "'self' data:"),
    ("media-src", "'self' data: blob:"),
    ("connect-src", "'none'"),
    ("frame-src", "'none'"),
    ("child-src", "'none'"),
    ("worker-src", "'none'"),
    ("object-src", "'none'"),
    ("manifest-src", "'none'"),
    ("base-uri", "'none'"),
    ("form-action", "'none'"),
    ("frame-ancestors", "'none'"),
)


def content_security_policy() -> str:
    """The policy sent with every file of every extension."""
    return "; ".join(f"{name} {value}" for name, value in CSP_DIRECTIVES)


def extension_host(workspace: str, extension_id: str) -> str:
    """The host part of an extension's origin: stable, unique per workspace and extension.

    A digest keeps the id's characters (dots, capitals) out of the host and makes one origin
    per extension, so storage and same-origin rules never mix two extensions.
    """
    digest = hashlib.sha256(f"{workspace}\x00{extension_id}".encode()).hexdigest()
    return digest[:32]


def origin(host: str) -> str:
    return f"{SCHEME}://{host}"


def entry_url(host: str, entry: str) -> str:
    """The URL of an extension's entry file (``entry`` is relative, with ``/`` separators)."""
    return f"{origin(host)}/{quote(entry.lstrip('/'), safe='/')}"


@dataclass(frozen=True, slots=True)
class RequestDecision:
    allowed: bool
    reason: str
    redirect: str = ""
    """Where an allowed request goes instead (an app's loader), when not where it asked."""


def decide_request(scheme: str, host: str, own_host: str) -> RequestDecision:
    """Whether a frame of the extension on ``own_host`` may load ``scheme://host``."""
    scheme = scheme.lower()
    if scheme == SCHEME:
        if host.lower() == own_host:
            return RequestDecision(True, "own origin")
        return RequestDecision(False, "another extension's origin")
    if scheme in LOCAL_SCHEMES:
        return RequestDecision(True, "local data")
    return RequestDecision(False, f"{scheme or 'relative'} requests leave the sandbox")


def decide_navigation(scheme: str, host: str, own_host: str, main_frame: bool) -> RequestDecision:
    """Whether a frame may navigate to ``scheme://host``: only the main frame, only at home."""
    if not main_frame:
        return RequestDecision(False, "frames inside an extension cannot navigate")
    if scheme.lower() == SCHEME and host.lower() == own_host:
        return RequestDecision(True, "own origin")
    return RequestDecision(False, "navigation away from the extension")
