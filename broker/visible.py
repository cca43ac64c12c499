"""Text from extensions, servers and files, made visible as text: for dialogs and terminals.

Any string an extension, a manifest, a server or a file supplies can try to look like something
else. Bidi controls reorder what the user reads (``evil.com\u202egpj.exe``); line and paragraph
separators (U+2028, U+2029) break a line where none seems to be; zero-width and filler
characters hide text; and on a terminal, ESC and the C1 controls (U+009B is a one-character
CSI) are commands that can move the cursor, rewrite what was printed or retitle the window.

``visible`` shows each such character as ``[U+XXXX]`` so the user reads exactly the characters
Helm holds. ``json_visible`` does the same to a JSON document with ``\\uXXXX`` escapes, so the
output stays valid JSON with the same value. The Qt helpers in ``ui/text.py`` and every ``helm``
command that prints such data go through here.
"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
"""Controls, format characters (bidi, zero-width, tags), line/paragraph separators, lone
surrogates, private use and unassigned code points."""

INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
"""Characters of other categories that render as nothing (combining grapheme joiner, Hangul
and Khmer fillers)."""

KEEP = "\n\t"
"""What ``visible`` leaves as it is by default: line breaks and tabs are layout, not tricks."""


def hidden(ch: str) -> bool:
    """Whether ``ch`` (one character) would be invisible, reorder text or act on a terminal."""
    return ch in INVISIBLE_LETTERS or unicodedata.category(ch) in HIDDEN_CATEGORIES


def _clean(text: str) -> bool:
    # Every hidden category is non-printable, so a printable string needs only the letter check.
    return text.isprintable() and INVISIBLE_LETTERS.isdisjoint(text)


def visible(text: str, keep: str = KEEP) -> str:
    """``text`` with every hidden character (except those in ``keep``) shown as ``[U+XXXX]``."""
    if _clean(text):
        return text
    return "".join(f"[U+{ord(ch):04X}]" if ch not in keep and hidden(ch) else ch for ch in text)


def one_line(text: str) -> str:
    """``text`` for one line of a terminal or a list: line breaks and tabs shown as
    ``[U+XXXX]`` too, so a name cannot start a line that looks like Helm's own."""
    return visible(text, keep="")


def json_visible(document: str) -> str:
    """A JSON document (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every hidden
    character inside its strings written as a ``\\uXXXX`` escape: the same JSON value, safe
    to print. Outside strings such a document holds only ASCII punctuation and whitespace."""
    if _clean(document.replace("\n", "")):
        return document
    return "".join(_escape(ch) if ch != "\n" and hidden(ch) else ch for ch in document)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
