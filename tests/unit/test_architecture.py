"""docs/architecture.md stays true to the code: every part of a kind spec is documented, every
file it names exists, and the published manifest schema is what the kinds declare."""

from __future__ import annotations

import dataclasses
import re

from broker.kinds.spec import KindSpec
from broker.manifest import published_schema, schema
from broker.names import NAME
from tests.support import REPO

DOC = (REPO / "docs" / "architecture.md").read_text("utf-8")


def test_every_part_of_a_kind_spec_is_documented() -> None:
    missing = [f.name for f in dataclasses.fields(KindSpec) if f"`{f.name}`" not in DOC]
    assert missing == []


def test_every_file_the_architecture_names_exists() -> None:
    named = set(re.findall(r"`((?:app|broker|ui|tests|docs|resources|scripts)/[\w./-]+)`", DOC))
    assert named
    assert sorted(p for p in named if not (REPO / p).exists()) == []


def test_the_published_schema_is_what_the_registered_kinds_declare() -> None:
    assert published_schema() == schema()


def test_the_profile_name_rule_exists_once() -> None:
    assert published_schema()["$defs"]["profileName"]["pattern"] == NAME.pattern
    spelled = [
        str(path.relative_to(REPO))
        for folder in ("app", "broker", "ui")
        for path in (REPO / folder).rglob("*.py")
        if "A-Za-z0-9_.-]{0,63}" in path.read_text("utf-8")
    ]
    assert spelled == ["broker/names.py"]
