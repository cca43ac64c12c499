"""Settings → Connections → Databases: a SQLite file, or host, port, database and user."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ui.qt import QFileDialog, QPushButton, QWidget
from ui.settings.backend import ProfileSection
from ui.settings.page import FieldSpec, ProfilePage
from ui.settings.validation import FormCheck, check_database

ENGINES = (("sqlite", "SQLite"), ("postgres", "PostgreSQL"), ("mysql", "MySQL / MariaDB"))


class DatabasesPage(ProfilePage):
    FIELDS = (
        FieldSpec("name", "Name", placeholder="local-app"),
        FieldSpec("engine", "Engine", "choice", ENGINES, default="sqlite"),
        FieldSpec("path", "SQLite file", when=("engine", "sqlite"), placeholder="/home/me/app.db"),
        FieldSpec("host", "Host", placeholder="127.0.0.1"),
        FieldSpec("port", "Port"),
        FieldSpec("database", "Database"),
        FieldSpec("user", "User"),
        FieldSpec(
            "use_password",
            "Password",
            "choice",
            (("yes", "Sign in with a password"), ("no", "No password")),
            default="yes",
        ),
        FieldSpec("password", "", "secret", when=("use_password", "yes"), placeholder="password"),
    )
    SECRETS = ("password",)
    SERVER_FIELDS = ("host", "port", "database", "user", "use_password", "password")

    def __init__(self, section: ProfileSection, parent: QWidget | None = None) -> None:
        super().__init__(section, parent)
        self.browse = QPushButton("Choose…", self)
        self.browse.clicked.connect(self.choose_file)
        self.fields["path"].row_layout.addWidget(self.browse)
        self.picker: QFileDialog | None = None

    def visible(self, spec: FieldSpec, values: Mapping[str, str]) -> bool:
        if spec.key in self.SERVER_FIELDS and values.get("engine") == "sqlite":
            return False
        return super().visible(spec, values)

    def check(self, values: Mapping[str, str]) -> FormCheck:
        return check_database(values)

    def values_from(self, raw: Mapping[str, Any]) -> dict[str, str]:
        values = {k: str(v) for k, v in raw.items() if v is not None and k != "password"}
        values["use_password"] = "yes" if raw.get("password", True) else "no"
        return values

    def choose_file(self) -> QFileDialog:
        # A non-blocking dialog: the static helpers would run a nested event loop.
        self.picker = QFileDialog(self, "Choose a SQLite file")
        self.picker.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.picker.fileSelected.connect(self.fields["path"].set)
        self.picker.open()
        return self.picker
