"""Exercises judged from their lesson YAML alone: no Python of their own.

An exercise that names an input family (`inputs`, from `families.FAMILIES`) instead of a
`checker` declares its checks in the lesson. The family makes each case's inputs, calls the
function and observes what happened; the exercise's own `solution`, run on the same inputs in
the reference process, is the reference. Each check lists conditions that hold in every case
of a correct run (`expect`); for the first case where one does not, the first `fail` rule
whose `when` holds says what went wrong, in words the lesson gives (and translates).

A condition reads `FACT is TEST` or `FACT is not TEST`, and several joined by ` or ` hold when
one does. FACT is one of the family's facts (`returned`, `grad-after`, `backward-count`...)
and TEST one of:

- `none`, `true`, `false`, a number (`0`, `2`), `more than N`, `less than N`, a word in
  quotes (`'missing'`);
- `solution`: like the same fact of the solution on the same case (values within a tolerance);
- another fact (`gradient`), or a multiple of one (`2x gradient`), within the tolerance;
- `zeros`: a tensor of zeros; `shaped like FACT`; `a KIND`: not a tensor but a KIND
  (`float`, `bool`, `str`, `ellipsis`...), or `a tensor`.

The worker side (`WorkerChecker`) is what a check's worker and the reference process load
from the request; the tutor side (`judge`) is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeGuard

from gradtutor.checking.checkers.common import (
    close,
    flat,
    fmt,
    shape,
    uncalled,
    uncalled_lines_words,
    uncalled_words,
)
from gradtutor.checking.checkers.families import FAMILIES
from gradtutor.checking.checkers.family import CATCHABLE, Facts, Family
from gradtutor.checking.verdict import Check, Table
from gradtutor.i18n import Msg, msg, placeholders
from gradtutor.lessons.model import Column, DeclaredCheck, Exercise, Rule

if TYPE_CHECKING:
    from gradtutor.checking.protocol import DeclaredSpec

# ---- conditions -----------------------------------------------------------------------------

_NUMBER = r"-?\d+(?:\.\d+)?"
_NAME = r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*"
_CLAUSE = re.compile(rf"\s*({_NAME}) is (not )?(.+?)\s*")
_MULTIPLE = re.compile(rf"({_NUMBER})x ({_NAME})")
_COMPARE = re.compile(rf"(more|less) than ({_NUMBER})")
_KIND = re.compile(r"an? ([a-z_]+)")
_SHAPED = re.compile(rf"shaped like ({_NAME})")
_QUOTED = re.compile(r"'[^']*'")
_WORDS = ("none", "true", "false", "solution", "zeros")


@dataclass(frozen=True)
class Clause:
    fact: str
    negated: bool
    test: str


def parse_condition(text: str) -> tuple[Clause, ...]:
    """A condition's clauses (any one of them holding makes it hold). ValueError, with what
    is wrong, for text that is not a condition."""
    clauses = []
    for part in text.split(" or "):
        found = _CLAUSE.fullmatch(part)
        if found is None:
            raise ValueError(f"'{part.strip()}' is not a condition; write 'FACT is TEST' or "
                             "'FACT is not TEST'")
        clauses.append(Clause(found[1], bool(found[2]), found[3]))
    return tuple(clauses)


def condition_problems(text: str, names: frozenset[str]) -> list[str]:
    """What is wrong with a condition for a family whose facts are `names` (for `validate`)."""
    try:
        clauses = parse_condition(text)
    except ValueError as exc:
        return [str(exc)]
    problems = []
    for clause in clauses:
        named = [clause.fact]
        test = clause.test
        if (multiple := _MULTIPLE.fullmatch(test)) is not None:
            named.append(multiple[2])
        elif (shaped := _SHAPED.fullmatch(test)) is not None:
            named.append(shaped[1])
        elif not (test in _WORDS or re.fullmatch(_NUMBER, test) or _COMPARE.fullmatch(test)
                  or _KIND.fullmatch(test) or _QUOTED.fullmatch(test)):
            named.append(test)
        problems += [unknown_fact(name, names) for name in named if name not in names]
    return problems


def unknown_fact(name: str, names: frozenset[str]) -> str:
    """The problem of a name that is not one of the family's facts, with the likeliest."""
    import difflib

    close_by = difflib.get_close_matches(name, sorted(names), n=1)
    return f"unknown fact '{name}'; " + (f"did you mean '{close_by[0]}'?" if close_by else
                                          f"facts: {', '.join(sorted(names))}")


def holds(condition: str, facts: Facts, solution: Facts) -> bool:
    """Whether `condition` holds for a case with these facts (and the solution's)."""
    return any(_clause_holds(clause, facts, solution) != clause.negated
               for clause in parse_condition(condition))


def _clause_holds(clause: Clause, facts: Facts, solution: Facts) -> bool:
    value, test = facts.get(clause.fact), clause.test
    if test == "none":
        return value is None
    if test.startswith("'") and test.endswith("'") and len(test) > 1:
        return value == test[1:-1]
    if test in ("true", "false"):
        return value is (test == "true")
    if test == "solution":
        return same(value, solution.get(clause.fact))
    if test == "zeros":
        numbers = flat(value) if isinstance(value, list) else None
        return bool(numbers) and all(x == 0 for x in numbers or ())
    if re.fullmatch(_NUMBER, test):
        return _is_number(value) and float(value) == float(test)
    if (compare := _COMPARE.fullmatch(test)) is not None:
        if not _is_number(value):
            return False
        limit = float(compare[2])
        return value > limit if compare[1] == "more" else value < limit
    if (multiple := _MULTIPLE.fullmatch(test)) is not None:
        return same(value, scaled(facts.get(multiple[2]), float(multiple[1])))
    if (shaped := _SHAPED.fullmatch(test)) is not None:
        return value is not None and not isinstance(value, dict) and (
            shape(value) == shape(facts.get(shaped[1])))
    if (kind := _KIND.fullmatch(test)) is not None:
        if kind[1] == "tensor":
            return value is not None and not isinstance(value, dict)
        return isinstance(value, dict) and value.get("not_a_tensor") == kind[1]
    return same(value, facts.get(test))


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(a: Any, b: Any) -> bool:
    """Equal facts: values (numbers, nested lists) within the checkers' tolerance, anything
    else exactly."""
    if isinstance(a, (list, int, float)) and isinstance(b, (list, int, float)) and not (
            isinstance(a, bool) or isinstance(b, bool)):
        return close(a, b)
    return bool(a == b)


def scaled(values: Any, k: float) -> Any:
    if isinstance(values, list):
        return [scaled(v, k) for v in values]
    if _is_number(values):
        return values * k
    return values


# ---- the judge ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One case, as the judge sees it: the learner's facts and the solution's, the leading
    evidence columns, and the plain data they came from (for a family's tables)."""

    facts: Facts
    solution: Facts
    columns: tuple[tuple[str, ...], tuple[str, ...]]
    data: tuple[dict[str, Any], dict[str, Any], dict[str, Any]] = ({}, {}, {})


def judge_exercise(exercise: Exercise) -> Callable[[list[Any], list[Any], list[Any]],
                                                   list[Check]]:
    """The judge of a declared exercise: (cases, references, observations) -> its checks."""
    family = FAMILIES[exercise.inputs or ""]
    parts = exercise.returns

    def judge(cases: list[Any], expected: list[Any], observed: list[Any]) -> list[Check]:
        runs = [Case(family.facts(case, ref, seen, parts),
                     family.facts(case, ref, ref["solution"], parts), family.columns(case),
                     (case, ref, seen))
                for case, ref, seen in zip(cases, expected, observed, strict=True)]
        # the case that shows the most first, where the family knows which that is
        runs.sort(key=lambda run: family.order(run.facts))
        return named_uncalled_lines(judge_checks(exercise.checks, runs, family), observed)

    return judge


def named_uncalled_lines(checks: list[Check], observed: list[Any]) -> list[Check]:
    """The checks, the first failing one also naming the lines of the learner's function that
    name a method or function without calling it (`model.eval` alone): such a line does
    nothing, whichever check its missing call made fail."""
    names = next((seen["uncalled_lines"] for seen in observed
                  if isinstance(seen, dict) and seen.get("uncalled_lines")), None)
    failing = next((i for i, check in enumerate(checks) if check.status == "fail"), None)
    if not isinstance(names, list) or failing is None:
        return checks
    words = uncalled_lines_words([str(name) for name in names])
    out = list(checks)
    out[failing] = replace(out[failing], message=msg("{said} {also}", said=out[failing].message,
                                                      also=words))
    return out


def judge_checks(checks: Sequence[DeclaredCheck], runs: Sequence[Case],
                 family: Family) -> list[Check]:
    """Each declared check, in order, judged on every case."""
    out: list[Check] = []
    passed: dict[str, bool] = {}
    for check in checks:
        result = _judge_one(check, runs, family, passed)
        passed[check.id] = result is None or result.status == "pass"
        if result is not None:
            out.append(result)
    return out


def _judge_one(check: DeclaredCheck, runs: Sequence[Case], family: Family,
               passed: dict[str, bool]) -> Check | None:
    waiting = [name for name in check.after if not passed.get(name, False)]
    # a case judged by this check has every fact it names; one that lacks one (the function
    # gave no pair, the run stopped at an error the family caught) is not judged by it
    named = expected_facts(check)
    judged = [run for run in runs if all(name in run.facts for name in named)]
    if not judged:  # nothing to judge
        missing = next(name for name in named if name not in runs[0].facts)
        return Check(check.id, "skip", msg("not judged until {checks} passes",
                                           checks=", ".join(waiting)) if waiting else
                     words(check.unjudged, None) if check.unjudged else
                     msg("not judged: your function did not give {fact}", fact=missing))
    failing = next((run for run in judged
                    if not all(holds(c, run.facts, run.solution) for c in check.expect)), None)
    if failing is None:
        return Check(check.id, "pass", words(check.pass_, None)) if check.pass_ else None
    # one mistake at a time: a check that names an earlier one waits for it to be fixed
    if waiting:
        return Check(check.id, "skip", msg("not judged until {checks} passes",
                                           checks=", ".join(waiting)))
    skip = _first_rule(check.skip, failing)
    if skip is not None:
        return Check(check.id, "skip", _say(skip, failing, family))
    rule = _first_rule(check.fail, failing)
    if rule is None:  # `validate` makes the last rule unconditional; this is a safety net
        return Check(check.id, "fail", msg("This check did not hold."))
    table = (family.tables[check.table](*failing.data) if check.table is not None
             else _evidence(check.evidence, failing) if check.evidence else None)
    if table is not None and not table.rows:
        table = None  # nothing of this case to show
    said = _say(rule, failing, family)
    named_uncalled = _uncalled_return(check, rule, failing)
    said = uncalled_words(named_uncalled) if named_uncalled is not None else said
    return Check(check.id, "fail", said, words(rule.help or check.help or "", failing), table)


def _uncalled_return(check: DeclaredCheck, rule: Rule, run: Case) -> str | None:
    """The function or method the case's value is, handed back without being called, when
    the rule says what was returned: the lesson's words for any failure (a rule with no
    `when`), or a rule that names the returned value's type or kind (`{returned-type}`)."""
    facts = expected_facts(check)
    if rule.when:
        if not any(name.startswith("returned-") for name in placeholders(rule.say or "")):
            return None
        facts.append("returned")
    return next((name for fact in facts
                 if (name := uncalled(run.facts.get(fact))) is not None), None)


def expected_facts(check: DeclaredCheck) -> list[str]:
    """The facts a check's `expect` names (each case must have them to be judged)."""
    return [clause.fact for condition in check.expect
            for clause in parse_condition(condition)]


def _first_rule(rules: Sequence[Rule], run: Case) -> Rule | None:
    return next((rule for rule in rules
                 if all(holds(c, run.facts, run.solution) for c in rule.when)), None)


def _say(rule: Rule, run: Case, family: Family) -> str:
    if rule.explain is not None:
        subject = words(rule.subject or "", run)
        return family.explainers[rule.explain](run.facts, run.data, rule.value or "", subject)
    return words(rule.say or "", run)


def words(template: str | None, run: Case | None) -> str:
    """The lesson's words as a message, its `{fields}` filled from the case's facts: a number
    in a field that gives its own format (`{step-times:.3g}`) as the number itself, so the
    format applies to it, and every other fact as it reads in a sentence."""
    if not template:
        return ""
    formatted = _formatted(template)
    fields = {}
    for name in placeholders(template):
        value = run.facts.get(name) if run is not None else None
        fields[name] = ("" if run is None else value if name in formatted and _is_number(value)
                        else _shown(value))
    return Msg(template, fields)


def _formatted(template: str) -> frozenset[str]:
    """The fields of a template that give a format spec: `{k:.3g}` gives k."""
    import string

    return frozenset(name.split(".")[0].split("[")[0]
                     for _, name, spec, _ in string.Formatter().parse(template)
                     if name is not None and spec)


def _shown(value: Any) -> Any:
    """A fact as it reads in a sentence: a number as it is, words as words, values short."""
    if isinstance(value, float) and not value.is_integer() and math.isfinite(value):
        return f"{value:.6g}"  # a measured number, not every digit float64 keeps
    if isinstance(value, str) or (_is_number(value)):
        return int(value) if isinstance(value, float) and value.is_integer() else value
    return fmt(value)


def _evidence(columns: Sequence[Column], run: Case) -> Table:
    titles, cells = run.columns
    shown = []
    for column in columns:
        multiple = _MULTIPLE.fullmatch(column.shows)
        value = (None if column.shows == "none" else
                 scaled(run.facts.get(multiple[2]), float(multiple[1])) if multiple
                 else run.facts.get(column.shows))
        shown.append(value if isinstance(value, str) else fmt(value))
    return Table(titles + tuple(Msg(column.title) for column in columns),
                 (cells + tuple(shown),), frozenset({0}))  # the failing case


# ---- validate -------------------------------------------------------------------------------

def exercise_problems(exercise: Exercise) -> list[tuple[str, tuple[str | int, ...]]]:
    """What is wrong with a declared exercise's checks, each with where: unknown families,
    facts, explainers and checks, `after` naming a later check, a `fail` list whose last
    rule has a `when` (a failing case that no rule words), a rule with no words."""
    family = FAMILIES.get(exercise.inputs or "")
    if family is None:
        return [(f"unknown input family '{exercise.inputs}'; families: "
                 f"{', '.join(FAMILIES)}", ("inputs",))]
    names = family.names(exercise.returns)
    problems: list[tuple[str, tuple[str | int, ...]]] = []
    problems += [(f"'{name}' cannot be caught; it can catch: {', '.join(CATCHABLE)}",
                  ("catches", i)) for i, name in enumerate(exercise.catches)
                 if name not in CATCHABLE]
    if not exercise.checks:
        problems.append(("an exercise with 'inputs' declares its 'checks': what to observe "
                         "and how it compares", ("checks",)))
    seen: set[str] = set()
    for c, check in enumerate(exercise.checks):
        at: tuple[str | int, ...] = ("checks", c)
        problems += [(f"'after' names '{name}', which is not an earlier check",
                      at + ("after", i)) for i, name in enumerate(check.after)
                     if name not in seen]
        seen.add(check.id)
        for i, condition in enumerate(check.expect):
            problems += [(p, at + ("expect", i)) for p in condition_problems(condition, names)]
        for kind, rules in (("fail", check.fail), ("skip", check.skip)):
            for r, rule in enumerate(rules):
                problems += _rule_problems(rule, at + (kind, r), names, family)
        if check.fail and check.fail[-1].when:
            problems.append(("the last 'fail' rule has a 'when': give a last rule without "
                             "one, for a failing case that no other rule words",
                             at + ("fail", len(check.fail) - 1)))
        problems += [(f"'{name}' is not a case that '{exercise.inputs}' holds in every seed; "
                      f"it holds: {', '.join(family.fixed) or 'none'}", at + ("needs", i))
                     for i, name in enumerate(check.needs) if name not in family.fixed]
        if check.table is not None and check.table not in family.tables:
            problems.append((f"unknown table '{check.table}'; tables: "
                             f"{', '.join(family.tables) or 'none'}", at + ("table",)))
        if check.table is not None and check.evidence:
            problems.append(("a check shows a 'table' or 'evidence' columns, not both", at))
        for i, column in enumerate(check.evidence):
            multiple = _MULTIPLE.fullmatch(column.shows)
            name = multiple[2] if multiple else column.shows
            if name not in names and name != "none":
                problems.append((unknown_fact(name, names), at + ("evidence", i, "shows")))
        for text, where in ((check.pass_, ("pass",)), (check.help, ("help",)),
                            (check.unjudged, ("unjudged",))):
            problems += [(p, at + where) for p in _field_problems(text, names)]
    return problems


def _rule_problems(rule: Rule, at: tuple[str | int, ...], names: frozenset[str],
                   family: Family) -> list[tuple[str, tuple[str | int, ...]]]:
    problems = [(p, at + ("when", i)) for i, condition in enumerate(rule.when)
                for p in condition_problems(condition, names)]
    if (rule.say is None) == (rule.explain is None):
        problems.append(("a rule either says something ('say') or names an explainer "
                         "('explain')", at))
    if rule.explain is not None:
        if rule.explain not in family.explainers:
            problems.append((f"unknown explainer '{rule.explain}'; explainers: "
                             f"{', '.join(family.explainers)}", at + ("explain",)))
        if rule.value is not None and rule.value not in names:
            problems.append((unknown_fact(rule.value, names), at + ("value",)))
        elif rule.value is None and rule.explain in family.valued:
            problems.append((f"'{rule.explain}' explains a fact: name it as 'value'", at))
    for text, where in ((rule.say, ("say",)), (rule.help, ("help",)),
                        (rule.subject, ("subject",))):
        problems += [(p, at + where) for p in _field_problems(text, names)]
    return problems


def _field_problems(text: str | None, names: frozenset[str]) -> list[str]:
    if not text:
        return []
    try:
        used = placeholders(text)
    except ValueError as exc:
        return [f"the text's {{fields}} cannot be read: {exc}"]
    return [f"'{{{name}}}': {unknown_fact(name, names)}" for name in sorted(used)
            if name not in names]


# ---- the worker side ------------------------------------------------------------------------

def worker_spec(exercise: Exercise) -> DeclaredSpec:
    """What the worker and the reference process need of a declared exercise (plain data, in
    the request): its family, the errors it catches, and the solution with its function."""
    return {"inputs": str(exercise.inputs), "catches": list(exercise.catches),
            "solution": exercise.solution, "function": exercise.function}


class WorkerChecker:
    """A declared exercise as the worker runs it: the `checkers` module contract (`ARITY`,
    `cases`, `expected`, `observe`) from its family, with the solution's run as the reference.
    `expected` runs the author's solution, so it runs only where references are made (the
    reference process, or `validate`'s batch), never where learner code runs."""

    def __init__(self, spec: DeclaredSpec) -> None:
        self.family = FAMILIES[str(spec["inputs"])]
        self.catches = tuple(str(name) for name in spec.get("catches", ()))
        self.solution = str(spec["solution"])
        self.function = str(spec["function"])
        self.ARITY = self.family.arity
        self._solved: Any = None

    def cases(self, seed: int) -> list[dict[str, Any]]:
        return self.family.cases(seed)

    def expected(self, case: dict[str, Any]) -> dict[str, Any]:
        from gradtutor.checking import trace

        if self._solved is None:
            namespace: dict[str, Any] = {"__name__": "solution"}
            exec(compile(self.solution, "<solution>", "exec"), namespace)  # noqa: S102
            self._solved = namespace[self.function]
        case_trace = trace.start()
        try:
            solution = self.family.observe(case, self._solved, case_trace, self.catches)
        finally:
            case_trace.close()
        return {**self.family.reference(case), "solution": solution}

    def observe(self, case: dict[str, Any], fn: Any, trace: Any) -> dict[str, Any]:
        from gradtutor.checking.trace import named_uncalled, uncalled_lines, uncalled_returns

        observed = self.family.observe(case, fn, trace, self.catches)
        return {**named_uncalled(observed, uncalled_returns(fn)),
                "uncalled_lines": uncalled_lines(fn)}
