"""The doctor's `accumulation-scale` rule (docs/doctor.md): a step that sums the gradients of
several micro-batches must get their mean, so the sum is divided by their number, whether
the loss is divided before backward() or the gradients after it (`p.grad /= k`), and under a
`GradScaler`, whose scale the step's unscaling takes out again. Pure: a `Run` in, findings
out.
"""

from __future__ import annotations

import math
from collections import Counter

from gradtutor.doctor.events import (
    Event,
    Finding,
    Run,
    last_norms_before,
    number,
    step_label,
    step_norms,
    total_norm,
)
from gradtutor.i18n import msg

SAME = 1e-3  # relative spread within which the factors of several steps are one factor


def after_backward(run: Run, step: Event) -> float | None:
    """How many times larger the step's gradients were right after the last backward pass
    than when the step used them: k for `p.grad /= k`, the scale under a GradScaler (the
    backward pass filled scaled gradients, the step gets them unscaled), and changing from
    step to step under clipping. None when it cannot be measured."""
    made = last_norms_before(run, step["n"])
    before = total_norm(made.get(int(p)) for p in step["g"])
    at_step = total_norm(step_norms(step))
    if not (math.isfinite(before) and math.isfinite(at_step)) or before == 0 or at_step == 0:
        return None
    return before / at_step


def consistent(factors: list[float]) -> bool:
    return len(factors) >= 2 and max(factors) <= min(factors) * (1 + SAME)


def accumulation(run: Run) -> list[Finding]:
    """accumulation-scale: k backward passes from one line summed by a step, the sum not
    divided by k (or divided twice)."""
    numbers = {b["n"]: b for b in run.backwards}
    summed: list[tuple[Event, int, float | None, float | None]] = []  # step, k, loss's, after
    for step in run.steps:
        if step.get("closure"):
            continue
        fresh = [g[2] for g in step["g"].values() if g[0] == "fresh" and len(g[2]) > 1]
        if not fresh:
            continue
        contrib = max(fresh, key=len)
        lines = Counter(numbers[c].get("line") for c in contrib if c in numbers)
        line, k = lines.most_common(1)[0]
        if k < 2:
            continue  # several losses, each its own line: meant to be summed
        divisors = [numbers[c].get("div") for c in contrib
                    if c in numbers and numbers[c].get("line") == line]
        d = None if None in divisors else math.fsum(
            float(value) for value in divisors if value is not None) / len(divisors)
        summed.append((step, k, d, after_backward(run, step)))
    if not summed:
        return []
    # a factor between the backward pass and the step that is the same at every step is the
    # script's own (`p.grad /= k`, a GradScaler's scale); one that changes is clipping's
    afters = [a for _, _, d, a in summed if a is not None and d is not None]
    divided_after = consistent([d * a for _, _, d, a in summed if a is not None
                                and d is not None]) and len(afters) == len(summed)
    verdicts: list[tuple[str, Event, int, float]] = []
    for step, k, d, after in summed:
        if d is None:
            verdicts.append(("unknown", step, k, math.nan))
            continue
        total = d * after if divided_after and after is not None else d
        kind = ("right" if math.isclose(total, k, rel_tol=0.02) else
                "undivided" if math.isclose(total, 1.0, rel_tol=1e-6) else
                "twice" if math.isclose(total, k * k, rel_tol=0.02) else "unknown")
        verdicts.append((kind, step, k, total))
    counts = Counter(v[0] for v in verdicts)
    kind, _ = counts.most_common(1)[0]
    if kind == "right":
        return []
    _, step, k, d = next(v for v in verdicts if v[0] == kind)
    norm = total_norm(step_norms(step))
    line = numbers[max(max(g[2]) for g in step["g"].values() if g[2])].get("line") if any(
        g[2] for g in step["g"].values()) else step.get("line")
    if kind == "unknown":
        return [Finding("accumulation-scale", msg(
            "Each step sums {k} backward passes; the loss was scaled in a way the doctor "
            "cannot read, so it cannot tell whether the sum is the batches' mean.", k=k),
            line, ((msg("step"), step_label(run, step)),
                   (msg("backward passes summed"), str(k))), certain=False)]
    factor = k if kind == "undivided" else 1 / k
    summary = (msg("Each step sums {k} micro-batches' gradients, but the loss is not divided "
                   "by {k}: the step is {k}x the mean gradient.", k=k) if kind == "undivided"
               else msg("The loss is divided by {k} twice: each step gets 1/{k} of the "
                        "micro-batches' mean gradient.", k=k))
    return [Finding("accumulation-scale", summary, line, (
        (msg("step"), step_label(run, step)),
        (msg("backward passes summed"), msg("{k}, from {line}", k=k, line=line)),
        (msg("sum divided by") if divided_after else msg("loss divided by"), number(d)),
        (msg("gradient norm at the step"), number(norm)),
        (msg("the same batches' mean gradient"), number(norm / factor)),
    ))]
