"""Each workspace's dashboard layout and open tool tabs, kept in ``<home>/layout.json``.

Format (version 1)::

    {"version": 1,
     "workspaces": {"main": {"widgets": [{"id": "com.example.board", "cols": 2, "rows": 3}, ...],
                             "tabs": ["com.example.editor"],
                             "current": "com.example.editor"}}}

``widgets`` is the dashboard's order with each widget's span (``ui.dashboard_layout``); ``tabs``
the tool pages that were open, in tab order; ``current`` the page that was in front (a tool's
id, ``activity``, ``agents`` or null for the dashboard). It holds preferences only — nothing a page sent.
Written atomically. A file Helm cannot read is reported (``problem``) and left as it is: the
layout then lives for this session only and nothing is written until the file is fixed or
removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict
from ui.dashboard_layout import MAX_COLS, MAX_ROWS, Span

VERSION = 1
FILE_NAME = "layout.json"


@dataclass(frozen=True)
class WorkspaceLayout:
    widgets: tuple[tuple[str, Span], ...] = ()
    tabs: tuple[str, ...] = ()
    current: str | None = None

    def span(self, widget: str) -> Span | None:
        return next((span for wid, span in self.widgets if wid == widget), None)

    def without(self, extension: str) -> WorkspaceLayout:
        return replace(
            self,
            widgets=tuple(w for w in self.widgets if w[0] != extension),
            tabs=tuple(t for t in self.tabs if t != extension),
            current=None if self.current == extension else self.current,
        )


class LayoutStore:
    """The layouts of one Helm home; read once, then kept in memory and written on each change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        """Why the file could not be read (nothing is written while this is set)."""
        self._layouts: dict[str, WorkspaceLayout] | None = None

    def get(self, workspace: str) -> WorkspaceLayout:
        return self._all().get(workspace, WorkspaceLayout())

    def set(self, workspace: str, layout: WorkspaceLayout) -> None:
        """Keep ``layout``; raises SettingsError (after keeping it for this session) when the
        file cannot be written over because it could not be read."""
        layouts = self._all()
        layouts[workspace] = layout
        if self.problem is not None:
            raise SettingsError(self.problem)
        text = json.dumps(_to_json(layouts), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode("utf-8"), mode=0o600)

    def forget(self, workspace: str, extension: str) -> None:
        layout = self.get(workspace)
        if layout != layout.without(extension):
            self.set(workspace, layout.without(extension))

    def _all(self) -> dict[str, WorkspaceLayout]:
        if self._layouts is None:
            try:
                self._layouts = _read(self.path)
            except SettingsError as err:
                self.problem = str(err)
                self._layouts = {}
        return self._layouts


def _read(path: Path) -> dict[str, WorkspaceLayout]:
    broken = (
        f"the dashboard layout file {path} cannot be read; Helm left it as it is and will not save "
        "layout changes until it is fixed or removed"
    )
    try:
        raw: Any = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, DuplicateKeyError, RecursionError) as exc:
        raise SettingsError(broken) from exc
    if (
        not isinstance(raw, dict)
        or raw.get("version") != VERSION
        or not isinstance(raw.get("workspaces"), dict)
    ):
        raise SettingsError(broken)
    try:
        return {str(name): _layout(value) for name, value in raw["workspaces"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise SettingsError(broken) from exc


def _layout(raw: Any) -> WorkspaceLayout:
    if not isinstance(raw, dict):
        raise TypeError("a workspace's layout must be an object")
    widgets = []
    for w in raw.get("widgets", []):
        cols, rows = int(w["cols"]), int(w["rows"])
        if not (1 <= cols <= MAX_COLS and 1 <= rows <= MAX_ROWS) or not isinstance(w["id"], str):
            raise ValueError("a widget's span is out of range")
        widgets.append((w["id"], Span(cols, rows)))
    tabs = raw.get("tabs", [])
    current = raw.get("current")
    if not all(isinstance(t, str) for t in tabs) or not (current is None or isinstance(current, str)):
        raise TypeError("tabs are extension ids")
    return WorkspaceLayout(tuple(widgets), tuple(tabs), current)


def _to_json(layouts: dict[str, WorkspaceLayout]) -> dict[str, Any]:
    return {
        "version": VERSION,
        "workspaces": {
            name: {
                "widgets": [{"id": wid, "cols": s.cols, "rows": s.rows} for wid, s in layout.widgets],
                "tabs": list(layout.tabs),
                "current": layout.current,
            }
            for name, layout in layouts.items()
        },
    }
