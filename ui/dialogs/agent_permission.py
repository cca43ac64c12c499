"""The question an agent's permission request puts to the user, when Helm's policy says ASK.

It belongs to the write-dialog family (``ui.dialogs.base``): Cancel is the default and has the
focus, Esc and closing the window refuse, the input guard drops a click already on its way,
and the answer is awaited as a future. It shows the tool call's title, kind and content, a
line diff for an edit, and every option the agent offered — all as plain text, hidden
characters visible.

The allow buttons are labelled in Helm's words for the option's ACP kind ("Allow once",
"Allow always for this session"), never in the agent's, so an agent cannot name an allow
"Cancel". One button per allow option the agent offered; the agent's reject options need none:
Cancel is the refusal, and Helm answers it with the agent's reject option (or ``cancelled``).
"""

from __future__ import annotations

from broker.agents import Option, PermissionQuestion
from broker.agents.policy import ALLOW_KINDS, REJECT_KINDS
from ui.dialogs.base import GUARD_MS, QuestionDialog
from ui.dialogs.confirm import diff_view
from ui.qt import QFormLayout, QLabel, QPushButton, QVBoxLayout, QWidget
from ui.text import elide, is_short, plain_box, plain_heading, plain_label, plain_tip

TITLE = "Allow the agent's tool call?"
ALLOW_WORDS = {"allow_once": "Allow once", "allow_always": "Allow always for this session"}
KIND_WORDS = {
    "allow_once": "allows once",
    "allow_always": "allows always",
    "reject_once": "refuses once",
    "reject_always": "refuses always",
}


def allow_label(option: Option, options: tuple[Option, ...]) -> str:
    """Helm's words for an allow option; the agent's name only tells apart two of one kind."""
    words = ALLOW_WORDS.get(option.kind, "Allow")
    if sum(o.kind == option.kind for o in options) > 1:
        words += f" ({elide(option.name, 30)})"
    return words


def offered_text(options: tuple[Option, ...]) -> str:
    """Every option the agent offered, one a line: its name, then what it does in Helm's words."""
    return "\n".join(f"{o.name} — {KIND_WORDS.get(o.kind, o.kind)}" for o in options)


def refusal_text(options: tuple[Option, ...]) -> str:
    reject = next((o for k in REJECT_KINDS for o in options if o.kind == k), None)
    if reject is None:
        return "Cancel refuses: the agent offered no reject option, so it is told the request was cancelled."
    return f"Cancel refuses: the agent is answered with its option “{elide(reject.name, 60)}”."


class PermissionDialog(QuestionDialog):
    """Allow (with one of the agent's allow options) or Cancel one tool call."""

    confirmation = True

    def __init__(
        self, question: PermissionQuestion, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS
    ) -> None:
        allows = [o for o in question.options if o.kind in ALLOW_KINDS]
        first = allows[0] if allows else None
        label = allow_label(first, question.options) if first else "Allow"
        super().__init__(TITLE, label, parent, guard_ms=guard_ms)
        self.question = question
        self.picked: str | None = None
        """The id of the option the user chose (None until an allow button is clicked)."""
        self.setMinimumWidth(580)
        layout = QVBoxLayout(self)
        self._describe(layout, question)
        self.accept_button.clicked.disconnect(self.accept)
        self.allow_buttons: dict[str, QPushButton] = {}
        if first is None:
            self.accept_button.hide()
        else:
            self._add_allow(first, self.accept_button)
        for option in allows[1:]:
            button = QPushButton(allow_label(option, question.options), self)
            button.setAutoDefault(False)
            self.buttons.insertWidget(self.buttons.indexOf(self.accept_button), button)
            self._add_allow(option, button)
        layout.addStretch(0)
        layout.addWidget(plain_label(refusal_text(question.options), self))
        layout.addLayout(self.buttons)
        self.focus_cancel()

    def _describe(self, layout: QVBoxLayout, question: PermissionQuestion) -> None:
        layout.addWidget(plain_heading(f"Agent {question.agent} asks to run a tool call.", self))
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        title = question.title
        form.addRow(
            "Tool call", plain_label(title, self, wrap=False) if is_short(title) else plain_box(title, self)
        )
        form.addRow("Kind", plain_label(question.kind or "other", self))
        form.addRow("Workspace", plain_label(question.workspace, self))
        layout.addLayout(form)
        if question.content:
            layout.addWidget(QLabel("What the agent says it will do", self))
            layout.addWidget(plain_box(question.content, self, max_lines=8), 1)
        if question.diff:
            layout.addWidget(QLabel("Line changes", self))
            layout.addWidget(diff_view(question.diff, self), 2)
        layout.addWidget(QLabel("The agent offered", self))
        layout.addWidget(plain_box(offered_text(question.options), self, max_lines=5))

    def _add_allow(self, option: Option, button: QPushButton) -> None:
        self.allow_buttons[option.id] = button
        button.setToolTip(plain_tip(f"Answers the agent with its option “{option.name}” ({option.kind})"))
        button.clicked.connect(lambda: self.choose(option.id))

    def choose(self, option_id: str) -> None:
        """The user allowed with ``option_id``: remember it, then answer CONFIRMED."""
        if self.decision is None:
            self.picked = option_id
            self.accept()
