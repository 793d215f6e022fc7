"""`manual-sgd`: without an optimizer, one in-place update `w <- w - lr * grad` per batch, each
from that batch's gradient only; `w` stays the same leaf that requires grad.

The loss function handed to the learner records what it was called with: which batch, and
the tensor passed as w (the same object? a leaf? requiring grad? its values). Between two
calls, post-accumulate-grad events show what .grad held; the change in w shows the update.
"""

from __future__ import annotations

import random
from typing import Any

from gradtutor.checking.checkers.common import close, fmt
from gradtutor.checking.checkers.training import (
    Vector,
    add,
    multiple,
    ordinal,
    scale,
    sub,
    times,
    usable,
)
from gradtutor.checking.verdict import Check, Table
from gradtutor.i18n import msg

ARITY = 4
CASES = 3
LOSSES = ("mse", "l1", "huber", "logistic")
IN_PLACE_ON_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"
# A pointer to the evidence for an update that moved w by the wrong amount.
COMPARE = msg("compare the last two columns: how w changed, and how it should have changed")


def cases(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"seed": rng.randrange(2**31), "inputs": rng.randint(2, 4),
             "outputs": rng.choice((None, 2, 3)), "loss": rng.choice(LOSSES),
             "batches": rng.randint(2, 5), "rows": rng.randint(1, 4),
             "lr": round(rng.uniform(0.02, 0.3), 3)} for _ in range(CASES)]


def loss_function(name: str) -> Any:
    """loss_fn(w, batch) for a batch (x, y): a scalar tensor."""
    import torch.nn.functional as F

    def loss_fn(w: Any, batch: Any) -> Any:
        x, y = batch
        pred = x @ w
        if name == "mse":
            return ((pred - y) ** 2).mean()
        if name == "l1":
            return (pred - y).abs().mean()
        if name == "huber":
            return F.huber_loss(pred, y, delta=0.5)
        if pred.dim() == 1:
            return F.binary_cross_entropy_with_logits(pred, y)
        return F.cross_entropy(pred, y)

    return loss_fn


def setup(case: dict[str, Any]) -> tuple[Any, Any, list[tuple[Any, Any]]]:
    import torch

    gen = torch.Generator().manual_seed(case["seed"])
    dtype = torch.float64
    shape = (case["inputs"],) if case["outputs"] is None else (case["inputs"], case["outputs"])
    w = (torch.randn(shape, generator=gen, dtype=dtype) * 0.7).requires_grad_()
    batches = []
    for _ in range(case["batches"]):
        x = torch.randn(case["rows"], case["inputs"], generator=gen, dtype=dtype)
        if case["loss"] != "logistic":
            y = torch.randn((case["rows"], *shape[1:]), generator=gen, dtype=dtype)
        elif case["outputs"] is None:
            y = torch.randint(0, 2, (case["rows"],), generator=gen).to(dtype)
        else:
            y = torch.randint(0, case["outputs"], (case["rows"],), generator=gen)
        batches.append((x, y))
    return w, loss_function(case["loss"]), batches


def expected(case: dict[str, Any]) -> dict[str, Any]:
    """The reference run: w before each update, the batch gradient there, and w at the end."""
    import torch

    w, loss_fn, batches = setup(case)
    starts, grads = [], []
    for batch in batches:
        starts.append(w.detach().tolist())
        (g,) = torch.autograd.grad(loss_fn(w, batch), w)
        grads.append(g.tolist())
        with torch.no_grad():
            w -= case["lr"] * g
    return {"starts": starts, "grads": grads, "final": w.detach().tolist()}


def observe(case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
    import torch

    # the C attributes themselves, whatever learner code puts on torch.Tensor
    is_leaf = vars(torch._C.TensorBase)["is_leaf"].__get__
    requires_grad = vars(torch._C.TensorBase)["requires_grad"].__get__
    version = vars(torch._C.TensorBase)["_version"].__get__
    w, loss_fn, batches = setup(case)
    trace.watch({"w": w})

    def which(batch: Any) -> int:
        for i, ours in enumerate(batches):
            if batch is ours or (isinstance(batch, (tuple, list)) and len(batch) == 2
                                 and batch[0] is ours[0]):
                return i
        return -1

    def recording_loss_fn(arg: Any, batch: Any) -> Any:
        call: dict[str, Any] = {"event": "loss_fn", "batch": which(batch), "ours": arg is w,
                                "tensor": trace.is_tensor(arg)}
        if call["tensor"]:
            call.update(is_leaf=bool(is_leaf(arg)), requires_grad=bool(requires_grad(arg)),
                        w=trace.values(arg))
        trace.note(call)
        return loss_fn(arg, batch)

    raised = None
    try:
        fn(w, recording_loss_fn, batches, case["lr"])
    except Exception as exc:
        # Two mistakes end in a crash whose torch message hides the cause; report the cause.
        swapped = any(e.get("event") == "loss_fn" and not e["ours"] for e in trace.events)
        in_place = isinstance(exc, RuntimeError) and IN_PLACE_ON_LEAF in str(exc)
        if not (swapped or in_place):
            raise
        raised = {"type": type(exc).__name__, "in_place_on_leaf": in_place}
    return {"events": [e for e in trace.events if e.get("event") != "forward"],
            "raised": raised, "final": trace.values(w), "final_leaf": bool(is_leaf(w)),
            "final_requires_grad": bool(requires_grad(w)),
            # every in-place change of w counts here, except one made through w.data
            "version": int(version(w))}


# --- judge: plain data only ---------------------------------------------------------------

def _calls(events: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, e) for i, e in enumerate(events) if e.get("event") == "loss_fn"]


def _leaf_problem(obs: dict[str, Any]) -> str | None:
    for _, call in _calls(obs["events"]):
        if call["ours"]:
            continue
        if not call["tensor"]:
            return msg("loss_fn was called with something that is not the tensor w.")
        if not call["requires_grad"]:
            return msg("After your first update, w no longer requires grad: `w = w - ...` "
                       "with recording off makes a new tensor, which autograd does not "
                       "track, and points your function's local name w at it. The caller's w "
                       "never changes. Change the tensor w itself, in place.")
        if not call["is_leaf"]:
            return msg("After your first update, loss_fn got a different w: `w = w - ...` makes "
                       "a new tensor and points your function's local name w at it. The "
                       "caller's w never changes, and the new tensor is computed from w, so it "
                       "is not a leaf and backward leaves its .grad empty. Change the tensor w "
                       "itself, in place.")
        return msg("Your updates went to a new tensor, not the w you were given, so the "
                   "caller's w never changes: update w itself, in place.")
    if not obs["final_requires_grad"]:
        return msg("w no longer requires grad after your function: leave requires_grad alone.")
    if not obs["final_leaf"]:
        return msg("w is no longer a leaf after your function: your update was recorded in "
                   "a graph. Look at where your function updates w.")
    return None


def _updates(case: dict[str, Any], exp: dict[str, Any],
             obs: dict[str, Any]) -> tuple[tuple[str, str] | None, tuple[str, str] | None,
                                           list[tuple[str, ...]]]:
    """(per-batch-gradient problem, update problem, evidence rows) for one case."""
    events = obs["events"]
    calls = _calls(events)
    count, lr = case["batches"], case["lr"]
    firsts: dict[int, int] = {}
    for index, call in calls:
        firsts.setdefault(call["batch"], index)
    missing = [k for k in range(count) if k not in firsts]
    if missing:
        return ((msg("loss_fn was never called with batch {batch}: make one update per batch, "
                     "in order.", batch=missing[0] + 1),
                 ""),
                None, [])
    rows: list[tuple[str, ...]] = []
    previous: Vector | None = None
    for k in range(count):
        start_at = firsts[k]
        end_at = firsts[k + 1] if k + 1 < count else len(events)
        start = events[start_at].get("w")
        end = events[end_at].get("w") if k + 1 < count else obs["final"]
        if start is None or end is None or not close(start, exp["starts"][k]):
            break  # w already differs from the reference: later batches cannot be compared
        g = [float(v) for v in _flat(exp["grads"][k])]
        moved = sub(_flat(end), _flat(start))
        implied = scale(moved, -1 / lr)  # the gradient this update followed
        held = [e["grad"] for e in events[start_at:end_at]
                if e.get("event") == "accumulate" and e.get("grad") is not None]
        grad = _flat(held[-1]) if held else None  # what .grad held after this batch's backward
        rows.append((str(k + 1), fmt(grad), fmt(g), fmt(moved), fmt(scale(g, -lr))))
        if close(implied, g):
            previous = g
            continue
        nth = ordinal(k)
        batch_problem = None
        if grad is not None and not close(grad, g):
            if previous is not None and close(grad, add(previous, g)):
                batch_problem = (msg("The {nth} update used batch {previous}'s gradient too: "
                                     "nothing cleared w.grad in between, and backward adds "
                                     "into it.", nth=nth, previous=k),
                                 msg("look at what w.grad holds when each batch's backward pass "
                                     "begins"))
            else:
                c = multiple(grad, g)
                batch_problem = ((msg("Before the {nth} update, w.grad held {factor}× the "
                                      "gradient of batch {batch}.", nth=nth, factor=times(c),
                                      batch=k + 1) if c is not None else
                                  msg("Before the {nth} update, w.grad did not hold the "
                                      "gradient of batch {batch}'s loss.", nth=nth,
                                      batch=k + 1)),
                                 msg("one backward per batch, with w.grad cleared in between"))
            if close(implied, grad):
                return batch_problem, None, rows
        followed = grad if grad is not None else g
        return batch_problem, _update_problem(nth, moved, implied, followed, lr), rows
    return None, None, rows


def _table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    """A case's updates up to the one that went wrong, which `_updates` leaves last."""
    return Table(columns, tuple(rows), frozenset({len(rows) - 1}) if rows else frozenset())


def _backward_problem(case: dict[str, Any], obs: dict[str, Any]) -> str | None:
    """Unless exactly one real backward pass filled w.grad for each batch. Only autograd's
    own accumulation makes these events: a replaced Tensor.backward that writes w.grad
    itself, or torch.autograd.grad, leaves none."""
    events = obs["events"]
    firsts: dict[int, int] = {}
    for index, call in _calls(events):
        firsts.setdefault(call["batch"], index)
    bounds = sorted(firsts[k] for k in range(case["batches"]) if k in firsts) + [len(events)]
    counts = [sum(1 for e in events[a:b] if e.get("event") == "accumulate")
              for a, b in zip(bounds, bounds[1:], strict=False)]
    if not any(e.get("event") == "accumulate" for e in events):
        return msg("backward() never filled w.grad: no backward pass reached w. Look at what "
                   "your function does with each batch's loss.")
    for k, count in enumerate(counts):
        if count != 1:
            return msg("backward reached w {count} times for batch {batch}, though one pass gives "
                       "its gradient.", count=count, batch=k + 1)
    return None


def _update_problem(nth: str, moved: Vector, implied: Vector, grad: Vector,
                    lr: float) -> tuple[str, str]:
    if not any(moved):
        return (msg("The {nth} update did not change w.", nth=nth),
                msg("the update has to change the tensor w itself, the one you were given"))
    if close(implied, scale(grad, -1.0)):
        return (msg("The {nth} update added lr * grad: w moved uphill, and the loss grows.",
                    nth=nth),
                msg("gradient descent steps against the gradient"))
    if close(scale(moved, -1.0), grad):
        return (msg("The {nth} update left out the learning rate: it subtracted the whole "
                    "gradient.", nth=nth), COMPARE)
    c = multiple(implied, grad)
    if c is not None:
        return (msg("The {nth} update moved w by {factor}× lr * grad; it should move by "
                    "exactly lr * grad.", nth=nth, factor=times(c)), COMPARE)
    return (msg("The {nth} update did not change w by -lr * grad.", nth=nth), COMPARE)


def _flat(values: Any) -> Vector:
    if isinstance(values, list):
        return [x for item in values for x in _flat(item)]
    return [float(values)]


def judge(cases: list[dict[str, Any]], expected: list[dict[str, Any]],
          observed: list[dict[str, Any]]) -> list[Check]:
    ran = usable(observed)
    checks: list[Check] = []

    stepped = [i for i in ran
               if any(e.get("event") == "before_step" for e in observed[i]["events"])]
    checks.append(Check("no-optimizer", "fail",
                        msg("An optimizer's step() ran: here you write the update yourself."))
                  if stepped else
                  Check("no-optimizer", "pass", msg("you updated w without an optimizer")))

    leaf = {i: _leaf_problem(observed[i]) for i in ran}
    bad_leaf = [i for i in ran if leaf[i] is not None]
    checks.append(Check("stays-leaf", "fail", leaf[bad_leaf[0]] or "")
                  if bad_leaf else
                  Check("stays-leaf", "pass", msg("w stayed the same leaf tensor, requiring "
                                                  "grad")))

    in_place = [i for i in ran if (observed[i]["raised"] or {}).get("in_place_on_leaf")]
    judged = [i for i in ran if i not in bad_leaf and i not in in_place]
    backward = [p for p in (_backward_problem(cases[i], observed[i]) for i in judged) if p]
    not_judged = msg("not judged: see the other checks")
    checks.append(Check("backward-per-batch", "fail", backward[0])
                  if backward else
                  Check("backward-per-batch", "pass",
                        msg("one backward pass filled w.grad per batch"))
                  if judged else
                  Check("backward-per-batch", "skip", not_judged))
    found = {i: _updates(cases[i], expected[i], observed[i]) for i in judged}
    columns = (msg("update"), msg("w.grad after backward"), msg("batch gradient"),
               msg("change in w"), msg("should be -lr * grad"))

    batch = [i for i in judged if found[i][0] is not None]
    if batch:
        i = batch[0]
        message, help_ = found[i][0]  # type: ignore[misc]
        checks.append(Check("per-batch-gradient", "fail", message, help_,
                            _table(columns, found[i][2])))
    elif judged:
        checks.append(Check("per-batch-gradient", "pass",
                            msg("each update used only its own batch's gradient")))
    else:
        checks.append(Check("per-batch-gradient", "skip", not_judged))

    update = [i for i in judged if found[i][1] is not None]
    if in_place:
        checks.append(Check(
            "update", "fail",
            msg("w -= ... ran while autograd was recording: PyTorch refuses to change a leaf "
                "that requires grad in place while it records."),
            msg("the update is not part of the loss: look at what autograd records while it runs")))
    elif update:
        i = update[0]
        message, help_ = found[i][1]  # type: ignore[misc]
        checks.append(Check("update", "fail", message, help_, _table(columns, found[i][2])))
    elif judged:
        through_data = any(observed[i].get("version") == 0 for i in judged)
        checks.append(Check(
            "update", "pass", msg("each update moved w by -lr * grad, in place"),
            note=msg("Your updates went through w.data: that works, but .data hides the "
                     "change from autograd's checks; an in-place update with recording off, "
                     "as the lesson shows, is the safe way.")
            if through_data else ""))
    else:
        checks.append(Check("update", "skip", not_judged))
    return checks
