"""Call admission: the rate limit and the in-flight caps, with an injected clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from broker.context import CallContext
from broker.ratelimit import Admission, CallAdmission, instance_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


A = ("ws", "ext", "a")


def test_the_rate_limit_counts_per_frame_in_its_workspace() -> None:
    key = instance_key(CallContext("ws", "com.example.a", "frame-1"))
    assert key == ("ws", "com.example.a", "frame-1")
    gate = CallAdmission()
    assert gate.admit(key) == Admission(True, 0.0, "")
    gate.release(key)
    for _ in range(59):
        assert gate.admit(key).admitted
        gate.release(key)
    assert not gate.admit(key).admitted
    for other in (
        CallContext("ws2", "com.example.a", "frame-1"),
        CallContext("ws", "com.example.b", "frame-1"),
        CallContext("ws", "com.example.a", "frame-2"),
    ):
        assert gate.admit(instance_key(other)).admitted


def test_retry_after_says_when_the_oldest_call_leaves_the_window() -> None:
    clock = Clock()
    gate = CallAdmission(clock)
    for _ in range(60):
        gate.admit(A)
        gate.release(A)
    clock.now = 1030.0
    assert gate.admit(A).retry_after == 30.0
    clock.now = 1059.5
    assert gate.admit(A).retry_after == 0.5
    clock.now = 1059.87654
    assert gate.admit(A).retry_after == 0.123


def test_retry_after_is_never_zero_while_the_limit_holds() -> None:
    clock = Clock()
    gate = CallAdmission(clock)
    for _ in range(60):
        gate.admit(A)
        gate.release(A)
    clock.now = 1060.0 - 1e-7
    refused = gate.admit(A)
    assert not refused.admitted
    assert refused.retry_after == 0.001


def test_a_call_refused_for_calls_in_flight_retries_after_a_second() -> None:
    gate = CallAdmission(in_flight_per_instance=1)
    assert gate.admit(A).admitted
    refused = gate.admit(A)
    assert (refused.admitted, refused.retry_after) == (False, 1.0)


def test_by_default_16_calls_per_frame_and_256_in_all_may_be_in_flight() -> None:
    gate = CallAdmission()
    assert all(gate.admit(A).admitted for _ in range(16))
    assert not gate.admit(A).admitted
    frames = [("ws", "ext", f"f{i}") for i in range(15)]
    assert all(gate.admit(f).admitted for f in frames for _ in range(16))
    assert not gate.admit(("ws", "ext", "last")).admitted
    gate.release(A)
    assert gate.admit(("ws", "ext", "last")).admitted


def test_each_release_frees_exactly_one_call_of_that_frame() -> None:
    gate = CallAdmission(per_minute=10_000, in_flight_per_instance=2, in_flight_total=100)
    assert gate.admit(A).admitted and gate.admit(A).admitted
    gate.release(A)
    assert gate.admit(A).admitted
    assert not gate.admit(A).admitted


def test_releasing_every_call_frees_the_whole_total() -> None:
    gate = CallAdmission(per_minute=10_000, in_flight_per_instance=5, in_flight_total=1)
    for _ in range(3):
        assert gate.admit(A).admitted
        assert not gate.admit(("ws", "ext", "b")).admitted
        gate.release(A)
    gate.release(A)  # one release too many does not open a second place
    assert gate.admit(A).admitted
    assert not gate.admit(("ws", "ext", "b")).admitted


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=40), st.integers(1, 4), st.integers(1, 8))
def test_in_flight_never_exceeds_either_cap(frames: list[str], per_frame: int, total: int) -> None:
    gate = CallAdmission(per_minute=10_000, in_flight_per_instance=per_frame, in_flight_total=total)
    held: dict[str, int] = {}
    for i, frame in enumerate(frames):
        key = ("ws", "ext", frame)
        if i % 3 == 2 and held.get(frame):
            gate.release(key)
            held[frame] -= 1
            continue
        expected = held.get(frame, 0) < per_frame and sum(held.values()) < total
        assert gate.admit(key).admitted is expected
        if expected:
            held[frame] = held.get(frame, 0) + 1


def test_retry_after_counts_from_the_oldest_call_still_in_the_window() -> None:
    clock = Clock()
    gate = CallAdmission(clock)
    for i in range(60):
        clock.now = 1000.0 + i
        gate.admit(A)
        gate.release(A)
    clock.now = 1059.5
    assert gate.admit(A).retry_after == 0.5
