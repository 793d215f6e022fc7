"""The facts the `grad` lesson states in words, each run against torch.

The code samples prove their own `# -> ` claims (test_lesson_samples.py); these tests prove
the sentences around them: what a second backward does, what piled-up gradients do to the
updates, micro-batches of unequal size, which zero_grad() clears what, `.data`, and nan.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import lesson_text
import pytest
import torch

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
    assert "if it saved any" in text_of("grad-accumulates")
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
    assert 'reduction="sum"' in text_of("why-accumulation")
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


def test_the_discriminators_backward_fills_the_generators_grad() -> None:
    assert "GAN" in text_of("zero-grad-scope")
    torch.manual_seed(0)
    generator, discriminator = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    d_optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)
    d_optimizer.zero_grad()
    discriminator(generator(torch.randn(4, 2))).mean().backward()  # the discriminator's loss
    d_optimizer.zero_grad()  # clears D only
    assert generator.weight.grad is not None  # G's .grad was filled and is still there


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
    assert "skip-versus-zero-step difference" in text_of("set-to-none")
    doc = " ".join((torch.optim.Optimizer.zero_grad.__doc__ or "").split())
    assert "skips the step altogether" in doc
    assert "momentum" not in doc.lower()  # so the lesson does not credit the docs with it
