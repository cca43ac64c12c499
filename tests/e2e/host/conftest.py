"""Extension frames for host tests, closed in the right order when the test ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host.kit import make_view
from ui.host import ExtensionView


@pytest.fixture
def frames(run: Any) -> Iterator[Callable[..., ExtensionView]]:
    made: list[ExtensionView] = []

    def factory(folder: Path, handler: Any, **kwargs: Any) -> ExtensionView:
        view = make_view(folder, handler, **kwargs)
        made.append(view)
        return view

    yield factory
    for view in made:
        profile = view._test_profile  # type: ignore[attr-defined]
        run(view.aclose())
        profile.deleteLater()
