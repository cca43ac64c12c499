"""Helm's uses of a library's private API are checked against one version of that library.

pyproject.toml pins both libraries exactly; when one of these fails, the pin moved: re-read the
private names the module lists against the new version, then update its ``CHECKED_VERSION``.
"""

from __future__ import annotations

from importlib.metadata import version

import aiomysql
import asyncpg

from broker.kinds.db import aiomysql_private, asyncpg_private


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
