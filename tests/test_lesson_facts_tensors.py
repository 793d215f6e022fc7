"""The facts the `tensors` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them, the quiz's explanations and the words of the exercises' checks.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import warnings
import weakref
from functools import partial

import lesson_text
import pytest
import torch
from narrowing import step_as
from torch.autograd.graph import Node

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Predict, Step


def lesson() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("tensors")


def step_of(step_id: str) -> Step:
    return next(s for s in lesson().steps if s.id == step_id)


def first_next(node: Node | None) -> Node:
    """The first node `node` leads to: the graph goes on from there (a node, not None)."""
    assert node is not None
    follows = node.next_functions[0][0]
    assert follows is not None, node.name()
    return follows


text_of = partial(lesson_text.text_of, "tensors")  # every English text of a step, joined


def test_the_course_opens_with_this_lesson() -> None:
    lessons = load_course(rules=EXERCISE_RULES).lessons
    assert lessons[0].id == "tensors" and lessons[0].order == 1
    assert load_course(rules=EXERCISE_RULES).find("grad").order == 3


def test_dtype_comes_from_the_numbers() -> None:
    assert "whole numbers give `int64`, decimals `float32`" in text_of("tensor-basics")
    assert torch.tensor([1, 2, 3]).dtype == torch.int64
    assert torch.tensor([1.5, 2.0]).dtype == torch.float32
    assert torch.tensor([1, 2.5]).dtype == torch.float32  # one decimal is enough
    assert torch.get_default_dtype() == torch.float32  # "PyTorch's default" (make-weights)


def test_only_floating_point_tensors_can_require_grad() -> None:
    assert "Only floating-point (and complex) tensors can require grad" in text_of("requires-grad")
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2], requires_grad=True)
    assert torch.tensor([1, 2], dtype=torch.float32, requires_grad=True).requires_grad
    assert torch.tensor([1j], requires_grad=True).requires_grad


def test_the_core_names_the_record_a_graph_before_any_core_step_says_graph() -> None:
    """Lesson 1's core uses "graph" (`.item()`, `.detach()`, the quiz): its first core use is
    where the word is defined, on the page that says PyTorch records."""
    core = [step for step in lesson().steps if not getattr(step, "optional", False)]
    first = next(step for step in core if "graph" in text_of(step.id))
    assert first.id == "requires-grad"
    assert "it records every operation on it, in a *graph*" in " ".join(
        text_of("requires-grad").split())
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2 + 1  # each node points back at the nodes of its inputs, down to w: a graph
    mul = h.grad_fn.next_functions[0][0]  # type: ignore[union-attr]
    assert mul.next_functions[0][0].variable is w  # type: ignore[union-attr]


def test_backward_follows_the_record_and_stores_each_weights_gradient() -> None:
    """The one sentence of payoff: lesson 2's backward() puts the gradient on the weight."""
    assert ("`backward()` follows that record back and stores each weight's gradient in its "
            "`.grad`") in text_of("requires-grad")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    assert w.grad is None
    (w * 3).sum().backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is untyped
    assert w.grad is not None and w.grad.tolist() == [3.0, 3.0]


def test_non_leaves_require_grad_and_only_leaves_keep_gradients() -> None:
    text = text_of("leaves")
    assert "is a **non-leaf**: it requires grad too" in text
    assert "Gradients are kept only on leaves" in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    assert h.requires_grad and not h.is_leaf
    (h ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns
        assert h.grad is None
    assert "`torch.randn(3, requires_grad=True) * 0.01` is a non-leaf" in text
    trap = torch.randn(3, requires_grad=True) * 0.01
    assert not trap.is_leaf and trap.grad_fn is not None


def test_every_tensor_that_does_not_require_grad_is_a_leaf_even_a_computed_one() -> None:
    assert ("A tensor you create is a *leaf*, and so is every tensor that does not require "
            "grad, even a computed one.") in text_of("leaves")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0])
    with torch.no_grad():
        under_no_grad = w * 2
    for computed in (x * 2, torch.zeros(3) + 1, w.detach() * 2, under_no_grad):
        assert not computed.requires_grad and computed.is_leaf and computed.grad_fn is None


def test_a_real_conversion_makes_a_non_leaf_and_a_to_that_changes_nothing_returns_w() -> None:
    text = text_of("leaves")
    assert "`w.to(torch.float64)` is a non-leaf" in text
    assert "a `.to()` that changes neither dtype nor device returns `w` itself" in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    converted = w.to(torch.float64)
    assert not converted.is_leaf and converted.grad_fn is not None
    assert converted.grad_fn.name() == "ToCopyBackward0"
    assert w.double().is_leaf is False
    assert w.to(torch.float32) is w and w.to("cpu") is w and w.to(w.device, w.dtype) is w
    # a copy that keeps dtype and device is an operation too: only a no-op .to() returns w
    assert w.to(torch.float32, copy=True) is not w
    assert not w.to(torch.float32, copy=True).is_leaf


def test_the_graph_leads_back_to_a_node_that_holds_the_leaf() -> None:
    assert "an `AccumulateGrad` node holding the leaf" in text_of("grad-fn")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2 + 1
    mul = first_next(h.grad_fn)
    accumulate = first_next(mul)
    assert type(accumulate).__name__ == "AccumulateGrad"
    # torch types every graph node as Node, which leaves out what each kind of node holds
    assert accumulate.variable is w  # type: ignore[attr-defined]
    # "where backward() will add the leaf's gradient"
    h.sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None and w.grad.tolist() == [2.0, 2.0]


def test_no_grad_leaves_w_tracked_and_recording_resumes() -> None:
    text = text_of("no-grad")
    assert "`w` still requires grad" in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        y = w * 2
        assert w.requires_grad  # the quiz: no_grad does not change w
    assert y.grad_fn is None and not y.requires_grad
    assert (w * 2).grad_fn is not None  # recording resumed after the block


def test_a_bare_no_grad_switches_nothing_off_and_set_grad_enabled_lasts() -> None:
    help_text = next(c.help for c in step_as(lesson(), "no-grad-predict", Exercise).checks
                     if c.id == "no-record")
    assert help_text is not None
    # a context manager switches recording off only for the lines inside its block: a bare
    # torch.no_grad() on a line of its own switches nothing off
    assert "only for the lines inside its block" in help_text
    w = torch.tensor([1.0], requires_grad=True)
    torch.no_grad()
    assert (3 * w).requires_grad
    assert "lasts until something switches it back" in text_of("no-grad-predict")
    try:
        torch.set_grad_enabled(False)
        assert not (3 * w).requires_grad
        assert not torch.is_grad_enabled()  # still off, later on
    finally:
        torch.set_grad_enabled(True)


def test_item_gives_a_plain_python_number_of_the_tensors_kind() -> None:
    assert ("a plain Python number (a `float` from a float tensor, an `int` from an int one)"
            in text_of("item"))
    assert type(torch.tensor(2.5).item()) is float
    assert type(torch.tensor([1.0, 2.0]).sum().item()) is float
    assert type(torch.tensor(3).item()) is int
    assert type(torch.tensor([4, 0, 7]).sum().item()) is int


def test_item_gives_a_python_float_and_a_tensor_total_holds_every_loss() -> None:
    assert "`total` is a non-leaf whose graph holds every loss added in" in text_of("item")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    losses = [((w - k) ** 2).mean() for k in range(3)]
    assert all(type(loss.item()) is float for loss in losses)
    total: float | torch.Tensor = 0.0
    for loss in losses:
        total += loss
    assert isinstance(total, torch.Tensor)  # a float plus a tensor is a tensor
    reachable: set[Node] = set()
    todo = [total.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in reachable:
            reachable.add(node)
            todo += [n for n, _ in node.next_functions]
    assert all(loss.grad_fn in reachable for loss in losses)


def test_a_total_keeps_its_graphs_in_memory_only_while_the_caller_keeps_it() -> None:
    """log-losses: "if the caller keeps the totals, say in a list for a plot, every step's
    graphs stay in memory"; a total the caller drops frees its graph."""
    assert ("if the caller keeps the totals, say in a list for a plot, every step's graphs "
            "stay in memory") in text_of("log-losses")
    w = torch.tensor([1.0, 2.0], requires_grad=True)

    def one_step(kept: list[torch.Tensor] | None) -> bool:
        """A total of one step; whether a tensor its graph saved is still alive after."""
        diff = w - 1.0
        saved = weakref.ref(diff)  # (diff ** 2) saves diff for backward
        total = 0.0 + ((diff ** 2).mean())
        del diff
        if kept is not None:
            kept.append(total)
        del total
        gc.collect()
        return saved() is not None

    assert one_step(None) is False  # printed and dropped: the graph is freed
    plot: list[torch.Tensor] = []
    assert all(one_step(plot) for _ in range(3))  # kept in a list: every graph stays


def test_detach_shares_memory_and_clone_copies() -> None:
    text = text_of("detach")
    assert "no `grad_fn`, no `requires_grad`" in text and "shares `t`'s memory" in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    d, snap = w.detach(), w.detach().clone()
    assert d.grad_fn is None and not d.requires_grad
    with torch.no_grad():
        w += 10  # a change to w shows in d too: "to one shows in the other"
    assert d.tolist() == [11.0, 12.0] and snap.tolist() == [1.0, 2.0]
    # the quiz: a detached tensor is a leaf that does not require grad
    assert d.is_leaf


def test_torch_tensor_of_results_copies_their_numbers_and_warns() -> None:
    text = text_of("new-leaf")
    assert ("Given non-leaves, as in `torch.tensor([a, b])`, it reads their numbers as "
            "`.item()` would (PyTorch warns, once a run)") in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = w.sum(), (w ** 2).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copied = torch.tensor([a, b])
        tracked = torch.tensor([a, b], requires_grad=True)
    assert copied.tolist() == [a.item(), b.item()]
    assert copied.is_leaf and copied.grad_fn is None and not copied.requires_grad
    # "requires_grad=True ... starts a record of its own": backward stops at the new leaf
    assert tracked.is_leaf
    tracked.sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is None and tracked.grad is not None
    # PyTorch warns once per process, so the warning is looked for in a fresh one
    code = ("import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "torch.tensor([w.sum(), (w ** 2).sum()])\n")
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode != 0 and "requires_grad=True to a scalar" in done.stderr
    # "once a run": a second such call in the same process says nothing
    twice = code + ("import warnings\nwith warnings.catch_warnings(record=True) as seen:\n"
                    "    warnings.simplefilter('always')\n"
                    "    torch.tensor([w.sum(), (w ** 2).sum()])\nprint(len(seen))\n")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", twice], capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.strip() == "0"


def test_stack_keeps_the_graph_and_cat_cannot_join_one_number_tensors() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = w.sum(), (w ** 2).sum()
    stacked = torch.stack([a, b])
    assert stacked.grad_fn is not None and stacked.grad_fn.name() == "StackBackward0"
    stacked.sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    assert "cannot join one-number tensors" in text_of("stack-losses")
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        torch.cat([a, b])


def test_the_quiz_which_run_choices_are_what_torch_says() -> None:
    counts = torch.tensor([4, 0, 7])
    assert counts.dtype == torch.int64
    made = counts.float().requires_grad_()  # a: runs
    assert made.dtype == torch.float32 and made.requires_grad and made.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):  # b: raises before .float()
        torch.tensor([4, 0, 7], requires_grad=True).float()
    one_decimal = torch.tensor([4.0, 0, 7], requires_grad=True)  # c: "one decimal is enough"
    assert one_decimal.dtype == torch.float32
    with pytest.raises(RuntimeError, match="3 elements cannot be converted"):  # d
        torch.tensor([4, 0, 7]).item()


def test_the_quiz_leaf_choices_are_what_torch_says() -> None:
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    assert [t.is_leaf for t in (x * 2, w.clone(), w[0], w.to("cpu"))] == [True, False, False,
                                                                          True]
    clone, picked = w.clone().grad_fn, w[0].grad_fn
    assert clone is not None and clone.name() == "CloneBackward0"  # "recorded like any other"
    assert picked is not None and picked.name() == "SelectBackward0"  # "indexing is an operation"
    assert w.to("cpu") is w  # "returns `w` itself"


def test_the_quiz_loss_history_choices_are_what_torch_says() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = ((w - 3) ** 2).mean()
    assert type(loss.item()) is float
    assert loss.detach().grad_fn is None and loss.detach().is_leaf
    clone = loss.clone()
    assert clone.grad_fn is not None and first_next(clone.grad_fn) is loss.grad_fn


def test_the_demo_shows_a_graph_that_grows_and_a_float_that_holds_none() -> None:
    demo = step_of("running-total-demo")
    assert isinstance(demo, Demo)
    assert "The tensor total's graph grows with every step; the float holds none." in (
        " ".join(demo.body.split()))
    namespace: dict[str, object] = {}
    exec(demo.code, namespace)
    grows, flat = namespace["tensor_total"], namespace["float_total"]
    assert isinstance(grows, list) and isinstance(flat, list) and len(grows) == 20
    assert all(later > earlier for earlier, later in zip(grows, grows[1:], strict=False))
    assert flat == [0] * 20


def test_the_predict_step_shows_its_answers_text() -> None:
    step = step_of("predict-result-prints")
    assert isinstance(step, Predict)
    namespace: dict[str, object] = {}
    exec(step.code, namespace)
    answer = step.choices[ord(step.answer) - ord("a")].text
    assert str(eval(step.show, namespace)) == answer  # noqa: S307 - the lesson's own code


def test_only_a_float_tensor_computed_while_recording_is_a_non_leaf() -> None:
    assert ("A float tensor computed from one that requires grad, while PyTorch records, is a "
            "**non-leaf**: it requires grad too, and its `grad_fn` names the operation that made "
            "it.") in " ".join(text_of("leaves").split())
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    assert not (w * 2).is_leaf and (w * 2).requires_grad
    grad_fn = (w * 2).grad_fn
    assert grad_fn is not None and grad_fn.name() == "MulBackward0"
    for computed in (w.argmax(), w > 0, w.long()):  # not float: no gradient, so a leaf
        assert computed.is_leaf and not computed.requires_grad
    with torch.no_grad():
        assert (w * 2).is_leaf
