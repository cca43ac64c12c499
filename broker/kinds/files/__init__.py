"""The ``files`` kind: list, read and a confirmed write under the workspace root or a project.

Its parts: ``rules`` (the connection model, lint and review), ``globs`` and ``wildcard`` (the
compiled allowlist), ``guard`` and ``safe`` (every file reached without following a link out),
``listing``, ``reading``, ``writing`` and ``ledger`` (the operations), ``adapter`` (the running
kind). It has no profiles: its roots are the workspace's own folders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from broker.kinds.files import rules
from broker.kinds.files.schema import SCHEMA
from broker.kinds.spec import ConfirmText, KindSpec

if TYPE_CHECKING:
    from broker.kinds.files.adapter import FilesKind

FILES: KindSpec[rules.FilesConnection, Any, FilesKind] = KindSpec(
    name="files",
    order=40,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    schema=SCHEMA,
    schema_def="files",
    adapter="broker.kinds.files.adapter:FilesKind",
    confirm=ConfirmText("Confirm file change", "wants to change a file", "Change"),
    warnings="broker.kinds.files.guard:review_warnings",
)

SPECS = (FILES,)
