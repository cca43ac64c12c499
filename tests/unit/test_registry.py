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


def test_every_module_a_kind_imports_by_name_is_named_for_installers_and_imports():
    """A "module:attr" field nobody lists would be missing from a bundle (nothing else imports it)."""
    import dataclasses
    import importlib

    from broker.kinds import KINDS

    for spec in KINDS.values():
        by_name = {
            value.partition(":")[0]
            for f in dataclasses.fields(spec)
            if isinstance(value := getattr(spec, f.name), str) and ":" in value and "." in value
        } | {target.partition(":")[0] for target in spec.window_parts.values()}
        assert set(spec.named_modules()) == by_name, spec.name
        for module in by_name:
            importlib.import_module(module)
