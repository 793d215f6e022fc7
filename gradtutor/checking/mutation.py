"""First-order mutants of a reference solution: the solution with exactly one small change,
as a learner would make it (`<=` for `<`, `.any()` for `.all()`, a `loss.backward()` left
out, `optimizer.step()` before `optimizer.zero_grad()`).

They are there to prove the checkers (issue 33): every exercise's checks, on every random
seed, must fail every mutant that behaves unlike the reference. Pure and torch-free: the
solution is parsed with `ast`, one node (or one pair of adjacent statements) is replaced,
and the module is written back with `ast.unparse`, so comments and layout are lost. Only
what is inside a function body is changed (methods' too): never an import, never a
module-level constant. Some mutants behave exactly like the reference (`min(a, b)` with its
arguments swapped): telling those apart is the caller's business, not this module's.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

from gradtutor.records import record

OPERATORS: tuple[str, ...] = (
    "compare", "bool-op", "negate", "all-any", "constant", "arith", "drop", "branch", "swap",
    "call-swap", "detach", "item", "args", "return",
)

MAX_SHOWN = 60  # characters of each side of a description

# each comparison, with what a slip makes of it
_COMPARE: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt), ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
}
_COMPARE_NAMES: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is-not", ast.In: "in", ast.NotIn: "not-in",
}
_ARITH: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
}
_ARITH_NAMES: dict[type[ast.operator], str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
                                               ast.Div: "/"}
# functions and methods (torch.all, x.min()) whose twin does the opposite
_TWINS = {"all": "any", "any": "all", "min": "max", "max": "min"}
# methods a learner confuses; only the method name changes, never its receiver
_CONFUSED = {"zero_grad": "step", "step": "zero_grad", "detach": "clone", "clone": "detach",
             "sum": "mean", "mean": "sum", "norm": "abs"}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# statements never dropped nor moved: definitions, imports, scoping, what does nothing
_FIXED = (*_FUNCTIONS, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
          ast.Pass)


@record
class Mutation:
    """One mutant of a source: what changed, where, and the whole program it makes."""

    id: str  # f"{operator}@{line}:{col}", then f":{variant}" when one site has several
    operator: str  # one of OPERATORS
    line: int  # 1-based, in the original source
    description: str  # "line 7: `(grad == 0).all()` -> `(grad == 0).any()`"
    source: str  # the mutated module, as ast.unparse writes it


class _Slot(NamedTuple):
    """Where nodes sit: a field of a parent node, or the slice [start, stop) of a list one."""

    parent: ast.AST
    field: str
    start: int | None  # None: the field holds one node
    stop: int = 0

    def get(self) -> list[ast.AST]:
        value = getattr(self.parent, self.field)
        return [value] if self.start is None else list(value[self.start:self.stop])

    def put(self, nodes: list[ast.AST]) -> _Slot:
        """Put `nodes` in this place; returns the place they now take (a slice's length may
        change), where the old nodes are put back."""
        if self.start is None:
            setattr(self.parent, self.field, nodes[0])
            return self
        getattr(self.parent, self.field)[self.start:self.stop] = nodes
        return self._replace(stop=self.start + len(nodes))


class _Edit(NamedTuple):
    """A change not yet made: the nodes of `slot` are to be replaced by `new`."""

    operator: str
    variant: str
    line: int
    col: int  # 1-based; see _where
    slot: _Slot
    new: list[ast.AST]


def mutants(source: str) -> list[Mutation]:
    """Every first-order mutant of `source` that compiles and is unlike the source and every
    mutant before it, ordered by line, column, operator and variant. Raises SyntaxError for
    a source that does not parse."""
    tree = ast.parse(source)
    edits = sorted(enumerate(_walk(tree, inside=False, tail=False)),
                   key=lambda pair: (pair[1].line, pair[1].col,
                                     OPERATORS.index(pair[1].operator), pair[0]))
    ids = _ids([edit for _, edit in edits])
    seen = {ast.unparse(tree)}
    found: list[Mutation] = []
    for (_, edit), mutation_id in zip(edits, ids, strict=True):
        old = edit.slot.get()
        filled = edit.slot.put(edit.new)
        try:
            text = ast.unparse(tree)
        finally:
            filled.put(old)  # the tree is shared by every edit: put it back at once
        if text in seen or not _compiles(text):
            continue
        seen.add(text)
        found.append(Mutation(
            id=mutation_id, operator=edit.operator, line=edit.line, source=text,
            description=f"line {edit.line}: `{_shown(old)}` -> `{_shown(edit.new)}`"))
    return found


def _ids(edits: list[_Edit]) -> list[str]:
    """Each edit's id, computed before any is dropped so that an id never depends on other
    mutants: the variant is added when a site has several, a number if still not unique."""
    sites = Counter((edit.operator, edit.line, edit.col) for edit in edits)
    ids: list[str] = []
    taken: set[str] = set()
    for edit in edits:
        base = f"{edit.operator}@{edit.line}:{edit.col}"
        if sites[edit.operator, edit.line, edit.col] > 1:
            base += f":{edit.variant}"
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}#{number}"
        taken.add(name)
        ids.append(name)
    return ids


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _shown(nodes: list[ast.AST]) -> str:
    """Nodes as one short line: each statement's first line, a compound one's body as ..."""
    parts = []
    for node in nodes:
        lines = ast.unparse(node).splitlines() or [""]
        parts.append(lines[0].strip() + (" ..." if len(lines) > 1 else ""))
    text = "; ".join(parts)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 3] + "..."


def _where(node: ast.AST) -> tuple[int, int]:
    """The 1-based line and column where `node` starts."""
    return int(getattr(node, "lineno", 0)), int(getattr(node, "col_offset", 0)) + 1


def _name_where(node: ast.Attribute) -> tuple[int, int]:
    """Where the name of an attribute (a method's name) starts: `.all` in `x.all()`."""
    if node.end_lineno is None or node.end_col_offset is None:
        return _where(node)
    return node.end_lineno, node.end_col_offset - len(node.attr) + 1


def _walk(node: ast.AST, inside: bool, tail: bool, slot: _Slot | None = None
          ) -> Iterator[_Edit]:
    """The edits of `node` and of every node under it. `inside`: in a function body (outside
    one, only statements are walked, to find the functions); `tail`: a statement that ends its
    function, whose `return` is never dropped (`return None` is that mistake already)."""
    if inside and slot is not None:
        yield from _node_edits(node, slot)
    for field, value in ast.iter_fields(node):
        in_body = inside or (isinstance(node, _FUNCTIONS) and field == "body")
        if isinstance(value, ast.AST):
            if in_body:
                yield from _walk(value, True, False, _Slot(node, field, None))
            continue
        if not isinstance(value, list):
            continue
        statements = all(isinstance(item, ast.stmt) for item in value)
        if not in_body and not all(isinstance(item, (ast.stmt, ast.excepthandler, ast.match_case))
                                for item in value):
            continue
        ends = (isinstance(node, _FUNCTIONS) and field == "body") or (
            tail and isinstance(node, (ast.If, ast.With, ast.AsyncWith)))
        if in_body and statements:
            yield from _body_edits(node, field, value, ends)
        for index, item in enumerate(value):
            if isinstance(item, ast.AST):
                yield from _walk(item, in_body, ends and index == len(value) - 1,
                                 _Slot(node, field, index, index + 1))


def _body_edits(parent: ast.AST, field: str, body: list[ast.stmt], ends: bool
                ) -> Iterator[_Edit]:
    """Statement-level edits of a body: drop one, drop a `with` header or an `if` around its
    branch, swap two adjacent statements."""
    for index, statement in enumerate(body):
        line, col = _where(statement)
        slot = _Slot(parent, field, index, index + 1)
        movable = not isinstance(statement, (*_FIXED, ast.Return)) and not _docstring(statement)
        last_return = isinstance(statement, ast.Return) and ends and index == len(body) - 1
        if not isinstance(statement, _FIXED) and not _docstring(statement) and not last_return:
            yield _Edit("drop", "pass", line, col, slot, [ast.Pass()])
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            yield _Edit("drop", "with", line, col, slot, list(statement.body))
        if isinstance(statement, ast.If):
            yield _Edit("branch", "then", line, col, slot, list(statement.body))
            if statement.orelse:
                yield _Edit("branch", "else", line, col, slot, list(statement.orelse))
        after = body[index + 1] if index + 1 < len(body) else None
        if (movable and after is not None and not isinstance(after, (*_FIXED, ast.Return))
                and not _docstring(after)):
            yield _Edit("swap", "", line, col, _Slot(parent, field, index, index + 2),
                        [after, statement])


def _docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _node_edits(node: ast.AST, slot: _Slot) -> Iterator[_Edit]:
    """Expression-level edits of one node (and the `if`/`while` test, `return` and `+=`
    rewrites of one statement). An operator's column (a comparison, `+`, `and`) is where its
    right operand starts, the operator being just before it; a method's, where its name does."""
    line, col = _where(node)
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            for new_op in _COMPARE.get(type(op), ()):
                ops = [*node.ops[:k], new_op(), *node.ops[k + 1:]]
                yield _Edit("compare", _COMPARE_NAMES[new_op], *_where(node.comparators[k]),
                            slot, [ast.Compare(node.left, ops, node.comparators)])
    elif isinstance(node, ast.BoolOp):
        twin: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield _Edit("bool-op", type(twin).__name__.lower(), *_where(node.values[1]), slot,
                    [ast.BoolOp(twin, node.values)])
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _Edit("negate", "drop-not", line, col, slot, [node.operand])
    elif isinstance(node, (ast.If, ast.While)) and not (
            isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)):
        yield _Edit("negate", "add-not", *_where(node.test), _Slot(node, "test", None),
                    [ast.UnaryOp(ast.Not(), node.test)])
    elif isinstance(node, ast.Call):
        yield from _call_edits(node, slot)
    elif isinstance(node, ast.Constant):
        for value in _constants(node.value):
            yield _Edit("constant", repr(value), line, col, slot, [ast.Constant(value)])
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        new_binop = _ARITH[type(node.op)]
        yield _Edit("arith", _ARITH_NAMES[new_binop], *_where(node.right), slot,
                    [ast.BinOp(node.left, new_binop(), node.right)])
    elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITH:
        new_aug = _ARITH[type(node.op)]
        yield _Edit("arith", _ARITH_NAMES[new_aug] + "=", line, col, slot,
                    [ast.AugAssign(node.target, new_aug(), node.value)])
        if isinstance(node.op, ast.Add):  # an accumulation that overwrites
            yield _Edit("arith", "=", line, col, slot,
                        [ast.Assign([node.target], node.value, lineno=node.lineno)])
    elif (isinstance(node, ast.Attribute) and node.attr == "grad"
          and isinstance(node.ctx, ast.Load) and slot.field != "func"
          and not (isinstance(slot.parent, ast.Attribute) and slot.parent.attr == "detach")):
        yield _Edit("detach", "", *_name_where(node), slot, [_method(node, "detach")])
    elif isinstance(node, ast.Return) and node.value is not None:
        if isinstance(node.value, ast.Name):
            for method in ("detach", "item"):
                yield _Edit(method, "", line, col, slot,
                            [ast.Return(_method(node.value, method))])
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield _Edit("return", "", line, col, slot, [ast.Return(ast.Constant(None))])


def _call_edits(node: ast.Call, slot: _Slot) -> Iterator[_Edit]:
    """A call's edits: a function or method for its twin (`all` for `any`, `step` for
    `zero_grad`), and its first two positional arguments swapped."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in _TWINS:
        twin = _TWINS[func.id]
        yield _Edit("all-any", twin, *_where(func), slot,
                    [ast.Call(ast.Name(twin, ast.Load()), node.args, node.keywords)])
    elif isinstance(func, ast.Attribute) and func.attr in {**_TWINS, **_CONFUSED}:
        operator = "all-any" if func.attr in _TWINS else "call-swap"
        twin = _TWINS.get(func.attr) or _CONFUSED[func.attr]
        yield _Edit(operator, twin, *_name_where(func), slot,
                    [ast.Call(ast.Attribute(func.value, twin, ast.Load()), node.args,
                              node.keywords)])
    first_two = node.args[:2]
    if len(first_two) == 2 and not any(isinstance(arg, ast.Starred) for arg in first_two):
        yield _Edit("args", "", *_where(node), slot,
                    [ast.Call(func, [first_two[1], first_two[0], *node.args[2:]],
                              node.keywords)])


def _constants(value: object) -> list[bool | int | float]:
    """What a slip makes of a constant: a number off by one or scaled, a bool flipped;
    nothing for a string (keys, names, messages), None or bytes."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [1 - value] if value in (0, 1) else [value + 1, value - 1]
    if isinstance(value, float):
        return [1.0] if value == 0.0 else [0.0, 2 * value]
    return []


def _method(receiver: ast.expr, method: str) -> ast.Call:
    """`receiver.method()`."""
    return ast.Call(ast.Attribute(receiver, method, ast.Load()), [], [])
