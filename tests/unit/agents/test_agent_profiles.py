"""Agent profiles and the versioned ``agents`` section of settings.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker.agents import profiles
from broker.agents.profiles import AgentProfile
from broker.credentials import FileStore
from broker.errors import ProfileError, SettingsError
from broker.settings import Home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.ensure()
    return h


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({"command": []}, "non-empty list", id="empty-command"),
        pytest.param({"command": "node agent.js"}, "non-empty list", id="a-shell-string"),
        pytest.param({"command": ["a\0b"]}, "non-empty list", id="nul"),
        pytest.param({"command": ["a"], "key_env": "LD_PRELOAD"}, "load or run", id="loader-variable"),
        pytest.param({"command": ["a"], "allow_reads": "yes"}, "true or false", id="allow-reads-text"),
        pytest.param({"command": ["a"], "yolo": True}, "unknown setting", id="unknown-setting"),
    ],
)
def test_a_wrong_profile_says_what_is_wrong(raw: dict, message: str):
    with pytest.raises(ProfileError, match=message):
        profiles.parse("a", raw)


def test_a_profile_needs_its_key_and_a_key_needs_a_variable(home: Home):
    store = FileStore(home.path / "credentials.json")
    with pytest.raises(ProfileError, match="needs a key"):
        profiles.AGENTS.store(home, store).save(AgentProfile("a", ("x",), "A_KEY"), {"key": None})
    with pytest.raises(ProfileError, match="no variable"):
        profiles.AGENTS.store(home, store).save(AgentProfile("a", ("x",)), {"key": "k"})
    assert home.settings().agents == {}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        pytest.param({"version": 2, "profiles": {}}, "unsupported agents section version 2", id="version"),
        pytest.param(
            {
                "version": 1,
                "profiles": [],
            },
            "agents.profiles must be a JSON object",
            id="list",
        ),
        pytest.param({"version": 1, "profiles": {"a": 1}}, "agents.profiles.a must be", id="not-object"),
        pytest.param({"version": 1, "extra": {}}, "unknown key", id="unknown-key"),
    ],
)
def test_a_corrupt_agents_section_is_reported_and_the_file_left_as_it_is(
    home: Home, section: dict, message: str
):
    text = json.dumps({"version": 1, "agents": section})
    home.settings_path.write_text(text)
    with pytest.raises(SettingsError, match=message):
        home.settings()
    assert home.settings_path.read_text() == text


def test_settings_without_an_agents_section_still_load(home: Home):
    home.settings_path.write_text(json.dumps({"version": 1}))
    assert home.settings().agents == {}
