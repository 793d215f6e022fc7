"""Every exercise's verdict on one 80x24 screen: each of the 22 exercises checked with its
starter, each mutant its lesson declares and its solution, and the verdict drawn on the real
exercise screen (the walkthrough's and `watch`'s: header, body scrolled to the verdict as it
arrives, notice and legend), read back cell by cell through a terminal emulator. Every line
of the verdict must be on that screen at once, in English and in Chinese, with and without
the longest notice a verdict comes with (the stuck pointer at `h`). The review of 2026-12-05,
F2: the verdicts of manual-sgd, clear-grads, clip-and-step and fix-the-loop ran 28-41 lines,
2-3 screens.

The short verdict gives no hint unasked (F5); `v` shows the whole one, hints and every case.
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from checker_batch import checks_from, lesson_catalog, run_in_batch
from rich.console import Console, RenderableType

from gradtutor.checking.checkers import judge_of, request_checker
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.mistakes import mutant_source, name_known_mistake
from gradtutor.checking.verdict import Verdict, overall
from gradtutor.i18n import ENGLISH, Translator, load_catalog, msg
from gradtutor.lessons.course import Course, load_course
from gradtutor.lessons.model import Exercise, Lesson
from gradtutor.ui.check_view import verdict_view
from gradtutor.ui.exercise_view import MORE
from gradtutor.ui.fullscreen import FullScreen
from gradtutor.ui.render import Look
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.exercise import ExerciseView
from gradtutor.walk.machine import begin

pytestmark = pytest.mark.slow
pyte = pytest.importorskip("pyte")

COLUMNS, ROWS = 80, 24
SEEDS = (0, 1)  # the numbers of a run (and so how values wrap) differ from seed to seed
LANGUAGES = ("en", "zh-CN")
STUCK = msg("This check has failed {times} times in a row: h shows a hint ({seen} of "
            "{total} seen so far).", times=3, seen=0, total=3)


def courses() -> dict[str, Course]:
    return {lang: load_course(lang=lang, rules=EXERCISE_RULES) for lang in LANGUAGES}


# A learner debugging with print: eight long lines, printed as the file loads.
PRINTS = ("for _line in range(8):\n"
          "    print('debugging', _line, 'the values I expected to see here ' * 3)\n")


def files(course: Course) -> list[tuple[Lesson, Exercise, str, str]]:
    """(lesson, exercise, which file, its source): each exercise's starter and declared
    mutants (each also as a learner who prints would have it) and its solution."""
    out = []
    for lesson in course.lessons:
        for step in lesson.steps:
            if isinstance(step, Exercise):
                out.append((lesson, step, "starter", step.starter))
                out.append((lesson, step, "starter that prints", PRINTS + step.starter))
                out += [(lesson, step, f"mutant {mutant.id} that prints",
                         PRINTS + mutant_source(step, index))
                        for index, mutant in enumerate(step.mutants)]
                out += [(lesson, step, f"mutant {mutant.id}", mutant_source(step, index))
                        for index, mutant in enumerate(step.mutants)]
                out.append((lesson, step, "solution", step.solution))
    return out


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory
             ) -> list[tuple[Lesson, Exercise, str, Verdict]]:
    """Each file checked on each seed, decided and named as a check in the tutor is."""
    course = load_course(rules=EXERCISE_RULES)
    runs = [(lesson, step, label, source, seed)
            for lesson, step, label, source in files(course) for seed in SEEDS]
    jobs = [{"checker": request_checker(step), "function": step.function, "source": source,
             "seed": seed} for _, step, _, source, seed in runs]
    sent = run_in_batch(jobs, tmp_path_factory.mktemp("verdict-screens"))
    out = []
    for (lesson, step, label, source, seed), messages in zip(runs, sent, strict=True):
        checks = name_known_mistake(step, source, tuple(
            checks_from(judge_of(step), step.function, messages)))
        out.append((lesson, step, f"{label} seed {seed}",
                    Verdict(step.id, overall(checks), checks, seed, 1234)))
    return out


def translators() -> dict[str, Translator]:
    return {"en": ENGLISH,
            "zh-CN": Translator("zh-CN", {**load_catalog("zh-CN"),
                                          **lesson_catalog("zh-CN")})}


def on_screen(course: Course, lesson_id: str, exercise_id: str, view: ExerciseView,
              look: Look, notice: str = "") -> list[str]:
    """The 80x24 screen of the exercise once `view`'s verdict has arrived, as a learner sees
    it: the screen without a verdict first, then the verdict brought into view."""
    position = next(n for n, lesson in enumerate(course.lessons, 1) if lesson.id == lesson_id)
    lesson = course.lessons[position - 1]
    place = (position, len(course.lessons))
    out = io.StringIO()
    full = FullScreen(Console(file=out, force_terminal=True, width=COLUMNS, color_system=None),
                      lambda: (COLUMNS, ROWS), look)
    state = begin(lesson, index(lesson, exercise_id))
    full.show(screen(lesson, state, COLUMNS, True, look, Path("work"), place), follow=False)
    state = replace(state, view=view, notice=notice)
    full.show(screen(lesson, state, COLUMNS, True, look, Path("work"), place), follow=True)
    terminal = pyte.Screen(COLUMNS, ROWS)
    pyte.Stream(terminal).feed(out.getvalue())
    return [line.rstrip() for line in terminal.display]


def index(lesson: Lesson, step_id: str) -> int:
    found = lesson.index_of(step_id)
    assert found is not None
    return found


def drawn(renderable: RenderableType) -> list[str]:
    console = Console(file=io.StringIO(), width=COLUMNS, color_system=None)
    return ["".join(s.text for s in line).rstrip()
            for line in console.render_lines(renderable, console.options, pad=False)]


def contains(screen_lines: list[str], block: list[str]) -> bool:
    """`block` is on the screen whole, its lines one under the other."""
    return any(screen_lines[at:at + len(block)] == block
               for at in range(len(screen_lines) - len(block) + 1))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_verdict_of_every_exercise_fits_one_80x24_screen(
    verdicts: list[tuple[Lesson, Exercise, str, Verdict]], lang: str,
) -> None:
    course = courses()[lang]
    look = Look(plain=False, tr=translators()[lang])
    titles = {lesson.id: lesson.title for lesson in course.lessons}
    too_long, tallest = [], 0
    for lesson, step, label, verdict in verdicts:
        block = drawn(verdict_view(verdict, look, whole=False, more=MORE))
        tallest = max(tallest, len(block))
        for notice in ("", STUCK):
            shown = on_screen(course, lesson.id, step.id, ExerciseView(verdict=verdict), look,
                              notice)
            if not contains(shown, block):
                too_long.append(f"{step.id} {label} ({len(block)} lines"
                                f"{', under a notice' if notice else ''}):\n" + "\n".join(shown))
            # the exercise's own header stays on top, and its legend at the foot
            assert titles[lesson.id] in shown[0] and shown[-1].startswith("e ")
    assert too_long == [], "\n\n".join(too_long[:3])
    assert {step.id for _, step, _, _ in verdicts} == {
        step.id for lesson in course.lessons for step in lesson.steps
        if isinstance(step, Exercise)} and len({s.id for _, s, _, _ in verdicts}) == 22
    print(f"{lang}: {len(verdicts)} verdicts, the tallest {tallest} lines")


def test_no_short_verdict_shows_a_hint_and_v_shows_the_whole_one(
    verdicts: list[tuple[Lesson, Exercise, str, Verdict]],
) -> None:
    """Hints only when asked: the short verdict has no `hint:` line, though the checks have
    hints; the whole one (`v`) has each failed check's hint and every case of its evidence,
    and points back at the short one."""
    look = Look(plain=False)
    course = courses()["en"]
    hinted = [(lesson, step, verdict) for lesson, step, _, verdict in verdicts
              if any(check.help and check.status != "pass" for check in verdict.checks)]
    assert len(hinted) > 20
    for lesson, step, verdict in hinted:
        short = on_screen(course, lesson.id, step.id, ExerciseView(verdict=verdict), look)
        assert not any(line.lstrip().startswith("hint:") for line in short), "\n".join(short)
        assert any(line.startswith("v shows the whole verdict") for line in short)
    lesson, step, verdict = max(hinted, key=lambda found: len(drawn(verdict_view(
        found[2], look))))
    whole = drawn(verdict_view(verdict, look, whole=True))
    assert len(whole) > ROWS  # the cut is real: the whole verdict is more than a screen
    full = FullScreen(Console(file=io.StringIO(), force_terminal=True, width=COLUMNS),
                      lambda: (COLUMNS, 200), look)
    full.show(screen(lesson, replace(begin(lesson, index(lesson, step.id)),
                                     view=ExerciseView(verdict=verdict, whole=True)),
                     COLUMNS, True, look, Path("work")), follow=False)
    text = "\n".join(full.body)
    assert "hint:" in text and "v shows the short verdict again." in text
    for check in verdict.checks:
        if check.evidence is not None:
            for row in check.evidence.rows:
                assert all(cell.split()[0] in text for cell in row if cell.strip())
