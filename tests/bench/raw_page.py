"""The raw side of the host benchmarks: a bare QWebChannel page, with PySide6 and nothing of Helm.

The raw child processes import this module alone, so what they measure is the library's own
cost; Helm's side imports it too, to answer with the same text built the same way.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QFile, QIODevice, QObject, Signal, Slot
from PySide6.QtWebEngineCore import QWebEngineScript, QWebEngineUrlRequestJob, QWebEngineUrlSchemeHandler

MIB = 1024 * 1024
MIME = {"html": b"text/html", "js": b"text/javascript", "css": b"text/css"}

RAW_SHIM = """
(function () {
  var pending = Object.create(null), next = 0, obj = null, queued = [];
  new QWebChannel(qt.webChannelTransport, function (ch) {
    obj = ch.objects.raw;
    obj.done.connect(function (id, text) { var r = pending[id]; delete pending[id]; r(JSON.parse(text)); });
    queued.splice(0).forEach(function (f) { f(); });
  });
  window.helm = { call: function (c, o, a) {
    return new Promise(function (resolve) {
      next += 1; var id = String(next); pending[id] = resolve;
      var send = function () { obj.call(id, c, o, JSON.stringify(a)); };
      if (obj) send(); else queued.push(send);
    });
  } };
})();
"""


def raw_answer(operation: str) -> str:
    """The result text both sides send: 1 MiB of data for ``big``, none for anything else."""
    if operation == "big":
        return '{"ok":true,"data":"' + "x" * MIB + '","error":null}'
    return '{"ok":true,"data":null,"error":null}'


class RawObject(QObject):
    """A bare channel object: answers every call synchronously from the slot."""

    done = Signal(str, str)

    @Slot(str, str, str, str)
    def call(self, request_id: str, _connection: str, operation: str, args_json: str) -> None:
        self.done.emit(request_id, raw_answer(operation))


def raw_script() -> QWebEngineScript:
    """qwebchannel.js and the shim, in the page's own world, before the page's scripts."""
    source = QFile(":/qtwebchannel/qwebchannel.js")
    if not source.open(QIODevice.OpenModeFlag.ReadOnly):
        raise RuntimeError("Qt's qwebchannel.js is missing")
    script = QWebEngineScript()
    script.setSourceCode(bytes(source.readAll().data()).decode("utf-8") + RAW_SHIM)
    source.close()
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld.value)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    return script


class FolderHandler(QWebEngineUrlSchemeHandler):
    """Serves the files of ``folder`` on a custom scheme, as a bare app would."""

    def __init__(self, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = folder

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        name = job.requestUrl().path().lstrip("/") or "index.html"
        buffer = QBuffer(job)
        buffer.setData(QByteArray((self.folder / name).read_bytes()))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        job.reply(MIME.get(name.rsplit(".", 1)[-1], b"application/octet-stream"), buffer)
