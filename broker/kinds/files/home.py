"""Review's warning when a files connection's root, in a workspace, contains Helm's home (it
looks at the disk through the file guard's ``folder_holds``)."""

from __future__ import annotations

from pathlib import Path

from broker.fs.guard import folder_holds
from broker.kinds.files.rules import FilesConnection, HomeExposure, home_warning
from broker.settings import Workspace


def home_exposure(workspace: Workspace, home: Path) -> HomeExposure:
    """Look at the disk: does the workspace root, or a registered project, contain ``home``?"""
    projects = tuple(sorted(pid for pid, folder in workspace.projects.items() if folder_holds(folder, home)))
    return HomeExposure(folder_holds(workspace.root, home), projects)


def review_warnings(conn: FilesConnection, workspace: Workspace, home: Path) -> tuple[str, ...]:
    """Review's warning when the connection's root, in this workspace, contains Helm's home."""
    warning = home_warning(conn.root, home_exposure(workspace, home))
    return () if warning is None else (warning,)
