"""Keeping the secrets Helm put into a call out of what the call gives back to the extension.

A service can echo what it received: a debugging endpoint returns the request headers, an error
body quotes the ``Authorization`` header, an MCP server returns its own environment. Each kind
that puts a secret into a request (a token header, an OAuth2 access token, a stdio server's
token variable, an MCP bearer) runs the call through ``scrubbed`` with those secrets:

* every occurrence, in every string of the result or error — ``data`` values and object keys at
  any depth, the error message — becomes ``REDACTED``. So does each form a secret takes inside
  JSON text nested in a string (escaped, with ``\\/`` for ``/``) or inside a URL
  (percent-encoded);
* the call is not failed: it returns what it would have, minus the secrets;
* the audit log gets a ``redacted`` record naming the call (workspace, extension, connection,
  operation) and how many occurrences were removed; never the secret.

Every secret is scrubbed whatever its length. A token of a few characters would also blank
ordinary text that happens to contain it; Helm accepts that rather than hand a short secret
over. Scrubbing catches a service that echoes a secret; a server that means to pass on its token
in disguise (encoded, split) can, so give a token only to a server you trust with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from broker.audit import AuditLog, AuditRecord
from broker.errors import CallError

if TYPE_CHECKING:
    from broker.kinds.base import Call, KindEnv

REDACTED = "[redacted by Helm]"


def forms(secret: str) -> set[str]:
    """The secret as sent, and as it reads inside JSON text or a URL."""
    found = {secret, quote(secret, safe="")}
    for escaped in (json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]):
        found |= {escaped, escaped.replace("/", "\\/")}
    return {f for f in found if f}


def _json_escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class Scrubber:
    """Replaces every form of ``secrets`` with ``REDACTED``; ``count`` says how many it replaced."""

    def __init__(self, secrets: Iterable[str]) -> None:
        every = {f for s in secrets if s for f in forms(s)}
        # Longest first: at each position the whole "Bearer <token>" wins over the bare token.
        ordered = sorted(every, key=lambda f: (-len(f), f))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        # The forms as they read in JSON text: JSON escapes each character on its own, so a
        # string holding a form holds its escape in the text of the whole value.
        self._in_text = tuple({_json_escaped(f) for f in every})
        self.count = 0

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        scrubbed, n = self._pattern.subn(REDACTED, value)
        self.count += n
        return scrubbed

    def value(self, value: Any) -> Any:
        """``value`` with every string scrubbed; lists and objects are changed in place.

        The walk uses its own stack, so data nested as deep as a JSON parser allows is fine.
        """
        if isinstance(value, str):
            return self.text(value)
        if self._pattern is None or not isinstance(value, dict | list) or not self._may_hold(value):
            return value
        stack: list[dict[str, Any] | list[Any]] = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                self._rename_keys(node)
                for key, item in node.items():
                    node[key] = self._visit(item, stack)  # same keys: safe while iterating
            else:
                for index, item in enumerate(node):
                    node[index] = self._visit(item, stack)
        return value

    def _may_hold(self, value: Any) -> bool:
        """False only when no string in ``value`` (keys included) can hold a secret: the common
        case, checked on the JSON text in C instead of string by string in Python."""
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return True  # not plain JSON, or too deep for the encoder: walk it
        return any(form in text for form in self._in_text)

    def _visit(self, item: Any, stack: list[dict[str, Any] | list[Any]]) -> Any:
        if isinstance(item, str):
            return self.text(item)
        if isinstance(item, dict | list):
            stack.append(item)
        return item

    def _rename_keys(self, node: dict[str, Any]) -> None:
        keys = list(node)
        renamed = [(self.text(k), v) for k, v in node.items()]
        if all(new == old for (new, _), old in zip(renamed, keys, strict=True)):
            return
        # A key that held no secret keeps its name; a renamed one that now equals another key
        # gets a number, so no value is lost.
        taken = {old for (new, _), old in zip(renamed, keys, strict=True) if new == old}
        node.clear()
        for (key, item), old in zip(renamed, keys, strict=True):
            unique, n = key, 1
            while key != old and unique in taken:
                n += 1
                unique = f"{key} ({n})"
            taken.add(unique)
            node[unique] = item

    def error(self, err: CallError) -> None:
        err.message = self.text(err.message)
        err.args = (err.message,)
        err.data = self.value(err.data)

    def envelope(self, result: dict[str, Any]) -> None:
        result["data"] = self.value(result.get("data"))
        error = result.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            error["message"] = self.text(error["message"])


async def scrubbed(
    env: KindEnv, call: Call[Any], secrets: Iterable[str], work: Awaitable[dict[str, Any]]
) -> dict[str, Any]:
    """Await ``work`` (a kind's call), scrub ``secrets`` from its envelope or its CallError,
    and record in the audit log that the call had a redaction."""
    scrubber = Scrubber(secrets)
    try:
        result = await work
    except CallError as err:
        scrubber.error(err)
        _record(env, call, scrubber.count, err.code.value)
        raise
    scrubber.envelope(result)
    error = result.get("error")
    _record(env, call, scrubber.count, "ok" if result.get("ok") else str((error or {}).get("code")))
    return result


def _record(env: KindEnv, call: Call[Any], count: int, outcome: str) -> None:
    if not count:
        return
    log = env.audit if env.audit is not None else AuditLog.in_home(env.home.path)
    log.record(
        AuditRecord(
            workspace=call.ctx.workspace,
            extension=call.ctx.extension,
            connection=call.connection_id,
            kind=call.connection.kind,
            operation=call.operation,
            decision="redacted",
            outcome=outcome,
            title=f"Helm removed {count} occurrence(s) of a secret it sent from the answer",
        )
    )
