"""The questions an app makes Helm ask: opening a link, and the review before it is added.

Both are Helm's Cancel-focused question dialogs (``ui.dialogs.base``): Cancel is the default,
a short input guard drops clicks aimed elsewhere, and every text from the server or the app is
shown as plain characters, hidden characters made visible. The link is shown exactly as it will
be opened (``ui.apps.links``), with its host on a line of its own; it is a confirmation, above
every Helm window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.policy import decide as policy_decide
from broker.policy import in_force
from ui.apps.links import Link
from ui.dialogs.base import GUARD_MS, QuestionDialog
from ui.qt import QCheckBox, QFrame, QGroupBox, QScrollArea, QVBoxLayout, QWidget
from ui.text import elide, plain_box, plain_heading, plain_label
from ui.theme import set_tone

if TYPE_CHECKING:  # the review itself imports the MCP SDK, which the window need not wait for
    from broker.apps.review import AppReview

BLOCKED = {
    "connectDomains": "blocked — an app reaches servers only through Helm's tool calls",
    "frameDomains": "blocked — an app cannot embed other pages",
    "baseUriDomains": "ignored",
}


class OpenLinkDialog(QuestionDialog):
    """ "<app> wants to open a link": the host, the full URL, Open or Cancel (the default)."""

    confirmation = True

    def __init__(self, app_name: str, link: Link, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS):
        super().__init__("Open a link?", "Open in browser", parent, guard_ms=guard_ms)
        self.url = link.url
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(f"The app {elide(app_name, 80)} wants to open a link in your browser to:", self)
        )
        self.host = plain_heading(link.host, self)
        self.host.setObjectName("host")
        layout.addWidget(self.host)
        layout.addWidget(plain_label("The whole link, exactly as it will open:", self))
        self.link = plain_box(link.url, self, max_lines=6, name="The link")
        self.link.setObjectName("url")
        layout.addWidget(self.link)
        layout.addWidget(plain_label("Open it only if you expected it and trust where it goes.", self))
        layout.addLayout(self.buttons)
        self.focus_cancel()


class AppReviewDialog(QuestionDialog):
    """What an app may do before it is added, or approved again once it is in the workspace;
    resource domains are allowed one by one (those its approval allows are ticked), and each
    tool Helm would confirm can be marked as only reading (off by default; ticked when the
    approval marked it and its definition has not changed since)."""

    def __init__(
        self, reviewed: AppReview, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS
    ) -> None:
        verb, button = ("Review app", "Approve") if reviewed.installed else ("Add app", "Add app")
        title = f"{verb} {elide(reviewed.name, 80)} ({reviewed.ext_id})"  # the id beside the name
        super().__init__(title, button, parent, guard_ms=guard_ms)
        self.reviewed = reviewed
        self.setMinimumSize(620, 480)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"{reviewed.name} — {reviewed.uri}", self))
        layout.addWidget(plain_label(f"MCP server: {reviewed.server}", self))
        sha = plain_label(
            f"HTML sha256: {reviewed.document.sha256} (pinned: a change needs your approval)", self
        )
        sha.setObjectName("sha256")
        layout.addWidget(sha)
        if reviewed.changes:
            changed = plain_label(
                "Changed since your last approval:\n" + "\n".join(f"• {c}" for c in reviewed.changes), self
            )
            set_tone(changed, "warning")
            layout.addWidget(changed)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget(scroll)
        body = QVBoxLayout(inner)
        body.addWidget(self._tools(inner))
        body.addWidget(self._declared(inner))
        body.addStretch(1)
        scroll.setWidget(inner)
        layout.addWidget(scroll, 1)
        layout.addLayout(self.buttons)
        self.focus_cancel()

    def _tools(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Tools the app may call (only this server's, only those visible to apps)", parent)
        box.setObjectName("tools")
        col = QVBoxLayout(box)
        opener = self.reviewed.opener
        if opener is not None:
            settings = ", ".join(self.reviewed.settings) or "none"
            opens = plain_label(
                f"Opens by calling {opener.name}; its arguments are the app's settings ({settings})", box
            )
            opens.setObjectName("opener")
            col.addWidget(opens)
        for tool in self.reviewed.reads:
            col.addWidget(plain_label(f"read — {tool.name}", box))
        self.only_reads: dict[str, QCheckBox] = {}
        writes = list(self.reviewed.writes)
        if opener is not None and opener.write and opener.name not in {t.name for t in writes}:
            writes.append(opener)
        for tool in writes:
            line = plain_label(f"WRITE — {tool.name} — asks for your confirmation each time", box)
            set_tone(line, "write")
            col.addWidget(line)
            check = QCheckBox(elide(f"{tool.name} only reads (no confirmation)", 160), box)
            check.setObjectName(f"reads:{tool.name}")
            check.setToolTip(
                "Tick only if you know this tool changes nothing. If the server changes the "
                "tool, Helm asks again."
            )
            check.setChecked(tool.name in self.reviewed.marked)
            self.only_reads[tool.name] = check
            col.addWidget(check)
        if not self.reviewed.reads and not self.reviewed.writes:
            col.addWidget(plain_label("none", box))
        for tool in self.reviewed.hidden:
            col.addWidget(plain_label(f"not available to the app: {tool.name}", box))
        return box

    def _declared(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("What the app's page declares", parent)
        box.setObjectName("declared")
        col = QVBoxLayout(box)
        csp = self.reviewed.document.csp
        for key, verdict in BLOCKED.items():
            for domain in csp.get(key):
                col.addWidget(plain_label(f"{key}: {domain} — {verdict}", box))
        self.allow: dict[str, QCheckBox] = {}
        managed = policy_decide.managed(in_force()).get("apps.resource_domains")
        for domain in csp.get("resourceDomains"):
            check = QCheckBox(elide(f"allow images, fonts, styles and scripts from {domain}", 160), box)
            check.setObjectName(f"allow:{domain}")
            check.setChecked(domain in self.reviewed.allowed and not managed)
            check.setEnabled(not managed)  # the organisation's policy never allows them
            check.setToolTip(managed or "")
            self.allow[domain] = check
            col.addWidget(check)
        for permission in self.reviewed.document.permissions:
            col.addWidget(plain_label(f"asks for {permission} — not granted: Helm grants apps none", box))
        for uri in self.reviewed.resources:
            col.addWidget(plain_label(f"may read resource {uri}", box))
        if col.count() == 0:
            col.addWidget(plain_label("no domains, permissions or other resources", box))
        return box

    @property
    def reads(self) -> list[str]:
        """The tools the user marked as only reading."""
        return [name for name, check in self.only_reads.items() if check.isChecked()]

    @property
    def allowed(self) -> list[str]:
        return [domain for domain, check in self.allow.items() if check.isChecked()]
