"""A class to grade, shared by the tests of `gradtutor grade` and of its walls: four students
(reference solutions, declared mistakes, hostile files, a snoop), and the CLI run in-process."""

from __future__ import annotations

import io
from pathlib import Path

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import apply_edits
from gradtutor.env import Environment
from gradtutor.lessons.course import load_course

HOSTILE = Path(__file__).parent / "hostile"
EXERCISES = ("read-grad", "two-backwards")  # a small, cheap part of the course


def run_cli(*argv: str, home: Path, environ: dict[str, str] | None = None
            ) -> tuple[int, str, str]:
    """The real CLI in-process, its streams captured (not a terminal)."""
    from gradtutor.cli import run

    stdout, stderr = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=stdout, stderr=stderr,
                      environ={"GRADTUTOR_HOME": str(home), **(environ or {})},
                      stdin_tty=False, stdout_tty=False, width=80)
    code = run(list(argv), env)
    return code, stdout.getvalue(), stderr.getvalue()


# Dave's read-grad: the reference answer, after looking for other students' files in its own
# folder, its working folder and the folder above that (the check's own), and listing the
# folder above its own (the run's, which holds every student's private folder).
SNOOP = '''
import os
from pathlib import Path

me = str(Path(__file__).resolve())
found = []
for place in (Path(me).parent, Path.cwd(), Path.cwd().parent):
    for dirpath, _dirnames, filenames in os.walk(place):
        found += [os.path.join(dirpath, f) for f in filenames
                  if f.endswith(".py") and os.path.join(dirpath, f) != me]
print("FOUND", sorted(set(found)))
try:
    print("RUN FOLDER", sorted(os.listdir(Path(me).parent.parent)))
except PermissionError:
    print("RUN FOLDER denied")
for what, read in (("CLASS", lambda: os.listdir(CLASS)),
                   ("ALICE", lambda: open(os.path.join(CLASS, "alice", "read-grad.py")).read()),
                   ("TEMP", lambda: os.listdir("/tmp"))):
    try:
        read()
        print(what, "read")
    except PermissionError:
        print(what, "denied")
'''


def make_class(folder: Path) -> dict[str, Path]:
    """alice: reference solutions; bob: each exercise's first declared mistake; carol: one
    file that never returns and one that crashes the process; dave: no two-backwards file,
    and a read-grad that snoops for the others' files (and is otherwise right)."""
    exercises = load_course(rules=EXERCISE_RULES).exercises()
    students = {name: folder / name for name in ("alice", "bob", "carol", "dave")}
    for path in students.values():
        path.mkdir(parents=True)
    for eid in EXERCISES:
        exercise = exercises[eid]
        (students["alice"] / f"{eid}.py").write_text(exercise.solution, encoding="utf-8")
        (students["bob"] / f"{eid}.py").write_text(apply_edits(exercise.solution, exercise, 0),
                                                   encoding="utf-8")
    (students["carol"] / "read-grad.py").write_bytes((HOSTILE / "infinite_loop.py").read_bytes())
    (students["carol"] / "two-backwards.py").write_text(
        "import ctypes\nctypes.string_at(0)  # a segmentation fault at import\n",
        encoding="utf-8")
    (students["carol"] / "marker_carol.py").write_text("secret = 1\n", encoding="utf-8")
    (students["dave"] / "read-grad.py").write_text(
        f"CLASS = {str(folder)!r}\n" + SNOOP + exercises["read-grad"].solution,
        encoding="utf-8")
    return students
