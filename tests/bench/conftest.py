"""Benchmark plumbing: every bench test records rows; `make bench` prints them as one table.

Numbers are reported as ratios against the raw library doing the same work in the same run, so
they mean the same on a fast laptop and a loaded CI machine. Use the ``bench`` fixture:

    def test_x(bench):
        helm = bench.time(lambda: do_it_through_helm(), repeat=200)
        raw = bench.time(lambda: do_it_with_the_library(), repeat=200)
        bench.record("x: Helm vs library", helm, raw)

With ``HELM_BENCH_JSON`` set to a path, the run also writes every row there as JSON: a list of
``{"name", "helm", "baseline", "ratio", "unit", "note"}`` (``ratio`` is null when the baseline
is zero), for tools that track the numbers over time.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.bench


@dataclass(frozen=True)
class Row:
    name: str
    helm: float
    baseline: float
    unit: str
    note: str

    @property
    def ratio(self) -> float:
        return self.helm / self.baseline if self.baseline else float("inf")

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Row:
        return cls(
            str(raw["name"]), float(raw["helm"]), float(raw["baseline"]), str(raw["unit"]), str(raw["note"])
        )

    def as_json(self) -> dict[str, Any]:
        ratio = self.ratio
        return {
            "name": self.name,
            "helm": self.helm,
            "baseline": self.baseline,
            "ratio": ratio if math.isfinite(ratio) else None,
            "unit": self.unit,
            "note": self.note,
        }


@dataclass
class Bench:
    rows: list[Row] = field(default_factory=list)

    def time(self, fn: Callable[[], object], *, repeat: int = 100, warmup: int = 5) -> float:
        """Median seconds per call of ``fn``."""
        for _ in range(warmup):
            fn()
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    async def atime(
        self, fn: Callable[[], Awaitable[object]], *, repeat: int = 100, warmup: int = 5
    ) -> float:
        """Median seconds per await of ``fn()``."""
        for _ in range(warmup):
            await fn()
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            await fn()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    def record(self, name: str, helm: float, baseline: float, *, unit: str = "s", note: str = "") -> None:
        """One table row: Helm's figure, the raw library's, and their ratio."""
        self.rows.append(Row(name, helm, baseline, unit, note))


_BENCH = Bench()


@pytest.fixture(scope="session")
def bench() -> Bench:
    return _BENCH


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.bench)


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        for scale, suffix in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
            if value >= scale:
                return f"{value / scale:.2f} {suffix}"
        return f"{value / 1e-9:.0f} ns"
    return f"{value:.2f} {unit}"


JSON_VARIABLE = "HELM_BENCH_JSON"
PART_VARIABLE = "HELM_BENCH_PART"
"""Set to 1 by ``scripts/bench.sh`` for each file of a whole run: rows go to the JSON file only."""


def write_json(rows: list[Row], path: Path) -> None:
    """Every row as JSON at ``path``, written whole (a reader never sees half a file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps([row.as_json() for row in rows], indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


TITLE = "Helm benchmarks (ratio = Helm / raw library, lower is better)"


def table_lines(rows: list[Row]) -> list[str]:
    """The rows as a table: a header, a rule, one line each."""
    header = ("benchmark", "Helm", "baseline", "ratio", "note")
    table = [header] + [
        (r.name, _fmt(r.helm, r.unit), _fmt(r.baseline, r.unit), f"{r.ratio:.2f}x", r.note) for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in table]
    return [lines[0], "  ".join("-" * w for w in widths), *lines[1:]]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    rows = _BENCH.rows
    target = os.environ.get(JSON_VARIABLE)
    if target:
        write_json(rows, Path(target))
    if not rows or os.environ.get(PART_VARIABLE) == "1":
        return  # a part of a whole run: scripts/bench.sh prints the table of every part
    terminalreporter.section(TITLE)
    for line in table_lines(rows):
        terminalreporter.write_line(line)
