"""The walkthrough's decisions, driven event by event without a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Lesson
from gradtutor.walk import (
    Answer,
    Choose,
    Finished,
    QuizDone,
    Unknown,
    Visit,
    WalkState,
    begin,
    handle,
    key_event,
    line_event,
)

FIXTURES = Path(__file__).parent / "fixtures" / "course"
QUIZ = 3  # position of the quiz in the basics fixture: welcome, requires-grad, accumulate, check


@pytest.fixture(scope="module")
def lesson() -> Lesson:
    return load_lesson(FIXTURES / "basics.yaml")


def drive(lesson: Lesson, state: WalkState, *events):
    effects = []
    for event in events:
        state, more = handle(lesson, state, event)
        effects += more
    return state, effects


def test_next_and_back_move_one_step_and_record_the_visit(lesson):
    state, effects = drive(lesson, begin(lesson, 0), "next", "next", "back")
    assert state.index == 1
    assert effects == [Visit("requires-grad"), Visit("accumulate"), Visit("requires-grad")]


def test_back_on_the_first_step_stays_and_says_why(lesson):
    state, effects = drive(lesson, begin(lesson, 0), "back")
    assert (state.index, effects) == (0, [])
    assert state.notice == "This is the first step."


def test_next_on_the_last_step_finishes_the_lesson(lesson):
    last = len(lesson.steps) - 1
    state, effects = drive(lesson, begin(lesson, last), "next")
    assert state.outcome == "finished"
    assert effects == [Finished()]


def test_quit_stops_without_moving(lesson):
    state, effects = drive(lesson, begin(lesson, 2), "quit")
    assert (state.outcome, state.index, effects) == ("quit", 2, [])


def test_help_toggles_and_any_other_key_closes_it(lesson):
    state, _ = drive(lesson, begin(lesson, 0), "help")
    assert state.help
    state, _ = drive(lesson, state, "help")
    assert not state.help
    state, _ = drive(lesson, state, "help", "next")
    assert (state.help, state.index) == (False, 1)


def test_a_meaningless_key_explains_itself(lesson):
    state, _ = drive(lesson, begin(lesson, 0), Unknown("z"))
    assert state.notice == "'z' does nothing here: press ? for the keys."


def test_single_answer_question_keeps_only_the_last_pick(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(0), Choose(1))
    assert state.quiz.selected == frozenset({1})


def test_multiple_answer_question_toggles_choices(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(1), "submit", "next")
    state, _ = drive(lesson, state, Choose(0), Choose(2), Choose(0))
    assert state.quiz.question == 1
    assert state.quiz.selected == frozenset({2})


def test_submitting_nothing_asks_for_a_letter(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), "submit")
    assert state.notice == "Choose an answer first: press a letter a-c."
    assert not state.quiz.submitted()


def test_a_full_quiz_records_its_score_then_moves_on(lesson):
    state, effects = drive(lesson, begin(lesson, QUIZ),
                           Choose(1), "submit", "next",  # right
                           Choose(0), "submit", "next")  # half of [a, c]: wrong
    assert effects == [QuizDone("check", 1, 2)]
    assert state.quiz.question == 2  # the score screen
    state, effects = drive(lesson, state, "next")
    assert (state.index, effects) == (QUIZ + 1, [Visit("wrap-up")])


def test_back_inside_a_quiz_shows_the_previous_answer(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(2), "submit", "next", "back")
    assert state.quiz.question == 0
    assert state.quiz.submitted()
    assert state.quiz.answers[0] == frozenset({2})


def test_back_from_the_first_question_leaves_the_quiz(lesson):
    state, effects = drive(lesson, begin(lesson, QUIZ), "back")
    assert state.index == QUIZ - 1
    assert effects == [Visit("accumulate")]


def test_a_typed_answer_out_of_range_is_refused(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), Answer(frozenset({4})))
    assert state.notice == "Answer with letters a-c."
    assert not state.quiz.submitted()


def test_several_letters_on_a_single_answer_question_are_refused(lesson):
    state, _ = drive(lesson, begin(lesson, QUIZ), Answer(frozenset({0, 1})))
    assert state.notice == "Choose only one letter for this question."


@pytest.mark.parametrize(("key", "expected"), [
    ("right", "next"), ("n", "next"), ("enter", "submit"), ("left", "back"), ("b", "back"),
    ("q", "quit"), ("ctrl-c", "quit"), ("?", "help"), ("x", Unknown("x")),
])
def test_keys_on_a_slide(lesson, key, expected):
    assert key_event(lesson, begin(lesson, 0), key) == expected


def test_on_an_open_question_choice_letters_choose_even_b(lesson):
    state = begin(lesson, QUIZ)
    assert key_event(lesson, state, "b") == Choose(1)
    assert key_event(lesson, state, "C") == Choose(2)
    assert key_event(lesson, state, "q") == "quit"  # not a choice of this question
    assert key_event(lesson, state, "left") == "back"


@pytest.mark.parametrize(("line", "expected"), [
    ("", "submit"), ("n", "next"), ("next", "next"), ("b", "back"), ("q", "quit"),
    ("?", "help"), ("what", Unknown("what")),
])
def test_lines_on_a_slide(lesson, line, expected):
    assert line_event(lesson, begin(lesson, 0), line + "\n") == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("b", Answer(frozenset({1}))),
    ("a c", Answer(frozenset({0, 2}))),
    ("a,c", Answer(frozenset({0, 2}))),
    ("AC", Answer(frozenset({0, 2}))),
    ("e", Answer(frozenset({4}))),  # out of range: handle() explains
    ("back", "back"),
    ("q", "quit"),
])
def test_lines_on_an_open_question(lesson, line, expected):
    assert line_event(lesson, begin(lesson, QUIZ), line) == expected
