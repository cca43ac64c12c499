"""docs/security.md names the test behind each guarantee: every test it names must exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def test_every_test_the_security_page_names_exists() -> None:
    named = NAMED.findall((ROOT / "docs" / "security.md").read_text(encoding="utf-8"))
    assert len(named) > 50
    missing = [
        f"{path}::{name}"
        for path, name in named
        if not (ROOT / path).is_file()
        or not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M)
    ]
    assert missing == []
