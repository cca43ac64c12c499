"""Built-in connections: calls a page makes that Helm answers itself, through the one admission.

A page can reach more than the connections its manifest declares: every frame has its own state
(``helm.state``, connection ``$state``), and an MCP App also reads its server's resources
(``resources/read``, on its ``app`` connection) and asks Helm to open a link or keep a model
context (``$app``). None of these is a kind the manifest names, but each is a call like any
other: ``Broker.request`` / ``Broker.builtin`` run it inside the same admission as an extension
call, so it counts against the instance's rate limit and in-flight cap, is refused while the
user has stopped its extension (or cancelled when they stop it during the call), and leaves
one record in Activity. The handler checks its own arguments, sizes and standing, raises
``CallError`` to refuse, and scrubs any secret its answer could hold (``broker.redact``).

Ids starting with ``$`` cannot be declared in a manifest (a connection id starts with a letter
or ``_``), so a built-in connection never meets the allowlist.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from broker.context import CallContext

Handler = Callable[[Mapping[str, Any]], Awaitable[Any]]
"""A built-in call's work: the arguments in, the envelope's ``data`` out (``CallError`` refuses)."""

STATE_CONNECTION = "$state"
"""``helm.state`` of extension frames and ``helm/state/*`` of apps."""
APP_HOST_CONNECTION = "$app"
"""What an MCP App asks of Helm's window: ``ui/open-link``, ``ui/update-model-context``."""


class BuiltinKind(Protocol):
    """A built-in connection every page has: the broker looks it up by its ``$`` id."""

    def handler(self, ctx: CallContext, operation: str) -> Handler:
        """The work of one call (a handler that refuses when ``operation`` is not offered)."""
        ...
