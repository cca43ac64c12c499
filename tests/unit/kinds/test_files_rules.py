"""files manifest rules: every glob problem reported with its JSON path; what review shows."""

from __future__ import annotations

from typing import Any

import pytest

from broker.kinds.files import rules
from broker.manifest import validate
from tests.helpers import manifest_dict


def conn(paths: list[str], ops: tuple[str, ...] = ("list", "read")) -> dict[str, Any]:
    return {"id": "fs", "kind": "files", "root": "workspace", "paths": paths, "operations": list(ops)}


@pytest.mark.parametrize(
    "glob",
    [
        pytest.param("/etc/*", id="absolute"),
        pytest.param("~/notes/*", id="home"),
        pytest.param("C:/x/*", id="drive"),
        pytest.param("a//b", id="empty-segment"),
        pytest.param("a/", id="trailing-slash"),
        pytest.param("a/./b", id="dot"),
        pytest.param("a/../b", id="dotdot"),
        pytest.param("a/**b", id="double-star-not-whole"),
        pytest.param("a/[ab].md", id="brackets"),
        pytest.param("a/{x,y}.md", id="braces"),
        pytest.param("a\\b", id="backslash"),
        pytest.param("a\x00b", id="nul"),
    ],
)
def test_a_bad_glob_is_reported_at_its_path(glob: str) -> None:
    issues = validate(manifest_dict([conn(["ok/*.md", glob])]))
    assert [i.path for i in issues] == ["$.connections[0].paths[1]"]


def test_every_bad_glob_is_reported_at_once() -> None:
    issues = validate(manifest_dict([conn(["/a", "b/../c", "ok/*"])]))
    assert [i.path for i in issues] == ["$.connections[0].paths[0]", "$.connections[0].paths[1]"]


def test_good_globs_pass() -> None:
    assert validate(manifest_dict([conn([".tdt-project/x/**", "**/*.md", "a/?/b*c"])])) == []


def test_write_is_the_only_write_operation() -> None:
    assert rules.operations(conn(["*"], ("list", "read", "write"))) == {
        "list": False,
        "read": False,
        "write": True,
    }


def test_review_shows_each_glob_and_lists_writes_separately() -> None:
    review = rules.review(rules.parse(conn(["a/*", "b/**"], ("read", "write"))))
    assert [i.label for i in review.reads] == ["files a/*", "files b/**"]
    assert [i.label for i in review.writes] == ["files a/*", "files b/**"]
    assert "confirmed" in review.writes[0].detail
