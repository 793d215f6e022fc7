"""The first-order mutants of a reference solution: each is the solution with one small change
a learner would make, inside a function body only, compiling, unlike the solution and every
other mutant, and the same list every time."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mutation import OPERATORS, Mutation, mutants
from gradtutor.lessons.course import load_course

TRAIN = '''\
import torch

LIMIT = 3
NAMES = ("a", "b")


def train(model, optimizer, loss_fn, batches, lr=0.5):
    """Train once over the batches."""
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


class Probe:
    scale = 2

    def dead(self, grad, limit):
        if grad is None or (grad == 0).all():
            return True
        elif grad.norm() < limit and not torch.isfinite(grad).all():
            return False
        with torch.no_grad():
            total = 0.0
            total += grad.sum().item() * self.scale
        return total / 2
'''

# exercises whose solution has too few sites for five mutants (a line or two, string keys left
# alone): their counts are pinned, so that a change to either shows
SMALL_SOLUTIONS = {"snapshot": 3, "clear-grads": 2, "save-checkpoint": 4}


def code(text: str) -> str:
    """Source as `mutants` writes it: parsed and unparsed."""
    return ast.unparse(ast.parse(textwrap.dedent(text)))


def by_source(source: str) -> dict[str, Mutation]:
    return {mutation.source: mutation for mutation in mutants(textwrap.dedent(source))}


Path = tuple[str | int, ...]


def same(a: object, b: object) -> bool:
    """Equal as code: positions (lineno, ...) aside."""
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        return ast.dump(a) == ast.dump(b)
    return type(a) is type(b) and a == b


def differences(a: ast.AST, b: ast.AST, path: Path = ()) -> list[Path]:
    """Where two trees differ, each as the path to the smallest differing part: a node of
    another type or one replaced by a part of itself, a value, a list of another length, or
    two neighbours of a list exchanged (the path ending with "exchanged" and an index)."""
    if type(a) is not type(b):
        return [path]
    found = _field_differences(a, b, path)
    if len(found) > 1 and any(same(part, b) for part in ast.walk(a) if part is not a):
        return [path]  # replaced by a part of itself: an `if` by its `elif`, one site
    return found


def _field_differences(a: ast.AST, b: ast.AST, path: Path) -> list[Path]:
    found: list[Path] = []
    for field, value in ast.iter_fields(a):
        other = getattr(b, field)
        here = (*path, f"{type(a).__name__}.{field}")
        if not isinstance(value, list):
            if isinstance(value, ast.AST):
                found += differences(value, other, here)
            elif not same(value, other):
                found.append(here)
            continue
        if len(value) != len(other):
            found.append(here)
            continue
        changed = [index for index, (item, other_item) in enumerate(zip(value, other, strict=True))
                   if not same(item, other_item)]
        if (len(changed) == 2 and changed[1] == changed[0] + 1
                and same(value[changed[0]], other[changed[1]])
                and same(value[changed[1]], other[changed[0]])):
            found.append((*here, "exchanged", changed[0]))
            continue
        for index in changed:
            if isinstance(value[index], ast.AST):
                found += differences(value[index], other[index], (*here, index))
            else:
                found.append((*here, index))
    return found


def assert_one_site(original: str, mutation: Mutation) -> None:
    """The mutant differs from the original at one place inside a function body: one part
    changed, or two neighbours exchanged by the operators that exchange (statements, args)."""
    found = differences(ast.parse(original), ast.parse(mutation.source))
    assert len(found) == 1, (mutation.id, found)
    (site,) = found
    assert ("exchanged" in site) == (mutation.operator in ("swap", "args")), (mutation.id, site)
    assert "FunctionDef.body" in site, (mutation.id, site)


def outside_bodies(source: str) -> str:
    """The module with every function's body emptied: its imports, constants, classes'
    own statements and the functions' signatures, as code."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Pass()]
    return ast.dump(tree)


def test_all_becomes_any_with_a_one_line_description() -> None:
    found = by_source("def dead(grad):\n    return (grad == 0).all()\n")
    mutation = found[code("def dead(grad):\n    return (grad == 0).any()\n")]
    assert mutation.operator == "all-any"
    assert mutation.line == 2
    assert mutation.description == "line 2: `(grad == 0).all()` -> `(grad == 0).any()`"
    assert code("def dead(grad):\n    return (grad != 0).all()\n") in found
    assert code("def dead(grad):\n    return all(grad == 0)\n") not in found


def test_a_comparison_becomes_its_slips_each_with_its_own_id() -> None:
    found = by_source("def small(a, b):\n    return a < b\n")
    lte = found[code("def small(a, b):\n    return a <= b\n")]
    gt = found[code("def small(a, b):\n    return a > b\n")]
    assert (lte.operator, gt.operator) == ("compare", "compare")
    assert lte.id == "compare@2:16:<=" and gt.id == "compare@2:16:>"
    assert code("def small(a, b):\n    return a >= b\n") not in found


def test_in_a_chained_comparison_each_operator_slips_alone() -> None:
    source = "def inside(x, lo, hi):\n    return lo < x <= hi\n"
    found = mutants(source)
    sources = {mutation.source for mutation in found}
    for slip in ("lo <= x <= hi", "lo > x <= hi", "lo < x < hi", "lo < x >= hi"):
        assert code(source.replace("lo < x <= hi", slip)) in sources, slip
    for mutation in found:
        assert_one_site(source, mutation)


def test_a_mutant_like_the_source_or_like_an_earlier_one_is_left_out() -> None:
    source = "def f(x, y):\n    y = g(x, x)\n    y = g(x, x)\n    return not not y\n"
    found = mutants(source)
    sources = [mutation.source for mutation in found]
    assert code(source) not in sources  # the two same lines swapped, or g's arguments
    assert sources.count(code(source.replace("not not y", "not y"))) == 1
    assert len(set(sources)) == len(sources)
    assert not any(mutation.operator in ("swap", "args") for mutation in found)


def test_a_nested_function_is_mutated_inside_but_never_dropped_or_moved() -> None:
    source = ("def outer(x):\n    def helper(y):\n        return y * 2\n    z = helper(x)\n"
              "    return z\n")
    found = by_source(source)
    assert found[code(source.replace("y * 2", "y / 2"))].operator == "arith"
    for text in found:
        tree = ast.parse(text).body[0]
        assert isinstance(tree, ast.FunctionDef)
        assert isinstance(tree.body[0], ast.FunctionDef), text


def test_zero_grad_and_step_are_swapped_in_order_and_in_name() -> None:
    source = "def update(optimizer):\n    optimizer.zero_grad()\n    optimizer.step()\n"
    found = by_source(source)
    swapped = found[code(source.replace("zero_grad()\n    optimizer.step",
                                        "step()\n    optimizer.zero_grad"))]
    assert swapped.operator == "swap"
    assert swapped.description == ("line 2: `optimizer.zero_grad(); optimizer.step()` -> "
                                   "`optimizer.step(); optimizer.zero_grad()`")
    renamed = found[code(source.replace("zero_grad", "step"))]
    assert (renamed.operator, renamed.id) == ("call-swap", "call-swap@2:15")
    in_loop = by_source(TRAIN)[code(TRAIN.replace(
        "loss.backward()\n        optimizer.step()", "optimizer.step()\n        loss.backward()"))]
    assert in_loop.operator == "swap"


def test_dropping_backward_is_a_mutant_but_the_last_return_is_never_dropped() -> None:
    found = by_source(TRAIN)
    dropped = found[code(TRAIN.replace("loss.backward()", "pass"))]
    assert dropped.operator == "drop"
    assert dropped.description == "line 13: `loss.backward()` -> `pass`"
    assert code(TRAIN.replace("return losses", "pass")) not in found
    assert found[code(TRAIN.replace("return losses", "return None"))].operator == "return"


def test_a_with_header_is_dropped_with_its_body_kept() -> None:
    without = TRAIN.replace("        with torch.no_grad():\n", "").replace(
        "            total", "        total")
    assert by_source(TRAIN)[code(without)].operator == "drop"


def test_an_if_is_replaced_by_each_of_its_branches() -> None:
    source = "def sign(x):\n    if x > 0:\n        y = 1\n    else:\n        y = -1\n    return y\n"
    found = by_source(source)
    for kept in ("y = 1", "y = -1"):
        mutation = found[code(f"def sign(x):\n    {kept}\n    return y\n")]
        assert mutation.operator == "branch"
    negated = found[code(source.replace("if x > 0", "if not x > 0"))]
    assert negated.operator == "negate"


def test_accumulations_overwrite_or_subtract_and_arithmetic_flips() -> None:
    source = "def total(xs):\n    t = 0\n    for x in xs:\n        t += x * 2\n    return t\n"
    found = by_source(source)
    for slip in ("t = x * 2", "t -= x * 2", "t += x / 2", "t += x * 3", "t += x * 1"):
        assert code(source.replace("t += x * 2", slip)) in found, slip
    assert found[code(source.replace("t = 0", "t = 1"))].operator == "constant"


def test_detach_and_item_are_inserted_where_a_gradient_is_read_or_a_name_returned() -> None:
    source = ("import torch\n\n\ndef grads(w, loss):\n    (g,) = torch.autograd.grad(loss, w)\n"
              "    before = w.grad\n    return g\n")
    found = by_source(source)
    assert found[code(source.replace("= w.grad", "= w.grad.detach()"))].operator == "detach"
    assert found[code(source.replace("return g", "return g.detach()"))].operator == "detach"
    assert found[code(source.replace("return g", "return g.item()"))].operator == "item"
    assert found[code(source.replace("grad(loss, w)", "grad(w, loss)"))].operator == "args"
    assert not any("autograd.grad.detach()" in text for text in found)


def test_constants_change_by_kind_and_strings_are_left_alone() -> None:
    source = "def f(x):\n    d = {'key': 0.5}\n    return g(x, 3, flag=True)\n"
    found = by_source(source)
    for old, new in (("0.5", "0.0"), ("0.5", "1.0"), ("3", "4"), ("3", "2"),
                     ("True", "False")):
        mutation = found[code(source.replace(old, new))]
        assert mutation.operator == "constant", (old, new)
    assert not any("'key'" not in text for text in found if "d = {" in text)


def test_nothing_outside_a_function_body_is_mutated() -> None:
    found = mutants(TRAIN)
    assert found
    for mutation in found:
        assert outside_bodies(mutation.source) == outside_bodies(TRAIN), mutation.id
    assert mutants("import torch\nLIMIT = 3 < 4\nNAMES = [x for x in 'ab' if not x]\n") == []


def test_every_mutant_changes_one_site_compiles_and_is_new() -> None:
    found = mutants(TRAIN)
    assert len(found) > 40
    sources = [mutation.source for mutation in found]
    assert code(TRAIN) not in sources and len(set(sources)) == len(sources)
    for mutation in found:
        compile(mutation.source, mutation.id, "exec")
        assert_one_site(TRAIN, mutation)
        assert mutation.operator in OPERATORS
        assert mutation.id.startswith(f"{mutation.operator}@{mutation.line}:")
        assert re.fullmatch(r"line \d+: `[^\n]{1,60}` -> `[^\n]{1,60}`", mutation.description)
    assert {mutation.operator for mutation in found} == set(OPERATORS)


def test_ids_are_unique_and_the_list_is_ordered_and_the_same_every_time() -> None:
    found = mutants(TRAIN)
    ids = [mutation.id for mutation in found]
    assert len(set(ids)) == len(ids)
    assert [mutation.line for mutation in found] == sorted(mutation.line for mutation in found)
    assert mutants(TRAIN) == found
    commented = mutants("# a comment moves every line down\n" + TRAIN)
    assert [mutation.source for mutation in commented] == [mutation.source for mutation in found]
    assert [mutation.line for mutation in commented] == [mutation.line + 1 for mutation in found]


def test_a_source_that_does_not_parse_is_refused() -> None:
    with pytest.raises(SyntaxError):
        mutants("def f(:\n")


def test_every_exercise_of_the_course_has_mutants_that_compile_and_change_one_site() -> None:
    exercises = load_course(None, rules=EXERCISE_RULES).exercises()
    assert set(SMALL_SOLUTIONS) <= set(exercises)
    for exercise_id, exercise in exercises.items():
        found = mutants(exercise.solution)
        if exercise_id in SMALL_SOLUTIONS:
            assert len(found) == SMALL_SOLUTIONS[exercise_id], exercise_id
        else:
            assert len(found) >= 5, exercise_id
        assert code(exercise.solution) not in {mutation.source for mutation in found}
        for mutation in found:
            compile(mutation.source, mutation.id, "exec")
            assert_one_site(exercise.solution, mutation)
            tree = ast.parse(mutation.source)
            assert any(isinstance(node, ast.FunctionDef) and node.name == exercise.function
                       for node in tree.body), (exercise_id, mutation.id)
