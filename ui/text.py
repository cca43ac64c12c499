"""Showing text that came from an extension or a server: always plain, never markup.

Every string an extension, a manifest or a server supplies can try to look like something
else: HTML that a rich-text label would render, bidi controls that reorder what the user reads
(``evil.com\u202egpj.exe``), or a megabyte that pushes the buttons off the screen. These
helpers are the only way ``ui/`` puts such a string on screen: labels use ``Qt.PlainText``,
long values go into read-only scrolling boxes, and invisible controls are made visible.
"""

from __future__ import annotations

import unicodedata

from ui.qt import QFont, QFontDatabase, QLabel, QPlainTextEdit, QSizePolicy, Qt, QWidget

# Characters that change how the text around them is ordered or joined without being seen.
INVISIBLE_CONTROLS = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)

SHORT_TEXT_CHARS = 160
"""Single-line values up to this length go in a label; anything longer scrolls in a box."""

ELIDE_CHARS = 200


def visible(text: str) -> str:
    """``text`` with bidi and other invisible controls shown as ``[U+202E]``.

    Newlines and tabs stay; other control characters are shown the same way, so what the user
    reads is exactly the sequence of characters Helm will send.
    """
    out: list[str] = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif ch in INVISIBLE_CONTROLS or unicodedata.category(ch) in ("Cc", "Cf"):
            out.append(f"[U+{ord(ch):04X}]")
        else:
            out.append(ch)
    return "".join(out)


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
    # Keep to the text's height: spare room in a dialog goes to its scrolling boxes.
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    return label


def set_plain(label: QLabel, text: str) -> None:
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(visible(text))


def plain_box(text: str = "", parent: QWidget | None = None, *, max_lines: int = 12) -> QPlainTextEdit:
    """A read-only, scrolling, monospace box for a long or multi-line value."""
    box = QPlainTextEdit(parent)
    box.setReadOnly(True)
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    box.setFont(monospace())
    box.setPlainText(visible(text))
    metrics = box.fontMetrics()
    lines = min(max(text.count("\n") + 1, 2), max_lines)
    box.setMaximumHeight(metrics.lineSpacing() * (lines + 1) + 12)
    return box


def value_widget(text: str, parent: QWidget | None = None) -> QWidget:
    """A label for a short single-line value, a scrolling box for anything longer."""
    if is_short(text):
        return plain_label(text, parent)
    return plain_box(text, parent, max_lines=6)


def monospace() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
