"""The scripts that give a page its ``window.helm`` and Helm's look, in Helm's isolated world
and the page's.

The isolated world holds the web channel (``qt.webChannelTransport`` exists only there) and
Helm's guards (navigation, clipboard); the page's world gets a frozen ``helm`` object talking to
it over a private node. Both run only in the main frame, so subframes never reach the bridge.
The look (``theme_script``) is a style sheet of CSS variables the isolated world adopts into
the document; ``set_theme`` replaces it in a running page and for its next loads.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from broker.broker import MAX_CALL_BYTES
from ui.host.bridge import MAX_BATCH_CALLS, MAX_NAME_CHARS
from ui.qt import QFile, QIODevice, QWebEnginePage, QWebEngineScript
from ui.theme_data import Look, css_text

World = QWebEngineScript.ScriptWorldId
THEME_SCRIPT = "helm-theme"


@cache
def _resource(name: str) -> str:
    """A script Helm ships, read once per process: every frame gets the same text."""
    return resources.files("resources").joinpath("shim", name).read_text(encoding="utf-8")


@cache
def _qwebchannel_js() -> str:
    source = QFile(":/qtwebchannel/qwebchannel.js")
    if not source.open(QIODevice.OpenModeFlag.ReadOnly):
        raise RuntimeError("Qt's qwebchannel.js is missing from this PySide6 installation")
    try:
        return bytes(source.readAll().data()).decode("utf-8")
    finally:
        source.close()


def _script(name: str, source: str, world: int) -> QWebEngineScript:
    script = QWebEngineScript()
    script.setName(name)
    script.setSourceCode(source)
    script.setWorldId(world)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setRunsOnSubFrames(False)
    return script


@cache
def _isolated_bridge() -> str:
    """The bridge script with Helm's limits written in (the page never sees this world)."""
    source = _resource("bridge-isolated.js")
    limits = {
        "__HELM_MAX_NAME_CHARS__": MAX_NAME_CHARS,
        "__HELM_MAX_CALL_CHARS__": MAX_CALL_BYTES,
        "__HELM_MAX_BATCH_CALLS__": MAX_BATCH_CALLS,
    }
    for name, value in limits.items():
        if source.count(name) != 1:
            raise RuntimeError(f"bridge-isolated.js must name {name} once")
        source = source.replace(name, str(value))
    return source


def bridge_scripts() -> tuple[QWebEngineScript, QWebEngineScript]:
    """The isolated-world bridge and the page-world ``helm`` object."""
    isolated = "\n".join((_qwebchannel_js(), _resource("guard-isolated.js"), _isolated_bridge()))
    return (
        _script("helm-bridge", isolated, World.ApplicationWorld.value),
        _script("helm-main", _resource("helm-main.js"), World.MainWorld.value),
    )


def theme_script(look: Look) -> QWebEngineScript:
    """The isolated-world script that puts ``look``'s CSS variables on the page's ``:root``."""
    source = _resource("theme-isolated.js")
    if source.count("__HELM_THEME_CSS__") != 1:
        raise RuntimeError("theme-isolated.js must name __HELM_THEME_CSS__ once")
    source = source.replace("__HELM_THEME_CSS__", json.dumps(css_text(look)))
    return _script(THEME_SCRIPT, source, World.ApplicationWorld.value)


def set_theme(page: QWebEnginePage, look: Look) -> None:
    """Give ``page`` the new look now (in Helm's world) and on every later load."""
    scripts = page.scripts()
    for old in scripts.find(THEME_SCRIPT):
        scripts.remove(old)
    scripts.insert(theme_script(look))
    call = f"window.__helmTheme && window.__helmTheme({json.dumps(css_text(look))})"
    page.runJavaScript(call, World.ApplicationWorld.value)
