"""The facts the `training` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them: what freezing does to an optimizer with momentum and weight decay,
what CrossEntropyLoss does with logits, how far SGD, momentum and Adam step, what
clip_grad_norm_ measures and returns, what train() and eval() switch, what the learning-rate
demo shows, and what a state_dict holds and torch.load refuses.
"""

from __future__ import annotations

import io
import math
import pickle
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from typing import Any

import lesson_text
import pytest
import torch
from narrowing import step_as
from torch import nn

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Rule, Step
from gradtutor.lessons.timing import duration


def lesson() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("training")


def step_of(step_id: str) -> Step:
    return next(step for step in lesson().steps if step.id == step_id)


def said(rule: Rule) -> str:
    """What a check's rule says (this one says something)."""
    assert rule.say is not None, rule
    return rule.say


def grad_of(tensor: torch.Tensor) -> torch.Tensor:
    """The gradient a backward pass left on `tensor` (one did)."""
    assert tensor.grad is not None
    return tensor.grad


text_of = partial(lesson_text.text_of, "training")  # every English text of a step, joined


def test_the_core_path_takes_five_to_ten_minutes() -> None:
    assert 5 <= duration(lesson()).core <= 10


def test_a_frozen_parameter_is_skipped_by_momentum_and_weight_decay() -> None:
    assert "weight decay and momentum leave it alone" in text_of("freezing")
    torch.manual_seed(0)
    first = nn.Linear(2, 3)  # model[0]
    model = nn.Sequential(first, nn.ReLU(), nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    x = torch.randn(4, 2)
    model(x).pow(2).mean().backward()
    optimizer.step()  # layer 0 now has a momentum buffer
    model[0].requires_grad_(False)
    frozen = first.weight.detach().clone()
    for _ in range(3):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    assert first.weight.grad is None and torch.equal(first.weight, frozen)
    # a zero gradient, unlike None, is not skipped: weight decay and momentum move it
    first.weight.grad = torch.zeros_like(first.weight)
    optimizer.step()
    assert not torch.equal(first.weight, frozen)


def test_a_requires_grad_attribute_on_a_module_freezes_nothing() -> None:
    exercise = step_as(lesson(), "freeze-layer", Exercise)
    assert "a module has no such switch" in said(exercise.checks[0].fail[0])
    layer = nn.Linear(2, 2)
    layer.requires_grad = False  # type: ignore[assignment]
    assert all(p.requires_grad for p in layer.parameters())
    layer(torch.ones(1, 2)).sum().backward()
    assert layer.weight.grad is not None


def test_eval_mode_does_not_freeze() -> None:
    assert "eval() changes how dropout and batch norm behave" in text_of("freeze-layer") + \
        said(step_as(lesson(), "freeze-layer", Exercise).checks[0].fail[1])
    layer = nn.Linear(2, 2).eval()
    layer(torch.ones(1, 2)).sum().backward()
    assert layer.weight.grad is not None


def test_cross_entropy_takes_logits_and_softmax_first_gives_other_gradients() -> None:
    assert "It applies softmax itself" in text_of("loss-functions")
    torch.manual_seed(0)
    logits = torch.randn(4, 3, requires_grad=True)
    labels = torch.tensor([0, 2, 1, 2])
    loss = nn.CrossEntropyLoss()(logits, labels)
    assert torch.allclose(loss, nn.NLLLoss()(torch.log_softmax(logits, dim=1), labels))
    (right,) = torch.autograd.grad(loss, logits)
    twice = nn.CrossEntropyLoss()(logits.softmax(dim=1), labels)
    (wrong,) = torch.autograd.grad(twice, logits)
    assert not torch.allclose(loss, twice) and not torch.allclose(right, wrong)
    # "flattens the scores": probabilities in [0, 1] as logits spread less than the logits
    assert wrong.abs().max() < right.abs().max()
    # argmax keeps no gradient (a quiz choice)
    assert not logits.argmax(dim=1).requires_grad


def steps(make: Callable[[list[torch.Tensor]], torch.optim.Optimizer], grad: float,
          count: int = 3) -> list[float]:
    """How far each of `count` steps moves w, with the same gradient every time."""
    w = torch.tensor([0.0], requires_grad=True)
    optimizer = make([w])
    moves = []
    for _ in range(count):
        optimizer.zero_grad()
        # torch's Tensor.backward is untyped: each call below tells mypy so
        (grad * w).sum().backward()  # type: ignore[no-untyped-call]
        before = w.item()
        optimizer.step()
        moves.append(w.item() - before)
    return moves


def test_sgd_momentum_and_adam_step_as_the_lesson_says() -> None:
    text = text_of("optimizer-step")
    assert "`p -= lr * grad`" in text and "`buf = 0.9 * buf + grad`" in text
    sgd = steps(lambda p: torch.optim.SGD(p, lr=0.1), grad=-2)
    assert sgd == pytest.approx([0.2, 0.2, 0.2])
    momentum = steps(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), grad=-2)
    buf, expected = 0.0, []
    for _ in range(3):
        buf = 0.9 * buf + -2
        expected.append(-0.1 * buf)
    assert momentum == pytest.approx(expected)
    assert momentum[0] < momentum[1] < momentum[2]  # "steps grow while the gradient keeps its sign"
    # Adam: "about lr per entry, whatever the gradient's size"
    for grad in (-1e-3, -2.0, -1e3):
        assert steps(lambda p: torch.optim.Adam(p, lr=0.1), grad=grad) == pytest.approx(
            [0.1, 0.1, 0.1], rel=1e-3)


def test_the_adam_predicts_wrong_choices_are_what_they_say() -> None:
    assert "1 - 0.1 * 1000" in text_of("predict-adam-step")
    w = torch.tensor([1.0], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1)
    (1000 * w).sum().backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    assert round(w.item(), 4) == -99.0  # choice a: SGD's step
    assert w.grad is not None and w.grad.item() == 1000  # step() only reads .grad (quiz)


def test_clip_grad_norm_measures_one_total_norm_and_scales_by_one_factor() -> None:
    text = text_of("clipping")
    assert "the 2-norm of all the gradients taken as one vector" in text
    assert "returns the total measured *before* clipping" in text
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model(torch.randn(5, 3) * 10).pow(2).sum().backward()
    before = [grad_of(p).clone() for p in model.parameters()]
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    assert math.isclose(total.item(), torch.cat([g.flatten() for g in before]).norm().item(),
                        rel_tol=1e-5)
    assert total.item() > 1.0
    after = [grad_of(p) for p in model.parameters()]
    ratios = {round((a.norm() / b.norm()).item(), 5) for a, b in zip(after, before, strict=True)}
    assert len(ratios) == 1  # one factor for every gradient: the direction stays
    assert math.isclose(torch.cat([g.flatten() for g in after]).norm().item(), 1.0,
                        rel_tol=1e-4)
    # below max_norm nothing changes, and the norm is still returned
    again = nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
    assert math.isclose(again.item(), 1.0, rel_tol=1e-4)
    # clip_grad_value_ (a quiz choice) bounds entries instead, one by one
    w = torch.tensor([3.0, 0.5], requires_grad=True)
    w.grad = torch.tensor([3.0, 0.5])
    nn.utils.clip_grad_value_([w], 1.0)
    assert grad_of(w).tolist() == [1.0, 0.5]


def test_train_and_eval_switch_dropout_and_batch_norm_and_not_gradients() -> None:
    text = text_of("train-eval")
    assert "batch norm normalises with each batch's statistics, updating its running" in text
    torch.manual_seed(0)
    linear, norm = nn.Linear(3, 4), nn.BatchNorm1d(4)  # model[0], model[1]
    model = nn.Sequential(linear, norm, nn.Dropout(0.5))
    x = torch.randn(8, 3)
    # tracking running statistics (the default), batch norm has them from the start
    assert norm.running_mean is not None and norm.running_var is not None
    start = norm.running_mean.clone()
    with torch.no_grad():
        model(x)  # training mode, even under no_grad: the averages move
    assert not torch.equal(norm.running_mean, start)
    model.eval()
    assert not any(m.training for m in model.modules())  # every submodule
    moved = norm.running_mean.clone()
    out = model(x)
    assert torch.equal(norm.running_mean, moved)
    assert out.requires_grad  # eval() does not switch gradients off
    expected = (linear(x) - moved) / torch.sqrt(norm.running_var + norm.eps)
    assert torch.allclose(out, expected * norm.weight + norm.bias)  # the averages, no dropout
    model.train()
    assert all(m.training for m in model.modules())


def test_the_learning_rate_demo_shows_what_its_text_says() -> None:
    assert "with 0.18 every step overshoots and the loss climbs" in text_of(
        "learning-rate-demo")
    namespace: dict[str, Any] = {}
    exec(step_as(lesson(), "learning-rate-demo", Demo).code, namespace)
    small, good, high = namespace["lr_small"], namespace["lr_good"], namespace["lr_too_high"]
    assert small[0] == good[0] == high[0]  # the same start
    assert all(b < a for a, b in pairwise(small)) and small[-1] > 0.01 * small[0]  # slowly
    assert good[5] < 0.01 * good[0]  # "nears zero within a few steps"
    assert all(b > a for a, b in pairwise(high[1:]))  # climbs
    # higher still and for longer, the loss becomes inf, then nan, as the quiz says
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)
    x = torch.randn(32, 2) * 2
    y = x @ torch.tensor([[1.5], [-2.0]]) + 0.5
    losses = []
    for _ in range(120):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        losses.append(loss.item())
    first_inf = next(i for i, v in enumerate(losses) if math.isinf(v))
    assert any(math.isnan(v) for v in losses[first_inf:])


def test_a_state_dict_holds_buffers_and_the_optimizer_its_state() -> None:
    assert "each buffer's (such as batch norm's running averages)" in text_of("state-dict")
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert {"1.running_mean", "1.running_var"} <= set(model.state_dict())
    w = torch.tensor([1.0], requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    (2 * w).sum().backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    assert list(optimizer.state_dict()["state"][0]) == ["momentum_buffer"]


def test_torch_load_refuses_objects_by_default() -> None:
    assert "(`weights_only=True`)" in text_of("save-and-load")
    f = io.BytesIO()
    torch.save(nn.Linear(2, 1), f)
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(f)


def test_every_exercise_has_a_ladder_mutants_and_a_why() -> None:
    from gradtutor.lessons.model import Exercise

    exercises = [step for step in lesson().steps if isinstance(step, Exercise)]
    assert len(exercises) >= 4
    for step in exercises:
        assert len(step.hints) >= 3 and len(step.mutants) >= 4 and step.why
        assert step.inputs is not None  # declared on a family, no Python of its own
