"""Per-instance state of extensions and apps, kept by Helm under its home.

A sandboxed frame has no storage that outlives Helm (its profile is off the record, and an
app's opaque origin has none at all), so Helm keeps one small JSON value per running instance:
``helm.state.get()`` / ``helm.state.set(value)`` for extensions, ``helm/state/get`` and
``helm/state/set`` for MCP Apps. One file per (workspace, extension) in ``HOME/state/``::

    {"version": 1, "workspace": "main", "extension": "com.example.board",
     "instances": {"dashboard:com.example.board": <value>, ...}}

Each value is at most 64 KiB of JSON and each file at most 1 MiB; a larger one is refused
(``too_large``) and nothing is written. Writes are atomic (``broker.atomic``). A file that
cannot be read is reported (``unavailable``) and never overwritten. The state is data the
frame wrote: Helm never interprets it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from broker import envelope
from broker.atomic import write_atomic
from broker.context import CallContext
from broker.errors import CallError, ErrorCode
from broker.jsonutil import DuplicateKeyError, loads_strict
from broker.ratelimit import instance_key
from broker.summary import Confirmer

if TYPE_CHECKING:
    from broker.broker import Broker

VERSION = 1
MAX_VALUE_BYTES = 64 * 1024
MAX_FILE_BYTES = 1024 * 1024
STATE_CONNECTION = "$state"
"""The connection id ``helm.state`` calls use; no manifest can declare it (ids start with a
letter or ``_``), so it never reaches the broker's allowlist."""


class StateStore:
    """The state files of one Helm home."""

    def __init__(self, home: Path) -> None:
        self.folder = home / "state"
        self._locks: dict[Path, asyncio.Lock] = {}

    def path(self, workspace: str, extension: str) -> Path:
        digest = hashlib.sha256(f"{workspace}\x00{extension}".encode()).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def get(self, ctx: CallContext) -> Any:
        """The instance's value, or None when it never stored one."""
        return self._read(ctx).get(ctx.instance)

    async def set(self, ctx: CallContext, value: Any) -> None:
        """Store ``value`` (None removes it) for the instance, atomically."""
        size = _size(value)
        if size > MAX_VALUE_BYTES:
            raise CallError(ErrorCode.TOO_LARGE, "the state is larger than 64 KiB; nothing was stored")
        file = self.path(ctx.workspace, ctx.extension)
        async with self._locks.setdefault(file, asyncio.Lock()):
            instances = self._read(ctx)
            if value is None:
                instances.pop(ctx.instance, None)
            else:
                instances[ctx.instance] = value
            data = json.dumps(
                {"version": VERSION, "workspace": ctx.workspace, "extension": ctx.extension,
                 "instances": instances},
                ensure_ascii=False, separators=(",", ":"),
            ).encode("utf-8")  # fmt: skip
            if len(data) > MAX_FILE_BYTES:
                raise CallError(
                    ErrorCode.TOO_LARGE, "the extension's state is over 1 MiB in all; nothing was stored"
                )
            await asyncio.to_thread(write_atomic, file, data, mode=0o600)

    def _read(self, ctx: CallContext) -> dict[str, Any]:
        file = self.path(ctx.workspace, ctx.extension)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise CallError(ErrorCode.UNAVAILABLE, "Helm cannot read this extension's state") from exc
        try:
            raw = loads_strict(data)
        except (ValueError, DuplicateKeyError, RecursionError) as exc:
            raise _corrupt(file) from exc
        if (
            not isinstance(raw, dict)
            or raw.get("version") != VERSION
            or not isinstance(raw.get("instances"), dict)
        ):
            raise _corrupt(file)
        return dict(raw["instances"])

    async def request_json(self, ctx: CallContext, operation: str, args_json: str) -> str:
        """``helm.state`` over the bridge: ``get`` → ``{ok, data}``; ``set`` with ``{value}``."""
        try:
            if len(args_json) > MAX_VALUE_BYTES + 64:
                raise CallError(ErrorCode.TOO_LARGE, "the state is larger than 64 KiB; nothing was stored")
            if operation == "get":
                result = envelope.success("state", self.get(ctx))
            elif operation == "set":
                args = loads_strict(args_json) if args_json else {}
                if not isinstance(args, dict) or "value" not in args:
                    raise CallError(ErrorCode.REFUSED, "helm.state.set(value): give one JSON value")
                await self.set(ctx, args["value"])
                result = envelope.success("state", None)
            else:
                raise CallError(ErrorCode.REFUSED, "helm.state offers get and set")
        except (ValueError, DuplicateKeyError, RecursionError):
            result = envelope.failure("state", CallError(ErrorCode.REFUSED, "the state is not valid JSON"))
        except CallError as err:
            result = envelope.failure("state", err)
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise CallError(ErrorCode.REFUSED, "the state must be plain JSON") from exc


def _corrupt(file: Path) -> CallError:
    return CallError(
        ErrorCode.UNAVAILABLE,
        f"the state file {file.name} in Helm's home is damaged; Helm left it as it is "
        "(move it away to start this extension's state afresh)",
    )


class StatefulCalls:
    """The bridge's call handler: ``helm.state`` calls to the store, every other to the broker.

    A state call is admitted like any call (the instance's rate limit and in-flight cap)."""

    def __init__(self, broker: Broker, store: StateStore) -> None:
        self.broker = broker
        self.store = store

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        if connection_id != STATE_CONNECTION:
            return await self.broker.request_json(ctx, connection_id, operation, args_json, confirm)
        key = instance_key(ctx)
        admitted = self.broker.admission.admit(key)
        if not admitted.admitted:
            err = CallError(ErrorCode.RATE_LIMITED, admitted.reason, retry_after=admitted.retry_after)
            return json.dumps(envelope.failure("state", err), separators=(",", ":"))
        try:
            return await self.store.request_json(ctx, operation, args_json)
        finally:
            self.broker.admission.release(key)
