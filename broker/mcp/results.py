"""From an MCP ``CallToolResult`` to the contract's result: the data, the TDT envelope, sizes."""

from __future__ import annotations

import json
from typing import Any

from mcp import types

from broker.errors import CallError, ErrorCode
from broker.jsonutil import DuplicateKeyError, loads_strict

TDT_KEYS = frozenset({"api_version", "ok", "data", "coverage", "warnings", "error"})


def tool_data(result: types.CallToolResult) -> Any:
    """structuredContent when the server sent it, else the content blocks, as plain JSON."""
    if result.structured_content is not None:
        return result.structured_content
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]


# The canonical text's length without its sorting (which does not change it), and built once:
# json.dumps with options builds an encoder on every call. A value nested in itself is not
# looked for at each container: it ends in RecursionError, refused as any other non-JSON.
_SIZED = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False)


def check_size(data: Any, limit: int, label: str) -> None:
    """``too_large`` when the JSON text of ``data`` is over ``limit`` bytes."""
    try:
        text = _SIZED.encode(data)
        size = len(text) if text.isascii() else len(text.encode("utf-8"))  # ASCII: a byte a character
    except (TypeError, ValueError, RecursionError) as exc:
        raise CallError(ErrorCode.UNAVAILABLE, f"{label} sent a result that is not plain JSON") from exc
    if size > limit:
        raise CallError(ErrorCode.TOO_LARGE, f"{label} sent a result larger than 1 MiB")


def tdt_envelope(result: types.CallToolResult) -> dict[str, Any]:
    """The TDT envelope in a tool result: its structuredContent, or JSON in its text content."""
    candidates: list[Any] = []
    if result.structured_content is not None:
        candidates.append(result.structured_content)
    for block in result.content:
        if isinstance(block, types.TextContent):
            try:
                candidates.append(loads_strict(block.text))
            except (ValueError, DuplicateKeyError, RecursionError):
                continue
    for value in candidates:
        if (
            isinstance(value, dict)
            and {"api_version", "ok"} <= value.keys()
            and isinstance(value["ok"], bool)
        ):
            return value
    raise CallError(ErrorCode.UNAVAILABLE, "the TDT server sent a result that is not a TDT envelope")
