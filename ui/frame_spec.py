"""What makes and closes the frame of one running extension instance.

The frame that runs an extension is made by a ``ViewFactory`` — the extension host's web view
in the app, a plain placeholder in tests and screenshots — so the dashboard and the tool pages
do not depend on the web engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broker.manifest import Manifest
from ui.aio import OwnedTasks
from ui.qt import QFrame, QVBoxLayout, QWidget
from ui.text import plain_label


@dataclass(frozen=True)
class FrameSpec:
    """One running instance of an extension: what the view factory needs to make its frame."""

    workspace: str
    manifest: Manifest
    instance: str
    settings: Mapping[str, Any] = field(default_factory=dict)


class ViewFactory(Protocol):
    """Makes the widget that runs one extension instance (the host's ``ExtensionView``).

    A frame with an ``async aclose()`` is closed through it when it goes away, so the calls
    still running in it are cancelled rather than left to answer a deleted page.
    """

    def __call__(self, frame: FrameSpec, parent: QWidget) -> QWidget: ...


class Disposer:
    """Owns the closing of frames that are taken off the screen."""

    def __init__(self) -> None:
        self.closing = OwnedTasks(None)  # closing runs to its end, whoever asked for it

    def __call__(self, view: QWidget) -> None:
        aclose = getattr(view, "aclose", None)
        if aclose is None:
            view.deleteLater()
            return
        view.hide()
        self.closing.start(aclose())

    async def wait(self) -> None:
        await self.closing.wait()


def placeholder_view(frame: FrameSpec, parent: QWidget) -> QWidget:
    """A frame that names the extension and its settings instead of running it."""
    box = QFrame(parent)
    box.setFrameShape(QFrame.Shape.StyledPanel)
    col = QVBoxLayout(box)
    col.addWidget(plain_label(f"{frame.manifest.name} — {frame.manifest.entry}", box))
    for key, value in sorted(frame.settings.items()):
        col.addWidget(plain_label(f"{key}: {value}", box))
    col.addStretch(1)
    return box
