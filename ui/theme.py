"""The look in force, applied to Helm's widgets and announced to its frames.

One ``Theme`` per application (``Theme.of(app)``, like the clipboard guard): it follows the
system's colour scheme (``QStyleHints.colorScheme``, live: ``colorSchemeChanged``) unless the
user chose light or dark in Preferences, and the text size the user chose. Applying a look sets
the application's palette, font and one style sheet; the style sheet colours the widgets that
carry a ``tone`` (``set_tone``: error, ok, muted, write, warning), so no widget hard-codes a
colour that would vanish on the other scheme. ``changed`` carries each new ``Look`` to whoever
draws with it: the extension frames (their CSS variables), MCP Apps (their host context), lists
with icons.
"""

from __future__ import annotations

from ui.preferences import Preferences
from ui.qt import QApplication, QColor, QFont, QFontDatabase, QObject, QPalette, Qt, QWidget, Signal
from ui.theme_data import RADIUS, SPACE, Appearance, Colours, Look, Scheme, choose_scheme, clamp_font

OBJECT_NAME = "helm-theme"
TONES = ("error", "ok", "muted", "write", "warning")

_SYSTEM = {Qt.ColorScheme.Dark: Scheme.DARK, Qt.ColorScheme.Light: Scheme.LIGHT}


class Theme(QObject):
    changed = Signal(object)
    """The new ``Look``."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.setObjectName(OBJECT_NAME)
        self._app = app
        self.system_font = QFont(app.font())
        self._appearance = Appearance.SYSTEM
        self._font_pt: float | None = None
        self._system = _SYSTEM.get(app.styleHints().colorScheme())
        app.styleHints().colorSchemeChanged.connect(self._system_changed)
        self.look = self._wanted()
        self._apply(self.look)

    @classmethod
    def of(cls, app: QApplication | None = None) -> Theme:
        """The application's theme, made (and applied) the first time it is asked for."""
        app = app or _app()
        found = app.findChild(Theme, OBJECT_NAME)
        return found if isinstance(found, Theme) else cls(app)

    def follow(self, prefs: Preferences) -> None:
        """Apply the user's Appearance and text size."""
        self._appearance, self._font_pt = prefs.appearance, prefs.font_pt
        self._update()

    @property
    def system_font_pt(self) -> float:
        size = self.system_font.pointSizeF()
        return size if size > 0 else 10.0

    def _system_changed(self, scheme: Qt.ColorScheme) -> None:
        self._system = _SYSTEM.get(scheme)
        self._update()

    def _wanted(self) -> Look:
        pt = clamp_font(self._font_pt if self._font_pt is not None else self.system_font_pt)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
        return Look(choose_scheme(self._appearance, self._system), pt, self.system_font.family(), mono)

    def _update(self) -> None:
        look = self._wanted()
        if look != self.look:
            self.look = look
            self._apply(look)
            self.changed.emit(look)

    def _apply(self, look: Look) -> None:
        self._app.setPalette(palette(look.colours))
        font = QFont(self.system_font)
        font.setPointSizeF(look.font_pt)
        self._app.setFont(font)
        self._app.setStyleSheet(style_sheet(look.colours))


def _app() -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("Helm's theme needs the QApplication")
    return app


def palette(c: Colours) -> QPalette:
    """A complete palette for ``c`` (Qt derives the bevel shades from the button colour)."""
    p = QPalette(QColor(c.button), QColor(c.window))
    role = QPalette.ColorRole
    for name, colour in (
        (role.Window, c.window), (role.WindowText, c.text), (role.Base, c.surface),
        (role.AlternateBase, c.surface_alt), (role.Text, c.text), (role.Button, c.button),
        (role.ButtonText, c.text), (role.BrightText, c.danger), (role.Highlight, c.accent),
        (role.HighlightedText, c.on_accent), (role.Link, c.link), (role.LinkVisited, c.link),
        (role.ToolTipBase, c.surface), (role.ToolTipText, c.text), (role.PlaceholderText, c.muted),
        (role.Accent, c.accent),
    ):  # fmt: skip
        p.setColor(name, QColor(colour))
    disabled = QColor(c.muted)
    disabled.setAlpha(170)
    for name in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, name, disabled)
    return p


def style_sheet(c: Colours) -> str:
    """The application's style sheet: colours for toned widgets and the dashboard's strip, and
    Helm's controls drawn on its scales (``SPACE``, ``RADIUS``) with a visible hover and focus."""
    return (
        _controls(c)
        + f"""
*[tone="error"] {{ color: {c.danger}; }}
*[tone="ok"] {{ color: {c.success}; }}
*[tone="muted"] {{ color: {c.muted}; }}
*[tone="write"] {{ color: {c.danger}; font-weight: bold; }}
*[tone="warning"] {{ background: {c.warning_surface}; color: {c.text}; padding: 6px;
    border: 1px solid {c.warning}; }}
QFrame#errorStrip {{ border-left: 4px solid {c.danger}; background: {c.surface_alt}; }}
QFrame#getStarted {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 6px; }}
"""
    )


def _controls(c: Colours) -> str:
    """Buttons, inputs, lists and cards: one border, one radius, the accent on hover and focus
    (a 2 px ring where the keyboard is), roomy rows as in a code editor's lists."""
    s1, _s2, s3, _s4 = SPACE
    return f"""
QPushButton {{ background: {c.button}; color: {c.text}; border: 1px solid {c.border};
    border-radius: {RADIUS}px; padding: 3px {s3}px; }}
QPushButton:hover {{ border-color: {c.accent}; }}
QPushButton:focus {{ border: 2px solid {c.accent}; padding: 2px {s3 - 1}px; }}
QPushButton:pressed, QPushButton:checked {{ background: {c.surface_alt}; }}
QPushButton:disabled {{ color: {c.muted}; border-color: {c.surface_alt}; }}
QPushButton::menu-indicator {{ subcontrol-origin: padding; subcontrol-position: right center;
    right: {s1}px; }}
QPushButton[menuButton="true"] {{ padding-right: {s3 + s3}px; }}
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QDoubleSpinBox {{ border: 1px solid {c.border};
    border-radius: {RADIUS - 2}px; padding: 2px {s1}px; background: {c.surface}; }}
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QSpinBox:focus, QDoubleSpinBox:focus {{
    border: 1px solid {c.accent}; }}
QLineEdit#oneLine {{ border: none; background: transparent; padding: 0; }}
QListView::item, QTreeView::item {{ padding: 2px 0; }}
QListView::item:hover, QTreeView::item:hover, QTableView::item:hover {{ background: {c.surface_alt}; }}
QListView::item:selected, QTreeView::item:selected, QTableView::item:selected {{
    background: {c.accent}; color: {c.on_accent}; }}
QAbstractItemView:focus {{ border: 1px solid {c.accent}; }}
QFrame[card="true"] {{ background: {c.surface}; border: 1px solid {c.border};
    border-radius: {RADIUS}px; }}
QFrame[card="true"]:hover {{ border-color: {c.accent}; }}
QToolTip {{ background: {c.surface}; color: {c.text}; border: 1px solid {c.border}; padding: {s1}px; }}
"""


def set_tone(widget: QWidget, tone: str | None) -> None:
    """Colour ``widget`` as ``tone`` (one of ``TONES``; None: as any other widget), now and
    after every change of look."""
    if tone is not None and tone not in TONES:
        raise ValueError(f"unknown tone {tone!r}")
    if widget.property("tone") == (tone or ""):
        return
    widget.setProperty("tone", tone or "")
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
