"""The JSON Schema of ``http`` connections: its ``$defs`` in the manifest schema.

Helm validates manifests against these (``broker.manifest.schema``); the published
``resources/manifest.schema.json`` carries the same, for editors (a test keeps them equal).

Every rule about one call — its path, its query templates, its method for a read or a write,
its body — and about the sign-in URLs is here, so an editor shows what ``helm ext lint`` shows.
``patternErrorMessage`` and ``errorMessage`` carry the message in Helm's words (editors such
as VS Code show them too).
"""

from __future__ import annotations

from typing import Any

TEMPLATE_MESSAGE = "braces must form placeholders like {name} (a letter or _, then letters, digits, _)"
TEMPLATE = r"^(?:[^{}]|\{[A-Za-z_][A-Za-z0-9_]{0,63}\})*$"
"""Braces appear only as ``{name}`` placeholders (``broker.templates``)."""

PATH_RULES: list[dict[str, str]] = [
    {"pattern": r"^/(?!/)", "patternErrorMessage": "must start with exactly one /"},
    {
        "pattern": r"^[^?#\\\x00-\x20\x7F]*$",
        "patternErrorMessage": "must not contain ?, #, backslashes, spaces or control characters (use query)",
    },
    {
        "pattern": r"^(?![\s\S]*/(?:\.|%2[eE]){1,2}(?:/|$))",
        "patternErrorMessage": "must not contain . or .. segments",
    },
    {"pattern": TEMPLATE, "patternErrorMessage": TEMPLATE_MESSAGE},
]

_PORT = r"(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[^/?#@:\[\]]+)"
_LOOPBACK = r"(?:127\.0\.0\.1|[lL][oO][cC][aA][lL][hH][oO][sS][tT])"

URL_RULES: list[dict[str, str]] = [
    {
        "pattern": r"^[^\s\x85\\\x00-\x1F\x7F]*$",
        "patternErrorMessage": "must not contain spaces, backslashes or control characters",
    },
    {
        "pattern": r"^[hH][tT][tT][pP][sS]?://",
        "patternErrorMessage": "must be https (http only for 127.0.0.1 or localhost)",
    },
    {"pattern": r"^[^/]*//[^/?#@]*(?:[/?#]|$)", "patternErrorMessage": "must not contain credentials"},
    {
        "pattern": rf"^[^/]*//{_HOST}{_PORT}(?:[/?#]|$)",
        "patternErrorMessage": "must name a host, with a port from 1 to 65535 if any",
    },
    {
        "pattern": rf"^(?![hH][tT][tT][pP]://(?!{_LOOPBACK}(?::[0-9]*)?(?:[/?#]|$)))",
        "patternErrorMessage": "must be https; http is permitted only for 127.0.0.1 and localhost",
    },
    {"pattern": r"^[^#]*$", "patternErrorMessage": "must not contain a fragment"},
]

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
                    "authorizeUrl": {"$ref": "#/$defs/signInUrl"},
                    "tokenUrl": {
                        "$ref": "#/$defs/signInUrl",
                        "pattern": r"^[^?]*$",
                        "patternErrorMessage": "must not contain a query",
                    },
                    "scopes": {
                        "type": "array",
                        "maxItems": 32,
                        "uniqueItems": True,
                        "items": {
                            "type": "string",
                            "pattern": "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$",
                            "patternErrorMessage": 'a scope is printable ASCII without spaces, " or \\',
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
            "path": {"type": "string", "minLength": 1, "maxLength": 2048, "allOf": PATH_RULES},
            "query": {
                "type": "object",
                "maxProperties": 32,
                "additionalProperties": {"$ref": "#/$defs/httpTemplate"},
            },
            "body": {},
            "write": {"type": "boolean"},
        },
        "allOf": [
            {
                "if": {"required": ["write"], "properties": {"write": {"const": True}}},
                "then": {
                    "properties": {
                        "method": {
                            "not": {"const": "GET"},
                            "errorMessage": "a write call must use POST, PUT, PATCH or DELETE",
                        }
                    }
                },
                "else": {
                    "properties": {
                        "method": {
                            "not": {"enum": ["PUT", "PATCH", "DELETE"]},
                            "errorMessage": 'PUT, PATCH and DELETE change data: mark the call "write": true',
                        }
                    }
                },
            },
            {
                "if": {"required": ["method"], "properties": {"method": {"const": "GET"}}},
                "then": {
                    "properties": {"body": {"not": {}, "errorMessage": "a GET call cannot have a body"}}
                },
            },
            {
                "if": {
                    "required": ["method"],
                    "properties": {"method": {"const": "POST"}},
                    "not": {"required": ["write"], "properties": {"write": {"const": True}}},
                },
                "then": {"required": ["body"], "errorMessage": "a read POST must declare its body"},
            },
        ],
    },
    "httpTemplate": {
        "type": "string",
        "maxLength": 2048,
        "pattern": TEMPLATE,
        "patternErrorMessage": TEMPLATE_MESSAGE,
    },
    "signInUrl": {"type": "string", "minLength": 1, "maxLength": 2048, "allOf": URL_RULES},
}
