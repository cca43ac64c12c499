"""The ``echo`` kind: a test-only kind, one folder, built by following the checklist in
docs/architecture.md. A connection names a room (a profile with a greeting and a token) and
the phrases an extension may say there (reads) or shout (confirmed writes); the kind answers
with what was said. Tests add it with ``broker.kinds.registered(ECHO)``; nothing outside this
folder names it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.kinds.spec import ConfirmText, KindSpec
from tests.kinds.echo import form, profiles, rules
from tests.kinds.echo.schema import SCHEMA

if TYPE_CHECKING:
    from tests.kinds.echo.adapter import EchoKind

ECHO: KindSpec[rules.EchoConnection, profiles.Room, EchoKind] = KindSpec(
    name="echo",
    order=90,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    schema=SCHEMA,
    schema_def="echo",
    adapter="tests.kinds.echo.adapter:EchoKind",
    confirm=ConfirmText("Confirm shout", "wants to shout in a room", "Shout"),
    scalar_args=True,
    profiles=profiles.ROOMS,
    form=form.FORM,
    probe=form.probe,
    cli="tests.kinds.echo.cli:register",
)

SPECS = (ECHO,)
