"""Helm's HTTP transport for MCP passes a response on a whole message at a time, and answers a
message over its bound itself (broker/mcp/httpcap.py). The real servers are in
test_mcp_real_servers.py; these are the stream's own rules, for any split of the bytes."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types

from broker.mcp.httpcap import CappedStream, MessageTooLarge
from broker.mcp.stdio import TOO_LARGE

LIMIT = 64
ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")


class Chunks(httpx2.AsyncByteStream):
    """A response body arriving in the given chunks; says how many were read."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk


def passed_on(chunks: list[bytes], *, sse: bool, rid: types.RequestId | None = 7) -> list[bytes]:
    async def run() -> list[bytes]:
        return [piece async for piece in CappedStream(Chunks(chunks), LIMIT, sse, rid)]

    return asyncio.run(run())


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def the_error(text: bytes) -> types.JSONRPCError:
    message = types.jsonrpc_message_adapter.validate_json(text)
    assert isinstance(message, types.JSONRPCError)
    return message


event = st.builds(
    lambda data, end: b"event: message\ndata: " + data + end,
    st.binary(max_size=LIMIT - 30).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
    st.sampled_from(ENDS),
)


@settings(max_examples=150)
@given(st.lists(event, max_size=6), st.lists(st.integers(0, 400), max_size=8))
def test_events_within_the_bound_pass_unchanged_each_piece_ending_an_event(
    events: list[bytes], cuts: list[int]
):
    data = b"".join(events)
    pieces = passed_on(split(data, cuts), sse=True)
    assert b"".join(pieces) == data
    assert all(piece.endswith(ENDS) for piece in pieces)


@settings(max_examples=100)
@given(
    st.lists(event, max_size=3), st.integers(LIMIT + 1, 4 * LIMIT), st.lists(st.integers(0, 600), max_size=8)
)
def test_an_event_over_the_bound_is_replaced_by_helms_answer_to_its_request(
    before: list[bytes], size: int, cuts: list[int]
):
    big = b"event: message\ndata: " + b"z" * size + b"\n\n"
    pieces = passed_on(split(b"".join(before) + big + b"event: message\ndata: {}\n\n", cuts), sse=True)
    assert pieces, "nothing was passed on"
    assert b"".join(pieces[:-1]) == b"".join(before)
    last = pieces[-1]
    assert last.startswith(b"event: message\ndata: ")
    assert last.endswith(b"\n\n")
    error = the_error(last.removeprefix(b"event: message\ndata: ").strip())
    assert (error.id, error.error.code) == (7, TOO_LARGE)


def test_an_endless_event_stops_the_stream_within_the_bound():
    body = Chunks([b"data: " + b"z" * 32] * 10_000)

    async def run() -> list[bytes]:
        return [piece async for piece in CappedStream(body, LIMIT, True, "r1")]

    pieces = asyncio.run(run())
    assert body.read <= 4  # stopped once the event under way passed the bound
    assert the_error(pieces[-1].split(b"data: ", 1)[1].strip()).id == "r1"


@given(st.binary(max_size=LIMIT), st.lists(st.integers(0, LIMIT), max_size=5))
def test_a_json_body_within_the_bound_passes_unchanged(body: bytes, cuts: list[int]):
    assert b"".join(passed_on(split(body, cuts), sse=False)) == body


@given(st.integers(LIMIT + 1, 10 * LIMIT), st.lists(st.integers(0, 10 * LIMIT), max_size=5))
def test_a_json_body_over_the_bound_is_helms_answer_alone(size: int, cuts: list[int]):
    pieces = passed_on(split(b"x" * size, cuts), sse=False, rid="abc")
    assert len(pieces) == 1
    error = the_error(pieces[0])
    assert (error.id, error.error.code) == ("abc", TOO_LARGE)


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "json"])
def test_a_message_over_the_bound_that_answers_no_request_ends_the_stream(sse: bool):
    with pytest.raises(MessageTooLarge):
        passed_on([b"data: " + b"z" * (2 * LIMIT)], sse=sse, rid=None)


def test_a_blank_line_cut_between_its_cr_and_lf_is_passed_on_with_its_event():
    data = b"event: message\r\ndata: {}\r\n\r\n"
    assert passed_on([data[:-1], data[-1:]], sse=True) == [data]
