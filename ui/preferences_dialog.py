"""Helm → Preferences: the appearance (system, light, dark) and the text size.

Each change applies at once — to Helm's windows and, through their CSS variables, to every
extension frame and MCP App — and is kept in ``preferences.json`` (``ui.preferences``).
"""

from __future__ import annotations

from broker.errors import SettingsError
from ui.preferences import Preferences, PreferencesStore
from ui.qt import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import plain_label, set_plain
from ui.theme import Theme, set_tone
from ui.theme_data import MAX_FONT_PT, MIN_FONT_PT, Appearance

APPEARANCES = (
    (Appearance.SYSTEM, "Follow the system"),
    (Appearance.LIGHT, "Light"),
    (Appearance.DARK, "Dark"),
)


class PreferencesDialog(QDialog):
    changed = Signal(object)
    """The ``Preferences`` now in force."""

    def __init__(self, store: PreferencesStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.theme = Theme.of()
        self.setWindowTitle("Preferences")
        self.setAccessibleName("Preferences")
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("M") * 30)  # the note on one line
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.appearance = QComboBox(self)
        for value, label in APPEARANCES:
            self.appearance.addItem(label, value.value)
        form.addRow("&Appearance", self.appearance)
        self.system_size = QCheckBox("The system's text size", self)
        form.addRow("Text", self.system_size)
        self.font_size = QDoubleSpinBox(self)
        self.font_size.setRange(MIN_FONT_PT, MAX_FONT_PT)
        self.font_size.setDecimals(1)
        self.font_size.setSingleStep(1.0)
        self.font_size.setSuffix(" pt")
        form.addRow("Text &size", self.font_size)
        layout.addLayout(form)
        note = plain_label("Extension frames and MCP Apps follow the appearance and the text size.", self)
        set_tone(note, "muted")
        layout.addWidget(note)
        self.status = plain_label("", self)
        set_tone(self.status, "error")
        layout.addWidget(self.status)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.close)
        layout.addWidget(close)
        self._show(store.get())
        self.appearance.currentIndexChanged.connect(lambda _i: self.apply())
        self.system_size.toggled.connect(lambda _on: self.apply())
        self.font_size.valueChanged.connect(lambda _v: self.apply())
        set_plain(self.status, store.problem or "")

    def _show(self, prefs: Preferences) -> None:
        self.appearance.setCurrentIndex(max(self.appearance.findData(prefs.appearance.value), 0))
        self.system_size.setChecked(prefs.font_pt is None)
        self.font_size.setValue(prefs.font_pt or self.theme.system_font_pt)
        self.font_size.setEnabled(prefs.font_pt is not None)

    def chosen(self) -> Preferences:
        font = None if self.system_size.isChecked() else self.font_size.value()
        appearance = Appearance(str(self.appearance.currentData()))
        return self.store.get().changed(appearance=appearance, font_pt=font)

    def apply(self) -> Preferences:
        """Put the choices in force now and keep them."""
        prefs = self.chosen()
        self.font_size.setEnabled(prefs.font_pt is not None)
        self.theme.follow(prefs)
        try:
            self.store.set(prefs)
        except (SettingsError, OSError) as err:
            set_plain(self.status, str(err) if isinstance(err, SettingsError) else f"Not saved: {err}")
        self.changed.emit(prefs)
        return prefs
