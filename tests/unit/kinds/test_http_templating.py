"""Each templating rule of the http kind, checked on the request line the server received."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import code, service_extension

CALLS: dict[str, Any] = {
    "item": {"method": "GET", "path": "/repos/{owner}/{repo}/items"},
    "mixed": {"method": "GET", "path": "/files/{name}.json"},
    "twin": {"method": "GET", "path": "/x/{a}{b}"},
    "search": {
        "method": "GET",
        "path": "/search",
        "query": {"q": "{q}", "per_page": "{limit}", "state": "open"},
    },
    "prefixed": {"method": "GET", "path": "/s", "query": {"label": "type:{kind}"}},
    "graphql": {
        "method": "POST",
        "path": "/graphql",
        "body": {
            "query": "query($first: Int) { teams(first: $first) { nodes { id } } }",
            "variables": {"first": "{limit}", "who": "{who}", "flag": "{flag}", "note": "{who} said"},
        },
    },
}


@pytest.fixture
async def server() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


async def line_for(broker: Broker, tmp_path: Path, server: Hostile, op: str, args: dict[str, Any],
                   base: str = "") -> str:  # fmt: skip
    ctx = await service_extension(broker, tmp_path, server.url + base, CALLS)
    result = await broker.call(ctx, "api", op, args)
    assert result["ok"], result
    return server.last.request_line


async def refusal(broker: Broker, tmp_path: Path, server: Hostile, op: str, args: dict[str, Any]) -> str:
    ctx = await service_extension(broker, tmp_path, server.url, CALLS)
    result = await broker.call(ctx, "api", op, args)
    assert code(result) == "refused", result
    assert server.seen == [], "a refused call must send nothing"
    return str(result["error"]["message"])


async def test_path_values_fill_their_segments(broker: Broker, tmp_path: Path, server: Hostile):
    line = await line_for(broker, tmp_path, server, "item", {"owner": "me", "repo": "app"})
    assert line == "GET /repos/me/app/items HTTP/1.1"


async def test_a_slash_in_a_path_value_stays_inside_one_segment(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "item", {"owner": "a/b", "repo": "../c"})
    assert line == "GET /repos/a%2Fb/..%2Fc/items HTTP/1.1"


async def test_reserved_characters_in_a_path_value_are_percent_encoded(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "item", {"owner": "x?y#z", "repo": "100% sure é"})
    assert line == "GET /repos/x%3Fy%23z/100%25%20sure%20%C3%A9/items HTTP/1.1"


async def test_numbers_and_booleans_fill_the_path_in_json_spelling(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "item", {"owner": 42, "repo": True})
    assert line == "GET /repos/42/true/items HTTP/1.1"


async def test_a_placeholder_inside_a_segment_is_filled_in_place(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "mixed", {"name": "report 1"})
    assert line == "GET /files/report%201.json HTTP/1.1"


@pytest.mark.parametrize("value", [".", ".."])
async def test_a_dot_segment_value_is_refused(broker: Broker, tmp_path: Path, server: Hostile, value: str):
    message = await refusal(broker, tmp_path, server, "item", {"owner": value, "repo": "app"})
    assert ". or .." in message


async def test_values_that_join_into_a_dot_segment_are_refused(
    broker: Broker, tmp_path: Path, server: Hostile
):
    await refusal(broker, tmp_path, server, "twin", {"a": ".", "b": "."})


@pytest.mark.parametrize(
    "args", [{"owner": "me"}, {"owner": "me", "repo": None}, {"owner": "me", "repo": ""}]
)
async def test_a_missing_null_or_empty_path_value_is_refused(
    broker: Broker, tmp_path: Path, server: Hostile, args: dict[str, Any]
):
    assert "repo" in await refusal(broker, tmp_path, server, "item", args)


async def test_query_values_are_filled_and_encoded(broker: Broker, tmp_path: Path, server: Hostile):
    line = await line_for(broker, tmp_path, server, "search", {"q": "a b&c=d", "limit": 20})
    assert line == "GET /search?q=a%20b%26c%3Dd&per_page=20&state=open HTTP/1.1"


async def test_a_query_parameter_with_a_missing_or_null_argument_is_not_sent(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "search", {"limit": None})
    assert line == "GET /search?state=open HTTP/1.1"


async def test_a_query_template_keeps_its_literal_text(broker: Broker, tmp_path: Path, server: Hostile):
    line = await line_for(broker, tmp_path, server, "prefixed", {"kind": "bug"})
    assert line == "GET /s?label=type%3Abug HTTP/1.1"


async def test_the_path_is_appended_to_a_base_url_with_a_path_never_joined(
    broker: Broker, tmp_path: Path, server: Hostile
):
    line = await line_for(broker, tmp_path, server, "item", {"owner": "me", "repo": "app"}, base="/api/v3/")
    assert line == "GET /api/v3/repos/me/app/items HTTP/1.1"


async def test_a_whole_string_placeholder_in_the_body_takes_the_json_value(
    broker: Broker, tmp_path: Path, server: Hostile
):
    args = {"limit": 5, "who": "ann", "flag": None}
    await line_for(broker, tmp_path, server, "graphql", args)
    body = json.loads(server.last.body)
    assert body["variables"] == {"first": 5, "who": "ann", "flag": None, "note": "{who} said"}
    assert body["query"] == CALLS["graphql"]["body"]["query"], "GraphQL braces are sent as written"
    assert server.last.headers["content-type"] == "application/json"


async def test_a_body_placeholder_without_its_argument_is_refused(
    broker: Broker, tmp_path: Path, server: Hostile
):
    assert "flag" in await refusal(broker, tmp_path, server, "graphql", {"limit": 5, "who": "ann"})


@pytest.mark.parametrize("value", [["a"], {"a": 1}, "x" * 4097], ids=["array", "object", "longer-than-4096"])
async def test_an_argument_that_is_not_a_short_scalar_is_refused(
    broker: Broker, tmp_path: Path, server: Hostile, value: Any
):
    await refusal(broker, tmp_path, server, "search", {"q": value})


async def test_a_non_scalar_argument_that_no_placeholder_uses_is_refused_too(
    broker: Broker, tmp_path: Path, server: Hostile
):
    message = await refusal(broker, tmp_path, server, "search", {"q": "x", "unused": {"deep": [1]}})
    assert "'unused' must be a string, a number, a boolean or null" in message


async def test_a_write_summary_shows_the_full_url_and_body_exactly_as_sent(
    broker: Broker, tmp_path: Path, server: Hostile
):
    calls = {"close": {"method": "PATCH", "path": "/issues/{n}", "query": {"why": "{why}"},
                       "body": {"state": "closed", "n": "{n}"}, "write": True}}  # fmt: skip
    ctx = await service_extension(broker, tmp_path, server.url, calls, write=True)
    confirm = ScriptedConfirmer()
    result = await broker.request(ctx, "api", "close", {"n": 7, "why": "done now"}, confirm)
    assert result["ok"], result
    summary = confirm.shown[0]
    url = f"{server.url}/issues/7?why=done%20now"
    assert summary.title == "Confirm request"
    assert summary.fields == (("Service", "svc"), ("Method", "PATCH"), ("URL", url))
    assert summary.request == f'PATCH {url}\n\n{{"state":"closed","n":7}}'
    assert server.last.request_line == "PATCH /issues/7?why=done%20now HTTP/1.1"
    assert server.last.body == b'{"state":"closed","n":7}'
