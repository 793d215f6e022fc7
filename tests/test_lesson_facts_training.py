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
from gradtutor.lessons.model import Demo, Exercise, Lesson, Rule, Slide, Step
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


def test_the_core_path_takes_five_to_twelve_minutes() -> None:
    assert 5 <= duration(lesson()).core <= 12


def test_the_core_path_teaches_the_whole_loop_and_ends_with_a_recap() -> None:
    core = [step.id for step in lesson().steps if not getattr(step, "optional", False)]
    for step_id in ("loss-functions", "optimizer-step", "whole-loop", "train-eval",
                    "clipping", "clip-and-step", "training-check", "recap"):
        assert step_id in core
    assert core[-1] == "recap"
    # the loop ends with the learner's own: one core exercise, a whole clipped training step
    exercises = [s.id for s in lesson().steps if isinstance(s, Exercise) and s.id in core]
    assert exercises == ["clip-and-step"]
    assert "one whole training step" in text_of("clip-and-step")
    # the optimizer page points back to lesson 3 instead of teaching SGD again
    assert text_of("optimizer-step").startswith("Lesson 3 showed SGD's step, `p -= lr * grad`.")


def test_a_frozen_parameter_is_skipped_by_momentum_and_weight_decay() -> None:
    assert "the optimizer skips them (weight decay and momentum leave them alone too)" in \
        text_of("freezing")
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


def test_a_grad_left_from_before_freezing_is_still_applied() -> None:
    """"a `.grad` that was `None` stays `None`... Clear first: a `.grad` left from before
    freezing would still be applied" (the slide and the exercise's why)."""
    assert "a `.grad` that was `None` stays `None`" in text_of("freezing")
    assert "Clear first: a `.grad` left from before freezing would still be applied" in \
        text_of("freezing")
    assert "left from before freezing would still be applied: clear it first" in \
        text_of("freeze-layer")
    torch.manual_seed(0)
    first = nn.Linear(2, 3)  # model[0]
    model = nn.Sequential(first, nn.ReLU(), nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 2)
    model(x).pow(2).mean().backward()  # layer 0 now holds a .grad
    first.requires_grad_(False)  # frozen without clearing first
    stale = grad_of(first.weight).clone()
    frozen = first.weight.detach().clone()
    model(x).pow(2).mean().backward()
    assert torch.equal(grad_of(first.weight), stale)  # backward left it as it was
    optimizer.step()
    assert not torch.equal(first.weight, frozen)  # and the step applied it
    # cleared first, the frozen layer stays put
    optimizer.zero_grad()
    moved = first.weight.detach().clone()
    model(x).pow(2).mean().backward()
    optimizer.step()
    assert first.weight.grad is None and torch.equal(first.weight, moved)


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
    text = text_of("loss-functions")
    assert "It applies log-softmax itself, then `nn.NLLLoss`" in text
    assert "(minus the right class's log-probability, averaged)" in text
    torch.manual_seed(0)
    logits = torch.randn(4, 3, requires_grad=True)
    labels = torch.tensor([0, 2, 1, 2])
    loss = nn.CrossEntropyLoss()(logits, labels)
    assert torch.allclose(loss, nn.NLLLoss()(torch.log_softmax(logits, dim=1), labels))
    log_probability = torch.log_softmax(logits, dim=1)[range(4), labels]
    assert torch.allclose(loss, -log_probability.mean())
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
    assert momentum[0] < momentum[1] < momentum[2]  # steps grow: the same gradient keeps coming
    assert "steps grow while the same gradient keeps coming" in " ".join(text.split())
    assert "**Momentum** (`momentum=0.9`) multiplies a buffer by 0.9, adds the new gradient" in text
    assert "gradients of 1000, 1 or 0.001 give the same first step, `lr`" in text
    assert ("Steps stay near `lr` per entry or below (less if the sign flips); only after a "
            "long run of tiny gradients can a spike reach about 3 `lr`") in " ".join(text.split())
    # Adam's step does not scale with the gradient's size: the same first steps
    for grad in (-1e-3, -1.0, -1e3):
        assert steps(lambda p: torch.optim.Adam(p, lr=0.1), grad=grad) == pytest.approx(
            [0.1, 0.1, 0.1], rel=1e-3)


def adam_moves(grads: list[float], lr: float) -> list[float]:
    """How far Adam moves a weight at each step, given these gradients one after another."""
    w = torch.tensor([0.0], requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    moves = []
    for grad in grads:
        optimizer.zero_grad()
        (grad * w).sum().backward()  # type: ignore[no-untyped-call]
        before = w.item()
        optimizer.step()
        moves.append(abs(w.item() - before))
    return moves


def test_adams_steps_stay_near_lr_smaller_when_the_sign_changes_and_3_lr_after_a_spike() -> None:
    lr = 0.1
    # a gradient that flips its sign every step: every step after the first is far below lr
    moves = adam_moves([1.0 if i % 2 == 0 else -1.0 for i in range(20)], lr)
    assert moves[0] == pytest.approx(lr, rel=1e-3)
    assert all(move < 0.5 * lr for move in moves[1:])
    # "near lr": 100 steady steps, then a gradient 100 times bigger, moves ~1.06 lr
    assert lr < adam_moves([1.0] * 100 + [100.0], lr)[-1] < 1.1 * lr
    # "a spike after tiny gradients can reach about 3 lr": 1000 zero gradients, then 1
    assert 2 * lr < adam_moves([0.0] * 1000 + [1.0], lr)[-1] < 3.2 * lr
    # "only after a long run": after 10 tiny gradients the spike moves under lr, after 5000
    # about 3 lr (Adam's bias correction holds it back early on)
    assert adam_moves([1e-6] * 10 + [1.0], lr)[-1] < 0.5 * lr
    assert 3 * lr < adam_moves([1e-6] * 5000 + [1.0], lr)[-1] < 3.2 * lr


def test_adams_first_step_is_lr_unless_the_gradient_is_tiny() -> None:
    assert "whatever the gradient's size (unless it is below about 1e-8)" in " ".join(
        text_of("predict-adam-step").split())
    assert steps(lambda p: torch.optim.Adam(p, lr=0.1), grad=-1e-3)[0] == pytest.approx(0.1,
                                                                                       rel=1e-3)
    assert steps(lambda p: torch.optim.Adam(p, lr=0.1), grad=-1e-9)[0] < 0.02


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
    assert "two independent switches. `model.eval()` turns dropout off and makes batch norm " \
        "use its running averages. It does not stop recording: lesson 1's `torch.no_grad()` " \
        "does" in text
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
    assert "with 0.18 the steps overshoot: after the first step, the loss climbs" in text_of(
        "learning-rate-demo")
    namespace: dict[str, Any] = {}
    exec(step_as(lesson(), "learning-rate-demo", Demo).code, namespace)
    small, good, high = namespace["lr_small"], namespace["lr_good"], namespace["lr_too_high"]
    assert small[0] == good[0] == high[0]  # the same start
    assert all(b < a for a, b in pairwise(small)) and small[-1] > 0.01 * small[0]  # slowly
    assert good[5] < 0.01 * good[0]  # "nears zero within a few steps"
    assert high[1] < high[0]  # the first step still lowers the loss
    assert all(b > a for a, b in pairwise(high[1:]))  # after it, the loss climbs
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


def test_the_whole_loop_learns_and_the_data_loader_reshuffles_every_epoch() -> None:
    text = text_of("whole-loop")
    assert "with `shuffle=True` in a new random order each epoch" in text
    assert "`.to(device)` moves the model and each batch to the same device" in text
    code = step_as(lesson(), "whole-loop", Slide).code
    assert code is not None
    torch.manual_seed(0)
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    model, x = namespace["model"], namespace["x"]
    with torch.no_grad():  # "learns to add"
        assert nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).item() < 1e-4
    # "4 batches, shuffled": four batches of 16, in a new order each epoch
    loader = namespace["loader"]
    orders = [torch.cat([xb for xb, _ in loader]) for _ in range(2)]
    assert len(list(loader)) == 4 and all(len(xb) == 16 for xb, _ in loader)
    assert not torch.equal(orders[0], orders[1])
    assert torch.equal(orders[0].sort(dim=0).values, x.sort(dim=0).values)  # the same data


def test_a_model_and_a_batch_on_different_devices_do_not_mix() -> None:
    """"`.to(device)` moves the model and every batch to the same device": a model moved
    alone no longer takes the batch (the meta device stands in for a GPU)."""
    model = nn.Linear(2, 1).to("meta")
    assert model.weight.device.type == "meta"
    with pytest.raises((RuntimeError, NotImplementedError)):
        model(torch.ones(3, 2))
    assert model(torch.ones(3, 2).to("meta")).device.type == "meta"


def test_a_working_loop_overfits_one_small_batch_and_a_broken_one_does_not() -> None:
    text = text_of("loss-curves")
    assert "Before a long run, train on one small batch alone: if its loss does not fall near " \
        "zero, most likely the loop has a bug" in text

    def final_loss(targets_flat: bool, weight_decay: float = 0.0) -> tuple[float, float]:
        """The loss after training on one batch, and its targets' variance."""
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=weight_decay)
        xb, yb = torch.randn(8, 2), torch.randn(8, 1)
        target = yb.view(-1) if targets_flat else yb  # (8,) against outputs shaped (8, 1)
        for _ in range(1000):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(xb), target)
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
        return loss.item(), yb.var(unbiased=False).item()

    assert final_loss(targets_flat=False)[0] < 0.01
    # a classic bug: the shapes broadcast to (8, 8), every output is compared with every
    # target, and the loss cannot fall below the targets' variance
    with pytest.warns(UserWarning, match="target size"):
        loss, floor = final_loss(targets_flat=True)
    assert loss >= floor - 1e-4 and floor > 0.1
    # "most likely": a correct loop whose optimizer decays the weights hard stops short too
    assert final_loss(targets_flat=False, weight_decay=1.0)[0] > 0.1


def test_a_validation_loss_can_rise_while_the_training_loss_falls() -> None:
    """"if it rises while the training loss falls, the model is overfitting": a big model on
    16 noisy examples."""
    assert "Plot the validation loss too: if it rises while the training loss falls, the " \
        "model is overfitting, memorising its training data" in text_of("loss-curves")
    torch.manual_seed(0)
    def data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.rand(n, 1) * 4 - 2
        return x, torch.sin(x) + 0.3 * torch.randn(n, 1)
    (x, y), (xv, yv) = data(16), data(200)
    model = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    train, valid = [], []
    for _ in range(800):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        train.append(loss.item())
        with torch.no_grad():
            valid.append(nn.functional.mse_loss(model(xv), yv).item())
    best = min(range(len(valid)), key=valid.__getitem__)
    assert valid[-1] > 1.5 * valid[best]  # the validation loss rose again ...
    assert train[-1] < 0.5 * train[best]  # ... while the training loss kept falling


def test_the_clip_question_is_what_clip_grad_norm_does() -> None:
    model = nn.Linear(2, 1)
    model.weight.grad = torch.tensor([[6.0, 0.0]])
    model.bias.grad = torch.tensor([8.0])
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
    assert total.item() == pytest.approx(10.0)  # before clipping, returned
    assert grad_of(model.bias).item() == pytest.approx(1.6)  # one factor 2 / 10, not 2
    assert grad_of(model.weight)[0].tolist() == pytest.approx([1.2, 0.0])
    # every entry within [-max_norm, max_norm]: |entry| <= the total norm, always
    torch.manual_seed(0)
    big = nn.Sequential(nn.Linear(3, 50), nn.ReLU(), nn.Linear(50, 4))
    big(torch.randn(7, 3) * 100).pow(2).sum().backward()
    assert nn.utils.clip_grad_norm_(big.parameters(), max_norm=1.0) > 1.0
    assert max(grad_of(p).abs().max().item() for p in big.parameters()) <= 1.0


def test_every_quiz_proof_agrees_with_its_key() -> None:
    """Each quiz choice's proof, run after its question's code, holds exactly when the choice
    is keyed true (read from the YAML, as `validate` does once it runs quiz proofs)."""
    import yaml

    from gradtutor.lessons.course import default_lessons_dir

    raw = yaml.safe_load((default_lessons_dir() / "training.yaml").read_text(encoding="utf-8"))
    (quiz,) = [step for step in raw["steps"] if step["kind"] == "quiz"]
    assert len(quiz["questions"]) <= 6
    proven = 0
    for question in quiz["questions"]:
        key = question["answer"]
        keyed = {key} if isinstance(key, str) else set(key)
        for letter, choice in zip("abcdefgh", question["choices"], strict=False):
            proof = choice.get("proof")
            if question.get("code"):
                assert proof is not None, (question["id"], letter)
            if proof is None:
                continue
            namespace: dict[str, Any] = {}
            exec(question.get("code") or "", namespace)
            exec(proof.get("code") or "", namespace)
            holds = bool(eval(proof["holds"], namespace))
            assert holds == (letter in keyed), (question["id"], letter)
            proven += 1
    assert proven == 4  # one question, a proof for each of its four choices


