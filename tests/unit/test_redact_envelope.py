"""What redaction guarantees for a whole call: every string of the envelope or the error is
scrubbed, nothing else changes, and the audit log records that a redaction happened (a real
audit log in a real home)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from broker.audit import AuditLog
from broker.errors import CallError, ErrorCode
from broker.redact import REDACTED, Scrubber, scrubbed
from broker.settings import Home

SECRET = "tok123"


def test_a_secret_inside_a_longer_string_of_an_object_is_redacted() -> None:
    data = {"msg": f"your token is {SECRET}", "list": [f"x{SECRET}y"]}
    assert Scrubber([SECRET]).value(data) == {"msg": f"your token is {REDACTED}", "list": [f"x{REDACTED}y"]}


def test_a_secret_with_characters_json_escapes_is_found_inside_longer_strings() -> None:
    secret = 'a"b/c\\d'
    data = {"msg": f"said {secret} twice: {secret}"}
    scrubber = Scrubber([secret])
    assert scrubber.value(data) == {"msg": f"said {REDACTED} twice: {REDACTED}"}
    assert scrubber.count == 2


def test_an_object_whose_every_key_holds_the_secret_keeps_every_value() -> None:
    data = {SECRET: 1, f"a {SECRET}": 2, f"b {SECRET}": 3}
    assert Scrubber([SECRET]).value(data) == {REDACTED: 1, f"a {REDACTED}": 2, f"b {REDACTED}": 3}


def test_keys_that_all_become_the_same_are_numbered_so_no_value_is_lost() -> None:
    data = {"a tok1": 1, "a tok2": 2, "a tok3": 3}
    scrubbed_keys = Scrubber(["tok1", "tok2", "tok3"]).value(data)
    assert scrubbed_keys == {f"a {REDACTED}": 1, f"a {REDACTED} (2)": 2, f"a {REDACTED} (3)": 3}


def test_values_without_the_secret_and_non_containers_come_back_unchanged() -> None:
    scrubber = Scrubber([SECRET])
    data = {"a": ["b", 1, None], "c": {"d": 2.5}}
    assert scrubber.value(data) is data and data == {"a": ["b", 1, None], "c": {"d": 2.5}}
    assert scrubber.value(7) == 7
    assert scrubber.value(None) is None
    assert scrubber.count == 0


def test_the_envelopes_message_and_plain_string_data_are_scrubbed() -> None:
    result = {
        "ok": False,
        "data": f"echo {SECRET}",
        "error": {"code": "http_error", "message": f"bad {SECRET}"},
    }
    Scrubber([SECRET]).envelope(result)
    assert result == {
        "ok": False,
        "data": f"echo {REDACTED}",
        "error": {"code": "http_error", "message": f"bad {REDACTED}"},
    }


@pytest.mark.parametrize("error", [None, "text", {"code": "x", "message": 3}])
def test_an_envelope_with_an_odd_error_keeps_it_as_it_is(error: object) -> None:
    result = {"ok": False, "data": None, "error": error}
    Scrubber([SECRET]).envelope(result)
    assert result["error"] == error


class Audited:
    """The env and call ``scrubbed`` reads: a real home and audit log, and the call's names."""

    def __init__(self, home: Path, own_log: bool) -> None:
        self.log = AuditLog.in_home(home)
        self.env = SimpleNamespace(audit=self.log if own_log else None, home=Home(home))
        self.call = SimpleNamespace(
            ctx=SimpleNamespace(workspace="ws", extension="com.example.a"),
            connection_id="api",
            connection=SimpleNamespace(kind="http"),
            operation="get",
        )

    def records(self) -> list[tuple[str, str, str, str]]:
        return [(r.decision, r.outcome, r.connection, r.title) for r in self.log.records()]


async def answer(result: dict[str, Any]) -> dict[str, Any]:
    return result


async def failing(err: CallError) -> dict[str, Any]:
    raise err


@pytest.mark.parametrize("own_log", [True, False])
async def test_a_redaction_is_audited_with_the_call_and_the_count_never_the_secret(
    tmp_path: Path, own_log: bool
) -> None:
    audited = Audited(tmp_path, own_log)
    result = {"ok": True, "data": {"h": f"Bearer {SECRET}", "k": SECRET}}
    back = await scrubbed(audited.env, audited.call, [SECRET], answer(result))  # type: ignore[arg-type]
    assert back["data"] == {"h": f"Bearer {REDACTED}", "k": REDACTED}
    assert audited.records() == [
        ("redacted", "ok", "api", "Helm removed 2 occurrence(s) of a secret it sent from the answer")
    ]
    assert all(SECRET not in repr(record) for record in audited.log.records())


async def test_a_failed_answer_with_a_secret_is_audited_with_its_error_code(tmp_path: Path) -> None:
    audited = Audited(tmp_path, True)
    result = {"ok": False, "data": None, "error": {"code": "http_error", "message": f"no {SECRET}"}}
    await scrubbed(audited.env, audited.call, [SECRET], answer(result))  # type: ignore[arg-type]
    assert [r[:2] for r in audited.records()] == [("redacted", "http_error")]


async def test_an_error_raised_with_a_secret_is_scrubbed_audited_and_raised(tmp_path: Path) -> None:
    audited = Audited(tmp_path, True)
    err = CallError(ErrorCode.HTTP_ERROR, f"echo {SECRET}", data=f"body {SECRET}")
    with pytest.raises(CallError) as caught:
        await scrubbed(audited.env, audited.call, [SECRET], failing(err))  # type: ignore[arg-type]
    assert (caught.value.message, caught.value.args, caught.value.data) == (
        f"echo {REDACTED}",
        (f"echo {REDACTED}",),
        f"body {REDACTED}",
    )
    assert [r[:2] for r in audited.records()] == [("redacted", "http_error")]


async def test_an_answer_without_the_secret_is_not_audited(tmp_path: Path) -> None:
    audited = Audited(tmp_path, True)
    result = {"ok": True, "data": {"h": "nothing"}}
    assert await scrubbed(audited.env, audited.call, [SECRET], answer(result)) == result  # type: ignore[arg-type]
    with pytest.raises(CallError):
        await scrubbed(audited.env, audited.call, [SECRET], failing(CallError(ErrorCode.TIMEOUT, "slow")))  # type: ignore[arg-type]
    assert audited.records() == []
