"""The doctor's verdict: what the events a probe recorded say about the script's gradients.

Pure: a list of event dicts (probe.py's JSON lines, decoded) in, a `Diagnosis` out. Each rule
is one function over a `Run` (the events sorted by kind, events.py) that returns the findings
of one family: those about clearing, accumulating and stepping here, graph_rules.py's and
norm_rules.py's beside them. A finding carries its stable id, the evidence, the script's
file:line and the lesson step that teaches it; a rule that sees the pattern but cannot tell
whether it is meant says so in a note instead. docs/doctor.md explains each rule.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gradtutor.doctor.events import (
    LESSON_STEPS,
    MAX_NAMED,
    PROBLEM_IDS,
    Event,
    Finding,
    Run,
    last_norms_before,
    named,
    number,
    sort_events,
    step_label,
    step_norms,
    total_norm,
)
from gradtutor.doctor.graph_rules import broken_graph, eval_graph, unsure
from gradtutor.doctor.norm_rules import blow_up, dead
from gradtutor.doctor.scale_rules import accumulation
from gradtutor.i18n import Msg, msg

__all__ = ["LESSON_STEPS", "PROBLEM_IDS", "Diagnosis", "Finding", "diagnose",
           "observed_anything", "to_json"]


@dataclass(frozen=True)
class Diagnosis:
    findings: tuple[Finding, ...]
    notes: tuple[Finding, ...]
    steps: int
    backwards: int
    ending: str  # steps | finished | exit | error | interrupted | timeout | lost
    error: str | None = None
    error_line: str | None = None
    fault: str | None = None


# --- the rules ------------------------------------------------------------------------------

def pile_up(run: Run) -> list[Finding]:
    """never-cleared and cleared-other: a step (or a backward) that adds to gradients an
    earlier update already used."""
    stale_steps = [(s, [int(p) for p, g in s["g"].items() if g[0] == "stale"])
                   for s in run.steps if not s.get("closure")]
    stale_steps = [(s, pids) for s, pids in stale_steps if pids]
    # onto a backward: for what no optimizer steps without a closure (by hand, L-BFGS); an
    # optimizer's own parameters are judged at its steps (a GAN's generator loss leaves old
    # gradients in the discriminator, which its next step never sees once they are cleared)
    plain = {int(p) for s in run.steps if not s.get("closure") for p in s["g"]}
    stale_backwards = [(b, [int(p) for p, state in b["pre"].items()
                            if state == "stale" and int(p) not in plain])
                       for b in run.backwards]
    stale_backwards = [(b, pids) for b, pids in stale_backwards if pids]
    if not stale_steps and not stale_backwards:
        return []
    pids = set(stale_steps[0][1] if stale_steps else stale_backwards[0][1])
    covering = [c for c in run.clears if pids & set(c["pids"])]
    others = [c for c in run.clears if not pids & set(c["pids"])]
    evidence: list[tuple[Msg, str]] = []
    if stale_steps:
        first, stale = stale_steps[0]
        held = max(len(first["g"][str(p)][2]) for p in stale)
        where = first.get("line")
        evidence.append((msg("first step on old gradients"), msg(
            "step {step}: .grad held {count} backward passes, some already used by an "
            "earlier step", step=step_label(run, first), count=held)))
        evidence.append((msg("parameters"), named(run, stale)))
        evidence += norm_series(run, [s for s in run.steps if s["opt"] == first["opt"]])
    else:
        first_b, stale = stale_backwards[0]
        where = first_b.get("line")
        evidence.append((msg("first backward onto old gradients"), msg(
            "backward {number}: .grad still held gradients from before the last update",
            number=first_b["i"])))
        evidence.append((msg("parameters"), named(run, stale)))
    if covering:
        evidence.append((msg("cleared"), msg("{count} times, last at {line}",
                                             count=len(covering), line=covering[-1]["line"])))
    if others and not covering:
        evidence.append((msg("cleared instead"), msg(
            "{what} at {line}, which holds other parameters", what=clear_owner(run, others[0]),
            line=others[0]["line"])))
        return [Finding("cleared-other", msg(
            "The gradients that are cleared are not the ones that step: these keep adding "
            "up across steps."), others[0].get("line") or where, tuple(evidence))]
    summary = (msg("Gradients are never cleared between steps: each step uses the sum of all "
                   "the batches so far.") if not covering else
               msg("Gradients are cleared only once, so from then on each step adds to the "
                   "last one's.") if len(covering) == 1 else
               msg("Gradients are cleared less often than the optimizer steps: between two "
                   "clears, each step adds to the last one's."))
    return [Finding("never-cleared", summary, where, tuple(evidence))]


def norm_series(run: Run, steps: list[Event]) -> list[tuple[Msg, str]]:
    """The gradient norm at each step, as evidence; where something between the backward pass
    and the step made it smaller (clipping), the norm before it too, each row saying which."""
    def shown(norms: list[float]) -> str:
        return " → ".join(number(n) for n in norms[:6]) + (" …" if len(norms) > 6 else "")

    used = [total_norm(step_norms(s)) for s in steps]
    made = [total_norm(last_norms_before(run, s["n"]).get(int(p)) for p in s["g"])
            for s in steps]
    if all(u >= m * (1 - 1e-3) for u, m in zip(used, made, strict=True)):
        return [(msg("gradient norm at each step"), shown(used))]
    return [(msg("gradient norm after backward(), before clipping"), shown(made)),
            (msg("gradient norm the step used, after clipping"), shown(used))]


def clear_owner(run: Run, clear: Event) -> str:
    if clear["how"] == "optimizer":
        opt = run.optimizers.get(int(clear["owner"]), {})
        return f"{opt.get('cls', 'optimizer')}.zero_grad()"
    return f"{run.module_name(int(clear['owner']))}.zero_grad()"


def mixed_between_steps(run: Run) -> list[Finding]:
    """cleared-other, GAN style: one optimizer's step sums a backward from before another
    optimizer's step (the discriminator's loss reaching the generator without detach())."""
    numbers = {b["n"]: b for b in run.backwards}
    other_steps = [(s["n"], s["opt"]) for s in run.steps]
    for step in run.steps:
        if step.get("closure"):
            continue
        for g in step["g"].values():
            contrib = [c for c in g[2] if c in numbers]
            if len(contrib) < 2:
                continue
            between = [n for n, opt in other_steps
                       if opt != step["opt"] and contrib[0] < n < contrib[-1]]
            if between:
                early = numbers[contrib[0]]
                return [Finding("cleared-other", msg(
                    "A step uses gradients a backward pass left before another optimizer's "
                    "step: that loss also reached these parameters, and nothing cleared them."),
                    early.get("line"), (
                        (msg("step"), step_label(run, step)),
                        (msg("parameters"), named(run, [int(p) for p, h in step["g"].items()
                                                       if len(h[2]) > 1])),
                        (msg("backward passes summed"), ", ".join(
                            str(numbers[c].get("line")) for c in contrib)),
                    ))]
    return []


def clearing_order(run: Run) -> list[Finding]:
    """step-before-backward and cleared-before-step."""
    found: list[Finding] = []
    first_backward = run.backwards[0]["n"] if run.backwards else None
    seen: set[int] = set()
    for step in run.steps:
        if step.get("closure") or step["opt"] in seen:
            continue
        seen.add(step["opt"])
        empty = all(g[0] in ("none", "zero") for g in step["g"].values())
        if empty and (first_backward is None or step["n"] < first_backward):
            found.append(Finding("step-before-backward", msg(
                "The optimizer steps before any backward pass has filled .grad: each step "
                "uses the gradients of the previous batch, or none."), step.get("line"), (
                    (msg("first step"), msg("step {step}, with every .grad empty",
                                            step=step_label(run, step))),
                    (msg("first backward"), str(run.backwards[0].get("line"))
                     if run.backwards else msg("none")),
                )))
            break
    if not found:
        found += idle_optimizers(run)
    if any(f.id == "step-before-backward" for f in found):
        return found
    found += updates_of_nothing(run)
    previous: dict[int, int] = {}
    for step in run.steps:
        opt = step["opt"]
        since = previous.get(opt, 0)
        previous[opt] = step["n"]
        if step.get("closure"):
            continue
        made = last_norms_before(run, step["n"])
        reached = {int(p) for b in run.backwards if since < b["n"] < step["n"]
                   for p in b["reached"]}
        lost = [int(p) for p, g in step["g"].items()
                if g[0] in ("none", "zero") and int(p) in reached and (made.get(int(p)) or 0) > 0]
        if lost:
            clear = next((c for c in reversed(run.clears)
                          if since < c["n"] < step["n"] and set(lost) & set(c["pids"])), None)
            where = clear["line"] if clear else step.get("line")
            found.append(Finding("cleared-before-step", msg(
                "Gradients are cleared after backward() and before step(): the step sees "
                "none, and the weights do not move."), where, (
                    (msg("step"), msg("step {step}: .grad empty, though a backward pass had "
                                      "filled it", step=step_label(run, step))),
                    (msg("parameters"), named(run, lost)),
                    (msg("cleared at"), str(clear["line"]) if clear else msg("by hand")),
                )))
            break
        dropped = dropped_micro_batches(run, step, since)
        if dropped is not None:
            found.append(dropped)
            break
    return found


def updates_of_nothing(run: Run) -> list[Finding]:
    """cleared-before-step by hand: tensors no optimizer holds, written between backward
    passes that gave them a gradient, and yet unchanged (`w.grad.zero_()` before
    `w -= lr * w.grad`)."""
    if run.steps:
        return []
    made: dict[int, float | None] = {}
    still: Counter[int] = Counter()
    first: Event | None = None
    for backward in run.backwards:
        for pid in backward.get("still", ()):
            if made.get(int(pid)):
                still[int(pid)] += 1
                first = first or backward
        made.update({int(p): v for p, v in backward["norm"].items()})
    if first is None or max(still.values()) < 2:
        return []
    return [Finding("cleared-before-step", msg(
        "The update by hand comes after .grad is cleared: it subtracts zeros, and the weights "
        "do not move."), first.get("line"), (
            (msg("parameters"), named(run, still)),
            (msg("updates that changed nothing"), str(max(still.values()))),
        ))]


def dropped_micro_batches(run: Run, step: Event, since: int) -> Finding | None:
    """cleared-before-step inside an accumulation loop: several backward passes at one line
    since the last step, but a clear between them leaves the step only the last ones."""
    numbers = {b["n"]: b for b in run.backwards}
    for pid, g in step["g"].items():
        contrib = [numbers[c] for c in g[2] if c in numbers]
        if g[0] != "fresh" or not contrib:
            continue
        line = contrib[-1].get("line")
        # a backward pass whose gradients overflowed is not a micro-batch: a GradScaler skips
        # the step it was for, and clearing it is right
        made = [b for b in run.backwards if since < b["n"] < step["n"]
                and b.get("line") == line and int(pid) in b["reached"]
                and all(math.isfinite(v or 0.0) for v in b["norm"].values())]
        kept = [b for b in contrib if b.get("line") == line]
        clears = [c for c in run.clears if made[0]["n"] < c["n"] < kept[0]["n"]
                  and int(pid) in c["pids"]] if len(made) > len(kept) else []
        if clears:
            return Finding("cleared-before-step", msg(
                "Gradients are cleared inside the accumulation loop: each step sees only the "
                "last {kept} of {made} micro-batches.", kept=len(kept), made=len(made)),
                clears[-1].get("line"), (
                    (msg("step"), step_label(run, step)),
                    (msg("backward passes summed"), msg("{kept} of {made}, at {line}",
                                                        kept=len(kept), made=len(made),
                                                        line=line)),
                    (msg("cleared at"), str(clears[-1].get("line"))),
                ))
    return None


def idle_optimizers(run: Run) -> list[Finding]:
    """An optimizer that never steps while backward passes fill its parameters' .grad, and no
    other optimizer steps them (a wrapper such as SAM shares its base optimizer's groups and
    steps through it)."""
    stepped = {s["opt"] for s in run.steps}
    moved = run.stepped()
    reached = Counter(int(p) for b in run.backwards for p in b["reached"])
    for oid, opt in run.optimizers.items():
        fed = [int(p) for p in opt.get("pids", ()) if reached[int(p)] > 0]
        if oid in stepped or not fed or max(reached[p] for p in fed) < 3 or set(fed) <= moved:
            continue
        return [Finding("step-before-backward", msg(
            "Backward passes fill .grad, but this optimizer never steps: its parameters "
            "never change."), opt.get("line"), (
                (msg("optimizer"), f"{opt.get('cls')} ({opt.get('line')})"),
                (msg("backward passes"), str(max(reached[p] for p in fed))),
                (msg("steps"), "0"),
            ))]
    return []


def optimizer_membership(run: Run) -> list[Finding]:
    """not-in-optimizer: trained parameters no stepping optimizer holds, or held ones that
    never get a gradient."""
    if not run.steps or not run.backwards:
        return []
    stepped = run.stepped()
    held = {int(p) for opt in run.optimizers.values() for p in opt.get("pids", ())}
    reached_nonzero = {int(p) for b in run.backwards for p, v in b["norm"].items() if v}
    reached = {int(p) for b in run.backwards for p in b["reached"]}
    outside = sorted(p for p in reached_nonzero - held
                     if run.leaves.get(p, {}).get("param"))
    found: list[Finding] = []
    if outside:
        found.append(Finding("not-in-optimizer", msg(
            "These parameters get gradients, but no optimizer that steps holds them: they "
            "never change."), run.optimizers[min(run.optimizers)].get("line")
            if run.optimizers else None, (
                (msg("parameters"), named(run, outside)),
                (msg("optimizers"), ", ".join(f"{o.get('cls')} ({o.get('line')})"
                                              for o in run.optimizers.values())),
            )))
    ran = {mid for b in run.backwards for mid in b.get("ran", ())}
    in_ran = {int(p) for mid in ran for p in run.modules.get(mid, {}).get("direct", ())}
    starved = sorted(p for p in stepped - reached - in_ran - run.frozen
                     if run.leaves.get(p, {}).get("requires_grad"))
    # a layer the script's code calls, on a branch this run did not take, may be switched off
    # on purpose (an auxiliary head, an adapter): the doctor cannot tell
    branch = {p: layer for p in starved if (layer := called_layer(run, p)) is not None}
    forgotten = [p for p in starved if p not in branch]
    if forgotten:
        found.append(Finding("not-in-optimizer", msg(
            "These parameters are in the optimizer but never get a gradient: the loss does "
            "not use them (a layer never called?)."), run.steps[0].get("line"), (
                (msg("parameters"), named(run, forgotten)),
                (msg("backward passes"), str(len(run.backwards))),
            )))
    if branch:
        found.append(Finding("not-in-optimizer", msg(
            "These layers are in the optimizer but were not called in the steps observed; "
            "your code calls them on a branch this run did not take. Switched off on "
            "purpose? If not, check the condition that calls them."), None, (
                (msg("layers"), ", ".join(sorted(set(branch.values()))[:MAX_NAMED])),
                (msg("backward passes"), str(len(run.backwards))),
            ), certain=False))
    return found


def called_layer(run: Run, pid: int) -> str | None:
    """The name of the layer that holds parameter `pid` (`model.aux` for `model.aux.weight`),
    when the script's source calls a layer by that name (`self.aux(h)`); None when it never
    does, or the doctor cannot say."""
    name = run.names.get(pid)
    if run.calls is None or name is None or "." not in name:
        return None
    layer = name.rsplit(".", 1)[0]
    return layer if layer.rsplit(".", 1)[-1] in run.calls else None


SYMPTOM_OF: Mapping[str, tuple[str, ...]] = {"exploding": ("never-cleared", "cleared-other")}

RULES: tuple[Callable[[Run], list[Finding]], ...] = (
    pile_up, mixed_between_steps, clearing_order, accumulation, optimizer_membership,
    broken_graph, blow_up, dead, eval_graph, unsure)


def diagnose(events: Sequence[Event], ending: str | None = None) -> Diagnosis:
    """The findings of every rule over a run's events. `ending` overrides how the run ended
    (the parent knows of a timeout or a lost probe; the probe does not)."""
    run = sort_events(events)
    findings: list[Finding] = []
    for rule in RULES:
        for finding in rule(run):
            if all(f.id != finding.id or not finding.certain for f in findings):
                findings.append(finding)
    found = {f.id for f in findings if f.certain}
    findings = [f for f in findings if not found & set(SYMPTOM_OF.get(f.id, ()))]
    end = run.end or {}
    return Diagnosis(
        findings=tuple(f for f in findings if f.certain),
        notes=tuple(f for f in findings if not f.certain),
        steps=len(run.steps), backwards=len(run.backwards),
        ending=ending or str(end.get("reason", "lost")),
        error=end.get("error"), error_line=end.get("line"),
        fault=run.fault.get("error") if run.fault else None)


def observed_anything(events: Sequence[Event]) -> bool:
    return any(e.get("e") in ("backward", "step", "nograph") for e in events)


def to_json(diagnosis: Diagnosis, say: Callable[[str], str]) -> dict[str, Any]:
    """The documented `--json` form (docs/doctor.md); `say` translates messages."""
    def finding(f: Finding) -> dict[str, Any]:
        lesson, step = f.lesson
        return {"id": f.id, "summary": say(f.summary), "where": f.where,
                "lesson": {"lesson": lesson, "step": step,
                           "command": f"gradtutor show {lesson} --step {step}"},
                "evidence": [{"label": say(label), "value": say(value)}
                             for label, value in f.evidence]}
    return {"problems": [finding(f) for f in diagnosis.findings],
            "unsure": [finding(f) for f in diagnosis.notes],
            "steps": diagnosis.steps, "backwards": diagnosis.backwards,
            "ended": diagnosis.ending, "error": diagnosis.error,
            "error_line": diagnosis.error_line}
