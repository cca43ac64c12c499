"""The mutation runner's operators and configuration (tests/mutation/)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.mutation.operators import mutants, mutate
from tests.mutation.runner import ROOT, load_equivalents, load_targets, source_lines, stale_equivalents

SOURCE = '''
"""Docstring: never mutated."""
LIMIT = 10


def check(n: int, flags: int, name: str) -> bool:
    """Also never mutated."""
    log.debug("not mutated either")
    if n >= LIMIT and name == "x":
        raise ValueError("too big")
    total = 0
    total += n
    flags = flags | 4
    record(n)
    return not done(total)
'''


def keys() -> list[str]:
    return [m.key for m in mutants(SOURCE)]


def test_each_operator_makes_its_one_change_keyed_by_function_and_text() -> None:
    found = keys()
    for key in [
        "<module>: 10 -> 11",
        "<module>: 10 -> 0",
        "check: n >= LIMIT and name == 'x' -> n >= LIMIT or name == 'x'",
        "check: n >= LIMIT -> n > LIMIT",
        "check: name == 'x' -> name != 'x'",
        "check: 'x' -> 'XXxXX'",
        "check: raise ValueError('too big') -> pass",
        "check: total += n -> total -= n",
        "check: flags | 4 -> flags",
        "check: flags | 4 -> 4",
        "check: record(n) -> pass",
        "check: not done(total) -> done(total)",
    ]:
        assert key in found
    assert not any("debug" in k or "Docstring" in k or "never mutated" in k for k in found)
    assert not any(": int" in k or "-> bool" in k for k in found)


def test_a_mutant_applies_exactly_its_own_change() -> None:
    original = ast.dump(ast.parse(SOURCE))
    for m in mutants(SOURCE):
        changed = mutate(SOURCE, m.index)
        assert ast.dump(ast.parse(changed)) != original, m.key
        assert mutate(SOURCE, m.index) == changed


def test_keys_are_unique_and_survive_edits_elsewhere_in_the_file() -> None:
    found = keys()
    assert len(found) == len(set(found))
    assert keys() == [m.key for m in mutants("\n\nimport os\n" + SOURCE)]


def test_every_target_and_its_tests_exist() -> None:
    targets = load_targets()
    assert targets
    for target in targets:
        assert (ROOT / target.path).is_file(), target.path
        for test in target.tests:
            assert (ROOT / test).is_file(), test


def test_every_equivalent_mutant_is_reasoned_and_still_the_mutant_it_was() -> None:
    assert stale_equivalents(load_targets(), load_equivalents()) == []


def test_an_equivalent_whose_key_moved_to_another_line_is_stale(tmp_path: Path) -> None:
    module = "broker/urls.py"
    target = next(t for t in load_targets() if t.path == module)
    lines = source_lines((ROOT / module).read_text(encoding="utf-8"))
    key, line = next(iter(lines.items()))
    assert stale_equivalents([target], {module: {key: line}}) == []
    moved = stale_equivalents([target], {module: {key: "x = 1"}})
    assert moved == [f"{module}: {key!r} now changes {line!r}, not 'x = 1': review it again"]
    gone = stale_equivalents([target], {module: {"nowhere: 1 -> 2": line}})
    assert gone == [f"{module}: 'nowhere: 1 -> 2' is no longer a mutant"]
    assert stale_equivalents([], {module: {key: line}}) == [f"{module}: not in targets.toml"]


def test_an_equivalent_without_its_line_or_reason_is_refused(tmp_path: Path) -> None:
    listed = tmp_path / "equivalent.toml"
    for missing in ("line", "reason"):
        fields = {"module": "broker/urls.py", "key": "k", "line": "x = 1", "reason": "none"}
        del fields[missing]
        listed.write_text("[[equivalent]]\n" + "".join(f"{k} = {v!r}\n" for k, v in fields.items()))
        with pytest.raises(SystemExit, match=f"has no {missing}"):
            load_equivalents(listed)
