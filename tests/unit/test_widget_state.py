"""The per-instance state store behind ``helm.state`` and apps' ``helm/state``."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker import CallContext
from broker.errors import CallError, ErrorCode
from broker.widget_state import StateStore

CTX = CallContext("ws", "com.example.board", "com.example.board#dashboard")


async def test_a_value_is_kept_per_instance_and_read_back_by_a_new_store(tmp_path: Path) -> None:
    await StateStore(tmp_path).set(CTX, {"tab": "done"})
    again = StateStore(tmp_path)
    assert again.get(CTX) == {"tab": "done"}
    assert again.get(CallContext("ws", "com.example.board", "tool")) is None
    assert again.get(CallContext("ws2", "com.example.board", CTX.instance)) is None
    assert oct(again.path("ws", "com.example.board").stat().st_mode & 0o777) == "0o600"


async def test_none_removes_the_value(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    await store.set(CTX, [1])
    await store.set(CTX, None)
    assert store.get(CTX) is None


async def test_a_value_over_64_kib_is_refused_and_the_old_one_stays(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    await store.set(CTX, "small")
    with pytest.raises(CallError) as refused:
        await store.set(CTX, "x" * (64 * 1024))
    assert refused.value.code is ErrorCode.TOO_LARGE
    assert store.get(CTX) == "small"


async def test_a_damaged_state_file_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    file = store.path(CTX.workspace, CTX.extension)
    file.parent.mkdir(parents=True)
    file.write_text('{"version": 1, "instances": {', encoding="utf-8")
    with pytest.raises(CallError) as unreadable:
        await store.set(CTX, {"a": 1})
    assert unreadable.value.code is ErrorCode.UNAVAILABLE
    assert "left it as it is" in unreadable.value.message
    assert file.read_text(encoding="utf-8") == '{"version": 1, "instances": {'
