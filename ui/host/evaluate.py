"""Run an expression in a page's own world and await its JSON value (self-test and tests).

The page hands the value back on its console with a one-off tag: the only channel out of the
page that needs nothing an extension could not also use, so checking a frame this way adds no
way out of the sandbox.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Protocol

from ui.aio import emitted
from ui.host.page import HostPage
from ui.qt import QWebEngineScript

_tags = itertools.count(1)


class PageScriptError(Exception):
    """The expression threw or its promise rejected; the message is the page's."""


class HasPage(Protocol):
    page: HostPage


async def evaluate(view: HasPage, expression: str, within: float = 30.0) -> Any:
    """The JSON value of ``expression`` (a promise is awaited) in the page's main world.

    Raises ``PageScriptError`` when the page code fails and ``TimeoutError`` after ``within`` s.
    """
    tag = f"helm-evaluate-{next(_tags)}:"
    page = view.page
    logged = emitted(page.console, within, lambda _level, message, *_: message.startswith(tag))
    script = (
        f"Promise.resolve().then(() => ({expression})).then("
        f"v => console.log({json.dumps(tag)} + JSON.stringify({{value: v}})),"
        f"e => console.log({json.dumps(tag)} + JSON.stringify({{error: String(e)}})))"
    )
    page.runJavaScript(script, QWebEngineScript.ScriptWorldId.MainWorld.value)
    _level, message, *_ = await logged
    outcome = json.loads(message[len(tag) :])
    if "error" in outcome:
        raise PageScriptError(str(outcome["error"]))
    return outcome.get("value")
