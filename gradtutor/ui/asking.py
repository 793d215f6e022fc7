"""The shell around `ask`: the course's index, built once a process when first needed (never
on the way to a first slide), and the learner's moment (the step on screen, the exercise,
the file and its latest verdict) as the core reads it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from gradtutor.asking.answer import Answer, Moment, answer
from gradtutor.asking.index import Index, load
from gradtutor.checking.verdict import Verdict, say
from gradtutor.i18n import Translator
from gradtutor.lessons.model import Exercise


@cache
def course_index(folder: Path | None) -> tuple[Index, tuple[Exercise, ...]]:
    """The index of the course in `folder` (None: the built-in one), in English and Chinese,
    and its exercises; its text made harmless to a terminal, as every lesson shown is."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.ui.lesson_text import neutralised

    return load(folder, EXERCISE_RULES, prepare=neutralised)


def failing(verdict: Verdict | None, tr: Translator) -> tuple[tuple[str, str], ...]:
    """The checks a verdict failed (or could not run), as (name, message) in the learner's
    language."""
    if verdict is None or verdict.passed:
        return ()
    return tuple((check.name, say(tr, check.message)) for check in verdict.checks
                 if check.status in ("fail", "error", "timeout"))


def ask_course(folder: Path | None, question: str, moment: Moment, lang: str) -> Answer:
    index, exercises = course_index(folder)
    return answer(index, question, moment, lang, exercises)
