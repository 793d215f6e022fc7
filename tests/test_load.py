"""The lesson loader: the fixture course loads, and every broken file is reported exactly.

Each invalid case writes its YAML into tmp_path and asserts the full `path:line:col: message`
lines an author sees, so a wrong position or a reworded message fails here.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import ExitCode, GradtutorError, LessonProblems
from gradtutor.lessons.course import Course, lesson_files, load_course
from gradtutor.lessons.exercise_rules import ExerciseRules
from gradtutor.lessons.load import lesson_head, load_lesson, load_lesson_file
from gradtutor.lessons.model import Demo, Exercise, Parsons, Predict, Proof, Quiz, Slide

FIXTURE = Path(__file__).parent / "fixtures" / "course"
KINDS = "slide, quiz, exercise, predict, parsons, demo"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problems then show `lesson.yaml`, as an author would type it


def problems(text: str, name: str = "lesson.yaml", rules: ExerciseRules = EXERCISE_RULES
             ) -> list[str]:
    """Write `text` (dedented) to `name` in the cwd and load it, its exercises validated by
    `rules`; every problem as printed."""
    path = Path(name)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    lesson, found = load_lesson_file(path, rules)
    assert (lesson is None) == bool(found), "a lesson comes back exactly when nothing is wrong"
    return [str(problem) for problem in found]


# indented like the inline YAML below, which `problems` dedents as a whole
HEAD = """\
    id: demo
    title: Demo
    summary: A lesson for tests.
    order: 1
"""
FLAT_HEAD = textwrap.dedent(HEAD)

QUIZ = HEAD + """\
    steps:
      - kind: quiz
        id: check
        title: Check
        questions:
          - id: q1
            prompt: Which one?
            choices:
              - text: one
                why: because
              - text: two
                why: because
            answer: {answer}
"""  # the answer is on line 17, its value at column 17


def quiz_answer(answer: str) -> list[str]:
    return problems(QUIZ.format(answer=answer))


# --- the fixture course ---------------------------------------------------------------------


def test_fixture_basics_lesson_loads_into_the_typed_model() -> None:
    lesson = load_lesson(FIXTURE / "basics.yaml", EXERCISE_RULES)
    assert (lesson.id, lesson.order, lesson.title) == ("basics", 1, "Gradient basics")
    assert [step.kind for step in lesson.steps] == ["slide", "slide", "slide", "quiz", "slide"]
    slides = [step for step in lesson.steps if isinstance(step, Slide)]
    assert [slide.code is not None for slide in slides] == [False, True, False, False]
    assert "requires_grad=True" in (slides[1].code or "")
    assert lesson.index_of("check") == 3 and lesson.index_of("nope") is None
    (quiz,) = lesson.quizzes
    assert isinstance(quiz, Quiz) and quiz.pass_mark == 0.7
    single, multiple = quiz.questions
    assert (single.answer, single.correct, single.multiple) == ("b", frozenset({1}), False)
    assert (multiple.answer, multiple.correct, multiple.multiple) == (
        ("a", "c"), frozenset({0, 2}), True)
    assert single.choices[0].text == "2"  # quoted in the YAML, so text and not a number


def test_fixture_second_lesson_has_every_other_step_kind() -> None:
    lesson = load_lesson(FIXTURE / "second.yaml", EXERCISE_RULES)
    exercise, predict, parsons, demo = lesson.steps
    assert isinstance(exercise, Exercise) and exercise.function == "read_grad"
    assert len(exercise.hints) == 3 and len(exercise.mutants) == 4 and exercise.timeout == 5
    assert exercise.mutants[0].replace[0].with_ == ""
    for mutant in exercise.mutants:  # each edit must apply to the solution exactly once
        for edit in mutant.replace:
            assert exercise.solution.count(edit.find) == 1, (mutant.id, edit.find)
    assert isinstance(predict, Predict) and predict.answer == "b" and len(predict.choices) == 2
    assert isinstance(parsons, Parsons)
    assert [(line.id, line.after) for line in parsons.lines] == [
        ("zero", ()), ("loss", ("zero",)), ("backward", ("loss",)), ("step", ("backward",))]
    assert isinstance(demo, Demo) and demo.chart is not None
    chart = demo.chart
    assert (chart.series, chart.x_label, chart.y_label) == (("losses",), "step", "loss")


def test_fixture_course_loads_in_order_and_uses_every_step_kind() -> None:
    course = load_course(FIXTURE, rules=EXERCISE_RULES)
    assert [lesson.id for lesson in course.lessons] == ["basics", "second"]
    kinds = {step.kind for lesson in course.lessons for step in lesson.steps}
    assert kinds == {"slide", "quiz", "exercise", "predict", "parsons", "demo"}


def test_a_valid_file_has_no_problems(tmp_path: Path) -> None:
    assert problems((FIXTURE / "basics.yaml").read_text()) == []


# --- unknown keys ---------------------------------------------------------------------------


def test_unknown_top_level_key_suggests_the_close_one() -> None:
    # `titel` is both unknown and leaves `title` missing: one line says it, not two
    assert problems("""\
        id: demo
        titel: Demo
        summary: A lesson for tests.
        order: 1
        steps:
          - kind: slide
            id: intro
            title: Intro
            body: Hello.
    """) == ["lesson.yaml:2:1: unknown key 'titel'; did you mean 'title'?"]


def test_unknown_key_inside_a_step_suggests_the_close_one() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: Intro
        bdy: Hello.
    """) == ["lesson.yaml:9:5: unknown key 'bdy'; did you mean 'body'?"]


def test_unknown_key_inside_a_quiz_choice_suggests_the_close_one() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: quiz
        id: check
        title: Check
        questions:
          - id: q1
            prompt: Which one?
            choices:
              - text: one
                whyy: because
              - text: two
                why: because
            answer: a
    """) == ["lesson.yaml:14:13: unknown key 'whyy'; did you mean 'why'?"]


def test_unknown_key_with_no_close_match_lists_the_allowed_keys() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: Intro
        body: Hello.
        colour: red
    """) == [
        "lesson.yaml:10:5: unknown key 'colour'; allowed keys: asks, body, code, errors, id, "
        "kind, notes, optional, title"]


def test_unknown_key_in_a_replacement_suggests_with_not_the_python_name() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        '            with: "return w"', '            wiht: "return w"')
    assert problems(text) == ["lesson.yaml:60:13: unknown key 'wiht'; did you mean 'with'?"]


def test_a_key_named_like_the_step_kind_does_not_move_other_positions() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        slide: Intro
        id: intro
        body: Hello.
    """) == [
        "lesson.yaml:6:5: missing required key 'title' in steps[1]; add `title:`",
        "lesson.yaml:7:5: unknown key 'slide'; allowed keys: asks, body, code, errors, id, "
        "kind, notes, optional, title",
    ]


# --- missing keys, kinds, ids -------------------------------------------------------------------


def test_missing_top_level_field() -> None:
    assert problems("""\
        id: demo
        title: Demo
        order: 1
        steps:
          - kind: slide
            id: intro
            title: Intro
            body: Hello.
    """) == ["lesson.yaml:1:1: missing required key 'summary' in the lesson; add `summary:`"]


def test_missing_field_in_a_step_points_at_the_step() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        body: Hello.
    """) == ["lesson.yaml:6:5: missing required key 'title' in steps[1]; add `title:`"]


def test_duplicate_step_id_points_at_the_second_one() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: Intro
        body: Hello.
      - kind: slide
        id: intro
        title: Again
        body: Hello again.
    """) == ["lesson.yaml:11:9: duplicate step id 'intro' (also step 1); "
             "step ids must be unique in a lesson"]


def test_duplicate_question_id_in_a_quiz() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace("id: accumulates", "id: grad-value")
    assert problems(text) == [
        "lesson.yaml:42:13: duplicate question id 'grad-value'; make it unique"]


def test_duplicate_yaml_key_points_at_the_second_one() -> None:
    assert problems(HEAD + """\
    title: Demo again
    steps:
      - kind: slide
        id: intro
        title: Intro
        body: Hello.
    """) == ["lesson.yaml:5:1: duplicate key 'title'; keep only one of them"]


def test_unknown_step_kind_suggests_the_close_one() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slid
        id: intro
        title: Intro
        body: Hello.
    """) == ["lesson.yaml:6:11: unknown step kind 'slid'; did you mean 'slide'?"]


def test_unknown_step_kind_with_no_close_match_lists_the_kinds() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: xylophone
        id: intro
    """) == [f"lesson.yaml:6:11: unknown step kind 'xylophone'; use one of: {KINDS}"]


def test_step_kind_that_is_not_text() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: [slide]
        id: intro
    """) == [f"lesson.yaml:6:11: 'kind' must be one of: {KINDS}, not a list"]


def test_missing_step_kind() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: Intro
        body: Hello.
      - id: more
        title: More
        body: Hello again.
    """) == [f"lesson.yaml:10:5: missing required key 'kind' in steps[2]; "
             f"add `kind:` with one of: {KINDS}"]


def test_a_step_that_is_not_a_mapping() -> None:
    assert problems(HEAD + """\
    steps:
      - just some text
    """) == ["lesson.yaml:6:5: 'steps[1]' must be a mapping of keys, not text"]


def test_bad_id_pattern() -> None:
    assert problems("""\
        id: Gradient_Basics
        title: Demo
        summary: A lesson for tests.
        order: 1
        steps:
          - kind: slide
            id: intro
            title: Intro
            body: Hello.
    """) == ["lesson.yaml:1:5: 'id' 'Gradient_Basics' is not a valid id; use lowercase letters, "
             "digits and single dashes, like `zero-grad`"]


def test_id_too_long() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace("id: basics", "id: " + "b" * 61)
    assert problems(text) == ["lesson.yaml:1:5: 'id' must be at most 60 characters long, not 61"]


def test_bad_function_name_in_an_exercise() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "function: read_grad", "function: 2nd_grad")
    assert problems(text) == [
        "lesson.yaml:10:15: 'function' '2nd_grad' is not a Python function name; use letters, "
        "digits and underscores, not starting with a digit, like `zero_grad`"]


# --- quiz and predict answers ---------------------------------------------------------------


def test_single_answer_out_of_range() -> None:
    assert quiz_answer("c") == [
        "lesson.yaml:17:17: answer 'c' is out of range: there are 2 choices (a-b); "
        "point it at one of them"]


def test_answer_in_a_list_out_of_range_points_at_the_letter() -> None:
    assert quiz_answer("[a, d]") == [
        "lesson.yaml:17:21: answer 'd' is out of range: there are 2 choices (a-b); "
        "point it at one of them"]


PROVEN = HEAD + """\
    steps:
      - kind: quiz
        id: check
        title: Check
        questions:
          - id: q1
            prompt: What is `x`?
            code: x = [1, 2]
            choices:
              - text: a list of two
                why: because
                proof:
                  holds: {holds}
              - text: empty
                why: because
                proof:
                  code: |
                    n = len(x)
                    {code}
                  holds: n == 0
            answer: a
"""  # the first `holds` value is on line 17, column 22; the second proof's `code: |` on line 21


def test_a_proof_loads_as_its_holds_and_its_code() -> None:
    assert problems(PROVEN.format(holds="len(x) == 2", code="n = n")) == []
    lesson = load_lesson(Path("lesson.yaml"), EXERCISE_RULES)
    quiz = lesson.steps[0]
    assert isinstance(quiz, Quiz)
    first, second = quiz.questions[0].choices
    assert first.proof == Proof(holds="len(x) == 2")
    assert second.proof == Proof(holds="n == 0", code="n = len(x)\nn = n\n")


def test_a_proof_whose_holds_is_not_an_expression_is_a_problem_at_its_line() -> None:
    # Python's own words for the syntax error differ between versions; where and the hint do not
    found = problems(PROVEN.format(holds="len(x) = 2", code="n = n"))
    assert len(found) == 1 and re.fullmatch(
        r"lesson\.yaml:17:22: the proof's 'holds' is not valid Python: .*invalid syntax.*; "
        r"write one expression, such as `w\.grad is None`", found[0]), found
    assert problems(PROVEN.format(holds="x != 'y = 2'", code="n = n")) == []  # an expression


def test_a_proof_whose_code_does_not_parse_is_a_problem_at_its_line() -> None:
    found = problems(PROVEN.format(holds="len(x) == 2", code="m = (n +"))
    assert len(found) == 1 and re.fullmatch(
        r"lesson\.yaml:21:21: the proof's 'code' is not valid Python: .+ \(line 2 of it\); it "
        r"runs after the question's code, in the same namespace", found[0]), found


def test_a_predict_choice_takes_no_proof() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        '        why: Two backwards each add 2.\n',
        '        why: Two backwards each add 2.\n        proof:\n          holds: "True"\n')
    assert problems(text) == [
        "lesson.yaml:80:11: a predict step's choices take no 'proof': running its code and "
        "`show` proves the answer key; remove it"]


def test_predict_answer_out_of_range() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "    answer: b\n  - kind: parsons", "    answer: e\n  - kind: parsons")
    assert problems(text) == [
        "lesson.yaml:79:13: answer 'e' is out of range: there are 2 choices (a-b); "
        "point it at one of them"]


@pytest.mark.parametrize(("answer", "got"), [
    ("B", "'B'"),
    ("first", "'first'"),
    ("1", "a number"),
    ("yes", "true/false"),  # YAML 1.1 reads `yes` as a boolean
])
def test_answer_that_is_not_a_letter(answer: str, got: str) -> None:
    assert quiz_answer(answer) == [
        f"lesson.yaml:17:17: 'answer' must be a letter a-z or a list of letters, not {got}; "
        f"write for example `answer: b` or `answer: [a, c]`"]


def test_answer_list_with_an_item_that_is_not_a_letter() -> None:
    assert quiz_answer("[a, 2, C]") == [
        "lesson.yaml:17:21: 'answer' lists a number, which is not a letter a-z; "
        "write for example `answer: [a, c]`",
        "lesson.yaml:17:24: 'answer' lists 'C', which is not a letter a-z; "
        "write for example `answer: [a, c]`",
    ]


def test_empty_answer() -> None:
    assert quiz_answer("") == [
        "lesson.yaml:17:16: 'answer' must be a letter a-z or a list of letters, not empty; "
        "write for example `answer: b` or `answer: [a, c]`"]


def test_empty_answer_list() -> None:
    assert quiz_answer("[]") == [
        "lesson.yaml:17:17: 'answer' needs at least one letter, for example [a, c]"]


def test_answer_list_repeating_a_letter() -> None:
    assert quiz_answer("[a, a]") == [
        "lesson.yaml:17:17: answer lists a letter twice; list each correct letter once"]


def test_predict_answer_not_a_letter() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "    answer: b\n  - kind: parsons", "    answer: B\n  - kind: parsons")
    assert problems(text) == [
        "lesson.yaml:79:13: 'answer' must be a letter a-z, not 'B'; write for example `answer: b`"]


def test_quiz_with_one_choice() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: quiz
        id: check
        title: Check
        questions:
          - id: q1
            prompt: Which one?
            choices:
              - text: one
                why: because
            answer: a
    """) == ["lesson.yaml:13:11: 'choices' needs at least 2 items, but has 1"]


# --- types and ranges -----------------------------------------------------------------------


def test_number_where_text_is_expected_suggests_quoting() -> None:
    assert problems("""\
        id: demo
        title: 2024
        summary: A lesson for tests.
        order: 1
        steps:
          - kind: slide
            id: intro
            title: Intro
            body: Hello.
    """) == ["lesson.yaml:2:8: 'title' must be text, not a number (quote it if it is text)"]


def test_yes_where_text_is_expected_suggests_quoting() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace("text: None", "text: yes")
    assert problems(text) == [
        "lesson.yaml:39:19: 'text' must be text, not true/false (quote it if it is text)"]


def test_empty_value_where_text_is_expected() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title:
        body: Hello.
    """) == ["lesson.yaml:8:11: 'title' must be text, not empty; write some text"]


def test_empty_quoted_text() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: ''
        body: Hello.
    """) == ["lesson.yaml:8:12: 'title' must not be empty; write some text"]


def test_text_where_a_whole_number_is_expected() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace("order: 1", "order: first")
    assert problems(text) == ["lesson.yaml:4:8: 'order' must be a whole number, not text"]


def test_fraction_where_a_whole_number_is_expected() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace("order: 1", "order: 1.5")
    assert problems(text) == ["lesson.yaml:4:8: 'order' must be a whole number, not 1.5"]


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("order: 1", "order: 0", "lesson.yaml:4:8: 'order' must be at least 1, not 0"),
    ("minutes: 5", "minutes: 0", "lesson.yaml:5:10: 'minutes' must be at least 1, not 0"),
    ("    intro:", "    pass_mark: 1.5\n    intro:",
     "lesson.yaml:30:16: 'pass_mark' must be at most 1, not 1.5"),
])
def test_numbers_out_of_range(old: str, new: str, expected: str) -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace(old, new)
    assert problems(text) == [expected]


def test_wrong_type_for_a_list_item() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "      - Call backward on a scalar.", "      - 42")
    assert problems(text) == [
        "lesson.yaml:35:9: 'hints[2]' must be text, not a number (quote it if it is text)"]


def test_mapping_where_a_list_is_expected() -> None:
    assert problems(HEAD + """\
    steps:
      kind: slide
      id: intro
    """) == ["lesson.yaml:6:3: 'steps' must be a list, not a mapping"]


def test_no_steps() -> None:
    assert problems(FLAT_HEAD + "steps: []\n") == [
        "lesson.yaml:5:8: 'steps' needs at least 1 item, but has 0"]


# --- exercises and parsons ------------------------------------------------------------------


def test_too_few_hints() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "      - Read `.grad` from the leaf.\n", "")
    assert problems(text) == ["lesson.yaml:34:7: 'hints' needs at least 3 items, but has 2"]


def test_too_few_mutants() -> None:
    text = (FIXTURE / "second.yaml").read_text()
    start = text.index("      - id: returns-input")
    end = text.index("    why: backward")
    assert problems(text[:start] + text[end:]) == [
        "lesson.yaml:38:7: 'mutants' needs at least 4 items, but has 3"]


def test_replacement_without_with() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace('            with: "return w"\n', "")
    assert problems(text) == [
        "lesson.yaml:59:13: missing required key 'with' in steps[1].mutants[4].replace[1]; "
        "add `with:`"]


def test_parsons_after_naming_an_unknown_line() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace("after: [loss]", "after: [los]")
    assert problems(text) == [
        "lesson.yaml:94:17: 'after' names unknown line 'los'; did you mean 'loss'?"]


def test_parsons_after_naming_nothing_like_a_line() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace("after: [loss]", "after: [gradient]")
    assert problems(text) == [
        "lesson.yaml:94:17: 'after' names unknown line 'gradient'; name a line of this step"]


def test_parsons_after_cycle() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(
        "        code: opt.zero_grad()\n", "        code: opt.zero_grad()\n        after: [step]\n")
    assert problems(text) == [
        "lesson.yaml:85:7: the 'after' constraints form a cycle, so no order can satisfy them"]


def test_parsons_after_with_a_nested_list() -> None:
    text = (FIXTURE / "second.yaml").read_text().replace("after: [loss]", "after: [[loss]]")
    assert problems(text) == ["lesson.yaml:94:17: 'after[1]' must be text, not a list"]


def judged_by(checker: str) -> str:
    """The fixture's exercise with its declared checks replaced by a registered checker."""
    text = (FIXTURE / "second.yaml").read_text()
    start, end = text.index("    inputs: fresh-leaf\n"), text.index("    starter: |\n")
    return text[:start] + f"    checker: {checker}\n" + text[end:]


def test_an_exercise_judged_by_a_registered_checker_loads() -> None:
    assert problems(judged_by("manual-sgd")) == []


def test_unknown_checker_suggests_the_close_one() -> None:
    assert problems(judged_by("manual-sdg")) == [
        "lesson.yaml:11:14: unknown checker 'manual-sdg'; did you mean 'manual-sgd'?"]


def test_unknown_checker_with_no_close_match_lists_the_checkers() -> None:
    assert problems(judged_by("qqqq")) == [
        "lesson.yaml:11:14: unknown checker 'qqqq'; checkers: fix-the-loop, manual-sgd"]


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("inputs: fresh-leaf", "inputs: fresh-leef",
     "11:13: unknown input family 'fresh-leef'; families: fresh-leaf, param-groups, "
     "gradient-kinds, training, leaf-fn, values-fn, squared-error, model-setup, clip-step, "
     "evaluation, checkpoint"),
    ("[backward-count is solution]", "[backward-count solution]",
     "14:18: 'backward-count solution' is not a condition; write 'FACT is TEST' or "
     "'FACT is not TEST'"),
    ("[backward-count is solution]", "[backward-cnt is solution]",
     "14:18: unknown fact 'backward-cnt'; did you mean 'backward-count'?"),
    ("explain: not-the-gradient", "explain: not-the-gradiant",
     "22:22: unknown explainer 'not-the-gradiant'; explainers: not-the-gradient"),
    ("backward {ran}; run", "backward {rann}; run",
     "17:18: '{rann}': unknown fact 'rann'; did you mean 'ran'?"),
])
def test_declared_checks_are_reported_where_they_are_written(old: str, new: str,
                                                             expected: str) -> None:
    text = (FIXTURE / "second.yaml").read_text().replace(old, new)
    assert problems(text) == [f"lesson.yaml:{expected}"]


def test_declared_checks_are_checked_even_when_another_step_is_broken() -> None:
    """The rules of an exercise's declared checks are checked on the exercise the lesson was
    built with, and, when the lesson as a whole could not be built, on the exercise alone:
    either way its problem is reported beside the other step's."""
    text = (FIXTURE / "second.yaml").read_text().replace(
        "[backward-count is solution]", "[backward-cnt is solution]")
    broken = text.replace("  - kind: predict\n    id:", "  - kind: predict\n    idd:", 1)
    unknown_fact = "lesson.yaml:14:18: unknown fact 'backward-cnt'; did you mean 'backward-count'?"
    assert problems(text) == [unknown_fact]
    assert problems(broken) == [unknown_fact, "lesson.yaml:65:5: unknown key 'idd'; did you mean "
                                              "'id'?"]


@dataclasses.dataclass(frozen=True)
class OneCheckerRules:
    """The rules of a checking package that registers one checker and objects to every
    declared exercise."""

    checker_names: tuple[str, ...] = ("square-it",)
    state: str = "one checker, no family"

    def problems(self, exercise: Exercise, /) -> list[tuple[str, tuple[str | int, ...]]]:
        return [(f"no family '{exercise.inputs}' here", ("inputs",))]


def test_the_loader_knows_of_checking_only_the_rules_it_is_handed() -> None:
    rules = OneCheckerRules()
    assert problems(judged_by("square-it"), rules=rules) == []
    assert problems(judged_by("manual-sgd"), rules=rules) == [
        "lesson.yaml:11:14: unknown checker 'manual-sgd'; checkers: square-it"]
    assert problems((FIXTURE / "second.yaml").read_text(), rules=rules) == [
        "lesson.yaml:11:13: no family 'fresh-leaf' here"]


# --- files that are not a lesson mapping ----------------------------------------------------


def test_yaml_syntax_error_points_at_the_bad_line() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
       title: Intro
    """) == ["lesson.yaml:8:4: YAML syntax error: expected <block end>, but found "
             "'<block mapping start>'; check indentation and quoting"]


def test_colon_in_unquoted_text() -> None:
    assert problems("""\
        id: demo
        title: Gradients: the basics
    """) == ["lesson.yaml:2:17: YAML syntax error: mapping values are not allowed here; "
             "check indentation and quoting"]


def test_unclosed_quote_points_at_the_quote_not_the_end_of_the_file() -> None:
    assert problems(HEAD + """\
    steps:
      - kind: slide
        id: intro
        title: "Intro
        body: Hello.
    """) == ["lesson.yaml:8:12: YAML syntax error: this quoted text is never closed; "
             "add the closing quote"]


def test_two_yaml_documents() -> None:
    assert problems(FLAT_HEAD + "---\nid: other\n") == [
        "lesson.yaml:5:1: YAML syntax error: a second YAML document starts here; "
        "a lesson file holds one document, so remove this `---`"]


def test_duplicate_anchor() -> None:
    assert problems("a: &x 1\nb: &x 2\n") == [
        "lesson.yaml:2:4: YAML syntax error: duplicate anchor 'x' (first defined on line 1); "
        "rename one of them"]


def test_tab_indentation() -> None:
    assert problems(FLAT_HEAD + "steps:\n\t- kind: slide\n") == [
        "lesson.yaml:6:1: YAML syntax error: found character '\\t' that cannot start any token; "
        "check indentation and quoting"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(text: str) -> None:
    assert problems(text) == [
        "lesson.yaml:1:1: the lesson file is empty; start it with `id:`, `title:` and `steps:`"]


@pytest.mark.parametrize(("text", "got"), [
    ("- id: demo\n- title: Demo\n", "a list"),
    ("just a sentence\n", "text"),
    ("42\n", "a number"),
])
def test_top_level_not_a_mapping(text: str, got: str) -> None:
    assert problems(text) == [
        f"lesson.yaml:1:1: a lesson must be a mapping of keys (id, title, steps, ...), not {got}"]


def test_not_utf8_points_at_the_bad_byte() -> None:
    Path("lesson.yaml").write_bytes(b"id: x\n\xff\xfe")
    lesson, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert lesson is None
    assert [str(p) for p in found] == ["lesson.yaml:2:1: the file is not UTF-8; save it as UTF-8"]


def test_not_utf8_column_counts_characters_after_a_byte_order_mark() -> None:
    Path("lesson.yaml").write_bytes(b"\xef\xbb\xbfid: x\ntitle: caf\xc3\xa9 \xff\n")
    _, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert [str(p) for p in found] == ["lesson.yaml:2:13: the file is not UTF-8; save it as UTF-8"]


def test_utf8_byte_order_mark_is_accepted() -> None:
    Path("lesson.yaml").write_bytes(b"\xef\xbb\xbf" + (FIXTURE / "basics.yaml").read_bytes())
    lesson, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert found == [] and lesson is not None and lesson.id == "basics"


def test_windows_line_endings_keep_the_same_positions() -> None:
    crlf = (FIXTURE / "basics.yaml").read_bytes().replace(b"\n", b"\r\n")
    Path("lesson.yaml").write_bytes(crlf)
    lesson, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert found == [] and lesson is not None
    step = lesson.steps[1]
    assert isinstance(step, Slide) and step.code is not None and "\r" not in step.code
    Path("lesson.yaml").write_bytes(crlf.replace(b"answer: b", b"answer: q"))
    _, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert [str(p) for p in found] == [
        "lesson.yaml:41:17: answer 'q' is out of range: there are 3 choices (a-c); "
        "point it at one of them"]
    Path("lesson.yaml").write_bytes(b"id: x\r\ntitle: \xff\r\n")
    _, found = load_lesson_file(Path("lesson.yaml"), EXERCISE_RULES)
    assert [str(p) for p in found] == ["lesson.yaml:2:8: the file is not UTF-8; save it as UTF-8"]


def test_control_character() -> None:
    assert problems(FLAT_HEAD.replace("title: Demo", "title: De\x07mo")) == [
        "lesson.yaml:2:10: the file contains the control character U+0007, which YAML does not "
        "allow; delete it"]


def test_missing_file_is_a_problem_not_an_exception() -> None:
    lesson, found = load_lesson_file(Path("nowhere.yaml"), EXERCISE_RULES)
    assert lesson is None
    assert [str(p) for p in found] == [
        "nowhere.yaml:1:1: cannot read the file (No such file or directory); "
        "check its path and permissions"]


def test_path_is_shown_relative_to_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "course").mkdir()
    path = tmp_path / "course" / "broken.yaml"
    path.write_text("- a\n", encoding="utf-8")
    _, found = load_lesson_file(path.resolve(), EXERCISE_RULES)
    assert [p.path for p in found] == [str(Path("course") / "broken.yaml")]


def test_load_lesson_raises_with_every_problem() -> None:
    Path("lesson.yaml").write_text("id: Bad\n", encoding="utf-8")
    with pytest.raises(LessonProblems) as caught:
        load_lesson(Path("lesson.yaml"), EXERCISE_RULES)
    assert caught.value.exit_code == ExitCode.USAGE
    assert caught.value.message == "5 problems in lesson files"
    assert [str(p) for p in caught.value.problems] == [
        f"lesson.yaml:1:1: missing required key '{key}' in the lesson; add `{key}:`"
        for key in ("order", "steps", "summary", "title")
    ] + ["lesson.yaml:1:5: 'id' 'Bad' is not a valid id; use lowercase letters, digits and "
         "single dashes, like `zero-grad`"]


# --- unsafe YAML ----------------------------------------------------------------------------


def test_python_tag_is_reported_and_never_runs(capfd: pytest.CaptureFixture[str]) -> None:
    assert problems("""\
        id: demo
        title: !!python/object/apply:os.system ["echo pwned"]
        summary: A lesson for tests.
        order: 1
        steps:
          - kind: slide
            id: intro
            title: Intro
            body: Hello.
    """) == ["lesson.yaml:2:8: YAML tag '!!python/object/apply:os.system' is not allowed in "
             "lessons; remove the tag"]
    assert "pwned" not in capfd.readouterr().out


def test_python_tag_payload_is_not_executed(tmp_path: Path) -> None:
    payload = "!!python/object/apply:os.mkdir [{marker}]"
    # the payload is real: an unsafe loader does create the marker
    yaml.unsafe_load(f"x: {payload.format(marker='control-marker')}")
    assert (tmp_path / "control-marker").is_dir()
    found = problems(FLAT_HEAD + f"steps: {payload.format(marker='marker')}\n")
    assert found == ["lesson.yaml:5:8: YAML tag '!!python/object/apply:os.mkdir' is not allowed "
                     "in lessons; remove the tag"]
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize(("value", "tag"), [
    ("!!python/name:os.system", "!!python/name:os.system"),
    ("!custom Demo", "!custom"),
    ("!!set {a, b}", "!!set"),
])
def test_other_tags_are_reported(value: str, tag: str) -> None:
    assert problems(HEAD.replace("title: Demo", f"title: {value}") + """\
    steps:
      - kind: slide
        id: intro
        title: Intro
        body: Hello.
    """) == [f"lesson.yaml:2:8: YAML tag '{tag}' is not allowed in lessons; remove the tag"]


def test_merge_keys_are_reported() -> None:
    assert problems(HEAD + """\
    steps:
      - &first
        kind: slide
        id: intro
        title: Intro
        body: Hello.
      - <<: *first
        id: again
    """) == ["lesson.yaml:11:5: YAML merge keys (<<) are not supported; write the keys out"]


def test_plain_aliases_are_allowed() -> None:
    text = (FIXTURE / "basics.yaml").read_text().replace(
        "why: That is x itself", "why: &same That is x itself").replace(
        "why: x requires grad, so backward fills in .grad.", "why: *same")
    assert problems(text) == []
    lesson = load_lesson(Path("lesson.yaml"), EXERCISE_RULES)
    (quiz,) = lesson.quizzes
    assert quiz.questions[0].choices[2].why == "That is x itself, not the derivative."


def test_alias_that_contains_itself() -> None:
    assert problems(FLAT_HEAD + "steps: &loop\n  - *loop\n") == [
        "lesson.yaml:5:8: a YAML alias (*name) refers to the value that contains it, which never "
        "ends; write the values out"]


def test_alias_bomb_is_stopped() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    # a0-a3 hold 11,110 values together; a4 adds 100,000 more, so it is the one named
    assert problems("\n".join(lines) + "\n") == [
        "lesson.yaml:5:5: the file holds more than 100000 values once YAML aliases (*name) "
        "are expanded; write the values out, and keep lessons short"]


def test_deep_nesting_is_reported_where_it_gets_too_deep() -> None:
    # `steps` (line 5) is level 1 at column 8; the 100th level down starts at column 107
    # too deep to be worth validating: that one problem, as when the parser itself gives up
    assert problems(FLAT_HEAD + "steps: " + "[" * 150 + "]" * 150 + "\n") == [
        "lesson.yaml:5:107: values are nested too deeply here; lessons need only a few levels",
    ]


def test_nesting_too_deep_for_the_yaml_parser_is_a_problem_not_a_crash() -> None:
    found = problems("steps: " + "[" * 700 + "]" * 700 + "\n")  # PyYAML recurses per level
    assert len(found) == 1
    assert found[0].startswith("lesson.yaml:1:")
    assert found[0].endswith(": values are nested too deeply here; lessons need only a few levels")


def test_a_long_chain_of_parsons_lines_is_checked_without_recursion() -> None:
    # each line must come after the next one: following `after` goes 600 lines deep (listed
    # last line first, so the listed order is a correct one)
    lines = "".join(f"  - {{id: l{i}, code: x{i}, after: [l{i + 1}], why: w}}\n"
                    for i in reversed(range(599)))
    text = (FLAT_HEAD + "steps:\n- kind: parsons\n  id: p\n  title: P\n  prompt: P\n  lines:\n"
            + "  - {id: l599, code: x599, why: w}\n" + lines)
    assert problems(text) == []
    looped = text.replace("{id: l599, code: x599,", "{id: l599, code: x599, after: [l0],")
    assert problems(looped) == [
        "lesson.yaml:11:3: the 'after' constraints form a cycle, so no order can satisfy them"]


# --- several problems at once ---------------------------------------------------------------


def test_every_problem_is_reported_at_once_sorted_by_line() -> None:
    assert problems("""\
        id: demo
        titel: Demo
        summary: A lesson for tests.
        order: 0
        steps:
          - kind: slid
            id: intro
            title: Intro
            body: Hello.
          - kind: slide
            id: intro
            title: 5
            body: Hello.
          - kind: quiz
            id: check
            title: Check
            questions:
              - id: q1
                prompt: Which one?
                choices:
                  - text: one
                    why: because
                  - text: two
                    why: because
                answer: z
        extra: !!python/name:os.system
    """) == [
        "lesson.yaml:2:1: unknown key 'titel'; did you mean 'title'?",
        "lesson.yaml:4:8: 'order' must be at least 1, not 0",
        "lesson.yaml:6:11: unknown step kind 'slid'; did you mean 'slide'?",
        "lesson.yaml:11:9: duplicate step id 'intro' (also step 1); "
        "step ids must be unique in a lesson",
        "lesson.yaml:12:12: 'title' must be text, not a number (quote it if it is text)",
        "lesson.yaml:25:17: answer 'z' is out of range: there are 2 choices (a-b); "
        "point it at one of them",
        "lesson.yaml:26:1: unknown key 'extra'; "
        "allowed keys: id, minutes, order, steps, summary, title",
        "lesson.yaml:26:8: YAML tag '!!python/name:os.system' is not allowed in lessons; "
        "remove the tag",
    ]


# --- course level ---------------------------------------------------------------------------


def write(path: str, text: str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text), encoding="utf-8")
    return target


def lesson_text(lesson_id: str, order: int) -> str:
    return (f"id: {lesson_id}\ntitle: T\nsummary: S\norder: {order}\n"
            f"steps:\n  - kind: slide\n    id: a\n    title: A\n    body: B\n")


def test_two_lessons_with_the_same_id() -> None:
    write("course/a.yaml", lesson_text("basics", 1))
    write("course/b.yaml", lesson_text("basics", 2))
    with pytest.raises(LessonProblems) as caught:
        load_course(Path("course"), rules=EXERCISE_RULES)
    b, a = str(Path("course/b.yaml")), str(Path("course/a.yaml"))
    assert [str(p) for p in caught.value.problems] == [
        f"{b}:1:1: lesson id 'basics' is also used by {a}; give each lesson its own id"]


def test_two_lessons_with_the_same_order() -> None:
    write("course/a.yaml", lesson_text("first", 1))
    write("course/b.yml", lesson_text("second", 1))
    with pytest.raises(LessonProblems) as caught:
        load_course(Path("course"), rules=EXERCISE_RULES)
    b, a = str(Path("course/b.yml")), str(Path("course/a.yaml"))
    assert [str(p) for p in caught.value.problems] == [
        f"{b}:1:1: order 1 is also used by {a}; give each lesson its own order"]


def test_a_broken_lesson_in_a_course_is_reported_with_its_path() -> None:
    write("course/a.yaml", lesson_text("first", 1))
    write("course/b.yaml", lesson_text("second", 2).replace("title: A", "title: [A]"))
    with pytest.raises(LessonProblems) as caught:
        load_course(Path("course"), rules=EXERCISE_RULES)
    assert [str(p) for p in caught.value.problems] == [
        f"{Path('course/b.yaml')}:8:12: 'title' must be text, not a list"]


def test_course_orders_lessons_by_order_not_file_name() -> None:
    write("course/a.yaml", lesson_text("later", 2))
    write("course/z.yaml", lesson_text("sooner", 1))
    course = load_course(Path("course"), rules=EXERCISE_RULES)
    assert [lesson.id for lesson in course.lessons] == ["sooner", "later"]


def test_lesson_files_skips_other_and_hidden_files() -> None:
    write("course/a.yaml", lesson_text("first", 1))
    write("course/b.yml", lesson_text("second", 2))
    write("course/.draft.yaml", "not: a lesson\n")
    write("course/README.md", "# notes\n")
    assert [p.name for p in lesson_files(Path("course"))] == ["a.yaml", "b.yml"]


def test_course_find_suggests_a_close_id() -> None:
    course = load_course(FIXTURE, rules=EXERCISE_RULES)
    assert course.find("second").id == "second"
    with pytest.raises(GradtutorError) as caught:
        course.find("basic")
    assert (caught.value.message, caught.value.hint) == (
        "no lesson 'basic'", "did you mean 'basics'? (see `gradtutor list`)")
    assert caught.value.exit_code == ExitCode.USAGE


def test_course_find_lists_the_ids_when_nothing_is_close() -> None:
    course = Course(FIXTURE, load_course(FIXTURE, rules=EXERCISE_RULES).lessons)
    with pytest.raises(GradtutorError) as caught:
        course.find("autograd")
    assert caught.value.hint == "lessons here: basics, second (see `gradtutor list`)"


def test_empty_folder() -> None:
    Path("empty").mkdir()
    with pytest.raises(GradtutorError) as caught:
        load_course(Path("empty"), rules=EXERCISE_RULES)
    assert not isinstance(caught.value, LessonProblems)
    assert (caught.value.message, caught.value.hint) == (
        "no lesson files (*.yaml) in empty", "point --lessons at a folder of lesson YAML files")


def test_missing_path() -> None:
    with pytest.raises(GradtutorError) as caught:
        load_course(Path("nowhere"), rules=EXERCISE_RULES)
    assert (caught.value.message, caught.value.hint) == (
        "no such file or folder: nowhere",
        "check the path, or leave it out to use the built-in lessons")


# --- parsons: a correct order, one line each, and what runs ---------------------------------

SECOND = FIXTURE / "second.yaml"
RUN = """\
    run:
      setup: |
        import torch
      record: loss.item()
      series: losses
"""


def parsons_with(extra: str) -> str:
    """The fixture lesson with `extra` (indented as a step key) added to its Parsons step."""
    return SECOND.read_text().replace("  - kind: demo\n", extra + "  - kind: demo\n")


def test_parsons_run_and_solution_load_into_the_model() -> None:
    text = parsons_with(RUN + "    solution: [zero, loss, backward, step]\n")
    Path("lesson.yaml").write_text(text, encoding="utf-8")
    step = load_lesson(Path("lesson.yaml"), EXERCISE_RULES).steps[2]
    assert isinstance(step, Parsons) and step.run is not None
    assert (step.run.setup, step.run.record, step.run.series, step.run.repeat) == (
        "import torch\n", "loss.item()", "losses", 10)
    assert step.solution_order == ("zero", "loss", "backward", "step")
    assert step.line("backward").code == "loss.backward()"


def test_parsons_lines_listed_in_a_wrong_order_need_a_solution() -> None:
    text = SECOND.read_text().replace("        after: [zero]\n", "        after: [backward]\n")
    text = text.replace("        after: [loss]\n", "        after: [zero]\n")
    assert problems(text) == [
        "lesson.yaml:88:9: the lines are not listed in a correct order: 'loss' comes before "
        "'backward', which its 'after' names; list them in an order that works, or give one "
        "as `solution:`"]
    assert problems(text.replace("  - kind: demo\n", "    solution: [zero, backward, loss, step]\n"
                                                      "  - kind: demo\n")) == []


def test_parsons_solution_that_breaks_a_constraint() -> None:
    assert problems(parsons_with("    solution: [zero, backward, loss, step]\n")) == [
        "lesson.yaml:100:15: 'solution' is not a correct order: 'backward' comes before 'loss', "
        "which its 'after' names"]


def test_parsons_solution_must_list_every_line_once() -> None:
    assert problems(parsons_with("    solution: [zero, los, zero, step]\n")) == [
        "lesson.yaml:100:15: 'solution' leaves out 'loss', 'backward'; list every line once, "
        "in a correct order",
        "lesson.yaml:100:22: 'solution' names unknown line 'los'; did you mean 'loss'?",
        "lesson.yaml:100:27: 'solution' lists line 'zero' twice; list each line once"]


def test_parsons_without_any_after_has_no_wrong_order() -> None:
    text = SECOND.read_text()
    for ref in ("zero", "loss", "backward"):
        text = text.replace(f"        after: [{ref}]\n", "")
    assert problems(text) == [
        "lesson.yaml:85:7: no line has 'after', so every order would be right; say which lines "
        "must come before which"]


def test_parsons_lines_are_single_and_different_lines_of_code() -> None:
    text = SECOND.read_text().replace("code: opt.step()", "code: opt.step(); opt.zero_grad()")
    assert problems(text) == []  # one line, even with two statements
    text = SECOND.read_text().replace("code: opt.step()", 'code: "opt.step()\\nprint(1)"')
    assert problems(text) == [
        "lesson.yaml:97:15: 'code' must be one line of code: an answer names each line by its "
        "text"]
    text = SECOND.read_text().replace("code: opt.step()", "code: opt.zero_grad( )")
    assert problems(text) == [
        "lesson.yaml:97:15: this line has the same code as line 'zero'; make every line "
        "different, or an answer could not say which is which"]


def test_parsons_run_fields_are_checked() -> None:
    text = parsons_with(RUN.replace("series: losses", "series: loss per step")
                        + "      repeat: 0\n")
    assert problems(text) == [
        "lesson.yaml:104:15: 'series' 'loss per step' is not a Python variable name; use "
        "letters, digits and underscores, not starting with a digit, like `losses`",
        "lesson.yaml:105:15: 'repeat' must be at least 1, not 0"]
    assert problems(parsons_with("    run:\n      setup: x = 1\n")) == [
        "lesson.yaml:101:7: missing required key 'record' in steps[3].run; add `record:`",
        "lesson.yaml:101:7: missing required key 'series' in steps[3].run; add `series:`"]


def test_chart_series_are_variable_names() -> None:
    text = SECOND.read_text().replace("series: [losses]", "series: [loss curve]")
    assert problems(text) == [
        "lesson.yaml:116:16: 'series[1]' 'loss curve' is not a Python variable name; use "
        "letters, digits and underscores, not starting with a digit, like `losses`"]


@pytest.mark.parametrize(("text", "head"), [
    ("id: grad\ntitle: Reading .grad\norder: 3\nsteps: [", ("grad", "Reading .grad", 3)),
    ("title: 'x'\nsteps:\n  - {kind: slide, a: [1, {b: 2}]}\nid: z\norder: 1\n", ("z", "x", 1)),
    ("id: 7\ntitle: t\norder: 1\n", None),  # not text: the loader says what is wrong
    ("id: a\ntitle: yes\norder: 1\n", None),
    ("id: a\ntitle: t\norder: 0x10\n", None),
    ("id: a\nid: b\ntitle: t\norder: 1\n", None),
    ("id: &i a\ntitle: *i\norder: 1\n", None),
    ("id: a\ntitle: !!python/object/apply:os.system [echo]\norder: 1\n", None),
    ("id: a\ntitle: 'never closed\norder: 1\n", None),
    ("- id: a\n", None),
    ("id: a\ntitle: t\n", None),
])
def test_a_lesson_head_is_read_from_plain_top_level_values_only(
        text: str, head: tuple[str, str, int] | None) -> None:
    """What the course outline reads of a lesson it does not load: its id, title and order,
    only where they are stated plainly; anything else is left to the loader to report."""
    assert lesson_head(text) == head


def test_a_chart_names_each_series_with_one_label_or_none() -> None:
    text = SECOND.read_text()
    assert "      series: [losses]\n" in text
    labelled = text.replace("      series: [losses]\n",
                            "      series: [losses]\n      labels: [the loss]\n")
    assert problems(labelled) == []
    twice = text.replace("      series: [losses]\n",
                         "      series: [losses]\n      labels: [the loss, again]\n")
    found = problems(twice)
    assert len(found) == 1 and "'labels' has 2 and 'series' 1" in found[0], found
