"""The agent profile's settings form (Settings → Agents), declared as data like a kind's.

The same choices as ``helm agent add``: a program you installed (command and arguments), or an
adapter from Helm's signed catalogue (``--package``); the variable that receives the key, and
the key itself (a secret: it goes to the credential store, never to settings); whether the
policy may allow the agent's reads inside its folders without asking (off by default).

``check`` turns the form into a stored profile's JSON. For a catalogue adapter the JSON still
names the ``package``: the profile's command is only known once the adapter is installed (the
page installs it, then stores the command that starts it); a profile that still names a
package is refused by ``profiles.parse``, so nothing half-made is ever stored.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from broker.agents import provision
from broker.agents.profiles import AgentProfile
from broker.childenv import command_problem, env_name_problem
from broker.errors import HelmError
from broker.kinds.forms import (
    FormCheck,
    FormField,
    ProfileForm,
    Values,
    check_name,
    command_line,
    done,
    one_line,
)
from broker.kinds.spec import Outcome
from broker.profiles import ProfileStore

LAUNCHER = "start-adapter"
"""The word of ``helm agent start-adapter NAME`` in a profile made from the catalogue."""

FIELDS = (
    FormField("name", "Name", placeholder="claude"),
    FormField(
        "source",
        "Starts",
        "choice",
        (("command", "A program you installed"), ("package", "An adapter from Helm's catalogue")),
        default="command",
    ),
    FormField("command", "Command", when=("source", "command"), placeholder="my-agent"),
    FormField("args", "Arguments", when=("source", "command"), placeholder="--acp"),
    FormField("package", "Adapter", when=("source", "package"), placeholder="claude-code or codex"),
    FormField("key_env", "Key variable", placeholder="ANTHROPIC_API_KEY (empty: no key)"),
    FormField("key", "Key", "secret", placeholder="kept in the credential store"),
    FormField(
        "allow_reads",
        "Read requests",
        "choice",
        (("no", "Ask me each time"), ("yes", "Allow reads inside the agent's folders without asking")),
        default="no",
    ),
)


def check(values: Values) -> FormCheck:
    problems: dict[str, str] = {}
    check_name(values, problems)
    raw: dict[str, Any] = {}
    if values.get("source", "command") == "package":
        package = values.get("package", "").strip()
        if not package:
            problems["package"] = "enter the adapter's name in the catalogue (claude-code, codex)"
        raw["package"] = package
    else:
        raw["command"] = _command(values, problems)
    raw["key_env"] = _key_env(values, problems)
    raw["allow_reads"] = values.get("allow_reads") == "yes"
    one_line(values, "key", problems, "key")
    return done(raw, problems)


def _command(values: Values, problems: dict[str, str]) -> list[str]:
    argv = command_line(values, problems, "enter the program that starts the agent")
    if "command" not in problems and (problem := command_problem(argv)):
        problems["command"] = problem
    return argv


def _key_env(values: Values, problems: dict[str, str]) -> str | None:
    variable = values.get("key_env", "").strip()
    has_key = bool(values.get("key") or values.get("has_token"))
    # Each problem goes with the field the user filled in: an empty one is not flagged yet.
    if variable:
        problem = env_name_problem(variable)
        if problem:
            problems["key_env"] = f"{variable} {problem}"
        elif not has_key:
            problems["key_env"] = f"enter the key for ${variable} below (or empty this field: no key)"
    elif values.get("key"):
        problems["key"] = "name the variable that receives the key (Key variable)"
    return variable or None


def package_of(command: list[str]) -> str | None:
    """The catalogue adapter a profile's command starts (``… agent start-adapter NAME``), or None."""
    for i in range(1, len(command) - 1):
        if command[i - 1 : i + 1] == ["agent", LAUNCHER]:
            return command[i + 1]
    return None


def values_from(raw: Mapping[str, Any]) -> dict[str, str]:
    command = [str(a) for a in raw.get("command", [])]
    values = {
        "key_env": str(raw.get("key_env") or ""),
        "allow_reads": "yes" if raw.get("allow_reads") else "no",
    }
    package = package_of(command)
    if package is not None:
        return {**values, "source": "package", "package": package}
    program = command[0] if command else ""
    return {**values, "source": "command", "command": program, "args": shlex.join(command[1:])}


async def probe(home: Path, profiles: ProfileStore[AgentProfile], name: str) -> Outcome:
    """The Check button: an adapter from the catalogue is verified against its receipt (as
    ``helm agent verify`` does); a program must be found (on ``PATH``, or at its path)."""
    try:
        profile = profiles.load(name)
        package = package_of(list(profile.command))
        if package is not None:
            result = await provision.verify(home, package)
            return Outcome(result.ok, f"{package}: {result.state.value} — {result.detail}")
    except HelmError as err:  # a wrong profile, a catalogue Helm refuses
        return Outcome(False, str(err))
    program = profile.command[0]
    found = await asyncio.to_thread(shutil.which, program)
    if found is None:
        return Outcome(False, f"{program} was not found (not on PATH, or not executable)")
    return Outcome(True, f"{program} is {found}")


AGENT_FORM = ProfileForm("Agents", FIELDS, check, values_from, test_label="Check")
