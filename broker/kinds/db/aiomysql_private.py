"""Every use Helm makes of aiomysql's private API, checked against one aiomysql version.

aiomysql has no public way to open a connection that does not offer multiple statements, and
none to send protocol commands of Helm's own (server-side prepared statements, pipelined
commands, COM_RESET_CONNECTION). So aiomysql opens and authenticates the connection — the part
worth reusing: the handshake and the sign-in plugins — and Helm takes over its byte stream.

tests/unit/kinds/test_db_private_api.py fails as soon as the installed aiomysql is not
``CHECKED_VERSION``. Then re-read ``Connection._connect``, ``_reader`` and ``_writer`` in the new
version (and that ``_connect`` still leaves the stream idle after the sign-in), and update it.
"""

from __future__ import annotations

import asyncio

import aiomysql

CHECKED_VERSION = "0.3.2"


async def sign_in(conn: aiomysql.Connection) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect and authenticate ``conn`` (with the client flags it holds); its stream after that."""
    await conn._connect()
    return conn._reader, conn._writer
