"""What a TDT write does, in the words its dialog shows, and the ``user_instruction`` made of them.

Every TDT write carries a ``user_instruction``: TDT records it as the user's own authorisation.
Helm writes it (an extension never may) from the dialog's "Action" line — the action and its
object, such as ``Approve candidate 3f…`` or ``Snooze reminder 9a… to 2030-01-02T09:00+00:00`` —
so it says what the user approved, not only which tool ran. It is one line within TDT's
shortest limit (240 characters, ``tdt_constitution_save``) and is the same for the same
arguments: describe and send compute it alike, so the confirmation token binds it, and TDT's
identical retries (which must repeat the instruction) find it unchanged.

The object comes only from the call's arguments the dialog shows: ids and hashes (which TDT
checks against its patterns), revisions, times, and a reminder's title, quoted and cut short.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_INSTRUCTION = 240
"""TDT's shortest ``user_instruction`` limit (its policy save); the others allow 300 or 500."""
_MAX_QUOTED = 80
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_DECISIONS = {"approve": "Approve", "reject": "Reject", "edit": "Edit"}
_NOUNS = {
    "brain_names": "the brain's file names",
    "brain_repair": "the brain repair",
    "constitution": "the workspace policy",
}


def one_line(value: object, limit: int) -> str:
    """``value`` as text on one line (control characters become spaces), at most ``limit``."""
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoted(value: object) -> str:
    return f"“{one_line(value, _MAX_QUOTED)}”"


def _scalar(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return one_line(value, 100)


def action(tool: str, args: Mapping[str, Any]) -> str:
    """The dialog's Action line for TDT write ``tool`` with ``args``."""
    words = tool.removeprefix("tdt_").split("_")
    verb, noun_key = (words[-1], "_".join(words[:-1])) if len(words) > 1 else (words[0], "")
    noun = _NOUNS.get(noun_key, noun_key.replace("_", " "))
    decision = args.get("decision")
    if tool == "tdt_candidate_review" and isinstance(decision, Mapping):
        verb = _DECISIONS.get(str(decision.get("action")), "Review")
    else:
        verb = verb.capitalize()
    parts = [verb, noun] if noun else [verb]
    item = _scalar(args, "id")
    if item is not None:
        parts.append(item)
    title = args.get("title")
    if isinstance(title, str):
        parts.append(_quoted(title))
    due = _scalar(args, "due_at")
    changes = args.get("changes")
    if due is None and isinstance(changes, Mapping):
        due = _scalar(changes, "due_at")
    if due is not None:
        parts.append(("to " if verb == "Snooze" else "due ") + due)
    revision = _scalar(args, "reminder_revision")
    if revision is not None:
        parts.append(f"at revision {revision}")
    proposal = _scalar(args, "expected_sha256")
    if proposal is not None and item is None:
        parts.append(f"as previewed ({proposal})")
    return one_line(" ".join(parts), MAX_INSTRUCTION)


def user_instruction(tool: str, args: Mapping[str, Any], extension: str) -> str:
    """The ``user_instruction`` Helm sends with TDT write ``tool`` (see the module docstring)."""
    text = f"User confirmed in Helm: {action(tool, args)} (asked by {extension})"
    return one_line(text, MAX_INSTRUCTION)
