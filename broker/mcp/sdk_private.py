"""The one place Helm reads a private part of the MCP SDK, and the SDK version it was checked on.

``ServerSession.request`` must know the JSON-RPC id of the request it is about to send: an
oversized answer is matched to its request by that id, and after a timeout Helm tells the server
which request to cancel. The SDK numbers requests from ``BaseSession._request_id`` (the id
``send_request`` takes next, then increments) and offers no public way to read it. A test fails
as soon as the installed ``mcp`` is not ``CHECKED_VERSION``: whoever moves the version reads the
SDK's ``send_request`` again and then updates it here.
"""

from __future__ import annotations

from mcp.client.session import ClientSession

CHECKED_VERSION = "1.30.0"
"""The ``mcp`` release whose ``BaseSession.send_request`` was read to confirm the rule above."""


def next_request_id(session: ClientSession) -> int:
    """The id ``session.send_request`` gives the next request (read with no await before it)."""
    return session._request_id
