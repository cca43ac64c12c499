"""The JSON Schema of ``http`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

SCHEMA: dict[str, Any] = {
    "http": {
        "type": "object",
        "required": ["id", "kind", "service", "calls"],
        "additionalProperties": False,
        "properties": {
            "id": True,
            "kind": True,
            "service": {"$ref": "#/$defs/profileName"},
            "oauth2": {
                "type": "object",
                "required": ["authorizeUrl", "tokenUrl"],
                "additionalProperties": False,
                "properties": {
                    "authorizeUrl": {"type": "string", "maxLength": 2048},
                    "tokenUrl": {"type": "string", "maxLength": 2048},
                    "scopes": {
                        "type": "array",
                        "maxItems": 32,
                        "uniqueItems": True,
                        "items": {
                            "type": "string",
                            "pattern": "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$",
                            "maxLength": 256,
                        },
                    },
                },
            },
            "calls": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 16,
                "propertyNames": {"$ref": "#/$defs/name"},
                "additionalProperties": {"$ref": "#/$defs/httpCall"},
            },
        },
    },
    "httpCall": {
        "type": "object",
        "required": ["method", "path"],
        "additionalProperties": False,
        "properties": {
            "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE"]},
            "path": {"type": "string", "minLength": 1, "maxLength": 2048},
            "query": {
                "type": "object",
                "maxProperties": 32,
                "additionalProperties": {"type": "string", "maxLength": 2048},
            },
            "body": {},
            "write": {"type": "boolean"},
        },
    },
}
