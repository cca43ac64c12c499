"""One tab of Settings → Connections: a list of profiles beside a form that checks as you type.

A page draws a kind's ``ProfileForm`` (declared as data in the kind's folder: its fields, which
of them show for which choice, and the check). The page keeps the widgets in step with it —
error text under each wrong field, Save enabled only when the whole form is right, a Choose…
button beside a file — and runs Save, Remove and Test against its ``ProfileSection``. Test runs
as a task the page owns, with what the form's ``test_fields`` ask beside the button. A kind that
needs more than the form subclasses ``ProfilePage`` in ``ui/kinds/<kind>/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from broker.errors import HelmError
from broker.kinds.forms import FormCheck, FormField, ProfileForm
from broker.kinds.spec import Outcome
from ui.aio import OwnedTasks
from ui.qt import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.settings.backend import ProfileSection
from ui.text import plain_label, set_plain
from ui.theme import set_tone

KEEP_SECRET = "stored — leave empty to keep it"  # noqa: S105 - a placeholder, not a secret


class Field:
    """One input and the line under it that says what is wrong."""

    def __init__(self, spec: FormField, parent: QWidget) -> None:
        self.spec = spec
        self.container = QWidget(parent)
        col = QVBoxLayout(self.container)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        self.edit: QLineEdit | None = None
        self.combo: QComboBox | None = None
        if spec.kind == "choice":
            self.combo = QComboBox(self.container)
            self.combo.setAccessibleName(spec.label)
            for value, label in spec.choices:
                self.combo.addItem(label, value)
            self.input: QWidget = self.combo
        else:
            self.edit = QLineEdit(self.container)
            self.edit.setAccessibleName(spec.label or spec.placeholder.capitalize() or spec.key)
            self.edit.setPlaceholderText(spec.placeholder)
            if spec.kind == "secret":
                self.edit.setEchoMode(QLineEdit.EchoMode.Password)
            self.input = self.edit
        self.row = QWidget(self.container)
        self.row_layout = QHBoxLayout(self.row)
        self.row_layout.setContentsMargins(0, 0, 0, 0)
        self.row_layout.addWidget(self.input, 1)
        col.addWidget(self.row)
        if spec.help:
            hint = plain_label(spec.help, self.container)
            set_tone(hint, "muted")
            col.addWidget(hint)
        self.error = plain_label("", self.container)
        set_tone(self.error, "error")
        self.error.hide()
        col.addWidget(self.error)
        self.set(spec.default)

    def value(self) -> str:
        if self.combo is not None:
            return str(self.combo.currentData())
        assert self.edit is not None
        return self.edit.text()

    def set(self, value: str) -> None:
        if self.combo is not None:
            index = self.combo.findData(value)
            self.combo.setCurrentIndex(max(index, 0))
        elif self.edit is not None:
            self.edit.setText(value)

    def show_problem(self, problem: str | None) -> None:
        set_plain(self.error, problem or "")
        self.error.setVisible(bool(problem))

    def changed(self, slot: Callable[[], object]) -> None:
        if self.combo is not None:
            self.combo.currentIndexChanged.connect(lambda _i: slot())
        elif self.edit is not None:
            self.edit.textChanged.connect(lambda _t: slot())


class ProfilePage(QWidget):
    """The page of one kind's ``form`` over its ``section``."""

    saved = Signal(str)
    tested = Signal(object)

    def __init__(self, form: ProfileForm, section: ProfileSection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form_spec = form
        self.section = section
        self.picker: QFileDialog | None = None
        self.tasks = OwnedTasks(self)
        self.current: str | None = None
        self._loaded: dict[str, str] = {}  # the form as the current profile was loaded
        outer = QHBoxLayout(self)
        outer.addLayout(self._profile_list())
        right = QVBoxLayout()
        self.managed = plain_label("", self)
        self.managed.setAccessibleName("Managed by your organisation")
        self.managed.setWordWrap(True)
        right.addWidget(self.managed)
        right.addLayout(self._fields(form))
        self.extra = QVBoxLayout()
        right.addLayout(self.extra)
        right.addLayout(self._actions(form))
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(8)
        self.progress.setTextVisible(False)
        self.progress.hide()
        right.addWidget(self.progress)
        self.status = plain_label("", self)
        right.addWidget(self.status)
        self.details = QListWidget(self)
        self.details.setAccessibleName("What the test found")
        self.details.hide()
        right.addWidget(self.details, 1)
        right.addStretch(0)
        outer.addLayout(right, 1)
        self.refresh()
        self.new()

    def _profile_list(self) -> QVBoxLayout:
        left = QVBoxLayout()
        self.list = QListWidget(self)
        self.list.setAccessibleName(f"Saved {self.form_spec.title.lower()}")
        self.list.setMaximumWidth(self.fontMetrics().horizontalAdvance("M") * 16)
        self.list.currentTextChanged.connect(self.load)
        left.addWidget(self.list, 1)
        # What to do next while the list is empty (the form beside it is a new profile's).
        empty = f"No {self.form_spec.title.lower()} yet: fill in the form and Save."
        self.empty_hint = plain_label(empty, self)
        self.empty_hint.setMaximumWidth(self.list.maximumWidth())
        set_tone(self.empty_hint, "muted")
        left.addWidget(self.empty_hint)
        self.new_button = QPushButton("New", self)
        self.new_button.clicked.connect(self.new)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.clicked.connect(self.remove)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.remove_button)
        left.addLayout(buttons)
        return left

    def _fields(self, form: ProfileForm) -> QFormLayout:
        self.form = QFormLayout()
        self.fields: dict[str, Field] = {}
        for spec in form.fields:
            f = self.fields[spec.key] = Field(spec, self)
            self.form.addRow(spec.label, f.container)
            f.changed(self.revalidate)
            if spec.kind == "file":
                browse = QPushButton("Choose…", self)
                browse.setAccessibleName(f"Choose the {spec.label.lower()}")
                browse.clicked.connect(lambda _checked=False, key=spec.key: self.choose_file(key))
                f.row_layout.addWidget(browse)
        return self.form

    def _actions(self, form: ProfileForm) -> QHBoxLayout:
        actions = QHBoxLayout()
        self.save_button = QPushButton("Save", self)
        self.save_button.clicked.connect(self.save)
        self.test_button = QPushButton(form.test_label or "Test", self)
        self.test_button.clicked.connect(self.start_test)
        self.test_button.setVisible(form.test_label is not None)
        actions.addWidget(self.save_button)
        actions.addWidget(self.test_button)
        self.test_inputs: dict[str, QLineEdit] = {}
        self._test_row: list[QWidget] = [self.test_button]
        for spec in form.test_fields:
            edit = QLineEdit(self)
            edit.setPlaceholderText(spec.placeholder or spec.default)
            edit.setAccessibleName(spec.label)
            edit.setToolTip(spec.help)
            edit.setMaximumWidth(edit.fontMetrics().horizontalAdvance("M") * 16)
            label = plain_label(spec.label, self, wrap=False)
            label.setBuddy(edit)
            actions.addWidget(label)
            actions.addWidget(edit)
            self.test_inputs[spec.key] = edit
            self._test_row += [label, edit]
        actions.addStretch(1)
        return actions

    # -- the form ------------------------------------------------------------------------
    def values(self) -> dict[str, str]:
        values = {key: f.value() for key, f in self.fields.items()}
        if self.current is not None and self.section.has_secret(self.current):
            values["has_token"] = "yes"  # noqa: S105 - a flag, not a secret
        return values

    def revalidate(self) -> FormCheck:
        values = self.values()
        result = self.form_spec.check(values)
        for key, f in self.fields.items():
            shown = f.spec.shown(values)
            self.form.setRowVisible(f.container, shown)
            # An empty field the user has not reached yet is not an error to shout about.
            quiet = not values.get(key) and key != "name" and self.current is None
            f.show_problem(None if quiet or not shown else result.problems.get(key))
        if "name" in self.fields:
            self.fields["name"].show_problem(result.problems.get("name") if values.get("name") else None)
        self.save_button.setEnabled(result.ok)
        self.test_button.setEnabled(self.current is not None and self.current == values.get("name"))
        testing = self.form_spec.shows_test(values)
        for widget in self._test_row:
            widget.setVisible(testing)
        self.after_validate(values, result)
        return result

    def after_validate(self, values: Mapping[str, str], result: FormCheck) -> None:
        """Subclasses show or hide their extra parts."""

    # -- actions -------------------------------------------------------------------------
    def refresh(self) -> None:
        names = self.section.names()
        managed = self.section.managed()
        set_plain(self.managed, managed)
        self.managed.setVisible(bool(managed))
        self.list.blockSignals(True)
        self.list.clear()
        self.list.addItems(names)
        self.empty_hint.setVisible(not names)
        for item in self.list.findItems(self.current or "", Qt.MatchFlag.MatchExactly):
            self.list.setCurrentItem(item)  # the profile being edited stays the selected one
        self.list.blockSignals(False)

    def follow(self) -> None:
        """The profiles changed on disk: list them again; the form keeps what the user typed,
        and a profile shown but not being edited shows as it now is."""
        edited = self.current is not None and self.values() != self._loaded
        self.refresh()
        if self.current is not None and not edited and self.current in self.section.names():
            self.load(self.current)

    def new(self) -> None:
        self.current = None
        self.list.clearSelection()
        for f in self.fields.values():
            f.set(f.spec.default)
            if f.edit is not None and f.spec.kind == "secret":
                f.edit.setPlaceholderText(f.spec.placeholder)
        self.say("")
        self.revalidate()

    def load(self, name: str) -> None:
        raw = self.section.get(name) if name else None
        if raw is None:
            return
        self.current = name
        values = self.form_spec.values_from(raw | {"has_token": self.section.has_secret(name)})
        for key, f in self.fields.items():
            f.set(values.get(key, f.spec.default))
            if f.edit is not None and f.spec.kind == "secret":
                f.edit.clear()
                f.edit.setPlaceholderText(
                    KEEP_SECRET if self.section.has_secret(name) else f.spec.placeholder
                )
        self.fields["name"].set(name)
        self._loaded = self.values()
        self.say("")
        self.details.hide()
        self.revalidate()

    def save(self) -> None:
        result = self.revalidate()
        if result.raw is None:
            return
        name, secrets = self.to_save()
        self.store(name, result.raw, secrets)

    def to_save(self) -> tuple[str, dict[str, str | None]]:
        """The profile's name and its secrets as a save takes them (None: keep the stored one)."""
        values = self.values()
        name = values["name"]
        secrets = {key: (values.get(key) or None) for key in self.form_spec.secrets}
        if self.current != name:
            # A new profile (or a renamed one) has nothing stored to keep.
            secrets = {key: values.get(key, "") for key in self.form_spec.secrets}
        for key in self.form_spec.secrets:
            if not self.fields[key].spec.shown(values):
                secrets[key] = ""  # a secret the profile no longer has a field for is forgotten
        return name, secrets

    def store(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        """Save ``raw`` as ``name`` and show it, or say why it was refused."""
        try:
            self.section.save(name, raw, secrets)
        except HelmError as err:
            self.say(str(err), ok=False)
            return
        self.refresh()
        self.current = name
        matches = self.list.findItems(name, Qt.MatchFlag.MatchExactly)
        if matches:
            self.list.blockSignals(True)
            self.list.setCurrentItem(matches[0])
            self.list.blockSignals(False)
        self.load(name)
        self.say(f"Saved {name}.", ok=True)
        self.saved.emit(name)

    def remove(self) -> None:
        if self.current is None:
            return
        name = self.current
        try:
            self.section.remove(name)
        except HelmError as err:
            self.say(str(err), ok=False)
            return
        self.refresh()
        self.new()
        self.say(f"Removed {name}.", ok=True)

    def choose_file(self, key: str | None = None) -> QFileDialog:
        """Pick the file of ``key`` (default: the form's first file field) without blocking."""
        key = key or next(f.key for f in self.form_spec.fields if f.kind == "file")
        # A non-blocking dialog: the static helpers would run a nested event loop.
        self.picker = QFileDialog(self, f"Choose the {self.fields[key].spec.label}")
        self.picker.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.picker.fileSelected.connect(self.fields[key].set)
        self.picker.open()
        return self.picker

    def start_test(self) -> asyncio.Task[Outcome] | None:
        if self.current is None:
            return None
        return self.tasks.start(self.run_test(self.current))

    async def run_test(self, name: str) -> Outcome:
        self.busy(True, f"Testing {name}…")
        typed = {key: edit.text() for key, edit in self.test_inputs.items()}
        try:
            result = await self.section.test(name, self.form_spec.test_inputs(typed))
        finally:
            self.busy(False)
        self.say(result.message, ok=result.ok)
        self.details.clear()
        self.details.addItems(list(result.details))
        self.details.setVisible(bool(result.details))
        self.tested.emit(result)
        return result

    def busy(self, on: bool, message: str = "") -> None:
        self.progress.setVisible(on)
        self.test_button.setEnabled(not on)
        if on:
            self.say(message)

    def say(self, message: str, *, ok: bool | None = None) -> None:
        set_plain(self.status, message)
        set_tone(self.status, None if ok is None else ("ok" if ok else "error"))

    def cancel_tasks(self) -> None:
        self.tasks.cancel()
