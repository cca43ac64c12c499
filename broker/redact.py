"""Keeping the secrets Helm put into a call out of what the call gives back to the extension.

A service can echo what it received: a debugging endpoint returns the request headers, an error
body quotes the ``Authorization`` header, an MCP server returns its own environment. Each kind
that puts a secret into a request (a token header, an OAuth2 access token, a stdio server's
token variable, an MCP bearer) runs the call through ``scrubbed`` with those secrets:

* every occurrence, in every string of the result or error — ``data`` values and object keys at
  any depth, the error message — becomes ``REDACTED``. So does every form in the documented set
  (docs/security.md), matched character by character: each character of the secret as itself,
  percent-encoded (its UTF-8 bytes, upper- or lower-case hex; a space also as ``+``), or
  JSON-escaped (``\\"``, ``\\/``, ``\\uXXXX`` in either case…), in any mix. That covers
  ``quote`` with any ``safe``, ``quote_plus``, form encoding and JSON text nested in a string;
* the call is not failed: it returns what it would have, minus the secrets;
* the audit log gets a ``redacted`` record naming the call (workspace, extension, connection,
  operation) and how many occurrences were removed; never the secret.

Every secret is scrubbed whatever its length. A token of a few characters would also blank
ordinary text that happens to contain it; Helm accepts that rather than hand a short secret
over. Scrubbing catches a service that echoes a secret; a server that means to pass on its token
in disguise (encoded, split) can, so give a token only to a server you trust with it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

from broker.audit import AuditLog, AuditRecord
from broker.errors import CallError

if TYPE_CHECKING:
    from broker.kinds.base import Call, KindEnv

REDACTED = "[redacted by Helm]"


def _json_escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _hex(number: int, width: int) -> str:
    """A pattern for ``number`` in hex, each letter digit in either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _char_forms(char: str) -> tuple[set[str], list[str]]:
    """The forms of one character: literal texts, and patterns (percent and ``\\u`` escapes)."""
    literal = {char, _json_escaped(char), json.dumps(char)[1:-1]}
    if char == "/":
        literal.add("\\/")
    patterns = ["".join("%" + _hex(b, 2) for b in char.encode("utf-8", "surrogatepass"))]
    if char == " ":
        patterns.append(re.escape("+"))
    return literal, patterns


@functools.lru_cache(maxsize=1024)
def _char_pattern(char: str, in_text: bool) -> str:
    """One character of a secret in any of its forms; ``in_text``: as each form reads once the
    string holding it is itself JSON text (``_may_hold`` searches the whole value's JSON).

    Kept per character: a scrubber is made for every call that carries a secret, and building
    each character's forms again cost about 1.3 ms per call for a 40-character token. The cache
    holds characters, never a whole secret."""
    literal, patterns = _char_forms(char)
    units = [r"\\u" + _hex(u, 4) for u in _utf16(char)]
    if in_text:
        literal = {_json_escaped(f) for f in literal}
        units = [r"\\\\u" + u[3:] for u in units]
    alternatives = [re.escape(f) for f in sorted(literal, key=lambda f: (-len(f), f))]
    return "(?:" + "|".join([*alternatives, "".join(units), *patterns]) + ")"


def secret_pattern(secret: str, *, in_text: bool = False) -> str:
    """A regular expression matching ``secret`` in every form of the documented set."""
    return "".join(_char_pattern(c, in_text) for c in secret)


def _marks(secret: str) -> set[str]:
    """What JSON text holds wherever a character of ``secret`` is encoded (``%``, a ``\\u``
    escape, a space as ``+``, the escapes of characters JSON escapes anyway)."""
    marks = {"%", _json_escaped("\\u")}
    if " " in secret:
        marks.add("+")
    if any(_escaped_in_json(c) for c in secret):
        marks.add("\\")
    return marks


@functools.lru_cache(maxsize=1024)
def _escaped_in_json(char: str) -> bool:
    """Whether JSON text may hold ``char`` escaped (``/`` is, by some encoders); per character,
    as ``_char_pattern`` is."""
    return _json_escaped(char) != char or char == "/"


class Scrubber:
    """Replaces every form of ``secrets`` with ``REDACTED``; ``count`` says how many it replaced."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first: at each position the whole "Bearer <token>" wins over the bare token.
        ordered = sorted({s for s in secrets if s}, key=lambda s: (-len(s), s))
        self._pattern = re.compile("|".join(secret_pattern(s) for s in ordered)) if ordered else None
        # The forms as they read in JSON text: JSON escapes each character on its own, so a
        # string holding a form holds its escape in the text of the whole value. A secret that
        # holds another one is found by the shorter one's pattern.
        inner = [s for s in ordered if not any(o != s and o in s for o in ordered)]
        in_text = "|".join(secret_pattern(s, in_text=True) for s in inner)
        self._in_text = re.compile(in_text) if inner else None
        self._plain = tuple({_json_escaped(f) for s in inner for f in (s, s.replace(" ", "+"))})
        self._marks = tuple({mark for s in inner for mark in _marks(s)})
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
        if any(form in text for form in self._plain):
            return True
        if not any(mark in text for mark in self._marks):
            return False  # no character of a secret can be encoded here: only its plain form
        return self._in_text is not None and self._in_text.search(text) is not None

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
    given = tuple(secret for secret in secrets if secret)
    if not given:  # Helm sent no secret (most stdio servers get none): nothing to scrub or record
        return await work
    scrubber = Scrubber(given)
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
