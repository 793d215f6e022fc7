"""The doctor's rules read from gradient norms (docs/doctor.md): gradients that blow up
(`exploding`) or stop being numbers (`nan`), and units that never get a gradient
(`dead-units`). Pure: a `Run` in, findings out.
"""

from __future__ import annotations

import math

from gradtutor.doctor.events import (
    Event,
    Finding,
    Run,
    forward_line,
    last_norms_before,
    named,
    number,
    step_label,
    total_norm,
)
from gradtutor.i18n import msg

EXPLODING_GROWTH = 1e3  # a gradient norm this many times its first step's
EXPLODING_BOUND = 1e6  # or this big, at any step
EXPLODING_FLOOR = 100.0  # and at least this big (a zero-initialised layer starts near 0)
DEAD_SHARE = 0.5  # most of a layer's units with zero gradient at every step observed
MIN_DEAD_STEPS = 3
SPARSE_LAYERS = frozenset({"Embedding", "EmbeddingBag"})  # rows of unseen tokens stay zero


def blow_up(run: Run) -> list[Finding]:
    """exploding and nan, from the norms at each step (or each backward, without an
    optimizer)."""
    series: list[tuple[str, float, Event, list[int]]] = []
    if run.steps:
        for step in run.steps:
            norms = {int(p): g[1] for p, g in step["g"].items()}
            bad = [p for p, n in norms.items() if n is not None and not math.isfinite(n)]
            series.append((msg("step {step}", step=step_label(run, step)),
                           total_norm(norms.values()), step, bad))
    else:
        for backward in run.backwards:
            norms = {int(p): v for p, v in backward["norm"].items()}
            bad = [p for p, n in norms.items() if n is not None and not math.isfinite(n)]
            series.append((msg("backward {number}", number=backward["i"]),
                           total_norm(norms.values()), backward, bad))
    found: list[Finding] = []
    broken = next((s for s in series if s[3]), None)
    if broken is not None:
        label, _, event, bad = broken
        loss = last_loss(run, int(event["n"]))
        found.append(Finding("nan", msg(
            "Gradients became NaN or infinite: every step after it ruins the weights."),
            last_backward_line(run, int(event["n"])) or event.get("line"), (
                (msg("first seen"), label),
                (msg("parameters"), named(run, bad)),
                (msg("loss just before"), number(loss)),
            )))
    finite = [s for s in series if math.isfinite(s[1]) and not s[3]]
    start = next((s for s in finite if s[1] > 0), None)
    if start is not None:
        top = max(finite, key=lambda s: s[1])
        if top[1] >= EXPLODING_BOUND or top[1] >= max(EXPLODING_GROWTH * start[1],
                                                       EXPLODING_FLOOR):
            found.append(Finding("exploding", msg(
                "Gradient norms grow without bound: the updates blow the weights up."),
                last_backward_line(run, int(top[2]["n"])) or top[2].get("line"), (
                    (msg("at the first step"), f"{start[0]}: {number(start[1])}"),
                    (msg("largest"), f"{top[0]}: {number(top[1])}"),
                    (msg("growth"), f"{number(top[1] / start[1])}x"),
                )))
    return found


def last_loss(run: Run, n: int) -> float | None:
    losses = [b.get("loss") for b in run.backwards if b["n"] <= n]
    return losses[-1] if losses else None


def last_backward_line(run: Run, n: int) -> str | None:
    lines = [b.get("line") for b in run.backwards if b["n"] <= n]
    return lines[-1] if lines else None


def dead(run: Run) -> list[Finding]:
    """dead-units: a layer most of whose units (rows) have had exactly zero gradient at every
    step of the probe's latest window of at least MIN_DEAD_STEPS steps (the window covers
    the later half of the run); embeddings excepted: rows of unseen tokens are meant to be
    zero."""
    latest: dict[int, tuple[int, int, int]] = {}  # pid -> (steps in window, dead, units)
    for step in run.steps:
        window = int(step["i"]) - int(step.get("window", 1)) + 1
        if window < MIN_DEAD_STEPS:
            continue
        made = last_norms_before(run, step["n"])
        for pid, g in step["g"].items():
            if len(g) < 5 or g[0] == "none" or (g[0] == "zero" and (made.get(int(pid)) or 0)):
                continue
            latest[int(pid)] = (window, int(g[3]), int(g[4]))
    dead_pids = sorted(pid for pid, (_, never, units) in latest.items()
                       if never >= DEAD_SHARE * units
                       and run.owner_class(pid) not in SPARSE_LAYERS)
    if not dead_pids:
        return []
    pid = max(dead_pids, key=lambda p: latest[p][1] / latest[p][2])
    window, never, units = latest[pid]
    return [Finding("dead-units", msg(
        "Most units of a layer get exactly zero gradient, step after step: they are dead "
        "(often ReLUs whose input is always negative) and no longer learn."),
        forward_line(run), (
            (msg("parameters"), named(run, dead_pids)),
            (msg("dead units"), msg("{dead} of {units} in {name}", dead=never, units=units,
                                    name=run.name(pid))),
            (msg("steps observed"), msg("the last {count}", count=window)),
        ))]
