"""The shape Helm's code keeps: short functions, and one class per name across the tree.

A function is counted from its ``def`` line to its last line (its docstring and any function
nested in it included, its decorators not). A class name used twice makes a traceback, a log
line or an import ambiguous; each class says what it is.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "broker", "ui")
MAX_FUNCTION_LINES = 50


def modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield str(path.relative_to(ROOT)), ast.parse(path.read_text("utf-8"), str(path))


def test_no_function_in_helm_is_longer_than_50_lines() -> None:
    long = [
        f"{where}:{node.lineno} {node.name} is {lines} lines"
        for where, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_no_two_classes_in_helm_share_a_name() -> None:
    places: defaultdict[str, list[str]] = defaultdict(list)
    for where, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                places[node.name].append(f"{where}:{node.lineno}")
    assert {name: found for name, found in places.items() if len(found) > 1} == {}
