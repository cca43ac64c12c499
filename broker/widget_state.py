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

Every state call is a call of the built-in connection ``$state`` (``StateKind``), so it passes
the broker's one admission: the instance's rate limit and in-flight cap, the kill switch and
the Activity record, like any call the frame makes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.builtin import STATE_CONNECTION as STATE_CONNECTION
from broker.builtin import Handler
from broker.context import CallContext
from broker.errors import CallError, ErrorCode, HomeWriteError
from broker.jsonutil import DuplicateKeyError, loads_strict

VERSION = 1
MAX_VALUE_BYTES = 64 * 1024
MAX_FILE_BYTES = 1024 * 1024


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
            try:
                await asyncio.to_thread(write_atomic, file, data, mode=0o600)
            except HomeWriteError as exc:  # a full disk, a read-only home: said without the path
                cause = exc.strerror
                raise CallError(
                    ErrorCode.UNAVAILABLE, f"Helm could not save the state ({cause}); nothing was stored"
                ) from exc

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


class StateKind:
    """``helm.state`` as a built-in connection (``broker.builtin``, id ``$state``): ``get`` →
    the value; ``set`` with ``{value}`` → None. The broker admits
    each call like any other: rate limit, in-flight cap, kill switch, Activity."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def handler(self, ctx: CallContext, operation: str) -> Handler:
        async def get(_args: Mapping[str, Any]) -> Any:
            return self.store.get(ctx)

        async def put(args: Mapping[str, Any]) -> None:
            if "value" not in args:
                raise CallError(ErrorCode.REFUSED, "helm.state.set(value): give one JSON value")
            await self.store.set(ctx, args["value"])

        async def other(_args: Mapping[str, Any]) -> None:
            raise CallError(ErrorCode.REFUSED, "helm.state offers get and set")

        return {"get": get, "set": put}.get(operation, other)
