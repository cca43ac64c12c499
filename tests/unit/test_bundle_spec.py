"""The bundle's spec (packaging/helm.spec) names hidden imports that import: every command
group's and kind's module Helm imports by name, and everything the demo's MCP servers import
from the SDK (a bundle runs those scripts itself)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

from app.cli import COMMANDS
from tests.support import REPO

SPEC = REPO / "packaging" / "helm.spec"
DEMO_SERVERS = sorted((REPO / "resources" / "demo" / "servers").glob("*.py"))


def named_hidden_imports() -> list[str]:
    """The module names the spec writes out in ``hiddenimports``."""
    for node in ast.walk(ast.parse(SPEC.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == "hiddenimports":
            return [
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
    raise AssertionError("packaging/helm.spec has no hiddenimports")


def computed_hidden_imports() -> list[str]:
    """The module names the spec computes for ``hiddenimports``: its own ``kind_modules`` and
    ``commands``, run as PyInstaller would run them."""
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    wanted = {"kind_modules", "commands"}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {d.name for d in defs} == wanted
    scope: dict[str, Any] = {}
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(SPEC), "exec"), scope)
    return [*scope["kind_modules"](), *scope["commands"]()]


def spec_keyword(name: str) -> ast.expr:
    for node in ast.walk(ast.parse(SPEC.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == name:
            return node.value
    raise AssertionError(f"packaging/helm.spec sets no {name}")


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


def test_every_module_the_spec_computes_as_a_hidden_import_imports():
    """Helm imports its command groups and kinds by name, so the bundle has them only when the
    spec names them: a name that does not import is a ``helm`` command that crashes."""
    names = computed_hidden_imports()
    assert {f"app.commands.{module}" for module in COMMANDS.values()} <= set(names)
    for name in names:
        importlib.import_module(name)


def test_what_the_demo_servers_import_from_the_mcp_sdk_is_a_hidden_import_of_the_bundle():
    assert any(sdk_imports(script) for script in DEMO_SERVERS)
    hidden = set(named_hidden_imports())
    for script in DEMO_SERVERS:
        assert sdk_imports(script) <= hidden, script.name


def test_the_bundle_ships_the_source_of_every_sdk_module_whose_models_read_their_docstrings():
    """pydantic reads such a model's field descriptions from its source; without the source in
    the bundle it walks the stack for it at every model, and importing the ACP SDK took 5 s."""
    collected = ast.literal_eval(spec_keyword("module_collection_mode"))
    reading = set()
    for package in ("acp", "mcp"):  # the SDKs Helm imports
        folder = Path(importlib.import_module(package).__file__ or "").parent
        for path in folder.rglob("*.py"):
            if "use_attribute_docstrings=True" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(folder.parent).with_suffix("").parts
                reading.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert reading  # the ACP SDK's schema does
    for module in reading:
        assert "py" in collected.get(module, "").split("+"), module
