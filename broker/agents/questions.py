"""The questions an agent session puts to the user, as objects (no widget, no terminal here).

* ``PermissionQuestion`` — the agent asks to run a tool call: its title, kind, content (a diff
  for edits) and the options the agent offered. A ``PermissionAsker`` answers it: a
  Cancel-focused dialog in the UI, a y/N prompt in the CLI, a fake in tests.
* A write through ``fs/write_text_file`` goes through the one write pipeline
  (``broker.writes``, from ``broker.agents.files``): its ``broker.summary.WriteSummary`` is
  answered by the same ``Confirmer`` every other write in Helm uses.

Every string a question carries may come from the agent: show it as plain text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from broker.agents.policy import Option

MAX_DIFF = 256 * 1024


@dataclass(frozen=True)
class PermissionQuestion:
    """One permission request, as the user is asked it."""

    decision_id: str
    agent: str
    workspace: str
    title: str
    kind: str
    content: str
    diff: str
    options: tuple[Option, ...]

    def as_text(self) -> str:
        """The question as plain text (the CLI prints this before asking y/N)."""
        lines = [f"Agent {self.agent} asks to run a tool ({self.kind or 'other'}):", f"  {self.title}"]
        if self.content:
            lines += ["", self.content]
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        lines += ["", "Offered: " + ", ".join(f"{o.name} [{o.kind}]" for o in self.options)]
        return "\n".join(lines)


class PermissionAsker(Protocol):
    """Asks the user about one permission request.

    Returns the id of the option the user picked, or None when they declined or closed the
    question. Helm answers the agent only with an option it offered; anything else (a reject
    pick, None, a timeout, an error) is a refusal.
    """

    async def __call__(self, question: PermissionQuestion) -> str | None: ...


def clip_diff(diff: str) -> str:
    if len(diff) <= MAX_DIFF:
        return diff
    return diff[:MAX_DIFF] + "\n… (the rest of the diff is not shown)\n"
