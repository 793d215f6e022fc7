"""Input families for exercises declared in YAML (`declared.py`): what a family makes, how it
calls the learner's function, what it observes, and the facts a declared check can name.

A family is the only Python a declared exercise rests on, and families are shared: every
exercise that hands the learner a fresh leaf and a loss uses `fresh-leaf`. Its worker side
(`cases`, `reference`, `observe`) imports torch inside its functions and runs in the worker;
its tutor side (`facts`, `columns`, `explainers`) is pure and runs in the tutor's process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gradtutor.checking.checkers import (
    checkpoint_facts,
    clip_facts,
    eval_facts,
    gradient_kinds,
    graph_facts,
    model_facts,
    param_groups,
    tensor_facts,
    training,
)
from gradtutor.checking.checkers.common import build_loss, count, fmt
from gradtutor.checking.checkers.grad_reading import (
    accumulations,
    backward_runs,
    fresh_leaf,
    leaf_cases,
    loss_words,
    multiple_of,
    not_the_grad,
    plain,
    ran,
    returns_backward,
)
from gradtutor.checking.checkers.grad_reading import reference as leaf_reference
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

Facts = dict[str, Any]
Data = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]  # (case, reference, observed)
# An explainer words why a fact of the first failing case is wrong: (facts of that case, the
# plain data they came from, the fact's name, the subject the rule gives, e.g. "You
# returned") -> a message.
Explainer = Callable[[Facts, Data, str, str], str]

# What PyTorch raises for a second backward through a graph it already freed: a family that
# `catches` it reports its first sentence as the fact `graph-freed` instead of an error.
CATCHABLE: Mapping[str, str] = {
    "graph-freed": "Trying to backward through the graph a second time",
}


@dataclass(frozen=True)
class Family:
    """One input family. Worker side: `cases(seed)` (plain data, no torch), `reference(case)`
    (facts of the inputs themselves, with torch, e.g. the true gradient), `observe(case, fn,
    trace, catches)` (calls the learner's or the solution's function; plain data back).
    Tutor side: `facts(case, reference, observed, parts)` (every fact a check may name, from
    plain data; `parts` names the values of a returned tuple, e.g. ("before", "after")),
    `names(parts)` (those facts' names, which `validate` holds conditions to), `columns(case)`
    (the evidence columns every table of columns starts with), `explainers`, `tables`
    (evidence tables of many rows, by name, from (case, reference, observed)) and `order`
    (which case a failing check shows first: the one that explains the most)."""

    arity: int
    names: Callable[[tuple[str, ...]], frozenset[str]]
    cases: Callable[[int], list[dict[str, Any]]]
    reference: Callable[[dict[str, Any]], dict[str, Any]]
    observe: Callable[[dict[str, Any], Any, Any, tuple[str, ...]], dict[str, Any]]
    facts: Callable[[dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]], Facts]
    columns: Callable[[dict[str, Any]], tuple[tuple[str, ...], tuple[str, ...]]]
    explainers: Mapping[str, Explainer]
    tables: Mapping[str, Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Table]] = (
        field(default_factory=dict))
    # the order in which cases are judged, by their facts: lower first (default: as drawn)
    order: Callable[[Facts], int] = lambda facts: 0
    valued: frozenset[str] = frozenset()  # explainers that explain the fact a rule names


# ---- fresh-leaf: fn(w, loss_fn) on a fresh leaf w and a named loss ------------------------

def _observe_leaf(case: dict[str, Any], fn: Any, trace: Any,
                  catches: tuple[str, ...]) -> dict[str, Any]:
    """`observe_returned`, and when the function returned two values, each of them; an error
    named in `catches` becomes data (its first sentence), so a check can name the mistake."""
    calls = [0]  # how often the function called loss_fn: each call builds a graph of its own
    try:
        seen = _leaf_call(case, fn, trace, calls)
    except RuntimeError as exc:
        said = str(exc)
        caught = [name for name in catches if CATCHABLE[name] in said]
        if not caught:
            raise
        first = said.strip().splitlines()[0]
        end = first.find(". ")
        return {"caught": caught[0], "said": first[:end + 1] if end > 0 else first,
                "events": list(trace.events), "loss_calls": calls[0]}
    return seen


def _leaf_call(case: dict[str, Any], fn: Any, trace: Any, calls: list[int]) -> dict[str, Any]:
    w = fresh_leaf(case)
    trace.watch({"w": w})
    loss = build_loss(case["loss"])

    def loss_fn(value: Any) -> Any:
        calls[0] += 1
        return loss(value)

    returned = fn(w, loss_fn)
    seen = {"returned": plain(trace, returned), "returned_is_grad": returned is w.grad,
            "grad_after": trace.values(w.grad), "events": list(trace.events),
            "returns_backward": returns_backward(fn), "loss_calls": calls[0]}
    if isinstance(returned, (tuple, list)):
        seen["length"] = len(returned)
        if len(returned) == 2:
            first, second = returned  # only trace.values' plain copies leave this function
            seen.update(first=plain(trace, first), second=plain(trace, second),
                        first_is_grad=first is not None and first is w.grad,
                        second_is_grad=second is w.grad,
                        same=first is not None and first is second)
    return seen


LEAF_FACTS = frozenset({
    "w", "gradient", "loss", "backward-count", "ran", "zero-grad-count",
    "grad-after-each-backward", "grad-after-second-backward", "graph-freed", "returned",
    "returned-is-grad", "returns-backward", "returned-words", "grad-after", "pair", "length",
    "same", "returned-times", "grad-after-times", "returned-kind", "grad-after-kind",
    "loss-calls"})


def _leaf_names(parts: tuple[str, ...]) -> frozenset[str]:
    return LEAF_FACTS | {f"{part}{suffix}" for part in parts
                         for suffix in ("", "-is-grad", "-times", "-kind")}


def _leaf_facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
                parts: tuple[str, ...]) -> Facts:
    runs = backward_runs(observed)
    steps = accumulations(observed)
    facts: Facts = {
        "w": case["w"], "gradient": reference["grad"], "loss": reference["loss"],
        "backward-count": runs, "ran": ran(runs),
        "zero-grad-count": count(observed["events"], "zero_grad"),
        "grad-after-each-backward": then([fmt(step) for step in steps]) or msg(
            "no backward ran"),
        "grad-after-second-backward": steps[1] if len(steps) > 1 else None,
        "graph-freed": (f"RuntimeError: {observed['said']}"
                        if observed.get("caught") == "graph-freed" else None),
        "loss-calls": observed["loss_calls"],
    }
    if "caught" in observed:
        return facts
    facts.update({
        "returned": observed["returned"], "returned-is-grad": observed["returned_is_grad"],
        "returns-backward": observed["returns_backward"], "grad-after": observed["grad_after"],
        "returned-words": _described(observed),
        "pair": observed.get("length") == 2, "length": observed.get("length"),
        "same": bool(observed.get("same")),
    })
    if facts["pair"] and len(parts) == 2:
        for part, key in zip(parts, ("first", "second"), strict=True):
            facts[part] = observed[key]
            facts[f"{part}-is-grad"] = observed[f"{key}_is_grad"]
    for name in ("returned", "grad-after", *parts):
        if name in facts:
            facts[f"{name}-times"] = multiple_of(facts[name], reference["grad"])
            value = facts[name]
            facts[f"{name}-kind"] = (value.get("not_a_tensor", "object")
                                     if isinstance(value, dict) else None)
    return facts


def then(values: list[str]) -> str:
    """`a then b then c`: values one after another, as a message."""
    if len(values) <= 1:
        return values[0] if values else ""
    return msg("{earlier} then {later}", earlier=then(values[:-1]), later=values[-1])


def _described(observed: dict[str, Any]) -> str:
    """What the function returned, in words: "None (is `return` missing?)", "a tuple of 3
    values", "a single tensor, [1, 2]"."""
    returned = observed["returned"]
    if observed.get("length") is not None:
        return msg("a {kind} of {length} values", kind=returned["not_a_tensor"],
                   length=observed["length"])
    if returned is None:
        return msg("None (is `return` missing?)")
    if isinstance(returned, dict):
        return msg("a {kind}", kind=returned["not_a_tensor"])
    return msg("a single tensor, {value}", value=fmt(returned))


def _leaf_columns(case: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("w", "loss_fn(w)"), (fmt(case["w"]), loss_words(case))


def _not_the_gradient(facts: Facts, data: Data, value: str, subject: str) -> str:
    """Why the fact `value` is not the gradient (`grad_reading.not_the_grad`)."""
    case = {"w": facts["w"]}
    expected = {"grad": facts["gradient"], "loss": facts["loss"]}
    returned = value == "returned"
    return not_the_grad(subject, facts[value], case, expected, facts["backward-count"],
                        bool(facts.get(f"{value}-is-grad")),
                        returned and bool(facts.get("returns-backward")), returned)


FRESH_LEAF = Family(
    arity=2,
    names=_leaf_names,
    cases=leaf_cases,
    reference=leaf_reference,
    observe=_observe_leaf,
    facts=_leaf_facts,
    columns=_leaf_columns,
    explainers={"not-the-gradient": _not_the_gradient},
    valued=frozenset({"not-the-gradient"}),
)

# ---- param-groups: fn(optimizer), every parameter of its groups holding a gradient --------

PARAM_GROUPS = Family(
    arity=1,
    names=lambda parts: param_groups.NAMES,
    cases=param_groups.cases,
    reference=param_groups.reference,
    observe=param_groups.observe,
    facts=param_groups.facts,
    columns=lambda case: ((), ()),
    explainers={},
    tables={"grads": lambda case, reference, observed: param_groups.grads_table(
                reference, observed),
            "weights": lambda case, reference, observed: param_groups.weights_table(
                reference, observed)},
)

# ---- gradient-kinds: fn(model, max_norm) -> {name: class}, gradients of chosen kinds --------

GRADIENT_KINDS = Family(
    arity=2,
    names=lambda parts: gradient_kinds.NAMES,
    cases=gradient_kinds.cases,
    reference=gradient_kinds.reference,
    observe=gradient_kinds.observe,
    facts=gradient_kinds.facts,
    columns=lambda case: ((), ()),
    explainers={"misclassified": lambda facts, data, value, subject:
                gradient_kinds.misclassified(*data)},
    tables={"classification": gradient_kinds.classification_table},
    order=gradient_kinds.order,
)

# ---- training: fn(model, optimizer, loss_fn, batches), with leftovers in .grad -------------

TRAINING = Family(
    arity=4,
    names=lambda parts: training.NAMES,
    cases=training.cases,
    reference=training.reference,
    observe=training.observe,
    facts=training.facts,
    columns=lambda case: ((), ()),
    explainers={},
    tables={"step-gradient": training.step_table, "step-leftovers": training.leftovers_table},
)

# ---- leaf-fn and values-fn: what a returned value is to autograd (tensor_facts.py) ----------

LEAF_FN = Family(
    arity=1, names=lambda parts: tensor_facts.LEAF_FN_FACTS, cases=tensor_facts.leaf_cases,
    reference=tensor_facts.no_reference, observe=tensor_facts.observe_leaf_fn,
    facts=tensor_facts.leaf_fn_facts, columns=tensor_facts.leaf_columns, explainers={})

VALUES_FN = Family(
    arity=1, names=lambda parts: tensor_facts.VALUES_FN_FACTS, cases=tensor_facts.values_cases,
    reference=tensor_facts.no_reference, observe=tensor_facts.observe_values_fn,
    facts=tensor_facts.values_fn_facts, columns=tensor_facts.values_columns, explainers={})

# ---- squared-error: fn(w, x, y) on a known loss, for backward and the graph (graph_facts.py)

SQUARED_ERROR = Family(
    arity=3, names=lambda parts: graph_facts.NAMES, cases=graph_facts.cases,
    reference=graph_facts.reference, observe=graph_facts.observe, facts=graph_facts.facts,
    columns=graph_facts.columns, explainers={})

# ---- on a small nn.Sequential (model_facts.py): freezing, clipping, evaluating, saving --------

MODEL_SETUP = Family(
    arity=1, names=lambda parts: model_facts.SETUP_NAMES, cases=model_facts.setup_cases,
    reference=model_facts.setup_reference, observe=model_facts.observe_setup,
    facts=model_facts.setup_facts, columns=lambda case: ((), ()), explainers={},
    tables={"parameters": model_facts.parameters_table})

CLIP_STEP = Family(
    arity=6, names=lambda parts: clip_facts.CLIP_NAMES, cases=clip_facts.clip_cases,
    reference=clip_facts.clip_reference, observe=clip_facts.observe_clip,
    facts=clip_facts.clip_facts, columns=clip_facts.clip_columns, explainers={},
    tables={"norms": clip_facts.norms_table})

EVALUATION = Family(
    arity=3, names=lambda parts: eval_facts.EVAL_NAMES, cases=eval_facts.eval_cases,
    reference=eval_facts.eval_reference, observe=eval_facts.observe_eval,
    facts=eval_facts.eval_facts, columns=eval_facts.eval_columns, explainers={})

CHECKPOINT = Family(
    arity=3, names=lambda parts: checkpoint_facts.CHECKPOINT_NAMES,
    cases=checkpoint_facts.checkpoint_cases, reference=checkpoint_facts.checkpoint_reference,
    observe=checkpoint_facts.observe_checkpoint, facts=checkpoint_facts.checkpoint_facts,
    columns=checkpoint_facts.checkpoint_columns, explainers={})

FAMILIES: Mapping[str, Family] = {"fresh-leaf": FRESH_LEAF, "param-groups": PARAM_GROUPS,
                                  "gradient-kinds": GRADIENT_KINDS, "training": TRAINING,
                                  "leaf-fn": LEAF_FN, "values-fn": VALUES_FN,
                                  "squared-error": SQUARED_ERROR,
                                  "model-setup": MODEL_SETUP, "clip-step": CLIP_STEP,
                                  "evaluation": EVALUATION, "checkpoint": CHECKPOINT}

