"""The facts the `backward` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them: what a nudge says about a gradient, what backward() says to a
vector, which steps cut the graph, what a second backward needs, what makes a weight not a
leaf, and what torch.autograd.grad leaves.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from functools import cache, partial

import lesson_text
import pytest
import torch

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Lesson, Quiz, Slide


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


def test_the_nudge_demo_moves_the_loss_by_about_grad_times_h() -> None:
    body = text_of("nudge")
    assert "derivatives" in body and "all the calculus it needs" in body
    assert "by about `w.grad[0] * h`" in body and "30 x 0.01, within 1% of it" in body
    demo = next(s for s in lesson().steps if s.id == "nudge")
    assert isinstance(demo, Demo) and demo.chart is None  # it shows what it prints
    assert lesson().steps[0] is demo  # first, before any other gradient
    output = io.StringIO()
    namespace: dict[str, object] = {
        "print": lambda *a, **k: print(*a, **{**k, "file": output})}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(demo.code, namespace)  # noqa: S102 - the lesson's own demo
    printed = re.fullmatch(r"(\S+) ~ (\S+) x (\S+)\n", output.getvalue())
    assert printed is not None, output.getvalue()
    change, grad, h = printed.groups()
    assert (change, grad, h) == ("0.3009", "30", "0.01")  # the numbers the body quotes
    # the printed change is within 1% of grad x h
    assert abs(float(change) - float(grad) * float(h)) <= 0.01 * float(grad) * float(h)
    # the unrounded numbers agree too, and nudging only w[0] leaves w[1]'s slope out of it
    loss, w = namespace["loss"], namespace["w"]
    assert callable(loss) and isinstance(w, torch.Tensor) and w.grad is not None
    exact = (loss(w + torch.tensor([0.01, 0.0])) - loss(w)).item()
    assert abs(exact - w.grad[0].item() * 0.01) <= 0.01 * w.grad[0].item() * 0.01
    # "a smaller h comes closer, down to about 0.001; much smaller, float32's rounding takes
    # over (at 1e-7 the loss does not move at all)", in the demo's float32
    assert ("A smaller `h` comes closer, down to about 0.001; much smaller, float32's rounding "
            "takes over (at 1e-7 the loss does not move at all).") in body
    assert w.dtype == torch.float32
    slope = w.grad[0].item()

    def gap(h: float) -> float:
        return float(abs((loss(w + torch.tensor([h, 0.0])) - loss(w)).item() / h - slope))

    assert gap(0.01) > gap(0.001) < gap(0.0001) < gap(0.00001)
    assert (loss(w + torch.tensor([1e-7, 0.0])) - loss(w)).item() == 0.0
    # in float64 a smaller h keeps coming closer: the limit is float32's, not the slope's
    w64 = w.detach().double()
    gaps = [abs((loss(w64 + torch.tensor([h, 0.0], dtype=torch.float64))
                 - loss(w64)).item() / h - slope) for h in (0.01, 0.001, 0.0001, 1e-7)]
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 1e-5


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
    # the quiz question does not reuse the slide's loss
    slide = lesson_text.step_of("backward", "graph-freed")
    assert isinstance(slide, Slide) and slide.code is not None
    assert "(w ** 2).sum()" in slide.code and "(w ** 2).sum()" not in text_of("quick-check")
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


@pytest.mark.parametrize(("forward", "saves"), [
    (lambda w: (3 * w).sum(), True), (lambda w: (w ** 2).sum(), True),
    (lambda w: (w * w).sum(), True), (lambda w: w.exp().sum(), True),
    (lambda w: w.sum(), False), (lambda w: (w + 1).mean(), False)])
def test_a_second_backward_raises_only_when_the_graph_saved_tensors(
        forward: Callable[[torch.Tensor], torch.Tensor], saves: bool) -> None:
    body = text_of("graph-freed")
    assert "if the graph saved any (most do; `w.sum()` saves none)" in body
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = forward(w)
    loss.backward()  # type: ignore[no-untyped-call]
    said = raised(loss.backward)
    assert said.startswith("Trying to backward through the graph a second time") == saves


def test_every_forward_pass_records_a_new_graph() -> None:
    body = text_of("graph-freed")
    assert "Every forward pass records a new graph" in body and "*dynamic*" in body
    assert "the usual fix is a fresh forward pass" in body
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    first, second = (w ** 2).sum(), (w ** 2).sum()
    assert first.grad_fn is not second.grad_fn  # the same code, a new graph
    first.backward()  # type: ignore[no-untyped-call]
    second.backward()  # type: ignore[no-untyped-call]  # the fresh graph is whole: no error
    assert w.grad is not None and torch.equal(w.grad, torch.tensor([4.0, 8.0]))
    # dynamic: plain Python decides, on each pass, which operations the graph holds
    for cube, name in ((True, "PowBackward0"), (False, "MulBackward0")):
        h = w ** 3 if cube else w * 3
        assert h.grad_fn is not None and type(h.grad_fn).__name__ == name


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
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "usually nothing complains": no warning either
            h = cut(w * 3)
            assert h.is_leaf and not h.requires_grad, name  # a new leaf with no history
            (h * b).sum().backward()  # type: ignore[no-untyped-call]
        assert w.grad is None and b.grad is not None, name
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        h = w * 3
    assert h.grad_fn is None and not h.requires_grad
    # with nothing left that requires grad, backward raises the slide's words
    assert ("element 0 of tensors does not require grad and does not have a grad_fn"
            in raised(lambda: (h ** 2).sum().backward()))  # type: ignore[no-untyped-call]
    assert "element 0 of tensors does not require grad and does not have a grad_fn" in body


def test_numpy_needs_detach_first() -> None:
    assert "`.detach()` (which `.numpy()` needs first)" in text_of("broken-graph")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    assert "Use tensor.detach().numpy() instead" in raised(lambda: (w * 3).numpy())
    values = (w * 3).detach().numpy()  # the detach is the cut
    b = torch.tensor(0.5, requires_grad=True)
    (torch.from_numpy(values) * b).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is None and b.grad is not None


def test_torch_tensor_of_non_leaves_at_most_warns() -> None:
    body = text_of("broken-graph")
    assert "Usually nothing complains (`torch.tensor(...)` of non-leaves at most warns)" in body
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = w.sum(), (w ** 2).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joined = torch.tensor([a, b])
    assert joined.is_leaf and not joined.requires_grad  # still cut
    # PyTorch warns once per process (an earlier test may have used it up): a fresh one
    code = ("import warnings, torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as seen:\n"
            "    warnings.simplefilter('always')\n"
            "    torch.tensor([w.sum(), (w ** 2).sum()])\n"
            "print([type(x.message).__name__ for x in seen])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "['UserWarning']"


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
    assert "Lesson 1 showed the trap" in body and "`* 0.01`" in body
    assert "`.grad` only on leaves" in body and "(reading it warns)" in body
    w = after(torch.rand(3, requires_grad=True))
    assert not w.is_leaf
    (w * 2).sum().backward()  # type: ignore[no-untyped-call]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert w.grad is None
    assert any("not a leaf Tensor" in str(warning.message) for warning in seen)
    fixed = after(torch.rand(3)).requires_grad_()
    assert fixed.is_leaf


@pytest.mark.parametrize("same", [
    lambda t: t.to("cpu"), lambda t: t.to(torch.float32), lambda t: t.float(),
    lambda t: t.to("cpu", torch.float32)])
def test_a_to_that_changes_nothing_returns_the_leaf_itself(
        same: Callable[[torch.Tensor], torch.Tensor]) -> None:
    # only "a `.to()` that really converts" makes a non-leaf (the parametrized test above)
    assert "a `.to()` that really converts" in text_of("not-a-leaf")
    assert torch.rand(3, dtype=torch.float64, requires_grad=True).double().is_leaf  # no-op too
    w = torch.rand(3, requires_grad=True)  # float32, on the CPU
    assert same(w) is w and same(w).is_leaf


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


def test_a_gradient_penalty_needs_create_graph() -> None:
    body = text_of("autograd-grad")
    assert "to log its size" in body and "that needs `create_graph=True`" in body
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    # logging: the norm is a plain value, and .grad stays untouched
    (g,) = torch.autograd.grad((w ** 2).sum(), w)
    assert g.norm().item() == pytest.approx(52 ** 0.5) and w.grad is None
    # without create_graph the gradient has no graph: a penalty on it cannot be backpropagated
    assert not g.requires_grad
    penalty = (g ** 2).sum()
    assert "does not require grad" in raised(penalty.backward)
    # with it, the penalty (g ** 2).sum() = 4 * (w ** 2).sum() backpropagates to 8 * w
    (g,) = torch.autograd.grad((w ** 2).sum(), w, create_graph=True)
    (g ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None and torch.equal(w.grad, torch.tensor([16.0, 24.0]))


def test_the_quiz_has_at_most_six_questions_each_choice_with_a_proof() -> None:
    quiz = lesson_text.step_of("backward", "quick-check")
    assert isinstance(quiz, Quiz) and len(quiz.questions) <= 6
    for question in quiz.questions:
        assert question.code, question.id
        assert all(getattr(c, "proof", None) is not None for c in question.choices), question.id


def test_the_quiz_mean_answers() -> None:
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    mean_grad = torch.autograd.grad((w ** 3).mean(), w)[0]
    torch.testing.assert_close(mean_grad, w.detach() ** 2)
    y = w ** 3
    assert raised(y.backward) == "grad can be implicitly created only for scalar outputs"
    y.backward(gradient=torch.ones(3) / 3)  # type: ignore[no-untyped-call]
    assert w.grad is not None
    torch.testing.assert_close(w.grad, mean_grad)
    w.grad = None
    (w ** 3).backward(gradient=torch.ones(3))  # type: ignore[no-untyped-call]
    torch.testing.assert_close(w.grad, 3 * mean_grad)  # the sum's: three times the mean's


def test_the_quiz_second_pass_answers() -> None:
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    loss = ((w - 1) ** 2).sum()
    loss.backward()  # type: ignore[no-untyped-call]
    assert raised(loss.backward).startswith("Trying to backward")
    w.grad = None  # clearing .grad brings no graph back
    assert raised(loss.backward).startswith("Trying to backward")
    assert raised(lambda: loss.backward(retain_graph=True)).startswith(  # type: ignore[no-untyped-call]
        "Trying to backward")
    loss = ((w - 1) ** 2).sum()  # a fresh forward pass
    loss.backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None and torch.equal(w.grad, torch.tensor([0.0, -6.0]))
