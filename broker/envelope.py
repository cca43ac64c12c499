"""The result envelopes of the contract; the one place a ``CallError`` becomes a result.

* http: ``{ok, status, data, error}``
* tdt-mcp: the TDT envelope ``{api_version, ok, data, coverage, warnings, error}``; the
  server's envelope passes through unchanged, Helm's own errors use the same shape with
  ``error.retry`` set.
* every other kind: ``{ok, data, error}``

``error`` is ``{code, message}``; ``rate_limited`` adds ``retryAfter`` (seconds).
"""

from __future__ import annotations

from typing import Any

from broker.errors import CallError, ErrorCode

TDT_API_VERSION = "1"

# What a TDT client should do after a Helm-side error (contract: "Obey error.retry").
_TDT_RETRY = {
    ErrorCode.TIMEOUT: "safe",
    ErrorCode.UNAVAILABLE: "safe",
    ErrorCode.RATE_LIMITED: "safe",
    ErrorCode.CONFLICT: "reread",
}


def success(kind: str, data: Any, *, status: int | None = None) -> dict[str, Any]:
    if kind == "http":
        return {"ok": True, "status": status, "data": data, "error": None}
    return {"ok": True, "data": data, "error": None}


def failure(kind: str, err: CallError, *, write: bool = False) -> dict[str, Any]:
    error: dict[str, Any] = {"code": err.code.value, "message": err.message}
    if err.retry_after is not None:
        error["retryAfter"] = err.retry_after
    if kind == "http":
        return {"ok": False, "status": err.status, "data": err.data, "error": error}
    if kind == "tdt-mcp":
        retry = "inspect_outcome" if write else _TDT_RETRY.get(err.code, "inspect_outcome")
        return {
            "api_version": TDT_API_VERSION,
            "ok": False,
            "data": err.data,
            "coverage": None,
            "warnings": [],
            "error": {**error, "retry": retry},
        }
    return {"ok": False, "data": err.data, "error": error}
