"""Checking a whole class: every student's every exercise, on several warm workers at once.

Before any student's code runs, every student's exercise files are copied into a fresh private
folder of their own, so what one student's code does to the submissions cannot change what
another is graded on. Each job is a thread with its own `WarmWorker` (a fork server on Linux,
all but the first forked from the first, so torch is imported once); the jobs take one check at
a time from one queue, student by student (each check in its own fresh process, under the
isolation of any check, docs/isolation.md), keep the verdicts in memory, and remove a student's
copies once all their checks are done. The private folders sit, under random names, in one
folder of the run that only root can list (mode 0300), so a student's code finds nothing of
another student's beside its own file or in the folder above; and no result is written anywhere
until the whole class is done. A file that hangs or floods costs its own time limit in its own
job; the other jobs go on, with the rest of that student's files too.

`check --all` is the grading of one student, the learner's own folder (`OwnFolder`): on one
job, each file where it is.
"""

from __future__ import annotations

import os
import queue
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from gradtutor.checking.check import MAX_SOURCE_BYTES
from gradtutor.checking.verdict import Verdict
from gradtutor.errors import GradtutorError
from gradtutor.grading import (
    GradingFailed,
    StudentResult,
    could_not_check_verdict,
    grader_problem,
    missing_verdict,
    unreadable_verdict,
)
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.checker import ColdChecker
from gradtutor.runtime.lifetime import GRADE_PREFIX, claim, owned_prefix, release
from gradtutor.runtime.sandbox import (
    READ_ENV,
    beneath,
    landlock_abi,
    readable_roots,
    sandbox_enabled,
)
from gradtutor.runtime.signals import cleanup_before_termination
from gradtutor.runtime.warm import WarmWorker
from gradtutor.submissions import Submission, stage

OnCheck = Callable[[Submission, Verdict], None]
# Around each check that runs a student's code: the student, the exercise, and whether the
# check first waits for torch to load (`check --all` shows its status line there).
DuringCheck = Callable[[Submission, Exercise, bool], AbstractContextManager[object]]


@dataclass(frozen=True)
class OwnFolder:
    """Grading one learner's own folder (`check --all`), not a class's: each file is checked
    where it is, with no copies and no walls between students (there are no others); a file
    not there is named by its path, with `hint`; a check that raises ends the run with its
    error (a class's grading says it of that check alone, and that the grader failed when it
    could check no file at all); and each check is cold unless `warm`."""

    hint: str
    warm: bool = True


def grade_class(students: Sequence[Submission], exercises: Sequence[Exercise], *, seed: int,
                jobs: int, timeout: float | None = None,
                on_check: OnCheck = lambda student, verdict: None,
                during_check: DuringCheck = lambda student, exercise, loading: nullcontext(),
                environ: Mapping[str, str],
                own: OwnFolder | None = None,
                course_folder: Path | None = None) -> list[StudentResult]:
    """Every student's verdicts, in the order of `students`, each exercise on inputs from
    `seed`. `on_check` is called (from a job's thread) after each check, `during_check`
    around each that runs code. GradingFailed when the grader itself could not check (no
    result is then reported for anyone). `environ`: the tutor's environment, which the
    workers' is made from. `own`: the students' folders are a learner's own (`OwnFolder`).
    `course_folder`: the course given to `--lessons` (its solutions are the teacher's)."""
    if own is not None:
        in_place = [{e.id: _in_place(s.folder, e.id) for e in exercises} for s in students]
        return _check_students(students, exercises, in_place, seed=seed, jobs=jobs,
                               timeout=timeout, on_check=on_check, during_check=during_check,
                               environ=environ, own=own)
    _refuse_readable(students, environ, course_folder)
    # named for this process, so that the next start's sweep removes it if grading is killed
    root = Path(tempfile.mkdtemp(prefix=owned_prefix(kind=GRADE_PREFIX)))
    held = claim(root)  # and held while this process lives, whichever PID namespace looks
    root.chmod(0o300)  # entries can be made and reached, but not listed
    try:
        # zips and loose LMS files first become folders of the grader's own, unreadable to
        # every student as the copies are
        handed_in = root / "handed-in"
        handed_in.mkdir(mode=0o700)
        students = stage(students, [e.id for e in exercises], handed_in)
        copies = [copy_student(student, exercises, root) for student in students]
        # Every worker of this run, and any it restarts or falls back to, walls reading in
        # too: a student's code reads only Python, torch and its own check's folder, not the
        # others'.
        return _check_students(students, exercises, copies, seed=seed, jobs=jobs,
                               timeout=timeout, on_check=on_check, during_check=during_check,
                               environ={**environ, READ_ENV: "walled"}, own=None)
    finally:
        _remove(root, held)


def _check_students(students: Sequence[Submission], exercises: Sequence[Exercise],
                    files: Sequence[Copies], *, seed: int, jobs: int, timeout: float | None,
                    on_check: OnCheck, during_check: DuringCheck, environ: Mapping[str, str],
                    own: OwnFolder | None) -> list[StudentResult]:
    """`grade_class` once each student's `files` are where they are checked from: a class's
    private copies (removed once a student's checks are done), or a learner's own files."""
    # One check at a time from one queue, student by student: a job held up by a file that
    # hangs does not hold up the rest of that student's files, which other jobs take.
    todo: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
    for index in range(len(students)):
        for number in range(len(exercises)):
            todo.put((index, number))
    verdicts: dict[tuple[int, int], Verdict] = {}
    left = [len(exercises)] * len(students)  # each student's checks not yet done
    counting = threading.Lock()
    failures: list[BaseException] = []
    stop = threading.Event()
    warm = own is None or own.warm
    # One fork server imports torch; the others are forked from it once it is ready, so they
    # share its memory and none of them imports torch again (where there is no fork server,
    # each worker starts its own).
    # No warm-up of the next check's child: checks come back to back and would wait for it.
    count = max(1, min(jobs, len(students)))
    workers: list[WarmWorker | ColdChecker] = []
    if warm:
        leader = WarmWorker(warm_up=False, environ=environ)
        leader.start()
        workers += [leader, *(WarmWorker(twin_of=leader, warm_up=False, environ=environ)
                              for _ in range(count - 1))]
    else:
        workers += [ColdChecker(environ) for _ in range(count)]

    def job(worker: WarmWorker | ColdChecker, ended: threading.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    index, number = todo.get_nowait()
                except queue.Empty:
                    return
                student, exercise = students[index], exercises[number]
                try:
                    verdicts[index, number] = grade_check(
                        worker, student, exercise, files[index][exercise.id], seed=seed,
                        timeout=timeout, stop=stop, own=own, during_check=during_check)
                except GradingFailed:
                    raise
                except Exception as exc:
                    if own is not None:  # a learner's own check: its error is the run's
                        raise
                    # this check's error, not the run's
                    verdicts[index, number] = could_not_check_verdict(
                        exercise.id, seed, f"{type(exc).__name__}: {exc}")
                finally:
                    with counting:
                        left[index] -= 1
                        last = left[index] == 0
                    if last and own is None:  # no check of this student's runs any more
                        remove_copies(files[index])
                on_check(student, verdicts[index, number])
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
            failures.append(exc)
            stop.set()
        finally:
            ended.set()

    # Each job's end is waited for on an Event, not by joining its thread: a join that a
    # signal's exception interrupts (Ctrl-C, SIGTERM) marks a thread still running as ended
    # (CPython 3.11's Thread._wait_for_tstate_lock), and the waits after it return at once.
    ends = [threading.Event() for _ in workers]
    threads = [threading.Thread(target=job, args=(worker, ends[n]), name=f"gradtutor-grade-{n}",
                                daemon=True) for n, worker in enumerate(workers)]
    # SIGTERM or SIGHUP unwinds as Ctrl-C does: the checks end and their folders go first
    with cleanup_before_termination():
        try:
            for worker in workers[1:]:
                worker.start()
            for worker in workers[1:]:
                if isinstance(worker, WarmWorker):
                    worker.wait_ready()  # each clones the first server before any check runs
            for thread in threads:
                thread.start()
            for ended in ends:
                while not ended.wait(0.1):  # short waits, so Ctrl-C reaches this thread
                    pass
        finally:
            stop.set()
            for worker in workers:
                worker.close()  # a check still running (Ctrl-C) ends now
            for thread, ended in zip(threads, ends, strict=True):
                if thread.ident is not None:  # started: Ctrl-C may come before they all are
                    ended.wait(10.0)
    if failures and own is not None:
        raise failures[0]
    if not failures:
        failures = _grader_broken(verdicts, students)
    if failures:
        first = failures[0]
        if isinstance(first, GradtutorError):
            raise first
        raise GradingFailed(msg("the grader failed: {error}",
                                error=f"{type(first).__name__}: {first}"),
                            msg("this is a gradtutor bug: rerun with --debug and report it")
                            ) from first
    return [StudentResult(student, tuple(verdicts[index, number]
                                         for number in range(len(exercises))))
            for index, student in enumerate(students)]


def _refuse_readable(students: Sequence[Submission], environ: Mapping[str, str],
                     course_folder: Path | None = None) -> None:
    """A usage error before anything is copied when the course given to `--lessons` (whose
    solutions are the teacher's), a student's files, or the temporary folder that will hold
    everyone's copies lie beneath a folder every student's code may read
    (sandbox.readable_roots: the system's folders, torch's site-packages, gradtutor's
    package). Only where reading is walled at all (Linux with Landlock, the walls on)."""
    if not sandbox_enabled(environ) or landlock_abi() <= 0:
        return
    roots = readable_roots()
    if course_folder is not None:
        path = str(course_folder.resolve())
        root = beneath(path, roots)
        if root is not None:
            raise GradtutorError(
                msg("the course in {path} is inside {root}, which every student's code may "
                    "read, solutions included", path=path, root=root),
                msg("keep the course out of it (in your home, say) and grade again"))
    handed_in = [p for s in students for p in (s.folder, s.archive, *(f for _, f in s.files))
                 if p is not None]
    for path in (tempfile.gettempdir(), *map(str, handed_in)):
        root = beneath(path, roots)
        if root is not None:
            raise GradtutorError(
                msg("{path} is inside {root}, which every student's code may read",
                    path=path, root=root),
                msg("move the submissions (or TMPDIR) out of it and grade again"))


Copies = dict[str, tuple[Path | None, str | None]]  # exercise id: (the copy, or why none)


def copy_student(student: Submission, exercises: Sequence[Exercise], root: Path) -> Copies:
    """Copy a student's exercise files into a fresh folder of their own in `root` (none when
    the student's work could not be read at all: each exercise then says why)."""
    if student.problem is not None:
        return {e.id: (None, student.problem) for e in exercises}
    private = Path(tempfile.mkdtemp(dir=root))
    return {e.id: _copy_in(student.folder, private, e.id) for e in exercises}


def grade_check(worker: WarmWorker | ColdChecker, student: Submission, exercise: Exercise,
                copy: tuple[Path | None, str | None], *, seed: int, timeout: float | None,
                stop: threading.Event, own: OwnFolder | None = None,
                during_check: DuringCheck = lambda student, exercise, loading: nullcontext(),
                ) -> Verdict:
    """One student's verdict on one exercise, checked from their private copy (or, `own`,
    from their own file), with `during_check` around the check when one runs."""
    if stop.is_set():
        raise GradingFailed(msg("grading was stopped"))
    path, problem = copy
    if problem is not None:
        return unreadable_verdict(exercise.id, seed, problem)
    if path is None:
        return (missing_verdict(exercise.id, seed) if own is None else
                missing_verdict(exercise.id, seed, student.folder / f"{exercise.id}.py",
                                own.hint))
    # a cold check always loads torch first
    loading = isinstance(worker, ColdChecker) or worker.loading()
    with during_check(student, exercise, loading):
        verdict = worker.check(exercise, path, seed=seed, timeout=timeout)
    if stop.is_set():  # the check was stopped, not judged
        raise GradingFailed(msg("grading was stopped"))
    return verdict


def _grader_broken(verdicts: Mapping[tuple[int, int], Verdict],
                   students: Sequence[Submission]) -> list[BaseException]:
    """The grader's failure when it could check no file at all (torch missing, say): a check
    the grader could not make is that check's error while others were judged, since one
    student's code can break its own check (its PIDs, its memory) but never the grader's."""
    problems = [(key, wrong) for key, verdict in verdicts.items()
                if (wrong := grader_problem(verdict)) is not None]
    judged = any(v.ran and grader_problem(v) is None for v in verdicts.values())
    if not problems or judged:
        return []
    (index, _), wrong = problems[0]
    return [GradingFailed(
        msg("the checker could not check {student}'s {exercise}: {problem}",
            student=students[index].name, exercise=verdicts[problems[0][0]].exercise,
            problem=wrong.message),
        msg("the student's code never ran; fix the grading machine (is torch "
            "installed?) and grade again"))]


def remove_copies(copies: Copies) -> None:
    """Remove a student's copies once all their checks are done."""
    for path, _ in copies.values():
        if path is not None:
            path.unlink(missing_ok=True)


def _remove(root: Path, held: int | None) -> None:
    root.chmod(0o700)
    shutil.rmtree(root, ignore_errors=True)
    release(held)


def _in_place(folder: Path, exercise_id: str) -> tuple[Path | None, str | None]:
    """A learner's own file for the exercise, checked where it is: (the file, None), or
    (None, None) when there is none to read."""
    path = folder / f"{exercise_id}.py"
    return (path, None) if path.is_file() else (None, None)


def _copy_in(folder: Path, private: Path, exercise_id: str) -> tuple[Path | None, str | None]:
    """Copy a student's file for the exercise into `private`: (the copy, None); (None, None)
    when there is no file; (None, why) when it is not a plain file the grader will read (a
    link could lead to another student's file, a FIFO would never end)."""
    source = folder / f"{exercise_id}.py"
    try:
        info = os.lstat(source)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, msg("cannot read {file}: {error}", file=source.name,
                         error=exc.strerror or str(exc))
    if stat.S_ISLNK(info.st_mode):
        return None, msg("{file} is a link; hand in the file itself", file=source.name)
    if not stat.S_ISREG(info.st_mode):
        return None, msg("{file} is not a plain file", file=source.name)
    try:
        with open(source, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)  # the check reports a file over the cap
    except OSError as exc:
        return None, msg("cannot read {file}: {error}", file=source.name,
                         error=exc.strerror or str(exc))
    copy = private / source.name
    copy.write_bytes(data)
    return copy, None
