"""What ``helm app test`` decides around an app it runs headless (no I/O, no Qt).

Before the run: the opening tool's arguments from ``--args`` (``opening_settings``: they become
the app's settings, as on the dashboard, so only what the settings form holds can be given, and
the arguments Helm then sends are checked against the tool's input schema), and which tools the
run treats as only reading (``marked``). After it: when the app is quiet (``Quiet``) and what
the run found (``TrialOutcome``)::

    settings = opening_settings(reviewed, {"title": "Groceries"})
    reads = marked(reviewed, ["add_item"], all_reads=False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema
from jsonschema.exceptions import SchemaError

from broker.apps import launch
from broker.apps.errors import AppError
from broker.schema_words import issues_of

if TYPE_CHECKING:
    from broker.apps.review import AppReview

MAX_PROBLEMS = 10
"""How many schema problems of ``--args`` one error lists."""
CONSOLE_ERROR = 2
WITHHELD_NOTE = "Potential permissions policy violation: "


def parse_arguments(text: str) -> dict[str, Any]:
    """``--args``: a JSON object, or ``AppError`` saying what is wrong with it."""
    try:
        value = json.loads(text)
    except ValueError as err:
        raise AppError(f"--args is not JSON: {err}") from None
    if not isinstance(value, dict):
        raise AppError(f"--args must be a JSON object (the tool's arguments by name), not {_kind(value)}")
    return value


def opening_settings(reviewed: AppReview, given: Mapping[str, Any]) -> dict[str, Any]:
    """The app's settings for this run: the form's defaults with ``given`` over them. The
    arguments they become (``launch.arguments``) must fit the opening tool's input schema;
    ``AppError`` names every argument that does not."""
    tool = reviewed.opener
    if tool is None:
        if given:
            raise AppError("the app opens with no tool call (no tool is linked to it): --args has no use")
        return {}
    form = reviewed.settings
    schema = reviewed.opener_schema
    declared = schema.get("properties")
    props: Mapping[str, Any] = declared if isinstance(declared, Mapping) else {}
    for name in given:
        if name in form:
            continue
        if name in props:
            raise AppError(
                f"--args: {name}: Helm's settings cannot hold this argument of {tool.name} (its type), "
                "so Helm never sends it; leave it to the server's default"
            )
        known = ", ".join(form) or "none"
        raise AppError(f"--args: {name}: not an argument of {tool.name} (its settings: {known})")
    settings = dict(given)
    if reviewed.unset:  # the dashboard does not call the tool at all (its card says why): nor does this
        return settings
    sent = launch.arguments(form, settings)
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = sorted(validator.iter_errors(sent), key=lambda e: list(e.absolute_path))
    except SchemaError:
        raise AppError(f"the input schema of {tool.name} is not a valid JSON Schema") from None
    problems = [f"{issue.path}: {issue.message}" for err in errors for issue in issues_of(err)]
    if problems:
        shown = "; ".join(problems[:MAX_PROBLEMS])
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        raise AppError(f"--args do not fit the input schema of {tool.name}: {shown}{more}")
    return settings


def marked(reviewed: AppReview, reads: Sequence[str], *, all_reads: bool) -> tuple[str, ...]:
    """The tools the run treats as only reading: ``reads``, or with ``all_reads`` every tool
    Helm would confirm; ``AppError`` for a name that is not one of those (``AppReview.spec``)."""
    if all_reads:
        writes = {t.name for t in reviewed.writes}
        if reviewed.opener is not None and reviewed.opener.write:
            writes.add(reviewed.opener.name)
        return tuple(sorted(writes))
    chosen = tuple(sorted(set(reads)))
    reviewed.spec((), chosen)
    return chosen


def console_error(level: int, message: str, source: str) -> bool:
    """Whether a console message fails the run: an error of the app's page. The web engine's
    notes on the permissions Helm withholds from every app (its frame's ``allow`` says
    ``'none'`` for each), which name no script, are Helm's doing, not the app's."""
    return level == CONSOLE_ERROR and not (source == "" and message.startswith(WITHHELD_NOTE))


class Quiet:
    """When the app last did something — a call, a change of its page — and for how long it
    has done nothing since (times from one monotonic clock)."""

    def __init__(self, now: float) -> None:
        self.since = now

    def busy(self, now: float) -> None:
        self.since = now

    def settled(self, now: float, settle: float) -> bool:
        return now - self.since >= settle


@dataclass
class TrialOutcome:
    """What one run found; ``passed`` when the app rendered and nothing failed."""

    opened: bool = False
    """Helm checked the app against its server and started its page."""
    initialized: bool = False
    rendered: bool = False
    """The app initialized with Helm and its page shows something (text or an element)."""
    pending: int = 0
    """Calls still running at the time limit (0: none)."""
    still_changing: bool = False
    """The page still changed at the time limit (a clock, an animation): not a failure."""
    calls: int = 0
    problems: list[str] = field(default_factory=list)
    """Every failed call, refusal, blocked request and console error, one line each."""
    text: str = ""
    text_length: int = 0

    @property
    def passed(self) -> bool:
        return self.rendered and not self.pending and not self.problems

    def summary(self) -> str:
        if self.passed:
            return f"PASS: the app rendered; {self.calls} call(s), nothing failed or was refused"
        if not self.opened:
            first = "the app did not open"
        elif not self.initialized:
            first = "the app did not initialize with Helm"
        elif not self.rendered:
            first = "the app shows nothing"
        elif self.pending:
            first = f"{self.pending} call(s) still running at the time limit"
        else:
            first = "the app rendered"
        return f"FAIL: {first}; {len(self.problems)} problem(s)"


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a number" if not isinstance(value, bool) else "true or false"
