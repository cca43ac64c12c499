"""The ``db`` kind: named statements from the manifest on a SQLite, PostgreSQL or MySQL profile.

Its parts: ``rules`` (the connection model, lint and review; ``sqlscan`` reads SQL without
running it), ``profiles`` (database profiles), ``form``, ``cli`` and ``check`` (Settings and
``helm db``), ``engine`` with ``sqlite``, ``postgres`` and ``mysql`` (one engine and its pool
per profile), ``values`` (arguments in, rows out), ``adapter`` (the running kind; the DB
explorer uses it too, through ``Broker.database()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.kinds.db import form, profiles, rules
from broker.kinds.db.schema import SCHEMA
from broker.kinds.spec import ConfirmText, KindSpec

if TYPE_CHECKING:
    from broker.kinds.db.adapter import DbKind

DB: KindSpec[rules.DbConnection, profiles.DbProfile, DbKind] = KindSpec(
    name="db",
    order=50,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    hints=rules.hints,
    schema=SCHEMA,
    schema_def="db",
    adapter="broker.kinds.db.adapter:DbKind",
    confirm=ConfirmText(
        "Confirm database write",
        "wants to run a write query",
        "SQL and arguments",
        in_request=("SQL", "Args"),
    ),
    scalar_args=True,
    profiles=profiles.DATABASES,
    form=form.FORM,
    probe=form.probe,
    cli="broker.kinds.db.cli:register",
    window_parts={"explorer": "broker.kinds.db.explorer:DbExplorer"},
)

SPECS = (DB,)
