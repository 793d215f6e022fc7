"""Progress transitions, its JSON form, and the store that keeps it safe on disk."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradtutor import progress as prog
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.load import load_lesson
from gradtutor.store import ProgressStore

if TYPE_CHECKING:
    from conftest import Cli

FIXTURES = Path(__file__).parent / "fixtures" / "course"
NOW = "2026-01-01T00:00:00+00:00"


def make_store(folder: Path) -> tuple[ProgressStore, list[str]]:
    warnings: list[str] = []
    return ProgressStore(folder, warnings.append), warnings


def test_visit_remembers_the_place_and_what_was_seen() -> None:
    p = prog.visit(prog.Progress(), "grad", "intro", NOW)
    p = prog.visit(p, "grad", "none-first", NOW)
    assert p.of("grad").step == "none-first"
    assert p.of("grad").seen == {"intro", "none-first"}


def test_quiz_keeps_the_best_and_the_last_score() -> None:
    p = prog.record_quiz(prog.Progress(), "grad", "check", 5, 7, NOW)
    p = prog.record_quiz(p, "grad", "check", 3, 7, NOW)
    state = p.of("grad")
    assert (state.best_quiz["check"].score, state.last_quiz["check"].score) == (5, 3)


def test_restart_forgets_the_place_but_keeps_quiz_history() -> None:
    p = prog.finish(prog.visit(prog.Progress(), "grad", "recap", NOW), "grad", NOW)
    p = prog.record_quiz(p, "grad", "check", 7, 7, NOW)
    state = prog.restart(p, "grad").of("grad")
    assert (state.step, state.finished, state.best_quiz["check"].score) == (None, False, 7)


def test_reset_one_lesson_leaves_the_others() -> None:
    p = prog.visit(prog.visit(prog.Progress(), "a", "s1", NOW), "b", "s2", NOW)
    assert set(prog.reset(p, "a").lessons) == {"b"}
    assert prog.reset(p).lessons == {}


def test_resume_index_falls_back_to_the_first_step_when_the_step_is_gone() -> None:
    lesson = load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES)
    assert prog.resume_index(lesson, prog.LessonProgress(step="accumulate")) == 2
    assert prog.resume_index(lesson, prog.LessonProgress(step="renamed-away")) == 0


def test_next_lesson_is_the_first_unfinished() -> None:
    lessons = (load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES),
               load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES))
    p = prog.finish(prog.Progress(), "basics", NOW)
    assert prog.next_lesson(lessons, p).id == "second"
    assert prog.next_lesson(lessons, prog.finish(p, "second", NOW)).id == "basics"


def test_json_round_trip() -> None:
    p = prog.visit(prog.Progress(), "grad", "intro", NOW)
    p = prog.record_quiz(prog.finish(p, "grad", NOW), "grad", "check", 6, 7, NOW)
    assert prog.from_json(json.loads(json.dumps(prog.to_json(p)))) == prog.Read(p)


@pytest.mark.parametrize(("raw", "reason"), [
    ([], "the file has the wrong type"),
    ({}, "it has no format version"),
    ({"version": 99, "lessons": {}}, "it was written by a newer gradtutor (format 99)"),
])
def test_a_file_that_is_not_progress_is_refused_whole(raw: object, reason: str) -> None:
    with pytest.raises(prog.ProgressFormatError, match=re.escape(reason)):
        prog.from_json(raw)


@pytest.mark.parametrize(("lesson", "where", "reason"), [
    ({"seen": "abc"}, "lessons.g.seen", "it has the wrong type"),
    ({"seen": ["a", 3]}, "lessons.g.seen[1]", "it has the wrong type"),
    ({"finished": "yes"}, "lessons.g.finished", "it has the wrong type"),
    ({"step": 4}, "lessons.g.step", "it has the wrong type"),
    ({"quiz_answers": {"q": "ab"}}, "lessons.g.quiz_answers.q", "it has the wrong type"),
    ({"quiz_answers": {"q": [1]}}, "lessons.g.quiz_answers.q", "it has the wrong type"),
    ({"exercises": {"x": {"attempts": "3"}}}, "lessons.g.exercises.x.attempts",
     "it has the wrong type"),
    ({"exercises": {"x": {"attempts": -1}}}, "lessons.g.exercises.x.attempts", "it is negative"),
    ({"exercises": {"x": {"hints": True}}}, "lessons.g.exercises.x.hints",
     "it has the wrong type"),
    ({"exercises": {"x": {"attempts": 10**12}}}, "lessons.g.exercises.x.attempts",
     "it is more than 1000000000"),
    ({"exercises": {"x": {"passed": 1}}}, "lessons.g.exercises.x.passed",
     "it has the wrong type"),
    ({"exercises": {"x": []}}, "lessons.g.exercises.x", "it has the wrong type"),
    ({"best_quiz": {"q": {"score": 60, "total": 7}}}, "lessons.g.best_quiz.q",
     "the score 60 is more than the total 7"),
    ({"best_quiz": {"q": {"score": 5, "total": 0}}}, "lessons.g.best_quiz.q",
     "a quiz of 0 questions has no score"),
    ({"last_quiz": {"q": {"score": True, "total": 7}}}, "lessons.g.last_quiz.q",
     "score: it has the wrong type"),
    ({"last_quiz": {"q": {"score": 1.5, "total": 7}}}, "lessons.g.last_quiz.q",
     "score: it has the wrong type"),
    ({"last_quiz": {"q": {"total": 7}}}, "lessons.g.last_quiz.q", "score: it is missing"),
    ({"predictions": {"p": {"answer": "a", "right": "no"}}}, "lessons.g.predictions.p",
     "right: it has the wrong type"),
])
def test_one_bad_value_sets_aside_its_entry_alone(lesson: dict[str, object], where: str,
                                                  reason: str) -> None:
    good = {"step": "s2", "seen": ["s1", "s2"], "finished": True}
    read = prog.from_json({"version": 1, "lessons": {"g": {**good, **lesson}, "other": good}})
    assert read.set_aside == (prog.SetAside(where, reason),)
    other = read.progress.of("other")
    assert (other.step, other.seen, other.finished) == ("s2", frozenset({"s1", "s2"}), True)
    state = read.progress.of("g")  # everything else in the same lesson stays too
    assert state.step == ("s2" if "step" not in lesson else None)
    assert state.finished == ("finished" not in lesson)


def test_a_lesson_entry_that_is_not_an_object_is_set_aside_alone() -> None:
    read = prog.from_json({"version": 1, "lessons": {"g": [1], "h": {"step": "x"}}})
    assert read.set_aside == (prog.SetAside("lessons.g", "it has the wrong type"),)
    assert set(read.progress.lessons) == {"h"}


@pytest.mark.parametrize("number", ["9" * 5000, "NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_python_cannot_hold_sets_aside_its_entry_not_the_file(number: str) -> None:
    text = ('{"version": 1, "lessons": {"g": {"step": "s", "exercises": {"x": {"attempts": '
            + number + ', "passed": true}}, "best_quiz": {"q": {"score": ' + number
            + ', "total": 7}}}, "h": {"step": "t"}}, "later": {"n": ' + number + '}}')
    read = prog.parse(text.encode())
    wheres = [item.where for item in read.set_aside]
    assert wheres == ["lessons.g.best_quiz.q", "lessons.g.exercises.x.attempts", "later"]
    assert all("number gradtutor cannot use" in item.reason for item in read.set_aside)
    assert read.progress.of("g").exercises["x"].passed
    assert read.progress.of("h").step == "t"
    assert "later" not in read.progress.unknown


def test_a_byte_order_mark_is_not_a_reason_to_set_the_file_aside() -> None:
    data = b"\xef\xbb\xbf" + json.dumps({"version": 1, "lessons": {"g": {"step": "s"}}}).encode()
    read = prog.parse(data)
    assert read.set_aside == () and read.progress.of("g").step == "s"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8)
_FIELDS = ["step", "seen", "finished", "last_quiz", "best_quiz", "updated", "exercises",
           "predictions", "quiz_answers", "other"]


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(_FIELDS), inner=st.sampled_from(["", "x", "score", "total",
                                                              "attempts", "answer"]),
       value=_json)
def test_any_value_anywhere_costs_at_most_its_own_entry(field: str, inner: str,
                                                        value: object) -> None:
    good = {"step": "s2", "seen": ["s1"], "finished": True,
            "best_quiz": {"q": {"score": 1, "total": 2}}}
    placed = {"x": {inner: value}} if inner else value
    text = json.dumps({"version": 1, "lessons": {"g": {**good, field: placed}, "h": good}})
    read = prog.parse(text.encode())  # never raises: one lesson's entry is not the file
    assert read.progress.of("h").best_quiz["q"].score == 1
    assert all(item.where.startswith("lessons.g.") for item in read.set_aside)
    for score in [*read.progress.of("g").best_quiz.values(),
                  *read.progress.of("g").last_quiz.values()]:
        assert 0 <= score.score <= score.total
    again = prog.parse(json.dumps(prog.to_json(read.progress)).encode())
    assert again == prog.Read(read.progress)  # what was kept saves and reads back clean


def test_unknown_fields_at_every_level_survive_a_round_trip() -> None:
    newer = {"version": 1, "theme": "dark", "lessons": {"g": {
        "step": "s", "bookmarks": [1, 2],
        "exercises": {"x": {"attempts": 2, "passed": True, "time_spent": 41.5}},
        "best_quiz": {"q": {"score": 3, "total": 4, "answers": ["a", "b"]}},
        "predictions": {"p": {"answer": "b", "right": True, "confidence": 0.9}}}}}
    read = prog.from_json(newer)
    assert read.set_aside == ()
    again = prog.to_json(prog.record_hints(read.progress, "g", "x", 1, NOW))
    lesson = again["lessons"]["g"]
    assert again["theme"] == "dark" and lesson["bookmarks"] == [1, 2]
    assert lesson["exercises"]["x"]["time_spent"] == 41.5 and lesson["exercises"]["x"]["hints"] == 1
    assert lesson["best_quiz"]["q"]["answers"] == ["a", "b"]
    assert lesson["predictions"]["p"]["confidence"] == 0.9


def test_checks_count_attempts_and_a_pass_is_kept_with_its_first_time() -> None:
    p = prog.record_check(prog.Progress(), "grad", "read-grad", False, "t1")
    p = prog.record_check(p, "grad", "read-grad", True, "t2")
    p = prog.record_check(p, "grad", "read-grad", False, "t3")  # a later broken save
    p = prog.record_check(p, "grad", "read-grad", True, "t4")
    record = p.of("grad").exercises["read-grad"]
    assert (record.attempts, record.passed, record.passed_at) == (4, True, "t2")


def test_hints_keep_the_most_ever_seen_and_the_solution_is_remembered() -> None:
    p = prog.record_hints(prog.Progress(), "grad", "read-grad", 2, NOW)
    p = prog.record_hints(p, "grad", "read-grad", 1, NOW)  # a later visit starts the ladder anew
    assert p.of("grad").exercises["read-grad"].hints == 2
    assert not p.of("grad").exercises["read-grad"].solution_seen
    p = prog.record_solution(p, "grad", "read-grad", NOW)
    record = p.of("grad").exercises["read-grad"]
    assert (record.hints, record.solution_seen, record.attempts) == (2, True, 0)


def test_a_prediction_keeps_the_latest_answer() -> None:
    p = prog.record_prediction(prog.Progress(), "second", "twice", "a", False, "t1")
    p = prog.record_prediction(p, "second", "twice", "b", True, "t2")
    assert p.of("second").predictions["twice"] == prog.Prediction("b", True, "t2")


def test_restart_keeps_how_the_exercises_went() -> None:
    p = prog.record_check(prog.Progress(), "grad", "read-grad", True, NOW)
    p = prog.restart(prog.visit(p, "grad", "read-grad", NOW), "grad")
    assert p.of("grad").step is None
    assert p.of("grad").exercises["read-grad"].passed


def test_json_round_trip_with_exercises_and_predictions() -> None:
    p = prog.record_check(prog.Progress(), "grad", "read-grad", True, NOW)
    p = prog.record_hints(prog.record_solution(p, "grad", "other", NOW), "grad", "other", 3, NOW)
    p = prog.record_prediction(p, "grad", "twice", "c", False, NOW)
    raw = json.loads(json.dumps(prog.to_json(p)))
    assert raw["lessons"]["grad"]["exercises"]["read-grad"]["attempts"] == 1
    assert prog.from_json(raw) == prog.Read(p)


def test_a_version_1_file_from_before_exercises_still_loads(tmp_path: Path) -> None:
    old = {"version": 1, "lessons": {"grad": {
        "step": "read-grad", "seen": ["grad-attribute", "read-grad"], "finished": False,
        "last_quiz": {}, "best_quiz": {"quick-check": {"score": 7, "total": 8, "at": NOW}},
        "updated": NOW}}}
    (tmp_path / "progress.json").write_text(json.dumps(old))
    store, warnings = make_store(tmp_path)
    state = store.load().of("grad")
    assert warnings == []
    assert (state.step, state.exercises, state.predictions) == ("read-grad", {}, {})
    assert state.best_quiz["quick-check"].score == 7
    saved = store.update(lambda p: prog.record_check(p, "grad", "read-grad", False, NOW))
    assert saved.of("grad").best_quiz["quick-check"].score == 7  # nothing old is dropped
    assert saved.of("grad").exercises["read-grad"].attempts == 1


def test_the_exercise_to_practise_is_the_current_one_else_the_first_not_passed() -> None:
    lessons = (load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES),
               load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES))
    pick = prog.exercise_to_practise
    picked = pick(lessons, prog.Progress())
    assert picked is not None and picked[1].id == "square-grad"  # basics has none
    on_it = prog.visit(prog.finish(prog.Progress(), "basics", NOW), "second", "square-grad", NOW)
    picked = pick(lessons, on_it)
    assert picked is not None and picked[1].id == "square-grad"
    passed = prog.record_check(on_it, "second", "square-grad", True, NOW)
    assert pick(lessons, passed) is None


def test_a_quiz_half_done_keeps_its_answers_until_it_is_scored() -> None:
    p = prog.record_quiz_answers(prog.Progress(), "grad", "check", ("b",), "t1")
    p = prog.record_quiz_answers(p, "grad", "check", ("b", "ac"), "t2")
    assert p.of("grad").quiz_answers == {"check": ("b", "ac")}
    assert prog.from_json(json.loads(json.dumps(prog.to_json(p)))) == prog.Read(p)
    scored = prog.record_quiz(p, "grad", "check", 2, 2, "t3")
    assert scored.of("grad").quiz_answers == {}
    assert scored.of("grad").last_quiz["check"].score == 2


def test_starting_over_forgets_a_quiz_half_done() -> None:
    p = prog.record_quiz_answers(prog.Progress(), "grad", "check", ("b",), NOW)
    assert prog.restart(p, "grad").of("grad").quiz_answers == {}


def test_the_pass_mark_decides_a_quiz() -> None:
    lesson = load_lesson(FIXTURES / "basics.yaml", EXERCISE_RULES)
    quiz = lesson.quizzes[0]  # pass mark 0.7
    assert prog.quiz_passed(quiz, 2, 2)
    assert not prog.quiz_passed(quiz, 1, 2)
    assert not prog.quiz_passed(quiz, 0, 0)


def test_exercises_solved_counts_the_lesson_s_exercises_ever_passed() -> None:
    second = load_lesson(FIXTURES / "second.yaml", EXERCISE_RULES)
    assert prog.exercises_solved(second, prog.LessonProgress()) == (0, 1)
    p = prog.record_check(prog.Progress(), "second", "square-grad", True, NOW)
    p = prog.record_check(p, "second", "square-grad", False, NOW)
    p = prog.record_check(p, "second", "not-in-this-lesson", True, NOW)
    assert prog.exercises_solved(second, p.of("second")) == (1, 1)


def test_fields_from_a_newer_gradtutor_are_written_back_as_they_were(tmp_path: Path) -> None:
    newer = {"version": 1, "theme": {"dark": True}, "lessons": {"grad": {
        "step": "intro", "seen": ["intro"], "bookmarks": ["intro", "recap"]}}}
    (tmp_path / "progress.json").write_text(json.dumps(newer))
    store, warnings = make_store(tmp_path)
    store.update(lambda p: prog.visit(p, "grad", "recap", NOW))
    store.update(lambda p: prog.restart(p, "grad"))
    raw = json.loads((tmp_path / "progress.json").read_text())
    assert warnings == []
    assert raw["theme"] == {"dark": True}
    assert raw["lessons"]["grad"]["bookmarks"] == ["intro", "recap"]
    assert raw["lessons"]["grad"]["step"] is None


def test_a_file_from_before_quiz_answers_loads_and_gains_them(tmp_path: Path) -> None:
    old = {"version": 1, "lessons": {"grad": {"step": "quick-check", "seen": ["quick-check"],
                                              "exercises": {}, "predictions": {}}}}
    (tmp_path / "progress.json").write_text(json.dumps(old))
    store, warnings = make_store(tmp_path)
    assert store.load().of("grad").quiz_answers == {}
    store.update(lambda p: prog.record_quiz_answers(p, "grad", "quick-check", ("a",), NOW))
    assert warnings == []
    raw = json.loads((tmp_path / "progress.json").read_text())
    assert raw["lessons"]["grad"]["quiz_answers"] == {"quick-check": ["a"]}
    assert raw["lessons"]["grad"]["step"] == "quick-check"


# --- the store ------------------------------------------------------------------------


def test_update_saves_and_a_new_store_reads_it_back(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    store.update(lambda p: prog.visit(p, "grad", "intro", NOW))
    again, warnings = make_store(tmp_path)
    assert again.load().of("grad").step == "intro"
    assert warnings == []


@pytest.mark.parametrize(("content", "reason"), [
    (b"{not json", "it is not valid JSON"),
    (b"\xff\xfe\x00", "it is not valid JSON"),
    (b'{"version": 7, "lessons": {}}', "it was written by a newer gradtutor (format 7)"),
    (b"[1, 2]", "the file has the wrong type"),
])
def test_a_corrupt_file_is_kept_aside_with_one_warning(tmp_path: Path, content: bytes,
                                                       reason: str) -> None:
    (tmp_path / "progress.json").write_bytes(content)
    store, warnings = make_store(tmp_path)
    assert store.load() == prog.Progress()
    assert len(warnings) == 1
    assert reason in warnings[0]
    backups = list(tmp_path.glob("progress.*.bak.json"))
    assert len(backups) == 1
    assert backups[0].read_bytes() == content  # nothing the learner had is lost
    assert str(backups[0]) in warnings[0]
    assert not (tmp_path / "progress.json").exists()


def test_after_setting_aside_saving_starts_fresh(tmp_path: Path) -> None:
    (tmp_path / "progress.json").write_text("garbage")
    store, warnings = make_store(tmp_path)
    store.update(lambda p: prog.visit(p, "grad", "intro", NOW))
    assert store.load().of("grad").step == "intro"
    assert len(warnings) == 1


BAD_ONE = {"version": 1, "lessons": {
    "basics": {"step": "accumulate", "seen": ["welcome", "requires-grad", "accumulate"],
               "best_quiz": {"check": {"score": 60, "total": 7, "at": "t"}}},
    "second": {"step": "twice", "seen": ["square-grad", "twice"],
               "exercises": {"square-grad": {"attempts": 3, "passed": True}}}}}
COURSE = ["--lessons", str(FIXTURES)]


def test_one_bad_entry_is_set_aside_alone_and_every_other_lesson_goes_on(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    original = json.dumps(BAD_ONE).encode()
    (cli.home / "progress.json").write_bytes(original)
    code, out, err = cli("progress", *COURSE)
    assert code == 0
    (backup,) = cli.home.glob("progress.*.bak.json")
    assert err == (f"warning: set aside lessons.basics.best_quiz.check of your saved progress "
                   f"(the score 60 is more than the total 7); the rest is kept, and the file "
                   f"as it was is in {backup}\n")
    assert backup.read_bytes() == original  # nothing the learner had is lost
    assert "score 60" not in out and "60 of 7" not in out  # never shown as a score (the
    # output names a temporary folder, whose name may hold a 60 of its own)
    assert "step 3 of 5" in out and "quiz: not taken yet" in out
    assert "exercises solved: 1 of 1" in out
    again = json.loads((cli.home / "progress.json").read_text())
    assert again["lessons"]["basics"]["best_quiz"] == {}
    assert again["lessons"]["second"]["exercises"]["square-grad"]["attempts"] == 3
    code, _, err = cli("progress", *COURSE)  # said once, kept once
    assert (code, err) == (0, "")
    assert list(cli.home.glob("progress.*.bak.json")) == [backup]


def test_the_warning_is_said_in_chinese_too(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    (cli.home / "progress.json").write_text(json.dumps(BAD_ONE))
    code, _, err = cli("--lang", "zh", "list", *COURSE)
    assert code == 0
    assert err.startswith("警告：已把保存的进度中的 lessons.basics.best_quiz.check 放到一旁"
                          "（得分 60 超过了总分 7）")


def test_a_5000_digit_number_is_one_warning_not_an_internal_error(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    text = json.dumps(BAD_ONE).replace('"attempts": 3', '"attempts": ' + "7" * 5000)
    text = text.replace('"score": 60', '"score": 6')
    (cli.home / "progress.json").write_text(text)
    code, out, err = cli("progress", *COURSE)
    assert code == 0
    assert err.count("\n") == 1
    assert err.startswith("warning: set aside lessons.second.exercises.square-grad.attempts "
                          "of your saved progress (it is a number gradtutor cannot use "
                          "(777777777777…))")
    assert "exercises solved: 1 of 1" in out  # the pass in the same record stays


def test_a_file_with_a_byte_order_mark_is_read_as_it_is(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    good = json.dumps({"version": 1, "lessons": {"basics": {"step": "accumulate"}}})
    (cli.home / "progress.json").write_bytes(b"\xef\xbb\xbf" + good.encode())
    code, out, err = cli("progress", *COURSE)
    assert (code, err) == (0, "")
    assert "step 3 of 5" in out
    assert list(cli.home.glob("progress.*.bak.json")) == []


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes are POSIX")
def test_a_progress_file_that_is_a_pipe_is_one_clear_line(cli: Cli, no_hang: None) -> None:
    cli.home.mkdir(parents=True)
    os.mkfifo(cli.home / "progress.json")
    code, _, err = cli("list", *COURSE)
    assert code == 2
    assert err == (f"gradtutor: error: cannot read {cli.home / 'progress.json'}: it is a named "
                   f"pipe (FIFO), not a regular file (hint: move it out of the way: gradtutor "
                   f"keeps progress in a regular file)\n")


def test_a_huge_progress_file_is_moved_aside_unread_not_rewritten(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "progress.json"
    with open(path, "wb") as handle:  # sparse: 300 MB long, no disk used
        handle.truncate(300 * 1024**2)
    store, warnings = make_store(tmp_path)
    tracemalloc.start()
    try:
        assert store.load() == prog.Progress()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024**2  # not read
    (backup,) = tmp_path.glob("progress.*.bak.json")
    assert backup.stat().st_size == 300 * 1024**2  # moved, not copied
    assert warnings == [f"warning: saved progress was unusable (it is 300.0 MiB, more than the "
                        f"8.0 MiB progress can take); kept it as {backup} and started fresh"]
    store.update(lambda p: prog.visit(p, "grad", "intro", NOW))
    assert path.stat().st_size < 1024


def test_temporary_files_a_killed_save_left_go_at_the_next_start(tmp_path: Path) -> None:
    stale = [tmp_path / f".progress.json.{name}.tmp" for name in ("a1b2c3d4", "zz_99xyz")]
    for path in stale:
        path.write_text("{")
    other = tmp_path / ".notes.json.a1b2c3d4.tmp"  # not the progress file's
    other.write_text("{")
    store, warnings = make_store(tmp_path)
    assert store.load() == prog.Progress()
    assert not any(path.exists() for path in stale) and other.exists()
    assert warnings == []


def test_a_temporary_file_is_left_while_another_tutor_holds_the_lock(tmp_path: Path) -> None:
    from filelock import FileLock

    stale = tmp_path / ".progress.json.a1b2c3d4.tmp"
    stale.write_text("{")
    store, _ = make_store(tmp_path)
    with FileLock(str(store.lock_path)):  # another tutor mid-save: its file may be this one
        store.load()
        assert stale.exists()
    store.update(lambda p: prog.visit(p, "grad", "intro", NOW))
    assert not stale.exists()


def test_a_repair_that_cannot_be_saved_loses_nothing(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from filelock import FileLock

    from gradtutor import store as store_module

    path = tmp_path / "progress.json"
    original = json.dumps(BAD_ONE)
    path.write_text(original)
    store, warnings = make_store(tmp_path)
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT_S", 0.01)
    with FileLock(str(store.lock_path)):  # another tutor that is not answering
        state = store.load()
        assert store.load() == state
    assert state.of("second").exercises["square-grad"].passed
    assert "check" not in state.of("basics").best_quiz
    assert warnings == [  # once a run, however often the progress is loaded
        "warning: skipped lessons.basics.best_quiz.check of your saved progress (the score 60 "
        "is more than the total 7); the file is left as it is, as it could not be repaired "
        "(it is locked)"]
    assert path.read_text() == original and list(tmp_path.glob("*.bak.json")) == []


def test_many_bad_entries_are_named_up_to_four_then_counted(tmp_path: Path) -> None:
    lessons = {f"l{i}": {"finished": "yes"} for i in range(6)}
    (tmp_path / "progress.json").write_text(json.dumps({"version": 1, "lessons": lessons}))
    store, warnings = make_store(tmp_path)
    store.load()
    (backup,) = tmp_path.glob("progress.*.bak.json")
    assert [w.split(" of your")[0] for w in warnings[:4]] == [
        f"warning: set aside lessons.l{i}.finished" for i in range(4)]
    assert warnings[4:] == [f"warning: set aside 2 more entries of your saved progress; the "
                            f"file as it was is in {backup}"]


def _visit_many(folder: str, lesson: str, count: int) -> None:
    store = ProgressStore(Path(folder), lambda line: None)
    for i in range(count):
        def visit(p: prog.Progress, i: int = i) -> prog.Progress:
            return prog.visit(p, lesson, f"step-{i}", NOW)

        store.update(visit)


@pytest.mark.slow
def test_two_tutors_at_once_keep_both_lessons(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_visit_many, args=(str(tmp_path), name, 40))
               for name in ("alpha", "beta")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    store, warnings = make_store(tmp_path)
    saved = store.load()
    assert warnings == []
    assert saved.of("alpha").seen == {f"step-{i}" for i in range(40)}
    assert saved.of("beta").seen == {f"step-{i}" for i in range(40)}


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from gradtutor import progress as prog
    from gradtutor.store import ProgressStore
    store = ProgressStore(Path(sys.argv[1]), lambda line: None)
    i = 0
    print("ready", flush=True)
    while True:
        i += 1
        store.update(lambda p: prog.visit(p, "grad", "x" * (i % 500) + str(i), "t"))
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
@settings(max_examples=8, deadline=None)
@given(delay=st.floats(min_value=0.0, max_value=0.3))
def test_a_save_killed_at_any_moment_leaves_readable_progress(
    tmp_path_factory: pytest.TempPathFactory, delay: float,
) -> None:
    folder = tmp_path_factory.mktemp("killed")
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(folder)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    assert child.stdout.readline() == b"ready\n"
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    store, warnings = make_store(folder)
    state = store.load().of("grad")
    assert warnings == []
    assert list(folder.glob(".progress.json.*.tmp")) == []  # a save cut short leaves none
    if (folder / "progress.json").exists():
        assert state.step is not None and state.step.endswith(tuple("0123456789"))
