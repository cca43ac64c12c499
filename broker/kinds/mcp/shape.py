"""The envelope of ``tdt-mcp``: the TDT envelope, for TDT's answers and Helm's own errors.

TDT (``thisdamnthing`` 0.1.11) answers every tool call with
``{api_version: 1, ok, data, coverage: {truncated, omissions}, warnings, error}``, where
``error`` is ``{code, message, retry}``. Helm passes that through unchanged
(``broker.mcp.results.tdt_envelope``) and gives its own errors exactly the same keys, so an
extension reads one shape whoever answered.

``error.retry`` follows TDT's rules:

* ``safe``: nothing happened and the same call may simply be made again (TDT says it when a
  write found another one in progress). Helm says it when it sent nothing for a passing reason
  (the rate limit), and when a read could not be answered (a read changes nothing).
* ``inspect_outcome``: a write may or may not have happened (TDT says it when a write failed
  part way). Helm says it for a write it sent and could not see the end of: a timeout, a child
  that stopped, an answer it could not take. The extension reads the matching ``*_status``
  tool, and never repeats the write on its own.
* ``reread``: TDT's default for a refusal, where nothing happened but the same call would be
  refused again. Helm says it for its own refusals (an undeclared tool, a declined or
  unconfirmed write, an apply without a preview, a result over the limit).
"""

from __future__ import annotations

import math
from typing import Any

from broker.errors import CallError, ErrorCode

TDT_API_VERSION = 1

_UNCERTAIN = frozenset({ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE, ErrorCode.TOO_LARGE})
"""For a write: Helm sent it, or may have, and does not know what TDT did."""
_PASSING = frozenset({ErrorCode.RATE_LIMITED, ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE})
"""For a read: nothing changed, and the same read may work in a moment."""


def retry_for(code: ErrorCode, write: bool) -> str:
    """TDT's ``error.retry`` for a Helm error with ``code`` on a read or a write."""
    if code is ErrorCode.RATE_LIMITED:
        return "safe"  # refused before anything was sent, whatever the call
    if write:
        return "inspect_outcome" if code in _UNCERTAIN else "reread"
    return "safe" if code in _PASSING else "reread"


def no_coverage() -> dict[str, Any]:
    """TDT's coverage of a result that has no data: nothing cut, nothing left out."""
    return {"truncated": False, "omissions": []}


class TdtShape:
    """The TDT envelope. The server's own envelope passes through unchanged; Helm's errors take
    TDT's keys exactly (``error`` is ``{code, message, retry}``: a rate limit's wait is said in
    its message, as TDT has no other field for it)."""

    def success(self, data: Any, status: int | None) -> dict[str, Any]:
        return {
            "api_version": TDT_API_VERSION,
            "ok": True,
            "data": data,
            "coverage": no_coverage(),
            "warnings": [],
            "error": None,
        }

    def failure(self, error: dict[str, Any], err: CallError, write: bool) -> dict[str, Any]:
        message = str(error["message"])
        if err.retry_after is not None:
            message += f" (call again in {math.ceil(err.retry_after)} s)"
        return {
            "api_version": TDT_API_VERSION,
            "ok": False,
            "data": err.data,
            "coverage": no_coverage(),
            "warnings": [],
            "error": {
                "code": error["code"],
                "message": message,
                "retry": retry_for(err.code, write),
            },
        }


TDT_ENVELOPE = TdtShape()
