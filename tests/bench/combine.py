"""The rows of a whole benchmark run, one JSON file per benchmark file (``scripts/bench.sh`` runs
each file in a process of its own), printed as one table and, with ``HELM_BENCH_JSON`` set,
written there as one list. Usage: ``python -m tests.bench.combine PART.json...``"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.bench.conftest import JSON_VARIABLE, TITLE, Row, table_lines, write_json


def main(parts: list[str]) -> int:
    rows = [
        Row.from_json(raw)
        for part in parts
        if Path(part).exists()
        for raw in json.loads(Path(part).read_text())
    ]
    if rows:
        print(f"\n{TITLE}")
        print("\n".join(table_lines(rows)))
    target = os.environ.get(JSON_VARIABLE)
    if target:
        write_json(rows, Path(target))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
