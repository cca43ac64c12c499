"""docs/authors.md says what the commands do: every option it should name, the fixture format
as Helm reads it, a guide for every kind. Beside the tests of the behaviour it describes."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from app.cli import parser
from broker.authoring.fixtures import parse

DOCS = Path(__file__).resolve().parents[2] / "docs"
AUTHORS = (DOCS / "authors.md").read_text(encoding="utf-8")


def actions(command: str) -> dict[str, argparse.ArgumentParser]:
    top = parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    group = sub.choices[command]
    found = next((a for a in group._actions if isinstance(a, argparse._SubParsersAction)), None)
    return dict(found.choices) if found is not None else {command: group}


def options(p: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """Each option's spellings (``("--workspace", "-w")``), but help and ``--home``."""
    found = [tuple(a.option_strings) for a in p._actions if a.option_strings]
    return [o for o in found if not {"--help", "--home"} & set(o)]


def section(heading: str) -> str:
    start = AUTHORS.index(heading)
    end = AUTHORS.find("\n## ", start + len(heading))
    return AUTHORS[start : end if end > 0 else None]


TABLE = [line for line in section("Other commands:").splitlines() if line.startswith("| `helm ")]


@pytest.mark.parametrize("action", sorted(actions("ext")))
def test_the_command_table_names_every_ext_action_and_its_options(action: str) -> None:
    rows = [row for row in TABLE if re.search(rf"helm ext [a-z|\\]*\b{action}\b", row.split(" | ")[0])]
    assert rows, f"helm ext {action} is not in the command table"
    for spellings in options(actions("ext")[action]):
        documented = any(re.search(rf"{re.escape(o)}\b", row) for o in spellings for row in rows)
        assert documented, f"helm ext {action} {spellings[0]} is not documented"


def test_the_command_table_says_how_call_asks_and_what_its_exit_codes_mean() -> None:
    (row,) = [row for row in TABLE if row.startswith("| `helm call ")]
    for words in ("[y/N]", "end of input declines", "Exit 0 when the envelope is `ok`, 1 when it is not"):
        assert words in row


@pytest.mark.parametrize("spellings", options(actions("dev")["dev"]))
def test_author_mode_describes_every_helm_dev_option(spellings: tuple[str, ...]) -> None:
    assert any(o in section("## Author mode: `helm dev`") for o in spellings)


def test_author_mode_says_several_workspaces_stop_helm_dev() -> None:
    text = " ".join(section("## Author mode: `helm dev`").split())
    assert "With several workspaces it stops (exit 1) and lists their names" in text
    assert "asks you to choose" not in text


def test_the_fixture_example_is_a_fixture_helm_reads() -> None:
    example = section("### Testing without profiles: fixtures").split("```json\n")[1].split("```")[0]
    entries = parse(json.loads(example), "gh", Path("gh.json"))
    assert [(e.operation, e.args is None) for e in entries] == [("issues", False), ("issues", True)]


def slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


def test_every_worked_example_links_its_kinds_full_guide() -> None:
    examples = section("## Worked examples, one per kind").split("\n### ")[1:]
    assert len(examples) == 5
    for example in examples:
        found = re.search(r"The full guide: \[[^]]+\]\((kinds/[a-z]+\.md)(?:#([a-z0-9-]+))?\)", example)
        assert found, f"no guide for {example.splitlines()[0]}"
        guide = (DOCS / found.group(1)).read_text(encoding="utf-8")
        if found.group(2):
            headings = [slug(line.lstrip("#").strip()) for line in guide.splitlines() if line.startswith("#")]
            assert found.group(2) in headings


def test_the_manifest_sections_example_messages_are_what_lint_says() -> None:
    from broker.manifest import validate
    from tests.helpers import manifest_dict

    text = " ".join(section("## The manifest").split())
    close = {"method": "DELETE", "path": "/issues/{n}"}
    gh = {"id": "gh", "kind": "http", "service": "github", "calls": {"close": close}}
    notes = {"id": "n", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
    found = validate(manifest_dict([notes, gh]))
    assert [(i.path, i.message) for i in found] == [
        (
            "$.connections[1].calls.close.method",
            'PUT, PATCH and DELETE change data: mark the call "write": true',
        )
    ]
    assert f"`{found[0].path}: {found[0].message}`" in text
    (typo,) = validate(manifest_dict([notes], entyr="index.html"))
    assert f"`{typo.path}: {typo.message}`" in text
    assert "A problem in one field never hides one in another" in text
