"""SQLite's rows take a shortcut through the row budget (conversion and size bound in one pass);
for any rows it converts, counts and refuses exactly as the general path of every other engine."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from broker.errors import CallError
from broker.kinds.db.values import MAX_ROW_BYTES, RowBudget, plain

COLUMNS = ["a", "b", "c"]
value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.sampled_from(["x" * (MAX_ROW_BYTES // 7), "\x00" * (MAX_ROW_BYTES // 13)]),
)
rows = st.lists(st.tuples(value, value, value), max_size=40)


def outcome(budget: RowBudget, given_rows: list[tuple[Any, ...]]) -> tuple[list[list[Any]], str | None]:
    try:
        budget.add_all(given_rows)
    except CallError as err:
        return budget.rows, err.code.value
    return budget.rows, None


@given(rows)
@example([("x" * (MAX_ROW_BYTES // 7), None, 1)] * 8)  # the bound passes the limit: measured exactly
@example([(2**53, -(2**53), float("inf"))])
def test_sqlites_rows_convert_and_count_as_the_general_path_does(given_rows: list[tuple[Any, ...]]) -> None:
    general = RowBudget(COLUMNS, [lambda v: plain(v)] * 3)  # not `plain` itself: no shortcut
    assert outcome(RowBudget(COLUMNS, [plain] * 3), given_rows) == outcome(general, given_rows)
