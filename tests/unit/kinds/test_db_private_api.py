"""Helm's uses of a library's private API are checked against one version of that library.

pyproject.toml pins both libraries exactly; when one of these fails, the pin moved: re-read the
private names the module lists against the new version, then update its ``CHECKED_VERSION``.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version

import aiomysql
import asyncpg

from broker.kinds.db import aiomysql_private, asyncpg_private
from broker.kinds.db.asyncpg_private import TailAnswer, _Tail


def test_aiomysql_is_the_version_whose_private_api_helm_checked() -> None:
    installed = version("aiomysql")
    assert installed == aiomysql_private.CHECKED_VERSION, (
        f"aiomysql is {installed}, but broker/kinds/db/aiomysql_private.py was checked against "
        f"{aiomysql_private.CHECKED_VERSION}: re-read Connection._connect, _reader and _writer"
    )


async def test_the_private_names_helm_uses_exist_in_aiomysql() -> None:
    conn = aiomysql.Connection(host="127.0.0.1", port=1, user="nobody")
    assert callable(conn._connect)
    assert hasattr(conn, "_reader") and hasattr(conn, "_writer")
    assert isinstance(conn.client_flag, int)


def test_asyncpg_is_the_version_whose_private_api_helm_checked() -> None:
    installed = version("asyncpg")
    assert installed == asyncpg_private.CHECKED_VERSION, (
        f"asyncpg is {installed}, but broker/kinds/db/asyncpg_private.py was checked against "
        f"{asyncpg_private.CHECKED_VERSION}: re-read PreparedStatement.__bind_execute"
    )


def test_the_private_method_helm_uses_exists_in_asyncpg() -> None:
    assert callable(asyncpg.prepared_stmt.PreparedStatement._PreparedStatement__bind_execute)


def _message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + (len(body) + 4).to_bytes(4, "big") + body


def _split(chunks: list[bytes]) -> tuple[bytes, TailAnswer]:
    """What asyncpg is given when the server's stream arrives in ``chunks``, as ``WireCap``
    routes it, and Helm's answer."""
    tail = _Tail(asyncio.get_running_loop().create_future())
    seen = b""
    for chunk in chunks:
        if tail.future.done():
            seen += chunk  # past Helm's answer: straight to asyncpg
            continue
        seen += b"".join(tail.feed(chunk))
    return seen, tail.future.result()


def _cuttings(stream: bytes) -> list[list[bytes]]:
    """``stream`` in two pieces at every place, and byte by byte."""
    return [[stream[:cut], stream[cut:]] for cut in range(1, len(stream))] + [
        [stream[i : i + 1] for i in range(len(stream))]
    ]


ROWS = _message(b"2") + _message(b"D", b"\x00\x01" + b"x" * 300) + _message(b"C", b"SELECT 1\0")


async def test_a_pipelined_answer_is_split_from_asyncpgs_at_every_chunk_boundary() -> None:
    """asyncpg gets its part up to the end of its Execute, the messages it reads in any state,
    and the ReadyForQuery; Helm's answer is read whole, however the stream is cut."""
    helms = (
        _message(b"2") + _message(b"N", b"notice") + _message(b"C", b"ROLLBACK\0") + _message(b"E", b"boom")
    )
    stream = ROWS + helms + _message(b"Z", b"E") + _message(b"A", b"later")
    expected = ROWS + _message(b"N", b"notice") + _message(b"Z", b"E") + _message(b"A", b"later")
    for chunks in _cuttings(stream):
        assert _split(chunks) == (expected, TailAnswer(ran=True, failed=True, status=b"E"))


async def test_when_the_statement_fails_the_answer_says_helms_messages_did_not_run() -> None:
    failed = _message(b"2") + _message(b"E", b"division by zero")
    stream = failed + _message(b"Z", b"E")
    for chunks in _cuttings(stream):
        assert _split(chunks) == (stream, TailAnswer(ran=False, failed=False, status=b"E"))
