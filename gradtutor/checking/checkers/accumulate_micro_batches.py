"""`accumulate-micro-batches`: one optimizer step whose gradient is the mean-loss gradient of
all the micro-batches taken as one batch, with one backward per micro-batch.

The parameters' .grad may hold leftovers when the function is called. The gradient the step
used is read when step() reads .grad (`before_step` events, after a closure passed to
step() has run); backward passes are counted from post-accumulate-grad events, which only
real autograd produces.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.training import (
    Vector,
    build,
    first_failure,
    grads_of,
    join,
    kept_events,
    loop_cases,
    multiple,
    near,
    per_param_table,
    sub,
    times,
    usable,
)
from gradtutor.checking.verdict import Check
from gradtutor.i18n import msg

ARITY = 4
CASES = 3


def cases(seed: int) -> list[dict[str, Any]]:
    return loop_cases(seed, "micro_batches", CASES)


def setup(case: dict[str, Any]) -> Any:
    return build(case, case["micro_batches"], case["rows"])


def expected(case: dict[str, Any]) -> dict[str, Any]:
    import torch

    s = setup(case)
    params = s.params
    x = torch.cat([xb for xb, _ in s.batches])
    y = torch.cat([yb for _, yb in s.batches])
    return {
        "names": list(params),
        "mean": grads_of(s.loss_fn(s.model(x), y), params),
        "micro": [grads_of(s.loss_fn(s.model(xb), yb), params) for xb, yb in s.batches],
        "leftovers": {name: g.tolist() for name, g in s.leftovers.items()} or None,
    }


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    s = setup(case)
    trace.watch(s.params)
    fn(s.model, s.optimizer, s.loss_fn, s.batches)
    return {"events": kept_events(trace.events)}


# --- judge: plain data only ---------------------------------------------------------------

def _steps(events: list[dict[str, Any]]) -> list[int]:
    return [i for i, e in enumerate(events) if e.get("event") == "before_step"]


def _one_step(case: dict[str, Any], events: list[dict[str, Any]]) -> Check | None:
    steps, n = len(_steps(events)), case["micro_batches"]
    if steps == 1:
        return None
    if steps == 0:
        return Check("one-step", "fail",
                     msg("optimizer.step() never ran, so the weights never changed."),
                     msg("after the last micro-batch's backward, call optimizer.step() once"))
    interleaved = any(e.get("event") == "accumulate" for e in events[_steps(events)[0]:])
    how = (msg("once per micro-batch ({n} micro-batches)", n=n) if steps == n and interleaved
           else msg("{steps} times", steps=steps))
    return Check("one-step", "fail",
                 msg("optimizer.step() ran {how}: accumulation takes a single step, after the "
                     "backward of every micro-batch.", how=how),
                 msg("move optimizer.step() out of the loop, after it"))


def _backward_per_micro_batch(case: dict[str, Any], names: list[str],
                              events: list[dict[str, Any]]) -> Check | None:
    n = case["micro_batches"]
    steps = _steps(events)
    accumulated = [e for e in events if e.get("event") == "accumulate"]
    counts = {name: sum(1 for e in accumulated if e.get("param") == name) for name in names}
    if len(steps) == 1 and any(e.get("event") == "accumulate" for e in events[steps[0]:]):
        return Check(
            "backward-per-micro-batch", "fail",
            msg("optimizer.step() ran before backward: the step used the gradient that was in "
                ".grad before your micro-batches, and theirs came too late to be used."),
            msg("run backward on every micro-batch first, then call optimizer.step()"))
    if all(c == n for c in counts.values()):
        return None
    most = max(counts.values())
    if most == 0:
        message = msg("No gradient reached the parameters through backward(): call backward "
                      "on each micro-batch's loss.")
    elif most == 1:
        message = msg("backward ran once for {n} micro-batches: call it once per micro-batch. "
                      "Each backward then frees that micro-batch's graph before the next one "
                      "is built, which is what saves memory.", n=n)
    else:
        message = msg("backward ran {most} times for {n} micro-batches: run it once per "
                      "micro-batch.", most=most, n=n)
    return Check("backward-per-micro-batch", "fail", message,
                 msg("in the loop: loss = loss_fn(model(x), y) / n, then loss.backward()"))


def _explain(v: Vector, families: dict[str, Vector]) -> tuple[str, float] | None:
    """Which reference gradient `v` is a multiple of, and by how much."""
    for family, ref in families.items():
        k = multiple(v, ref)
        if k is not None:
            return family, k
    return None


def _gradient_checks(case: dict[str, Any], exp: dict[str, Any],
                     obs: dict[str, Any]) -> tuple[Check | None, Check | None]:
    """(clears-leftovers failure, step-gradient failure) for a case with exactly one step."""
    events = obs["events"]
    names = exp["names"]
    n = case["micro_batches"]
    used_grads = events[_steps(events)[0]]["grads"]
    table = per_param_table(names, (msg("your step used"),
                                    msg("mean gradient of the whole batch")),
                            used_grads, exp["mean"])
    used = join(used_grads, names)
    step = _steps(events)[0]
    why = (msg("optimizer.step() ran before backward") if not any(
        e.get("event") == "accumulate" for e in events[:step])
        else msg(".grad was cleared after backward"))
    if used is None:
        missing = [name for name in names if used_grads.get(name) is None]
        return None, Check(
            "step-gradient", "fail",
            msg("The step saw no gradient for {names}: {why}, so .grad was None when "
                "optimizer.step() ran and those parameters did not move.",
                names=", ".join(missing), why=why),
            msg("clear the gradients once, run backward on every micro-batch, then step"), table)
    mean = join(exp["mean"], names)
    last = join(exp["micro"][-1], names)
    assert mean is not None and last is not None
    families = {"mean": mean, "last": last}
    leftovers = join(exp["leftovers"], names)
    own, clears = used, None
    if leftovers is not None and _explain(used, families) is None:
        without = sub(used, leftovers)
        if _explain(without, families) is not None:
            own = without
            clears = Check(
                "clears-leftovers", "fail",
                msg("The step used leftover gradients from before your function was called: "
                    "clear them first."),
                msg("clear the gradients once, before the first micro-batch"),
                per_param_table(names, (msg("leftover .grad before your call"),
                                        msg("your step used"), msg("should have used")),
                                exp["leftovers"], used_grads, exp["mean"]))
    found = _explain(own, families)
    if found is not None and found[0] == "mean" and near(found[1], 1.0):
        return clears, None
    help_ = msg("divide each micro-batch's loss by {n} (the number of micro-batches)", n=n)
    if found is None:
        message = msg("The step's gradient is not the mean-loss gradient of all the "
                      "micro-batches taken as one batch.")
    elif found[0] == "last":
        message = msg("The step used only the last micro-batch's gradient: .grad was cleared "
                      "inside the loop, wiping out the earlier micro-batches.")
        help_ = msg("clear once, before the loop, not for every micro-batch")
    elif near(found[1], 0.0):
        message = msg("The step used none of your micro-batches' gradients: {why}.", why=why)
        help_ = msg("clear the gradients once, run backward on every micro-batch, then step")
    elif near(found[1], n):
        message = msg("Your loss was not divided by the number of micro-batches: the step "
                      "used a gradient {n}× too large.", n=n)
    elif near(found[1], 1 / n):
        message = msg("The step used a gradient {n}× too small: it was divided by {n} twice. "
                      "Divide each micro-batch's loss by {n} once.", n=n)
        help_ = msg("scale once: each loss before backward, or the gradient before the step, "
                    "not both")
    else:
        message = msg("The step used {factor}× the whole-batch mean gradient; with {n} equal "
                      "micro-batches, each mean loss should count 1/{n}.",
                      factor=times(found[1]), n=n)
    return clears, Check("step-gradient", "fail", message, help_, table)


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    ran = usable(observed)
    one_step = [_one_step(cases[i], observed[i]["events"]) for i in ran]
    backward = [_backward_per_micro_batch(cases[i], expected[i]["names"],
                                          observed[i]["events"]) for i in ran]
    single = [i for i, bad in zip(ran, one_step, strict=True) if bad is None]
    gradient = [_gradient_checks(cases[i], expected[i], observed[i]) for i in single]
    checks = [
        first_failure(one_step)
        or Check("one-step", "pass", msg("optimizer.step() ran exactly once")),
        first_failure(backward) or Check(
            "backward-per-micro-batch", "pass",
            msg("backward ran once per micro-batch, all before the step")),
    ]
    leftover_cases = [i for i in single if cases[i]["leftovers"]]
    no_step = msg("not judged: no single optimizer step to look at")
    checks.append(
        first_failure([c for c, _ in gradient])
        or (Check("clears-leftovers", "pass", msg("leftover gradients did not reach the step"))
            if leftover_cases else Check("clears-leftovers", "skip", no_step)))
    checks.append(
        first_failure([g for _, g in gradient])
        or (Check("step-gradient", "pass",
                  msg("your micro-batches added up to the mean gradient of the whole batch"))
            if single else Check("step-gradient", "skip", no_step)))
    return checks
