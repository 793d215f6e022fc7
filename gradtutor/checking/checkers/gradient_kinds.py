"""The `gradient-kinds` input family (`FAMILY`, registered in `families.py`), on which
grad-health is declared: the function gets a model after backward and a max_norm, and returns
a dict that classifies each named parameter's gradient as "dead" (None or all zeros),
"exploding" (any nan/inf, or a 2-norm above max_norm) or "ok".

Each case is a model after a real backward pass whose gradients were then set to chosen
kinds: unused layers (None), all zeros, some zeros (not all), nan or inf entries, norms just
above and just below max_norm and one exactly equal to it (max_norm is a multiple of 1/64,
exact in float32), huge norms, entries that sum to zero without being zero, tiny
but nonzero ones: one a millionth of max_norm, and one whose norm (1e-12 to 1e-9) does not
depend on max_norm,
so that no absolute "vanishing" threshold (grad.abs().max() < 1e-6, say) calls it dead by
luck of the seed. In every seed one case holds a norm just above max_norm beside one just
below it, so a total norm over all parameters, used for each one, misclassifies one of them.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from gradtutor.checking.checkers.family import Family
from gradtutor.checking.feedback import joined, listed
from gradtutor.checking.verdict import Table
from gradtutor.i18n import msg

CASES = 3
CLASSES = ("dead", "exploding", "ok")
# The kinds of gradient a case sets up, and the class each one belongs to.
KINDS = {"ok": "ok", "below": "ok", "at-max": "ok", "sum-zero": "ok", "some-zero": "ok",
         "tiny": "ok", "vanishing": "ok",
         "above": "exploding",
         "huge": "exploding", "nan": "exploding", "inf": "exploding", "zero": "dead",
         "none": "dead"}
LAYER_NAMES = ("encoder", "decoder", "head", "proj", "gate", "embed", "mixer", "out",
               "hidden", "skip")


def param_names(layer: dict[str, Any]) -> list[str]:
    """The names nn.Module gives this layer's parameters, in order."""
    linears = [f"{layer['name']}.0", f"{layer['name']}.2"] if layer["block"] else [layer["name"]]
    kinds = ("weight", "bias") if layer["bias"] else ("weight",)
    return [f"{linear}.{kind}" for linear in linears for kind in kinds]


def cases(seed: int) -> list[dict[str, Any]]:
    import random  # here: the tutor, which never draws cases, need not import it

    rng = random.Random(seed)
    with_unused = rng.sample(range(CASES), 2)
    out: list[dict[str, Any]] = []
    for i in range(CASES):
        layers = [{"name": name, "block": rng.random() < 0.3, "bias": rng.random() < 0.8,
                   "used": True} for name in rng.sample(LAYER_NAMES, rng.randint(4, 5))]
        if i in with_unused:
            rng.choice(layers)["used"] = False
        out.append({"seed": rng.randrange(2**31), "dim": rng.randint(2, 4),
                    # a multiple of 1/64: exact in float32, so a norm can equal it exactly
                    "max_norm": round(rng.uniform(0.5, 20.0) * 64) / 64, "layers": layers,
                    "kinds": {name: "none" for layer in layers if not layer["used"]
                              for name in param_names(layer)}})
    # Every kind appears for every seed, at random places; the other parameters get any kind.
    # One case holds "above", "below" and "vanishing" and no nan: one total norm over its
    # gradients is finite and above max_norm, so a report that uses it for every parameter
    # calls all three exploding, and no norm of the vanishing gradient's own would.
    slots = [(case, name) for case in out for layer in case["layers"] if layer["used"]
             for name in param_names(layer)]
    rng.shuffle(slots)
    trio = slots[0][0]
    mine = [slot for slot in slots if slot[0] is trio]  # 3+: 4+ layers, at most one unused
    slots = mine[:3] + [slot for slot in slots if slot[0] is not trio] + mine[3:]
    designed = ["above", "below", "vanishing", "nan", "inf"] + [
        kind for kind in KINDS if kind not in ("none", "above", "below", "vanishing", "nan",
                                               "inf")]
    assert len(slots) >= len(designed)  # and 3+ slots in each other case: nan is not in trio's
    for n, (case, name) in enumerate(slots):
        case["kinds"][name] = designed[n] if n < len(designed) else rng.choice(
            [kind for kind in designed if kind != "nan" or case is not trio])
    for case in out:  # in the order nn.Module names them
        case["kinds"] = {name: case["kinds"][name] for layer in case["layers"]
                         for name in param_names(layer)}
    return out


def _designed(kind: str, shape: Any, max_norm: float, gen: Any) -> Any:
    """A gradient of the given kind (float32, like an ordinary model's)."""
    import torch

    numel = math.prod(shape)
    direction = torch.randn(shape, generator=gen, dtype=torch.float64)
    direction /= direction.norm()
    fraction = float(torch.rand((), generator=gen, dtype=torch.float64))
    if kind in ("below", "above"):
        # equal-sized entries: every entry is far below max_norm, only the 2-norm is near it
        signs = torch.randint(0, 2, shape, generator=gen).to(torch.float64) * 2 - 1
        even = signs * (1 + 0.1 * torch.rand(shape, generator=gen, dtype=torch.float64))
        margin = 0.003 + 0.03 * fraction
        grad = even / even.norm() * max_norm * (1 - margin if kind == "below" else 1 + margin)
    elif kind == "huge":
        grad = direction * max_norm * 10 ** (3 + 3 * fraction)
    elif kind == "tiny":
        grad = direction * max_norm * 1e-6
    elif kind == "vanishing":  # the same size whatever max_norm is
        grad = direction * 10 ** (-12 + 2.9 * fraction)
    elif kind == "zero":
        grad = torch.zeros(shape, dtype=torch.float64)
    elif kind == "at-max":  # one entry of exactly max_norm: a norm equal to it, not above
        grad = torch.zeros(shape, dtype=torch.float64)
        grad.reshape(-1)[int(fraction * numel) % numel] = max_norm
    elif kind == "some-zero":  # at least one entry zero, at least one not: alive
        grad = direction * max_norm * (0.05 + 0.75 * fraction)
        zeros = 1 + int(fraction * (numel - 2)) if numel > 2 else 1
        grad.reshape(-1)[torch.randperm(numel, generator=gen)[:min(zeros, numel - 1)]] = 0.0
    elif kind == "sum-zero":
        # +a/-a pairs of quarters scaled by a power of two: the sum is exactly 0 in any order
        half = torch.randint(1, 5, (numel // 2,), generator=gen).to(torch.float64) / 4
        values = torch.cat([half, -half, torch.zeros(numel % 2, dtype=torch.float64)])
        values = values[torch.randperm(numel, generator=gen)]
        power = math.floor(math.log2(0.8 * max_norm / float(values.norm())))
        grad = (values * 2.0 ** power).reshape(shape)
    else:
        grad = direction * max_norm * (0.05 + 0.75 * fraction)
        if kind in ("nan", "inf"):
            flat = grad.reshape(-1)
            # 1-2 entries, never all: a test that calls only an all-nan gradient exploding
            # must fail on every seed (every layer has 2+ entries)
            count = max(1, min(numel - 1, 1 + int(fraction * 2)))
            picks = torch.randperm(numel, generator=gen)[:count]
            for j, index in enumerate(picks.tolist()):
                flat[index] = math.nan if kind == "nan" else (-math.inf if j % 2 else math.inf)
    return grad.to(torch.float32)


def setup(case: dict[str, Any]) -> Any:
    """The model after backward, with each parameter's .grad set to its case's kind."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(case["seed"])
    dim = case["dim"]
    layers: dict[str, nn.Module] = {}
    for layer in case["layers"]:
        layers[layer["name"]] = (
            nn.Sequential(nn.Linear(dim, dim, bias=layer["bias"]), nn.ReLU(),
                          nn.Linear(dim, dim, bias=layer["bias"]))
            if layer["block"] else nn.Linear(dim, dim, bias=layer["bias"]))
    model = nn.ModuleDict(layers)
    with torch.no_grad():  # weights from the case's generator, not the global one
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    h = torch.randn(3, dim, generator=gen)
    for layer in case["layers"]:
        if layer["used"]:
            h = model[layer["name"]](h)
    torch.autograd.backward(h.pow(2).mean())
    for name, p in model.named_parameters():
        kind = case["kinds"][name]
        p.grad = None if kind == "none" else _designed(kind, tuple(p.shape), case["max_norm"], gen)
    return model


def reference(case: dict[str, Any]) -> dict[str, Any]:
    import torch

    model = setup(case)
    params: dict[str, Any] = {}
    for name, p in model.named_parameters():
        g = p.grad
        info: dict[str, Any] = {"kind": case["kinds"][name], "class": KINDS[case["kinds"][name]],
                                "numel": p.numel(), "none": g is None, "nan": 0, "inf": 0,
                                "zeros": 0, "norm": None}
        if g is not None:
            info.update(nan=int(torch.isnan(g).sum()), inf=int(torch.isinf(g).sum()),
                        zeros=int((g == 0).sum()))
            if torch.isfinite(g).all():
                info["norm"] = float(g.double().norm())
        params[name] = info
    assert list(params) == [n for layer in case["layers"] for n in param_names(layer)]
    return {"params": params}


def plain_report(value: Any) -> dict[str, Any]:
    """The returned dict as plain data; keys must be real str, values are read as str."""
    if not isinstance(value, dict):
        return {"not_a_dict": type(value).__name__}
    entries: dict[str, Any] = {}
    bad_keys: list[str] = []
    for key, item in dict.items(value):  # the real contents, whatever a subclass claims
        if type(key) is not str:
            bad_keys.append(type(key).__name__)
        else:
            entries[key] = str.__str__(item) if isinstance(item, str) else {
                "type": type(item).__name__}
    return {"entries": entries, "bad_keys": bad_keys}


def observe(case: dict[str, Any], fn: Any, trace: Any,
            catches: tuple[str, ...] = ()) -> dict[str, Any]:
    import torch

    model = setup(case)
    try:
        returned = fn(model, case["max_norm"])
    except (AttributeError, TypeError) as exc:
        unused = [p for p in model.parameters() if p.grad is None]
        if not unused:
            raise
        # Did a None gradient cause it? Run again with zeros there (also dead) and see.
        for p in unused:
            p.grad = torch.zeros_like(p)
        try:
            fn(model, case["max_norm"])
        except Exception:
            raise exc from None
        return {"crashed_on_none": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"report": {**plain_report(returned), **trace.uncalled(returned)}}


# --- judge: plain data only ---------------------------------------------------------------

def describe(info: dict[str, Any], max_norm: float) -> str:
    """A parameter's gradient in a few words, for the evidence table."""
    if info["none"]:
        return "None"
    if info["nan"] or info["inf"]:
        parts = [msg("{count} {kind}", count=info[k], kind=k) for k in ("nan", "inf") if info[k]]
        return msg("{counts} of {numel} entries", counts=joined(parts), numel=info["numel"])
    if info["norm"] == 0:
        return msg("all zeros")
    if info.get("zeros"):
        return msg("{zeros} of {numel} entries zero, norm {norm:.6g} (max_norm {max_norm:g})",
                   zeros=info["zeros"], numel=info["numel"], norm=info["norm"],
                   max_norm=max_norm)
    return msg("norm {norm:.6g} (max_norm {max_norm:g})", norm=info["norm"], max_norm=max_norm)


def why(name: str, info: dict[str, Any], got: str, max_norm: float) -> tuple[str, str]:
    """The misconception behind one misclassification, in the learner's terms, and a key
    that is the same for every parameter misread the same way."""
    kind, right = info["kind"], info["class"]
    norm = f"{info['norm']:.6g}" if info["norm"] is not None else ""
    if kind == "nan":
        return "nan", msg("'{name}' has nan entries, so it is exploding: its norm is nan, and "
                          "nan > max_norm is False, so a test of the norm alone misses it. Look at "
                          "how your function tests for nan and inf.",
                          name=name)
    if kind == "inf":
        return "inf", msg("'{name}' has an inf entry, so it is exploding.", name=name)
    if kind == "none":
        return "none", msg("The .grad of '{name}' is None: it got no gradient at all, so it is "
                           "dead.", name=name)
    if kind == "zero":
        return "zero", msg("'{name}' has a gradient of all zeros: it is dead. A zero gradient "
                           "is a tensor, not None: look at how your function tells a tensor of "
                           "zeros from None.", name=name)
    if kind in ("above", "huge"):
        return "above", msg("'{name}' has a gradient norm of {norm}, above max_norm "
                            "{max_norm:g}: it is exploding. Look at which norm your function "
                            "compares with max_norm: each parameter's own 2-norm counts.",
                            name=name, norm=norm, max_norm=max_norm)
    if kind == "sum-zero" and got == "dead":
        return "sum-zero", msg("The entries of the gradient of '{name}' add up to zero, but "
                               "they are not all zero: it is ok. Look at how your function "
                               "decides that a gradient is all zeros: a sum of zero is not "
                               "enough.", name=name)
    if kind == "at-max" and got == "exploding":
        return "at-max", msg("'{name}' has a gradient norm of exactly max_norm, {norm}: not "
                             "above it, so it is ok. Look at how your function compares the "
                             "norm with max_norm.", name=name, norm=norm)
    if kind == "some-zero" and got == "dead":
        return "some-zero", msg("Some entries of the gradient of '{name}' are zero, but not all "
                                "of them: it is ok. Dead means every entry is zero: look at how "
                                "your function combines the test of each entry.", name=name)
    if kind in ("tiny", "vanishing") and got == "dead":
        return "tiny", msg("'{name}' has a tiny gradient (norm {norm}), but not a zero one: it "
                           "is ok. Dead means every entry is exactly zero.", name=name, norm=norm)
    if got == "exploding" and info["norm"] is not None:
        return "below", msg("'{name}' has a gradient norm of {norm}, not above max_norm "
                            "{max_norm:g}: it is ok. Look at which norm your function "
                            "compares with max_norm: each parameter's own 2-norm counts, not "
                            "the largest entry, the sum of absolute values, or a total over "
                            "all parameters.", name=name, norm=norm,
                            max_norm=max_norm)
    return f"{kind}-{got}", msg("'{name}' is {right}, not {got}.", name=name, right=right,
                                got=got)


def as_if_total(exp: dict[str, Any], entries: dict[str, Any],
                max_norm: float) -> tuple[set[str], str] | None:
    """When the report gave every finite, nonzero gradient the same class, wrongly for some,
    and that class is what one total norm over all the gradients gives: (the names it
    explains, the reason). A total over the finite gradients only counts as well. Only
    where no norm of a gradient's own could give that class to all of them: "exploding"
    for one a thousandth of max_norm, or "ok" for one a hundred times above it."""
    finite = {name: info for name, info in exp["params"].items() if info["norm"]}
    answers = [entries.get(name) for name in finite]
    got = answers[0] if answers else None
    if len(finite) < 2 or got not in CLASSES or any(a != got for a in answers):
        return None
    wrong = [name for name, info in finite.items() if info["class"] != got]
    norms = [info["norm"] for info in finite.values()]
    if not wrong or not (min(norms) < max_norm / 1000 if got == "exploding"
                         else max(norms) > max_norm * 100):
        return None
    total = math.sqrt(sum(info["norm"] ** 2 for info in finite.values()))
    by_finite = "exploding" if total > max_norm else "ok"
    nan = any(info["nan"] for info in exp["params"].values())
    inf = any(info["inf"] for info in exp["params"].values())
    shown = (f"{total:.6g}" if got == by_finite else
             "nan" if nan and got == "ok" else  # nan > max_norm is False
             "inf" if inf and not nan and got == "exploding" else None)
    if shown is None:
        return None
    info = finite[wrong[0]]
    return set(finite), msg(
        "Every parameter with a finite, nonzero gradient got the same answer, '{got}', as if "
        "you compared one total norm of all the gradients ({total}) with max_norm "
        "{max_norm:g}. Each parameter's own 2-norm counts: '{name}' has {norm}, so it is "
        "{right}.", got=got, total=shown, max_norm=max_norm,
        name=wrong[0], norm=f"{info['norm']:.6g}", right=info["class"])


def _dict_problem(exp: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """What is wrong with the returned dict as a report, as facts: `dict-problem` ('none',
    'not-a-dict', 'bad-keys', 'missing-unused', 'missing', 'extra', 'bad-values', or None)
    and the words a sentence about it needs."""
    if "not_a_dict" in report:
        kind = report["not_a_dict"]
        return {"dict-problem": "none" if kind == "NoneType" else "not-a-dict",
                "returned-type": kind,
                "returned": {"not_a_tensor": kind, **({"uncalled": report["uncalled"]}
                                                      if "uncalled" in report else {})}}
    if report["bad_keys"]:
        return {"dict-problem": "bad-keys", "key-type": report["bad_keys"][0]}
    names = list(exp["params"])
    entries = report["entries"]
    missing = [n for n in names if n not in entries]
    if missing:
        unused = all(exp["params"][n]["none"] for n in missing)
        return {"dict-problem": "missing-unused" if unused else "missing",
                "missing-names": ", ".join(repr(n) for n in missing[:4])}
    extra = [n for n in entries if n not in exp["params"]]
    if extra:
        return {"dict-problem": "extra", "extra-names": ", ".join(repr(n) for n in extra[:4])}
    strings = sorted({v for v in entries.values() if isinstance(v, str) and v not in CLASSES})
    others = sorted({v["type"] for v in entries.values() if not isinstance(v, str)})
    if strings or others:
        return {"dict-problem": "bad-values", "bad-values": listed(
            [repr(v) for v in strings] + [msg("a {kind}", kind=kind) for kind in others])}
    return {"dict-problem": None}


def facts(case: dict[str, Any], reference: dict[str, Any], observed: dict[str, Any],
          parts: tuple[str, ...]) -> dict[str, Any]:
    """What a check may name of one case: what is wrong with the dict as a report (only when
    the function returned), and how many parameters it classified wrong, or the error it
    raised on a None gradient (only when there is a dict of classes, or that crash)."""
    found: dict[str, Any] = {"max-norm": case["max_norm"]}
    if "crashed_on_none" in observed:
        unused = [n for n, info in reference["params"].items() if info["none"]]
        return {**found, "crashed-on-none": observed["crashed_on_none"],
                "unused-names": ", ".join(repr(n) for n in unused[:2]), "wrong-count": 0}
    if "report" not in observed:
        return found
    report = observed["report"]
    found.update(_dict_problem(reference, report))
    if "entries" in report:
        entries = report["entries"]
        found.update({"crashed-on-none": None, "wrong-count": len(_wrong(reference, entries)),
                      "total-norm-used": as_if_total(reference, entries,
                                                     case["max_norm"]) is not None})
    return found


NAMES = frozenset({"max-norm", "crashed-on-none", "unused-names", "wrong-count",
                   "total-norm-used", "dict-problem", "returned-type", "returned", "key-type",
                   "missing-names", "extra-names", "bad-values"})


def order(found: dict[str, Any]) -> int:
    """A crash on a None gradient first: it explains more than a misread in another case;
    then a case that shows one total norm used for every parameter."""
    if found.get("crashed-on-none"):
        return 0
    return 1 if found.get("total-norm-used") else 2


def _wrong(exp: dict[str, Any], entries: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(name, what its gradient is, the class the report gave) of each misclassified one."""
    return [(name, info, entries[name]) for name, info in exp["params"].items()
            if entries.get(name) in CLASSES and entries[name] != info["class"]]


def misclassified(case: dict[str, Any], reference: dict[str, Any],
                  observed: dict[str, Any]) -> str:
    """How many parameters the report misclassified, and the misconceptions behind them: one
    total norm used for all, then at most two of the kinds misread, each said once."""
    max_norm = case["max_norm"]
    entries = observed["report"]["entries"]
    wrong = _wrong(reference, entries)
    reasons: dict[str, str] = {}
    total = as_if_total(reference, entries, max_norm)
    explained: set[str] = set()
    if total is not None:
        explained, reasons["total"] = total
    for name, info, got in wrong:
        if name in explained:
            continue
        key, reason = why(name, info, got, max_norm)
        if key not in reasons and len(reasons) < 2:
            reasons[key] = reason
    count = len(wrong)
    why_wrong = list(reasons.values())
    wrongly = (msg("You classified 1 parameter wrong.") if count == 1 else
               msg("You classified {count} parameters wrong.", count=count))
    return (msg("{wrongly} {why}", wrongly=wrongly, why=why_wrong[0]) if len(why_wrong) == 1
            else msg("{wrongly} {why} {more}", wrongly=wrongly, why=why_wrong[0],
                     more=why_wrong[1]))


def classification_table(case: dict[str, Any], reference: dict[str, Any],
                         observed: dict[str, Any]) -> Table:
    """Each misclassified parameter: its gradient in words, its class, and the report's."""
    entries = observed.get("report", {}).get("entries", {})
    wrong = _wrong(reference, entries)
    return Table((msg("parameter"), msg("its gradient"), msg("should be"), msg("yours")),
                 tuple((name, describe(info, case["max_norm"]), info["class"], got)
                       for name, info, got in wrong), frozenset(range(len(wrong))))


def _holds(kind: str, drawn: list[dict[str, Any]]) -> bool:
    """Whether one seed's cases hold a gradient of `kind`."""
    return any(kind in case["kinds"].values() for case in drawn)


FAMILY = Family(
    arity=2, names=lambda parts: NAMES, cases=cases, reference=reference, observe=observe,
    facts=facts, tables={"classification": classification_table}, order=order,
    explainers={"misclassified": lambda facts, data, value, subject: misclassified(*data)},
    fixed={kind: functools.partial(_holds, kind) for kind in KINDS})
