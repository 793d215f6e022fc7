"""What a learner reads in one step of a shipped lesson, as one string, for the tests that hold
a lesson's prose to what PyTorch really does (tests/test_lesson_facts*.py)."""

from __future__ import annotations

from functools import cache

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Lesson, Quiz, Step


@cache
def lesson(lesson_id: str) -> Lesson:
    return load_course(rules=EXERCISE_RULES).find(lesson_id)


def step_of(lesson_id: str, step_id: str) -> Step:
    return next(step for step in lesson(lesson_id).steps if step.id == step_id)


def text_of(lesson_id: str, step_id: str) -> str:
    """Every English text of a step, joined, with runs of whitespace as one space: its body,
    notes, prompt, intro and why; its hints; its choices and their whys; a quiz's questions;
    an exercise's failure messages and its mutants' mistakes."""
    step = step_of(lesson_id, step_id)
    parts = [getattr(step, name, None) for name in ("body", "notes", "prompt", "why", "intro")]
    parts += list(getattr(step, "hints", ()))
    parts += [f"{c.text} {c.why}" for c in getattr(step, "choices", ())]
    if isinstance(step, Exercise):
        parts += [rule.say for check in step.checks for rule in check.fail if rule.say]
        parts += [mutant.mistake for mutant in step.mutants]
    if isinstance(step, Quiz):
        for question in step.questions:
            parts += [question.prompt] + [f"{c.text} {c.why}" for c in question.choices]
    return " ".join(" ".join(p.split()) for p in parts if p)
