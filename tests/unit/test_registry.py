"""The kind registry: every kind of the contract is registered and its adapter loads."""

from __future__ import annotations

import inspect

import pytest

from broker.kinds import KINDS

CONTRACT_KINDS = {"http", "mcp", "tdt-mcp", "files", "db"}


def test_every_contract_kind_is_registered() -> None:
    assert set(KINDS) == CONTRACT_KINDS


@pytest.mark.parametrize("name", sorted(CONTRACT_KINDS))
def test_each_adapter_loads_and_implements_the_kind_interface(name: str) -> None:
    factory = KINDS[name].load()
    for method in ("pin", "describe", "execute", "aclose"):
        assert inspect.iscoroutinefunction(getattr(factory, method)), f"{name}.{method} must be async"
