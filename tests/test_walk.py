"""The walkthrough's decisions, driven event by event without a terminal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from narrowing import step_as, view_as

from gradtutor.bindings import Ask
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.snippet import SnippetResult
from gradtutor.checking.verdict import Check, Verdict
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Demo, Exercise, Lesson, Parsons, ParsonsRun, Predict, Quiz
from gradtutor.lessons.parsons import assembled
from gradtutor.walk.demo import DemoView
from gradtutor.walk.events import (
    Answer,
    CheckDone,
    CheckFailed,
    CheckWaiting,
    Choose,
    Effect,
    Event,
    FileReady,
    FileSaved,
    Finished,
    OpenEditor,
    Order,
    QuizRestored,
    RestoreQuiz,
    RunCheck,
    RunSnippet,
    Say,
    SnippetDone,
    SnippetFailed,
    Unknown,
    Visit,
    WriteOrder,
    WriteStarter,
)
from gradtutor.walk.exercise import ExerciseView, RecordCheck, RecordHints, RecordSolution
from gradtutor.walk.input import key_event, line_event
from gradtutor.walk.machine import begin, busy, enter, exercise_on_screen, handle, reached_the_end
from gradtutor.walk.parsons import ParsonsView
from gradtutor.walk.predict import PredictView, RecordPrediction
from gradtutor.walk.quiz import QuizAnswered, QuizDone, QuizResult, QuizView
from gradtutor.walk.state import WalkState

FIXTURES = Path(__file__).parent / "fixtures" / "course"
QUIZ = 3  # position of the quiz in the basics fixture: welcome, requires-grad, accumulate, check


@pytest.fixture(scope="module")
def lesson() -> Lesson:
    return load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES)


def drive(lesson: Lesson, state: WalkState, *events: Event) -> tuple[WalkState, list[Effect]]:
    effects: list[Effect] = []
    for event in events:
        state, more = handle(lesson, state, event)
        effects += more
    return state, effects


def quiz_view(state: WalkState) -> QuizView:
    return view_as(state, QuizView)


def exercise_view(state: WalkState) -> ExerciseView:
    return view_as(state, ExerciseView)


def predict_view(state: WalkState) -> PredictView:
    return view_as(state, PredictView)


def parsons_view(state: WalkState) -> ParsonsView:
    return view_as(state, ParsonsView)


def demo_view(state: WalkState) -> DemoView:
    return view_as(state, DemoView)


def repeated(event: Event, times: int) -> list[Event]:
    return [event] * times


def test_next_and_back_move_one_step_and_record_the_visit(lesson: Lesson) -> None:
    state, effects = drive(lesson, begin(lesson, 0), "next", "next", "back")
    assert state.index == 1
    assert effects == [Visit("requires-grad"), Visit("accumulate"), Visit("requires-grad")]


def test_back_on_the_first_step_stays_and_says_why(lesson: Lesson) -> None:
    state, effects = drive(lesson, begin(lesson, 0), "back")
    assert (state.index, effects) == (0, [])
    assert state.notice == "This is the first step."


def test_next_on_the_last_step_finishes_the_lesson(lesson: Lesson) -> None:
    last = len(lesson.steps) - 1
    state, effects = drive(lesson, begin(lesson, last), "next")
    assert state.outcome == "finished"
    assert effects == [Finished()]


def test_quit_stops_without_moving(lesson: Lesson) -> None:
    state, effects = drive(lesson, begin(lesson, 2), "quit")
    assert (state.outcome, state.index, effects) == ("quit", 2, [])


def test_help_toggles_and_any_other_key_closes_it(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, 0), "help")
    assert state.help
    state, _ = drive(lesson, state, "help")
    assert not state.help
    state, _ = drive(lesson, state, "help", "next")
    assert (state.help, state.index) == (False, 1)


def test_a_meaningless_key_explains_itself(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, 0), Unknown("z"))
    assert state.notice == "'z' does nothing here: press ? for the keys."


def test_single_answer_question_keeps_only_the_last_pick(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(0), Choose(1))
    assert quiz_view(state).selected == frozenset({1})


def test_multiple_answer_question_toggles_choices(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(1), "submit", "next")
    state, _ = drive(lesson, state, Choose(0), Choose(2), Choose(0))
    assert quiz_view(state).question == 1
    assert quiz_view(state).selected == frozenset({2})


def test_submitting_nothing_asks_for_a_number(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), "submit")
    assert state.notice == "Choose an answer first: press a number 1-3."
    assert not quiz_view(state).submitted()


def test_a_full_quiz_keeps_each_answer_records_its_score_then_moves_on(lesson: Lesson) -> None:
    state, effects = drive(lesson, begin(lesson, QUIZ),
                           Choose(1), "submit", "next",  # right
                           Choose(0), "submit", "next")  # half of [a, c]: wrong
    assert effects == [QuizAnswered("check", ("b",)), QuizAnswered("check", ("b", "a")),
                       QuizDone("check", 1, 2)]
    assert quiz_view(state).question == 2  # the score screen
    assert quiz_view(state).result(step_as(lesson, QUIZ, Quiz)) == QuizResult(1, 2, False,
                                                                              missed=(2,))
    state, effects = drive(lesson, state, "next")
    assert (state.index, effects) == (QUIZ + 1, [Visit("wrap-up")])


def test_the_pass_mark_decides_the_result_not_the_renderer(lesson: Lesson) -> None:
    quiz = step_as(lesson, QUIZ, Quiz)  # two questions; the default pass mark is 0.7
    both = QuizView(2, answers=(frozenset({1}), frozenset({0, 2})))
    assert both.result(quiz) == QuizResult(2, 2, True, missed=())
    assert both.result(replace(quiz, pass_mark=1.0)).passed
    one = QuizView(2, answers=(frozenset({1}), frozenset({0})))
    assert one.result(replace(quiz, pass_mark=0.5)) == QuizResult(1, 2, True, missed=(2,))


def test_entering_a_quiz_asks_for_the_answers_kept_from_before(lesson: Lesson) -> None:
    state, effects = enter(lesson, QUIZ)
    assert effects == [Visit("check"), RestoreQuiz("check")]
    assert (quiz_view(state).question, quiz_view(state).answers) == (0, ())


def test_a_quiz_left_half_done_goes_on_after_the_answers_kept(lesson: Lesson) -> None:
    state, _ = enter(lesson, QUIZ)
    state, effects = handle(lesson, state, QuizRestored("check", ("b",)))
    assert effects == []
    assert (quiz_view(state).question, quiz_view(state).answers) == (1, (frozenset({1}),))
    assert not quiz_view(state).submitted()  # question 2, waiting for its answer
    assert state.notice == "Welcome back: your earlier answers in this quiz are kept."
    state, effects = drive(lesson, state, Answer(frozenset({0, 2})), "next")
    assert effects == [QuizAnswered("check", ("b", "ac")), QuizDone("check", 2, 2)]
    state, _ = drive(lesson, state, "back", "back")
    assert (quiz_view(state).question, quiz_view(state).answers[0]) == (0, frozenset({1}))


def test_a_quiz_with_every_answer_kept_shows_the_last_verdict_and_enter_scores_it(
    lesson: Lesson,
) -> None:
    state, _ = enter(lesson, QUIZ)
    state, _ = handle(lesson, state, QuizRestored("check", ("a", "ac")))
    assert quiz_view(state).question == 1 and quiz_view(state).submitted()
    state, effects = handle(lesson, state, "submit")
    assert effects == [QuizDone("check", 1, 2)]


@pytest.mark.parametrize(("kept", "answers"), [
    (("b", "z"), 1),  # a letter the question no longer has
    (("ab", "ac"), 0),  # two letters for a question of one answer
    (("", "ac"), 0),
    (("b", "ac", "a"), 2),  # more answers than questions
])
def test_kept_answers_that_no_longer_fit_the_quiz_are_dropped_from_there(
    lesson: Lesson, kept: tuple[str, ...], answers: int,
) -> None:
    state, _ = enter(lesson, QUIZ)
    state, _ = handle(lesson, state, QuizRestored("check", kept))
    assert len(quiz_view(state).answers) == answers


def test_kept_answers_arriving_late_change_nothing(lesson: Lesson) -> None:
    state, _ = drive(lesson, enter(lesson, QUIZ)[0], Choose(2), "submit")
    later, _ = handle(lesson, state, QuizRestored("check", ("b", "ac")))
    assert later == state
    elsewhere, _ = handle(lesson, begin(lesson, 0), QuizRestored("check", ("b",)))
    assert elsewhere == begin(lesson, 0)


def test_reached_the_end_counts_the_score_screen_of_a_last_quiz(lesson: Lesson) -> None:
    only_quiz = replace(lesson, steps=(lesson.steps[QUIZ],))
    state = begin(only_quiz, 0)
    assert not reached_the_end(only_quiz, state)
    state, _ = drive(only_quiz, state, Choose(1), "submit", "next", Answer(frozenset({0})),
                     "next")
    assert reached_the_end(only_quiz, state)  # scored, not yet past it
    assert reached_the_end(only_quiz, drive(only_quiz, state, "next")[0])


def test_back_inside_a_quiz_shows_the_previous_answer(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), Choose(2), "submit", "next", "back")
    assert quiz_view(state).question == 0
    assert quiz_view(state).submitted()
    assert quiz_view(state).answers[0] == frozenset({2})


def test_back_from_the_first_question_leaves_the_quiz(lesson: Lesson) -> None:
    state, effects = drive(lesson, begin(lesson, QUIZ), "back")
    assert state.index == QUIZ - 1
    assert effects == [Visit("accumulate")]


def test_a_typed_answer_out_of_range_is_refused(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), Answer(frozenset({4})))
    assert state.notice == "Answer with numbers 1-3."
    assert not quiz_view(state).submitted()
    state, _ = drive(lesson, begin(lesson, QUIZ), Answer(frozenset({-1})))  # typed 0
    assert state.notice == "Answer with numbers 1-3."
    assert not quiz_view(state).submitted()


def test_several_numbers_on_a_single_answer_question_are_refused(lesson: Lesson) -> None:
    state, _ = drive(lesson, begin(lesson, QUIZ), Answer(frozenset({0, 1})))
    assert state.notice == "Choose only one number for this question."


@pytest.mark.parametrize(("key", "expected"), [
    ("right", "next"), ("n", "next"), ("enter", "next"), ("left", "back"), ("b", "back"),
    ("q", "quit"), ("ctrl-c", "quit"), ("?", "help"), ("x", Unknown("x")),
])
def test_keys_on_a_slide(lesson: Lesson, key: str, expected: Event) -> None:
    assert key_event(lesson, begin(lesson, 0), key) == expected


def test_on_an_open_question_numbers_choose_and_letters_keep_their_meaning(
    lesson: Lesson,
) -> None:
    state = begin(lesson, QUIZ)
    assert key_event(lesson, state, "2") == Choose(1)
    assert key_event(lesson, state, "3") == Choose(2)
    assert key_event(lesson, state, "4") == Unknown("4")  # not a choice of this question
    assert key_event(lesson, state, "b") == "back"  # as on a slide
    assert key_event(lesson, state, "a") == Ask()  # as on a slide
    assert key_event(lesson, state, "q") == "quit"
    assert key_event(lesson, state, "left") == "back"


@pytest.mark.parametrize(("line", "expected"), [
    ("", "next"), ("n", "next"), ("next", "next"), ("b", "back"), ("q", "quit"),
    ("?", "help"), ("what", Unknown("what")),
])
def test_lines_on_a_slide(lesson: Lesson, line: str, expected: Event) -> None:
    assert line_event(lesson, begin(lesson, 0), line + "\n") == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("2", Answer(frozenset({1}))),
    ("1 3", Answer(frozenset({0, 2}))),
    ("1,3", Answer(frozenset({0, 2}))),
    ("13", Answer(frozenset({0, 2}))),
    ("5", Answer(frozenset({4}))),  # out of range: handle() explains
    ("back", "back"),
    ("b", "back"),
    ("q", "quit"),
])
def test_lines_on_an_open_question(lesson: Lesson, line: str, expected: Event) -> None:
    assert line_event(lesson, begin(lesson, QUIZ), line) == expected


# --- an exercise -------------------------------------------------------------------------

EXERCISE = 0  # square-grad, the first step of the second fixture lesson


@pytest.fixture(scope="module")
def second() -> Lesson:
    return load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES)


def a_verdict(passed: bool) -> Verdict:
    check = Check("returns-grad", "pass" if passed else "fail", "you returned w, not w.grad")
    return Verdict("square-grad", "pass" if passed else "fail", (check,), seed=1, duration_ms=5)


def test_arriving_at_an_exercise_writes_its_starter(second: Lesson) -> None:
    state, effects = enter(second, EXERCISE)
    assert effects == [Visit("square-grad"), WriteStarter("square-grad")]
    on_screen = exercise_on_screen(second, state)
    assert on_screen is not None and on_screen.id == "square-grad"
    state, _ = handle(second, state, FileReady("square-grad", starter=False))
    assert exercise_view(state).kept  # the learner's own file was there: the screen says it is kept


def test_coming_back_to_an_exercise_shows_the_hints_and_solution_seen_before(
    second: Lesson,
) -> None:
    state, _ = enter(second, EXERCISE)
    state, effects = handle(second, state, FileReady("square-grad", starter=False, hints=2,
                                                     solution=True))
    assert (exercise_view(state).hints, exercise_view(state).solution) == (2, True)
    assert effects == []  # nothing to record: progress already holds it
    state, _ = enter(second, EXERCISE)
    state, _ = handle(second, state, FileReady("square-grad", starter=True, hints=99))
    # the lesson has 3
    assert (exercise_view(state).hints, exercise_view(state).solution) == (3, False)


def test_coming_back_to_a_passed_exercise_knows_it_was_passed(second: Lesson) -> None:
    state, _ = enter(second, EXERCISE)
    assert not exercise_view(state).passed
    state, _ = handle(second, state, FileReady("square-grad", starter=False, passed=True))
    assert exercise_view(state).passed and exercise_view(state).verdict is None


def test_leaving_an_exercise_stops_watching_it(second: Lesson, lesson: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "next")
    assert exercise_on_screen(second, state) is None
    assert exercise_on_screen(lesson, begin(lesson, 0)) is None


def test_a_save_starts_a_check_and_its_verdict_is_shown_and_recorded(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), FileSaved("square-grad", "d1"))
    assert effects == [RunCheck("square-grad")]
    assert exercise_view(state).checking and busy(state)
    state, effects = drive(second, state, CheckDone("square-grad", a_verdict(False)))
    assert effects == [RecordCheck("square-grad", passed=False)]
    assert not exercise_view(state).checking and not busy(state)
    assert exercise_view(state).verdict == a_verdict(False)


def test_a_check_waiting_for_pytorch_counts_its_seconds_until_the_verdict(
    second: Lesson,
) -> None:
    state, _ = drive(second, begin(second, EXERCISE), FileSaved("square-grad", "d1"))
    assert exercise_view(state).loading is None  # until the shell says the check waits
    state, effects = drive(second, state, CheckWaiting("square-grad", 0))
    assert (exercise_view(state).loading, effects) == (0, [])
    state, effects = drive(second, state, CheckWaiting("square-grad", 3))
    assert (exercise_view(state).loading, effects) == (3, []) and busy(state)
    state, _ = drive(second, state, CheckDone("square-grad", a_verdict(False)))
    assert exercise_view(state).loading is None
    assert drive(second, state, CheckWaiting("square-grad", 4))[0] == state  # late: nothing
    state, _ = drive(second, state, "check", CheckWaiting("square-grad", 1),
                     CheckFailed("square-grad", "Could not check: there is no file x.py."))
    assert exercise_view(state).loading is None and not exercise_view(state).checking


def test_a_save_with_unchanged_content_is_not_checked_again(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), FileSaved("square-grad", "d1"),
                     CheckDone("square-grad", a_verdict(False)))
    state, effects = drive(second, state, FileSaved("square-grad", "d1"))
    assert (effects, exercise_view(state).checking) == ([], False)


def test_saves_during_a_check_are_checked_once_after_it(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), FileSaved("square-grad", "d1"),
                           FileSaved("square-grad", "d2"), FileSaved("square-grad", "d3"))
    assert effects == [RunCheck("square-grad")]  # one check at a time
    assert exercise_view(state).again
    state, effects = drive(second, state, CheckDone("square-grad", a_verdict(False)))
    assert effects == [RecordCheck("square-grad", False), RunCheck("square-grad")]
    assert exercise_view(state).checking and not exercise_view(state).again
    assert exercise_view(state).verdict == a_verdict(False)  # the result before stays in view


def test_c_checks_now_even_without_a_save(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), "check")
    assert (effects, exercise_view(state).checking) == ([RunCheck("square-grad")], True)
    state, effects = drive(second, state, "check")  # while one runs: once more after it
    assert (effects, exercise_view(state).again) == ([], True)


def test_a_check_that_could_not_run_says_why_and_stops_checking(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "check",
                     CheckFailed("square-grad", "Could not check: there is no file x.py."))
    assert not exercise_view(state).checking
    assert state.notice == "Could not check: there is no file x.py."


def test_a_could_not_check_notice_goes_once_a_later_check_gives_its_verdict(
    second: Lesson,
) -> None:
    """The review of 2026-12-05, F10: "there is no file" stayed pinned under three later
    verdicts of the file saved again."""
    state, _ = drive(second, begin(second, EXERCISE), "check",
                     CheckFailed("square-grad", "Could not check: there is no file x.py."))
    for digest in ("d1", "d2"):
        state, _ = drive(second, state, FileSaved("square-grad", digest),
                         CheckDone("square-grad", a_verdict(False)))
        assert state.notice == "" and exercise_view(state).verdict == a_verdict(False)
    # one that could not run after a save that started it says why, until the next verdict
    state, _ = drive(second, state, FileSaved("square-grad", "d3"),
                     CheckFailed("square-grad", "Could not check: there is no file x.py."),
                     FileSaved("square-grad", "d4"))
    assert state.notice == "Could not check: there is no file x.py."
    state, _ = drive(second, state, CheckDone("square-grad", a_verdict(True)))
    assert state.notice == ""


def test_v_shows_the_whole_verdict_and_again_the_short_one(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "verdict")
    assert state.notice.startswith("There is no verdict yet")
    assert not exercise_view(state).whole
    state, _ = drive(second, state, "check", CheckDone("square-grad", a_verdict(False)),
                     "verdict")
    assert exercise_view(state).whole and state.notice == ""
    state, _ = drive(second, state, "check", CheckDone("square-grad", a_verdict(False)))
    assert exercise_view(state).whole  # the learner's choice holds for the next verdicts
    state, _ = drive(second, state, "verdict")
    assert not exercise_view(state).whole


def test_a_verdict_for_an_exercise_left_behind_is_recorded_but_not_shown(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "check", "next")
    state, effects = drive(second, state, CheckDone("square-grad", a_verdict(True)))
    assert effects == [RecordCheck("square-grad", passed=True)]
    assert state.index == EXERCISE + 1 and not isinstance(state.view, ExerciseView)
    state, effects = drive(second, state, FileSaved("square-grad", "d9"))
    assert effects == []


def test_news_from_the_background_leaves_the_help_screen_open(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "check", "help",
                     CheckDone("square-grad", a_verdict(True)))
    verdict = exercise_view(state).verdict
    assert state.help and verdict is not None and verdict.passed


def test_the_hint_ladder_shows_one_more_hint_each_time_then_says_it_is_done(second: Lesson) -> None:
    hints = len(step_as(second, EXERCISE, Exercise).hints)
    state, effects = drive(second, begin(second, EXERCISE), *repeated("hint", hints))
    assert exercise_view(state).hints == hints
    assert effects == [RecordHints("square-grad", n) for n in range(1, hints + 1)]
    state, effects = drive(second, state, "hint")
    assert (exercise_view(state).hints, effects) == (hints, [])
    assert state.notice == "That was the last hint: s shows the solution."


def failing_on(check_name: str) -> Verdict:
    check = Check(check_name, "fail", "not yet")
    return Verdict("square-grad", "fail", (check,), seed=1, duration_ms=5)


def test_three_verdicts_in_a_row_failing_on_one_check_point_at_the_hints(second: Lesson) -> None:
    hints = len(step_as(second, EXERCISE, Exercise).hints)
    state = begin(second, EXERCISE)
    for _ in range(2):
        state, _ = drive(second, state, "check", CheckDone("square-grad", failing_on("a")))
        assert state.notice == ""  # twice is not yet stuck
    state, effects = drive(second, state, "check", CheckDone("square-grad", failing_on("a")))
    assert state.notice == (f"This check has failed 3 times in a row: h shows a hint (0 of "
                            f"{hints} seen so far).")
    assert RecordHints("square-grad", 1) not in effects  # pointed at, not taken for them
    assert exercise_view(state).hints == 0


def test_a_different_failing_check_or_a_pass_starts_the_count_again(second: Lesson) -> None:
    state = begin(second, EXERCISE)
    for name in ("a", "a", "b", "b", "a"):  # never three in a row on one check
        state, _ = drive(second, state, "check", CheckDone("square-grad", failing_on(name)))
        assert state.notice == ""
    state, _ = drive(second, state, "check", CheckDone("square-grad", a_verdict(True)),
                     "check", CheckDone("square-grad", failing_on("a")),
                     "check", CheckDone("square-grad", failing_on("a")))
    assert state.notice == "" and exercise_view(state).stuck == 2


def test_no_pointer_at_the_hints_once_every_hint_is_shown(second: Lesson) -> None:
    hints = len(step_as(second, EXERCISE, Exercise).hints)
    state, _ = drive(second, begin(second, EXERCISE), *repeated("hint", hints))
    for _ in range(3):
        state, _ = drive(second, state, "check", CheckDone("square-grad", failing_on("a")))
    assert "h shows a hint" not in state.notice


def test_the_solution_shows_only_after_yes(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), "solution")
    assert exercise_view(state).confirming and not exercise_view(state).solution and effects == []
    state, effects = drive(second, state, "no")
    assert not exercise_view(state).confirming and not exercise_view(state).solution
    assert state.notice == "The solution stays hidden."
    state, effects = drive(second, state, "solution", "yes")
    assert exercise_view(state).solution and effects == [RecordSolution("square-grad")]
    state, effects = drive(second, state, "solution")
    assert (effects, state.notice) == ([], "The solution is on the screen.")


def test_any_other_key_while_asked_keeps_the_solution_hidden_and_stays(second: Lesson) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "solution")
    state, effects = drive(second, state, key_event(second, state, "n"))  # n: no, not next
    assert (state.index, exercise_view(state).solution, effects) == (EXERCISE, False, [])


def test_e_asks_for_the_editor_and_the_shell_can_say_what_went_wrong(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), "edit")
    assert effects == [OpenEditor("square-grad")]
    state, _ = drive(second, state, Say("No editor found: set EDITOR."))
    assert state.notice == "No editor found: set EDITOR."


def test_next_skips_an_unsolved_exercise(second: Lesson) -> None:
    state, effects = drive(second, begin(second, EXERCISE), "next")
    assert state.index == EXERCISE + 1
    assert effects == [Visit(second.steps[EXERCISE + 1].id)]


def test_watching_an_exercise_alone_right_and_left_stay_on_it_and_say_how_to_stop(
        second: Lesson) -> None:
    alone = replace(second, steps=(second.steps[EXERCISE],))
    watched = replace(begin(alone, 0), watching=True)
    for key in ("right", "left"):
        state, effects = drive(alone, watched, key_event(alone, watched, key))
        assert (state.outcome, state.index, effects) == (None, 0, [])
        assert state.notice == "This is the only step here: q stops watching."
        assert exercise_on_screen(alone, state) is not None  # its file is still watched
    assert drive(alone, watched, "quit")[0].outcome == "quit"


@pytest.mark.parametrize(("key", "expected"), [
    ("e", "edit"), ("c", "check"), ("h", "hint"), ("s", "solution"), ("n", "next"),
    ("right", "next"), ("enter", "next"), ("b", "back"), ("left", "back"), ("?", "help"),
    ("q", "quit"), ("x", Unknown("x")),
])
def test_keys_on_an_exercise(second: Lesson, key: str, expected: Event) -> None:
    assert key_event(second, begin(second, EXERCISE), key) == expected


@pytest.mark.parametrize(("key", "expected"), [
    ("y", "yes"), ("Y", "yes"), ("n", "no"), ("esc", "no"), ("enter", "no"), ("q", "quit"),
])
def test_keys_while_the_solution_is_asked_for(second: Lesson, key: str, expected: Event) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "solution")
    assert key_event(second, state, key) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("e", "edit"), ("edit", "edit"), ("c", "check"), ("h", "hint"), ("hint", "hint"),
    ("s", "solution"), ("n", "next"), ("skip", "next"), ("", "next"), ("b", "back"),
    ("?", "help"), ("help", "help"), ("q", "quit"),
])
def test_lines_on_an_exercise(second: Lesson, line: str, expected: Event) -> None:
    assert line_event(second, begin(second, EXERCISE), line + "\n") == expected


@pytest.mark.parametrize(("line", "expected"), [("y", "yes"), ("yes", "yes"), ("", "no"),
                                                 ("n", "no"), ("q", "quit")])
def test_lines_while_the_solution_is_asked_for(second: Lesson, line: str, expected: Event) -> None:
    state, _ = drive(second, begin(second, EXERCISE), "solution")
    assert line_event(second, state, line) == expected


# --- predict, Parsons and demo -------------------------------------------------------------

PREDICT, PARSONS, DEMO = 1, 2, 3  # twice, training-step and descent in the second lesson


def a_result(shown: str | None = "4.0",
             series: tuple[tuple[str, tuple[float, ...]], ...] = ()) -> SnippetResult:
    return SnippetResult(ok=True, shown=shown, series=series, output="", error=None,
                         duration_ms=3)


def test_a_prediction_is_chosen_then_submitted_then_its_snippet_runs(second: Lesson) -> None:
    step = step_as(second, PREDICT, Predict)
    state, effects = drive(second, begin(second, PREDICT), Choose(0), Choose(1))
    assert (predict_view(state).chosen, predict_view(state).submitted, effects) == (1, False, [])
    state, effects = drive(second, state, "submit")
    assert predict_view(state).submitted and busy(state)
    assert effects == [RecordPrediction("twice", "b", right=step.answer == "b"),
                       RunSnippet("twice", step.code, show=step.show)]
    state, _ = drive(second, state, SnippetDone("twice", a_result()))
    assert predict_view(state).result == a_result() and not busy(state)
    state, effects = drive(second, state, "submit")  # Enter again: on to the next step
    assert state.index == PREDICT + 1


def test_a_prediction_needs_a_choice_and_the_choice_cannot_change_once_submitted(
    second: Lesson,
) -> None:
    state, effects = drive(second, begin(second, PREDICT), "submit")
    assert (effects, state.notice) == ([], "Choose an answer first: press a number 1-2.")
    state, _ = drive(second, state, Choose(0), "submit", Choose(1))
    assert predict_view(state).chosen == 0
    assert state.notice == "'that' does nothing here: press ? for the keys."


def test_a_typed_number_answers_a_prediction_at_once(second: Lesson) -> None:
    state = begin(second, PREDICT)
    assert line_event(second, state, "1\n") == Answer(frozenset({0}))
    state, effects = drive(second, state, Answer(frozenset({0})))
    assert predict_view(state).submitted and effects[0] == RecordPrediction("twice", "a", False)
    state, _ = drive(second, begin(second, PREDICT), Answer(frozenset({0, 1})))
    assert state.notice == "Answer with one number, 1-2." and not predict_view(state).submitted


def test_a_prediction_can_be_skipped_and_its_late_result_is_ignored(second: Lesson) -> None:
    state, effects = drive(second, begin(second, PREDICT), "next")
    assert state.index == PREDICT + 1
    state, effects = drive(second, begin(second, PREDICT), Choose(1), "submit", "back")
    after, more = drive(second, state, SnippetDone("twice", a_result()))
    assert (after, more) == (state, [])


def test_keys_on_a_prediction(second: Lesson) -> None:
    state = begin(second, PREDICT)
    assert key_event(second, state, "2") == Choose(1)
    assert key_event(second, state, "b") == "back"  # as on a slide, never a choice
    assert key_event(second, state, "a") == Ask()
    assert key_event(second, state, "enter") == "submit"
    assert key_event(second, state, "right") == "next"
    assert key_event(second, state, "left") == "back"


def test_a_parsons_step_starts_shuffled_and_wrong(second: Lesson) -> None:
    step = step_as(second, PARSONS, Parsons)
    state = begin(second, PARSONS)
    assert sorted(parsons_view(state).order) == sorted(line.id for line in step.lines)
    assert parsons_view(state).order != step.solution_order
    state, effects = drive(second, state, "submit")
    verdict = parsons_view(state).verdict
    assert verdict is not None and not verdict.passed
    # the order graded is the step's answer now, for `gradtutor check` too
    shown = tuple(step.line(i).code for i in parsons_view(state).order)
    assert effects == [WriteOrder(step.id, shown)]


def test_the_cursor_moves_and_a_grabbed_line_moves_with_it(second: Lesson) -> None:
    start = begin(second, PARSONS)
    first, secondline = parsons_view(start).order[:2]
    state, _ = drive(second, start, "up", "down")
    assert (parsons_view(state).cursor, parsons_view(state).order) == (1, parsons_view(start).order)
    state, _ = drive(second, start, "grab", "down")
    assert parsons_view(state).order[:2] == (secondline, first)
    assert (parsons_view(state).cursor, parsons_view(state).grabbed) == (1, True)
    state, _ = drive(second, state, "grab", "down")  # dropped: only the cursor moves now
    assert parsons_view(state).order[:2] == (secondline, first) and parsons_view(state).cursor == 2
    last = len(parsons_view(start).order) - 1
    state, _ = drive(second, state, *repeated("down", 5))
    assert parsons_view(state).cursor == last  # it stops at the end


def test_moving_a_line_clears_the_old_grade(second: Lesson) -> None:
    state, _ = drive(second, begin(second, PARSONS), "submit")
    assert parsons_view(state).verdict is not None
    state, _ = drive(second, state, "grab", "down")
    assert parsons_view(state).verdict is None


def typed_solution(state: WalkState, step: Parsons) -> Order:
    return Order(tuple(parsons_view(state).order.index(i) + 1 for i in step.solution_order))


def test_a_typed_order_is_graded_and_a_right_one_moves_on_with_enter(second: Lesson) -> None:
    step = step_as(second, PARSONS, Parsons)
    state = begin(second, PARSONS)
    order = typed_solution(state, step)
    assert line_event(second, state, " ".join(map(str, order.numbers))) == order
    state, effects = drive(second, state, order)
    verdict = parsons_view(state).verdict
    assert parsons_view(state).order == step.solution_order and verdict is not None
    assert verdict.passed
    answer = WriteOrder(step.id, tuple(step.line(i).code for i in step.solution_order))
    if step.run is not None:
        assert effects == [answer, RunSnippet(step.id, assembled(step, step.solution_order),
                                              series=(step.run.series,))]
    else:
        assert effects == [answer]
    state, _ = drive(second, state, "submit")
    assert state.index == PARSONS + 1


def test_when_a_right_order_has_a_run_its_effect_arrives_as_news(second: Lesson) -> None:
    step = replace(step_as(second, PARSONS, Parsons), run=ParsonsRun(
        setup="x = 1.0", record="x", series="xs", repeat=3))
    lesson = replace(second, steps=(*second.steps[:PARSONS], step, *second.steps[PARSONS + 1:]))
    state = begin(lesson, PARSONS)
    state, effects = drive(lesson, state, typed_solution(state, step))
    assert busy(state) and isinstance(effects[1], RunSnippet) and effects[1].series == ("xs",)
    result = a_result(None, (("xs", (1.0, 1.0, 1.0)),))
    state, _ = drive(lesson, state, SnippetDone(step.id, result))
    assert (parsons_view(state).run, busy(state)) == (result, False)


@pytest.mark.parametrize("numbers", [(1, 2), (1, 1, 2, 3), (0, 1, 2, 3), (1, 2, 3, 5)])
def test_a_typed_order_must_name_each_line_once(second: Lesson, numbers: tuple[int, ...]) -> None:
    state, effects = drive(second, begin(second, PARSONS), Order(numbers))
    assert effects == [] and parsons_view(state).verdict is None
    assert state.notice == "Type each line number once, in the new order, such as 2 1 3 4."


@pytest.mark.parametrize(("key", "expected"), [
    ("up", "up"), ("down", "down"), ("k", "up"), ("j", "down"), ("space", "grab"),
    ("enter", "submit"), ("right", "next"), ("n", "next"), ("left", "back"), ("q", "quit"),
])
def test_keys_on_a_parsons_step(second: Lesson, key: str, expected: Event) -> None:
    assert key_event(second, begin(second, PARSONS), key) == expected


def test_a_demo_runs_on_arrival_and_shows_its_result_when_it_comes(second: Lesson) -> None:
    step = step_as(second, DEMO, Demo)
    assert step.chart is not None
    state, effects = enter(second, DEMO)
    assert effects == [Visit(step.id), RunSnippet(step.id, step.code, series=step.chart.series)]
    assert busy(state)
    state, _ = drive(second, state, SnippetFailed(step.id, "The code could not be run (x)."))
    assert (busy(state), state.notice) == (False, "The code could not be run (x).")
    result = a_result(None, (("losses", (3.0, 2.0, 1.0)),))
    state, _ = drive(second, begin(second, DEMO), SnippetDone(step.id, result))
    assert demo_view(state).result == result
