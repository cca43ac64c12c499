"""Why a connection failed, named from the exception chain without quoting it."""

from __future__ import annotations

import errno
import socket
import ssl

import pytest

from broker import netcause


def chained(outer: Exception, inner: BaseException) -> Exception:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer from exc
    except Exception as caught:
        return caught


@pytest.mark.parametrize(
    ("exc", "named"),
    [
        pytest.param(ConnectionRefusedError(errno.ECONNREFUSED, "x"), netcause.REFUSED, id="refused"),
        pytest.param(socket.gaierror(socket.EAI_NONAME, "secret.host"), netcause.DNS, id="dns"),
        pytest.param(
            ssl.SSLCertVerificationError("bad cert for secret.host"), netcause.TLS_CERTIFICATE, id="cert"
        ),
        pytest.param(ssl.SSLError("handshake"), netcause.TLS, id="tls"),
        pytest.param(TimeoutError(), netcause.TIMED_OUT, id="timeout"),
        pytest.param(ConnectionResetError(), netcause.RESET, id="reset"),
        pytest.param(OSError(errno.EHOSTUNREACH, "no route"), netcause.UNREACHABLE, id="unreachable"),
        pytest.param(OSError(errno.EACCES, "denied"), netcause.UNKNOWN, id="other"),
        pytest.param(RuntimeError("wrapped"), netcause.UNKNOWN, id="nothing-known"),
    ],
)
def test_each_cause_is_named_in_words_of_helms_own(exc: BaseException, named: str) -> None:
    assert netcause.cause(chained(RuntimeError("a library's own words with secret.host"), exc)) == named
    assert "secret.host" not in named


def test_a_cycle_in_the_chain_ends() -> None:
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a
    assert netcause.cause(a) == netcause.UNKNOWN
