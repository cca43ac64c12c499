"""The ``helm-ext`` URL scheme: registration and the handler serving one extension's folder.

A thin adapter: the decisions (which file, which MIME type, which policy) are in ``files`` and
``policy``; this module only speaks Qt.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ui.host.files import NotServed, read_served
from ui.host.policy import SCHEME, content_security_policy
from ui.qt import (
    QBuffer,
    QByteArray,
    QIODevice,
    QObject,
    QUrl,
    QWebEngineUrlRequestJob,
    QWebEngineUrlScheme,
    QWebEngineUrlSchemeHandler,
)

_registered = False
LOADER_SCHEME = "helm-load"


def register_scheme() -> None:
    """Declare ``helm-ext`` to the engine; must run before the QApplication is created.

    Secure (pages are secure contexts). Not "local": a local scheme counts as file-like
    content, which the profile's ``LocalContentCanAccessFileUrls=False`` would then cut off from
    its own files. No CORS, fetch, service worker or local access flag either.
    """
    global _registered
    if _registered:
        return
    scheme = QWebEngineUrlScheme(SCHEME.encode())
    scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    scheme.setFlags(QWebEngineUrlScheme.Flag.SecureScheme)
    QWebEngineUrlScheme.registerScheme(scheme)
    # An MCP App's loader (``ui.apps.loader``): secure, and CORS-enabled, so a font or a module
    # script of an allowed domain (loaded in CORS mode) can come from it. Only an app's profile
    # serves it; every other profile has no handler for it and its request filter refuses it.
    loader = QWebEngineUrlScheme(LOADER_SCHEME.encode())
    loader.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    loader.setFlags(QWebEngineUrlScheme.Flag.SecureScheme | QWebEngineUrlScheme.Flag.CorsEnabled)
    QWebEngineUrlScheme.registerScheme(loader)
    _registered = True


Headers = dict[bytes, list[bytes]]


def security_headers(csp: str, **more: str) -> Headers:
    """The headers every document Helm serves on its scheme gets — its Content-Security-Policy,
    no sniffing, no referrer — and ``more`` (``Cache_Control="no-store"``: ``_`` reads ``-``)."""
    headers: Headers = {
        b"Content-Security-Policy": [csp.encode()],
        b"X-Content-Type-Options": [b"nosniff"],
        b"Referrer-Policy": [b"no-referrer"],
    }
    headers.update({name.replace("_", "-").encode(): [value.encode()] for name, value in more.items()})
    return headers


# No Cross-Origin-Opener-Policy: it separates a page from windows of other origins, and a frame
# has none (it opens no window, loads no other origin, and its profile is its extension's alone).
# So it would guard nothing, and it costs a renderer: a document with it starts a new browsing
# context group, so the engine starts every frame's renderer a second time at its first page.
RESPONSE_HEADERS = security_headers(content_security_policy(), Cross_Origin_Resource_Policy="same-origin")


class Gate(Protocol):
    """A decision files wait for (the start-up check): None until it is made."""

    @property
    def passed(self) -> bool | None: ...

    def when_decided(self, callback: Callable[[bool], None]) -> None:
        """Call ``callback(passed)`` once, when the decision is made."""


class ExtensionSchemeHandler(QWebEngineUrlSchemeHandler):
    """Serves the files of one extension folder, and only for that extension's host.

    Behind a gate (``hold_until``), a request waits while the gate is undecided and is answered
    when it decides: served if it passed, refused if not (and every later request too). So a
    frame can start — its process, its navigation — while the start-up check runs, and no file
    of the extension reaches the engine before the check has passed.
    """

    def __init__(self, root: Path, host: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = root
        self._host = host
        self._gate: Gate | None = None
        self._waiting: list[QWebEngineUrlRequestJob] = []

    def hold_until(self, gate: Gate) -> None:
        if self._gate is gate:
            return
        self._gate = gate
        if gate.passed is None:
            own = weakref.WeakMethod(self._decided)  # the gate outlives a closed frame's handler

            def decided(passed: bool) -> None:
                method = own()
                if method is not None:
                    method(passed)

            gate.when_decided(decided)

    def _forget(self, job: QWebEngineUrlRequestJob) -> None:
        self._waiting = [held for held in self._waiting if held is not job]

    def _decided(self, passed: bool) -> None:
        waiting, self._waiting = self._waiting, []
        for job in waiting:
            self._answer(job, passed)

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        passed = None if self._gate is None else self._gate.passed
        if self._gate is not None and passed is None:
            self._waiting.append(job)
            # The engine deletes a job whose navigation ended meanwhile (a frame closed while it
            # waited): it must not be answered then.
            job.destroyed.connect(lambda _=None, held=job: self._forget(held))
            return
        self._answer(job, passed is not False)

    def _answer(self, job: QWebEngineUrlRequestJob, allowed: bool) -> None:
        if not allowed:
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
            return
        url = job.requestUrl()
        if url.host().lower() != self._host or bytes(job.requestMethod().data()) != b"GET":
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
            return
        served = read_served(self._root, url.path(QUrl.ComponentFormattingOption.FullyEncoded))
        if isinstance(served, NotServed):
            job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)
            return
        reply(job, served.data, served.mime)


def reply(job: QWebEngineUrlRequestJob, data: bytes, mime: str, headers: Headers = RESPONSE_HEADERS) -> None:
    """Answer ``job`` with ``data`` and ``headers`` (by default those every extension file gets)."""
    # The binding takes a list per header (its stub says otherwise); a plain value garbles
    # the header and the policy would silently not apply.
    job.setAdditionalResponseHeaders(headers)  # type: ignore[arg-type]
    buffer = QBuffer(job)
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    job.reply(mime.encode(), buffer)
