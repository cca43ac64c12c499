"""The bundle's spec (packaging/helm.spec) names hidden imports that import, and among them
everything the demo's MCP servers import from the SDK: a bundle runs those scripts itself."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tests.support import REPO

SPEC = REPO / "packaging" / "helm.spec"
DEMO_SERVERS = sorted((REPO / "resources" / "demo" / "servers").glob("*.py"))


def named_hidden_imports() -> list[str]:
    """The module names the spec writes out in ``hiddenimports`` (the kinds' and commands'
    modules it computes are checked by test_registry.py)."""
    for node in ast.walk(ast.parse(SPEC.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == "hiddenimports":
            return [
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
    raise AssertionError("packaging/helm.spec has no hiddenimports")


def sdk_imports(script: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mcp":
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "mcp"}
    return found


def test_every_module_the_spec_names_as_a_hidden_import_imports():
    names = named_hidden_imports()
    assert names
    for name in names:
        importlib.import_module(name)  # an SDK module that moved raises here


def test_what_the_demo_servers_import_from_the_mcp_sdk_is_a_hidden_import_of_the_bundle():
    assert any(sdk_imports(script) for script in DEMO_SERVERS)
    hidden = set(named_hidden_imports())
    for script in DEMO_SERVERS:
        assert sdk_imports(script) <= hidden, script.name
