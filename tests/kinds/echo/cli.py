"""``helm echo add|list|remove``: rooms, from the form (``broker.kinds.cli.profile_group``)."""

from __future__ import annotations

from typing import Any

from broker.kinds.cli import CliIO, profile_group
from tests.kinds.echo import ECHO


def register(sub: Any, io: CliIO) -> None:
    profile_group(sub, io, ECHO, "echo", "room")
