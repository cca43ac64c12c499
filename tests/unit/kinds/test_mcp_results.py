"""The size cap on an MCP result: its compact JSON text measured in UTF-8 bytes."""

from __future__ import annotations

from typing import Any

import pytest

from broker.errors import CallError, ErrorCode
from broker.mcp.results import check_size


def _code(data: Any, limit: int) -> ErrorCode | None:
    try:
        check_size(data, limit, "MCP server 's'")
    except CallError as err:
        return err.code
    return None


def test_the_cap_counts_bytes_not_characters():
    ascii_text, accented = ["a" * 6], ["é" * 6]  # ["aaaaaa"]: 10 bytes; ["éééééé"]: 16 bytes
    assert _code(ascii_text, 10) is None
    assert _code(ascii_text, 9) is ErrorCode.TOO_LARGE
    assert _code(accented, 16) is None
    assert _code(accented, 15) is ErrorCode.TOO_LARGE  # 10 characters, but 16 bytes


@pytest.mark.parametrize("why", ["nested in itself", "not a number", "a lone surrogate", "not JSON"])
def test_a_result_that_is_not_plain_json_is_unavailable(why: str):
    looped: list[Any] = []
    looped.append(looped)
    data = {"nested in itself": looped, "not a number": [float("nan")], "a lone surrogate": ["\ud800"],
            "not JSON": [object()]}[why]  # fmt: skip
    with pytest.raises(CallError) as raised:
        check_size(data, 1 << 20, "MCP server 's'")
    assert raised.value.code is ErrorCode.UNAVAILABLE
    assert raised.value.message == "MCP server 's' sent a result that is not plain JSON"
