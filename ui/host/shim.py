"""The scripts that give a page its ``window.helm``: Helm's isolated world and the page's.

The isolated world holds the web channel (``qt.webChannelTransport`` exists only there) and
Helm's guards (navigation, clipboard); the page's world gets a frozen ``helm`` object talking to
it over a private node. Both run only in the main frame, so subframes never reach the bridge.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from broker.broker import MAX_CALL_BYTES
from ui.host.bridge import MAX_NAME_CHARS
from ui.qt import QFile, QIODevice, QWebEngineScript

World = QWebEngineScript.ScriptWorldId


def _resource(name: str) -> str:
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


def _isolated_bridge() -> str:
    """The bridge script with Helm's limits written in (the page never sees this world)."""
    source = _resource("bridge-isolated.js")
    limits = {"__HELM_MAX_NAME_CHARS__": MAX_NAME_CHARS, "__HELM_MAX_CALL_CHARS__": MAX_CALL_BYTES}
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
