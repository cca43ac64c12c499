"""A kind's settings form, declared as data: the fields, when each shows, and the check.

Settings → Connections draws one tab per form (``ui/settings/page.py``), and the command line
can build ``helm <group> add`` from the same fields (``broker.kinds.cli``), so the form, the
CLI and the stored profile never disagree. ``check`` takes the form's values (field key →
text) and returns a ``FormCheck``: the profile's JSON when every field is right, and a message
for each field that is not. The rules are the kind's own (its ``profiles`` module); a form
only says which field each rule is about.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from broker.names import NAME_RULE, valid_name

Values = Mapping[str, str]
FieldKind = Literal["text", "secret", "choice", "file"]


@dataclass(frozen=True)
class FormField:
    """One input. ``when``: shown only while another field has that value; ``unless``: hidden
    while another field has that value. A ``secret`` is never stored in settings: it goes to
    the credential store under its key. A ``file`` is a path with a Choose… button."""

    key: str
    label: str
    kind: FieldKind = "text"
    choices: tuple[tuple[str, str], ...] = ()
    """(value, label) of a ``choice``."""
    when: tuple[str, str] | None = None
    unless: tuple[str, str] | None = None
    placeholder: str = ""
    default: str = ""
    help: str = ""
    """One line for ``helm <group> add --help``."""

    def shown(self, values: Values) -> bool:
        if self.when is not None and values.get(self.when[0]) != self.when[1]:
            return False
        return self.unless is None or values.get(self.unless[0]) != self.unless[1]


@dataclass(frozen=True)
class FormCheck:
    raw: dict[str, Any] | None
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class ProfileForm:
    """A kind's profile form (see the module docstring). The first field is the name."""

    title: str
    """The tab in Settings → Connections: "Services", "MCP servers"…"""
    fields: tuple[FormField, ...]
    check: Callable[[Values], FormCheck]
    values_from: Callable[[Mapping[str, Any]], dict[str, str]]
    """A stored profile's JSON → the form's values (secrets are never filled in)."""
    test_label: str | None = "Test"
    """The Test button (None: no button; the kind has no ``probe``)."""
    test_fields: tuple[FormField, ...] = ()
    """What the Test button asks beside it (the http kind: which path to GET). Never stored:
    the probe gets them, keyed like the fields, with each one's default when left empty."""
    test_when: tuple[str, str] | None = None
    """The Test button shows only while this field has this value (None: always)."""
    test_unless: tuple[str, str] | None = None
    """The Test button hides while this field has this value (None: never)."""

    def test_inputs(self, typed: Values) -> dict[str, str]:
        """The test fields' values: what the user typed, or each field's default."""
        return {f.key: (typed.get(f.key) or "").strip() or f.default for f in self.test_fields}

    def shows_test(self, values: Values) -> bool:
        if self.test_label is None:
            return False
        if self.test_unless is not None and values.get(self.test_unless[0]) == self.test_unless[1]:
            return False
        return self.test_when is None or values.get(self.test_when[0]) == self.test_when[1]

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.fields if f.kind == "secret")


def done(raw: dict[str, Any], problems: dict[str, str]) -> FormCheck:
    return FormCheck(None if problems else raw, problems)


def check_name(values: Values, problems: dict[str, str]) -> None:
    """The name field: present, and a valid profile name."""
    name = values.get("name", "")
    if not name:
        problems["name"] = "give the profile a name"
    elif not valid_name(name):
        problems["name"] = NAME_RULE


def one_line(values: Values, key: str, problems: dict[str, str], what: str) -> None:
    """A secret typed into a form is one line (it goes into a header or a variable)."""
    if any(c in values.get(key, "") for c in "\r\n\0"):
        problems[key] = f"the {what} must be one line"


def command_line(values: Values, problems: dict[str, str], missing: str) -> list[str]:
    """The ``command`` and ``args`` fields as one argv: the arguments split as a shell would,
    though no shell ever runs them. ``missing`` is the message for an empty command."""
    command = values.get("command", "").strip()
    try:
        args = shlex.split(values.get("args", ""))
    except ValueError:
        args = []
        problems["args"] = "a quote is not closed"
    if not command:
        problems["command"] = missing
    elif "\0" in command:
        problems["command"] = "the command must not contain NUL"
    return [command, *args]


def plain_values(raw: Mapping[str, Any]) -> dict[str, str]:
    """The form values of a profile whose JSON is flat text: every set value as text."""
    return {k: str(v) for k, v in raw.items() if v is not None}
