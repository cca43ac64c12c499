"""``make bench`` writes its rows as JSON where HELM_BENCH_JSON says (tests/bench/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.conftest import Row, write_json


def test_every_row_is_written_with_its_ratio_and_unit(tmp_path: Path) -> None:
    target = tmp_path / "rows.json"
    write_json([Row("a call", 0.003, 0.002, "s", "vs raw"), Row("memory", 5.0, 0.0, "MiB", "")], target)
    assert json.loads(target.read_text(encoding="utf-8")) == [
        {"name": "a call", "helm": 0.003, "baseline": 0.002, "ratio": 1.5, "unit": "s", "note": "vs raw"},
        {"name": "memory", "helm": 5.0, "baseline": 0.0, "ratio": None, "unit": "MiB", "note": ""},
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.json"]
