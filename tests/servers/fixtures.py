"""Pytest fixtures that start real servers on 127.0.0.1 (registered from tests/conftest.py).

Servers are session-scoped: each starts once, on first use, and stops at the end of the run.
Where a server holds state a test may change, a function-scoped fixture hands it over reset
(``json_server``, ``oauth2_server``). A missing server fails under CI and skips elsewhere.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import databases, services, tdt
from tests.servers.databases import DatabaseServer
from tests.servers.services import JsonServer, McpHttpServer, OAuth2Server
from tests.support import require


def _require_node_package(path: Path, what: str) -> None:
    require(services.node(), f"{what} needs node")
    require(path.exists(), f"{what} is not installed in .test-deps/node")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[DatabaseServer]:
    """PostgreSQL with database ``helm`` (tables items, notes), roles helm_rw and helm_ro."""
    bindir = databases.postgres_bindir()
    require(bindir is not None, "PostgreSQL server (Debian package postgresql) is not installed")
    assert bindir is not None
    with databases.postgres_server(bindir) as server:
        yield server


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[DatabaseServer]:
    """MariaDB with database ``helm`` (tables items, notes), users helm_rw and helm_ro."""
    binaries = databases.mariadb_binaries()
    require(binaries is not None, "MariaDB server (Debian package mariadb-server) is missing")
    assert binaries is not None
    with databases.mariadb_server(binaries) as server:
        yield server


@pytest.fixture(scope="session")
def json_server_session() -> Iterator[JsonServer]:
    _require_node_package(services.NODE_MODULES / "json-server", "json-server")
    with services.json_server() as server:
        yield server


@pytest.fixture
def json_server(json_server_session: JsonServer) -> JsonServer:
    """json-server 0.17 holding ``services.JSON_SEED``, freshly reset for this test."""
    json_server_session.reset()
    return json_server_session


@pytest.fixture(scope="session")
def httpbin_server() -> Iterator[services.HttpServer]:
    require(services.GUNICORN.exists(), "httpbin is not installed in .test-deps/httpbin")
    with services.httpbin_server() as server:
        yield server


@pytest.fixture(scope="session")
def oauth2_server_session() -> Iterator[OAuth2Server]:
    _require_node_package(services.NODE_MODULES / "oauth2-mock-server", "oauth2-mock-server")
    with services.oauth2_server() as server:
        yield server


@pytest.fixture
def oauth2_server(oauth2_server_session: OAuth2Server) -> OAuth2Server:
    """Strict OAuth2 server (PKCE S256, single-use codes), default settings for this test."""
    oauth2_server_session.configure()
    return oauth2_server_session


@pytest.fixture(scope="session")
def everything_stdio_command() -> list[str]:
    """Command line of the MCP 'everything' server speaking stdio."""
    _require_node_package(services.EVERYTHING_ENTRY, "MCP everything server")
    return services.everything_stdio_command()


@pytest.fixture(scope="session")
def mcp_app_server() -> None:
    """Demands the MCP App test server's parts (node, the ext-apps SDK); start it with
    ``services.mcp_app_command(...)`` as an MCP server profile."""
    _require_node_package(services.EXT_APPS, "the MCP Apps SDK")


@pytest.fixture(scope="session")
def everything_http_server() -> Iterator[McpHttpServer]:
    """The MCP 'everything' server in streamable HTTP mode; its endpoint is ``.mcp_url``."""
    _require_node_package(services.EVERYTHING_ENTRY, "MCP everything server")
    with services.everything_http_server() as server:
        yield server


@pytest.fixture(scope="session")
def mcp_time_command() -> list[str]:
    """Command line of PyPI mcp-server-time (stdio), pinned to UTC."""
    require(services.MCP_TIME.exists(), "mcp-server-time is not installed in .test-deps")
    return [str(services.MCP_TIME), "--local-timezone", "UTC"]


@pytest.fixture(scope="session")
def mcp_git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small git repository (two commits) for the git MCP server to read."""
    require(shutil.which("git"), "git is not installed")
    return services.make_git_repo(tmp_path_factory.mktemp("mcp-git"))


@pytest.fixture(scope="session")
def mcp_git_command(mcp_git_repo: Path) -> list[str]:
    """Command line of PyPI mcp-server-git (stdio), bound to ``mcp_git_repo``."""
    require(services.MCP_GIT.exists(), "mcp-server-git is not installed in .test-deps")
    return [str(services.MCP_GIT), "--repository", str(mcp_git_repo)]


@pytest.fixture(scope="session")
def keyring_available() -> bool:
    """Whether a real Secret Service keychain answers (scripts/check.sh provides one)."""
    if os.environ.get("HELM_TEST_KEYRING") != "1":
        return False
    try:
        from keyring.backends import SecretService

        backend = SecretService.Keyring()
        backend.get_password("helm-test-probe", "probe")
    except Exception:
        return False
    return True


@pytest.fixture(scope="session")
def tdt_program() -> list[str]:
    """The real TDT's program (PyPI thisdamnthing[mcp], in its own venv)."""
    require(tdt.TDT.exists(), "thisdamnthing is not installed in .test-deps/tdt")
    return [str(tdt.TDT)]


@pytest.fixture(scope="session")
def _tdt_template(tdt_program: list[str], tmp_path_factory: pytest.TempPathFactory) -> tdt.TdtWorkspace:
    return tdt.make_workspace(tmp_path_factory.mktemp("tdt") / "template")


@pytest.fixture
def tdt_workspace(_tdt_template: tdt.TdtWorkspace, tmp_path: Path) -> tdt.TdtWorkspace:
    """A fresh copy of a real, seeded TDT workspace (see ``tests.servers.tdt.make_workspace``)."""
    root = tmp_path / "tdt-workspace"
    shutil.copytree(_tdt_template.root, root, symlinks=True)
    return dataclasses.replace(_tdt_template, root=root)
