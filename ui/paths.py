"""Paths as Helm shows them: relative to the home folder (``~/src/app``), the full path in a
tooltip and in the accessible description, so a long temp path never crowds a list and the
whole path is one hover (or one screen-reader query) away.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePath

from ui.qt import QLabel, QTreeWidgetItem, QWidget
from ui.text import elide, plain_label, plain_tip

__all__ = ["home_relative", "path_label", "set_item_path", "shown_path"]


def shown_path(path: str | PurePath, home: str | PurePath | None = None) -> str:
    """``path`` with the home folder written ``~`` (``~/src/app``); any other path as it is."""
    full = PurePath(path)
    base = PurePath(home) if home is not None else Path.home()
    try:
        rest = full.relative_to(base)
    except ValueError:
        return str(full)
    return "~" if rest == PurePath(".") else "~" + os.sep + str(rest)


def home_relative(text: str, home: str | PurePath | None = None) -> str:
    """``text`` with every path under the home folder written from ``~`` (for a sentence that
    names a path, such as where secrets are kept)."""
    base = str(PurePath(home) if home is not None else Path.home()).rstrip(os.sep)
    if not base:
        return text
    # The home folder itself, or followed by a separator; not /home/u as a prefix of /home/u2,
    # nor inside another path (/srv/home/u).
    starts = r"(?<![\w.~/\\-])"
    ends = "(?=" + re.escape(os.sep) + r"|$|[\s)\"',;])"
    return re.sub(starts + re.escape(base) + ends, "~", text)


def path_label(path: str | PurePath, parent: QWidget | None = None) -> QLabel:
    """A label showing ``path`` home-relative, the full path in its tooltip."""
    label = plain_label(shown_path(path), parent)
    label.setToolTip(plain_tip(str(path)))
    label.setAccessibleDescription(str(path))
    return label


def set_item_path(item: QTreeWidgetItem, column: int, path: str | PurePath, limit: int = 80) -> None:
    """Show ``path`` home-relative in ``item``'s ``column``, the full path in its tooltip."""
    item.setText(column, elide(shown_path(path), limit))
    item.setToolTip(column, plain_tip(str(path)))
