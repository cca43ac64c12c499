"""The mutation operators: every small change to a module that a test ought to notice.

A mutant is one change at one place: a flipped comparison, ``and`` for ``or``, a dropped ``not``,
``-`` for ``+``, a constant off by one (or zero), ``True`` for ``False``, a compared string
changed, one operand of ``|`` dropped, a condition negated, ``break`` for ``continue``, a
``raise`` or a called-for-its-effect statement replaced by ``pass``.

Left alone, because changing them says nothing about behaviour: docstrings, type annotations,
decorators, f-strings, logging calls, ``assert`` statements and ``if TYPE_CHECKING:`` blocks.

Each mutant has a key that survives edits elsewhere in the file: the enclosing function's
qualified name, then the node before and after (``TokenStore.issue: n > cap -> n >= cap``),
with ``#2``, ``#3`` … for a repeat inside the same function.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
}
_AUG_SWAP = {**_BINOP_SWAP, ast.BitOr: ast.BitAnd}
_LOG_NAMES = frozenset({"log", "logger", "_log", "_logger", "logging", "LOG"})
_SHOWN = 90


@dataclass(frozen=True)
class Mutant:
    """One change: its place in the walk (to apply it), its line and its stable key."""

    index: int
    line: int
    key: str


# A candidate: the line, the enclosing qualname, a description, and how to make the change.
_Edit = Callable[[], None]


def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _is_docstring(stmt: ast.stmt, body: list[ast.stmt]) -> bool:
    return (
        body[0] is stmt
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_log_call(call: ast.expr) -> bool:
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return False
    owner = call.func.value
    return isinstance(owner, ast.Name) and owner.id in _LOG_NAMES


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Walker:
    """Walks a tree in a fixed order and yields each possible change as (line, qualname, text, edit)."""

    def __init__(self, tree: ast.Module) -> None:
        self.found: list[tuple[int, str, str, _Edit]] = []
        self._scope: list[str] = []
        self._current: ast.AST = tree
        self._parents: dict[int, tuple[ast.AST, str, int | None]] = {}
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if isinstance(value, ast.AST):
                    self._parents[id(value)] = (parent, field, None)
                elif isinstance(value, list):
                    for j, item in enumerate(value):
                        if isinstance(item, ast.AST):
                            self._parents[id(item)] = (parent, field, j)

    def _add(self, node: ast.AST, before: str, after: ast.AST | str, edit: _Edit) -> None:
        shown = after if isinstance(after, str) else _short(after)
        qual = ".".join(self._scope) or "<module>"
        self.found.append((getattr(node, "lineno", 0), qual, f"{before} -> {shown}", edit))
        self._current = node

    def _replace_last(self, new: ast.expr) -> None:
        """Makes the change just added put ``new`` where its node stands in the parent."""
        parent, field, j = self._parents[id(self._current)]

        def edit() -> None:
            if j is None:
                setattr(parent, field, new)
            else:
                getattr(parent, field)[j] = new

        line, qual, text, _ = self.found[-1]
        self.found[-1] = (line, qual, text, edit)

    # -- statements ---------------------------------------------------------------------------

    def body(self, stmts: list[ast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            if _is_docstring(stmt, stmts):
                continue
            self.stmt(stmts, i, stmt)

    def stmt(self, body: list[ast.stmt], i: int, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.AugAssign):
            self.aug(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._scope.append(stmt.name)
            if not isinstance(stmt, ast.ClassDef):
                self._defaults(stmt.args)
            else:
                for base in [*stmt.bases, *(k.value for k in stmt.keywords)]:
                    self.expr(base)
            self.body(stmt.body)
            self._scope.pop()
            return
        if isinstance(stmt, (ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            return
        if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            return
        if isinstance(stmt, ast.Expr) and _is_log_call(stmt.value):
            return
        self._statement_edits(body, i, stmt)
        self._children(stmt)

    def _statement_edits(self, body: list[ast.stmt], i: int, stmt: ast.stmt) -> None:
        def replace_with(new: ast.stmt) -> _Edit:
            def edit() -> None:
                body[i] = ast.copy_location(new, stmt)

            return edit

        effect = isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await))
        if isinstance(stmt, ast.Raise) or effect:
            self._add(stmt, _short(stmt), "pass", replace_with(ast.Pass()))
        elif isinstance(stmt, ast.Break):
            self._add(stmt, "break", "continue", replace_with(ast.Continue()))
        elif isinstance(stmt, ast.Continue):
            self._add(stmt, "continue", "break", replace_with(ast.Break()))
        if isinstance(stmt, (ast.If, ast.While)):
            self._negate(stmt, "test")

    def _children(self, stmt: ast.stmt) -> None:
        for field, value in ast.iter_fields(stmt):
            if field in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.body(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.expr):
                        self.expr(item)
                    elif isinstance(item, ast.excepthandler):
                        self.body(item.body)
                    elif isinstance(item, (ast.withitem, ast.match_case)):
                        self._other(item)
            elif isinstance(value, ast.expr):
                self.expr(value)

    def _other(self, item: ast.AST) -> None:
        if isinstance(item, ast.withitem):
            self.expr(item.context_expr)
        elif isinstance(item, ast.match_case):
            if item.guard is not None:
                self.expr(item.guard)
            self.body(item.body)

    def _defaults(self, args: ast.arguments) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.expr(default)

    def _negate(self, node: ast.AST, field: str) -> None:
        test = getattr(node, field)
        if isinstance(test, (ast.Compare, ast.BoolOp)) or (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        ):
            return  # Its own operators are flipped instead.

        def edit() -> None:
            setattr(node, field, ast.UnaryOp(op=ast.Not(), operand=test))

        self._add(test, _short(test), f"not {_short(test)}", edit)

    # -- expressions --------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> None:
        if isinstance(node, ast.JoinedStr):
            return
        self._expr_edits(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, ast.comprehension):
                self.expr(child.iter)
                for cond in child.ifs:
                    self.expr(cond)
            elif isinstance(child, ast.keyword):
                self.expr(child.value)

    def _expr_edits(self, node: ast.expr) -> None:
        if isinstance(node, ast.Compare):
            self._compare(node)
        elif isinstance(node, ast.BoolOp):
            swapped = ast.Or if isinstance(node.op, ast.And) else ast.And
            self._swap_op(node, swapped())
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._add(node, _short(node), node.operand, lambda: None)
            self._replace_last(node.operand)
        elif isinstance(node, ast.BinOp):
            self._binop(node)
        elif isinstance(node, ast.IfExp):
            self._negate(node, "test")
        elif isinstance(node, ast.Constant):
            self._constant(node)

    def _swap_op(self, node: ast.BoolOp | ast.BinOp | ast.AugAssign, op: ast.AST) -> None:
        changed = copy.copy(node)
        changed.op = op  # type: ignore[assignment]

        def edit() -> None:
            node.op = op  # type: ignore[assignment]

        self._add(node, _short(node), changed, edit)

    def _compare(self, node: ast.Compare) -> None:
        for k, op in enumerate(node.ops):
            swapped = _COMPARE_SWAP.get(type(op))
            if swapped is None:
                continue
            changed = copy.copy(node)
            changed.ops = [*node.ops[:k], swapped(), *node.ops[k + 1 :]]

            def edit(k: int = k, new: ast.cmpop = changed.ops[k]) -> None:
                node.ops = [*node.ops[:k], new, *node.ops[k + 1 :]]

            self._add(node, _short(node), changed, edit)
        for operand in [node.left, *node.comparators]:
            for const in _compared_strings(operand):
                self._string(const)

    def _string(self, const: ast.Constant) -> None:
        original = const.value

        def edit() -> None:
            const.value = f"XX{original}XX"

        self._add(const, repr(original), repr(f"XX{original}XX"), edit)

    def _binop(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.BitOr):
            self._add(node, _short(node), node.left, lambda: None)
            self._replace_last(node.left)
            self._add(node, _short(node), node.right, lambda: None)
            self._replace_last(node.right)
            return
        swapped = _BINOP_SWAP.get(type(node.op))
        if swapped is not None:
            self._swap_op(node, swapped())

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._set_constant(node, not value)
        elif isinstance(value, (int, float)):
            self._set_constant(node, value + 1)
            if value != 0:
                self._set_constant(node, type(value)(0))

    def _set_constant(self, node: ast.Constant, new: object) -> None:
        def edit() -> None:
            node.value = new

        self._add(node, repr(node.value), repr(new), edit)

    def aug(self, node: ast.AugAssign) -> None:
        swapped = _AUG_SWAP.get(type(node.op))
        if swapped is not None:
            self._swap_op(node, swapped())


def _compared_strings(operand: ast.expr) -> Iterator[ast.Constant]:
    if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
        yield operand
    elif isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
        for elt in operand.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                yield elt


def _walk(source: str) -> tuple[ast.Module, list[tuple[int, str, str, _Edit]]]:
    tree = ast.parse(source)
    walker = _Walker(tree)
    walker.body(tree.body)
    return tree, walker.found


def mutants(source: str) -> list[Mutant]:
    """Every mutant of ``source``, in a fixed order, each with its stable key."""
    _, found = _walk(source)
    seen: dict[str, int] = {}
    result = []
    for index, (line, qual, text, _) in enumerate(found):
        key = f"{qual}: {text}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key} #{seen[key]}"
        result.append(Mutant(index=index, line=line, key=key))
    return result


def mutate(source: str, index: int) -> str:
    """``source`` with mutant ``index`` applied, as source text."""
    tree, found = _walk(source)
    found[index][3]()
    return ast.unparse(ast.fix_missing_locations(tree))
