"""Showing text that came from an extension or a server: always plain, never markup.

Every string an extension, a manifest or a server supplies can try to look like something
else: HTML that a rich-text label would render, bidi controls that reorder what the user reads
(``evil.com\u202egpj.exe``), or a megabyte that pushes the buttons off the screen. These
helpers are the only way ``ui/`` puts such a string on screen: labels use ``Qt.PlainText``,
long values go into read-only scrolling boxes, and invisible characters (bidi controls, line and
paragraph separators, zero-width characters, controls) are shown as ``[U+XXXX]`` by
``broker.visible``, the same rule the terminal uses.
"""

from __future__ import annotations

import html

from broker.visible import visible
from ui.qt import QFont, QFontDatabase, QLabel, QLineEdit, QPlainTextEdit, QSizePolicy, Qt, QWidget

__all__ = [
    "elide",
    "is_short",
    "monospace",
    "one_line",
    "plain_box",
    "plain_heading",
    "plain_label",
    "plain_tip",
    "set_plain",
    "value_widget",
    "visible",
]

SHORT_TEXT_CHARS = 160
"""Single-line values up to this length go in a label; anything longer scrolls in a box."""

ELIDE_CHARS = 200


def elide(text: str, limit: int = ELIDE_CHARS) -> str:
    """One visible line of at most ``limit`` characters, for list rows and titles."""
    line = visible(text).replace("\n", " ⏎ ").replace("\t", " ")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def is_short(text: str) -> bool:
    return len(text) <= SHORT_TEXT_CHARS and "\n" not in text


def plain_label(text: str = "", parent: QWidget | None = None, *, wrap: bool = True) -> QLabel:
    """A label that shows ``text`` as characters, never as rich text."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setText(visible(text))
    # Keep to the text's height: spare room in a dialog goes to its scrolling boxes. The policy
    # is changed, not replaced: a wrapping label's height is then measured at the width it is
    # given, not at the narrow width its size hint guesses (two lines for one).
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Policy.Preferred)
    policy.setVerticalPolicy(QSizePolicy.Policy.Maximum)
    label.setSizePolicy(policy)
    return label


def plain_heading(text: str, parent: QWidget | None = None) -> QLabel:
    """A dialog's first line: a plain label in bold (object name ``heading``)."""
    label = plain_label(text, parent)
    label.setObjectName("heading")
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def set_plain(label: QLabel, text: str) -> None:
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(visible(text))


def plain_box(
    text: str = "", parent: QWidget | None = None, *, max_lines: int = 12, name: str = ""
) -> QPlainTextEdit:
    """A read-only, scrolling, monospace box for a long or multi-line value; ``name`` is what a
    screen reader calls it (a box in a form row takes its row's label)."""
    box = QPlainTextEdit(parent)
    box.setReadOnly(True)
    box.setTabChangesFocus(True)  # Tab moves on, as everywhere else in a dialog
    if name:
        box.setAccessibleName(name)
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    box.setFont(monospace())
    box.setPlainText(visible(text))
    metrics = box.fontMetrics()
    lines = min(max(text.count("\n") + 1, 2), max_lines)
    box.setMaximumHeight(metrics.lineSpacing() * (lines + 1) + 12)
    return box


ONE_LINE_CHARS = 4000
"""A single-line value up to this length stays on one line; a longer one scrolls in a box."""


def one_line(text: str, parent: QWidget | None = None, name: str = "") -> QLineEdit:
    """A long single-line value (a URL) on one line: read-only, selectable in full, scrolling
    sideways as the cursor moves, without a frame so it reads as a label; the tooltip shows
    the whole (bounded) value."""
    field = QLineEdit(parent)
    field.setReadOnly(True)
    field.setFrame(False)
    field.setMaxLength(max(len(text) * 2, 32767))  # visible() may lengthen it; never cut
    field.setText(visible(text))
    field.setCursorPosition(0)
    field.setToolTip(plain_tip(text))
    if name:
        field.setAccessibleName(name)
    field.setObjectName("oneLine")
    return field


def value_widget(text: str, parent: QWidget | None = None, name: str = "") -> QWidget:
    """A label for a short single-line value, one scrolling line for a longer single line (a
    URL), a scrolling box for several lines."""
    if is_short(text):
        return plain_label(text, parent)
    if "\n" not in text and len(text) <= ONE_LINE_CHARS:
        return one_line(text, parent, name)
    return plain_box(text, parent, max_lines=6, name=name)


def monospace() -> QFont:
    """The system's fixed-width family at the size of the text around it (only the family is
    set, so the box follows the text size the user chose in Preferences)."""
    font = QFont()
    font.setFamilies(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).families())
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def plain_tip(text: str, limit: int = 600) -> str:
    """A tooltip that shows ``text`` as characters: Qt guesses whether a tooltip is rich text
    (a tag before the first line break is enough), so it is written as escaped rich text."""
    shown = visible(text if len(text) <= limit else text[: limit - 1] + "…")
    return '<p style="white-space: pre-wrap">' + html.escape(shown) + "</p>"
