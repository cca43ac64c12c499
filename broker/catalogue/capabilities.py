"""What an extension may do, in words: the summary an index carries, and what an update adds.

``diff`` compares the part of two manifests an approval is bound to (``Manifest.digest``:
permissions, connections and an app's pinned part) field by field, so nothing an update
changes in it can go unmentioned. Each difference is one ``Change`` in words — "new call
create_issue: POST /repos/{repo}/issues (writes, asks you each time)", "new glob notes/**",
"new CSP connect domain https://cdn.example" — and says whether it grows what the extension
may do (a removal does not). Field names become words through ``WORDS``; a field this table
does not know (a kind of a newer Helm) is still reported, under its own name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from broker.manifest import Manifest

WORDS: Mapping[str, str] = {
    "calls": "call",
    "queries": "query",
    "paths": "glob",
    "operations": "operation",
    "writes": "write tool",
    "scopes": "OAuth2 scope",
    "connectDomains": "CSP connect domain",
    "resourceDomains": "CSP resource domain",
    "frameDomains": "CSP frame domain",
    "baseUriDomains": "CSP base-URI domain",
    "allowResourceDomains": "allowed resource domain",
    "permissions": "app permission",
    "resources": "app resource",
}
"""Plural field name → the word for one of its entries."""
TOOL_KINDS = frozenset({"mcp", "tdt-mcp"})
"""Kinds whose ``operations`` are tools a server defines."""
_LONGEST = 160


@dataclass(frozen=True)
class Change:
    """One difference, for a person; ``grows`` when it lets the extension do more."""

    text: str
    grows: bool = True


@dataclass(frozen=True)
class CapabilityDiff:
    changes: tuple[Change, ...]

    @property
    def grows(self) -> bool:
        return any(c.grows for c in self.changes)

    def lines(self) -> tuple[str, ...]:
        """The diff as lines; "no new capabilities" when nothing grows."""
        grown = [c.text for c in self.changes if c.grows]
        others = [c.text for c in self.changes if not c.grows]
        return tuple(grown or ["no new capabilities"]) + tuple(others)


def summary(manifest: Manifest) -> tuple[str, ...]:
    """What the extension may do, one line each (the index's ``capabilities``)."""
    review = manifest.review()
    lines = ["may write (each write asks for confirmation)" if review.may_write else "reads only"]
    for conn in review.connections:
        lines.append(f"[{conn.id}] {conn.kind} — {conn.target}")
        lines += [f"  {'write' if i.write else 'read'} {i.label}" for i in conn.items]
    if manifest.orchestrate is not None:
        lines.append(f"starts builds (each asks you to click Start): {manifest.orchestrate.prompt}")
    app = manifest.app
    if app is not None:
        lines.append(f"app {app.uri} from MCP server {app.server}")
    return tuple(lines)


def diff(approved: Manifest, update: Manifest) -> CapabilityDiff:
    """What ``update`` may do that ``approved`` may not, and what it no longer does."""
    changes: list[Change] = []
    if update.may_write and not approved.may_write:
        changes.append(Change("may now write (every write still asks you to confirm)"))
    elif approved.may_write and not update.may_write:
        changes.append(Change("no longer writes", grows=False))
    if update.orchestrate is not None and update.orchestrate != approved.orchestrate:
        changes.append(Change(f"starts builds: {update.orchestrate.prompt} (in {update.orchestrate.where})"))
    elif approved.orchestrate is not None and update.orchestrate is None:
        changes.append(Change("no longer starts builds", grows=False))
    old = {c["id"]: c for c in approved.raw.get("connections", [])}
    new = {c["id"]: c for c in update.raw.get("connections", [])}
    reviews = {c.id: c for c in update.review().connections}
    for cid, conn in new.items():
        if cid not in old:
            review = reviews[cid]
            changes.append(Change(f"new connection [{cid}]: {review.kind} — {review.target}"))
            changes += [Change(f"[{cid}] new {_item(i.write)} {i.label}") for i in review.items]
        else:
            changes += _fields(f"[{cid}] ", str(conn.get("kind")), old[cid], conn)
    changes += [Change(f"connection [{cid}] removed", grows=False) for cid in old if cid not in new]
    changes += _fields("app: ", "app", approved.raw.get("app") or {}, update.raw.get("app") or {})
    return CapabilityDiff(tuple(changes))


def _item(write: bool) -> str:
    return "write" if write else "read"


def _fields(prefix: str, kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[Change]:
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after or key == "id":
            continue
        word = _word(kind, key)
        if isinstance(before, list | type(None)) and isinstance(after, list):
            yield from _entries(prefix, word, before or [], after)
        elif isinstance(after, dict) and isinstance(before, dict | type(None)) and _named(after):
            yield from _named_entries(prefix, word, before or {}, after)
        elif isinstance(after, dict) and isinstance(before, dict | type(None)):
            yield from _fields(prefix, kind, before or {}, after)
        elif after is None:
            yield Change(f"{prefix}{word} removed ({_short(before)})", grows=False)
        else:
            yield Change(f"{prefix}{word} changed from {_short(before)} to {_short(after)}")


def _word(kind: str, key: str) -> str:
    if key == "operations" and kind in TOOL_KINDS:
        return "tool"
    if key == "sha256" and kind == "app":
        return "app HTML"
    return WORDS.get(key, key)


def _named(value: Mapping[str, Any]) -> bool:
    """A map of named entries (calls, queries), each an object."""
    return bool(value) and all(isinstance(v, dict) for v in value.values())


def _entries(prefix: str, word: str, before: list[Any], after: list[Any]) -> Iterator[Change]:
    for item in after:
        if item not in before:
            yield Change(f"{prefix}new {word} {_short(item)}")
    for item in before:
        if item not in after:
            yield Change(f"{prefix}{word} {_short(item)} removed", grows=False)


def _named_entries(
    prefix: str, word: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> Iterator[Change]:
    for name, entry in after.items():
        writes = " (writes, asks you each time)" if entry.get("write") else ""
        if name not in before:
            yield Change(f"{prefix}new {word} {name}: {_describe(entry)}{writes}")
        elif before[name] != entry:
            yield Change(f"{prefix}{word} {name} changed: now {_describe(entry)}{writes}")
    for name in before:
        if name not in after:
            yield Change(f"{prefix}{word} {name} removed", grows=False)


def _describe(entry: Mapping[str, Any]) -> str:
    if "method" in entry and "path" in entry:
        rest = {k: v for k, v in entry.items() if k not in ("method", "path", "write")}
        return f"{entry['method']} {entry['path']}" + (f" {_short(rest)}" if rest else "")
    if "sql" in entry:
        return _short(entry["sql"])
    return _short({k: v for k, v in entry.items() if k != "write"})


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"
