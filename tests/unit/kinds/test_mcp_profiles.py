"""MCP server profiles: validation, token storage and the stdio child's environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.errors import ProfileError
from broker.mcp import profiles
from broker.redact import REDACTED
from tests.helpers import new_broker
from tests.unit.kinds.mcp_setup import TDT_LIKE, TOKEN, add_stdio, mcp_extension


@pytest.mark.parametrize(
    "name",
    ["LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "PATH", "PYTHONPATH", "PYTHONSTARTUP",
     "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV", "HOME", "GIT_SSH_COMMAND",
     "JAVA_TOOL_OPTIONS", "HTTPS_PROXY", "LC_ALL", "1TOKEN", "MY-TOKEN", ""],
)  # fmt: skip
def test_a_token_variable_that_changes_how_programs_run_is_refused(name: str):
    assert profiles.env_name_problem(name) is not None


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "MY_SERVER_TOKEN", "api_key", "NOTION_API_KEY"])
def test_an_ordinary_token_variable_is_accepted(name: str):
    assert profiles.env_name_problem(name) is None


def test_the_safe_environment_keeps_only_the_listed_variables():
    source = {"PATH": "/bin", "HOME": "/h", "LC_TIME": "C", "LD_PRELOAD": "x.so", "AWS_SECRET": "s"}
    assert profiles.safe_environment(source) == {"PATH": "/bin", "HOME": "/h", "LC_TIME": "C"}


def test_the_safe_environment_passes_certificates_and_proxies_and_the_profiles_own_names():
    network = {"SSL_CERT_FILE": "/ca.pem", "SSL_CERT_DIR": "/ca", "REQUESTS_CA_BUNDLE": "/ca.pem",
               "NODE_EXTRA_CA_CERTS": "/ca.pem", "HTTPS_PROXY": "http://proxy:3128",
               "no_proxy": "localhost"}  # fmt: skip
    source = network | {"PATH": "/bin", "MY_CONFIG_DIR": "/cfg", "PIP_CERT": "/x", "GITHUB_TOKEN": "t"}
    assert profiles.safe_environment(source) == network | {"PATH": "/bin"}
    assert profiles.safe_environment(source, passed=("MY_CONFIG_DIR",)) == network | {
        "PATH": "/bin", "MY_CONFIG_DIR": "/cfg",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "says"),
    [
        pytest.param("LD_PRELOAD", "load or run", id="loader"),
        pytest.param("NODE_OPTIONS", "load or run", id="runtime"),
        pytest.param("GITHUB_TOKEN", "credential store", id="token"),
        pytest.param("AWS_SECRET_ACCESS_KEY", "credential store", id="secret"),
        pytest.param("DB_PASSWORD", "credential store", id="password"),
        pytest.param("HTTPS_PROXY", "already", id="passed-anyway"),
        pytest.param("PATH", "already", id="safe"),
        pytest.param("MY-DIR", "letters", id="shape"),
    ],
)
def test_a_passed_variable_that_is_a_secret_or_changes_how_programs_run_is_refused(name: str, says: str):
    problem = profiles.pass_env_problem(name)
    assert problem is not None
    assert says in problem
    with pytest.raises(ProfileError, match=says):
        profiles.parse("srv", {"command": ["x"], "pass_env": [name]})


def test_a_passed_variable_is_kept_in_the_profile_and_an_empty_list_is_not_written():
    kept = profiles.parse("srv", {"command": ["x"], "pass_env": ["MY_CONFIG_DIR", "MY_CONFIG_DIR"]})
    assert kept.to_json() == {"command": ["x"], "token_env": None, "pass_env": ["MY_CONFIG_DIR"]}
    assert profiles.parse("srv", {"command": ["x"], "pass_env": []}).to_json() == {
        "command": ["x"],
        "token_env": None,
    }
    with pytest.raises(ProfileError, match="list of variable names"):
        profiles.parse("srv", {"command": ["x"], "pass_env": "MY_CONFIG_DIR"})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"command": []}, "non-empty"),
        ({"command": "node server.js"}, "non-empty"),
        ({"command": ["node"], "token_env": "LD_PRELOAD"}, "load or run"),
        ({"url": "http://example.com/mcp"}, "https"),
        ({"url": "https://user:pw@example.com/mcp"}, "credentials"),
        ({"url": "https://example.com/mcp", "auth": "basic"}, "auth"),
        ({"url": "https://example.com/mcp", "command": ["x"]}, "not both"),
        ({}, "command or a URL"),
    ],
)
def test_an_invalid_profile_is_refused_with_the_reason(raw: dict[str, object], message: str):
    with pytest.raises(ProfileError, match=message):
        profiles.parse("srv", raw)


async def test_the_token_lives_in_the_credential_store_not_in_settings(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "srv", TDT_LIKE, token_env="SRV_TOKEN")
        text = broker.home.settings_path.read_text()
        stored = broker.credentials.get("mcp_servers/srv/token")
        profiles.MCP_SERVERS.store(broker.home, broker.credentials).remove("srv")
        after = broker.credentials.get("mcp_servers/srv/token")
    assert TOKEN not in text
    assert stored == TOKEN
    assert after is None


async def test_a_profile_that_wants_a_token_needs_one(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        store = profiles.MCP_SERVERS.store(broker.home, broker.credentials)
        with pytest.raises(ProfileError, match="needs a token"):
            store.save(profiles.parse("srv", {"url": "https://example.com/mcp"}), {"token": None})
        with pytest.raises(ProfileError, match="nowhere to send"):
            store.save(profiles.parse("srv", {"command": ["x"]}), {"token": "tok"})


async def test_a_stdio_child_gets_only_the_safe_environment_and_the_token_which_comes_back_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HELM_TEST_SECRET", "should-not-leak")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/nowhere")
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "srv", TDT_LIKE, token_env="SRV_TOKEN")
        ctx = await mcp_extension(broker, tmp_path, "srv", ["env"])
        result = await broker.call(ctx, "m", "env", {})
    env = result["data"]
    assert env["SRV_TOKEN"] == REDACTED  # the child had it; the extension never sees it
    assert "HELM_TEST_SECRET" not in env
    assert "LD_LIBRARY_PATH" not in env
    assert set(env) - {"SRV_TOKEN"} == set(profiles.safe_environment())


async def test_a_stdio_child_gets_the_proxy_settings_and_the_names_its_profile_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    monkeypatch.setenv("MY_CONFIG_DIR", "/srv/config")
    monkeypatch.setenv("OTHER_DIR", "/srv/other")
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "srv", TDT_LIKE, pass_env=("MY_CONFIG_DIR",))
        ctx = await mcp_extension(broker, tmp_path, "srv", ["env"])
        env = (await broker.call(ctx, "m", "env", {}))["data"]
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:9"
    assert env["SSL_CERT_FILE"] == "/etc/ssl/certs/ca-certificates.crt"
    assert env["MY_CONFIG_DIR"] == "/srv/config"
    assert "OTHER_DIR" not in env


def test_the_settings_form_passes_the_names_it_is_given_and_flags_a_secret_looking_one():
    from broker.kinds.mcp.form import FORM

    values = {
        "name": "s",
        "transport": "stdio",
        "command": "npx",
        "args": "-y srv",
        "pass_env": "MY_DIR, OTHER_DIR",
    }
    good = FORM.check(values)
    bad = FORM.check(values | {"pass_env": "MY_DIR GITHUB_TOKEN"})
    assert good.raw == {
        "command": ["npx", "-y", "srv"],
        "token_env": None,
        "pass_env": ["MY_DIR", "OTHER_DIR"],
    }
    assert FORM.values_from(good.raw)["pass_env"] == "MY_DIR OTHER_DIR"
    assert "GITHUB_TOKEN looks like a secret" in bad.problems["pass_env"]
    assert "NODE_EXTRA_CA_CERTS" in next(f.help for f in FORM.fields if f.key == "pass_env")
