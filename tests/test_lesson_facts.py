"""The facts the `grad` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them: what a second backward does, what piled-up gradients do to the
updates, micro-batches of unequal size, which zero_grad() clears what, `.data`, and nan.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from functools import partial

import lesson_text
import pytest
import torch

from gradtutor.lessons.model import Exercise

text_of = partial(lesson_text.text_of, "grad")  # every English text of a step, joined


def backward_twice(make_loss: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Whether a second backward() on the same loss raises."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    loss = make_loss(w)
    loss.backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is untyped
    try:
        loss.backward()  # type: ignore[no-untyped-call]
    except RuntimeError:
        return True
    return False


def test_a_second_backward_raises_only_when_the_graph_saved_values() -> None:
    # lesson 2 teaches the freed graph; this lesson's predict step relies on it (choice d)
    assert backward_twice(lambda w: (w * w).sum())
    assert backward_twice(lambda w: (3 * w).sum())  # the predict step's loss, choice d
    assert "as `3 * w` does" in text_of("predict-two-backwards")
    assert not backward_twice(lambda w: w.sum())  # saves nothing: no error
    assert not backward_twice(lambda w: (w + 1).mean())
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)  # type: ignore[no-untyped-call]
    loss.backward()  # type: ignore[no-untyped-call]  # retain_graph=True first: this one works
    assert w.grad is not None and w.grad.tolist() == [4.0, -8.0]


def hidden_bug_run() -> tuple[list[float], list[float]]:
    """The hidden-bug demo's model without clearing: what .grad held at each step, and what
    that step's own batch gradient was."""
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 16).unsqueeze(1)
    y = 3 * x + 0.5
    piled, own = [], []
    for _ in range(30):
        fresh = torch.autograd.grad(((model(x) - y) ** 2).mean(), model.weight)[0]
        ((model(x) - y) ** 2).mean().backward()
        assert model.weight.grad is not None
        piled.append(model.weight.grad.item())
        own.append(fresh.item())
        optimizer.step()
    return piled, own


def test_piled_up_gradients_keep_pushing_where_earlier_batches_pointed() -> None:
    text = text_of("hidden-bug")
    assert "keep growing" not in text.split("Below")[0]  # the old claim, true of the toy only
    assert "keeps pushing where earlier batches pointed" in text
    piled, own = hidden_bug_run()
    # the update goes against what the current batch asks for, on several steps
    against = [i for i, (p, o) in enumerate(zip(piled, own, strict=True)) if p * o < 0]
    assert len(against) >= 3
    # and it swings: the piled-up gradient changes sign more than once, not a steady growth
    flips = sum(1 for a, b in zip(piled, piled[1:], strict=False) if a * b < 0)
    assert flips >= 2
    assert max(abs(g) for g in piled) > 2 * max(abs(g) for g in own)


def test_unequal_micro_batches_need_a_sum_over_all_rows() -> None:
    assert 'reduction="sum"' in text_of("accumulate-micro-batches")
    torch.manual_seed(0)
    x, y = torch.randn(5, 2), torch.randn(5)
    w_all = torch.tensor([1.0, -1.0], requires_grad=True)
    ((x @ w_all - y) ** 2).mean().backward()  # type: ignore[no-untyped-call]
    parts = [(x[:3], y[:3]), (x[3:], y[3:])]  # 3 rows, then 2

    def accumulated(loss_of: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        w = torch.tensor([1.0, -1.0], requires_grad=True)
        for xb, yb in parts:
            loss_of((xb @ w - yb) ** 2).backward()  # type: ignore[no-untyped-call]
        assert w.grad is not None
        return w.grad

    by_count = accumulated(lambda sq: sq.mean() / len(parts))
    by_rows = accumulated(lambda sq: sq.sum() / len(x))
    assert w_all.grad is not None
    assert not torch.allclose(by_count, w_all.grad)  # dividing means by their count: wrong
    assert torch.allclose(by_rows, w_all.grad)  # sum over rows / total rows: exact


def test_the_generators_loss_fills_the_discriminators_grad() -> None:
    text = text_of("zero-grad-scope")
    assert ("the generator's loss passes through the discriminator and fills the "
            "discriminator's `.grad`") in text
    torch.manual_seed(0)
    generator, discriminator = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    g_optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
    g_optimizer.zero_grad()
    discriminator(generator(torch.randn(4, 2))).mean().backward()  # the generator's loss
    g_optimizer.zero_grad()  # clears G only
    assert discriminator.weight.grad is not None  # D's .grad was filled and is still there
    # the discriminator's own step, with the fake batch detached as usual, leaves G alone
    generator.zero_grad()
    discriminator(generator(torch.randn(4, 2)).detach()).mean().backward()
    assert generator.weight.grad is None


def test_dot_data_lets_a_change_autograd_should_refuse_go_unnoticed() -> None:
    assert "`.data` skips autograd's checks" in text_of("no-optimizer")

    def grad_after_change(change: Callable[[torch.Tensor], object]) -> torch.Tensor:
        w = torch.tensor([2.0, 3.0], requires_grad=True)
        loss = (w * w).sum()  # saves w for the way back
        change(w)
        loss.backward()  # type: ignore[no-untyped-call]
        assert w.grad is not None
        return w.grad

    def with_no_grad(w: torch.Tensor) -> None:
        with torch.no_grad():
            w -= 1.0

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        grad_after_change(with_no_grad)  # autograd notices, and refuses

    def with_data(w: torch.Tensor) -> None:
        w.data -= 1.0

    silent = grad_after_change(with_data)  # no error at all...
    assert silent.tolist() == [2.0, 4.0]  # ...and not the gradient 2 * w = [4, 6]


def test_nan_compares_as_the_lesson_says() -> None:
    text = text_of("grad-health")
    assert "`nan > x`, `nan < x` and `nan == x` are all False" in text
    nan = math.nan
    assert not (nan > 1.0) and not (nan < 1.0)
    assert not (nan == nan)  # noqa: PLR0124, SIM201
    assert nan != nan  # noqa: PLR0124 - which is why the lesson does not say "every comparison"
    norm = torch.tensor([1.0, nan]).norm()
    assert not bool(norm > 10.0)  # a norm test alone misses nan
    assert not bool(torch.isfinite(norm))


def test_the_zero_grad_docs_describe_what_the_lesson_says_they_do() -> None:
    assert "skip-versus-zero-step difference" in text_of("momentum-demo")
    doc = " ".join((torch.optim.Optimizer.zero_grad.__doc__ or "").split())
    assert "skips the step altogether" in doc
    assert "momentum" not in doc.lower()  # so the lesson does not credit the docs with it


def test_a_nudge_moves_the_loss_by_about_slope_times_nudge() -> None:
    assert "moves the loss by about slope × nudge" in text_of("grad-attribute")
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    nudged = torch.tensor([2.0 + 1e-3, 3.0])
    change = ((nudged ** 2).sum() - (w.detach() ** 2).sum()).item()
    assert change == pytest.approx(w.grad[0].item() * 1e-3, rel=1e-2)


def test_grad_is_none_until_a_backward_reaches_it_and_inputs_keep_none() -> None:
    text = text_of("start-as-none")
    assert "fails with an `AttributeError`" in text and "input data's `.grad` stays `None`" in text
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(AttributeError):
        w.grad.sum()  # type: ignore[union-attr]
    x = torch.tensor([1.0, 2.0])  # input data: does not require grad
    (w * x).sum().backward()  # type: ignore[no-untyped-call]
    assert x.grad is None and w.grad is not None


def test_a_second_loss_adds_the_gradient_of_the_total() -> None:
    assert "the gradient of the two losses' total" in text_of("several-losses")
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    (3 * w).sum().backward()  # type: ignore[no-untyped-call]
    total = torch.tensor([1.0, -2.0], requires_grad=True)
    ((total ** 2).sum() + (3 * total).sum()).backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None and total.grad is not None
    assert torch.equal(w.grad, total.grad)


def test_divided_micro_batches_give_the_whole_batch_gradient() -> None:
    text = text_of("why-accumulation")
    assert "the gradient of the whole batch's loss, `((w * x) ** 2).mean()`" in text
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    w = torch.tensor(0.5, requires_grad=True)
    ((w * x) ** 2).mean().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None and w.grad.item() == 7.5  # the slide's micro-batches print 7.5


def test_sgd_subtracts_lr_times_grad_and_never_clears_it() -> None:
    text = text_of("optimizer-step")
    assert "`w -= lr * w.grad`" in text and "it never clears it" in text
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1)
    (5 * w).sum().backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    assert w.tolist() == pytest.approx([0.5, 1.5])
    assert w.grad is not None and w.grad.tolist() == [5.0, 5.0]


def test_clearing_first_frees_the_old_gradients_before_the_forward_pass() -> None:
    assert ("Clearing first, as most code does, also frees the old gradients' memory"
            in text_of("right-order"))
    assert "lets the old gradient be freed" in text_of("set-to-none")
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(1, 2)).sum().backward()
    assert model.weight.grad is not None
    old = weakref.ref(model.weight.grad)
    optimizer.zero_grad()  # the default, set_to_none=True
    assert old() is None  # nothing holds the old gradient any more: its memory is free
    model(torch.ones(1, 2)).sum().backward()
    assert model.weight.grad is not None
    kept = weakref.ref(model.weight.grad)
    optimizer.zero_grad(set_to_none=False)
    assert kept() is model.weight.grad  # zeros, in the same tensor: the memory stays taken
    assert model.weight.grad is not None and not model.weight.grad.any()


def test_a_kept_loss_tensor_is_a_tensor_whose_saved_values_are_gone() -> None:
    exercise = lesson_text.step_of("grad", "fix-the-loop")
    assert isinstance(exercise, Exercise)
    mutant = next(m for m in exercise.mutants if m.id == "keeps-loss-tensors")
    assert "backward() has already freed what each graph saved" in mutant.mistake
    assert "every batch's graph alive" not in mutant.mistake
    w = torch.randn(512, 1000, requires_grad=True)
    loss = (w ** 2).mean()
    assert loss.grad_fn is not None
    square = loss.grad_fn.next_functions[0][0]  # PowBackward0: it saved w, 512 x 1000
    assert square is not None
    assert square._saved_self.shape == (512, 1000)  # type: ignore[attr-defined]  # held before backward
    loss.backward()  # type: ignore[no-untyped-call]
    assert isinstance(loss, torch.Tensor) and loss.grad_fn is not None  # history attached
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        square._saved_self  # type: ignore[attr-defined]  # noqa: B018  # ...but it is gone


def test_the_quiz_keys_hold_on_torch() -> None:
    """The quick check's keys, run: two paths sum; an unused head's .grad after zero_grad() and
    backward; an alias after zero_grad(set_to_none=False) and with the default."""
    b = torch.tensor(3.0, requires_grad=True)
    (b * 4 + b ** 2).backward()  # type: ignore[no-untyped-call]
    assert b.grad is not None and b.grad.item() == 10.0
    shared, head_a, head_b = (torch.ones(2, requires_grad=True) for _ in range(3))
    optimizer = torch.optim.SGD([shared, head_a, head_b], lr=0.1)
    ((shared * head_a).sum() + (shared * head_b).sum()).backward()  # type: ignore[no-untyped-call]
    optimizer.zero_grad()
    (shared * head_a).sum().backward()  # type: ignore[no-untyped-call]
    assert head_b.grad is None
    for set_to_none, expected in ((False, [5.0]), (True, [2.0])):
        w = torch.tensor([1.0], requires_grad=True)
        optimizer = torch.optim.SGD([w], lr=0.1)
        (2 * w).sum().backward()  # type: ignore[no-untyped-call]
        g = w.grad
        optimizer.zero_grad(set_to_none=set_to_none)
        (5 * w).sum().backward()  # type: ignore[no-untyped-call]
        assert g is not None and g.tolist() == expected
        assert (g is w.grad) is not set_to_none


def said(step: str) -> str:
    """A step's English text, its line breaks folded, for a sentence to be found in it."""
    return " ".join(text_of(step).split())


def test_clipping_tames_a_huge_gradient_but_cannot_mend_inf_or_nan() -> None:
    assert "lesson 4's clipping tames them (`inf` or `nan` it cannot mend" in said("debug-grads")
    for bad, expected in ((1e6, [0.0, 1.0, 0.0]), (math.inf, None), (math.nan, None)):
        w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (w * torch.tensor([1.0, bad, 100.0])).sum().backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
        assert w.grad is not None
        if expected is None:  # the nan spreads, or the finite entries are zeroed
            assert not bool(torch.isfinite(w.grad).all())
        else:
            assert w.grad.tolist() == pytest.approx(expected, abs=1e-3)


def test_a_dead_relu_layer_passes_no_gradient_back_and_zeroes_the_next_weight() -> None:
    assert "no gradient flows back through them to that layer's weight and bias" in said(
        "dead-relu")
    torch.manual_seed(0)
    first, last = torch.nn.Linear(2, 4), torch.nn.Linear(4, 1)
    with torch.no_grad():
        first.bias.fill_(-100.0)  # every ReLU outputs 0
    hidden = torch.relu(first(torch.randn(8, 2)))
    hidden.retain_grad()
    ((last(hidden) - 1) ** 2).mean().backward()
    for grad in (first.weight.grad, first.bias.grad, last.weight.grad):
        assert grad is not None and not bool(grad.any())
    assert hidden.grad is not None and bool(hidden.grad.any())  # the ReLUs' outputs get one
    assert last.bias.grad is not None and bool(last.bias.grad.any())  # the last bias learns


def test_only_create_graph_makes_backward_write_a_new_grad_tensor() -> None:
    assert "Only `backward(create_graph=True)`" in said("grad-in-place")
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    g = w.grad
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert g is w.grad
    with pytest.warns(UserWarning, match="reference cycle"):  # PyTorch's own caution
        (w ** 2).sum().backward(create_graph=True)  # type: ignore[no-untyped-call]
    assert g is not w.grad and g is not None and g.tolist() == [8.0, 12.0]


def test_weight_decay_moves_a_weight_whose_gradient_is_zero() -> None:
    assert "or weight decay, a zero step can still move the weight" in said("momentum-demo")
    w = torch.tensor([1.0], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1, weight_decay=0.1)
    w.grad = torch.zeros(1)
    optimizer.step()
    assert w.item() == pytest.approx(0.99)


def test_a_parameter_that_does_not_require_grad_keeps_a_none_gradient() -> None:
    assert "or the parameter has `requires_grad=False`" in said("none-grad-clue")
    model = torch.nn.Linear(2, 1)
    model.bias.requires_grad_(False)
    model(torch.ones(1, 2)).sum().backward()
    assert model.bias.grad is None and model.weight.grad is not None


def test_an_in_place_update_of_a_leaf_is_refused_while_recording() -> None:
    assert ("PyTorch refuses an in-place change to a leaf that requires grad while it records"
            in said("no-optimizer"))
    w = torch.tensor([2.0, 3.0], requires_grad=True)
    (w ** 2).sum().backward()  # type: ignore[no-untyped-call]
    assert w.grad is not None
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w -= 0.1 * w.grad
    with torch.no_grad():
        w -= 0.1 * w.grad
    assert w.tolist() == pytest.approx([1.6, 2.4])


def test_the_ordering_step_comes_before_the_page_that_states_the_order() -> None:
    """The ordering step tests understanding: no page just before it lists its lines (the
    page that states the order follows it), and that page's claim, "clearing may come
    anywhere before backward()", is what the ordering step's grader accepts."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course
    from gradtutor.lessons.model import Parsons
    from gradtutor.lessons.parsons import is_correct

    steps = load_course(rules=EXERCISE_RULES).find("grad").steps
    at = next(i for i, step in enumerate(steps) if step.id == "order-the-loop")
    ordering = steps[at]
    assert isinstance(ordering, Parsons)
    before = steps[at - 1]
    shown = f"{getattr(before, 'body', '')} {getattr(before, 'code', '') or ''}"
    assert sum(line.code in shown for line in ordering.lines) <= 1, before.id
    assert steps[at + 1].id == "right-order"
    assert "Clearing may come anywhere before `backward()`, the step after it." in text_of(
        "right-order")
    body = ("forward", "loss", "backward", "step")
    for place in range(4):  # zero_grad before forward, loss, backward: each passes
        order = (*body[:place], "zero", *body[place:])
        assert is_correct(ordering, order) is (place < 3), order


def test_the_core_says_what_a_model_its_parameters_and_a_loss_are_before_using_them() -> None:
    """Lesson 3's core runs `model(x)`, `model.parameters()`, `named_parameters` and
    `loss_fn`: the pages that say what they are come before the first core step using them."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    core = [step for step in load_course(rules=EXERCISE_RULES).find("grad").steps
            if not getattr(step, "optional", False)]

    def first_use(name: str) -> int:
        return next(i for i, step in enumerate(core)
                    if name in text_of(step.id) or name in (getattr(step, "code", "") or "")
                    or any(name in line.code for line in getattr(step, "lines", ()))
                    or name in (getattr(step, "starter", "") or ""))

    glossed = [step.id for step in core].index("model-parameters")
    for name in ("model(x)", "model.parameters()", "named_parameters", "nn.Linear"):
        assert first_use(name) == glossed, name
    assert first_use("loss_fn") == glossed + 1 and core[glossed + 1].id == "optimizer-step"
    assert ("`loss = loss_fn(model(x), y)`, where `loss_fn` is, say, `nn.MSELoss()`, the mean "
            "squared difference") in text_of("optimizer-step")
    assert ("`nn.Linear(3, 4)` is one layer, `x @ weight.T + bias`, `nn.Sequential` chains "
            "layers, and `model(x)` runs them on a batch `x`") in text_of("model-parameters")
    assert "*parameters*: leaf tensors with `requires_grad=True`" in text_of("model-parameters")
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 4)
    x = torch.randn(5, 3)
    torch.testing.assert_close(layer(x), x @ layer.weight.T + layer.bias)
    model = torch.nn.Sequential(layer, torch.nn.ReLU(), torch.nn.Linear(4, 1))
    torch.testing.assert_close(model(x), model[2](model[1](layer(x))))
    assert all(p.is_leaf and p.requires_grad for p in model.parameters())
    pred, y = torch.tensor([1.0, 3.0]), torch.tensor([0.0, 1.0])
    assert torch.nn.MSELoss()(pred, y).item() == ((pred - y) ** 2).mean().item() == 2.5
