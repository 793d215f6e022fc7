"""The texts a verdict can show, walked from their real sources for the no-fix tests
(tests/test_no_fix_unasked.py, tests/test_no_fix_words.py): every `msg()` template of the
checkers and of what turns a run into checks, and of the exercise screen's notices, with its
zh-CN translation; and every text an exercise's declared checks give, its mutants' mistakes,
its "why it works" and its hints but the last, from the lessons as loaded in English and in
Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gradtutor.checking.checkers import CHECKERS
from gradtutor.checking.checkers.families import FAMILIES
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mistakes import mutant_source
from gradtutor.i18n import find_messages, load_catalog
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise

PACKAGE = Path(__file__).parent.parent / "gradtutor"
CHECKING = PACKAGE / "checking"
# Modules whose messages any exercise's failed check may show.
SHARED = (CHECKING / "checkers" / "common.py", CHECKING / "checkers" / "declared.py",
          CHECKING / "feedback.py", CHECKING / "verdict.py", CHECKING / "outcome.py",
          PACKAGE / "walk" / "exercise.py")
LANGUAGES = ("en", "zh-CN")


@dataclass(frozen=True)
class Text:
    where: str  # the source, for the failure's message
    exercises: tuple[str, ...]  # the exercises that can show it
    lang: str
    text: str
    wrote: str = ""  # the learner's file, when the text is said of one


@cache
def exercises(lang: str = "en") -> tuple[Exercise, ...]:
    course = load_course(lang=lang, rules=EXERCISE_RULES)
    return tuple(step for lesson in course.lessons for step in lesson.steps
                 if isinstance(step, Exercise))


def checker_modules(step: Exercise) -> set[Path]:
    """The modules whose messages this exercise's checks may show: its registered checker,
    or its input family's pieces."""
    if step.checker is not None:
        return {CHECKING / "checkers" / f"{CHECKERS[step.checker]}.py"}
    family = FAMILIES[str(step.inputs)]
    parts = [family.cases, family.reference, family.observe, family.facts, family.columns,
             *family.explainers.values(), *family.tables.values()]
    return {Path(__import__(part.__module__, fromlist=["_"]).__file__ or "")
            for part in parts}


def module_texts(lang: str) -> Iterator[Text]:
    """Every msg() template the checkers and the exercise screen can show, with the
    exercises that can show it, said in `lang` (the catalog's translation)."""
    catalog = load_catalog(lang)
    every = tuple(step.id for step in exercises())
    owners: dict[Path, set[str]] = {path: set(every) for path in SHARED}
    for step in exercises():
        for path in checker_modules(step):
            owners.setdefault(path, set()).add(step.id)
    for path in sorted({*owners, *(CHECKING / "checkers").glob("*.py")}):
        for found in find_messages(path.read_text(encoding="utf-8"), str(path)):
            if isinstance(found, str):
                continue
            yield Text(f"{path.relative_to(PACKAGE.parent)}:{found.line}",
                       tuple(sorted(owners.get(path, ()))), lang,
                       catalog.get(found.template, found.template))


def lesson_texts(lang: str) -> Iterator[Text]:
    """Every text an exercise's declared checks can show on failing or skipping, its
    mutants' mistakes (named on the check a mutant fails) and its "why it works"."""
    for step in exercises(lang):
        at = (step.id,)
        for check in step.checks:
            for name, text in (("help", check.help), ("unjudged", check.unjudged)):
                if text:
                    yield Text(f"{step.id}/{check.id}/{name}", at, lang, text)
            for kind, rules in (("fail", check.fail), ("skip", check.skip)):
                for i, rule in enumerate(rules):
                    for name, text in (("say", rule.say), ("help", rule.help),
                                       ("subject", rule.subject)):
                        if text:
                            yield Text(f"{step.id}/{check.id}/{kind}[{i}].{name}", at, lang,
                                       text)
        for index, mutant in enumerate(step.mutants):  # said of a file that is the mutant
            yield Text(f"{step.id}/mutant {mutant.id}/mistake", at, lang, mutant.mistake,
                       mutant_source(step, index))
        yield Text(f"{step.id}/why", at, lang, step.why)
        # hints come when asked, one more each time; only the last rung may show code
        for rung, hint in enumerate(step.hints[:-1], start=1):
            yield Text(f"{step.id}/hint {rung} of {len(step.hints)}", at, lang, hint)


def static_texts() -> list[Text]:
    return [text for lang in LANGUAGES
            for text in (*module_texts(lang), *lesson_texts(lang))]
