"""What ``helm dev`` points out about a call that Helm answers anyway (no I/O).

The contract drops an http query parameter whose placeholder has no value, and ignores
arguments that nothing in the declaration uses: both are right for a user, and both hide an
author's typo (``{limt}``, ``{"owner": …}`` for ``{user}``). Each kind that has such rules says
them (``KindSpec.hints``); author mode shows them beside the call, in the call inspector and on
the terminal. They change nothing about the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from broker.kinds import KINDS
from broker.kinds.base import Connection


def call_hints(conn: Connection, operation: str, args: Mapping[str, Any]) -> tuple[str, ...]:
    """The hints for one call of a declared connection (none for a kind without them)."""
    spec = KINDS.get(conn.kind)
    if spec is None or spec.hints is None:
        return ()
    return spec.hints(conn, operation, args)
