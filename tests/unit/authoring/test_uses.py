"""What ``helm dev`` says each connection uses: the profile and whether it is set up."""

from __future__ import annotations

from pathlib import Path

from broker.authoring.uses import manifest_uses
from broker.manifest import load as load_manifest
from broker.settings import Home
from tests.helpers import manifest_dict, write_extension


def test_each_connection_names_what_it_reaches_and_whether_its_profile_is_set_up(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    with home.update() as settings:
        settings.profiles("services")["github"] = {"base_url": "https://api.github.com"}
    connections = [
        {"id": "gh", "kind": "http", "service": "github", "calls": {"a": {"method": "GET", "path": "/a"}}},
        {
            "id": "db",
            "kind": "db",
            "service": "local",
            "engine": "sqlite",
            "queries": {"q": {"sql": "SELECT 1"}},
        },
        {"id": "tools", "kind": "mcp", "server": "time", "operations": ["now"]},
        {"id": "notes", "kind": "files", "root": "project", "paths": ["*.md"], "operations": ["list"]},
    ]
    manifest = load_manifest(write_extension(tmp_path / "ext", manifest_dict(connections)))
    assert manifest_uses(home.settings(), manifest) == [
        "[gh] http — service github: set up",
        "[db] db — database local (sqlite): not set up (calls return not_configured); add the database "
        "profile in Settings",
        "[tools] mcp — MCP server time: not set up (calls return not_configured); add the MCP server "
        "in Settings",
        "[notes] files — files in a project (chosen per call)",
    ]
