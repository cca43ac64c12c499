"""Tool pinning: what the user approved about each declared tool, and what changed since.

At approval Helm stores, for each tool the connection declares, the tool's description, input
schema and annotations and a digest of them. When the server was not set up or did not answer
at review, nothing is pinned then: the broker pins the tools at the connection's first call
(trust on first use) and marks the pin with ``first_contact`` (when), which review shows. A call
checks the server's current definition against that digest; a different one (or a tool that was
missing when pinned) is refused until the user approves again, and ``changes`` says in words
what differs so review can show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mcp import types

from broker.jsonutil import canonical, digest

PINNED_FIELDS = ("description", "inputSchema", "annotations")
MAX_STORED = 64 * 1024
"""A definition larger than this is pinned by digest only (review then says "changed")."""


def definition(tool: types.Tool) -> dict[str, Any]:
    raw = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {f: raw.get(f) for f in PINNED_FIELDS}


def pin_tools(declared: Iterable[str], tools: Mapping[str, types.Tool]) -> dict[str, Any]:
    """The pin of a connection: ``{"tools": {name: {"digest", "definition"} | None}}``."""
    pinned: dict[str, Any] = {}
    for name in sorted(set(declared)):
        tool = tools.get(name)
        if tool is None:
            pinned[name] = None
            continue
        d = definition(tool)
        entry: dict[str, Any] = {"digest": digest(d)}
        if len(canonical(d)) <= MAX_STORED:
            entry["definition"] = d
        pinned[name] = entry
    return {"tools": pinned}


def tool_digest(tool: types.Tool) -> str:
    """The digest a pin keeps of ``tool``'s definition."""
    return digest(definition(tool))


def matches(pin: Mapping[str, Any], name: str, current: str | None) -> bool:
    """Whether the server's current tool ``name``, of digest ``current`` (None: the server no
    longer offers it), is the one the user approved."""
    entry = (pin.get("tools") or {}).get(name)
    if entry is None or current is None:
        return False
    return bool(entry.get("digest") == current)


def changes(pin: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Lines describing how the ``current`` pin differs from the approved ``pin``."""
    old_tools: Mapping[str, Any] = pin.get("tools") or {}
    new_tools: Mapping[str, Any] = current.get("tools") or {}
    lines: list[str] = []
    for name in sorted(set(old_tools) | set(new_tools)):
        old, new = old_tools.get(name), new_tools.get(name)
        if old == new or (old and new and old.get("digest") == new.get("digest")):
            continue
        if name not in old_tools:
            lines.append(f"tool {name}: not part of the approval")
        elif old is None:
            lines.append(f"tool {name}: now offered by the server (it was missing at approval)")
        elif new is None:
            lines.append(f"tool {name}: no longer offered by the server")
        else:
            lines.append(f"tool {name}: " + _field_changes(old, new))
    return lines


def _field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    before, after = old.get("definition"), new.get("definition")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return "its definition changed"
    changed = [f for f in PINNED_FIELDS if canonical(before.get(f)) != canonical(after.get(f))]
    parts = []
    for f in changed:
        label = {"description": "description", "inputSchema": "input schema", "annotations": "annotations"}[f]
        if f == "description":
            parts.append(f"{label} changed from {before.get(f)!r} to {after.get(f)!r}")
        else:
            parts.append(f"{label} changed from {canonical(before.get(f))} to {canonical(after.get(f))}")
    return "; ".join(parts) or "its definition changed"
