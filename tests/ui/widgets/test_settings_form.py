"""The widget settings form generated from a manifest's ``settings``."""

from __future__ import annotations

from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from tests.ui.samples import BIDI, HTML, manifest_raw
from ui.qt import QCheckBox, QComboBox, QLabel, QLineEdit, Qt
from ui.widgets.settings_form import SettingsForm, check

FORM: dict[str, Any] = manifest_raw()["settings"]  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("typed", "problems"),
    [
        pytest.param({"repo": "me/app", "limit": "5", "state": "open"}, {}, id="valid"),
        pytest.param({"repo": "", "limit": "5", "state": "open"}, {"repo": "required"}, id="required"),
        pytest.param(
            {"repo": "a", "limit": "x", "state": "open"}, {"limit": "a whole number"}, id="not-a-number"
        ),
        pytest.param(
            {"repo": "a", "limit": "0", "state": "open"}, {"limit": "at least 1"}, id="below-minimum"
        ),
        pytest.param(
            {"repo": "a", "limit": "101", "state": "open"}, {"limit": "at most 100"}, id="above-maximum"
        ),
        pytest.param({"repo": "a" * 101, "state": "open"}, {"repo": "at most 100 characters"}, id="too-long"),
        pytest.param(
            {"repo": "a", "state": "merged"}, {"state": "choose one of the options"}, id="bad-choice"
        ),
    ],
)
def test_check_says_what_is_wrong_with_each_field(typed: dict[str, Any], problems: dict[str, str]) -> None:
    assert check(FORM, typed).problems == problems


def test_check_returns_typed_values() -> None:
    result = check(FORM, {"repo": "me/app", "limit": "7", "state": "closed", "compact": True})
    assert result.values == {"repo": "me/app", "limit": 7, "state": "closed", "compact": True}


def test_the_form_has_one_input_per_declared_field_with_defaults(qtbot: QtBot) -> None:
    form = SettingsForm(FORM, {})
    qtbot.addWidget(form)
    assert isinstance(form.inputs["repo"], QLineEdit)
    assert isinstance(form.inputs["compact"], QCheckBox)
    assert isinstance(form.inputs["state"], QComboBox)
    assert form.inputs["limit"].text() == "20"  # type: ignore[attr-defined]
    assert not form.apply_button.isEnabled()  # repo is required


def test_typing_validates_and_apply_emits_the_values(qtbot: QtBot) -> None:
    form = SettingsForm(FORM, {})
    qtbot.addWidget(form)
    form.show()
    qtbot.keyClicks(form.inputs["repo"], "me/app")
    edit = form.inputs["limit"]
    assert isinstance(edit, QLineEdit)
    edit.clear()
    qtbot.keyClicks(edit, "500")
    assert form.errors["limit"].text() == "at most 100"
    assert not form.apply_button.isEnabled()
    edit.clear()
    qtbot.keyClicks(edit, "50")
    with qtbot.waitSignal(form.applied, timeout=2000) as blocker:
        qtbot.mouseClick(form.apply_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [{"repo": "me/app", "limit": 50, "state": "open", "compact": False}]


def test_labels_and_descriptions_from_the_manifest_are_plain_text(qtbot: QtBot) -> None:
    form = SettingsForm({"x": {"type": "string", "label": HTML, "description": BIDI}}, {})
    qtbot.addWidget(form)
    texts = {label.text(): label.textFormat() for label in form.findChildren(QLabel)}
    assert texts[HTML] == Qt.TextFormat.PlainText
    assert "invoice[U+202E]gpj.exe" in texts
