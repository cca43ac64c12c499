"""``files`` connections: the typed model, manifest rules and review (no I/O)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from broker.kinds.base import Connection, ConnectionReview, Issue, ReviewItem
from broker.kinds.files.globs import GlobSet, globs_for


@dataclass(frozen=True)
class FilesConnection(Connection):
    """Files under ``root`` that match ``paths``."""

    root: Literal["project", "workspace"]
    paths: tuple[str, ...]

    @functools.cached_property
    def globs(self) -> GlobSet:
        """The compiled allowlist, at the first call (lint and review do not need it)."""
        return globs_for({"paths": self.paths})


def operations(conn: Mapping[str, Any]) -> dict[str, bool]:
    return {op: op == "write" for op in conn["operations"]}


def parse(conn: Mapping[str, Any]) -> FilesConnection:
    return FilesConnection(
        id=str(conn["id"]),
        kind=str(conn["kind"]),
        operations=operations(conn),
        root="project" if conn["root"] == "project" else "workspace",
        paths=tuple(str(p) for p in conn["paths"]),
    )


def lint(conn: Mapping[str, Any], path: str, manifest: Mapping[str, Any]) -> Iterator[Issue]:
    """Nothing beyond the schema: the rules of a glob concern the glob alone (``schema.py``)."""
    return iter(())


def review(conn: FilesConnection) -> ConnectionReview:
    where = "a project (chosen per call)" if conn.root == "project" else "the workspace"
    ops = conn.operations
    reads = ", ".join(op for op in ops if op != "write") or "none"
    items = [ReviewItem(f"files {glob}", reads, False) for glob in conn.paths]
    if "write" in ops:
        items += [
            ReviewItem(f"files {glob}", "replace existing files — confirmed each time", True)
            for glob in conn.paths
        ]
    return ConnectionReview(conn.id, "files", f"files in {where}", tuple(items))


@dataclass(frozen=True)
class HomeExposure:
    """Which roots of a workspace contain Helm's home folder (``guard.home_exposure`` looks)."""

    workspace: bool
    projects: tuple[str, ...] = ()


def home_warning(root: str, exposure: HomeExposure) -> str | None:
    """The review warning for a files connection on ``root`` ("workspace" or "project") when
    that root contains Helm's home, if any.

    Helm refuses every path into its home anyway; the warning tells the user the root is wider
    than it should be.
    """
    if root == "workspace":
        if not exposure.workspace:
            return None
        where = "The workspace root contains"
    elif exposure.projects:
        where = f"The project folder of {', '.join(exposure.projects)} contains"
    else:
        return None
    return f"{where} Helm's own folder. Helm never gives access to it, but a narrower folder is safer."
