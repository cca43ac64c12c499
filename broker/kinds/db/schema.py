"""The JSON Schema of ``db`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

SCHEMA: dict[str, Any] = {
    "db": {
        "type": "object",
        "required": ["id", "kind", "service", "engine", "queries"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "service": {"$ref": "#/$defs/profileName"},
            "engine": {"enum": ["sqlite", "postgres", "mysql"]},
            "queries": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 32,
                "propertyNames": {"$ref": "#/$defs/name"},
                "additionalProperties": {
                    "type": "object",
                    "required": ["sql"],
                    "additionalProperties": False,
                    "properties": {
                        "sql": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 65536,
                            "pattern": "^[^\\x00]*$",
                            "patternErrorMessage": "contains a NUL character",
                        },
                        "params": {"type": "array", "maxItems": 64, "items": {"$ref": "#/$defs/name"}},
                        "write": {"type": "boolean"},
                    },
                },
            },
        },
    }
}
