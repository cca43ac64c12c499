"""The envelope of ``tdt-mcp``: the TDT envelope."""

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


class TdtShape:
    """The TDT envelope ``{api_version, ok, data, coverage, warnings, error}``. The server's
    own envelope passes through unchanged (``results.tdt_envelope``); Helm's errors take the
    same shape with ``error.retry`` set, and a write's failure is never retried blindly."""

    def success(self, data: Any, status: int | None) -> dict[str, Any]:
        return {"ok": True, "data": data, "error": None}

    def failure(self, error: dict[str, Any], err: CallError, write: bool) -> dict[str, Any]:
        retry = "inspect_outcome" if write else _TDT_RETRY.get(err.code, "inspect_outcome")
        return {
            "api_version": TDT_API_VERSION,
            "ok": False,
            "data": err.data,
            "coverage": None,
            "warnings": [],
            "error": {**error, "retry": retry},
        }


TDT_ENVELOPE = TdtShape()
