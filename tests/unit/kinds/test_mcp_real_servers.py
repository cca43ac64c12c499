"""The mcp kind against real MCP servers: server-everything (stdio and streamable HTTP),
mcp-server-time, mcp-server-git, and a flooding streamable HTTP server of our own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.mcp import profiles
from broker.redact import REDACTED
from tests.helpers import new_broker
from tests.servers.services import McpHttpServer
from tests.support import LOOPBACK, REPO, free_port, running_server
from tests.unit.kinds.mcp_setup import TOKEN, add_http, add_stdio, code, mcp_extension, use_limits


@pytest.fixture(autouse=True)
def limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from broker.mcp.session import McpLimits

    use_limits(monkeypatch, McpLimits(call_timeout=15.0, start_timeout=30.0))


async def test_everything_over_stdio_sees_exactly_the_safe_environment_and_its_token_comes_back_redacted(
    tmp_path: Path, everything_stdio_command: list[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HELM_TEST_SECRET", "must-not-leak")
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "everything", everything_stdio_command, token_env="EVERYTHING_TOKEN")
        ctx = await mcp_extension(broker, tmp_path, "everything", ["get-env", "echo"])
        result = await broker.call(ctx, "m", "get-env", {})
        echo = await broker.call(ctx, "m", "echo", {"message": "ahoy"})
        records = [r for r in broker.audit.records() if r.decision == "redacted"]
    assert result["ok"]
    env = json.loads(result["data"][0]["text"])
    assert env == profiles.safe_environment() | {"EVERYTHING_TOKEN": REDACTED}
    assert TOKEN not in json.dumps(result)
    assert echo["data"] == [{"type": "text", "text": "Echo: ahoy"}]
    assert [(r.kind, r.connection, r.operation, r.outcome) for r in records] == [
        ("mcp", "m", "get-env", "ok")
    ]


async def test_everything_over_stdio_returns_structured_content_as_data(
    tmp_path: Path, everything_stdio_command: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "everything", everything_stdio_command)
        ctx = await mcp_extension(broker, tmp_path, "everything", ["get-structured-content"])
        result = await broker.call(ctx, "m", "get-structured-content", {"location": "Chicago"})
    assert result["ok"]
    assert set(result["data"]) == {"temperature", "conditions", "humidity"}


async def test_everything_over_streamable_http_answers_tool_calls(
    tmp_path: Path, everything_http_server: McpHttpServer
):
    async with new_broker(tmp_path / "home") as broker:
        add_http(broker, "everything", everything_http_server.mcp_url)
        ctx = await mcp_extension(broker, tmp_path, "everything", ["echo", "get-sum"])
        echo = await broker.call(ctx, "m", "echo", {"message": "over http"})
        total = await broker.call(ctx, "m", "get-sum", {"a": 2, "b": 40})
    assert echo["data"] == [{"type": "text", "text": "Echo: over http"}]
    assert "42" in total["data"][0]["text"]


async def test_mcp_server_time_answers_in_utc(tmp_path: Path, mcp_time_command: list[str]):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "time", mcp_time_command)
        ctx = await mcp_extension(broker, tmp_path, "time", ["get_current_time"])
        result = await broker.call(ctx, "m", "get_current_time", {"timezone": "UTC"})
        wrong = await broker.call(ctx, "m", "get_current_time", {"timezone": "Nowhere/Atlantis"})
    assert result["ok"]
    assert "UTC" in json.dumps(result["data"])
    assert code(wrong) == "tool_error"


async def test_mcp_server_git_reads_the_log(tmp_path: Path, mcp_git_command: list[str], mcp_git_repo: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "git", mcp_git_command)
        ctx = await mcp_extension(broker, tmp_path, "git", ["git_log", "git_status"])
        log = await broker.call(ctx, "m", "git_log", {"repo_path": str(mcp_git_repo), "max_count": 5})
    assert log["ok"]
    text = json.dumps(log["data"])
    assert "first" in text
    assert "second" in text


@pytest.fixture(params=["json", "sse"], scope="module")
def odd_http(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    argv = [
        sys.executable,
        str(REPO / "tests" / "servers" / "mcp_http_odd.py"),
        str(port),
        TOKEN,
        request.param,
    ]
    with running_server("mcp-http-odd", argv, port=port, ready_line="odd-http ready"):
        yield f"http://{LOOPBACK}:{port}/mcp"


async def test_http_sends_the_token_as_a_bearer_header_and_an_echo_of_it_is_redacted(
    tmp_path: Path, odd_http: str
):
    async with new_broker(tmp_path / "home") as broker:
        add_http(broker, "odd", odd_http)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["whoami", "refuse"])
        result = await broker.call(ctx, "m", "whoami", {})
        refused = await broker.call(ctx, "m", "refuse", {})
    # The server received exactly "Bearer <token>" (that whole form is what was redacted).
    assert result["data"] == {"authorization": REDACTED}
    assert code(refused) == "tool_error"
    assert refused["data"][0]["text"].endswith(f"not allowed with {REDACTED}")
    assert TOKEN not in json.dumps([result, refused])


async def test_http_with_a_refused_token_is_unavailable_and_says_so(tmp_path: Path, odd_http: str):
    async with new_broker(tmp_path / "home") as broker:
        add_http(broker, "odd", odd_http)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["whoami"])
        profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
            profiles.parse("odd", {"url": odd_http, "auth": "bearer"}), {"token": "wrong"}
        )
        result = await broker.call(ctx, "m", "whoami", {})
    assert code(result) == "unavailable"
    assert "token" in result["error"]["message"]
    assert "wrong" not in json.dumps(result)


async def test_http_flood_is_too_large_and_the_session_keeps_working(tmp_path: Path, odd_http: str):
    async with new_broker(tmp_path / "home") as broker:
        add_http(broker, "odd", odd_http)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["flood", "whoami"])
        big = await broker.call(ctx, "m", "flood", {"size": 8 * 1024 * 1024})
        small = await broker.call(ctx, "m", "flood", {"size": 1000})
    assert code(big) == "too_large"
    assert small["ok"]


async def test_an_http_server_that_died_is_said_to_be_unreachable_not_to_be_started_again(tmp_path: Path):
    port = free_port()
    argv = [sys.executable, str(REPO / "tests" / "servers" / "mcp_http_odd.py"), str(port), TOKEN, "json"]
    async with new_broker(tmp_path / "home") as broker:
        with running_server("mcp-http-odd", argv, port=port, ready_line="odd-http ready"):
            add_http(broker, "odd", f"http://{LOOPBACK}:{port}/mcp")
            ctx = await mcp_extension(broker, tmp_path, "odd", ["whoami"])
            assert (await broker.call(ctx, "m", "whoami", {}))["ok"]
        gone = await broker.call(ctx, "m", "whoami", {})
    assert code(gone) == "unavailable"
    assert gone["error"]["message"] == (
        "MCP server 'odd' closed the connection or cannot be reached; Helm connects again on the next call"
    )
