"""A learner's file that is one of the lesson's declared mutants gets that mistake named on the
check that catches it; any other file, or a check that passed, gets none. The screen says the
mistake once, in the check's own words; `--json` gives the declared one as the note."""

from __future__ import annotations

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mistakes import known_mistake, mutant_source, name_known_mistake
from gradtutor.checking.verdict import Check
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise


def exercise(exercise_id: str) -> Exercise:
    return load_course(rules=EXERCISE_RULES).find_exercise(exercise_id)


def test_a_mutant_laid_out_differently_is_still_that_mistake() -> None:
    step = exercise("read-grad")
    index = next(i for i, m in enumerate(step.mutants) if m.id == "no-backward")
    source = mutant_source(step, index)
    assert "backward" not in source.split("def", 1)[1]
    relaid = "# my attempt\n\n" + source.replace("    ", "        ").replace(
        "loss_fn(w)", "loss_fn( w )") + "\n\n# done\n"
    mutant = known_mistake(step, relaid)
    assert mutant is not None and mutant.id == "no-backward"


def test_the_solution_a_different_mistake_and_broken_code_match_no_mutant() -> None:
    step = exercise("read-grad")
    assert known_mistake(step, step.solution) is None
    assert known_mistake(step, step.solution.replace("return w.grad", "return w.grad * 3")
                         ) is None
    assert known_mistake(step, "def read_grad(w, loss_fn:\n") is None
    assert known_mistake(step, "(" * 500 + ")" * 500) is None  # too deep to parse


def test_the_mistake_goes_on_the_failed_check_the_mutant_names_and_nowhere_else() -> None:
    step = exercise("two-backwards")
    index = next(i for i, m in enumerate(step.mutants) if m.id == "cleared-between")
    mutant = step.mutants[index]
    checks = (Check("graph-freed", "pass", "fine"), Check(mutant.fails, "fail", "1x"),
              Check("grad-kept", "skip", "later"))
    named = name_known_mistake(step, mutant_source(step, index), checks)
    assert [c.mistake for c in named] == ["", mutant.mistake, ""]
    passed = (Check(mutant.fails, "pass", "fine"),)
    assert name_known_mistake(step, mutant_source(step, index), passed) == passed
    assert name_known_mistake(step, step.solution, checks) == checks


def test_the_screen_says_a_known_mistake_once_and_json_names_it() -> None:
    """The review of 2026-12-05, F15: "note: a known mistake: ..." repeated the message just
    above it, on every cut of the verdict."""
    import io

    from rich.console import Console

    from gradtutor.checking.verdict import Verdict, to_json
    from gradtutor.ui.check_view import verdict_view
    from gradtutor.ui.render import Look

    step = exercise("two-backwards")
    index = next(i for i, m in enumerate(step.mutants) if m.id == "cleared-between")
    checks = name_known_mistake(step, mutant_source(step, index), (
        Check("backward-twice", "pass", "fine"),
        Check(step.mutants[index].fails, "fail", "Your .grad holds 1x the gradient.")))
    verdict = Verdict("two-backwards", "fail", checks, 0, 5)
    for whole in (False, True):
        out = io.StringIO()
        Console(file=out, width=80).print(verdict_view(verdict, Look(plain=True), whole=whole))
        assert "Your .grad holds 1x the gradient." in out.getvalue()
        assert "known mistake" not in out.getvalue()
        assert step.mutants[index].mistake not in " ".join(out.getvalue().split())
    assert to_json(verdict)["checks"][1]["note"] == (
        f"a known mistake: {step.mutants[index].mistake}")
