"""Nothing a learner's process can read holds a declared exercise's solution (issue 25.1): its
request carries none, and its references come from a process the tutor starts itself. A
hostile file reads every byte it can open (the check's folder and request, its own folder,
its environment, its descriptors, its own and its parent's command line and environment) and
looks for a private course's solution, through a cold check, warm checks and `grade`."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from gradtutor.checking import protocol
from gradtutor.env import Environment
from gradtutor.runtime.slot import Slot

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile" / "greps_for_the_solution.py"
MARKER = "TEACHER" + "-PRIVATE-7f3a"  # built, so that this file does not hold it either


def private_course(folder: Path) -> Path:
    """The grad lesson as a teacher's private course: read-grad's solution carries MARKER."""
    text = (ROOT / "lessons" / "grad.yaml").read_text(encoding="utf-8")
    start = text.index("    id: read-grad")
    at = text.index("    solution: |\n", start) + len("    solution: |\n")
    folder.mkdir()
    (folder / "grad.yaml").write_text(f"{text[:at]}      # {MARKER}\n{text[at:]}",
                                      encoding="utf-8")
    return folder


def run_cli(*argv: str, home: Path, environ: dict[str, str] | None = None) -> tuple[int, str]:
    from gradtutor.cli import run

    stdout, stderr = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=stdout, stderr=stderr,
                      environ={"GRADTUTOR_HOME": str(home), **(environ or {})},
                      stdin_tty=False, stdout_tty=False, width=80)
    code = run(list(argv), env)
    return code, stdout.getvalue() + stderr.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    tmp = tmp_path_factory.mktemp("sealed")
    course = str(private_course(tmp / "course"))
    work = tmp / "workspace"
    work.mkdir()
    shutil.copy(HOSTILE, work / "read-grad.py")
    klass = tmp / "class" / "mallory"
    klass.mkdir(parents=True)
    shutil.copy(HOSTILE, klass / "read-grad.py")
    junit = tmp / "report.xml"
    done = {
        "cold": run_cli("check", "read-grad", str(work / "read-grad.py"), "--lessons", course,
                        "--json", "--seed", "3", home=tmp / "h1",
                        environ={"GRADTUTOR_WARM": "0"}),
        "warm": run_cli("check", "--lesson", "grad", "--workspace", str(work), "--lessons",
                        course, "--json", "--seed", "3", home=tmp / "h2"),
    }
    code, said = run_cli("grade", str(tmp / "class"), "--lessons", course, "--exercise",
                         "read-grad", "--junit", str(junit), "--seed", "3", home=tmp / "h3")
    done["grade"] = code, said + (junit.read_text(encoding="utf-8") if junit.exists() else "")
    return done


def fix_the_loop_greps() -> str:
    """The hostile file's reading, then fix-the-loop's solution: a registered checker's
    check, whose references a cold or pre-started worker once computed in a child of its own,
    on the result pipe that the learner's process can reopen for reading."""
    text = HOSTILE.read_text(encoding="utf-8")
    lesson = (ROOT / "lessons" / "grad.yaml").read_text(encoding="utf-8")
    at = lesson.index("    solution: |\n", lesson.index("    id: fix-the-loop"))
    lines = lesson[at:].splitlines()[1:]
    solution = [line[6:] for line in itertools.takewhile(lambda x: x.startswith(" " * 6), lines)]
    return text[:text.index("def read_grad")] + "\n".join(solution) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("fork", [False, True], ids=["cold", "pre-started"])
def test_a_registered_checks_references_are_never_on_a_pipe_the_learner_holds(
        tmp_path: Path, fork: bool) -> None:
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course
    from gradtutor.runtime.cold import ColdEngine
    from gradtutor.runtime.run import run_check
    from gradtutor.runtime.warm import WarmWorker

    path = tmp_path / "fix-the-loop.py"
    path.write_text(fix_the_loop_greps(), encoding="utf-8")
    exercise = load_course(rules=EXERCISE_RULES).find_exercise("fix-the-loop")
    if fork:  # a pre-started spawned worker, as `watch` and `start` use off the fork server
        with WarmWorker(fork=False, environ=dict(os.environ)) as warm:
            verdict = warm.check(exercise, path, seed=3)
    else:
        verdict = run_check(exercise, path, seed=3, engine=ColdEngine(environ=dict(os.environ)))
    said = verdict.output
    scans = re.findall(r"opened (\d+); solution found in: \[[^\]]*\]; references found in: "
                       r"(\[[^\]]*\])", said)
    assert scans and all(int(opened) > 3 and found == "[]" for opened, found in scans), said
    assert verdict.passed  # judged on the references of the tutor's own process


REFUSES = """
import json
from gradtutor.checking import protocol
from gradtutor.runtime.sender import report_failures
from gradtutor.runtime.worker import serve_request
request = protocol.check_request(checker="fix-the-loop", function="train",
                                 source="def train(*a):\\n    return []\\n", filename="x.py",
                                 seed=1, memory_bytes=1 << 32, file_bytes=1 << 20)
sent = []
code = report_failures(sent.append, lambda: serve_request(request, sent.append))
print(json.dumps({"code": code, "sent": sent}))
"""


def test_a_learners_worker_refuses_to_compute_a_checks_references() -> None:
    """A check whose request does not say the tutor has its references (`reference:
    worker`) ends as the tutor's fault (exit 70), with nothing sent and no learner code run:
    a learner's worker never computes them (validate's batch worker, for the author's code,
    passes its own)."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-c", REFUSES], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    said = json.loads(ran.stdout.strip().splitlines()[-1])
    assert said == {"code": int(protocol.WorkerExit.SOFTWARE), "sent": []}  # nothing ran


@pytest.mark.slow
@pytest.mark.parametrize("way", ["cold", "warm", "grade"])
def test_no_byte_the_learner_can_open_holds_the_solution(
        runs: dict[str, tuple[int, str]], way: str) -> None:
    code, said = runs[way]
    scans = re.findall(r"opened (\d+); solution found in: (\[[^\]]*\]); references found in: "
                       r"(\[[^\]]*\])", said)
    assert scans, said  # the file ran, and said what it found
    for opened, found, references in scans:
        assert int(opened) > 3 and found == "[]" and references == "[]", said
    assert MARKER not in said
    # and the solution, which only the reference process had, judged it: a pass
    if way == "grade":
        assert code == 0 and 'failures="0"' in said and 'errors="0"' in said, said
    else:
        assert re.search(r'"exercise": "read-grad",\s*"passed": true', said), said


def test_a_declared_request_is_written_without_its_solution() -> None:
    spec: protocol.DeclaredSpec = {"inputs": "fresh-leaf", "catches": [],
                                   "solution": f"# {MARKER}\n", "function": "read_grad"}
    request = protocol.check_request(checker=spec, function="read_grad", source="",
                                     filename="x.py", seed=1, memory_bytes=1, file_bytes=1)
    slot = Slot()
    try:
        slot.write_request(request)
        written = slot.request_path.read_text(encoding="utf-8")
    finally:
        slot.close()
    assert MARKER not in written
    assert json.loads(written)["checker"]["function"] == "read_grad"
