"""Canonical JSON (the digest behind every write token) against plain json.dumps."""

from __future__ import annotations

import json
from collections.abc import Callable

from broker.jsonutil import canonical, loads_strict
from tests.bench.conftest import Bench

ARGS = {
    "owner": "helm",
    "rows": [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "qty": i * 1.5} for i in range(200)],
    "note": "x" * 4000,
}
TEXT = json.dumps(ARGS)


def test_canonical_json_costs_little_more_than_sorted_dumps(bench: Bench):
    helm = bench.time(lambda: canonical(ARGS), repeat=300)
    raw = bench.time(lambda: json.dumps(ARGS, sort_keys=True, separators=(",", ":")), repeat=300)
    bench.record("canonical JSON of 200-row arguments", helm, raw, note="vs json.dumps")
    assert helm > 0


Timed = Callable[[], object]


def _in_turns(bench: Bench, helm: Timed, raw: Timed, repeat: int) -> tuple[float, float]:
    """Both measured in turns, so a noisy neighbour slows both alike; the best turn of each."""
    timings: tuple[list[float], list[float]] = ([], [])
    for _ in range(5):
        timings[0].append(bench.time(helm, repeat=repeat))
        timings[1].append(bench.time(raw, repeat=repeat))
    return min(timings[0]), min(timings[1])


def test_strict_json_parsing_costs_little_more_than_json_loads(bench: Bench):
    helm, raw = _in_turns(bench, lambda: loads_strict(TEXT), lambda: json.loads(TEXT), 100)
    bench.record("strict JSON parse (duplicate keys refused)", helm, raw, note="vs json.loads")
    assert helm > 0


def test_strict_json_parsing_costs_what_any_pairs_hook_costs(bench: Bench):
    # The floor of a duplicate-key check on the standard library's parser: with any
    # object_pairs_hook, even the C-level ``dict``, the scanner builds a list of (key, value)
    # tuples per object and the hook builds the dict from it, which alone costs about as much
    # as Helm's check. This row shows Helm's own share over that floor.
    floor = json.JSONDecoder(object_pairs_hook=dict)
    helm, raw = _in_turns(bench, lambda: loads_strict(TEXT), lambda: floor.decode(TEXT), 100)
    bench.record("strict JSON parse vs the pairs-hook floor", helm, raw, note="vs object_pairs_hook=dict")
    assert helm > 0


def test_strict_json_parsing_of_a_small_call_costs_what_json_loads_costs(bench: Bench):
    # What most bridge calls carry: a few short arguments.
    small = '{"path": "notes/2024-01-01.md", "limit": 20}'
    helm, raw = _in_turns(bench, lambda: loads_strict(small), lambda: json.loads(small), 1000)
    bench.record("strict JSON parse of a call's small arguments", helm, raw, note="vs json.loads")
    assert helm > 0
