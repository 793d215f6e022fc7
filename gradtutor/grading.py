"""Grading a class, the pure part: which folders are students, a student's results, and the
reports (a summary table, JSON, CSV, JUnit XML) made from them.

The checks themselves run in `gradtutor.runtime.pool`, and `gradtutor.ui.grade_view` draws
the summary on screen; `gradtutor grade` wires the three.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradtutor.checking.verdict import Check, Verdict, say, to_json
from gradtutor.errors import ExitCode, GradtutorError
from gradtutor.i18n import ENGLISH, Msg, Translator, msg
from gradtutor.submissions import Submission

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
class StudentResult:
    student: Submission
    verdicts: tuple[Verdict, ...]  # one per exercise, in course order

    @property
    def passed_count(self) -> int:
        return sum(v.passed for v in self.verdicts)

    @property
    def total(self) -> int:
        return len(self.verdicts)


def missing_verdict(exercise_id: str, seed: int, where: Path | None = None,
                    hint: str = "") -> Verdict:
    """No file for an exercise, not written yet: failed, with one check saying so, for
    `grade` and `check --all` alike. It names `where` the file was looked for (a learner's
    workspace), or only the file's name (a student's copy, in a folder of the grader's)."""
    file = where if where is not None else f"{exercise_id}.py"
    return Verdict(exercise_id, "error", (Check(
        "file", "error", msg("no file {file}", file=file), hint),), seed, 0,
        ran=False, missing=True)


def unreadable_verdict(exercise_id: str, seed: int, why: str) -> Verdict:
    """A student's file the grader will not read (a link, a folder, a device): failed."""
    return Verdict(exercise_id, "error", (Check("file", "error", why),), seed, 0, ran=False)


def could_not_check_verdict(exercise_id: str, seed: int, why: str) -> Verdict:
    """A check the grader could not make (it broke while checking this one file): an error
    of that check alone, never a failed exercise."""
    return Verdict(exercise_id, "error", (Check(
        "start-up", "error", msg("could not check: {error}", error=why)),), seed, 0, ran=False)


def grader_problem(verdict: Verdict) -> Check | None:
    """The check that says the grader failed on this verdict, if one does."""
    return next((c for c in verdict.checks if c.name in GRADER_CHECKS), None)


# ---- what a class's code is not walled from -------------------------------------------------

# Linux 6.12 brought Landlock ABI 6 (signal and abstract-socket scoping). TCP is walled from
# ABI 4 (Landlock's network rules), and on Linux wherever a network namespace can be made
# (netns.py); a Unix socket reached by its path (an ssh-agent's, docker's) by the seccomp
# filter (sandbox.py), on the machines it knows, since no Landlock this code knows walls it.
KERNEL_HINT = msg("to wall students in, grade on Linux 6.12 or newer, or in a container or "
                  "virtual machine of its own with no network (docs/isolation.md)")
SOCKET_HINT = msg("to keep them off those, grade in a container that has no such socket, and "
                  "with no SSH agent (docs/isolation.md)")
NETWORK_HINT = msg("to keep them off it, grade in a container or virtual machine with no "
                   "network, or where user namespaces are allowed (docs/isolation.md)")
MEMORY_HINT = msg("to cap it, grade as root or in a cgroup delegated to you, or in a container "
                  "with a memory limit (docs/isolation.md)")


@dataclass(frozen=True)
class Walls:
    """What a student's code could reach in a grading run on this system, why, and what a
    teacher can do: the one warning `grade` shows before it starts."""

    reachable: tuple[Msg, ...]
    why: Msg
    hint: Msg


def missing_walls(platform: str, abi: int, sandboxed: bool, *, netns: bool,
                  filtered: bool, memory_cgroup: bool = True) -> Walls | None:
    """The walls missing on `platform` (`sys.platform`) with a kernel of Landlock ABI `abi`,
    the sandbox on or off (GRADTUTOR_SANDBOX), a network namespace that can (`netns`) or
    cannot be made, a machine the seccomp filter knows (`filtered`), and a memory cgroup
    that can (`memory_cgroup`) or cannot be made for each check: None when none is."""
    files = msg("other students' files and yours, to read and to write")
    signals = msg("your other processes, to signal")
    network = msg("the network")
    # Landlock's network rules (ABI 4 on) cover TCP's bind and connect only
    udp = msg("the network by UDP (Landlock walls off TCP only)")
    sockets = msg("Unix sockets by their path, such as an SSH agent's")
    if platform == "darwin" or platform.startswith(("win", "cygwin")):
        return Walls((files, signals, network),
                     msg("{system} has no Landlock",
                         system="macOS" if platform == "darwin" else "Windows"), KERNEL_HINT)
    # on Linux the network namespace is made whatever the rest; the seccomp filter is the
    # sandbox's
    reached = () if netns else (udp,) if sandboxed and abi >= 4 else (network,)
    # memory never mapped (a memfd, shared memory), which the address-space limit misses
    memory = msg("more memory than a check's cap, by memory it never maps (a memfd)")
    off = (*reached, *((sockets,) if not (sandboxed and filtered) else ()),
           *((memory,) if not memory_cgroup else ()))
    if not sandboxed:
        return Walls((files, signals, *off), msg("GRADTUTOR_SANDBOX=0"), KERNEL_HINT)
    if abi <= 0:
        return Walls((files, signals, *off), msg("this Linux kernel has no Landlock"),
                     KERNEL_HINT)
    if abi < 6:
        return Walls((signals, *off), msg("this kernel's Landlock is version {abi}; signals "
                                          "are walled from version 6", abi=abi), KERNEL_HINT)
    if sockets in off:
        return Walls(off, msg("the filter that refuses Unix sockets knows x86_64 and aarch64 "
                              "only"), SOCKET_HINT)
    if off == (memory,):
        return Walls(off, msg("no memory cgroup can be made here"), MEMORY_HINT)
    if off:
        return Walls(off, msg("no network namespace can be made here"), NETWORK_HINT)
    return None


# ---- the reports ------------------------------------------------------------------------------

def report_json(results: Sequence[StudentResult], exercise_ids: Sequence[str], seed: int,
                tr: Translator = ENGLISH) -> dict[str, Any]:
    """The `grade --json` object: the run's seed and language once, then one object per
    student shaped like `check --all --json` (docs/check-format.md) plus the student's name."""
    return {
        "seed": seed, "lang": tr.lang, "exercises": list(exercise_ids),
        "students": [{"student": r.student.name, **student_json(r.verdicts, tr)}
                     for r in results],
    }


def student_json(verdicts: Sequence[Verdict], tr: Translator = ENGLISH,
                 **before_exercises: Any) -> dict[str, Any]:
    """One student's verdicts as `grade --json` and `check --all --json` give them (with
    `before_exercises`, such as check's seed and language, placed before the verdicts)."""
    passed_count = sum(v.passed for v in verdicts)
    return {"passed": passed_count == len(verdicts), "total": len(verdicts),
            "passed_count": passed_count, **before_exercises,
            "exercises": [to_json(v, tr) for v in verdicts]}


def report_csv(results: Sequence[StudentResult], exercise_ids: Sequence[str]) -> str:
    """A row per student: their name, 1 or 0 per exercise, and how many passed."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    writer.writerow(["student", *exercise_ids, "total"])
    for r in results:
        writer.writerow([spreadsheet_cell(r.student.name), *(int(v.passed) for v in r.verdicts),
                         r.passed_count])
    return out.getvalue()


# What a spreadsheet runs as a formula when a cell starts with it (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def spreadsheet_cell(text: str) -> str:
    """A text cell no spreadsheet runs: one that starts like a formula, or does after
    whitespace (spaces, no-break spaces: some spreadsheets trim them before they look), is
    prefixed with a quote (OWASP's rule), which Excel, LibreOffice and Google Sheets show as
    text."""
    formula = text.startswith(_FORMULA_START) or text.lstrip().startswith(_FORMULA_START)
    return "'" + text if formula else text


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
    """JUnit XML: a testsuite per student, a testcase per exercise. An exercise whose code
    crashed or ran out of time is an `<error>`, any other that did not pass (a wrong answer, a
    file not handed in) a `<failure>`, each with the verdict's message and every check in its
    text; the counts of each suite and of the whole say the same."""
    counts = [_junit_counts(r) for r in results]
    suites = ET.Element("testsuites", name="gradtutor",
                        tests=str(sum(r.total for r in results)),
                        failures=str(sum(f for f, _ in counts)),
                        errors=str(sum(e for _, e in counts)))
    for r, (failures, errors) in zip(results, counts, strict=True):
        suite = ET.SubElement(suites, "testsuite", name=_xml_text(r.student.name),
                              tests=str(r.total), failures=str(failures), errors=str(errors),
                              skipped="0",
                              time=_seconds(sum(v.duration_ms for v in r.verdicts)))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="seed", value=str(seed))
        for v in r.verdicts:
            case = ET.SubElement(suite, "testcase", name=v.exercise,
                                 classname=_junit_class(r.student.name),
                                 time=_seconds(v.duration_ms))
            if not v.passed:
                outcome = ET.SubElement(case, "error" if _is_error(v) else "failure",
                                        type=v.status, message=_xml_text(failure_message(v, tr)))
                outcome.text = _xml_text("\n".join(
                    f"{c.name}: {c.status}: {say(tr, c.message)}" for c in v.checks))
            if v.output:
                ET.SubElement(case, "system-out").text = _xml_text(v.output)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _is_error(verdict: Verdict) -> bool:
    """The student's code crashed or ran out of time (a missing file is a failure)."""
    return verdict.status in ("error", "timeout") and not verdict.missing


def _junit_counts(result: StudentResult) -> tuple[int, int]:
    errors = sum(_is_error(v) for v in result.verdicts)
    return result.total - result.passed_count - errors, errors


def _junit_class(name: str) -> str:
    """The student's name as a JUnit class name: Jenkins splits a class name at its dots into
    packages, so a dot becomes ONE DOT LEADER (U+2024), which reads the same."""
    return _xml_text(name.replace(".", "\u2024"))


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


# ---- the report formats: one table ----------------------------------------------------------

# Every report is text made from the same four things: the results, the exercises graded in
# course order, the run's seed and the language of its words.
Renderer = Callable[[Sequence[StudentResult], Sequence[str], int, Translator], str]


def render_json(results: Sequence[StudentResult], exercise_ids: Sequence[str], seed: int,
                tr: Translator) -> str:
    return json.dumps(report_json(results, exercise_ids, seed, tr), indent=2,
                      ensure_ascii=False) + "\n"


def render_csv(results: Sequence[StudentResult], exercise_ids: Sequence[str], seed: int,
               tr: Translator) -> str:
    return report_csv(results, exercise_ids)


def render_junit(results: Sequence[StudentResult], exercise_ids: Sequence[str], seed: int,
                 tr: Translator) -> str:
    return report_junit(results, seed, tr)


@dataclass(frozen=True)
class ReportFormat:
    """A format `grade` writes: the option that asks for it, what a message calls it, and
    where it may go: `stdout`, how the option says standard output ("--csv -"), or None if
    it never goes there; `to_file`, whether it may go to a file the option names."""

    option: str
    what: str
    render: Renderer
    stdout: str | None
    to_file: bool


REPORTS: dict[str, ReportFormat] = {
    "json": ReportFormat("--json", "JSON", render_json, stdout="--json", to_file=False),
    "csv": ReportFormat("--csv", "CSV", render_csv, stdout="--csv -", to_file=True),
    "junit": ReportFormat("--junit", "JUnit XML", render_junit, stdout=None, to_file=True),
}


def report_destinations(asked: Mapping[str, Path | None]) -> dict[str, Path | None]:
    """The reports asked for (format name -> its file, or None for standard output), checked
    against the one rule: at most one of them takes standard output."""
    on_stdout = [name for name in REPORTS if name in asked and asked[name] is None]
    if len(on_stdout) > 1:
        first, second = (REPORTS[name] for name in on_stdout[:2])
        movable = next((f for f in (REPORTS[name] for name in on_stdout) if f.to_file), None)
        raise GradtutorError(
            msg("{first} and {second} both want standard output", first=first.stdout,
                second=second.stdout),
            msg("write the {what} to a file: {option} FILE", what=movable.what,
                option=movable.option) if movable is not None
            else msg("ask for one of them at a time"))
    return dict(asked)


def class_line(results: Sequence[StudentResult], tr: Translator = ENGLISH) -> str:
    """One line on the class: how many students passed everything, and the checks passed."""
    students = len(results)
    complete = sum(r.passed_count == r.total for r in results)
    checks = sum(r.total for r in results)
    passed = sum(r.passed_count for r in results)
    return tr(msg("{complete} of {students} students passed every exercise; {passed} of "
                  "{checks} checks passed", complete=complete, students=students,
                  passed=passed, checks=checks))
