"""The doctor's rules about graphs (docs/doctor.md): a graph cut between the parameters and the
loss (`graph-broken`, reported at the line of the script that cut it, where the probe saw it),
evaluation that builds graphs or a model that trains in eval mode (`eval-graph`), and what
the doctor sees of either but cannot judge. Pure: a `Run` in, findings out.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from gradtutor.doctor.events import MAX_NAMED, Finding, Run, forward_line, named
from gradtutor.i18n import Msg, msg

# the errors that stop a script whose loss has no graph: `.item()` made it a float, or every
# tensor on the way had requires_grad=False
NO_GRAPH = ("'float' object has no attribute 'backward'",
            "does not require grad and does not have a grad_fn")


def broken_graph(run: Run) -> list[Finding]:
    """graph-broken: a layer that runs, with grad on, for a loss whose backward never
    reaches it; or a backward on a loss with no graph at all. Reported at the script's line
    that cut the graph, where the probe saw it (`cut_at`)."""
    found: list[Finding] = []
    error = str((run.end or {}).get("error") or "")
    said = error if any(sign in error for sign in NO_GRAPH) else None
    stopped: list[tuple[Any, str | None, Any]] = [
        (event.get("line"), said, event.get("n")) for event in run.nograph[:1]] or (
        [((run.end or {}).get("line"), said, (run.end or {}).get("n"))] if said else [])
    trained = {int(p) for opt in run.optimizers.values() for p in opt.get("pids", ())}
    for line, said, failed in stopped:
        failed = failed if isinstance(failed, int) else math.inf
        before = [b["n"] for b in run.backwards if b["n"] < failed]
        where, cut = cut_at(run, trained or {p for p, leaf in run.leaves.items()
                                             if leaf.get("requires_grad")},
                            line, after=max(before, default=0), before=failed)
        found.append(Finding("graph-broken", msg(
            "backward() was called on a loss with no graph: it was cut from the model's "
            "parameters (.detach(), .item(), .data, NumPy, torch.tensor(...))."),
            where, (*cut, (msg("backward"), str(line)),
                    *(((msg("the script's error"), said),) if said else ()))))
    if not run.backwards:
        return found
    reached = {int(p) for b in run.backwards for p in b["reached"]}
    runs = Counter(mid for b in run.backwards for mid in b.get("ran", ()))
    lost = []
    for mid, count in runs.items():
        direct = [int(p) for p in run.modules.get(mid, {}).get("direct", ())
                  if run.leaves.get(int(p), {}).get("requires_grad")]
        if direct and not set(direct) & reached and (not run.optimizers or set(direct) & trained):
            lost.append((mid, count, direct))
    if lost:
        mids = [run.module_name(mid) for mid, _, _ in lost]
        pids = [p for _, _, d in lost for p in d]
        where, cut = cut_at(run, set(pids), forward_line(run))
        found.append(Finding("graph-broken", msg(
            "These layers run with gradients on, but no backward pass reaches them: the "
            "graph is cut between them and the loss (.detach(), .item(), .data, NumPy, "
            "torch.tensor(...))."), where, (
                *cut,
                (msg("layers"), ", ".join(mids[:MAX_NAMED])),
                (msg("parameters"), named(run, pids)),
                (msg("backward passes"), msg("{count}, none reaching them",
                                             count=len(run.backwards))),
            )))
    return found


def cut_at(run: Run, lost: set[int], otherwise: str | None, after: float = 0,
           before: float = math.inf) -> tuple[str | None, tuple[tuple[Msg, str], ...]]:
    """Where the graph of the parameters `lost` was cut, from the calls of the script's own
    that took the values of a tensor those parameters had reached, without its graph (the
    probe's `cut` events between the events `after` and `before`): the one line that did,
    and the evidence row that says so. Where several lines did, or none the probe watches
    (`.data`), it does not guess: the row says which, or that none was seen, and the place
    is `otherwise`."""
    lines: dict[str, str] = {}
    for event in run.cuts:
        if after < event["n"] < before and lost & {p for p in event["reached"]
                                                   if isinstance(p, int)}:
            lines.setdefault(str(event["line"]), f"{event['line']} ({event['how']})")
    shown = list(lines.values())
    if len(shown) == 1:
        return next(iter(lines)), ((msg("graph cut at"), shown[0]),)
    if shown:
        return otherwise, ((msg("graph cut at one of"), ", ".join(shown[:3])
                            + (" …" if len(shown) > 3 else "")),)
    return otherwise, ((msg("graph cut at"), msg(
        "not seen (.data, or a call the doctor does not watch)")),)


def eval_graph(run: Run) -> list[Finding]:
    """eval-graph: a forward in eval mode with grad on (evaluation that builds a graph, or a
    model left in eval mode while it trains), or graphs no backward pass ever uses."""
    found: list[Finding] = []
    evals = [f for f in run.forwards if not f.get("training") and f.get("grad")]
    trained_in_eval = []
    for forward in evals:
        tree = set(run.modules.get(int(forward["mod"]), {}).get("tree", ()))
        after = next((b for b in run.backwards if b["n"] > forward["n"]), None)
        if after is not None and tree & {int(p) for p in after["reached"]} and int(
                forward["mod"]) in after.get("used", ()):
            trained_in_eval.append(forward)
    modal = [f for f in trained_in_eval if run.modules.get(int(f["mod"]), {}).get("modal")]
    if modal:
        forward = modal[0]
        found.append(Finding("eval-graph", msg(
            "The model trains in eval mode: its dropout and batch norm act as in evaluation. "
            "Call model.train() before the training loop."), forward.get("line"), (
                (msg("layer"), run.module_name(int(forward["mod"]))),
                (msg("trained in eval mode from"), str(forward.get("line"))),
            )))
    plain_evals = [f for f in evals if f not in trained_in_eval]
    # a trained model whose graph no backward ever reaches is cut (graph-broken), not idle
    reached = {int(p) for b in run.backwards for p in b["reached"]}
    trained = {int(p) for opt in run.optimizers.values() for p in opt.get("pids", ())}
    idle = [u for u in run.unused
            if not (tree := set(run.modules.get(int(u["mod"]), {}).get("tree", ())))
            or tree & reached or not tree & trained]
    # a pass can be both (eval mode, its graph let go of): the larger count of each line
    lines = Counter(f.get("line") for f in plain_evals) | Counter(u.get("line") for u in idle)
    if lines:
        line, count = lines.most_common(1)[0]
        found.append(Finding("eval-graph", msg(
            "A forward pass that no backward uses builds a graph: evaluation without "
            "torch.no_grad() keeps every activation in memory for nothing."), line, (
                (msg("forward passes"), msg("at {line}, {count} times or more", count=count,
                                            line=line)),
                (msg("fix"), "with torch.no_grad():"),
            )))
    return found


def unsure(run: Run) -> list[Finding]:
    """What the doctor sees but cannot judge: frozen parameters handed to an optimizer, and
    the script's evaluation, which the run was stopped before."""
    found = []
    frozen = sorted(int(p) for opt in run.optimizers.values() for p in opt.get("pids", ())
                    if not run.leaves.get(int(p), {}).get("requires_grad", True))
    if frozen:
        found.append(Finding("graph-broken", msg(
            "These parameters are in an optimizer but have requires_grad=False, so they never "
            "get a gradient. Frozen on purpose? If not, set requires_grad=True."), None, (
                (msg("parameters"), named(run, frozen)),), certain=False))
    # only where the script has an evaluation (`.eval()` in its source) that the run, stopped
    # after the steps asked for, did not reach: every forward pass seen was training's
    stopped = (run.end or {}).get("reason") == "steps"
    if stopped and run.evals and run.forwards and all(f.get("training") and f.get("grad")
                                                      for f in run.forwards):
        found.append(Finding("eval-graph", msg(
            "Your script's evaluation was not reached in the steps observed, so it was not "
            "checked: give --steps enough steps to reach it."), run.evals[0], (
                (msg("evaluation"), msg("{line}, not reached", line=run.evals[0])),
                (msg("backward passes"), msg("{count}, every forward pass before them in "
                                             "training mode", count=len(run.backwards))),
            ), certain=False))
    return found


# A problem that another one explains is not reported beside it: gradients that pile up grow.
