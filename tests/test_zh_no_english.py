"""No English interface text reaches a Chinese screen, however the code built it.

The i18n tests check that every `msg()` has a translation; they cannot see English that never
went through `msg()` (an f-string, a `", ".join`, a Python error spliced into a sentence).
This test looks at what the learner sees instead: it draws every screen of the `grad` lesson
in zh-CN (every step, every state, with and without a terminal, as `show` prints it, and the
notices of background work that failed) and looks for English words of the interface. Those
are the words of the interface's English templates that a Chinese screen has no reason to
show: not in any Chinese translation (which keeps code, keys and commands as they are), not
in the lesson's Chinese text, not a name in its code, a key or a typed command.

Code samples keep their English comments by design (translating.md: "Code never changes");
they are drawn without them here. Starters are drawn as they are: their comments are
translated.
"""

from __future__ import annotations

import dataclasses
import io
import queue
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from zh_screens import in_chinese, render, screens, zh

import gradtutor
from gradtutor.bindings import KEY_NAMES, TABLES
from gradtutor.errors import GradtutorError
from gradtutor.i18n import load_catalog, messages_in, msg
from gradtutor.lessons.model import Exercise, Lesson, Predict
from gradtutor.lessons.translate import lesson_texts
from gradtutor.ui.render import EN_MARK, Look, key_text
from gradtutor.ui.step_screens import step_for_reading
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.background import Background
from gradtutor.walk.events import CheckFailed, Choose, SnippetFailed
from gradtutor.walk.machine import begin, handle
from gradtutor.walk.state import WalkState

PACKAGE = Path(gradtutor.__file__).parent
# A word: three letters or more, not part of a name (`w.grad`, `zero_grad`, `read-grad`).
WORD = re.compile(r"(?<![\w.\-/'])[A-Za-z]{3,}(?![\w\-/(]|\.\w)")
FIELD = re.compile(r"\{[^{}]*\}")
CODE_SPAN = re.compile(r"`[^`]*`")
# Field names of the model that hold code; a starter is code too, but its comments are
# translated, so it is drawn whole.
CODE_FIELDS = ("code", "solution", "setup", "show")


def words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def without_comments(code: str) -> str:
    """Python code with its comments blanked out (what is left lines up as before)."""
    lines = code.splitlines(keepends=True)
    try:
        found = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
                 if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return code
    for token in found:
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col].rstrip() + ("\n" if line.endswith("\n") else "")
    return "".join(lines)


def code_of(record: Any) -> Iterator[str]:
    """Every piece of code in a lesson record and the records inside it."""
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if field.name in (*CODE_FIELDS, "starter") and isinstance(value, str):
            yield value
        elif dataclasses.is_dataclass(value):
            yield from code_of(value)
        elif isinstance(value, tuple):
            for item in value:
                if dataclasses.is_dataclass(item):
                    yield from code_of(item)


def uncommented(record: Any) -> Any:
    """The record with the comments of its code samples removed (starters are kept)."""
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if field.name in CODE_FIELDS and isinstance(value, str):
            changes[field.name] = without_comments(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes[field.name] = uncommented(value)
        elif isinstance(value, tuple) and any(dataclasses.is_dataclass(v) for v in value):
            changes[field.name] = tuple(uncommented(v) if dataclasses.is_dataclass(v) else v
                                        for v in value)
    return dataclasses.replace(record, **changes)


@cache
def lesson() -> Lesson:
    """The grad lesson in Chinese, its code samples without their (English) comments."""
    chinese: Lesson = uncommented(in_chinese())
    return chinese


@cache
def interface_words() -> frozenset[str]:
    """English words of the interface that a Chinese screen has no reason to show."""
    found, _problems = messages_in(PACKAGE)
    english = set().union(*(words(CODE_SPAN.sub(" ", FIELD.sub(" ", f.template)))
                            for f in found))
    chinese = lesson()
    allowed = set().union(*(words(FIELD.sub(" ", text))
                            for text in load_catalog("zh-CN").values()))
    allowed |= set().union(*(words(text) for _, text in lesson_texts(chinese)))
    for step in chinese.steps:
        allowed |= words(step.id)
        for code in code_of(step):
            allowed |= words(without_comments(code))
    for table in TABLES.values():
        for binding in table:
            allowed |= set().union(*(words(w) for w in binding.words))
    for look in (Look(True, zh()), Look(False, zh())):
        allowed |= set().union(*(words(key_text(name, look)) for name in KEY_NAMES.values()))
    allowed |= words(chinese.id) | {"tmp"}  # the workspace these screens name
    return frozenset(english - allowed)


def english_in(text: str) -> list[str]:
    """The interface's English words in `text`, in order."""
    known = interface_words()
    return [w for w in WORD.findall(text) if w.lower() in known]


def shown(state: WalkState, plain: bool, keys: bool = True) -> str:
    look = Look(plain, zh())
    return "\n".join(render(screen(lesson(), state, 100, keys, look, Path("/tmp/工作区")), 100))


# --- what the background posts when its work fails ------------------------------------------


class Failing:
    """A checker whose every check and run raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def start(self) -> None:
        pass

    def loading(self) -> bool:
        return False

    def check(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    def run_snippet(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    def close(self) -> None:
        pass


def posted(error: Exception, exercise: Exercise | None = None,
           predict: Predict | None = None) -> CheckFailed | SnippetFailed:
    """What `Background` posts when checking `exercise` (or running `predict`) raises."""
    events: queue.Queue[Any] = queue.Queue()
    work = Background(events.put, {}, checker=lambda environ: Failing(error))
    work.start()
    if exercise is not None:
        work.check(exercise, Path("/tmp/工作区") / f"{exercise.id}.py")
    elif predict is not None:
        work.snippet(predict.id, predict.code, predict.show, ())
    event = events.get(timeout=60)
    work.close()
    assert isinstance(event, CheckFailed | SnippetFailed)
    return event


ERRORS = [GradtutorError(msg("name the exercise to check"),
                         msg("`gradtutor list` shows them")),
          GradtutorError(msg("name the exercise to check")),
          RuntimeError("boom.")]


def failed_screens(plain: bool) -> Iterator[tuple[str, str]]:
    chinese = lesson()
    index = next(i for i, s in enumerate(chinese.steps) if isinstance(s, Exercise))
    exercise = chinese.steps[index]
    assert isinstance(exercise, Exercise)
    for error in ERRORS:
        state = handle(chinese, begin(chinese, index), posted(error, exercise=exercise))[0]
        yield f"check of {exercise.id} failed: {error!r}", shown(state, plain)
    index = next(i for i, s in enumerate(chinese.steps) if isinstance(s, Predict))
    predict = chinese.steps[index]
    assert isinstance(predict, Predict)
    state = handle(chinese, begin(chinese, index), Choose(0))[0]
    state = handle(chinese, state, "submit")[0]
    event = posted(RuntimeError("boom."), predict=predict)
    yield f"run of {predict.id} failed", shown(handle(chinese, state, event)[0], plain)


# --- the tests ------------------------------------------------------------------------------


def test_the_dictionary_holds_the_interface_words_and_not_code_or_keys() -> None:
    known = interface_words()
    assert {"could", "the", "your", "runs", "failed", "itself"} <= known
    assert not {"backward", "grad", "none", "enter", "quit", "gradtutor", "torch"} & known
    assert len(known) > 300


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
def test_no_english_interface_word_on_any_chinese_screen(plain: bool) -> None:
    chinese = lesson()
    seen = 0
    found: dict[str, list[str]] = {}
    for keys in (True, False):
        for where, lines in screens(chinese, 100, plain, keys=keys):
            seen += 1
            text = "\n".join(lines)
            assert EN_MARK not in text, where
            if english := english_in(text):
                found[f"{where} ({'keys' if keys else 'lines'})"] = english
    look = Look(plain, zh())
    for index, step in enumerate(chinese.steps):
        text = "\n".join(render(step_for_reading(chinese, index, 100, look), 100))
        if english := english_in(text):
            found[f"show {step.id}"] = english
    for where, text in failed_screens(plain):
        assert "\n! " in text, f"{where}: no notice drawn"
        if english := english_in(text):
            found[where] = english
    assert seen > 6 * len(chinese.steps)
    assert found == {}


def test_an_f_string_in_the_interface_would_be_found() -> None:
    """The failure this test exists for: English built without msg() reaches the screen."""
    chinese = lesson()
    index = next(i for i, s in enumerate(chinese.steps) if isinstance(s, Exercise))
    state = begin(chinese, index)
    error = RuntimeError("boom")
    flattened = f"The check itself failed ({type(error).__name__}: {error}); c tries again."
    spoken = msg("The check itself failed ({error}); c tries again, `gradtutor check` shows "
                 "more.", error=f"{type(error).__name__}: {error}")
    exercise_id = chinese.steps[index].id
    bad = handle(chinese, state, CheckFailed(exercise_id, flattened))[0]
    good = handle(chinese, state, CheckFailed(exercise_id, spoken))[0]
    assert {"itself", "failed", "tries", "again"} <= {
        w.lower() for w in english_in(shown(bad, True))}
    assert english_in(shown(good, True)) == []


def test_an_english_starter_comment_would_be_found() -> None:
    chinese = lesson()
    index = next(i for i, s in enumerate(chinese.steps)
                 if isinstance(s, Exercise) and "#" in s.starter)
    step = chinese.steps[index]
    assert isinstance(step, Exercise)
    look = Look(True, zh())
    translated = "\n".join(render(step_for_reading(chinese, index, 100, look), 100))
    assert english_in(translated) == []
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    original = load_course(rules=EXERCISE_RULES).find("grad").steps[index]
    assert isinstance(original, Exercise)
    swapped = dataclasses.replace(
        chinese, steps=tuple(dataclasses.replace(s, starter=original.starter)
                             if isinstance(s, Exercise) and s.id == step.id else s
                             for s in chinese.steps))
    untranslated = "\n".join(render(step_for_reading(swapped, index, 100, look), 100))
    assert english_in(untranslated) != []


# --- punctuation and units the review found wrong -------------------------------------------


def test_the_numbers_of_an_answer_are_listed_with_the_chinese_comma() -> None:
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course
    from gradtutor.lessons.model import Quiz
    from gradtutor.ui.render import feedback_body
    from gradtutor.walk.quiz import mark_answer

    questions = [q for one in load_course(lang="zh-CN", rules=EXERCISE_RULES).lessons
                 for s in one.steps if isinstance(s, Quiz) for q in s.questions]
    question = next(q for q in questions if len(q.correct) > 1)
    wrong = frozenset(set(range(len(question.choices))) - question.correct)
    for tr, expected in ((zh(), "、"), (Look(True).tr, ", ")):
        marks = mark_answer(question, wrong)
        text = " ".join(render(feedback_body(question, 1, 1, marks, Look(True, tr)), 100))
        numbers = [str(i + 1) for i in sorted(question.correct)]
        assert expected.join(numbers) in text, text


def test_a_count_of_nan_entries_has_its_measure_word() -> None:
    from gradtutor.checking.checkers.gradient_kinds import describe

    info = {"none": False, "nan": 2, "inf": 1, "numel": 3, "norm": None}
    assert describe(info, 1.0) == "2 nan and 1 inf of 3 entries"
    assert zh()(describe(info, 1.0)) == "3 个元素中有 2 个 nan 和 1 个 inf"


def test_a_python_error_ending_in_a_full_stop_is_not_given_a_second_one() -> None:
    from gradtutor.checking.outcome import what_went_wrong
    from gradtutor.checking.protocol import Raised

    error: Raised = {"type": "RuntimeError", "message": "Specify retain_graph=True when calling "
                                                       "backward.", "traceback": ""}
    said = msg("Your file could not be loaded: {what}.", what=what_went_wrong(error))
    assert said.endswith("calling backward.") and not said.endswith("..")
    assert zh()(said).endswith("calling backward。")
