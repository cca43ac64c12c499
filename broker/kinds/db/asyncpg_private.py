"""Every use Helm makes of asyncpg's private API, checked against one asyncpg version.

A read fetches at most ``FETCH_ROWS`` rows: memory stays bounded and the row limit is seen
without reading the rest of a large result. asyncpg's public way to bound a fetch is a cursor,
which costs one more round trip after the rows (to close its portal, which Helm's ROLLBACK ends
anyway). ``PreparedStatement.fetchrow`` and ``fetchval`` bound their fetch in the same single
Bind/Execute/Sync through a private method, with a limit of 1; Helm calls it with its own limit.

tests/unit/kinds/test_db_private_api.py fails as soon as the installed asyncpg is not
``CHECKED_VERSION``. Then re-read ``PreparedStatement.__bind_execute`` in the new version, and
update it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CHECKED_VERSION = "0.32.0"


async def fetch_at_most(stmt: Any, args: Sequence[Any], limit: int, seconds: float) -> list[Any]:
    """``stmt.fetch(*args, timeout=seconds)``, stopped after ``limit`` rows (the rest stay in
    the open portal)."""
    rows: list[Any] = await stmt._PreparedStatement__bind_execute(tuple(args), limit, seconds)
    return rows
