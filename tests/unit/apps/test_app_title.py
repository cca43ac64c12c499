"""An app is titled by the name its server gives the resource or the tool that opens it."""

from __future__ import annotations

import pytest
from mcp import types

from broker.apps.meta import AppTool
from broker.mcp.discovery import app_title

URI = "ui://budget/main"


def tool(name: str, title: str = "") -> AppTool:
    return AppTool(name, "", ("model", "app"), True, URI, title)


@pytest.mark.parametrize(
    ("resource", "linked", "title"),
    [
        pytest.param(types.Resource(uri=URI, name="budget", title="Budget allocator"), (), "Budget allocator",
                     id="resource-title"),
        pytest.param(types.Resource(uri=URI, name="budget"), (tool("get-budget", "Budget"),), "budget",
                     id="resource-name"),
        pytest.param(None, (tool("get-budget", "Budget data"),), "Budget data", id="tool-title"),
        pytest.param(None, (tool("get-budget"),), "get-budget", id="tool-name"),
        pytest.param(None, (), URI, id="nothing-else"),
    ],
)  # fmt: skip
def test_an_app_is_titled_by_its_resource_then_its_tool_and_by_its_uri_only_when_nothing_names_it(
    resource: types.Resource | None, linked: tuple[AppTool, ...], title: str
) -> None:
    assert app_title(resource, linked, URI) == title
