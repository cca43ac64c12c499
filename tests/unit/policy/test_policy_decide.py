"""The policy's decisions, pure: URL patterns, executables, and which rule refuses what."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.policy import PolicyState, decide
from broker.policy.model import Policy, parse
from broker.policy.source import RefusedFile
from broker.profiles import Reach


def state(*docs: dict[str, Any]) -> PolicyState:
    return PolicyState(tuple(parse(Path(f"/etc/helm/{i}.json"), d) for i, d in enumerate(docs)))


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        pytest.param("https://api.example.com/*", "https://api.example.com", True, id="bare-origin"),
        pytest.param("https://api.example.com/*", "https://api.example.com/v1/x?q=1", True, id="any-path"),
        pytest.param("https://api.example.com", "https://api.example.com/v1", True, id="no-path-any-path"),
        pytest.param("https://api.example.com", "https://api.example.com.evil.net/", False, id="longer-host"),
        pytest.param("https://api.example.com/*", "http://api.example.com/", False, id="other-scheme"),
        pytest.param("https://API.example.com/*", "https://api.EXAMPLE.com/a", True, id="host-case"),
        pytest.param("https://*.example.com/*", "https://a.b.example.com/x", True, id="subdomain"),
        pytest.param("https://*.example.com/*", "https://example.com/x", False, id="not-the-apex"),
        pytest.param("https://*.example.com/*", "https://badexample.com/x", False, id="not-a-suffix-word"),
        pytest.param("https://x.com/v1/*", "https://x.com/v1/a", True, id="under-path"),
        pytest.param("https://x.com/v1/*", "https://x.com/v2/a", False, id="other-path"),
        pytest.param("https://x.com/v1", "https://x.com/v1/a", False, id="exact-path"),
        pytest.param("https://x.com:8443/*", "https://x.com/a", False, id="other-port"),
        pytest.param("https://x.com:443/*", "https://x.com/a", True, id="default-port"),
        pytest.param("http://127.0.0.1:8080/*", "http://127.0.0.1:8080/a", True, id="loopback"),
        pytest.param("https://x.com/*", "https://user:pw@x.com/a", False, id="user-info"),
        pytest.param("https://x.com/*", "https://x.com:notaport/a", False, id="bad-port"),
        pytest.param("https://*.example.com/*", "https://a.example.com/x", True, id="shortest-subdomain"),
        pytest.param("https://*.example.com/*", "https://.example.com/x", False, id="empty-subdomain"),
        pytest.param("https://x.com/v1", "https://x.com/v1", True, id="the-exact-path"),
        pytest.param("https://x.com/v1?a=1", "https://x.com/v1?a=1", True, id="with-its-query"),
        pytest.param("https://x.com/v1?a=1", "https://x.com/v1", False, id="without-its-query"),
        pytest.param("https://x.com/v1/*", "https://x.com/v1", True, id="the-folder-itself"),
        pytest.param("https://x.com/", "https://x.com", True, id="slash-bare-origin"),
        pytest.param("https://x.com/", "https://x.com/a", False, id="slash-only"),
        pytest.param("http://x.com:80/*", "http://x.com/a", True, id="http-default-port"),
        pytest.param("http://x.com:81/*", "http://x.com/a", False, id="http-other-port"),
    ],
)
def test_url_patterns(pattern: str, url: str, matches: bool):
    assert decide.url_matches(pattern, url) is matches


def test_an_executable_matches_by_path_by_name_on_path_and_through_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    assert decide.same_executable(sys.executable, sys.executable)
    link = tmp_path / "python-link"
    link.symlink_to(sys.executable)
    assert decide.same_executable(str(link), sys.executable)
    assert decide.same_executable("sh", "/bin/sh") or decide.same_executable("sh", "/usr/bin/sh")
    assert not decide.same_executable("./sh", "/bin/sh")  # relative to a folder unknown here
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sh").symlink_to(sys.executable)
    assert not decide.same_executable("./sh", sys.executable)  # even where the folder has it
    assert not decide.same_executable("helm-test-no-such-program", sys.executable)  # not on PATH
    assert not decide.same_executable("/bin/sh", sys.executable)


def test_no_policy_refuses_nothing():
    assert (
        decide.call(PolicyState(), "http", True, [Reach("service_url", "https://x")], "service 's'") is None
    )
    assert decide.extension(PolicyState(), "com.example.a", None) is None
    assert decide.agent(PolicyState(), "a", ["/x"]) is None
    assert decide.dev_mode(PolicyState()) is None


def test_a_refused_file_refuses_everything_naming_the_file():
    beside = state({"kinds": {"files": {}}}).policies  # a trusted file beside it allows the call
    refused = PolicyState(
        beside, refused=(RefusedFile(Path("/etc/helm/policy.json"), "it is owned by user id 1000"),)
    )
    for found in (
        decide.call(refused, "files", False, [], "connection 'c'"),
        decide.profile(refused, [], "profile 'p'"),
        decide.extension(refused, "com.example.a", None),
        decide.agent(refused, "a", ["/x"]),
        decide.dev_mode(refused),
        decide.allow_always(refused),
    ):
        assert found is not None and found.rule == "policy file"
        assert (
            "Helm refuses the policy file /etc/helm/policy.json: it is owned by user id 1000" in found.message
        )


@pytest.mark.parametrize(
    ("doc", "reach", "rule"),
    [
        (
            {"services": {"oauth_urls": ["https://auth.example.com/*"]}},
            Reach("oauth_url", "https://evil/x"),
            "services.oauth_urls",
        ),
        (
            {"mcp": {"urls": ["https://mcp.example.com/*"]}},
            Reach("mcp_url", "https://other.com/mcp"),
            "mcp.urls",
        ),
        (
            {"databases": {"hosts": ["DB.example.com"]}},
            Reach("db_host", "db2.example.com"),
            "databases.hosts",
        ),
        ({"databases": {"engines": ["postgres"]}}, Reach("db_engine", "mysql"), "databases.engines"),
    ],
)
def test_each_reach_meets_its_own_rule(doc: dict[str, Any], reach: Reach, rule: str):
    found = decide.call(state(doc), "x", False, [reach], "profile 'p'")
    assert found is not None and found.rule == rule
    assert found.message.startswith(f"refused by your organisation's policy ({rule}): profile 'p' ")
    if reach.what != "db_engine":  # the manifest names its engine; where a profile reaches, never
        assert reach.value not in found.message


EVERY_REACH_RULE = {
    "services": {"base_urls": ["https://api.example.com/*"], "oauth_urls": ["https://auth.example.com/*"]},
    "mcp": {"commands": [sys.executable], "urls": ["https://mcp.example.com/*"]},
    "databases": {"hosts": ["db.example.com"], "engines": ["postgres"]},
}


@pytest.mark.parametrize(
    ("what", "allowed", "outside", "rule"),
    [
        ("service_url", "https://api.example.com/v1", "https://auth.example.com/o", "services.base_urls"),
        ("oauth_url", "https://auth.example.com/o", "https://api.example.com/v1", "services.oauth_urls"),
        ("mcp_command", sys.executable, "/nonexistent/helm-test-program", "mcp.commands"),
        ("mcp_url", "https://mcp.example.com/mcp", "https://api.example.com/v1", "mcp.urls"),
        ("db_host", "db.example.com", "postgres", "databases.hosts"),
        ("db_engine", "postgres", "db.example.com", "databases.engines"),
    ],
)
def test_each_reach_is_judged_by_its_own_rule_alone(what: str, allowed: str, outside: str, rule: str):
    # Each value refused for one reach is one another rule allows: no rule judges another's reach.
    ruled = state(EVERY_REACH_RULE)
    assert decide.profile(ruled, [Reach(what, allowed)], "profile 'p'") is None
    assert decide.call(ruled, "x", False, [Reach(what, allowed)], "profile 'p'") is None
    for found in (
        decide.profile(ruled, [Reach(what, allowed), Reach(what, outside)], "profile 'p'"),
        decide.call(ruled, "x", False, [Reach(what, allowed), Reach(what, outside)], "profile 'p'"),
    ):
        assert found is not None and found.rule == rule


def test_a_database_host_is_compared_without_case():
    allowed = state({"databases": {"hosts": ["DB.example.com"], "engines": ["postgres"]}})
    reaches = [Reach("db_host", "db.EXAMPLE.com"), Reach("db_engine", "postgres")]
    assert decide.call(allowed, "db", False, reaches, "database profile 'p'") is None


def test_with_two_policies_the_stricter_wins():
    both = state({"kinds": {"http": {}, "files": {}}}, {"kinds": {"http": {"write": False}}})
    assert decide.call(both, "http", False, [], "c") is None
    write = decide.call(both, "http", True, [], "c")
    assert write is not None and write.rule == "kinds.http.write" and write.source == Path("/etc/helm/1.json")
    files = decide.call(both, "files", False, [], "c")
    assert files is not None and files.rule == "kinds"


def test_an_app_is_ruled_by_apps_not_by_the_extension_list():
    class App:
        allowed_resource_domains = ("https://cdn.example.com",)

    class Manifest:
        app = App()
        connections = ()

        def digest(self) -> str:
            return "0" * 64

    ruled = state({"extensions": {"allow": []}, "apps": {"resource_domains": False}})
    found = decide.extension(ruled, "mcp-app.s.x", Manifest())  # type: ignore[arg-type]
    assert found is not None and found.rule == "apps.resource_domains"
    App.allowed_resource_domains = ()
    assert decide.extension(ruled, "mcp-app.s.x", Manifest()) is None  # type: ignore[arg-type]


def test_an_apps_server_must_be_one_the_policy_names():
    ruled = state({"apps": {"servers": [{"url": "https://apps.example.com/*"}, {"command": sys.executable}]}})
    ok = [Reach("mcp_url", "https://apps.example.com/mcp")]
    assert decide.call(ruled, "mcp", False, ok, "MCP server 's'", app=True) is None
    assert decide.call(ruled, "mcp", False, [Reach("mcp_command", sys.executable)], "s", app=True) is None
    other = decide.call(
        ruled, "mcp", False, [Reach("mcp_url", "https://x.com/mcp")], "MCP server 's'", app=True
    )
    assert other is not None and other.rule == "apps.servers"
    assert (
        decide.call(ruled, "mcp", False, [Reach("mcp_url", "https://x.com/mcp")], "s") is None
    )  # not an app
    # apps.servers judges only where an app's server is; without it any server may serve apps.
    assert decide.call(ruled, "http", False, [Reach("service_url", "https://x.com/")], "s", app=True) is None
    program = decide.call(ruled, "mcp", False, [Reach("mcp_command", "/nonexistent/x")], "s", app=True)
    assert program is not None and program.rule == "apps.servers"
    unruled = state({"kinds": {"mcp": {}}})
    assert decide.call(unruled, "mcp", False, [Reach("mcp_url", "https://x.com/mcp")], "s", app=True) is None


def test_every_default_is_written_out_when_shown():
    shown = Policy(Path("/p")).to_json()
    assert shown["kinds"] is None and shown["dev_mode"] is True
    assert shown["agents"] == {"allow": None, "write": True, "allow_always": True}
    assert shown["audit_sinks"] == [] and shown["decision_point"] is None


HOSTS = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z][a-z0-9-]{0,10}){1,3}", fullmatch=True)
PATHS = st.from_regex(r"(/[A-Za-z0-9._~%-]{0,8}){0,4}(\?[a-z]=[a-z0-9]{0,4})?", fullmatch=True)


@given(host=HOSTS, other=HOSTS, path=PATHS)
def test_a_pattern_matches_every_path_of_its_own_host_and_no_other_host(host: str, other: str, path: str):
    pattern = f"https://{host}/*"
    assert decide.url_matches(pattern, f"https://{host}{path}")
    assert decide.url_matches(pattern, f"https://{host.upper()}{path}")
    if other != host:
        assert not decide.url_matches(pattern, f"https://{other}{path}")
    assert not decide.url_matches(pattern, f"https://{host}.{other}{path}")  # a longer host
    assert not decide.url_matches(pattern, f"http://{host}{path}")


@given(host=HOSTS, sub=HOSTS, path=PATHS)
def test_a_subdomain_pattern_matches_only_below_its_domain(host: str, sub: str, path: str):
    pattern = f"https://*.{host}/*"
    assert decide.url_matches(pattern, f"https://{sub}.{host}{path}")
    assert not decide.url_matches(pattern, f"https://{host}{path}")
    assert not decide.url_matches(pattern, f"https://{sub}{host}{path}")  # glued, not a subdomain


class Plain:
    """A plain extension's manifest (no app), as the policy reads it."""

    app = None

    def __init__(self, *kinds: str) -> None:
        self.connections = tuple(SimpleNamespace(id=f"c{i}", kind=k) for i, k in enumerate(kinds))

    def digest(self) -> str:
        return "a" * 64


def refusal_of(state: PolicyState, ext_id: str, manifest: Any, origin: str | None = None) -> tuple[str, str]:
    found = decide.extension(state, ext_id, manifest, origin)
    assert found is not None
    return found.rule, found.message


def test_an_extension_is_allowed_by_its_id_and_where_a_digest_is_named_only_with_that_manifest():
    ruled = state(
        {
            "extensions": {
                "allow": [
                    {"id": "com.example.a"},
                    {"id": "com.example.b", "digest": "a" * 64},
                    {"id": "com.example.c", "digest": "b" * 64},
                ]
            }
        }
    )
    assert decide.extension(ruled, "com.example.a", Plain()) is None
    assert decide.extension(ruled, "com.example.b", Plain()) is None
    assert decide.extension(ruled, "com.example.c", None) is None  # no manifest read: nothing to compare
    rule, message = refusal_of(ruled, "com.example.z", Plain())
    assert rule == "extensions.allow" and "com.example.z is not one of the extensions it allows" in message
    rule, message = refusal_of(ruled, "com.example.c", Plain())
    assert rule == "extensions.allow" and "com.example.c is allowed only as another version" in message
    assert decide.extension(state({"kinds": {"files": {}}}), "com.example.z", Plain("files")) is None


def test_an_extension_must_come_from_a_catalogue_the_policy_names():
    ruled = state({"extensions": {"catalogues": ["corp"]}})
    assert decide.extension(ruled, "com.example.a", Plain(), "corp") is None
    rule, message = refusal_of(ruled, "com.example.a", Plain())
    assert rule == "extensions.catalogues" and message.endswith("one of the catalogues it names (corp)")
    _, message = refusal_of(state({"extensions": {"catalogues": []}}), "com.example.a", Plain(), "corp")
    assert message.endswith("one of the catalogues it names (none)")


def test_an_extension_may_declare_only_connections_of_kinds_the_policy_allows():
    ruled = state({"kinds": {"files": {}, "http": {}}})
    assert decide.extension(ruled, "com.example.a", Plain("files", "http")) is None
    assert decide.extension(ruled, "com.example.a", None) is None
    rule, message = refusal_of(ruled, "com.example.a", Plain("files", "db"))
    assert rule == "kinds" and "declares connection 'c1' of kind db, a kind it does not allow" in message
    assert decide.extension(state({"extensions": {"catalogues": None}}), "com.example.a", Plain("db")) is None


def test_an_agent_runs_only_if_every_policy_that_lists_agents_allows_its_program():
    ruled = state({"kinds": {"files": {}}}, {"agents": {"allow": [{"command": sys.executable}]}})
    assert decide.agent(ruled, "a", [sys.executable, "-m", "agent"]) is None
    found = decide.agent(ruled, "b", ["/nonexistent/agent"])
    assert found is not None and found.rule == "agents.allow" and found.source == Path("/etc/helm/1.json")
    assert "agent 'b' is not one of the agents it allows" in found.message
    assert decide.agent(state({"kinds": {"files": {}}}), "b", ["/nonexistent/agent"]) is None
    packaged = state({"agents": {"allow": [{"package": "claude-code"}]}})
    launch = [*decide.helm_command(), "agent", "start-adapter"]
    assert decide.agent(packaged, "c", [*launch, "claude-code", "--home", "/h"]) is None
    assert decide.agent(packaged, "d", [*launch, "other-agent"]) is not None
    assert decide.agent(packaged, "e", []) is not None


def test_what_the_policy_manages_is_named_by_the_setting_it_governs():
    ruled = state(
        {
            "services": {"base_urls": ["https://api.example.com/*"], "oauth_urls": []},
            "mcp": {"commands": ["/usr/bin/srv"]},
            "databases": {"hosts": ["db.example.com"], "engines": ["postgres", "mysql"]},
            "agents": {
                "allow": [{"package": "claude-code"}, {"command": "/usr/bin/agent"}],
                "write": False,
                "allow_always": False,
            },
            "apps": {"resource_domains": False},
            "dev_mode": False,
        },
        {"mcp": {"urls": ["https://mcp.example.com/*"]}},
    )
    words = "Managed by your organisation's policy: "
    assert decide.managed(ruled) == {
        "services": words
        + "only these base URLs: https://api.example.com/*; only these OAuth2 sign-in URLs: none",
        "mcp_servers": words
        + "only these programs: /usr/bin/srv; only these URLs: https://mcp.example.com/*",
        "databases": words + "only these hosts: db.example.com; only these engines: postgres, mysql",
        "agents": words + "only these agents: claude-code, /usr/bin/agent",
        "agents.write": words + "agents may not change files",
        "agents.allow_always": words + '"allow always" is not available',
        "apps.resource_domains": words + "apps' resource domains are never allowed",
        "dev_mode": words + "author mode (helm dev) is not available",
    }
    assert decide.managed(state({"kinds": {"files": {}}})) == {}
    bad = RefusedFile(Path("/etc/helm/policy.json"), "it is owned by user id 1000")
    assert decide.managed(PolicyState(refused=(bad,))) == {"all": words + bad.message}


def test_an_agent_one_policy_allows_is_still_refused_by_another_that_does_not():
    both = state(
        {"agents": {"allow": [{"command": sys.executable}, {"package": "claude-code"}]}},
        {"agents": {"allow": [{"command": "/nonexistent/other"}]}},
    )
    for command in ([sys.executable], [*decide.helm_command(), "agent", "start-adapter", "claude-code"]):
        found = decide.agent(both, "a", command)
        assert found is not None and found.source == Path("/etc/helm/1.json")


@pytest.mark.parametrize(
    ("rule", "doc", "ask"),
    [
        ("agents.write", {"agents": {"write": False}}, decide.agent_writes),
        ("agents.allow_always", {"agents": {"allow_always": False}}, decide.allow_always),
        ("dev_mode", {"dev_mode": False}, decide.dev_mode),
    ],
)
def test_a_switch_stays_on_unless_some_policy_turns_it_off(rule: str, doc: dict[str, Any], ask: Any):
    assert ask(state({"kinds": {"files": {}}})) is None
    found = ask(state({"kinds": {"files": {}}}, doc))
    assert found is not None and found.rule == rule and found.source == Path("/etc/helm/1.json")


def test_an_agent_profile_names_a_catalogue_adapter_only_through_helms_own_launcher(
    monkeypatch: pytest.MonkeyPatch,
):
    helm = [sys.executable, "-m", "app.cli"]
    assert decide.helm_command() == helm
    assert decide.adapter_of([*helm, "agent", "start-adapter", "claude-code"]) == "claude-code"
    assert decide.adapter_of([*helm, "agent", "start-adapter"]) is None
    assert decide.adapter_of([*helm, "agent", "start", "claude-code"]) is None
    assert decide.adapter_of(["/usr/bin/evil", "agent", "start-adapter", "claude-code"]) is None
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # the bundle: Helm is its own program
    assert decide.helm_command() == [sys.executable]
    assert decide.adapter_of([sys.executable, "agent", "start-adapter", "claude-code"]) == "claude-code"
