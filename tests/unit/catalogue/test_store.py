"""``catalogues.json``: the user's catalogues plus extra ones (a policy's); a damaged file stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker import catalogue
from broker.catalogue.store import CatalogueEntry, CatalogueStore
from broker.errors import SettingsError


def test_configured_catalogues_are_the_user_s_plus_the_extra_ones_which_win_on_a_name(tmp_path: Path) -> None:
    with CatalogueStore(tmp_path).update() as state:
        state.catalogues["acme"] = CatalogueEntry("acme", "https://acme.example/c/", "USER KEY")
        state.catalogues["mine"] = CatalogueEntry("mine", "/srv/mine", "MINE KEY")
    org = {"acme": CatalogueEntry("acme", "https://org.example/c/", "ORG KEY")}
    found = catalogue.configured(tmp_path, org)
    assert found["acme"].key == "ORG KEY" and found["mine"].key == "MINE KEY"
    assert CatalogueStore(tmp_path).read().catalogues["acme"].key == "USER KEY"  # nothing written
    assert (tmp_path / "catalogues.json").stat().st_mode & 0o777 == 0o600


def test_a_damaged_file_is_reported_and_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "catalogues.json").write_text('{"version": 1, "catalogues": [')
    with pytest.raises(SettingsError, match="left as it is"), CatalogueStore(tmp_path).update() as state:
        state.poll = True
    assert (tmp_path / "catalogues.json").read_text() == '{"version": 1, "catalogues": ['


def test_background_checks_are_off_unless_turned_on(tmp_path: Path) -> None:
    assert CatalogueStore(tmp_path).read().poll is False
