"""The Agents page's transcript against a bare QPlainTextEdit, streaming one long paragraph.

An agent streams its message a few words at a time. Written chunk by chunk at the end of a
plain-text view, each insertion lays the whole paragraph out again (time grows with its
square); the transcript gathers chunks and writes them together every ``FLUSH_MS``, here every
50 chunks, as its timer would while an agent floods.
"""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from broker.agents import MessageChunk
from tests.bench.conftest import Bench
from tests.e2e.conftest import QT_NOISE
from ui.agents.transcript import Transcript
from ui.qt import QPlainTextEdit, QTextCursor

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

CHUNKS = 600
CHUNK = "lorem ipsum "


def test_a_long_streamed_paragraph(bench: Bench, qtbot: QtBot) -> None:
    def transcript() -> None:
        view = Transcript()
        view.resize(800, 600)
        view.show()
        for i in range(CHUNKS):
            view.add(MessageChunk(CHUNK))
            if i % 50 == 49:
                view.flush()
        view.flush()
        assert view.toPlainText().replace("\n", "").count(CHUNK) == CHUNKS  # every word, long lines broken
        view.deleteLater()

    def raw() -> None:
        view = QPlainTextEdit()
        view.resize(800, 600)
        view.show()
        for _ in range(CHUNKS):
            end = QTextCursor(view.document())
            end.movePosition(QTextCursor.MoveOperation.End)
            end.insertText(CHUNK)
        view.deleteLater()

    helm = bench.time(transcript, repeat=3, warmup=1)
    baseline = bench.time(raw, repeat=3, warmup=1)
    bench.record(
        f"agents transcript: one paragraph in {CHUNKS} chunks", helm, baseline,
        note="vs each chunk inserted at the end of a QPlainTextEdit",
    )  # fmt: skip
