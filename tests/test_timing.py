"""How long a lesson takes: the core path and the optional practice, estimated from the text,
shown by `list` and `progress`, and stated in the README for every lesson of the course."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import (
    Choice,
    Demo,
    Exercise,
    Lesson,
    Parsons,
    ParsonsLine,
    Predict,
    Question,
    Quiz,
    Slide,
    Step,
)
from gradtutor.lessons.timing import BEGINNER, duration, step_minutes
from gradtutor.ui import render
from gradtutor.ui.render import Look

if TYPE_CHECKING:
    from conftest import Cli

ROOT = Path(__file__).resolve().parent.parent
PLAIN = Look(plain=True)


def text(renderable: object, width: int) -> str:
    out = io.StringIO()
    console = Console(width=width, file=out, force_terminal=False, color_system=None)
    console.print(renderable)
    return out.getvalue()


def grad() -> Lesson:
    return load_course(rules=EXERCISE_RULES).find("grad")


def test_a_step_marked_optional_moves_its_minutes_from_the_core_to_the_practice() -> None:
    lesson = grad()
    before = duration(lesson)
    steps = list(lesson.steps)
    at = next(i for i, s in enumerate(steps) if isinstance(s, Exercise) and not s.optional)
    exercise = steps[at]
    assert isinstance(exercise, Exercise)
    minutes = step_minutes(exercise)
    steps[at] = dataclasses.replace(exercise, optional=True)
    after = duration(dataclasses.replace(lesson, steps=tuple(steps)))
    assert after.core < before.core and after.optional > before.optional
    assert abs((before.core + before.optional) - (after.core + after.optional)) <= 1
    assert minutes >= 3  # an exercise is at least the 3 minutes of doing it


def words(n: int) -> str:
    return " ".join(["word"] * n)


def test_prose_is_read_at_238_words_a_minute_and_code_at_6_seconds_a_line() -> None:
    """Brysbaert (2019): adults read English non-fiction silently at 238 words a minute on
    average. The title is read too."""
    slide = Slide(kind="slide", id="s", title="The title", body=words(236))
    assert step_minutes(slide) == 1.0
    assert step_minutes(dataclasses.replace(slide, code="x = 1\n" * 10)) == 2.0
    assert step_minutes(dataclasses.replace(slide, notes=words(238))) == 2.0
    beginner = step_minutes(dataclasses.replace(slide, code="x = 1\n" * 15), BEGINNER)
    assert beginner == 238 / 130 + 2.0  # 130 words a minute, 8 s a line


def choice(why_words: int) -> Choice:
    return Choice(text="a choice", why=words(why_words))


def test_every_choice_s_explanation_counts_as_the_quiz_screen_shows_them_all() -> None:
    """After an answer, the quiz screen shows why each choice is right or wrong, picked or
    not: a learner reads every one of them."""
    question = Question(id="q", prompt=words(10), choices=(choice(5), choice(5)), answer="a")
    quiz = Quiz(kind="quiz", id="check", title="Check", questions=(question,))
    longer = dataclasses.replace(question, choices=(choice(5), choice(5 + 238)))
    assert step_minutes(dataclasses.replace(quiz, questions=(longer,))) == \
        step_minutes(quiz) + 1.0
    assert step_minutes(quiz) == 1.0 + (1 + 10 + 2 * (2 + 5)) / 238  # a question: 1 minute
    two = dataclasses.replace(quiz, questions=(question, dataclasses.replace(question, id="r")))
    assert step_minutes(two) - step_minutes(quiz) == 1.0 + (10 + 2 * (2 + 5)) / 238


def test_each_kind_of_practice_adds_the_time_of_doing_it() -> None:
    """An exercise 3 minutes, ordering lines 1.5, a prediction 0.75, a demo 0.5, on top of
    reading them."""
    exercise = Exercise(kind="exercise", id="e", title="t", prompt="p", function="f",
                        starter="", solution="pass", hints=("h",) * 3, mutants=(), why="w")
    parsons = Parsons(kind="parsons", id="p", title="t", prompt="p",
                      lines=(ParsonsLine(id="a", code="a()", why=words(50)),))
    predict = Predict(kind="predict", id="r", title="t", prompt="p", code="", show="1",
                      choices=(Choice("a", "w"),), answer="a")
    demo = Demo(kind="demo", id="d", title="t", body="b", code="")
    # (step, minutes of reading it, minutes of doing it)
    expected: list[tuple[Step, float, float]] = [
        (exercise, 3 / 238, 3.0), (parsons, 2 / 238 + 0.1, 1.5), (predict, 4 / 238, 0.75),
        (demo, 2 / 238, 0.5)]
    for step, reading, doing in expected:
        assert abs(step_minutes(step) - reading - doing) < 1e-9, step.kind


def test_an_author_s_minutes_set_the_core() -> None:
    lesson = dataclasses.replace(grad(), minutes=7)
    assert duration(lesson).core == 7


def test_the_readme_states_each_lesson_s_steps_exercises_and_minutes() -> None:
    """The README's course table: one row per lesson, in course order, with the figures the
    tutor itself computes (steps, exercises, core and optional minutes)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `([\w-]+)`: (.+?) \| .+? \| (\d+) \| (\d+) \| "
                      r"(\d+) min \| (\d+) min \| (\d+) min \|$", readme, flags=re.MULTILINE)
    course = load_course(rules=EXERCISE_RULES)
    expected = []
    for place, lesson in enumerate(course.lessons, start=1):
        time = duration(lesson)
        exercises = sum(isinstance(step, Exercise) for step in lesson.steps)
        expected.append((str(place), lesson.id, lesson.title, str(len(lesson.steps)),
                         str(exercises), str(time.core), str(duration(lesson, BEGINNER).core),
                         str(time.optional)))
    assert rows == expected
    total = sum(int(row[4]) for row in expected)
    assert f"**Exercises** ({total} in the course)" in readme
    model = " ".join(readme.split())
    assert ("at a fluent adult reader's rates: 238 words a minute (the mean silent reading rate "
            "of English non-fiction, Brysbaert 2019), 6 seconds a line of code, 3 minutes an "
            "exercise, 1.5 the ordering step, 0.75 a prediction, 0.5 a demo and 1 a quiz "
            "question") in model
    assert ("*A beginner* reads at 130 words a minute and 8 seconds a line, and takes 4 minutes "
            "an exercise") in model


def test_an_optional_step_says_so_in_its_header() -> None:
    lesson = grad()
    steps = lesson.steps
    optional = next(i for i, s in enumerate(steps) if getattr(s, "optional", False))
    core = next(i for i, s in enumerate(steps) if not getattr(s, "optional", False))
    shown = [text(render.header(lesson, i, 80, PLAIN), 80)
             for i in (optional, core)]
    assert "(optional practice)" in shown[0].splitlines()[1]
    assert "optional" not in shown[1]


def test_list_shows_the_minutes_and_what_they_mean(cli: Cli) -> None:
    time = duration(grad())
    _, out, _ = cli("list", "--plain")
    assert f"{time.core} +{time.optional}" in out
    assert "optional practice, each of which n skips" in " ".join(out.split())


def test_a_translated_course_shows_the_minutes_of_its_english(cli: Cli) -> None:
    """Chinese puts no spaces between words: counted as English is, a zh lesson would seem
    to take a fraction of the time. The estimate is the English lesson's in every language."""
    minutes = [line.split()[-2:] for line in cli("list", "--plain")[1].splitlines()[1:5]]
    zh = [line.split()[-2:] for line in cli("--lang", "zh", "list", "--plain")[1].splitlines()[1:5]]
    assert zh == minutes and len(minutes) == 4
    grad_zh = load_course(rules=EXERCISE_RULES, lang="zh-CN").find("grad")
    assert duration(grad_zh).core < duration(grad()).core  # what counting zh words would say
    _, progress, _ = cli("--lang", "zh", "progress", "--plain")
    time = duration(grad())
    assert f"约 {time.core} 分钟，选做练习另需约 {time.optional} 分钟" in progress
