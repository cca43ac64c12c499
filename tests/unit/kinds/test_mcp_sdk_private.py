"""Helm's one read of a private part of the MCP SDK holds for the installed SDK, and only for it."""

from __future__ import annotations

from importlib.metadata import version

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from broker.mcp.sdk_private import CHECKED_VERSION, next_request_id


def test_the_installed_mcp_sdk_is_the_version_whose_private_request_id_was_checked():
    installed = version("mcp")
    assert installed == CHECKED_VERSION, (
        f"mcp {installed} is installed, but Helm's read of BaseSession._request_id was checked on "
        f"{CHECKED_VERSION}. Read send_request in mcp/shared/session.py of {installed}: if it still "
        "takes self._request_id as the id of the request it sends, set CHECKED_VERSION in "
        "broker/mcp/sdk_private.py to it; if not, change next_request_id."
    )


async def test_next_request_id_is_the_id_of_the_request_the_session_sends_next():
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](4)
    client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](4)
    async with (
        to_client,
        client_reads,
        client_writes,
        from_client,
        ClientSession(client_reads, client_writes) as s,
    ):
        seen = []
        for _ in range(3):
            expected = next_request_id(s)
            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(s.send_ping)
                    sent = (await from_client.receive()).message.root
                    assert isinstance(sent, types.JSONRPCRequest)
                    reply = types.JSONRPCResponse(jsonrpc="2.0", id=sent.id, result={})
                    await to_client.send(SessionMessage(types.JSONRPCMessage(reply)))
            seen.append((expected, sent.id))
    assert [sent for _, sent in seen] == [expected for expected, _ in seen]
    assert len({sent for _, sent in seen}) == 3
