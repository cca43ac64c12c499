"""What authors code against stays true to Helm: typings, error docs and the published schema."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from broker.errors import ErrorCode
from broker.manifest import schema, validate

ROOT = Path(__file__).parents[2]
TYPINGS = (ROOT / "resources" / "helm.d.ts").read_text("utf-8")
ERRORS_DOC = (ROOT / "docs" / "errors.md").read_text("utf-8")
AUTHORS_DOC = (ROOT / "docs" / "authors.md").read_text("utf-8")

ENVELOPES = (
    "HelmResult",
    "FilesResult",
    "HttpResult",
    "DbRows",
    "DbWrite",
    "FilesList",
    "FilesRead",
    "FilesBatch",
    "FilesWrite",
    "McpResult",
    "TdtEnvelope",
)


def typed_error_codes() -> set[str]:
    union = re.search(r"type ErrorCode =(.*?);", TYPINGS, re.S)
    assert union is not None, "helm.d.ts declares no ErrorCode union"
    return set(re.findall(r'\|\s*"([a-z_]+)"', union.group(1)))


def test_the_error_code_union_in_the_typings_is_exactly_the_brokers() -> None:
    assert typed_error_codes() == {c.value for c in ErrorCode}


@pytest.mark.parametrize("name", ENVELOPES)
def test_the_typings_declare_every_envelope(name: str) -> None:
    assert re.search(rf"\b(type|interface) {name}\b", TYPINGS)


@pytest.mark.parametrize("code", [c.value for c in ErrorCode])
def test_every_error_code_is_documented_with_what_to_do(code: str) -> None:
    section = re.search(rf"^## `{code}`\n(.*?)(?=^## |\Z)", ERRORS_DOC, re.S | re.M)
    assert section is not None, f"docs/errors.md has no section for {code}"
    assert "**What to do.**" in section.group(1)


def test_the_error_doc_documents_no_code_helm_does_not_have() -> None:
    documented = set(re.findall(r"^## `([a-z_]+)`", ERRORS_DOC, re.M))
    assert documented == {c.value for c in ErrorCode}


def test_the_author_guide_names_the_schema_id_editors_use() -> None:
    assert schema()["$id"] in AUTHORS_DOC


def full(connections: list[dict[str, Any]], *, write: bool = False) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "$schema": schema()["$id"],
        "id": "com.example.board",
        "name": "Board",
        "version": "1.0.0",
        "kind": "widget",
        "entry": "index.html",
        "connections": connections,
    }
    if write:
        raw["permissions"] = {"write": True}
    return raw


# The contract's examples that are not whole manifests elsewhere in the tests, each completed
# into one with "$schema" as an author writes it.
EXAMPLES = [
    pytest.param(
        full(
            [
                {
                    "id": "gh",
                    "kind": "mcp",
                    "server": "github",
                    "operations": ["list_issues", "get_issue"],
                    "writes": ["create_issue"],
                }
            ],
            write=True,
        ),
        id="mcp-with-writes",
    ),
    pytest.param(
        full(
            [
                {
                    "id": "sp",
                    "kind": "files",
                    "root": "project",
                    "paths": [".tdt-project/tdt-software-production/**"],
                    "operations": ["list", "read", "write"],
                }
            ],
            write=True,
        ),
        id="files-write",
    ),
    pytest.param(
        full(
            [
                {
                    "id": "notes",
                    "kind": "files",
                    "root": "workspace",
                    "paths": ["*.md", "docs/**/*.md"],
                    "operations": ["list", "read"],
                }
            ]
        ),
        id="files-workspace",
    ),
    pytest.param(
        full(
            [
                {
                    "id": "tdt",
                    "kind": "tdt-mcp",
                    "operations": ["tdt_workspace_status"],
                    "writes": ["tdt_reminder_add"],
                }
            ],
            write=True,
        ),
        id="tdt-writes",
    ),
    pytest.param(
        full(
            [
                {
                    "id": "app",
                    "kind": "db",
                    "service": "local-app",
                    "engine": "mysql",
                    "queries": {
                        "recent": {
                            "sql": "SELECT id, title FROM tickets WHERE status = ? LIMIT ?",
                            "params": ["status", "limit"],
                        }
                    },
                }
            ]
        ),
        id="db-mysql",
    ),
]


@pytest.mark.parametrize("manifest", EXAMPLES)
def test_the_published_schema_accepts_the_contracts_examples(manifest: dict[str, Any]) -> None:
    jsonschema.validate(manifest, schema())
    assert validate(manifest) == []


def test_the_published_schema_is_what_an_editor_needs() -> None:
    s = schema()
    jsonschema.validators.validator_for(s).check_schema(s)
    assert s["$id"].startswith("https://")
    assert s["$id"].endswith(".json")
    assert s["properties"]["$schema"] == {"type": "string"}  # "$schema" in manifest.json is allowed


def test_the_schema_refuses_what_an_editor_should_flag() -> None:
    bad = copy.deepcopy(
        full([{"id": "x", "kind": "files", "root": "home", "paths": [], "operations": ["delete"]}])
    )
    bad["unknown"] = 1
    paths = {
        ".".join(str(p) for p in e.absolute_path)
        for e in jsonschema.Draft202012Validator(schema()).iter_errors(bad)
    }
    assert "" in paths  # the unknown top-level property
    assert any(p.startswith("connections.0") for p in paths)


@pytest.mark.parametrize("doc", ["authors.md", "errors.md"])
def test_every_relative_link_in_the_author_docs_resolves(doc: str) -> None:
    text = (ROOT / "docs" / doc).read_text("utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#]+)\)", text) if "://" not in t]
    missing = [t for t in targets if not (ROOT / "docs" / t).exists()]
    assert targets
    assert missing == []
