"""A translation report in words: the lines `validate` and the translation tools print, each
located in the translation file where it can be. For authors, so in English. Pure.
"""

from __future__ import annotations

from gradtutor.lessons.translate.files import At
from gradtutor.lessons.translate.localize import TranslationReport


def _located(path: str, at: At, message: str) -> str:
    return f"{path}:{at[0]}:{at[1]}: {message}" if at != (0, 0) else f"{path}: {message}"


def summary_line(report: TranslationReport) -> str:
    """One line on how much of the lesson is translated."""
    where = report.path or "(no translation file)"
    counts = [f"{len(report.missing)} missing" if report.missing else "",
              f"{len(report.stale)} stale" if report.stale else "",
              f"{len(report.unused)} unused" if report.unused else "",
              f"{len(report.recoded)} with changed code" if report.recoded else "",
              f"{len(report.reshaped)} with different markdown" if report.reshaped else ""]
    detail = "; ".join(c for c in counts if c)
    return (f"{where}: {report.language} translation of lesson '{report.lesson_id}': "
            f"{report.translated} of {report.total} texts translated"
            + (f" ({detail})" if detail else ""))


def report_lines(report: TranslationReport) -> list[str]:
    """The report as `validate` prints it: a summary, then one line per stale, unused or
    reshaped entry (located in the translation file) and one per step with missing texts."""
    path = report.path or "(no translation file)"
    lines = [summary_line(report)]
    if report.mismatch:
        lines.append(f"{path}: not used: {report.mismatch}")
    for stale in report.stale:
        lines.append(_located(path, stale.at, (
            f"stale: the English of {stale.key} changed after it was translated; revise the "
            f"text, then set `source: {stale.now}`")))
    for unused in report.unused:
        lines.append(_located(path, unused.at, f"unused: {unused.hint}"))
    for key in report.recoded:
        lines.append(f"{path}: code: {key}: shown in English, because the translation changes "
                     "the code itself; translate only its comments")
    for shaped in report.reshaped:
        lines.append(_located(path, shaped.at, (
            f"markdown: {shaped.key}: {'; '.join(shaped.differences)}")))
    by_step: dict[str | None, list[str]] = {}
    for key in report.missing:
        by_step.setdefault(key.step, []).append(key.path)
    for step, paths in by_step.items():
        owner = "lesson" if step is None else f"step {step}"
        lines.append(f"{path}: missing (shown in English): {owner}: {', '.join(paths)}")
    return lines
