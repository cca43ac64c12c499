"""Write resources/manifest.schema.json: the manifest's own part as it is, with every kind's
``$defs`` as the kinds declare them (``broker.manifest.schema``). Run after changing a kind's
schema.py; tests/unit/test_architecture.py checks that the file and the kinds agree."""

from __future__ import annotations

import json

import resources
from broker.manifest import schema


def main() -> None:
    text = json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
    resources.path("manifest.schema.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
