"""A check's outcome as plain data: what was checked, what passed, and the evidence.

Pure: built by the judges in the tutor's own process from plain data the worker sent back,
rendered by `feedback.py` and turned into JSON by `to_json`. Never holds learner objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CheckStatus = Literal["pass", "fail", "error", "timeout", "skip"]
Status = Literal["pass", "fail", "error", "timeout"]


@dataclass(frozen=True)
class Table:
    """Evidence as a small table, e.g. per step: the gradient used vs the one expected."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Check:
    """One named check. `message` names the mistake in the learner's terms; `help` is a hint."""

    name: str
    status: CheckStatus
    message: str
    help: str = ""
    evidence: Table | None = None


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


def to_json(verdict: Verdict) -> dict[str, Any]:
    """The documented `gradtutor check --json` object (docs/check-format.md)."""
    return {
        "exercise": verdict.exercise,
        "passed": verdict.passed,
        "status": verdict.status,
        "checks": [
            {
                "name": c.name,
                "status": c.status,
                "message": c.message,
                **({"help": c.help} if c.help else {}),
                **({"evidence": {"columns": list(c.evidence.columns),
                                 "rows": [list(r) for r in c.evidence.rows]}}
                   if c.evidence else {}),
            }
            for c in verdict.checks
        ],
        "output": verdict.output,
        "output_truncated": verdict.output_truncated,
        "seed": verdict.seed,
        "duration_ms": verdict.duration_ms,
    }
