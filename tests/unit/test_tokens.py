"""Confirmation tokens and call admission, as pure decisions with an injected clock."""

from __future__ import annotations

import base64

import pytest

from broker.ratelimit import CallAdmission
from broker.tokens import Binding, Redemption, TokenBook


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


B = Binding("ws", "com.example.a", "conn", "op", "digest-1")


def test_a_token_redeems_once() -> None:
    book = TokenBook()
    token, ttl = book.mint(B)
    assert ttl == 300
    assert book.redeem(token, B) is Redemption.VALID
    assert book.redeem(token, B) is Redemption.UNKNOWN


def test_a_token_expires_after_five_minutes() -> None:
    clock = Clock()
    book = TokenBook(clock)
    token, _ = book.mint(B)
    clock.now += 299.9
    assert not book.expired(token)
    clock.now += 0.2
    assert book.redeem(token, B) is Redemption.EXPIRED


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(
            Binding("ws2", B.extension, B.connection, B.operation, B.request_digest), id="workspace"
        ),
        pytest.param(
            Binding(B.workspace, "com.example.b", B.connection, B.operation, B.request_digest), id="extension"
        ),
        pytest.param(
            Binding(B.workspace, B.extension, "other", B.operation, B.request_digest), id="connection"
        ),
        pytest.param(
            Binding(B.workspace, B.extension, B.connection, "op2", B.request_digest), id="operation"
        ),
        pytest.param(
            Binding(B.workspace, B.extension, B.connection, B.operation, "digest-2"), id="arguments"
        ),
    ],
)
def test_a_token_minted_for_another_call_does_not_redeem_and_is_spent(other: Binding) -> None:
    book = TokenBook()
    token, _ = book.mint(B)
    assert book.redeem(token, other) is Redemption.MISMATCH
    assert book.redeem(token, B) is Redemption.UNKNOWN


def test_an_unknown_token_does_not_redeem() -> None:
    assert TokenBook().redeem("made-up", B) is Redemption.UNKNOWN


def test_sixty_calls_a_minute_per_instance_then_rate_limited() -> None:
    clock = Clock()
    gate = CallAdmission(clock)
    for _ in range(60):
        assert gate.admit(("ws", "ext", "a")).admitted
        gate.release(("ws", "ext", "a"))
    refused = gate.admit(("ws", "ext", "a"))
    assert not refused.admitted
    assert 0 < refused.retry_after <= 60
    assert gate.admit(("ws", "ext", "b")).admitted  # another instance has its own budget
    clock.now += 60
    assert gate.admit(("ws", "ext", "a")).admitted


def test_the_window_slides() -> None:
    clock = Clock()
    gate = CallAdmission(clock)
    for i in range(60):
        clock.now = 1000.0 + i
        assert gate.admit(("ws", "ext", "a")).admitted
        gate.release(("ws", "ext", "a"))
    clock.now = 1060.0  # the first call left the window
    assert gate.admit(("ws", "ext", "a")).admitted
    assert not gate.admit(("ws", "ext", "a")).admitted


def test_calls_in_flight_are_capped_per_instance_and_in_total() -> None:
    gate = CallAdmission(per_minute=10_000, in_flight_per_instance=3, in_flight_total=5)
    assert all(gate.admit(("ws", "ext", "a")).admitted for _ in range(3))
    assert not gate.admit(("ws", "ext", "a")).admitted
    assert all(gate.admit(("ws", "ext", "b")).admitted for _ in range(2))
    assert not gate.admit(("ws", "ext", "c")).admitted
    gate.release(("ws", "ext", "a"))
    assert gate.admit(("ws", "ext", "c")).admitted


def test_a_token_is_32_random_bytes_and_never_repeats() -> None:
    book = TokenBook()
    tokens = {book.mint(B)[0] for _ in range(200)}
    assert len(tokens) == 200
    for token in tokens:
        assert len(base64.urlsafe_b64decode(token + "=")) == 32


def test_a_token_is_valid_for_exactly_300_seconds() -> None:
    clock = Clock()
    book = TokenBook(clock)
    early, _ = book.mint(B)
    on_time, _ = book.mint(B)
    clock.now += 300.0 - 1e-6
    assert not book.expired(on_time)
    assert book.redeem(early, B) is Redemption.VALID
    clock.now = 1300.0
    assert book.expired(on_time)
    assert book.redeem(on_time, B) is Redemption.EXPIRED


def test_an_unknown_spent_or_discarded_token_counts_as_expired() -> None:
    book = TokenBook()
    spent, _ = book.mint(B)
    book.redeem(spent, B)
    declined, _ = book.mint(B)
    book.discard(declined)
    assert book.expired("made-up")
    assert book.expired(spent)
    assert book.expired(declined)


def test_a_discarded_token_no_longer_redeems() -> None:
    book = TokenBook()
    token, _ = book.mint(B)
    kept, _ = book.mint(B)
    book.discard(token)
    assert book.redeem(token, B) is Redemption.UNKNOWN
    assert book.redeem(kept, B) is Redemption.VALID


def test_at_most_1024_tokens_wait_and_the_oldest_is_evicted_first() -> None:
    book = TokenBook()
    tokens = [book.mint(B)[0] for _ in range(1024)]
    assert all(not book.expired(t) for t in tokens)
    newest, _ = book.mint(B)
    assert book.redeem(tokens[0], B) is Redemption.UNKNOWN
    assert all(book.redeem(t, B) is Redemption.VALID for t in tokens[1:])
    assert book.redeem(newest, B) is Redemption.VALID


def test_an_expired_token_is_forgotten_when_the_next_is_minted() -> None:
    clock = Clock()
    book = TokenBook(clock)
    old, _ = book.mint(B)
    clock.now += 300.0
    live, _ = book.mint(B)
    assert book.redeem(old, B) is Redemption.UNKNOWN
    assert book.redeem(live, B) is Redemption.VALID
