"""broker/ is pure asyncio: it imports and works with PySide6, shiboken6 and qasync absent."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import broker

QT_MODULES = ("PySide6", "shiboken6", "qasync")
BROKER_DIR = Path(broker.__file__).resolve().parent

# Runs in a fresh interpreter where any attempt to import a Qt module fails as if uninstalled.
PROBE = textwrap.dedent(
    """
    import asyncio, importlib, importlib.abc, pkgutil, sys, tempfile
    from pathlib import Path

    BLOCKED = {blocked!r}

    class BlockQt(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, BlockQt())

    def fail(name):
        raise SystemExit(f"cannot import {{name}}")

    import broker
    names = [m.name for m in pkgutil.walk_packages(broker.__path__, "broker.", onerror=fail)]
    for name in names:
        importlib.import_module(name)

    from broker import Broker, CallContext

    async def use_it(home):
        async with Broker(home) as b:
            ctx = CallContext(workspace="w", extension="com.example.none", instance="i1")
            return await b.call(ctx, "nothing", "op", {{}})

    with tempfile.TemporaryDirectory() as tmp:
        envelope = asyncio.run(use_it(Path(tmp)))
    assert envelope["ok"] is False, envelope
    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    assert not leaked, leaked
    print(len(names))
    """
)


def test_every_broker_module_imports_and_broker_answers_a_call_without_qt(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(blocked=set(QT_MODULES))],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=BROKER_DIR.parent,
        env={"HELM_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) >= 5  # the walk really found the broker's modules


def _imported_roots(source: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            roots.update(
                arg.value.partition(".")[0]
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
    return roots


def test_no_broker_source_imports_qt_or_the_ui_layer():
    offenders = {
        str(path.relative_to(BROKER_DIR.parent)): sorted(found)
        for path in sorted(BROKER_DIR.rglob("*.py"))
        if (found := _imported_roots(path) & {*QT_MODULES, "ui", "app"})
    }
    assert offenders == {}
