"""The host side of an app's JSON-RPC: what Helm answers to each message an app sends.

Messages arrive as JSON text relayed from the app's frame; nothing in them is trusted. The
identity of the app (``CallContext``) and what it may do (``AppSpec``) are fixed when the
session is made, never read from a message. Requests run as tasks this session owns:

* ``tools/call`` — the broker's own path (``Broker.request``: admission, approval, a tool of
  this app's server still visible to the app, confirmation of writes, redaction, audit);
* ``resources/read`` — the app's own resource and the ones pinned at approval (``reads``);
  ``resources/list`` — those of them the server lists now;
* ``ui/open-link`` — refused unless the link reads as what it is (``broker.urls.link_decision``),
  then the user is asked (``HostWindow.open_link``: one question at a time per app, the link
  shown as it will open; a request while one is open is refused, and counted like any);
* ``ui/update-model-context`` — kept for the instance, at most 64 KiB;
* ``helm/state/get`` / ``helm/state/set`` — the instance's state (``helm.state``'s ``$state``);
* ``ui/message`` — refused (Helm has no chat), and the window is told so (``notices``);
  ``ui/request-display-mode`` — inline or fullscreen, as the window allows.

The app's ``ui/notifications/size-changed`` goes to ``sized``. ``notify`` sends the app one of
Helm's notifications (the opening tool's input and result, ``broker.apps.launch``).

Every request that does work passes the broker's one admission, as an extension frame's call
does (``broker.builtin``): the instance's rate limit (60 a minute, shared by all of them) and
in-flight cap, the size cap of a call, the kill switch and one Activity record each. A refusal
is a JSON-RPC error whose ``data`` holds the contract's code (and ``retryAfter``).

Helm's own messages to the app — ``host-context-changed``, ``ui/resource-teardown`` — are sent
only after the app said it initialized, as the spec requires.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol

from broker.apps import meta, reads
from broker.apps.loader import allowed_sources
from broker.apps.spec import APP_CONNECTION, AppSpec
from broker.broker import Broker
from broker.builtin import APP_HOST_CONNECTION, STATE_CONNECTION, Handler
from broker.context import CallContext
from broker.envelope import failure
from broker.errors import CallError, ErrorCode
from broker.jsonutil import DuplicateKeyError, compact_utf8, loads_strict
from broker.summary import Confirmer
from broker.urls import link_decision
from broker.widget_state import MAX_VALUE_BYTES

log = logging.getLogger("helm.apps")

MAX_MESSAGE_CHARS = meta.MAX_MESSAGE_CHARS
MAX_CONTEXT_BYTES = 64 * 1024
SERVER_ERROR = -32000
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
DISPLAY_MODES = ("inline", "fullscreen", "pip")
HOST_INFO = {"name": "Helm", "version": "1"}
MAX_PENDING = 64
"""Requests of one app instance being answered at once; more are refused until some end."""


class Fault(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class HostWindow(Protocol):
    """What the window around an app provides (``ui.apps``; a fake in tests)."""

    def send(self, text: str) -> None:
        """Deliver one JSON-RPC message to the app."""

    def context(self) -> dict[str, Any]:
        """The host context now: theme, locale, display mode, available modes."""

    async def open_link(self, url: str) -> bool:
        """Ask the user whether to open ``url``; True when it was opened."""

    def set_display_mode(self, mode: str) -> str:
        """Switch to ``mode`` if the window can; return the mode now in force."""


class AppSession:
    """One running app instance's conversation with Helm."""

    def __init__(
        self,
        broker: Broker,
        ctx: CallContext,
        app: AppSpec,
        window: HostWindow,
        confirm: Confirmer,
        contexts: MutableMapping[str, Any],
    ) -> None:
        self.broker, self.ctx, self.app, self.window = broker, ctx, app, window
        self.confirm, self.contexts = confirm, contexts
        self.initialized = False
        self.started = asyncio.Event()
        """Set when the app said ``ui/notifications/initialized``."""
        self.app_modes: tuple[str, ...] | None = None
        self.refused = 0
        """Messages refused before they reached Helm (too large), counted."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self.notices: Callable[[str], None] = lambda _text: None
        """Told what the app asked that Helm refused in a way the user should see."""
        self.sized: Callable[[int | None, int | None], None] = lambda _w, _h: None
        """Told the size the app reports (``ui/notifications/size-changed``), in pixels."""
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "ui/initialize": self._initialize,
            "ping": _empty,
            "tools/call": self._call_tool,
            "resources/read": self._read_resource,
            "resources/list": self._list_resources,
            "ui/open-link": self._open_link,
            "ui/message": self._message,
            "ui/update-model-context": self._model_context,
            "ui/request-display-mode": self._display_mode,
            "helm/state/get": self._state_get,
            "helm/state/set": self._state_set,
        }

    # -- from the app --------------------------------------------------------------------
    def receive(self, text: str) -> None:
        """One message from the app; requests are answered by a task this session owns, and a
        message that is no JSON-RPC request, notification or answer is refused (id null)."""
        message = _parse(text)
        if isinstance(message, Fault):
            self._refuse(None, message)
            return
        method, rid = message.get("method"), message.get("id")
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                self._settle(rid, message)
            else:
                self._refuse(_valid_id(rid), Fault(INVALID_REQUEST, "neither a request nor an answer"))
            return
        if "id" not in message:
            self._notified(method, message.get("params"))
            return
        request_id = _valid_id(rid)
        if request_id is None:
            self._refuse(None, Fault(INVALID_REQUEST, "a request's id must be a string or an integer"))
            return
        if len(self._tasks) >= MAX_PENDING:
            self._refuse(
                request_id, Fault(SERVER_ERROR, f"too many requests in flight (at most {MAX_PENDING})")
            )
            return
        # Started eagerly, as the bridge's calls are: the request runs inside this slot up to its
        # first real wait (a Qt slot calls this outside any coroutine, hence get_event_loop).
        task = asyncio.Task(
            self._answer(request_id, method, message.get("params")),
            loop=asyncio.get_event_loop(),
            eager_start=True,
        )
        if task.done():
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, rid: str | int, method: str, params: Any) -> None:
        handler = self._handlers.get(method)
        try:
            if handler is None:
                raise Fault(METHOD_NOT_FOUND, f"Helm does not offer {method[:100]!r} to apps")
            result = await handler(params if isinstance(params, dict) else {})
            self._send({"jsonrpc": "2.0", "id": rid, "result": result})
        except Fault as fault:
            self._refuse(rid, fault)
        except asyncio.CancelledError:
            raise
        except Exception:  # the top of a task: the app always gets an answer
            log.exception("answering %s of app %s failed inside Helm", method, self.ctx.extension)
            self._send(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": SERVER_ERROR, "message": "internal error"}}
            )

    def refused_large(self, method: str, chars: int) -> None:
        """A message too large to take was refused before it crossed (its answer, if it was a
        request, already given): counted here and recorded in Activity as ``too_large``."""
        self.refused += 1
        log.warning("refused a message of %d characters from app %s", chars, self.ctx.extension)
        watch = self.broker.activity.begin(self.ctx, APP_CONNECTION, method or "message")
        err = CallError(
            ErrorCode.TOO_LARGE, f"a message of {chars} characters; Helm takes {MAX_MESSAGE_CHARS}"
        )
        self.broker.activity.end(watch, failure("mcp", err))

    def _refuse(self, rid: str | int | None, fault: Fault) -> None:
        error: dict[str, Any] = {"code": fault.code, "message": fault.message}
        if fault.data is not None:
            error["data"] = fault.data
        self._send({"jsonrpc": "2.0", "id": rid, "error": error})

    def _notified(self, method: str, params: Any) -> None:
        if method == "ui/notifications/initialized":
            self.initialized = True
            self.started.set()
        elif method == "ui/notifications/size-changed" and isinstance(params, dict):
            self.sized(_pixels(params.get("width")), _pixels(params.get("height")))
        elif method == "notifications/message" and isinstance(params, dict):
            log.info("app %s says: %.500s", self.ctx.extension, json.dumps(params.get("data")))

    def _settle(self, rid: Any, message: dict[str, Any]) -> None:
        waiter = self._waiting.pop(str(rid), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(message)

    # -- the methods ---------------------------------------------------------------------
    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        caps = params.get("appCapabilities")
        modes = caps.get("availableDisplayModes") if isinstance(caps, dict) else None
        if isinstance(modes, list):
            self.app_modes = tuple(m for m in modes if m in DISPLAY_MODES)
        # What Helm applies, not what the app declared: no network, no frames, and only the
        # resource domains the user allowed that are plain origins (``ui.apps.policy``).
        allowed = list(allowed_sources(self.app.allowed_resource_domains))  # what the loader serves
        csp = {"connectDomains": [], "resourceDomains": allowed, "frameDomains": [], "baseUriDomains": []}
        return {
            "protocolVersion": meta.PROTOCOL_VERSION,
            "hostInfo": HOST_INFO,
            "hostCapabilities": {
                "openLinks": {},
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "sandbox": {"permissions": {}, "csp": csp},
                "experimental": {"helm/state": {"maxBytes": MAX_VALUE_BYTES}},
            },
            "hostContext": self.window.context(),
        }

    async def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name, args = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(args, dict):
            raise Fault(INVALID_PARAMS, "tools/call needs a tool name and an arguments object")

        async def visible() -> None:
            await reads.visible_to_app(self.broker, self.ctx.workspace, self.app, name)

        result = await self.broker.request(self.ctx, APP_CONNECTION, name, args, self.confirm, check=visible)
        return tool_result(result)

    async def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        self.notices("The app tried to send a chat message; Helm has no chat, so it was refused.")
        return await _no_chat(params)

    async def _list_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        listing = reads.lister(self.broker, self.ctx, self.app)
        found: dict[str, Any] = await self._builtin(APP_CONNECTION, reads.LIST, params, listing)
        return found

    async def _builtin(self, connection: str, operation: str, params: dict[str, Any], work: Handler) -> Any:
        """``work`` through the broker's admission; its data, or its refusal as a ``Fault``."""
        return _unwrapped(await self.broker.builtin(self.ctx, connection, operation, params, work))

    async def _read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        read = reads.reader(self.broker, self.ctx, self.app)
        found: dict[str, Any] = await self._builtin(APP_CONNECTION, reads.READ, params, read)
        return found

    async def _open_link(self, params: dict[str, Any]) -> dict[str, Any]:
        async def ask(args: Mapping[str, Any]) -> bool:
            return await self.window.open_link(checked_link(args.get("url")))

        if not await self._builtin(APP_HOST_CONNECTION, "ui/open-link", params, ask):
            raise Fault(SERVER_ERROR, "Link opening denied by user")
        return {}

    async def _model_context(self, params: dict[str, Any]) -> dict[str, Any]:
        async def keep(args: Mapping[str, Any]) -> None:
            if len(json.dumps(args, ensure_ascii=False).encode("utf-8")) > MAX_CONTEXT_BYTES:
                raise CallError(
                    ErrorCode.TOO_LARGE, "the model context is larger than 64 KiB; it was not kept"
                )
            self.contexts[self.ctx.instance] = dict(args)

        await self._builtin(APP_HOST_CONNECTION, "ui/update-model-context", params, keep)
        return {}

    async def _display_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode")
        current = str(self.window.context().get("displayMode", "inline"))
        if mode not in DISPLAY_MODES or (self.app_modes is not None and mode not in self.app_modes):
            return {"mode": current}
        now = self.window.set_display_mode(str(mode))
        if now != current:
            self.notify_context({"displayMode": now})
        return {"mode": now}

    async def _state_get(self, params: dict[str, Any]) -> dict[str, Any]:
        result = await self.broker.request(self.ctx, STATE_CONNECTION, "get", {}, self.confirm)
        return {"state": _unwrapped(result)}

    async def _state_set(self, params: dict[str, Any]) -> dict[str, Any]:
        value = {"value": params.get("state")}
        _unwrapped(await self.broker.request(self.ctx, STATE_CONNECTION, "set", value, self.confirm))
        return {}

    # -- to the app ----------------------------------------------------------------------
    def notify(self, method: str, params: dict[str, Any]) -> None:
        """One of Helm's notifications (only once the app initialized)."""
        if self.initialized:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def notify_context(self, changed: dict[str, Any]) -> None:
        """``ui/notifications/host-context-changed`` (only once the app initialized)."""
        if self.initialized:
            self._send(
                {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": changed}
            )

    async def teardown(self, reason: str, within: float = 3.0) -> bool:
        """Ask the app to wind down and wait for its answer, at most ``within`` s."""
        if not self.initialized:
            return False
        rid = f"helm-{next(self._ids)}"
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = waiter
        self._send(
            {"jsonrpc": "2.0", "id": rid, "method": "ui/resource-teardown", "params": {"reason": reason}}
        )
        try:
            await asyncio.wait_for(waiter, within)
        except TimeoutError:
            return False
        finally:
            self._waiting.pop(rid, None)
        return True

    def _send(self, message: dict[str, Any]) -> None:
        # A lone surrogate from a server, which Qt's bridge would drop unseen, arrives escaped.
        self.window.send(compact_utf8(message)[0])

    async def aclose(self) -> None:
        """Cancel what is still running (the frame is closing) and wait for it to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)


def tool_result(envelope: dict[str, Any]) -> dict[str, Any]:
    """A ``CallToolResult`` from the mcp envelope; a refusal becomes a JSON-RPC error."""
    if envelope.get("ok"):
        return _content(envelope.get("data"), False)
    error = envelope.get("error") or {}
    if error.get("code") == ErrorCode.TOOL_ERROR.value:
        return _content(envelope.get("data"), True)
    raise _refusal(envelope)


def _content(data: Any, is_error: bool) -> dict[str, Any]:
    """The envelope keeps the tool's structuredContent when it sent one, else its content."""
    if isinstance(data, list):
        result: dict[str, Any] = {"content": data}
    else:
        result = {"content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False)}]}
        if isinstance(data, dict):
            result["structuredContent"] = data
    if is_error:
        result["isError"] = True
    return result


def checked_link(url: Any) -> str:
    """``url`` when Helm may offer to open it (``broker.urls.link_decision``); ``refused``
    otherwise, with the reason."""
    decision = link_decision(url)
    if decision.problem is not None:
        raise CallError(ErrorCode.REFUSED, f"Invalid URL: {decision.problem}")
    return decision.url


def _unwrapped(envelope: dict[str, Any]) -> Any:
    """A built-in call's data; its failure as the JSON-RPC error the app sees."""
    if envelope.get("ok"):
        return envelope.get("data")
    raise _refusal(envelope)


def _refusal(envelope: dict[str, Any]) -> Fault:
    """A failed envelope as a JSON-RPC error: the contract's code (and ``retryAfter``) in ``data``."""
    error = envelope.get("error") or {}
    data = {"code": error.get("code")}
    if "retryAfter" in error:
        data["retryAfter"] = error["retryAfter"]
    return Fault(SERVER_ERROR, f"{error.get('code')}: {error.get('message')}", data)


async def _empty(_params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def _no_chat(_params: dict[str, Any]) -> dict[str, Any]:
    raise Fault(SERVER_ERROR, "not supported: Helm has no chat, so the message was sent to no one")


def _parse(text: str) -> dict[str, Any] | Fault:
    if len(text) > MAX_MESSAGE_CHARS:
        return Fault(INVALID_REQUEST, f"too_large: the message is longer than {MAX_MESSAGE_CHARS} characters")
    try:
        message = loads_strict(text)
    except (ValueError, DuplicateKeyError, RecursionError):
        return Fault(PARSE_ERROR, "not JSON (or a JSON object with a key twice)")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return Fault(INVALID_REQUEST, 'not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0")')
    return message


def _pixels(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e6:
        return int(value)
    return None


def _valid_id(rid: Any) -> str | int | None:
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None
