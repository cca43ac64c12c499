"""The manifest schema's errors in Helm's words, each at the JSON path of what is wrong.

jsonschema says what failed in its own terms (``'gadget' is not one of ['widget', 'tool']``,
``'x' does not match '^[a-z]…$'``). An author needs what is wrong and how to fix it. The schema
carries Helm's message for each pattern (``patternErrorMessage``) and each rule that spans a
call's fields (``errorMessage``) — keywords VS Code shows too — and the rest is worded here from
the keyword that failed. A missing field is reported at its own path (``$.entry``), an unknown
one at its path with the nearest known name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from broker.kinds.base import Issue

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

TYPES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def json_path(parts: Any) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def issues_of(err: ValidationError) -> Iterator[Issue]:
    """The problems one jsonschema error stands for, in Helm's words."""
    path = json_path(err.absolute_path)
    schema: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    custom = schema.get("patternErrorMessage") if err.validator == "pattern" else None
    custom = custom or schema.get("errorMessage")
    if "propertyNames" in err.absolute_schema_path:
        yield Issue(path, f"the name {err.instance!r}: {custom or _worded(err)}")
    elif err.validator == "required" and isinstance(err.instance, Mapping):
        for name in _values(err):
            if name not in err.instance:
                yield Issue(f"{path}.{name}", custom or "is required")
    elif err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
        known = list(schema.get("properties", {}))
        for name in err.instance:
            if name not in known:
                yield Issue(f"{path}.{name}", _unknown(str(name), known))
    elif custom:
        yield Issue(path, str(custom))
    elif err.context:  # anyOf / oneOf without a message of its own: the branch that got furthest
        yield from issues_of(max(err.context, key=lambda leaf: len(leaf.absolute_path)))
    else:
        yield Issue(path, _worded(err))


def _value(err: ValidationError) -> Any:
    return err.validator_value


def _values(err: ValidationError) -> list[Any]:
    value = _value(err)
    return list(value) if isinstance(value, list | tuple) else [value]


def _unknown(name: str, known: list[str]) -> str:
    import difflib  # only for a manifest with an unknown field

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})" if known else ""
    return f"unknown field{hint}"


def _listed(values: Any) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v for v in values)


def _worded(err: ValidationError) -> str:
    """The failed keyword in Helm's words (jsonschema's own message as the last resort)."""
    v, value = err.validator, _value(err)
    if v is None:  # a false schema
        return "is not allowed here"
    if v == "enum":
        return f"must be one of: {_listed(value)}"
    if v == "const":
        return f"must be {_listed([value])}"
    if v == "type":
        kinds = [value] if isinstance(value, str) else list(value)
        return "must be " + " or ".join(TYPES.get(k, k) for k in kinds)
    counted = {
        "minLength": ("must not be empty" if value == 1 else f"must be at least {value} characters"),
        "maxLength": f"must be at most {value} characters",
        "minItems": ("must not be empty" if value == 1 else f"must have at least {value} items"),
        "maxItems": f"must have at most {value} items",
        "minProperties": ("must not be empty" if value == 1 else f"must have at least {value} entries"),
        "maxProperties": f"must have at most {value} entries",
        "minimum": f"must be at least {value}",
        "maximum": f"must be at most {value}",
        "uniqueItems": "must not list the same value twice",
        "pattern": "does not have the form Helm expects (see the manifest schema)",
        "not": "is not allowed here",
    }
    return counted.get(str(v), err.message)
