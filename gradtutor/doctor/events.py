"""The doctor's evidence: the probe's events (probe.py's JSON lines, decoded), checked and sorted
by kind into a `Run`, what a rule reports (`Finding`, with the lesson step that teaches each
problem), and the small readings the rules share. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gradtutor.i18n import Msg

Event = Mapping[str, Any]

# Each problem's lesson step: (lesson, step id), as `gradtutor show LESSON --step ID` shows it.
LESSON_STEPS: Mapping[str, tuple[str, str]] = {
    "never-cleared": ("grad", "hidden-bug"),
    "cleared-before-step": ("grad", "right-order"),
    "cleared-other": ("grad", "zero-grad-scope"),
    "step-before-backward": ("grad", "right-order"),
    "accumulation-scale": ("grad", "why-accumulation"),
    "not-in-optimizer": ("grad", "none-grad-clue"),
    "graph-broken": ("backward", "broken-graph"),
    "exploding": ("grad", "debug-grads"),
    "nan": ("grad", "debug-grads"),
    "dead-units": ("grad", "dead-relu"),
    "eval-graph": ("training", "train-eval"),
}
PROBLEM_IDS = tuple(LESSON_STEPS)

MAX_NAMED = 4  # parameters named in one evidence row


@dataclass(frozen=True)
class Finding:
    """One problem (or, with `certain` False, a pattern the doctor cannot judge)."""

    id: str
    summary: Msg
    where: str | None
    evidence: tuple[tuple[Msg, str], ...]
    certain: bool = True

    @property
    def lesson(self) -> tuple[str, str]:
        return LESSON_STEPS[self.id]



@dataclass
class Run:
    """The events, sorted by kind, with what the rules look up often."""

    leaves: dict[int, Event] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    module_names: dict[int, str] = field(default_factory=dict)
    modules: dict[int, Event] = field(default_factory=dict)
    optimizers: dict[int, Event] = field(default_factory=dict)
    backwards: list[Event] = field(default_factory=list)
    steps: list[Event] = field(default_factory=list)
    clears: list[Event] = field(default_factory=list)
    forwards: list[Event] = field(default_factory=list)
    unused: list[Event] = field(default_factory=list)
    nograph: list[Event] = field(default_factory=list)
    cuts: list[Event] = field(default_factory=list)  # the script's calls that cut a graph
    evals: list[str] = field(default_factory=list)  # where its source switches to eval mode
    calls: set[str] | None = None  # the names its source calls (None: not read)
    frozen: set[int] = field(default_factory=set)  # requires_grad=False when last named
    end: Event | None = None
    fault: Event | None = None
    torch: bool = False

    def name(self, pid: int) -> str:
        if pid in self.names:
            return self.names[pid]
        shape = "x".join(str(n) for n in self.leaves.get(pid, {}).get("shape", [])) or "scalar"
        return f"#{pid} ({shape})"

    def module_name(self, mid: int) -> str:
        return self.module_names.get(mid, f"{self.modules.get(mid, {}).get('cls', '?')} #{mid}")

    def owner_class(self, pid: int) -> str | None:
        for module in self.modules.values():
            if pid in module.get("direct", ()):
                return str(module.get("cls"))
        return None

    def stepped(self) -> set[int]:
        """The parameters of the optimizers that stepped."""
        return {int(pid) for step in self.steps for pid in step["g"]}


KINDS: Mapping[str, str] = {"leaf": "leaves", "module": "modules", "optimizer": "optimizers",
                            "backward": "backwards", "step": "steps", "clear": "clears",
                            "forward": "forwards", "unused": "unused", "nograph": "nograph",
                            "cut": "cuts"}


# The keys each kind of event must have to be used (others are dropped): the events come
# from a process running the learner's code, and a judge that crashes helps nobody.
REQUIRED: Mapping[str, tuple[str, ...]] = {
    "leaf": ("pid",), "module": ("mod",), "optimizer": ("opt",),
    "backward": ("n", "i", "pre", "reached", "norm"), "step": ("n", "i", "opt", "g"),
    "clear": ("n", "how", "owner", "pids"), "forward": ("n", "mod"), "unused": ("mod",),
    "cut": ("n", "how", "line", "reached"), "evals": ("at",),
    "calls": ("names",),
}


def well_formed(event: Any) -> bool:
    if not isinstance(event, Mapping):
        return False
    needed = REQUIRED.get(str(event.get("e")), ())
    return all(key in event for key in needed) and (event.get("e") != "step" or all(
        isinstance(g, list) and len(g) >= 3 for g in event["g"].values()))


def sort_events(events: Iterable[Event]) -> Run:
    run = Run()
    for event in filter(well_formed, events):
        kind = event.get("e")
        if kind == "leaf":
            run.leaves[int(event["pid"])] = event
        elif kind == "module":
            run.modules[int(event["mod"])] = event
        elif kind == "optimizer":
            run.optimizers[int(event["opt"])] = event
        elif kind == "names":
            run.names.update({int(k): str(v) for k, v in event.get("params", {}).items()})
            run.module_names.update({int(k): str(v) for k, v in
                                     event.get("modules", {}).items()})
            if isinstance(event.get("frozen"), list):
                run.frozen = {p for p in event["frozen"] if isinstance(p, int)}
        elif kind == "evals":
            run.evals = [str(at) for at in event["at"]]
        elif kind == "calls" and isinstance(event["names"], list):
            run.calls = {str(name) for name in event["names"]}
        elif kind == "end":
            run.end = event
        elif kind == "fault":
            run.fault = event
        elif kind == "torch":
            run.torch = True
        elif isinstance(kind, str) and kind in KINDS:
            getattr(run, KINDS[kind]).append(event)
    return run


def named(run: Run, pids: Iterable[int]) -> str:
    """Parameter names for an evidence row, at most MAX_NAMED of them and how many more."""
    names = sorted({run.name(pid) for pid in pids})
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" (+{len(names) - MAX_NAMED})" if len(names) > MAX_NAMED else "")


def number(value: float | None) -> str:
    if value is None:
        return "?"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def total_norm(norms: Iterable[float | None]) -> float:
    return math.sqrt(sum(n * n for n in norms if n is not None))


def step_norms(step: Event) -> list[float | None]:
    return [g[1] for g in step["g"].values()]


def step_label(run: Run, step: Event) -> str:
    opt = run.optimizers.get(int(step["opt"]), {})
    return f"{step['i']} ({opt.get('cls', step.get('cls', '?'))})"


def forward_line(run: Run) -> str | None:
    training = [f for f in run.forwards if f.get("grad")]
    return training[0].get("line") if training else None


def last_norms_before(run: Run, n: int) -> dict[int, float | None]:
    """Each parameter's gradient norm after the last backward before event `n`."""
    found: dict[int, float | None] = {}
    for backward in run.backwards:
        if backward["n"] > n:
            break
        found.update({int(p): v for p, v in backward["norm"].items()})
    return found
