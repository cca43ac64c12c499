"""The JSON Schema of ``echo`` connections: its ``$defs`` in the manifest schema."""

from __future__ import annotations

from typing import Any

PHRASES = {"type": "array", "maxItems": 8, "uniqueItems": True, "items": {"$ref": "#/$defs/name"}}

SCHEMA: dict[str, Any] = {
    "echo": {
        "type": "object",
        "required": ["id", "kind", "room", "operations"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "room": {"$ref": "#/$defs/profileName"},
            "operations": PHRASES,
            "writes": PHRASES,
        },
    }
}
