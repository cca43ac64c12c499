"""One profile interface for every kind of profile: the same save, read, list and remove for
services, MCP servers, databases and agents, with their secrets only in the credential store."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from broker.agents.profiles import AGENTS, AgentProfile
from broker.credentials import FileStore
from broker.errors import ProfileError
from broker.kinds.db.profiles import DATABASES, DbProfile
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.mcp.profiles import MCP_SERVERS, StdioProfile
from broker.names import NAME_RULE
from broker.profiles import ProfileSpec, ProfileStore
from broker.settings import Home

SAMPLES: dict[str, tuple[ProfileSpec[Any], Any, dict[str, str | None]]] = {
    "services": (SERVICES, ServiceProfile("p", "https://api.example.com"), {"token": "secret-1"}),
    "mcp_servers": (MCP_SERVERS, StdioProfile("p", ("server",), "P_TOKEN"), {"token": "secret-1"}),
    "databases": (
        DATABASES,
        DbProfile("p", "postgres", host="127.0.0.1", port=5432, database="d", user="u", password=True),
        {"password": "secret-1"},
    ),
    "agents": (AGENTS, AgentProfile("p", ("agent",), "P_KEY"), {"key": "secret-1"}),
}


def store_for(tmp_path: Path, spec: ProfileSpec[Any]) -> ProfileStore[Any]:
    home = Home(tmp_path / "home")
    return spec.store(home, FileStore(tmp_path / "home" / "credentials.json"))


@pytest.mark.parametrize("section", sorted(SAMPLES))
def test_every_kind_of_profile_is_saved_read_listed_and_removed_the_same_way(
    tmp_path: Path, section: str
) -> None:
    spec, profile, secrets = SAMPLES[section]
    store = store_for(tmp_path, spec)
    saved = store.save(profile, secrets)
    assert store.get("p") == saved == store.load("p")
    assert store.names() == ["p"]
    assert store.all() == [saved]
    assert store.has_secret("p")
    assert "secret-1" not in store.home.settings_path.read_text()
    store.remove("p")
    assert store.get("p") is None
    assert [store.secret("p", s) for s in spec.secrets] == [None] * len(spec.secrets)
    with pytest.raises(ProfileError, match=f"no {spec.noun} named 'p'"):
        store.remove("p")


@pytest.mark.parametrize("section", sorted(SAMPLES))
def test_a_name_against_the_one_rule_is_refused_before_anything_is_stored(
    tmp_path: Path, section: str
) -> None:
    spec, profile, secrets = SAMPLES[section]
    store = store_for(tmp_path, spec)
    with pytest.raises(ProfileError, match=re.escape(NAME_RULE)):
        store.save(dataclasses.replace(profile, name="a b"), secrets)
    assert not store.home.settings_path.exists()
    assert not (tmp_path / "home" / "credentials.json").exists()


@pytest.mark.parametrize("section", sorted(SAMPLES))
def test_a_broken_profile_is_left_out_of_the_list_and_named_when_read(tmp_path: Path, section: str) -> None:
    spec, profile, secrets = SAMPLES[section]
    store = store_for(tmp_path, spec)
    store.save(profile, secrets)
    with store.home.update() as settings:
        settings.profiles(spec.section)["broken"] = {"no": "such profile"}
    assert [p.name for p in store.all()] == ["p"]
    with pytest.raises(ProfileError, match="broken"):
        store.get("broken")


class CountingStore(FileStore):
    """The file store, counting its reads (a keychain read is a D-Bus round trip)."""

    reads = 0

    def get(self, key: str) -> str | None:
        self.reads += 1
        return super().get(key)


def test_a_secret_is_read_from_the_store_once_until_its_profile_is_saved_again(tmp_path: Path) -> None:
    home_dir = tmp_path / "home"
    counting = CountingStore(home_dir / "credentials.json")
    store = SERVICES.store(Home(home_dir), counting)
    store.save(ServiceProfile("p", "https://api.example.com"), {"token": "t1"})
    assert [store.secret("p", "token") for _ in range(5)] == ["t1"] * 5
    assert counting.reads == 1
    # Another process (its own home and store objects) replaces the token, then removes the profile.
    other = SERVICES.store(Home(home_dir), FileStore(home_dir / "credentials.json"))
    other.save(ServiceProfile("p", "https://api.example.com"), {"token": "t2"})
    assert store.secret("p", "token") == "t2"
    other.remove("p")
    assert store.secret("p", "token") is None
