"""The tool that opens an app: which one, its arguments as the app's settings, and its run.

In every MCP Apps host an app appears because its linked tool was called; the host then sends
the app that call's arguments (``ui/notifications/tool-input``) and its result
(``ui/notifications/tool-result``). In Helm the user opens the app, so Helm makes that call
itself when the app opens, and again on Refresh: through the broker's one path (admission,
the approval, the tool's pin, confirmation when it writes, activity, audit), on the app's own
connection, with arguments that only ever come from the app's settings — the widget settings
form Helm writes from the tool's input schema (its defaults filled in), which the user sets on
the app's card. The app itself never chooses them.

Pure, but ``run``: ``settings_form`` and ``arguments`` are decisions over plain JSON.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from broker.apps.spec import APP_CONNECTION

if TYPE_CHECKING:
    from broker.apps.meta import AppTool
    from broker.apps.rpc import AppSession

log = logging.getLogger("helm.apps")

TOOL_INPUT = "ui/notifications/tool-input"
TOOL_RESULT = "ui/notifications/tool-result"
TOOL_CANCELLED = "ui/notifications/tool-cancelled"
INITIALIZED_WITHIN = 60.0
"""How long Helm waits for the app to say it initialized before it gives up telling it the
opening tool's input and result (the call itself is not waited for: it runs regardless)."""
MAX_FIELDS = 32
MAX_TEXT = 4096
SETTING_NAME_CHARS = 64


def opener(linked: Iterable[AppTool]) -> AppTool | None:
    """The linked tool Helm runs to open the app: one the model may call (what opens the app
    in a chat host) — visible to the app too before one for the model alone — else any linked
    one; the first by name among equals, so the choice is stable."""

    def rank(tool: AppTool) -> tuple[int, str]:
        model, app = "model" in tool.visibility, "app" in tool.visibility
        return (0 if model and app else 1 if model else 2, tool.name)

    return min(linked, key=rank, default=None)


@dataclass(frozen=True)
class Unset:
    """A required argument Helm's settings cannot hold (no default, a type the form lacks)."""

    name: str
    why: str


def settings_form(schema: Mapping[str, Any] | None) -> tuple[dict[str, dict[str, Any]], tuple[Unset, ...]]:
    """The widget settings form (``docs/widget-settings.md``) for a tool's input schema, and
    the required arguments it cannot offer. Strings (an ``enum`` becomes a choice), numbers,
    integers and booleans become fields with the schema's default, bounds and description; an
    argument of another type is left to the server's own default."""
    props = (schema or {}).get("properties")
    required = (schema or {}).get("required")
    needed = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    form: dict[str, dict[str, Any]] = {}
    unset: list[Unset] = []
    if not isinstance(props, Mapping):
        return form, tuple(Unset(n, "the tool's input schema does not describe it") for n in sorted(needed))
    for name, prop in props.items():
        field = _field(prop) if isinstance(prop, Mapping) else None
        fits = _setting_name(name) and len(form) < MAX_FIELDS
        if field is not None and fits:
            if name in needed and "default" not in field:
                field["required"] = True
            form[name] = field
        elif name in needed and not (isinstance(prop, Mapping) and "default" in prop):
            why = "its name cannot be a setting" if not fits else "Helm's settings cannot hold its type"
            unset.append(Unset(name, why))
    return form, tuple(unset)


def _setting_name(name: Any) -> bool:
    if not isinstance(name, str) or not 0 < len(name) <= SETTING_NAME_CHARS:
        return False
    return (name[0].isascii() and (name[0].isalpha() or name[0] == "_")) and all(
        c.isascii() and (c.isalnum() or c == "_") for c in name
    )


def _field(prop: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = prop.get("type")
    enum = prop.get("enum")
    field: dict[str, Any]
    if isinstance(enum, list) and enum and all(isinstance(v, str) and len(v) <= MAX_TEXT for v in enum):
        field = {"type": "choice", "choices": list(dict.fromkeys(enum))[:64]}
        if prop.get("default") in field["choices"]:
            field["default"] = prop["default"]
        return _described(field, prop)
    if kind == "string":
        field = {"type": "string"}
        limit = prop.get("maxLength")
        field["maxLength"] = limit if isinstance(limit, int) and 0 < limit <= MAX_TEXT else MAX_TEXT
        default = prop.get("default")
        if isinstance(default, str) and len(default) <= field["maxLength"]:
            field["default"] = default
        return _described(field, prop)
    if kind in ("number", "integer"):
        field = {"type": kind}
        for bound in ("minimum", "maximum"):
            if _number(prop.get(bound)):
                field[bound] = prop[bound]
        if _number(prop.get("default")) and (kind == "number" or isinstance(prop["default"], int)):
            field["default"] = prop["default"]
        return _described(field, prop)
    if kind == "boolean":
        field = {"type": "boolean"}
        if isinstance(prop.get("default"), bool):
            field["default"] = prop["default"]
        return _described(field, prop)
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _described(field: dict[str, Any], prop: Mapping[str, Any]) -> dict[str, Any]:
    title, description = prop.get("title"), prop.get("description")
    if isinstance(title, str) and title.strip():
        field["label"] = title.strip()[:100]
    if isinstance(description, str) and description.strip():
        field["description"] = description.strip()[:500]
    return field


def arguments(form: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> dict[str, Any]:
    """The opening tool's arguments: the app's settings (defaults, then what the user applied),
    only the form's own fields, an empty value left out so the server's default applies."""
    out: dict[str, Any] = {}
    for key, field in form.items():
        value = values.get(key, field.get("default"))
        if value is None or (value == "" and field.get("type") == "string"):
            continue
        out[key] = value
    return out


def missing(form: Mapping[str, Mapping[str, Any]], args: Mapping[str, Any]) -> list[str]:
    """The required settings ``args`` leaves empty (the app shows its settings form first)."""
    return [key for key, field in form.items() if field.get("required") and key not in args]


async def run(session: AppSession, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Call ``tool`` for the app through the broker's one path; once the app has initialized,
    tell it the call's input, then its result (or that it was cancelled, and why). Returns
    the envelope, for the window to show a refusal."""
    from broker.apps.rpc import Fault, tool_result  # the MCP SDK, once an app opens

    request = session.broker.request(session.ctx, APP_CONNECTION, tool, dict(args), session.confirm)
    async with asyncio.TaskGroup() as group:
        call = group.create_task(request)
        try:
            async with asyncio.timeout(INITIALIZED_WITHIN):
                await session.started.wait()
        except TimeoutError:
            log.info("app %s never initialized; not told its opening tool's result", session.ctx.extension)
            told = False
        else:
            session.notify(TOOL_INPUT, {"arguments": dict(args)})
            told = True
    envelope = call.result()
    if told:
        try:
            result = tool_result(envelope)
        except Fault as refused:
            session.notify(TOOL_CANCELLED, {"reason": refused.message})
        else:
            session.notify(TOOL_RESULT, result)
    return envelope
