"""The JSON Schema of ``files`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

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
                "items": {"type": "string", "minLength": 1, "maxLength": 512},
            },
            "operations": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"enum": ["list", "read", "write"]},
            },
        },
    }
}
