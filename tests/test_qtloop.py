"""Qt-driven tests share one asyncio loop, the thread's running one, whichever tree they are in."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import QT_NOISE  # engine set-up before the QApplication exists
from tests.qtloop import make_loop
from ui.qt import QApplication

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

TESTS = Path(__file__).parent


def test_a_coroutine_run_drives_is_the_current_task_of_the_running_loop(
    run: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    async def inside() -> tuple[bool, bool]:
        async with asyncio.timeout(5):  # needs the running loop's current task
            await asyncio.sleep(0)
        task = asyncio.current_task()
        return asyncio.get_running_loop() is qloop, task is not None and task.get_loop() is qloop

    assert run(inside()) == (True, True)


def test_a_second_loop_is_refused_while_the_process_loop_runs(
    qloop: asyncio.AbstractEventLoop, qapp: QApplication
) -> None:
    with pytest.raises(RuntimeError, match="already runs in this thread"):
        make_loop(qapp)
    assert asyncio.get_running_loop() is qloop


def module_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def test_the_session_loop_fixture_is_defined_in_one_module_only() -> None:
    # pytest keeps a session fixture once per definition: a conftest or test module that imports
    # qloop defines it again, and that second loop would take the running place from the first.
    sources = {path: path.read_text(encoding="utf-8") for path in sorted(TESTS.rglob("*.py"))}
    defining = [
        str(path.relative_to(TESTS))
        for path, source in sources.items()
        if "qloop" in source and "qloop" in module_level_names(ast.parse(source))
    ]
    assert defining == ["qtloop.py"]
