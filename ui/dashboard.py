"""The dashboard: a workspace's widgets side by side, each with its settings form.

The frame that runs an extension is made by a ``ViewFactory`` — the extension host's web view
in the app, a plain placeholder in tests and screenshots — so the dashboard does not depend on
the web engine. When a widget's settings change, its frame is made again with the new values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from broker.manifest import Manifest
from ui.qt import (
    QFrame,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_label
from ui.widgets.settings_form import SettingsForm, defaults

WIDGET_WIDTH = 360


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
        self.closing: set[asyncio.Task[Any]] = set()

    def __call__(self, view: QWidget) -> None:
        aclose = getattr(view, "aclose", None)
        if aclose is None:
            view.deleteLater()
            return
        view.hide()
        task: asyncio.Task[Any] = asyncio.ensure_future(aclose())
        self.closing.add(task)
        task.add_done_callback(self.closing.discard)

    async def wait(self) -> None:
        if self.closing:
            await asyncio.wait(list(self.closing), timeout=5.0)


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


class WidgetCard(QFrame):
    """One widget on the dashboard: a title bar, its frame, its settings form on demand."""

    def __init__(
        self,
        frame: FrameSpec,
        factory: ViewFactory,
        save_settings: Callable[[dict[str, Any]], None],
        dispose: Callable[[QWidget], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.dispose = dispose
        self.frame = frame
        self.factory = factory
        self.save_settings = save_settings
        self.setObjectName(f"card:{frame.manifest.id}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(WIDGET_WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.col = QVBoxLayout(self)
        bar = QHBoxLayout()
        title = plain_label(elide(frame.manifest.name, 60), self, wrap=False)
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        bar.addWidget(title, 1)
        self.settings_button = QPushButton("Settings", self)
        self.settings_button.setCheckable(True)
        self.settings_button.setVisible(bool(frame.manifest.settings_form))
        self.settings_button.toggled.connect(self.show_settings)
        bar.addWidget(self.settings_button)
        self.col.addLayout(bar)
        self.form: SettingsForm | None = None
        self.view = factory(frame, self)
        self.col.addWidget(self.view, 1)

    def show_settings(self, on: bool) -> None:
        if not self.frame.manifest.settings_form:
            return
        if on and self.form is None:
            self.form = SettingsForm(self.frame.manifest.settings_form, self.frame.settings, self)
            self.form.applied.connect(self.apply)
            self.col.insertWidget(1, self.form)
        if self.form is not None:
            self.form.setVisible(on)

    def apply(self, values: dict[str, Any]) -> None:
        self.save_settings(values)
        self.frame = FrameSpec(self.frame.workspace, self.frame.manifest, self.frame.instance, values)
        old = self.view
        self.view = self.factory(self.frame, self)
        self.col.replaceWidget(old, self.view)
        self.dispose(old)
        self.settings_button.setChecked(False)


class Dashboard(QScrollArea):
    """The widgets of one workspace, side by side, scrolling sideways when they do not fit."""

    def __init__(self, factory: ViewFactory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.factory = factory
        self.dispose = Disposer()
        self.setWidgetResizable(True)
        self.cards: list[WidgetCard] = []
        self._inner = QWidget(self)
        self._row = QHBoxLayout(self._inner)
        self.empty = plain_label("No widgets are enabled in this workspace.", self._inner)
        self._row.addWidget(self.empty)
        self.setWidget(self._inner)

    def show_widgets(
        self,
        frames: list[FrameSpec],
        save: Callable[[str, dict[str, Any]], None],
    ) -> None:
        for card in self.cards:
            self._row.removeWidget(card)
            card.col.removeWidget(card.view)
            card.view.setParent(None)
            self.dispose(card.view)
            card.deleteLater()
        self.cards = []
        for frame in frames:
            values = {**defaults(frame.manifest.settings_form), **frame.settings}
            frame = FrameSpec(frame.workspace, frame.manifest, frame.instance, values)
            card = WidgetCard(frame, self.factory, _saver(save, frame.manifest.id), self.dispose, self._inner)
            self._row.addWidget(card)
            self.cards.append(card)
        self.empty.setVisible(not frames)


def _saver(save: Callable[[str, dict[str, Any]], None], ext_id: str) -> Callable[[dict[str, Any]], None]:
    return lambda values: save(ext_id, values)
