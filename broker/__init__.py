"""Helm's broker: pure asyncio, no Qt. Everything a caller needs is exported here.

async with Broker(home) as broker:
    envelope = await broker.request(ctx, "gh", "issues", {"owner": "me"}, confirm)

One entry point per caller. Each returns the kind's envelope and never raises for anything an
extension or a server can cause:

* ``Broker.request_json(ctx, connection, operation, args_json, confirm)`` — for the web bridge
  (``ui.host``, widget state, the dev window's inspector): JSON text in and out, so a page's
  malformed or oversized message still gets an envelope, counted against the rate limit.
* ``Broker.request(ctx, connection, operation, args, confirm)`` — for Helm's own callers that
  hold the arguments as a dict and a ``Confirmer`` (the CLI's ``helm call``, MCP Apps): the
  whole flow, a write asked and sent in one await.
* ``Broker.call(ctx, connection, operation, args, confirmation=token)`` with
  ``Broker.describe_write(...)`` — the two-step flow, for a caller that shows the dialog itself
  and passes the token only from its Confirm button (the self-test, tests). A read needs no
  token.
* ``Broker.builtin(ctx, connection, operation, args, handler)`` — a built-in call
  (``broker.builtin``: an MCP App's resource reads, links and model context) through the same
  admission, with ``handler`` in place of a kind. ``helm.state`` is the built-in connection
  ``$state`` (``Broker.builtins``), reached through ``request_json`` like any connection.

Typed access to one kind's own operations goes through its spec: ``await Broker.kind(spec)``
returns the running kind typed by the spec, its libraries imported in a worker thread the first
time (``(await broker.kind(MCP)).list_tools(...)``, ``(await broker.kind(HTTP)).connect(...)``);
``Broker.kind_now(spec)`` is the same for a synchronous caller; ``Broker.database()`` is
``kind_now(DB)``, for the DB explorer; ``await Broker.mcp_servers()`` are the MCP sessions the
mcp kind and MCP Apps share.
The kinds themselves, their specs and their profile stores: ``broker.kinds`` and
``broker.profiles`` (docs/architecture.md).

The decisions and pipelines other parts of Helm reuse:

* ``broker.context`` — who asks: one ``Requester`` (``ExtensionFrame``, ``AppInstance``,
  ``AgentRequester``, ``HelmItself``), derived by Helm from where a request arrived and carried
  by the ``CallContext`` (``ctx.who``), the write target, the summary and the records.

* ``broker.approval`` — whether an extension may call: ``Broker.standing(workspace, id)`` or
  ``approval.check(workspace, id)`` returns an ``ApprovalDecision`` (``Standing``: not
  installed, invalid manifest, refused by the organisation's policy, not approved, changed since
  approval, disabled, approved) with a message that tells the user how to fix it. Every caller
  asks this one function.
* ``broker.policy`` — the organisation's policy, which outranks the user: ``in_force()`` is the
  ``PolicyState`` now (the machine's root-owned policy file, and ``HELM_POLICY``), its typed
  ``Policy`` rules, and one pure decision per question (``broker.policy.decide``), asked by the
  approval, every call, MCP servers, agents and ``helm dev``; ``Broker.policy_stops()`` stops
  the running calls of what a new policy forbids (docs/teams.md).
* ``broker.extensions`` — install, ``review`` (a ``Reviewed`` snapshot of what the user is
  shown) and ``approve(broker, reviewed)``, which binds the approval to that snapshot and raises
  ``ApprovalChanged`` when the manifest or a pinned MCP tool changed meanwhile.
* ``broker.writes`` — the one write pipeline (``Broker.writes``): describe a ``WriteTarget``,
  mint a one-time token bound to the requester and the exact request, ask a ``Confirmer``,
  redeem, audit the decision, send, audit the outcome. Extension and app writes, coding agents'
  file writes (``broker.agents``), the DB explorer (``broker.kinds.db.explorer``) and anything else that
  writes on the user's behalf go through it.
* ``broker.visible`` — untrusted text made visible as text, for dialogs and terminals.

The names above are imported on first use, so a module that needs only a leaf (``broker.errors``,
``broker.atomic``) does not import the whole broker: the desktop's start shows its window with
those alone, before the rest of Helm is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from broker.approval import ApprovalDecision, Standing
    from broker.broker import Broker
    from broker.context import AgentRequester, AppInstance, CallContext, ExtensionFrame, HelmItself, Requester
    from broker.errors import (
        ApprovalChanged,
        CallError,
        CredentialStoreError,
        ErrorCode,
        HelmError,
        ManifestError,
        ProfileError,
        SettingsError,
    )
    from broker.manifest import Manifest, Review
    from broker.summary import Confirmer, Decision, WriteSummary
    from broker.writes import Prepared, WritePipeline, WriteTarget

__all__ = [
    "AgentRequester",
    "AppInstance",
    "ApprovalChanged",
    "ApprovalDecision",
    "Broker",
    "CallContext",
    "CallError",
    "Confirmer",
    "CredentialStoreError",
    "Decision",
    "ErrorCode",
    "ExtensionFrame",
    "HelmError",
    "HelmItself",
    "Manifest",
    "ManifestError",
    "Prepared",
    "ProfileError",
    "Requester",
    "Review",
    "SettingsError",
    "Standing",
    "WritePipeline",
    "WriteSummary",
    "WriteTarget",
]

_LAZY = {
    **dict.fromkeys(("ApprovalDecision", "Standing"), "broker.approval"),
    "Broker": "broker.broker",
    **dict.fromkeys(
        ("AgentRequester", "AppInstance", "CallContext", "ExtensionFrame", "HelmItself", "Requester"),
        "broker.context",
    ),
    **dict.fromkeys(
        (
            "ApprovalChanged",
            "CallError",
            "CredentialStoreError",
            "ErrorCode",
            "HelmError",
            "ManifestError",
            "ProfileError",
            "SettingsError",
        ),
        "broker.errors",
    ),
    **dict.fromkeys(("Manifest", "Review"), "broker.manifest"),
    **dict.fromkeys(("Confirmer", "Decision", "WriteSummary"), "broker.summary"),
    **dict.fromkeys(("Prepared", "WritePipeline", "WriteTarget"), "broker.writes"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'broker' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found once; later lookups are plain attribute reads
    return value
