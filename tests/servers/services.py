"""HTTP, OAuth2 and MCP servers for tests, from .test-deps (installed by scripts/test-deps.sh).

Every server binds 127.0.0.1 on a free port and runs in its own process group, so teardown ends
it together with anything it spawned.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import LOOPBACK, REPO, TEST_DEPS, free_port, start_server

NODE_SCRIPTS = REPO / "tests" / "servers" / "node"
NODE_MODULES = TEST_DEPS / "node" / "node_modules"
EVERYTHING_ENTRY = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
EXT_APPS = NODE_MODULES / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "app-with-deps.js"
MCP_TIME = TEST_DEPS / "mcp-time" / "bin" / "mcp-server-time"
MCP_GIT = TEST_DEPS / "mcp-git" / "bin" / "mcp-server-git"
GUNICORN = TEST_DEPS / "httpbin" / "bin" / "gunicorn"

JSON_SEED: dict[str, Any] = {
    "items": [
        {"id": 1, "name": "anchor", "qty": 3},
        {"id": 2, "name": "compass", "qty": 1},
        {"id": 3, "name": "sextant", "qty": 0},
    ],
    "profile": {"name": "Helm test data"},
}


def node() -> str | None:
    return shutil.which("node")


def node_env() -> dict[str, str]:
    return {"HELM_TEST_NODE_MODULES": str(NODE_MODULES)}


def _request(url: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("content-type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:  # loopback test server only
        text = resp.read().decode()
    return json.loads(text) if text else None


@dataclass(frozen=True)
class HttpServer:
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


@dataclass(frozen=True)
class JsonServer(HttpServer):
    """json-server 0.17 over a temp db.json seeded with ``JSON_SEED``."""

    db_path: Path

    def reset(self) -> None:
        """Restore the seed data (the fixture does this before every test)."""
        _request(f"{self.url}/__helm/reset", "POST")


@dataclass(frozen=True)
class OAuth2Server(HttpServer):
    """A strict OAuth2 authorization server (see tests/servers/node/oauth2-strict.mjs)."""

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def authorization_endpoint(self) -> str:
        return f"{self.url}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_uri(self) -> str:
        return f"{self.url}/jwks"

    def configure(self, *, scope: str | None = None, expires_in: int = 3600) -> None:
        """Grant exactly ``scope`` (None: whatever the client asked) with this token lifetime."""
        _request(f"{self.url}/__helm/config", "POST", {"scope": scope, "expires_in": expires_in})

    def revoke_refresh_tokens(self) -> None:
        _request(f"{self.url}/__helm/revoke-refresh-tokens", "POST")

    def stats(self) -> dict[str, int]:
        result: dict[str, int] = _request(f"{self.url}/__helm/stats")
        return result


@dataclass(frozen=True)
class McpHttpServer(HttpServer):
    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"


@contextlib.contextmanager
def json_server() -> Iterator[JsonServer]:
    with tempfile.TemporaryDirectory(prefix="helm-json-") as tmp:
        db = Path(tmp) / "db.json"
        db.write_text(json.dumps(JSON_SEED, indent=2))
        port = free_port()
        argv = [node() or "node", str(NODE_SCRIPTS / "json-server.mjs"), str(db), str(port)]
        server = start_server("json-server", argv, port=port, ready_line="json-server ready", env=node_env())
        try:
            yield JsonServer(LOOPBACK, port, db)
        finally:
            server.stop()


@contextlib.contextmanager
def httpbin_server() -> Iterator[HttpServer]:
    port = free_port()
    # Threads let slow endpoints (/delay/n) overlap with other requests in the same test.
    argv = [str(GUNICORN), "-b", f"{LOOPBACK}:{port}", "-k", "gthread", "--threads", "8",
            "-w", "1", "--log-level", "info", "httpbin:app"]  # fmt: skip
    server = start_server("httpbin", argv, port=port, ready_line="Booting worker", timeout=60)
    try:
        yield HttpServer(LOOPBACK, port)
    finally:
        server.stop()


@contextlib.contextmanager
def oauth2_server() -> Iterator[OAuth2Server]:
    port = free_port()
    argv = [node() or "node", str(NODE_SCRIPTS / "oauth2-strict.mjs"), str(port)]
    server = start_server("oauth2", argv, port=port, ready_line="oauth2 ready", env=node_env())
    try:
        yield OAuth2Server(LOOPBACK, port)
    finally:
        server.stop()


def mcp_app_command(*options: str) -> list[str]:
    """The MCP App test server (stdio), built with the ext-apps SDK; see mcp-app.mjs."""
    return [node() or "node", str(NODE_SCRIPTS / "mcp-app.mjs"), *options]


def everything_stdio_command() -> list[str]:
    return [node() or "node", str(EVERYTHING_ENTRY), "stdio"]


@contextlib.contextmanager
def everything_http_server() -> Iterator[McpHttpServer]:
    port = free_port()
    argv = [node() or "node", str(NODE_SCRIPTS / "everything-loopback.mjs"), "streamableHttp"]
    env = {**node_env(), "PORT": str(port), "HOST": LOOPBACK}
    server = start_server("everything-http", argv, port=port, ready_line="listening on port", env=env)
    try:
        yield McpHttpServer(LOOPBACK, port)
    finally:
        server.stop()


def make_git_repo(root: Path) -> Path:
    """A small repository with two commits, for mcp-server-git."""
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=Helm Test", "-c", "user.email=test@helm.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# sample\n")
    subprocess.run([*git, "-C", str(repo), "add", "README.md"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "first"], check=True)
    (repo / "notes.txt").write_text("second\n")
    subprocess.run([*git, "-C", str(repo), "add", "notes.txt"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "second"], check=True)
    return repo
