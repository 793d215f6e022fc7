"""`fix-the-loop`: one optimizer step per batch, each using only that batch's gradient, and the
batch losses returned as a list of floats.

The reference is the correct loop run with the real torch. A step can only be compared with
it while the learner's parameters still equal the reference's, so every step also records
the parameters it started from (a step pre-hook on the case's optimizer). The gradient a
step used is read when step() reads .grad, so `optimizer.step(closure)` is judged on what
its closure left there. The first step that went wrong is diagnosed, and the steps after it
are not judged.
"""

from __future__ import annotations

from typing import Any

from gradtutor.checking.checkers.common import close, fmt, uncalled_words
from gradtutor.checking.checkers.training import (
    Vector,
    add,
    build,
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
from gradtutor.checking.verdict import Check, Table
from gradtutor.i18n import msg

ARITY = 4
CASES = 3


# The order of one training step, in words: where a check points when the order is wrong.
_IN_ORDER = msg("look at the order of the calls in each step of your loop")


def cases(seed: int) -> list[dict[str, Any]]:
    return loop_cases(seed, "batches", CASES)


def setup(case: dict[str, Any]) -> Any:
    return build(case, case["batches"], case["rows"])


def expected(case: dict[str, Any]) -> dict[str, Any]:
    """The correct loop: per step, the parameters it starts from, its gradient and its loss."""
    import torch

    s = setup(case)
    params = s.params
    leftovers = {name: g.tolist() for name, g in s.leftovers.items()} or None
    steps = []
    for x, y in s.batches:
        start = {name: p.detach().tolist() for name, p in params.items()}
        loss = s.loss_fn(s.model(x), y)
        grads = grads_of(loss, params)
        steps.append({"params": start, "grads": grads, "loss": loss.item()})
        for name, p in params.items():
            p.grad = torch.tensor(grads[name], dtype=p.dtype)
        s.optimizer.step()
    return {"names": list(params), "leftovers": leftovers, "steps": steps}


def plain_losses(value: Any, trace: Any) -> Any:
    """The returned losses as plain data: a list of floats, or a description of what it was."""
    if type(value) is not list:
        return {"not_a_list": type(value).__name__, **trace.uncalled(value)}
    out: list[Any] = []
    for item in value:
        if isinstance(item, float):
            out.append(float.__float__(item))  # the real value, whatever a subclass claims
        elif trace.is_tensor(item):
            out.append({"type": "Tensor"})
        else:
            out.append({"type": type(item).__name__})
    return out


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    s = setup(case)
    params = s.params
    trace.watch(params)

    def snapshot(optimizer: Any, args: Any, kwargs: Any) -> None:
        # runs when step() is called, before a closure passed to it: the step's own
        # before_step event comes later, when step() reads .grad
        trace.note({"event": "params",
                    "values": {name: trace.values(p) for name, p in params.items()}})

    s.optimizer.register_step_pre_hook(snapshot)
    returned = fn(s.model, s.optimizer, s.loss_fn, s.batches)
    return {"events": kept_events(trace.events), "losses": plain_losses(returned, trace)}


# --- judge: plain data only ---------------------------------------------------------------

def _steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each optimizer step: the gradients it used, the parameters it started from (if our
    optimizer took it), and the events since the previous step (a closure's included)."""
    out: list[dict[str, Any]] = []
    since = 0
    for i, event in enumerate(events):
        if event.get("event") != "before_step":
            continue
        window = events[since:i]
        start = next((e for e in reversed(window) if e.get("event") == "params"), None)
        out.append({"grads": event["grads"],
                    "params": start["values"] if start is not None else None,
                    "window": window})
        since = i + 1
    return out


def _order_problem(window: list[dict[str, Any]]) -> str:
    """Why a step saw an empty or stale gradient, read from what happened before it."""
    kinds = [e.get("event") for e in window]
    if "accumulate" not in kinds:
        return msg("optimizer.step() ran before backward")
    last_backward = max(i for i, k in enumerate(kinds) if k == "accumulate")
    if "zero_grad" in kinds[last_backward:]:
        return msg("zero_grad() ran after backward and before step()")
    return msg(".grad was cleared after backward")


def _step_table(k: int, used: Vector | None, g: Vector, previous: Vector | None) -> Table:
    """The step that went wrong: the gradient it used next to its batch's, and the previous
    batch's where the message names it (`previous`), so that the numbers add up on screen."""
    columns: tuple[str, ...] = (msg("step"), msg("gradient it used"), msg("gradient of its batch"))
    cells: tuple[str, ...] = (str(k + 1), fmt(used), fmt(g))
    if previous is not None:
        columns += (msg("gradient of batch {batch}", batch=k),)
        cells += (fmt(previous),)
    return Table(columns, (cells,), frozenset({0}))


def _analyse(case: dict[str, Any], exp: dict[str, Any],
             obs: dict[str, Any]) -> dict[str, Any]:
    """Per-case findings: step count, leftover and per-batch problems, comparable steps."""
    names = exp["names"]
    ref_steps = exp["steps"]
    steps = _steps(obs["events"])
    found: dict[str, Any] = {"steps": len(steps), "comparable": 1, "leftover": None,
                             "batch": None, "backward": _backward_problem(steps, names)}
    leftovers = join(exp["leftovers"], names)
    previous: Vector | None = None
    for k, step in enumerate(steps[:len(ref_steps)]):
        ref = ref_steps[k]
        start = join(step["params"], names)
        if step["params"] is not None and (
                start is None or not close(start, join(ref["params"], names))):
            break  # the parameters already differ: this batch's gradient there is unknown
        found["comparable"] = k + 1
        g = join(ref["grads"], names)
        assert g is not None
        used = join(step["grads"], names)
        if used is not None and close(used, g):
            previous = used
            continue
        if k == 0 and leftovers is not None and used is not None:
            c = multiple(sub(used, leftovers), g)
            if c is not None or close(used, leftovers):
                found["leftover"] = Check(
                    "clears-leftovers", "fail", _leftover_words(c),
                    msg("look at what .grad holds when the first step's backward pass begins"),
                    per_param_table(names, (msg("leftover .grad before your call"),
                                            msg("step 1 used"), msg("gradient of batch 1")),
                                    exp["leftovers"], step["grads"], ref["grads"],
                                    against=(1, 2)))
                if c is not None and near(c, 1.0):
                    break  # batch 1's own gradient was right; the trajectory now differs
                used = sub(used, leftovers)
        message, help_, named = _batch_problem(k, used, g, previous, step["window"])
        found["batch"] = (message, help_, _step_table(k, used, g, previous if named else None))
        break
    return found


def _leftover_words(c: float | None) -> str:
    """What the first step used, when the leftovers from before the call were part of it:
    `c` times batch 1's gradient besides them (None: none of it)."""
    if c is None or near(c, 0.0):
        return msg("Step 1 used only the leftover gradients from before your function was "
                   "called, none of batch 1's gradient.")
    if near(c, 1.0):
        return msg("Step 1 used the leftover gradients from before your function was called "
                   "plus batch 1's gradient: nothing cleared .grad before the first backward "
                   "pass.")
    return msg("Step 1 used the leftover gradients from before your function was called plus "
               "{factor}× batch 1's gradient.", factor=times(c))


def _backward_problem(steps: list[dict[str, Any]], names: list[str]) -> tuple[str, str] | None:
    """(message, help) unless exactly one real backward pass reached every parameter before
    each step. Only autograd's own accumulation makes these events: a replaced
    Tensor.backward that writes .grad itself leaves none."""
    for k, step in enumerate(steps):
        counts = [sum(1 for e in step["window"]
                      if e.get("event") == "accumulate" and e.get("param") == name)
                  for name in names]
        if all(c == 1 for c in counts):
            continue
        if not any(e.get("event") == "accumulate" for s in steps for e in s["window"]):
            return (msg("No gradient reached the parameters through backward(): .grad was "
                        "never filled by a backward pass."),
                    msg("in every step, compute that batch's loss and run the backward pass on it"))
        if max(counts) == 0:
            return (msg("optimizer.step() ran before backward: step {step} had no backward "
                        "pass before it.", step=k + 1),
                    msg("look at where the backward pass runs, and where the step"))
        return (msg("backward ran {count} times before step {step}, which has one batch.",
                    count=max(counts), step=k + 1),
                msg("one backward pass per step"))
    return None


def _batch_problem(k: int, used: Vector | None, g: Vector, previous: Vector | None,
                   window: list[dict[str, Any]]) -> tuple[str, str, bool]:
    """(message, help, whether the message names the previous batch's gradient) for step k,
    whose gradient was not its batch's gradient."""
    step = k + 1
    if used is None or not any(used):
        return (msg("Step {step} used none of batch {step}'s gradient: {why}.", step=step,
                    why=_order_problem(window)),
                _IN_ORDER, False)
    if previous is not None and close(used, previous) and "accumulate" not in [
            e.get("event") for e in window]:
        return (msg("optimizer.step() ran before backward: step {step} used the previous "
                    "gradient, batch {previous}'s.", step=step, previous=k),
                msg("look at where the backward pass runs, and where the step"), True)
    if previous is not None and close(used, add(previous, g)):
        return (msg("Step {step} used the gradient of batch {previous} plus batch {step}: "
                    ".grad was not cleared before backward.", step=step, previous=k),
                msg("look at what .grad holds when each step's backward pass begins"), True)
    c = multiple(used, g)
    if c is not None:
        return (msg("Step {step} used {factor}× the gradient of batch {step}.", step=step,
                    factor=times(c)),
                msg("look at how many backward passes each step runs, and on which loss"), False)
    return (msg("Step {step} used a gradient that is not the gradient of batch {step}'s loss.",
                step=step),
            _IN_ORDER, False)


def _losses_problem(case: dict[str, Any], exp: dict[str, Any], losses: Any,
                    comparable: int) -> Check | None:
    count = case["batches"]
    if isinstance(losses, dict):
        kind = losses["not_a_list"]
        name = losses.get("uncalled")
        message = (uncalled_words(str(name)) if name is not None else
                   msg("You returned None: collect loss.item() for each batch in a list and "
                       "return it.") if kind == "NoneType" else
                   msg("You returned a {kind}, not a list of the batch losses.", kind=kind))
        return Check("returns-losses", "fail", message,
                     msg("return a list with one number per batch"))
    if len(losses) != count:
        return Check("returns-losses", "fail",
                     msg("You returned {returned} losses for {count} batches: return one per "
                         "batch.", returned=len(losses), count=count),
                     msg("record one loss in each step"))
    kinds = {item["type"] for item in losses if isinstance(item, dict)}
    if "Tensor" in kinds:
        return Check("returns-losses", "fail",
                     msg("Your list holds tensors, not floats: each loss should be a plain Python "
                         "number."),
                     msg("look at what kind of value your list keeps for each loss"))
    if kinds:
        return Check("returns-losses", "fail",
                     msg("Your list holds {kinds} values, not floats.",
                         kinds=", ".join(sorted(kinds))),
                     msg("look at what kind of value your list keeps for each loss"))
    ref = [step["loss"] for step in exp["steps"]]
    wrong = [k for k in range(min(comparable, count)) if not close(losses[k], ref[k])]
    if not wrong:
        return None
    return Check("returns-losses", "fail",
                 msg("Loss {batch} you returned is not the loss of batch {batch} (computed "
                     "before its step).", batch=wrong[0] + 1),
                 msg("record each batch's loss right after computing it, before its step"),
                 Table((msg("batch"), msg("you returned"), msg("its loss")),
                       tuple((str(k + 1), fmt(losses[k]), fmt(ref[k]))
                             for k in range(min(comparable, count))), frozenset(wrong)))


def _step_count(cases: list[dict[str, Any]], found: dict[int, dict[str, Any]]) -> Check:
    wrong = [i for i in found if found[i]["steps"] != cases[i]["batches"]]
    if not wrong:
        return Check("one-step-per-batch", "pass", msg("one optimizer step per batch"))
    steps, count = found[wrong[0]]["steps"], cases[wrong[0]]["batches"]
    if steps == 0:
        message = msg("optimizer.step() never ran, so the weights never changed.")
    elif steps == 1:
        message = msg("optimizer.step() ran 1 time for {count} batches, not once per batch.",
                      count=count)
    else:
        message = msg("optimizer.step() ran {steps} times for {count} batches, not once per "
                      "batch.", steps=steps, count=count)
    return Check("one-step-per-batch", "fail", message,
                 msg("look at where, and how often, your loop calls optimizer.step()"))


def _per_step(name: str, key: str, judged: list[int], found: dict[int, dict[str, Any]],
              passed: str) -> Check:
    """A check read from each judged case's per-step finding `key`: (message, help), and
    the evidence table where there is one."""
    wrong = [i for i in judged if found[i][key] is not None]
    if wrong:
        message, help_, *evidence = found[wrong[0]][key]
        return Check(name, "fail", message, help_, evidence[0] if evidence else None)
    if judged:
        return Check(name, "pass", passed)
    return Check(name, "skip", msg("not judged: there was not one step per batch to look at"))


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    found = {i: _analyse(cases[i], expected[i], observed[i]) for i in usable(observed)}
    # with too few or too many steps, a step has no batch of its own to compare with
    judged = [i for i in found if found[i]["steps"] == cases[i]["batches"]]
    leftover = [found[i]["leftover"] for i in found if found[i]["leftover"] is not None]
    losses = [_losses_problem(cases[i], expected[i], observed[i]["losses"],
                              found[i]["comparable"]) for i in found]
    return [
        _step_count(cases, found),
        _per_step("backward-per-batch", "backward", judged, found,
                  msg("one backward pass before each step")),
        leftover[0] if leftover else
        Check("clears-leftovers", "pass", msg("leftover gradients did not reach the first step"))
        if any(cases[i]["leftovers"] and found[i]["steps"] for i in found) else
        Check("clears-leftovers", "skip", msg("not judged: no step to look at")),
        # one account of one run: once the leftovers reached step 1, the steps are not all
        # their own batch's, and another case's steps would tell a second story beside it
        Check("per-batch-gradient", "skip",
              msg("not judged until {checks} passes", checks="clears-leftovers"))
        if leftover else
        _per_step("per-batch-gradient", "batch", judged, found,
                  msg("each step used only its own batch's gradient")),
        next((c for c in losses if c is not None),
             Check("returns-losses", "pass", msg("you returned each batch's loss"))),
    ]
