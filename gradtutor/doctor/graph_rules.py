"""The doctor's rules about graphs (docs/doctor.md): a graph cut between the parameters and the
loss (`graph-broken`, reported at the line of the script that cut it, where the probe saw it),
evaluation that builds graphs or a model that trains in eval mode (`eval-graph`), and what
the doctor sees of either but cannot judge. Pure: a `Run` in, findings out.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from gradtutor.doctor.events import MAX_NAMED, Event, Finding, Run, forward_line, named
from gradtutor.i18n import Msg, msg

# the cuts that keep a tensor's values for later use, its graph let go of on purpose
KEEPS_VALUES = (".detach()", ".detach_()", ".data")
# the errors that stop a script whose loss has no graph: `.item()` made it a float, or every
# tensor on the way had requires_grad=False
NO_GRAPH = ("'float' object has no attribute 'backward'",
            "does not require grad and does not have a grad_fn")


def broken_graph(run: Run) -> list[Finding]:
    """graph-broken: a layer that runs, with grad on, for a loss whose backward never
    reaches it, or one parameter of a layer the backward reaches; a backward on a loss with
    no graph at all, cut or computed with gradients off. Reported at the script's line that
    cut the graph, where the probe saw it (`cut_at`), or at the forward pass run with
    gradients off."""
    found: list[Finding] = []
    error = str((run.end or {}).get("error") or "")
    said = error if any(sign in error for sign in NO_GRAPH) else None
    stopped: list[tuple[Any, str | None, Any]] = [
        (event.get("line"), said, event.get("n")) for event in run.nograph[:1]] or (
        [((run.end or {}).get("line"), said, (run.end or {}).get("n"))] if said else [])
    trained = trained_params(run)
    for line, said, failed in stopped:
        failed = failed if isinstance(failed, int) else math.inf
        after = max((b["n"] for b in run.backwards if b["n"] < failed), default=0)
        told = (*(((msg("the script's error"), said),) if said else ()),)
        off = grad_off(run, after, failed)
        if off is not None:
            mode = "torch.inference_mode()" if off.get("inference") else "torch.no_grad()"
            found.append(Finding("graph-broken", msg(
                "backward() was called on a loss computed with gradients off: the forward pass "
                "ran inside {mode}, which builds no graph. Train outside it; keep it for "
                "evaluation.", mode=mode), off.get("line"), (
                    (msg("forward pass"), msg("{line}, inside {mode}", line=off.get("line"),
                                              mode=mode)),
                    (msg("backward"), str(line)), *told)))
            continue
        where, cut = cut_at(run, trained, line, after=after, before=failed)
        found.append(Finding("graph-broken", msg(
            "backward() was called on a loss with no graph: it was cut from the model's "
            "parameters (.detach(), .item(), .data, NumPy, torch.tensor(...))."),
            where, (*cut, (msg("backward"), str(line)), *told)))
    if not run.backwards:
        return found
    reached = {int(p) for b in run.backwards for p in b["reached"]}
    runs = Counter(mid for b in run.backwards for mid in b.get("ran", ()))
    lost, partly = [], []
    for mid in runs:
        direct = [int(p) for p in run.modules.get(mid, {}).get("direct", ())
                  if run.leaves.get(int(p), {}).get("requires_grad")]
        if direct and not set(direct) & reached and (not run.optimizers or set(direct) & trained):
            lost.append((mid, direct))
        elif missed := [p for p in direct if p not in reached and p in trained]:
            partly.append((mid, missed))
    if lost:
        mids = [run.module_name(mid) for mid, _ in lost]
        pids = [p for _, d in lost for p in d]
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
    elif partly:
        found += cut_parameters(run, partly)
    return found


def cut_parameters(run: Run, partly: list[tuple[int, list[int]]]) -> list[Finding]:
    """graph-broken, one parameter at a time: parameters no backward reaches in layers whose
    other parameters it does reach. Certain where the probe saw the script cut them (a
    `.detach()` or `.data` of the parameter itself, say); else a note: a parameter forward()
    leaves out on purpose looks the same."""
    pids = {p for _, missed in partly for p in missed}
    where, cut = cut_at(run, pids, forward_line(run))
    seen = bool(cut_lines(run, pids))
    evidence = (
        *(cut if seen else ()),
        (msg("layers"), ", ".join(run.module_name(mid) for mid, _ in partly[:MAX_NAMED])),
        (msg("parameters"), named(run, pids)),
        (msg("backward passes"), msg("{count}, reaching the layers' other parameters",
                                     count=len(run.backwards))))
    if seen:
        return [Finding("graph-broken", msg(
            "These parameters never get a gradient, though the rest of their layer does: "
            "forward() uses them cut from the graph."), where, evidence)]
    return [Finding("graph-broken", msg(
        "These parameters are trained but never get a gradient, though the rest of their "
        "layer does: forward() does not use them, or cuts them where the doctor does not "
        "see. If they should learn, use them in forward() as they are."), where, evidence,
        certain=False)]


def trained_params(run: Run) -> set[int]:
    """What the script trains: its optimizers' parameters, or without an optimizer every
    leaf that requires grad."""
    trained = {int(p) for opt in run.optimizers.values() for p in opt.get("pids", ())}
    return trained or {p for p, leaf in run.leaves.items() if leaf.get("requires_grad")}


def grad_off(run: Run, after: float, before: float) -> Event | None:
    """The forward pass a loss with no graph came from, where every one since the last
    backward pass that worked (event `after`) ran with gradients off."""
    before_it = [f for f in run.forwards if f["n"] < before]
    if before_it and not any(f.get("grad") for f in before_it if f["n"] > after) and not (
            before_it[-1].get("grad")):
        return before_it[-1]
    return None


def cut_at(run: Run, lost: set[int], otherwise: str | None, after: float = 0,
           before: float = math.inf) -> tuple[str | None, tuple[tuple[Msg, str], ...]]:
    """Where the graph of the parameters `lost` was cut, from the calls of the script's own
    that took the values of a tensor those parameters had reached, without its graph (the
    probe's `cut` events between the events `after` and `before`): the one line that did,
    and the evidence row that says so. Where several lines did, or none the probe watches
    (`.data`), it does not guess: the row says which, or that none was seen, and the place
    is `otherwise`."""
    lines = cut_lines(run, lost, after, before)
    shown = list(lines.values())
    if len(shown) == 1:
        return next(iter(lines)), ((msg("graph cut at"), shown[0]),)
    if shown:
        return otherwise, ((msg("graph cut at one of"), ", ".join(shown[:3])
                            + (" …" if len(shown) > 3 else "")),)
    return otherwise, ((msg("graph cut at"), msg(
        "not seen (.data, or a call the doctor does not watch)")),)


def cut_lines(run: Run, lost: set[int], after: float = 0, before: float = math.inf
              ) -> dict[str, str]:
    """The lines of the script's cuts between events `after` and `before` of a tensor that
    had reached the parameters `lost`, each with how it cut ('train.py:9 (.detach())')."""
    lines: dict[str, str] = {}
    for event in run.cuts:
        if after < event["n"] < before and lost & {p for p in event["reached"]
                                                   if isinstance(p, int)}:
            lines.setdefault(str(event["line"]), f"{event['line']} ({event['how']})")
    return lines


def eval_graph(run: Run) -> list[Finding]:
    """eval-graph: a model that trains in eval mode (a forward pass in eval mode whose graph a
    backward pass goes through to parameters the script trains, which no forward pass in
    training mode of another module trains too), or evaluation that builds a graph: a
    forward pass in eval mode with grad on whose graph no backward pass (nor
    torch.autograd.grad) goes through, or any whose graph the script lets go of unused. A
    graph used on purpose (the input optimized through a frozen network, a gradient
    penalty) is neither."""
    found: list[Finding] = []
    trained = trained_params(run)
    tree = {mid: {int(p) for p in module.get("tree", ())} for mid, module in run.modules.items()}
    evals = [f for f in run.forwards if not f.get("training") and f.get("grad")]
    trained_in_eval, validation = [], []
    for forward in evals:
        mid = int(forward["mod"])
        through = graph_user(run, forward)
        if through is None:
            validation.append(forward)
            continue
        elsewhere = {p for f in run.forwards if f.get("training") and f.get("grad")
                     and int(f["mod"]) != mid and graph_user(run, f) is not None
                     for p in tree.get(int(f["mod"]), ())}
        if tree.get(mid, set()) & {int(p) for p in through["reached"]} & trained - elsewhere:
            trained_in_eval.append(forward)
    modal = [f for f in trained_in_eval if run.modules.get(int(f["mod"]), {}).get("modal")]
    if modal:
        forward = modal[0]
        resumed = any(f.get("training") and f["mod"] == forward["mod"] and f["n"] < forward["n"]
                      for f in run.forwards)
        found.append(Finding("eval-graph", msg(
            "The model trains in eval mode: its dropout and batch norm act as in evaluation. "
            "Call model.train() again after evaluating, before training resumes.") if resumed
            else msg("The model trains in eval mode: its dropout and batch norm act as in "
                     "evaluation. Call model.train() before the training loop."),
            forward.get("line"), (
                (msg("layer"), run.module_name(int(forward["mod"]))),
                (msg("trained in eval mode from"), str(forward.get("line"))),
            )))
    # a trained model whose graph no backward ever reaches is cut (graph-broken), not idle;
    # a graph let go of at the line that detached the output (a GAN's generator for the
    # discriminator's step) was let go of on purpose
    reached = {int(p) for b in run.backwards for p in b["reached"]}
    detached: dict[Any, set[int]] = {}
    for cut in run.cuts:
        if cut["how"] in KEEPS_VALUES:
            detached.setdefault(cut["line"], set()).update(
                int(p) for p in cut["reached"] if isinstance(p, int))
    idle = [u for u in run.unused
            if (not (mine := tree.get(int(u["mod"]), set())) or mine & reached
                or not mine & trained) and not mine & detached.get(u.get("line"), set())]
    # a pass can be both (eval mode, its graph let go of): the larger count of each line
    lines = Counter(f.get("line") for f in validation) | Counter(u.get("line") for u in idle)
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


def graph_user(run: Run, forward: Event) -> Event | None:
    """The first backward pass that went through the graph of the forward pass `forward`
    (or through a torch.autograd.grad since the one before it); from a probe that does not
    tell which graphs each used, the next backward through a graph of its module."""
    if any("graphs" in b for b in run.backwards):
        return next((b for b in run.backwards if forward["n"] in b.get("graphs", ())), None)
    return next((b for b in run.backwards if b["n"] > forward["n"]
                 and int(forward["mod"]) in b.get("used", ())), None)


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
