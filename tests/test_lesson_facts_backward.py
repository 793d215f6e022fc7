"""The facts the `backward` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them: what backward() says to a vector, which steps cut the graph, what
a second backward needs, what makes a weight not a leaf, and what torch.autograd.grad leaves.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache, partial

import lesson_text
import pytest
import torch

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Lesson


@cache
def lesson() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("backward")


text_of = partial(lesson_text.text_of, "backward")  # every English text of a step, joined


def raised(action: Callable[[], object]) -> str:
    """The message of the RuntimeError `action` raises ('' when it raises none)."""
    try:
        action()
    except RuntimeError as exc:
        return str(exc)
    return ""


def test_the_chain_rule_by_hand_is_what_backward_computes() -> None:
    assert "outer slope" in text_of("chain-rule") and "inner" in text_of("chain-rule")
    torch.manual_seed(0)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    x, y = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    pred = w * x
    # torch's Tensor.backward is untyped: each call below tells mypy so
    ((pred - y) ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    torch.testing.assert_close(w.grad, (2 * (pred - y) * x).detach())


def test_backward_on_a_vector_wants_a_gradient_of_its_shape() -> None:
    assert "raises an error" in text_of("one-number")
    assert "`(gradient * y).sum()`" in text_of("one-number")
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w ** 2
    assert raised(y.backward) == "grad can be implicitly created only for scalar outputs"
    # a single 1 is not of y's shape (the quiz's choice d, the exercise's mutant)
    assert "Mismatch in shape" in raised(
        lambda: y.backward(gradient=torch.tensor(1.0)))  # type: ignore[no-untyped-call]
    # the failed calls freed nothing: backward with gradient= still works on y
    v = torch.tensor([0.5, -1.0, 2.0])
    y.backward(gradient=v)  # type: ignore[no-untyped-call]
    expected = torch.autograd.grad((v * w ** 2).sum(), w)[0]
    assert w.grad is not None
    torch.testing.assert_close(w.grad, expected)
    # ones are the sum: what errors.sum().backward() passes for you (backward-a-vector's why)
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (a ** 2).backward(gradient=torch.ones(3))  # type: ignore[no-untyped-call]
    (b ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert a.grad is not None and b.grad is not None
    assert torch.equal(a.grad, b.grad)
    # a mean counts each entry 1/n times (the mean-instead mutant)
    c = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    (c ** 2).mean().backward()  # type: ignore[no-untyped-call]
    assert c.grad is not None
    torch.testing.assert_close(c.grad, 2 * c.detach() / 4)


def test_a_second_backward_needs_retain_graph_on_the_earlier_call() -> None:
    assert "retain_graph=True` to the *earlier* call" in text_of("graph-freed")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w ** 2).sum()
    loss.backward()  # type: ignore[no-untyped-call]
    said = raised(loss.backward)
    assert said.startswith("Trying to backward through the graph a second time")
    # retain_graph=True on the second call only is too late (quiz choice c)
    loss = (w ** 2).sum()
    loss.backward()  # type: ignore[no-untyped-call]
    said = raised(lambda: loss.backward(retain_graph=True))  # type: ignore[no-untyped-call]
    assert said.startswith("Trying to backward")
    # a fresh forward pass is a fresh graph (quiz choice d)
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    # `w ** 2` keeps w: its saved tensor is w itself, used for the slope 2 * w
    square = w ** 2
    assert square.grad_fn is not None
    # torch types every graph node as Node, which leaves out what each kind of node saves
    assert square.grad_fn._saved_self is w  # type: ignore[attr-defined]


def test_steps_that_cut_the_graph_leave_none() -> None:
    body = text_of("broken-graph")
    for named in (".detach()", ".item()", ".tolist()", "torch.tensor(...)", "torch.no_grad()"):
        assert f"`{named}`" in body
    cuts: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "detach": lambda h: h.detach(),
        "item": lambda h: torch.tensor(h.sum().item()),
        "tolist": lambda h: torch.tensor(h.tolist()),
        "new tensor": lambda h: torch.tensor(h.detach().numpy()),
    }
    for name, cut in cuts.items():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor(0.5, requires_grad=True)
        h = cut(w * 3)
        assert h.is_leaf and not h.requires_grad, name  # a new leaf with no history
        (h * b).sum().backward()  # type: ignore[no-untyped-call]  # nothing complains
        assert w.grad is None and b.grad is not None, name
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        h = w * 3
    assert h.grad_fn is None and not h.requires_grad
    # with nothing left that requires grad, backward raises the slide's words
    assert ("element 0 of tensors does not require grad and does not have a grad_fn"
            in raised(lambda: (h ** 2).sum().backward()))  # type: ignore[no-untyped-call]
    assert "element 0 of tensors does not require grad and does not have a grad_fn" in body


def test_the_predict_step_loss_still_requires_grad_through_b() -> None:
    assert "requires grad through `b`" in text_of("predict-detached")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    loss = ((w * 3).detach() * b).sum()
    assert loss.requires_grad
    loss.backward()  # type: ignore[no-untyped-call]
    assert w.grad is None
    assert b.grad is not None and b.grad.item() == 9.0


def test_the_quiz_broken_graph_answers() -> None:
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    c = torch.tensor(a.item() * 2)
    (c * b + b.detach() * a).backward()  # type: ignore[no-untyped-call]
    assert a.grad is not None and a.grad.item() == 3.0
    assert b.grad is not None and b.grad.item() == 4.0
    assert c.is_leaf and not c.requires_grad and c.grad is None


def test_the_demo_cut_by_item_never_moves_w() -> None:
    namespace: dict[str, object] = {}
    demo = next(s for s in lesson().steps if s.id == "broken-graph-demo")
    assert isinstance(demo, Demo)
    exec(demo.code, namespace)  # noqa: S102 - the lesson's own demo
    intact, cut = namespace["intact_graph"], namespace["cut_by_item"]
    assert isinstance(intact, list) and isinstance(cut, list)
    assert intact[-1] < 0.05 and cut[-1] > 3  # "stops far above the other run's"
    assert cut[-1] < cut[0]  # b still learns
    # inside: w.grad stays None, and the optimizer skips w, which stays at its start
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=0.1)
    x = torch.linspace(-1, 1, 16)
    for _ in range(3):
        opt.zero_grad()
        ((w.item() * x + b - (3 * x + 0.5)) ** 2).mean().backward()  # type: ignore[no-untyped-call]
        opt.step()
    assert w.grad is None and w.item() == 0.0 and b.item() != 0.0


@pytest.mark.parametrize("after", [
    lambda t: t.double(), lambda t: t.to(torch.float64), lambda t: t * 0.01])
def test_a_step_after_requires_grad_makes_a_non_leaf(
        after: Callable[[torch.Tensor], torch.Tensor]) -> None:
    body = text_of("not-a-leaf")
    assert "`.to()`" in body and "`* 0.01`" in body and ".double()" in body
    w = after(torch.rand(3, requires_grad=True))
    assert not w.is_leaf
    (w * 2).sum().backward()  # type: ignore[no-untyped-call]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert w.grad is None
    assert any("not a leaf Tensor" in str(warning.message) for warning in seen)
    assert "with a warning" in body
    fixed = after(torch.rand(3)).requires_grad_()
    assert fixed.is_leaf


def test_retain_grad_must_come_before_backward() -> None:
    assert "Calling it after `backward()` is too late" in text_of("retain-grad")
    w = torch.tensor(2.0, requires_grad=True)
    x, y = torch.tensor(3.0), torch.tensor(1.0)
    pred = w * x
    loss = (pred - y) ** 2
    loss.backward()  # type: ignore[no-untyped-call]
    pred.retain_grad()  # too late: the gradient passed through pred and is gone
    assert pred.grad is None
    # and in time, w.grad is pred.grad times x (the slide, and keep-intermediate's why)
    pred = w * x
    pred.retain_grad()
    w.grad = None
    ((pred - y) ** 2).backward()  # type: ignore[no-untyped-call]
    assert pred.grad is not None and w.grad is not None
    assert w.grad.item() == pred.grad.item() * x.item()


def test_autograd_grad_returns_a_tuple_and_leaves_grad_alone() -> None:
    body = text_of("autograd-grad")
    assert "as a tuple" in body and "does not touch `.grad`" in body
    assert "frees the graph just as `backward()` does" in body
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    got = torch.autograd.grad((w ** 2).sum() * b, [w, b])
    assert isinstance(got, tuple) and len(got) == 2
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    before = w.grad.clone() if w.grad is not None else None
    loss = (w ** 2).sum()
    torch.autograd.grad(loss, w)
    assert w.grad is not None and before is not None and torch.equal(w.grad, before)
    assert raised(loss.backward).startswith("Trying to backward through the graph")
