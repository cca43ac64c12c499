"""The app's loader in its web profile, and what Helm blocked: a thin adapter for the broker's.

``LoaderHandler`` serves the ``helm-load`` origin of one app (``ui.apps.policy``): a GET of a
path that stands for a URL (``loaded_url``) is fetched by ``AppLoader`` through the broker
(``broker.apps.loader``: admission, Stop, Activity, the loader's own rules) and answered with
the body and its checked type alone; the policy's violation reports arrive as POSTs on
``REPORT_PATH``. Anything else is refused.

``AppLoader`` also says what was blocked: a load the loader refused, one the app's policy
blocked (its report) or one the request filter blocked. Each origin and reason once per frame
(at most ``MAX_NOTED``): one ``refused`` record in Activity (the loader's own refusals already
have theirs) and a short line for the app's card (``blocked``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ui.aio import OwnedTasks
from ui.apps.policy import REPORT_PATH, AppHosts, loaded_url
from ui.host.scheme import Headers, reply
from ui.qt import QIODevice, QObject, QUrl, QWebEngineUrlRequestJob, QWebEngineUrlSchemeHandler, Signal

if TYPE_CHECKING:
    import httpx

    from broker.broker import Broker
    from broker.context import CallContext

log = logging.getLogger(__name__)

MAX_AT_ONCE = 4
"""Loads of one frame under way at once (the others wait their turn, outside admission), so
loads leave room in the instance's in-flight cap for the app's own requests."""
MAX_NOTED = 32
"""Blocked (origin, reason) pairs recorded and shown per frame; more are only logged."""
MAX_REPORT_BYTES = 16 * 1024

LOADED_HEADERS: Headers = {
    b"X-Content-Type-Options": [b"nosniff"],
    b"Cache-Control": [b"no-store"],  # every load asks the loader again: Stop holds, Activity sees it
    b"Access-Control-Allow-Origin": [b"*"],  # fetched without credentials: nothing private to guard
    b"Cross-Origin-Resource-Policy": [b"cross-origin"],
    b"Referrer-Policy": [b"no-referrer"],
}


class PendingJob:
    """A request of the engine that the loader answers later, unless the engine dropped it."""

    def __init__(self, job: QWebEngineUrlRequestJob) -> None:
        self._job: QWebEngineUrlRequestJob | None = job
        job.destroyed.connect(self._gone)

    def _gone(self, *_: Any) -> None:
        self._job = None

    @property
    def alive(self) -> bool:
        return self._job is not None

    def reply(self, body: bytes, media: str) -> None:
        if self._job is not None:
            reply(self._job, body, media, LOADED_HEADERS)

    def fail(self) -> None:
        if self._job is not None:
            self._job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)


class LoaderHandler(QWebEngineUrlSchemeHandler):
    """The ``helm-load`` origin of one app: loads (GET) and the policy's reports (POST)."""

    def __init__(
        self,
        hosts: AppHosts,
        load: Callable[[str, PendingJob], None],
        reported: Callable[[bytes], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._hosts, self._load, self._reported = hosts, load, reported

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        url = job.requestUrl()
        method = bytes(job.requestMethod().data())
        path = url.path(QUrl.ComponentFormattingOption.FullyEncoded)
        if url.host().lower() != self._hosts.loader:
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
        elif path == REPORT_PATH and method == b"POST":
            body = job.requestBody()
            if body is not None and (body.isOpen() or body.open(QIODevice.OpenModeFlag.ReadOnly)):
                self._reported(bytes(body.read(MAX_REPORT_BYTES).data()))
            reply(job, b"", "text/plain", {b"Cache-Control": [b"no-store"]})
        elif method != b"GET":
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
        else:
            query = url.query(QUrl.ComponentFormattingOption.FullyEncoded)
            target = loaded_url(path + (f"?{query}" if url.hasQuery() else ""))
            if target is None:
                job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)
            else:
                self._load(target, PendingJob(job))


class AppLoader(QObject):
    """One app frame's loads and what Helm blocked of them."""

    blocked = Signal(str)
    """A short line for the card: the origin, and why it was blocked."""

    def __init__(
        self,
        broker: Broker,
        ctx: CallContext,
        hosts: AppHosts,
        allowed: tuple[str, ...],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._broker, self._ctx, self._allowed = broker, ctx, allowed
        self._client: httpx.AsyncClient | None = None
        self._at_once = asyncio.Semaphore(MAX_AT_ONCE)
        self._tasks = OwnedTasks(self)
        self.noted: list[tuple[str, str]] = []
        self.handler = LoaderHandler(hosts, self._start, self._reported)

    def _start(self, url: str, job: PendingJob) -> None:
        self._tasks.start(self._load(url, job))

    async def _load(self, url: str, job: PendingJob) -> None:
        from broker.apps import loader

        origin = loader.origin_of(url) or "?"
        into = loader.Loaded()
        async with self._at_once:
            if not job.alive:
                return
            if self._client is None:
                self._client = loader.new_client()
            load = loader.loader(self._client, self._allowed, into)
            args = {"url": url}
            envelope = await self._broker.builtin(
                self._ctx, loader.CONNECTION, loader.operation(origin), args, load
            )
        if envelope.get("ok"):
            job.reply(into.body, into.media)
            return
        job.fail()
        error = envelope.get("error") or {}
        self._note(origin, str(error.get("message") or error.get("code")))

    def _reported(self, body: bytes) -> None:
        """A violation report of the app's policy: the load it blocked, if it names an origin."""
        from broker.apps import loader

        try:
            report = json.loads(body).get("csp-report") or {}
            blocked, directive = (
                str(report.get("blocked-uri", "")),
                str(report.get("effective-directive", "")),
            )
        except (ValueError, AttributeError, RecursionError):
            return
        origin = loader.origin_of(blocked)
        if origin is not None:
            self.refused(
                origin, f"not a resource domain allowed for this app ({directive[:40] or 'its policy'})"
            )

    def refused(self, origin: str, why: str) -> None:
        """A load Helm blocked before the loader: recorded in Activity and shown, once."""
        from broker.apps import loader

        if self._note(origin, why):
            loader.record_blocked(self._broker.activity, self._ctx, origin, why)

    def _note(self, origin: str, why: str) -> bool:
        if (origin, why) in self.noted:
            return False
        if len(self.noted) >= MAX_NOTED:
            log.info("app %s: Helm blocked a load from %s (not shown: too many)", self._ctx.extension, origin)
            return False
        self.noted.append((origin, why))
        self.blocked.emit(f"{origin}: {why}")
        return True

    async def aclose(self) -> None:
        await self._tasks.aclose()
        if self._client is not None:
            await self._client.aclose()
