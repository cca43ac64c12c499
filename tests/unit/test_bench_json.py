"""``make bench`` writes its rows as JSON where HELM_BENCH_JSON says (tests/bench/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import combine
from tests.bench.conftest import Row, write_json


def test_every_row_is_written_with_its_ratio_and_unit(tmp_path: Path) -> None:
    target = tmp_path / "rows.json"
    write_json([Row("a call", 0.003, 0.002, "s", "vs raw"), Row("memory", 5.0, 0.0, "MiB", "")], target)
    assert json.loads(target.read_text(encoding="utf-8")) == [
        {"name": "a call", "helm": 0.003, "baseline": 0.002, "ratio": 1.5, "unit": "s", "note": "vs raw"},
        {"name": "memory", "helm": 5.0, "baseline": 0.0, "ratio": None, "unit": "MiB", "note": ""},
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["rows.json"]


def test_a_whole_run_prints_every_files_rows_as_one_table_and_writes_them_as_one_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = Row("a call", 0.003, 0.002, "s", "vs raw"), Row("memory", 5.0, 0.0, "MiB", "")
    write_json([first], tmp_path / "a.json")
    write_json([second], tmp_path / "b.json")
    monkeypatch.setenv("HELM_BENCH_JSON", str(tmp_path / "rows.json"))
    combine.main([str(tmp_path / "a.json"), str(tmp_path / "missing.json"), str(tmp_path / "b.json")])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in lines[-2:]] == ["a call", "memory"]
    assert lines[-2].split()[-3:] == ["1.50x", "vs", "raw"]
    written = json.loads((tmp_path / "rows.json").read_text(encoding="utf-8"))
    assert [Row.from_json(raw) for raw in written] == [first, second]
