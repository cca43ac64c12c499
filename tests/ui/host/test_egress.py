"""The engine's flags: Helm's dead end and empty resolver always win over a user's switches."""

from __future__ import annotations

import pytest

from ui.host.egress import (
    DEBUGGING_VARIABLE,
    FLAGS_VARIABLE,
    RESOLVE_NOTHING,
    close_egress,
    engine_flags,
    split_flags,
)

HELMS = [
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--proxy-server=socks5://127.0.0.1:4321",
    "--proxy-bypass-list=<-loopback>",
    f"--host-resolver-rules={RESOLVE_NOTHING}",
]


def test_helm_sends_every_engine_connection_to_a_dead_proxy_and_resolves_nothing() -> None:
    flags = engine_flags("", 4321)
    assert split_flags(flags.value) == HELMS
    assert flags.removed == ()


def test_the_users_other_switches_are_kept_in_their_order() -> None:
    flags = engine_flags("--no-sandbox --enable-logging --v=1", 4321)
    assert split_flags(flags.value) == ["--no-sandbox", "--enable-logging", "--v=1", *HELMS]
    assert flags.removed == ()


@pytest.mark.parametrize(
    "switch",
    [
        pytest.param("--no-proxy-server", id="no-proxy-server"),
        pytest.param("--proxy-auto-detect", id="proxy-auto-detect"),
        pytest.param("--proxy-pac-url=http://10.0.0.1/wpad.dat", id="proxy-pac-url"),
        pytest.param("--proxy-server=http://10.0.0.1:3128", id="another-proxy"),
        pytest.param("--proxy-bypass-list=*", id="bypass-everything"),
        pytest.param('"--host-resolver-rules=MAP * 10.0.0.1"', id="resolver-rules"),
        pytest.param('"--host-rules=MAP * 10.0.0.1"', id="host-rules"),
        pytest.param("--force-webrtc-ip-handling-policy=default", id="webrtc-policy"),
        pytest.param("--blink-settings=dnsPrefetchingEnabled=true", id="blink-settings"),
        pytest.param("--disable-web-security", id="web-security"),
        pytest.param("--enable-blink-features=DirectSockets", id="blink-features"),
        pytest.param("-no-proxy-server", id="single-dash"),
        pytest.param("--No-Proxy-Server", id="capitals"),
    ],
)
def test_a_switch_that_would_open_a_way_out_is_removed_and_reported(switch: str) -> None:
    flags = engine_flags(f"--no-sandbox {switch}", 4321)
    assert split_flags(flags.value) == ["--no-sandbox", *HELMS]
    assert flags.removed == tuple(split_flags(switch))


def test_arguments_after_a_bare_double_dash_are_dropped_so_helms_switches_stay_switches() -> None:
    flags = engine_flags("--no-sandbox -- --no-proxy-server", 4321)
    assert split_flags(flags.value) == ["--no-sandbox", *HELMS]
    assert flags.removed == ("--", "--no-proxy-server")


def test_helms_own_switches_inherited_by_a_child_process_are_replaced_without_a_warning() -> None:
    parent = engine_flags("--no-sandbox", 1111).value
    child = engine_flags(parent, 2222)
    assert child.value == engine_flags("--no-sandbox", 2222).value
    assert child.removed == ()


def test_flags_are_split_as_the_engine_splits_them() -> None:
    assert split_flags('  --a  "--b=c d" --e="f g"h ""  ') == ["--a", "--b=c d", "--e=f gh", ""]


def test_closing_egress_sets_the_variable_and_tells_the_user_what_was_removed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {FLAGS_VARIABLE: "--no-sandbox --no-proxy-server --proxy-auto-detect"}
    dead = close_egress(env)
    try:
        assert split_flags(env[FLAGS_VARIABLE])[0] == "--no-sandbox"
        assert f"--proxy-server=socks5://127.0.0.1:{dead.port}" in split_flags(env[FLAGS_VARIABLE])
        assert "--no-proxy-server --proxy-auto-detect" in caplog.text
        assert FLAGS_VARIABLE in caplog.text
    finally:
        dead.close()


@pytest.mark.parametrize(
    "switch",
    [
        pytest.param("--remote-debugging-port=9229", id="port"),
        pytest.param("--remote-debugging-pipe", id="pipe"),
        pytest.param("--remote-debugging-address=0.0.0.0", id="address"),
        pytest.param("--remote-allow-origins=*", id="origins"),
    ],
)
def test_a_remote_debugging_switch_is_removed_and_reported(switch: str) -> None:
    flags = engine_flags(f"--no-sandbox {switch}", 4321)
    assert split_flags(flags.value) == ["--no-sandbox", *HELMS]
    assert flags.removed == (switch,)


def test_the_remote_debugging_variable_is_removed_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    env = {FLAGS_VARIABLE: "--no-sandbox", DEBUGGING_VARIABLE: "9229"}
    dead = close_egress(env)
    try:
        assert DEBUGGING_VARIABLE not in env
        assert f"{DEBUGGING_VARIABLE}='9229'" in caplog.text
    finally:
        dead.close()
