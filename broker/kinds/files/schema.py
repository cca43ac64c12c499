"""The JSON Schema of ``files`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

GLOB_RULES: list[dict[str, str]] = [
    {"pattern": r"^[^\x00\\]*$", "patternErrorMessage": "must not contain NUL or backslashes"},
    {"pattern": r"^(?![/~]|[\s\S]:)", "patternErrorMessage": "must be relative (no leading /, ~ or drive)"},
    {
        "pattern": r"^(?![\s\S]*//)(?![\s\S]*/$)",
        "patternErrorMessage": "must not have empty segments (//) or a trailing /",
    },
    {
        "pattern": r"^(?!(?:[\s\S]*/)?\.{1,2}(?:/|$))",
        "patternErrorMessage": "must not contain . or .. segments",
    },
    {"pattern": r"^(?![\s\S]*(?:[^/]\*\*|\*\*[^/]))", "patternErrorMessage": "** must be a whole segment"},
    {
        "pattern": r"^[^\[\]{}]*$",
        "patternErrorMessage": "only * and ? are wildcards; [ ] { } are not allowed",
    },
]
"""A glob (``broker.kinds.files.globs``): relative, ``/``-separated; ``*``, ``?``, whole-segment ``**``."""

SCHEMA: dict[str, Any] = {
    "files": {
        "type": "object",
        "required": ["id", "kind", "root", "paths", "operations"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "root": {"enum": ["project", "workspace"]},
            "paths": {
                "type": "array",
                "minItems": 1,
                "maxItems": 16,
                "uniqueItems": True,
                "items": {"$ref": "#/$defs/filesGlob"},
            },
            "operations": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"enum": ["list", "read", "write"]},
            },
        },
    },
    "filesGlob": {"type": "string", "minLength": 1, "maxLength": 512, "allOf": GLOB_RULES},
}
