"""A kind's ``helm`` command group, and the pieces every group shares.

A kind names its group in its spec (``KindSpec.cli = "package.module:register"``); ``helm``
calls ``register(subparsers, io)`` for every kind while it builds its parser. ``io`` is the
command line's side (``CliIO``, implemented in ``app/commands/common.py``): the home, the
credential store and the broker a command works on, secrets read from a prompt or stdin (never
from argv), output with hidden characters shown as text, and the exit codes.

``profile_group`` gives a kind with a ``ProfileForm`` the usual three commands without writing
any: ``add NAME --field VALUE…`` (one option per form field; secrets are asked for),
``list [--json]`` and ``remove NAME``. A kind with its own needs builds its group from
``add_list`` and ``add_remove`` and adds its own commands beside them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from broker.credentials import CredentialStore
from broker.errors import ProfileError
from broker.settings import Home

if TYPE_CHECKING:
    from broker.broker import Broker
    from broker.kinds.forms import FormField, ProfileForm
    from broker.kinds.spec import KindSpec
    from broker.profiles import ProfileSpec, ProfileStore

Row = dict[str, Any]


class CliIO(Protocol):
    """What a kind's commands get from ``helm`` (see the module docstring)."""

    def home(self, args: argparse.Namespace) -> Home: ...

    def credentials(self, args: argparse.Namespace) -> CredentialStore: ...

    def open_broker(self, args: argparse.Namespace) -> Broker: ...

    def read_secret(self, prompt: str, *, allow_empty: bool = False) -> str: ...

    def say(self, text: str) -> None:
        """A line on stdout; hidden characters are shown as ``[U+XXXX]``."""
        ...

    def warn(self, text: str) -> None:
        """A line on stderr, shown the same way."""
        ...

    def print_json(self, value: Any) -> None: ...

    def fail(self, message: str) -> NoReturn:
        """End the command: the message on stderr, exit code 1."""
        ...

    def run(self, coro: Coroutine[Any, Any, int]) -> int: ...

    def open_url(self, url: str) -> None:
        """Open ``url`` in the system browser."""
        ...

    def add_home_option(self, parser: argparse.ArgumentParser) -> None: ...


def store_of(io: CliIO, args: argparse.Namespace, profiles: ProfileSpec[Any]) -> ProfileStore[Any]:
    return profiles.store(io.home(args), io.credentials(args))


def add_list(
    s: Any, io: CliIO, help: str, rows: Callable[[argparse.Namespace], list[Row]],
    line: Callable[[Row], str], empty: str,
) -> None:  # fmt: skip
    """``list [--json]``: one line per row, or the rows as JSON; ``empty`` when there are none."""

    def handler(args: argparse.Namespace) -> int:
        found = rows(args)
        if args.json:
            io.print_json(found)
        elif not found:
            io.say(empty)
        for row in [] if args.json else found:
            io.say(line(row))
        return 0

    ls = s.add_parser("list", help=help)
    ls.add_argument("--json", action="store_true", help="print JSON")
    io.add_home_option(ls)
    ls.set_defaults(handler=handler)


def add_remove(s: Any, io: CliIO, profiles: ProfileSpec[Any], word: str, help: str) -> None:
    """``remove NAME``: the profile and every secret it kept (no such profile: ProfileError,
    which ``helm`` reports with exit code 3, like every settings problem)."""

    def handler(args: argparse.Namespace) -> int:
        store_of(io, args, profiles).remove(args.name)
        io.say(f"{word} {args.name} removed")
        return 0

    rm = s.add_parser("remove", help=help)
    rm.add_argument("name")
    io.add_home_option(rm)
    rm.set_defaults(handler=handler)


def profile_group(sub: Any, io: CliIO, spec: KindSpec[Any, Any, Any], group: str, word: str) -> Any:
    """``helm <group> add|list|remove`` for a kind with profiles and a form; returns the
    group's subparsers, for commands of the kind's own."""
    profiles, form = spec.profiles, spec.form
    if profiles is None or form is None:
        raise ValueError(f"the {spec.name} kind has no profiles or no form")
    p = sub.add_parser(group, help=f"{form.title.lower()} for {spec.name} connections")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_from_form(s, io, profiles, form, word)

    def rows(args: argparse.Namespace) -> list[Row]:
        store = store_of(io, args, profiles)
        return [{"name": name, **(store.raw(name) or {})} for name in store.names()]

    line: Callable[[Row], str] = lambda row: "\t".join(str(v) for v in row.values())  # noqa: E731
    add_list(s, io, f"list {form.title.lower()}", rows, line, f"no {form.title.lower()} yet")
    add_remove(s, io, profiles, word, f"remove a {word} and its secrets")
    return s


def _add_from_form(s: Any, io: CliIO, profiles: ProfileSpec[Any], form: ProfileForm, word: str) -> None:
    add = s.add_parser(
        "add", help=f"add or replace a {word}", description="Secrets are read from the prompt or stdin."
    )
    add.add_argument("name")
    for field in form.fields[1:]:
        if field.kind != "secret":
            add.add_argument(f"--{field.key.replace('_', '-')}", dest=field.key, **_option(field))
    io.add_home_option(add)

    def handler(args: argparse.Namespace) -> int:
        values = {f.key: str(getattr(args, f.key, None) or f.default) for f in form.fields[1:]}
        values["name"] = args.name
        values |= {f.key: io.read_secret(f"{f.label}: ", allow_empty=True) for f in _secrets(form, values)}
        checked = form.check(values)
        if checked.raw is None:
            io.fail("; ".join(f"{key}: {problem}" for key, problem in checked.problems.items()))
        try:
            store = store_of(io, args, profiles)
            store.save(profiles.parse(args.name, checked.raw), {k: values.get(k) for k in form.secrets})
        except ProfileError as exc:
            io.fail(str(exc))
        io.say(f"{word} {args.name} saved")
        return 0

    add.set_defaults(handler=handler)


def _option(field: FormField) -> dict[str, Any]:
    option: dict[str, Any] = {"help": field.help or field.label, "default": None}
    if field.kind == "choice":
        option["choices"] = [value for value, _label in field.choices]
    if field.placeholder:
        option["metavar"] = field.key.upper()
    return option


def _secrets(form: ProfileForm, values: dict[str, str]) -> list[FormField]:
    return [f for f in form.fields if f.kind == "secret" and f.shown(values)]
