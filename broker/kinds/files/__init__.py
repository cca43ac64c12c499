"""The ``files`` kind: list, read and a confirmed write under the workspace root or a project.

Its parts: ``rules`` (the connection model, lint and review), ``globs`` and ``wildcard`` (the
compiled allowlist), ``listing`` (the list operation), ``home`` (review's warning about Helm's
home), ``adapter`` (the running kind). Reads and writes go through the file guard, which other
callers share (``broker.fs``: ``guard``, ``safe``, ``reading``, ``writing``, ``ledger``,
``diff``). It has no profiles: its roots are the workspace's own folders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from broker.fs.confirm import FILE_CHANGE, FILES_KIND
from broker.kinds.files import rules
from broker.kinds.files.schema import SCHEMA
from broker.kinds.spec import KindSpec

if TYPE_CHECKING:
    from broker.kinds.files.adapter import FilesKind

FILES: KindSpec[rules.FilesConnection, Any, FilesKind] = KindSpec(
    name=FILES_KIND,
    order=40,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    schema=SCHEMA,
    schema_def="files",
    adapter="broker.kinds.files.adapter:FilesKind",
    confirm=FILE_CHANGE,
    warnings="broker.kinds.files.home:review_warnings",
)

SPECS = (FILES,)
