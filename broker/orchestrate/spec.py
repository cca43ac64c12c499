"""A tool's ``orchestrate`` section: the build it may start, as declared and as reviewed.

```json
"permissions": { "orchestrate": true },
"orchestrate": { "prompt": "Implement task {task} of {project}", "root": "project", "write": true }
```

The schema checks each field; ``lint`` the rules that span fields (a tool only, the permission).
``Orchestrate.fill`` makes the exact prompt of one build from its input: every ``{name}`` filled
with that input's scalar (as an http template is), nothing else added; a brace that is not a
placeholder stays as written, as in http bodies. The prompt is what the Start build dialog
shows, character for character: every hidden character (a bidi override, a control, a zero-width
character) is written as ``[U+XXXX]`` in the prompt itself (``broker.visible``), so the agent
never reads text the user could not see; line breaks and tabs stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from broker.arguments import check_arguments
from broker.errors import CallError, ErrorCode
from broker.kinds.base import Issue
from broker.templates import fill_text, names
from broker.visible import visible

MAX_INPUT_CHARS = 4096
"""The longest string a build's input may give a placeholder (as for http arguments)."""
MAX_PROMPT_CHARS = 65536
"""The longest prompt a build may have, filled and shown (the template is up to 16,384)."""

Root = Literal["project", "workspace"]


@dataclass(frozen=True)
class Orchestrate:
    """The declared build: its prompt template, where it runs, whether the agent may write."""

    prompt: str
    root: Root
    write: bool = False

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(names(self.prompt)))

    @property
    def where(self) -> str:
        """Where it runs, in review's words."""
        if self.root == "project":
            return "the project the tool names (input.project)"
        return "the workspace root"

    def review_lines(self) -> tuple[tuple[str, str], ...]:
        """What plugin review shows of it: (label, value)."""
        return (
            ("Prompt template", self.prompt),
            ("Runs in", self.where),
            ("Agent may change files", "yes, each change confirmed" if self.write else "no"),
        )

    def fill(self, given: Any) -> str:
        """The exact prompt for ``given`` (the build's input, a JSON object of scalars), as the
        dialog shows it and the agent gets it; ``CallError`` ``refused`` when it is not one,
        leaves a placeholder unfilled or makes a prompt longer than ``MAX_PROMPT_CHARS``."""
        check_arguments(given, False)  # a JSON object within the call's bound; the rest is below
        for key, value in given.items():
            if isinstance(value, str) and len(value) > MAX_INPUT_CHARS:
                raise CallError(
                    ErrorCode.REFUSED, f"input {key!r} is longer than {MAX_INPUT_CHARS} characters"
                )
            if value is not None and not isinstance(value, str | int | float | bool):
                raise CallError(
                    ErrorCode.REFUSED, f"input {key!r} must be a string, a number, a boolean or null"
                )
        text, missing = fill_text(self.prompt, given)
        if missing:
            raise CallError(
                ErrorCode.REFUSED,
                f"the build's input lacks {', '.join(repr(m) for m in missing)} (the prompt uses it)",
            )
        shown = visible(text)
        if len(shown) > MAX_PROMPT_CHARS:
            raise CallError(
                ErrorCode.REFUSED, f"the build's prompt is longer than {MAX_PROMPT_CHARS} characters"
            )
        return shown


def parse(raw: Mapping[str, Any]) -> Orchestrate | None:
    """The manifest's ``orchestrate`` section (validated), or None when it declares none."""
    section = raw.get("orchestrate")
    if not isinstance(section, Mapping):
        return None
    root: Root = "project" if section["root"] == "project" else "workspace"
    return Orchestrate(str(section["prompt"]), root, section.get("write") is True)


def lint(raw: Mapping[str, Any]) -> Iterator[Issue]:
    """The rules of ``orchestrate`` that span fields (each field's own are the schema's)."""
    section = raw.get("orchestrate")
    permissions = raw.get("permissions")
    granted = isinstance(permissions, Mapping) and permissions.get("orchestrate") is True
    if section is None:
        if granted:
            yield Issue(
                "$.permissions.orchestrate", 'needs an "orchestrate" section: the build the tool may start'
            )
        return
    if not isinstance(section, Mapping):
        return  # the schema says what is wrong
    if raw.get("kind") != "tool":
        yield Issue("$.orchestrate", 'only a tool can start builds: "kind" must be "tool"')
    if not granted:
        yield Issue(
            "$.orchestrate",
            'starts builds: the manifest must also declare "permissions": { "orchestrate": true }',
        )
