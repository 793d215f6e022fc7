"""A check's outcome as plain data: what was checked, what passed, and the evidence.

Pure: built by the judges in the tutor's own process from plain data the worker sent back,
rendered by `feedback.py` and turned into JSON by `to_json`. Never holds learner objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from gradtutor.i18n import ENGLISH, Msg, Translator, msg

CheckStatus = Literal["pass", "fail", "error", "timeout", "skip"]
Status = Literal["pass", "fail", "error", "timeout"]


@dataclass(frozen=True)
class Table:
    """Evidence as a small table, e.g. per step: the gradient used vs the one expected.
    Column names and word cells are `msg()` messages; numbers and names are plain str."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # indexes into `rows` of the cases that show the mistake; `rows` keeps the run's order
    failing: frozenset[int] = frozenset()

    def failing_first(self) -> tuple[tuple[str, ...], ...]:
        """The rows as the learner reads them: the failing ones first, so the mistake is on
        screen before the cases that passed; each part keeps the run's order."""
        return (tuple(row for i, row in enumerate(self.rows) if i in self.failing)
                + tuple(row for i, row in enumerate(self.rows) if i not in self.failing))


@dataclass(frozen=True)
class Check:
    """One named check. `message` names the mistake in the learner's terms and `evidence`
    shows it from the run; `help` points in words at where to look, never at the code of the
    fix (that comes only from the exercise's hint ladder), and is shown only when asked for;
    `note` is a remark shown even when the check passed; `mistake`, the declared mistake the
    learner's file is, when it is one (the message already says it in the run's terms, so the
    screen does not repeat it; `--json` gives it as the note). All are `msg()` messages, so
    the shell can say them in the learner's language."""

    name: str
    status: CheckStatus
    message: str
    help: str = ""
    evidence: Table | None = None
    note: str = ""
    mistake: str = ""


@dataclass(frozen=True)
class Verdict:
    exercise: str
    status: Status
    checks: tuple[Check, ...]
    seed: int
    duration_ms: int
    output: str = ""
    output_truncated: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # False when nothing ran (an order of lines graded as written, a missing file): the seed
    # and the time are then not worth showing.
    ran: bool = True
    # True when there is no file for the exercise at all: not written yet, so nothing of the
    # learner's failed (the status stays "error" for scripts, as docs/check-format.md says).
    missing: bool = False

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def overall(checks: tuple[Check, ...]) -> Status:
    """The verdict's status from its checks: any timeout, else any error, else any fail."""
    statuses = {c.status for c in checks}
    for status in ("timeout", "error", "fail"):
        if status in statuses:
            return status
    return "pass" if checks else "error"


def say(tr: Translator, text: str) -> str:
    """A verdict's text in the learner's language: a message is translated; anything else
    (a number, a name, a learner's value) is data and stays as it is, even if it happens to
    read like a message."""
    return tr(text) if isinstance(text, Msg) else str(text)


def to_json(verdict: Verdict, tr: Translator = ENGLISH) -> dict[str, Any]:
    """The documented `gradtutor check --json` object (docs/check-format.md), its messages,
    hints and evidence said by `tr`; names and statuses stay as they are."""
    return {
        "exercise": verdict.exercise,
        "passed": verdict.passed,
        "status": verdict.status,
        "checks": [
            {
                "name": c.name,
                "status": c.status,
                "message": say(tr, c.message),
                **({"help": say(tr, c.help)} if c.help else {}),
                **({"evidence": _evidence_json(c.evidence, tr)} if c.evidence else {}),
                **({"note": say(tr, c.note)} if c.note else
                   {"note": say(tr, msg("a known mistake: {mistake}", mistake=c.mistake))}
                   if c.mistake else {}),
            }
            for c in verdict.checks
        ],
        "output": verdict.output,
        "output_truncated": verdict.output_truncated,
        "seed": verdict.seed,
        "duration_ms": verdict.duration_ms,
    }


def _evidence_json(table: Table, tr: Translator) -> dict[str, Any]:
    """A table as the learner reads it: its failing rows first, and how many they are."""
    return {"columns": [say(tr, column) for column in table.columns],
            "rows": [[say(tr, cell) for cell in row] for row in table.failing_first()],
            "failing": len(table.failing)}
