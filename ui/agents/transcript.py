"""The Agents page's transcript: a read-only plain-text view that streams a session's story.

Text goes in with ``QTextCursor.insertText`` — characters with a format, never markup — after
``visible`` has shown every hidden character as ``[U+XXXX]``, so an agent can neither style
the transcript nor hide or reorder what it says. A tool call or the plan is a *place*: a
cursor keeps its text selected (Qt moves it as text is added or trimmed), and a change replaces
that text. Every entry but streamed text ends with a newline, so nothing appended at the end
ever lands inside a place. At most ``MAX_BLOCKS`` lines are kept; the oldest go first.

Streamed text arrives in small chunks (a few words each), and Qt lays out a whole paragraph
again on every insertion: written one by one, a long paragraph costs time that grows with its
square. So chunks are gathered and written together every ``FLUSH_MS`` (or before anything
else is written), and a paragraph gets a line break after ``LONG_LINE`` characters.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from broker.agents import AgentEvent
from ui.agents.story import Entry, Story, Style, break_long
from ui.qt import QBrush, QColor, QFont, QPlainTextEdit, QTextCharFormat, QTextCursor, QTimer, QWidget
from ui.text import monospace, visible
from ui.theme import Theme
from ui.theme_data import Look, Scheme

MAX_BLOCKS = 20_000
FLUSH_MS = 40
LONG_LINE = 2_000

_COLOURS = {
    Scheme.LIGHT: {
        Style.THOUGHT: "#666666",
        Style.USER: "#1f4e8c",
        Style.TOOL: "#5a3d8a",
        Style.PLAN: "#5c4400",
        Style.ALLOWED: "#0a5d1a",
        Style.REFUSED: "#8a1111",
        Style.NOTE: "#555555",
        Style.FAILED: "#b3261e",
        Style.DETAIL: "#444444",
    },
    Scheme.DARK: {
        Style.THOUGHT: "#a8a8a8",
        Style.USER: "#8ab4ff",
        Style.TOOL: "#c9b0ff",
        Style.PLAN: "#e8c766",
        Style.ALLOWED: "#7ddc8b",
        Style.REFUSED: "#ff8a80",
        Style.NOTE: "#b4b4b4",
        Style.FAILED: "#ff7b72",
        Style.DETAIL: "#cccccc",
    },
}
"""Each style's text colour, legible on each scheme's background (agent text: the palette's)."""


def _format(style: Style, scheme: Scheme) -> QTextCharFormat:
    fmt = QTextCharFormat()
    colour = _COLOURS[scheme].get(style)
    if colour is not None:
        fmt.setForeground(QBrush(QColor(colour)))
    if style is Style.THOUGHT:
        fmt.setFontItalic(True)
    if style in (Style.USER, Style.FAILED):
        fmt.setFontWeight(QFont.Weight.Bold)
    if style is Style.DETAIL:
        fmt.setFontFamilies(monospace().families())
    return fmt


def _formats(look: Look) -> dict[Style, QTextCharFormat]:
    return {style: _format(style, look.scheme) for style in Style}


class Transcript(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_BLOCKS)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setAccessibleName("Transcript")
        self.setPlaceholderText("The agent's messages, thoughts, tool calls and plan appear here.")
        self.story = Story()
        self._formats = _formats(Theme.of().look)
        Theme.of().changed.connect(self._look_changed)
        self._places: dict[str, QTextCursor] = {}
        self._open: Style | None = None  # the style of the streamed text still open at the end
        self._pending: list[str] = []  # streamed text not written yet, of the style ``_pending_style``
        self._pending_style = Style.AGENT
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def _look_changed(self, look: Look) -> None:
        """Text written from now on takes the new scheme's colours."""
        self._formats = _formats(look)

    def add(self, event: AgentEvent) -> None:
        self._write_all(self.story.entries(event))

    def prompt(self, text: str) -> None:
        self._write_all(self.story.prompt(text))

    def note(self, text: str, style: Style = Style.NOTE) -> None:
        self._write_all([Entry(text, style)])

    def reset(self) -> None:
        self._timer.stop()
        self._pending.clear()
        self.clear()
        self.story = Story()
        self._places.clear()
        self._open = None

    def flush(self) -> None:
        """Write the streamed text gathered so far."""
        self._timer.stop()
        if self._pending:
            self._following(self._write_stream)

    def _write_all(self, entries: list[Entry]) -> None:
        for entry in entries:
            if entry.stream:
                if self._pending and entry.style is not self._pending_style:
                    self.flush()
                self._pending.append(entry.text)
                self._pending_style = entry.style
                if not self._timer.isActive():
                    self._timer.start()
            else:
                self.flush()
                self._following(partial(self._write, entry))

    def _following(self, write: Callable[[], None]) -> None:
        """``write``, then keep the end in view if it was in view."""
        bar = self.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 4
        write()
        if following:
            bar.setValue(bar.maximum())

    def _write_stream(self) -> None:
        text, style = "".join(self._pending), self._pending_style
        self._pending.clear()
        end = self._end()
        if self._open is not None and style is not self._open:
            end.insertText("\n", QTextCharFormat())  # the streamed text before this one ends here
        column = end.positionInBlock() if style is self._open else 0
        end.insertText(break_long(visible(text), column, LONG_LINE), self._formats[style])
        self._open = style

    def _write(self, entry: Entry) -> None:
        text, fmt = visible(entry.text), self._formats[entry.style]
        if entry.place is not None and self._replace(entry.place, text, fmt):
            return
        end = self._end()
        if self._open is not None:
            end.insertText("\n", QTextCharFormat())  # the streamed text before this one ends here
            self._open = None
        start = end.position()
        end.insertText(text, fmt)
        stop = end.position()
        end.insertText("\n", QTextCharFormat())
        if entry.place is not None:  # made after the newline, so that stays out of it
            place = QTextCursor(self.document())
            place.setPosition(start)
            place.setPosition(stop, QTextCursor.MoveMode.KeepAnchor)
            self._places[entry.place] = place

    def _replace(self, key: str, text: str, fmt: QTextCharFormat) -> bool:
        place = self._places.get(key)
        if place is None or not place.hasSelection():
            return False  # a place the line limit trimmed away is written anew
        start = place.selectionStart()
        place.insertText(text, fmt)
        end = place.position()
        place.setPosition(start)
        place.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return True

    def _end(self) -> QTextCursor:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor
