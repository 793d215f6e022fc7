"""The shipped course as one path (issue 22): short cores by the tutor's own estimate, every
lesson ending with a recap, short quizzes that test more than recall of a slide, and the map of
where each idea lives (docs/concepts.md) naming real steps and every core step."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Parsons, Predict, Quiz, Slide
from gradtutor.lessons.timing import duration, is_optional

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = ROOT / "docs" / "concepts.md"
CORE_MINUTES = {"grad": 16}  # the heart of the course; every other lesson: 12
MAX_QUESTIONS = 6


def lessons() -> tuple[Lesson, ...]:
    return load_course(rules=EXERCISE_RULES).lessons


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.id)
def test_each_lesson_s_core_fits_its_minutes(lesson: Lesson) -> None:
    assert lesson.minutes is None, "the estimate, not an author's figure, is held to the limit"
    assert duration(lesson).core <= CORE_MINUTES.get(lesson.id, 12)


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.id)
def test_each_lesson_ends_with_a_core_recap(lesson: Lesson) -> None:
    last = lesson.steps[-1]
    assert isinstance(last, Slide) and last.id == "recap" and not last.optional


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.id)
def test_each_lesson_has_one_core_quiz_of_at_most_six_questions(lesson: Lesson) -> None:
    quizzes = [s for s in lesson.steps if isinstance(s, Quiz)]
    assert len(quizzes) == 1 and len(quizzes[0].questions) <= MAX_QUESTIONS


def test_the_grad_lesson_keeps_at_most_two_core_exercises_and_its_ordering_step() -> None:
    grad = next(lesson for lesson in lessons() if lesson.id == "grad")
    core = [s for s in grad.steps if not is_optional(s)]
    assert 1 <= sum(isinstance(s, Exercise) for s in core) <= 2
    assert any(isinstance(s, Parsons) for s in core)


# The seed page's 13 slides (lesson 3 of the course this one teaches from), in its
# order, and the step of lesson 3 that teaches each.
SEED_IDEAS = (("the .grad attribute", "grad-attribute"),
              ("gradients start as None", "start-as-none"),
              ("gradients accumulate", "grad-accumulates"),
              ("why accumulation exists", "why-accumulation"), ("the hidden bug", "hidden-bug"),
              ("zero them each step", "zero-grad"), ("the right order", "right-order"),
              ("clearing without an optimizer", "no-optimizer"),
              ("set_to_none is cheaper", "set-to-none"), ("reading grads to debug", "debug-grads"),
              ("a habit worth forming", "habit"), ("quick check", "quick-check"),
              ("recap", "recap"))


def test_the_grad_lesson_s_core_keeps_the_seed_s_thirteen_ideas_in_its_order() -> None:
    grad = next(lesson for lesson in lessons() if lesson.id == "grad")
    core = [s.id for s in grad.steps if not is_optional(s)]
    places = [core.index(step_id) for _, step_id in SEED_IDEAS]  # ValueError: not in the core
    assert places == sorted(places)


def significant(code: str | None) -> list[str]:
    """A sample's lines that say something: no blanks, comments or imports; spaces folded."""
    out = []
    for line in (code or "").splitlines():
        line = " ".join(line.split("#", 1)[0].split())
        if line and not line.startswith(("import ", "from ")):
            out.append(line)
    return out


def test_no_quiz_question_reuses_the_code_of_a_step_before_it() -> None:
    """A question tests understanding, not recall of a screen: most of its code's lines (and
    at least two) are not lines one slide, demo or prediction of the course showed."""
    shown: list[tuple[str, set[str]]] = []
    reused = []
    for lesson in lessons():
        for step in lesson.steps:
            if isinstance(step, (Slide, Demo, Predict)):
                shown.append((f"{lesson.id} {step.id}", set(significant(step.code))))
            elif isinstance(step, Quiz):
                for question in step.questions:
                    lines = significant(question.code)
                    for where, seen in shown:
                        same = [line for line in lines if line in seen]
                        if len(same) >= 2 and len(same) >= 0.6 * len(lines):
                            reused.append(f"{lesson.id} {question.id} repeats {where}: {same}")
    assert reused == []


def concept_tables() -> dict[str, set[str]]:
    """The step ids docs/concepts.md names, by the lesson whose section names them."""
    named: dict[str, set[str]] = {}
    lesson = None
    for line in CONCEPTS.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## Lesson \d `([a-z-]+)`", line)
        if heading:
            lesson = heading.group(1)
        elif lesson and line.startswith("| ") and not line.startswith("| idea"):
            step_column = line.split("|")[2]
            named.setdefault(lesson, set()).update(re.findall(r"`([a-z0-9-]+)`", step_column))
    return named


def test_the_concept_map_names_real_steps_and_every_core_step() -> None:
    named = concept_tables()
    course = {lesson.id: lesson for lesson in lessons()}
    assert set(named) == set(course)
    for lesson_id, ids in named.items():
        steps = {s.id: s for s in course[lesson_id].steps}
        assert ids <= set(steps), f"{lesson_id}: no such steps {sorted(ids - set(steps))}"
        core = {s.id for s in steps.values()
                if not is_optional(s) and not isinstance(s, Quiz) and s.id != "recap"}
        assert core <= ids, f"{lesson_id}: core steps not in the map {sorted(core - ids)}"


def imported(code: str) -> set[str]:
    """The names a file binds by importing (`import torch`, `from torch import nn`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_every_starter_imports_what_its_solution_imports(lang: str) -> None:
    # else the fix the lesson teaches (`with torch.no_grad():`) fails with a NameError
    missing = {step.id: sorted(imported(step.solution) - imported(step.starter))
               for lesson in load_course(lang=lang, rules=EXERCISE_RULES).lessons
               for step in lesson.steps if isinstance(step, Exercise)}
    assert {exercise: names for exercise, names in missing.items() if names} == {}


# what speaks of an exercise's starter as if it were on screen
SPEAKS_OF_STARTER = {"en": re.compile(r"\bstarter\b|\bbelow\b", re.IGNORECASE),
                     "zh-CN": re.compile(r"起始代码|下面|下方")}


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_an_exercise_whose_text_speaks_of_its_starter_shows_it(lang: str) -> None:
    import io

    from rich.console import Console

    from gradtutor.i18n import translator
    from gradtutor.ui.exercise_view import exercise_body
    from gradtutor.ui.render import Look
    from gradtutor.walk.kinds import rules_for

    look = Look(True, translator(lang))
    unseen = []
    for lesson in load_course(lang=lang, rules=EXERCISE_RULES).lessons:
        for step in lesson.steps:
            if not isinstance(step, Exercise) or not SPEAKS_OF_STARTER[lang].search(step.prompt):
                continue
            out = io.StringIO()
            Console(width=100, file=out, color_system=None).print(
                exercise_body(step, rules_for(step).open(step), Path("x.py"), look))
            first_line = step.starter.strip().splitlines()[0]
            if first_line not in out.getvalue():
                unseen.append(step.id)
    assert unseen == []
