"""Grading a class, the pure part: which folders are students, a student's results, and the
reports (a summary table, JSON, CSV, JUnit XML) made from them.

The checks themselves run in `gradtutor.runtime.pool`, and `gradtutor.ui.grade_view` draws
the summary on screen; `gradtutor grade` wires the three.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradtutor.checking.verdict import Check, Verdict, say, to_json
from gradtutor.errors import ExitCode, GradtutorError
from gradtutor.i18n import ENGLISH, Translator, msg

# Checks that mean the grader failed, not the student: the checker could not start (the
# student's code never ran), or the grader stopped the check itself.
GRADER_CHECKS = ("start-up", "stopped")


class GradingFailed(GradtutorError):
    """The grader itself could not grade (its checker would not start, or it broke): never
    reported as a student's failure."""

    exit_code = ExitCode.SOFTWARE


class GradingInterrupted(GradtutorError):
    """Grading was stopped (Ctrl-C) before the class was done: no report is written."""

    exit_code = ExitCode.INTERRUPTED


@dataclass(frozen=True)
class Submission:
    """One student: a name for the reports and the folder holding their exercise files."""

    name: str
    folder: Path


@dataclass(frozen=True)
class StudentResult:
    student: Submission
    verdicts: tuple[Verdict, ...]  # one per exercise, in course order

    @property
    def passed_count(self) -> int:
        return sum(v.passed for v in self.verdicts)

    @property
    def total(self) -> int:
        return len(self.verdicts)


def find_submissions(paths: Sequence[Path], exercise_ids: Iterable[str]) -> list[Submission]:
    """The students named by `paths`: a folder that holds an exercise file (`ID.py`), or no
    folder at all, is one student; any other folder holds one folder per student (hidden
    ones skipped). Sorted by name; GradtutorError for a path that is not a folder, or two
    students of one name."""
    files = {f"{eid}.py" for eid in exercise_ids}
    found: list[Submission] = []
    for path in paths:
        if not path.is_dir():
            raise GradtutorError(msg("{path} is not a folder", path=str(path)),
                                 msg("name a folder of student folders, or students' folders"))
        students = [child for child in sorted(path.iterdir())
                    if child.is_dir() and not child.name.startswith(".")]
        if not students or any((path / name).exists() or (path / name).is_symlink()
                               for name in files):
            found.append(Submission(_name_of(path), path))  # nothing handed in is one student
        else:
            found.extend(Submission(child.name, child) for child in students)
    names = [s.name for s in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise GradtutorError(msg("two student folders are named {name}", name=twice[0]),
                             msg("rename one: the reports name students by their folder"))
    return sorted(found, key=lambda s: s.name)


def _name_of(path: Path) -> str:
    return path.resolve().name or str(path)


def missing_verdict(exercise_id: str, seed: int) -> Verdict:
    """A student with no file for an exercise: failed, with one check saying so."""
    return Verdict(exercise_id, "error", (Check(
        "file", "error", msg("no file {file}", file=f"{exercise_id}.py")),), seed, 0,
        ran=False, missing=True)


def unreadable_verdict(exercise_id: str, seed: int, why: str) -> Verdict:
    """A student's file the grader will not read (a link, a folder, a device): failed."""
    return Verdict(exercise_id, "error", (Check("file", "error", why),), seed, 0, ran=False)


def grader_problem(verdict: Verdict) -> Check | None:
    """The check that says the grader failed on this verdict, if one does."""
    return next((c for c in verdict.checks if c.name in GRADER_CHECKS), None)


# ---- the reports ------------------------------------------------------------------------------

def report_json(results: Sequence[StudentResult], exercise_ids: Sequence[str], seed: int,
                tr: Translator = ENGLISH) -> dict[str, Any]:
    """The `grade --json` object: the run's seed and language once, then one object per
    student shaped like `check --all --json` (docs/check-format.md) plus the student's name."""
    return {
        "seed": seed, "lang": tr.lang, "exercises": list(exercise_ids),
        "students": [{
            "student": r.student.name, "passed": r.passed_count == r.total, "total": r.total,
            "passed_count": r.passed_count,
            "exercises": [to_json(v, tr) for v in r.verdicts]} for r in results],
    }


def report_csv(results: Sequence[StudentResult], exercise_ids: Sequence[str]) -> str:
    """A row per student: their name, 1 or 0 per exercise, and how many passed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", *exercise_ids, "total"])
    for r in results:
        writer.writerow([r.student.name, *(int(v.passed) for v in r.verdicts), r.passed_count])
    return out.getvalue()


# Characters XML 1.0 cannot hold, even escaped: a student's output may print any of them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def failure_message(verdict: Verdict, tr: Translator = ENGLISH) -> str:
    """The first check that did not pass, in a line: what a CI system shows for the test."""
    check = next((c for c in verdict.checks if c.status != "pass" and c.status != "skip"),
                 None)
    if check is None:
        return verdict.status
    return f"{check.name}: {say(tr, check.message)}"


def report_junit(results: Sequence[StudentResult], seed: int,
                 tr: Translator = ENGLISH) -> str:
    """JUnit XML: a testsuite per student, a testcase per exercise, a failure (with the
    verdict's message, and every check in its text) for each that did not pass."""
    suites = ET.Element("testsuites", name="gradtutor",
                        tests=str(sum(r.total for r in results)),
                        failures=str(sum(r.total - r.passed_count for r in results)))
    for r in results:
        suite = ET.SubElement(suites, "testsuite", name=_xml_text(r.student.name),
                              tests=str(r.total), failures=str(r.total - r.passed_count),
                              errors="0", skipped="0",
                              time=_seconds(sum(v.duration_ms for v in r.verdicts)))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="seed", value=str(seed))
        for v in r.verdicts:
            case = ET.SubElement(suite, "testcase", name=v.exercise,
                                 classname=_xml_text(r.student.name),
                                 time=_seconds(v.duration_ms))
            if not v.passed:
                failure = ET.SubElement(case, "failure", type=v.status,
                                        message=_xml_text(failure_message(v, tr)))
                failure.text = _xml_text("\n".join(
                    f"{c.name}: {c.status}: {say(tr, c.message)}" for c in v.checks))
            if v.output:
                ET.SubElement(case, "system-out").text = _xml_text(v.output)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def class_line(results: Sequence[StudentResult], tr: Translator = ENGLISH) -> str:
    """One line on the class: how many students passed everything, and the checks passed."""
    students = len(results)
    complete = sum(r.passed_count == r.total for r in results)
    checks = sum(r.total for r in results)
    passed = sum(r.passed_count for r in results)
    return tr(msg("{complete} of {students} students passed every exercise; {passed} of "
                  "{checks} checks passed", complete=complete, students=students,
                  passed=passed, checks=checks))
