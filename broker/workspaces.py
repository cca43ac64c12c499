"""Workspaces and their registered projects."""

from __future__ import annotations

from pathlib import Path

from broker.errors import SettingsError
from broker.names import NAME_RULE, valid_name
from broker.settings import Home, Workspace


def _check_name(what: str, name: str) -> None:
    if not valid_name(name):
        raise SettingsError(f"{what} {name!r} is not a valid name: {NAME_RULE}")


def _existing_folder(what: str, path: Path) -> Path:
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        raise SettingsError(f"{what} {path} is not an existing folder")
    return resolved


DEMO_ROOT = ("demo", "workspace")
"""Where the demo workspace lives in the Helm home (``app.demo`` sets it up there)."""


def is_demo_workspace(home: Home, workspace: Workspace) -> bool:
    """The demo is the workspace rooted in the home's demo folder, whatever its name."""
    return workspace.root == home.path.joinpath(*DEMO_ROOT)


def add_workspace(home: Home, name: str, root: Path, *, author_mode: bool = False) -> Workspace:
    """``author_mode``: the workspace ``helm dev`` makes for itself (see ``Workspace``)."""
    _check_name("workspace", name)
    folder = _existing_folder("workspace root", root)
    with home.update() as settings:
        if name in settings.workspaces:
            raise SettingsError(f"workspace {name!r} already exists")
        ws = settings.workspaces[name] = Workspace(name, folder, author_mode=author_mode)
    return ws


def add_project(home: Home, workspace: str, project_id: str, path: Path) -> Path:
    _check_name("project", project_id)
    folder = _existing_folder("project", path)
    with home.update() as settings:
        ws = settings.workspace(workspace)
        if project_id in ws.projects:
            raise SettingsError(f"project {project_id!r} already exists in {workspace!r}")
        ws.projects[project_id] = folder
    return folder


def set_everyday(home: Home, workspace: str, on: bool) -> None:
    with home.update() as settings:
        settings.workspace(workspace).everyday = on


def set_tdt_command(home: Home, workspace: str, command: list[str] | None) -> None:
    with home.update() as settings:
        settings.workspace(workspace).tdt_command = command


def set_build_agent(home: Home, workspace: str, agent: str | None) -> None:
    """The agent profile that runs the builds tools start in ``workspace`` (None: none does)."""
    with home.update() as settings:
        ws = settings.workspace(workspace)
        if agent is not None and agent not in settings.agents:
            raise SettingsError(f"no agent named {agent!r} (add one with helm agent add)")
        ws.build_agent = agent
