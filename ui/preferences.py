"""The user's preferences for Helm's own look, kept in ``<home>/preferences.json``.

Format (version 1)::

    {"version": 1, "appearance": "system", "font_pt": null, "get_started": true}

``appearance`` is ``system`` (follow the system's colour scheme), ``light`` or ``dark``;
``font_pt`` the text size in points (null: the system's); ``get_started`` whether the Get
started panel is shown (the user dismissed it: false). Preferences only, nothing secret.
Written atomically. A file Helm cannot read is reported (``problem``) and left as it is: the
preferences then live for this session only and nothing is written until it is fixed or removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict
from ui.theme_data import MAX_FONT_PT, MIN_FONT_PT, Appearance

VERSION = 1
FILE_NAME = "preferences.json"


@dataclass(frozen=True)
class Preferences:
    appearance: Appearance = Appearance.SYSTEM
    font_pt: float | None = None
    get_started: bool = True

    def changed(self, **values: Any) -> Preferences:
        return replace(self, **values)


class PreferencesStore:
    """The preferences of one Helm home: read once, then kept and written on each change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self._prefs: Preferences | None = None

    @classmethod
    def in_home(cls, home: Path) -> PreferencesStore:
        return cls(home / FILE_NAME)

    def get(self) -> Preferences:
        if self._prefs is None:
            try:
                self._prefs = _read(self.path)
            except SettingsError as err:
                self.problem = str(err)
                self._prefs = Preferences()
        return self._prefs

    def set(self, prefs: Preferences) -> None:
        """Keep ``prefs``; raises SettingsError (after keeping them for this session) when the
        file cannot be written over because it could not be read."""
        self.get()
        self._prefs = prefs
        if self.problem is not None:
            raise SettingsError(self.problem)
        raw = {
            "version": VERSION,
            "appearance": prefs.appearance.value,
            "font_pt": prefs.font_pt,
            "get_started": prefs.get_started,
        }
        text = json.dumps(raw, indent=2, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode("utf-8"), mode=0o600)


def _read(path: Path) -> Preferences:
    broken = (
        f"the preferences file {path} cannot be read; Helm left it as it is and will not save "
        "preferences until it is fixed or removed"
    )
    try:
        raw: Any = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return Preferences()
    except (OSError, ValueError, DuplicateKeyError, RecursionError) as exc:
        raise SettingsError(broken) from exc
    try:
        return _parse(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise SettingsError(broken) from exc


def _parse(raw: Any) -> Preferences:
    if not isinstance(raw, dict) or raw.get("version") != VERSION:
        raise ValueError("not a version 1 preferences file")
    font = raw.get("font_pt")
    if font is not None and (
        isinstance(font, bool) or not isinstance(font, int | float) or not MIN_FONT_PT <= font <= MAX_FONT_PT
    ):
        raise ValueError("font_pt is out of range")
    shown = raw.get("get_started", True)
    if not isinstance(shown, bool):
        raise TypeError("get_started is true or false")
    appearance = Appearance(raw.get("appearance", Appearance.SYSTEM.value))
    return Preferences(appearance, None if font is None else float(font), shown)
