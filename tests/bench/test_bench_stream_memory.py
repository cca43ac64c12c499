"""Memory while a server sends 1 GiB into one call: an http answer, an MCP tool result, a
database result. Helm keeps at most the contract's cap of each (1 MiB, 1,000 rows) and answers
``too_large``; the row is the growth of the peak of Python's heap during the call (traced by
``tracemalloc``), against the cap as the baseline (the goal is a few MiB, whatever the server
sends).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from broker import CallContext
from broker.kinds.http.transport import MAX_BODY
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_setup import add_profile, server_profile
from tests.unit.kinds.http_setup import service_extension
from tests.unit.kinds.mcp_setup import TDT_LIKE, add_stdio, code, mcp_extension

GIB = 1024 * 1024 * 1024
MIB = 1024 * 1024
PIECE = b"x" * (64 * 1024)


@contextlib.contextmanager
def _peak_growth() -> Iterator[list[float]]:
    """Yields a list that holds, after the block, the growth of the peak of Python's heap in
    MiB (every buffer on these paths is a Python object; the peak is exact, where the resident
    size would hide growth that reuses pages freed earlier)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        out: list[float] = []
        yield out
        out.append((tracemalloc.get_traced_memory()[1] - before) / MIB)
    finally:
        tracemalloc.stop()


@contextlib.asynccontextmanager
async def _gib_http_server() -> AsyncIterator[str]:
    """Answers every request with a 1 GiB JSON body, sent until the client stops reading."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            writer.write(b"Content-Length: %d\r\n\r\n" % GIB)
            for _ in range(GIB // len(PIECE)):
                writer.write(PIECE)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_memory_while_an_http_server_streams_1_gib(bench: Bench, tmp_path: Path):
    async with _gib_http_server() as url, new_broker(tmp_path / "home") as broker:
        ctx = await service_extension(broker, tmp_path, url, {"big": {"method": "GET", "path": "/big"}})
        with _peak_growth() as growth:
            result = await broker.call(ctx, "api", "big", {})
    assert code(result) == "too_large", result
    bench.record("memory: http call, server streams 1 GiB", growth[0], MAX_BODY / MIB, unit="MiB",
                 note="peak heap growth; baseline: the 1 MiB cap; answered too_large")  # fmt: skip


async def test_memory_while_an_mcp_server_streams_1_gib(bench: Bench, tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["flood"])
        with _peak_growth() as growth:
            result = await broker.call(ctx, "m", "flood", {"stream": True, "size": GIB})
    assert code(result) == "too_large", result
    bench.record("memory: mcp call, server streams 1 GiB on one line", growth[0], 1.0, unit="MiB",
                 note="peak heap growth; baseline: the 1 MiB cap; answered too_large")  # fmt: skip


@pytest.mark.parametrize("server", ["postgres_server", "mariadb_server"])
async def test_memory_while_a_database_streams_1_gib(
    bench: Bench, tmp_path: Path, server: str, request: pytest.FixtureRequest
):
    db: DatabaseServer = request.getfixturevalue(server)
    blob = {"postgres": "repeat('x', 1048576)", "mysql": "REPEAT('x', 1048576)"}
    rows = {"postgres": "generate_series(1, 1024)", "mysql": "seq_1_to_1024"}
    engine = "postgres" if db.engine == "postgres" else "mysql"
    sql = f"SELECT {blob[engine]} AS b FROM {rows[engine]}"
    async with new_broker(tmp_path / "home") as broker:
        prof, pw = server_profile(db, "helm_ro")
        add_profile(broker, prof, pw)
        conn = {"id": "app", "kind": "db", "service": "main", "engine": engine,
                "queries": {"blobs": {"sql": sql, "params": []}}}  # fmt: skip
        ctx = await setup_extension(broker, tmp_path, manifest_dict([conn]))
        with _peak_growth() as growth:
            result = await broker.call(CallContext(ctx.workspace, ctx.extension, "m"), "app", "blobs", {})
    assert code(result) == "too_large", result
    name = "PostgreSQL" if engine == "postgres" else "MariaDB"
    bench.record(f"memory: db call ({name}), 1,024 rows of 1 MiB", growth[0], 1.0, unit="MiB",
                 note="peak heap growth; baseline: the 1 MiB result cap; answered too_large")  # fmt: skip
