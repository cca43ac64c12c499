"""A widget's settings form, generated from the ``settings`` its manifest declares.

Each declared field (string, number, integer, boolean, choice) becomes one input; labels and
descriptions come from the extension, so they are shown as plain text. ``check`` is pure: it
turns what the user typed into typed values and a message per wrong field, so the form says
what is wrong as the user types and only valid values are ever applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ui.qt import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide, plain_label, set_plain
from ui.theme import set_tone


@dataclass(frozen=True)
class SettingsCheck:
    values: dict[str, Any]
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def defaults(form: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {key: spec.get("default") for key, spec in form.items() if spec.get("default") is not None}


def _number(text: str, spec: Mapping[str, Any], integer: bool) -> tuple[Any, str | None]:
    try:
        value: float | int = int(text) if integer else float(text)
    except ValueError:
        return None, "a whole number" if integer else "a number"
    if "minimum" in spec and value < spec["minimum"]:
        return None, f"at least {spec['minimum']}"
    if "maximum" in spec and value > spec["maximum"]:
        return None, f"at most {spec['maximum']}"
    return value, None


def check(form: Mapping[str, Mapping[str, Any]], typed: Mapping[str, Any]) -> SettingsCheck:
    """Typed values from the user's input, and what is wrong with each bad field."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for key, spec in form.items():
        kind = spec.get("type")
        raw = typed.get(key)
        if kind == "boolean":
            values[key] = bool(raw)
            continue
        if kind == "choice":
            if raw not in spec.get("choices", []):
                problems[key] = "choose one of the options"
            else:
                values[key] = raw
            continue
        text = "" if raw is None else str(raw).strip() if kind != "string" else str(raw)
        if text == "":
            if spec.get("required"):
                problems[key] = "required"
            continue
        if kind == "string":
            limit = int(spec.get("maxLength", 4096))
            if len(text) > limit:
                problems[key] = f"at most {limit} characters"
            else:
                values[key] = text
            continue
        value, problem = _number(text, spec, kind == "integer")
        if problem:
            problems[key] = problem
        else:
            values[key] = value
    return SettingsCheck(values, problems)


class SettingsForm(QWidget):
    """The form for one widget; ``applied`` carries the values when the user clicks Apply."""

    applied = Signal(dict)

    def __init__(
        self,
        form: Mapping[str, Mapping[str, Any]],
        values: Mapping[str, Any],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.form = dict(form)
        self.inputs: dict[str, QWidget] = {}
        self.errors: dict[str, Any] = {}
        layout = QVBoxLayout(self)
        rows = QFormLayout()
        current = {**defaults(form), **values}
        for key, spec in self.form.items():
            box = QWidget(self)
            col = QVBoxLayout(box)
            col.setContentsMargins(0, 0, 0, 0)
            widget = self._input(spec, current.get(key), box)
            label_text = elide(str(spec.get("label") or key), 60)
            widget.setAccessibleName(label_text)
            self.inputs[key] = widget
            col.addWidget(widget)
            if spec.get("description"):
                hint = plain_label(str(spec["description"]), box)
                set_tone(hint, "muted")
                widget.setAccessibleDescription(elide(str(spec["description"]), 300))
                col.addWidget(hint)
            error = plain_label("", box)
            set_tone(error, "error")
            error.hide()
            self.errors[key] = error
            col.addWidget(error)
            label = plain_label(label_text, self, wrap=False)
            label.setBuddy(widget)
            rows.addRow(label, box)
        layout.addLayout(rows)
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.clicked.connect(self.apply)
        layout.addWidget(self.apply_button)
        self.revalidate()

    def _input(self, spec: Mapping[str, Any], value: Any, parent: QWidget) -> QWidget:
        kind = spec.get("type")
        if kind == "boolean":
            box = QCheckBox(parent)
            box.setChecked(bool(value))
            box.toggled.connect(lambda _on: self.revalidate())
            return box
        if kind == "choice":
            combo = QComboBox(parent)
            for choice in spec.get("choices", []):
                combo.addItem(elide(str(choice), 80), choice)
            combo.setCurrentIndex(max(combo.findData(value), 0))
            combo.currentIndexChanged.connect(lambda _i: self.revalidate())
            return combo
        edit = QLineEdit(parent)
        if spec.get("maxLength"):
            edit.setMaxLength(int(spec["maxLength"]) + 1)  # one over, so the form can say so
        edit.setText("" if value is None else str(value))
        edit.textChanged.connect(lambda _t: self.revalidate())
        return edit

    def typed(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, widget in self.inputs.items():
            if isinstance(widget, QCheckBox):
                out[key] = widget.isChecked()
            elif isinstance(widget, QComboBox):
                out[key] = widget.currentData()
            elif isinstance(widget, QLineEdit):
                out[key] = widget.text()
        return out

    def revalidate(self) -> SettingsCheck:
        result = check(self.form, self.typed())
        for key, label in self.errors.items():
            set_plain(label, result.problems.get(key, ""))
            label.setVisible(key in result.problems)
        self.apply_button.setEnabled(result.ok)
        return result

    def apply(self) -> None:
        result = self.revalidate()
        if result.ok:
            self.applied.emit(result.values)
