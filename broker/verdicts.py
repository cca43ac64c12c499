"""The manifests the schema found valid, kept in the home: an unchanged manifest is not validated
by jsonschema again (``broker.manifest.load``), so a start where no manifest changed does not
even import it (0.12 s, on the way to the first extension frame).

``HOME/cache/manifest-verdicts.json``, oldest first::

    {"version": 1, "valid": ["<sha256 hex>", ...]}

Each entry is the key ``broker.manifest`` makes of everything the schema's validation reads:
the manifest file's exact bytes, the composed schema, Helm's and jsonschema's installed versions
(``installed_version``). A change of any of them finds no verdict. Only valid verdicts are kept:
an invalid manifest is validated at every read, since its problems are what the user must see.
Helm's own rules beside the schema run at every read either way.

A cache: at most ``KEEP`` entries (the oldest go first), written atomically with mode 0600
(``broker.atomic``), once for each new verdict and never for a verdict found. A file that cannot
be read (damaged, cut short, not in this format) counts as empty and is replaced at the next
write; a write that fails (a full disk, a read-only home) is logged and the read goes on. Two
Helm processes writing at once may lose one new verdict, which costs one validation later, so
there is no lock. A verdict written into the home by someone else skips the schema alone, and
whoever can write the home can already approve an extension.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from pathlib import Path

from broker.atomic import write_atomic
from broker.jsonutil import loads_strict

log = logging.getLogger("helm.manifest")

VERSION = 1
FOLDER = "cache"
FILE = "manifest-verdicts.json"
KEEP = 512
MAX_FILE_BYTES = 64 * 1024
"""More than ``KEEP`` entries take; a larger file is not Helm's and is ignored."""


class Verdicts:
    """The kept verdicts of one Helm home (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._valid: set[str] | None = None  # read at the first look

    @classmethod
    def in_home(cls, home: Path) -> Verdicts:
        return cls(home / FOLDER / FILE)

    def __contains__(self, key: str) -> bool:
        if self._valid is None:
            self._valid = set(_read(self.path))
        return key in self._valid

    def add(self, key: str) -> None:
        """Keep ``key`` (also in this process when the file cannot be written: never raises)."""
        # Read again: another Helm process may have kept verdicts since this one looked.
        older = [k for k in _read(self.path) if k != key]
        kept = [*older[max(0, len(older) - KEEP + 1) :], key]  # the oldest go first
        self._valid = (self._valid or set()) | set(kept)
        data = (json.dumps({"version": VERSION, "valid": kept}, indent=2) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(mode=0o700, exist_ok=True)  # in an existing home only
            write_atomic(self.path, data, mode=0o600)
        except OSError as exc:
            log.warning("could not keep a manifest's verdict in %s: %s", self.path, exc.strerror)


def _read(path: Path) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return []
    if len(data) > MAX_FILE_BYTES:
        return []
    try:
        value = loads_strict(data)
    except ValueError:  # not UTF-8, not JSON, a repeated key, nested too deep
        return []
    valid = value.get("valid") if isinstance(value, dict) and value.get("version") == VERSION else None
    if not isinstance(valid, list) or not all(isinstance(k, str) for k in valid):
        return []
    return valid


@functools.cache
def installed_version(distribution: str) -> str | None:
    """``distribution``'s version from the name of its ``NAME-VERSION.dist-info`` folder, the
    first on ``sys.path``: what ``importlib.metadata.version`` answers, without its import (about
    45 ms: email, zipfile, csv…; this takes under a millisecond). None when there is no such
    folder (an egg, a bundle without the metadata): then no verdict is kept or used."""
    prefix = distribution.replace("-", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            low = name.lower()
            if low.startswith(prefix) and low.endswith(".dist-info"):
                return name[len(prefix) : -len(".dist-info")]
    return None
