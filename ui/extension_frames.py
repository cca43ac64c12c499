"""The main window's ``ViewFactory`` on the extension host: one sandboxed frame per instance.

A widget's settings reach its page in the URL fragment, ``#settings=<JSON, percent-encoded>``:
the fragment never leaves the frame (it is not sent with any request) and the page reads it
with ``new URLSearchParams(location.hash.slice(1)).get("settings")``. A change of settings
makes a new frame, so the page always starts from the values the user applied.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ui.dashboard import FrameSpec
from ui.host.host import ExtensionHost
from ui.qt import QWidget


def settings_fragment(settings: Mapping[str, Any]) -> str:
    text = json.dumps(dict(settings), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return "settings=" + quote(text, safe="")


class HostViewFactory:
    def __init__(self, host: ExtensionHost) -> None:
        self.host = host

    def __call__(self, frame: FrameSpec, parent: QWidget) -> QWidget:
        m = frame.manifest
        view = self.host.view(frame.workspace, m.id, m.folder, m.entry, frame.instance, parent)
        view.setMinimumSize(320, 240)
        view.load(settings_fragment(frame.settings) if m.kind == "widget" else "")
        return view
