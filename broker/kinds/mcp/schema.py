"""The JSON Schema of ``mcp`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

AT_LEAST_ONE_TOOL: dict[str, Any] = {
    "if": {"not": {"required": ["writes"], "properties": {"writes": {"minItems": 1}}}},
    "then": {"properties": {"operations": {"minItems": 1, "errorMessage": "declare at least one tool"}}},
}
"""Tools under ``operations`` or ``writes``: an empty ``operations`` needs ``writes``."""

SCHEMA: dict[str, Any] = {
    "toolList": {
        "type": "array",
        "maxItems": 128,
        "uniqueItems": True,
        "items": {"type": "string", "minLength": 1, "maxLength": 128},
    },
    "mcp": {
        "type": "object",
        "required": ["id", "kind", "server", "operations"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "server": {"$ref": "#/$defs/profileName"},
            "operations": {"$ref": "#/$defs/toolList"},
            "writes": {"$ref": "#/$defs/toolList"},
        },
        "allOf": [AT_LEAST_ONE_TOOL],
    },
    "tdt": {
        "type": "object",
        "required": ["id", "kind", "operations"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "operations": {"$ref": "#/$defs/toolList"},
            "writes": {"$ref": "#/$defs/toolList"},
        },
        "allOf": [AT_LEAST_ONE_TOOL],
    },
}
