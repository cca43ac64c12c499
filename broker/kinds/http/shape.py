"""The http kind's envelope: ``{ok, status, data, error}``."""

from __future__ import annotations

from typing import Any

from broker.errors import CallError


class HttpShape:
    """``{ok, status, data, error}``: the service's HTTP status beside the data or error."""

    def success(self, data: Any, status: int | None) -> dict[str, Any]:
        return {"ok": True, "status": status, "data": data, "error": None}

    def failure(self, error: dict[str, Any], err: CallError, write: bool) -> dict[str, Any]:
        return {"ok": False, "status": err.status, "data": err.data, "error": error}


HTTP_ENVELOPE = HttpShape()
