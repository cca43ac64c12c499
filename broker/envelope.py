"""The result envelopes of the contract; the one place a ``CallError`` becomes a result.

``error`` is ``{code, message}`` with a contract code; ``rate_limited`` adds ``retryAfter``
(seconds). Every kind wraps its data and that error in its own shape, which its spec declares
(``KindSpec.envelope``):

* ``PLAIN`` (files, db, mcp…): ``{ok, data, error}``
* http: ``{ok, status, data, error}`` (``broker.kinds.http.result``)
* tdt-mcp: the TDT envelope ``{api_version, ok, data, coverage, warnings, error}``
  (``broker.kinds.mcp.tdt_envelope``)

``success(kind, …)`` and ``failure(kind, …)`` look the shape up in the kind registry; a name
that is no kind (the connection of a refused call was never found) gets ``PLAIN``.
"""

from __future__ import annotations

from typing import Any, Protocol

from broker.errors import CallError


class EnvelopeShape(Protocol):
    """How one kind wraps a result: its data on success, the error object on failure."""

    def success(self, data: Any, status: int | None) -> dict[str, Any]: ...

    def failure(self, error: dict[str, Any], err: CallError, write: bool) -> dict[str, Any]: ...


class PlainShape:
    """``{ok, data, error}``."""

    def success(self, data: Any, status: int | None) -> dict[str, Any]:
        return {"ok": True, "data": data, "error": None}

    def failure(self, error: dict[str, Any], err: CallError, write: bool) -> dict[str, Any]:
        return {"ok": False, "data": err.data, "error": error}


PLAIN = PlainShape()


def error_object(err: CallError) -> dict[str, Any]:
    """The ``error`` of an envelope: the contract's code and Helm's own message."""
    error: dict[str, Any] = {"code": err.code.value, "message": err.message}
    if err.retry_after is not None:
        error["retryAfter"] = err.retry_after
    return error


def shape(kind: str) -> EnvelopeShape:
    # Imported here: the registry imports every kind, and the kinds build their envelopes here.
    from broker.kinds import KINDS

    spec = KINDS.get(kind)
    return PLAIN if spec is None else spec.envelope


def success(kind: str, data: Any, *, status: int | None = None) -> dict[str, Any]:
    return shape(kind).success(data, status)


def failure(kind: str, err: CallError, *, write: bool = False) -> dict[str, Any]:
    return shape(kind).failure(error_object(err), err, write)
