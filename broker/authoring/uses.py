"""What an extension's connections use in a Helm home: the lines ``helm dev`` prints first.

For each connection: what it reaches, as plugin review names it, and for a kind with profiles
whether the home has the one it names. No I/O beyond the settings already loaded.
"""

from __future__ import annotations

from broker.authoring.fixtures import FixtureBook
from broker.kinds import KINDS
from broker.kinds.base import Connection
from broker.manifest import Manifest
from broker.settings import Settings


def connection_uses(settings: Settings, conn: Connection) -> str:
    """``[gh] http — service github: set up``, or that it is missing and where to add it."""
    spec = KINDS[conn.kind]
    line = f"[{conn.id}] {conn.kind} — {spec.review(conn).target}"
    profiles, name = spec.profiles, conn.profile
    if profiles is None or name is None:
        return line
    if name in settings.profiles(profiles.section):
        return line + ": set up"
    hint = profiles.missing_hint.format(name=name)
    return line + f": not set up (calls return not_configured); add the {profiles.noun} in Settings{hint}"


def manifest_uses(settings: Settings, manifest: Manifest) -> list[str]:
    return [connection_uses(settings, conn) for conn in manifest.connections]


def replayed_uses(manifest: Manifest, book: FixtureBook) -> list[str]:
    """With ``--replay``: the fixture file that answers each connection."""
    lines = []
    for conn in manifest.connections:
        file = book.file(conn.id)
        missing = "" if file.is_file() else " (no such file yet: its calls return unavailable)"
        lines.append(f"[{conn.id}] {conn.kind} — replayed from {file}{missing}")
    return lines
