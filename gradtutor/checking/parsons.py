"""Grading a Parsons step: the learner's order of lines (as line ids, or as an answer file)
against the lines' `after` constraints, as a verdict. Pure: no torch, no terminal, no files.

The walkthrough and `gradtutor check` both decide here; the constraints themselves are read by
`gradtutor.lessons.parsons`.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence

from gradtutor.checking.feedback import joined, listed
from gradtutor.checking.verdict import Check, Table, Verdict, overall
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import Parsons
from gradtutor.lessons.parsons import first_out_of_place

MAX_ANSWER_BYTES = 1024 * 1024
_NUMBERED = re.compile(r"\d+\s*[.):]\s*")  # "3. loss.backward()", as the walkthrough numbers it


class OrderTextError(GradtutorError):
    """A line of an answer file that is none of the step's lines."""


def grade(step: Parsons, order: Sequence[str]) -> Verdict:
    """The verdict on `order`, line ids in the learner's order.

    Check `lines`: every line exactly once. Check `order`: no line comes before a line it
    needs; on failure it says where the learner put the first line out of place (before
    which lines it needs) and why it must come later,
    and `extra["out_of_place"]` holds that line's id for the walkthrough to mark."""
    lines = _lines_check(step, order)
    if lines.status != "pass":
        checks = (lines, Check("order", "skip",
                               msg("not judged until every line is there exactly once")))
        return Verdict(step.id, overall(checks), checks, seed=0, duration_ms=0, ran=False)
    wrong = first_out_of_place(step, order)
    if wrong is None:
        passed = Check("order", "pass", msg("every line comes after the lines it needs"))
        return Verdict(step.id, "pass", (lines, passed), seed=0, duration_ms=0, ran=False)
    line_id, later = wrong
    line = step.line(line_id)
    before = joined([f"`{step.line(ref).code}`" for ref in later])
    needs = joined([f"`{step.line(ref).code}`" for ref in line.after])
    rows = tuple((str(n), step.line(i).code, msg("out of place") if i == line_id else "")
                 for n, i in enumerate(order, start=1))
    # the lesson's own words (already in the learner's language): data to this message
    why = " ".join(line.why.split())
    failed = Check("order", "fail",
                   msg("You put `{code}` before {lines}: {why}", code=line.code, lines=before,
                       why=why),
                   help=msg("`{code}` must come after {lines}", code=line.code, lines=needs),
                   evidence=Table(("#", msg("your order"), ""), rows))
    return Verdict(step.id, "fail", (lines, failed), seed=0, duration_ms=0, ran=False,
                   extra={"out_of_place": line_id})


def _lines_check(step: Parsons, order: Sequence[str]) -> Check:
    known = [line.id for line in step.lines]
    count = len(known)
    if not order:
        return Check("lines", "fail", msg("your answer has none of the {count} lines",
                                          count=count),
                     help=msg("put all {count} lines in order, each once", count=count))
    seen = Counter(order)
    problems = [msg("{line} is not one of the lines", line=repr(line_id)) for line_id in seen
                if line_id not in known]
    problems += [msg("`{code}` is there {times} times", code=step.line(i).code, times=seen[i])
                 for i in known if seen[i] > 1]
    problems += [msg("`{code}` is missing", code=step.line(i).code)
                 for i in known if not seen[i]]
    if problems:
        return Check("lines", "fail", _semicolons(problems),
                     help=msg("use each of the {count} lines exactly once", count=count))
    return Check("lines", "pass", msg("all {count} lines, each once", count=count))


def _semicolons(items: Sequence[str]) -> str:
    if len(items) == 1:
        return items[0]
    return msg("{items}; {last}", items=_semicolons(items[:-1]), last=items[-1])


def normal(code: str) -> str:
    """A line of code with all whitespace removed: how answer lines are matched."""
    return "".join(code.split())


def order_from_text(step: Parsons, text: str) -> list[str]:
    """The line ids of an answer written as text, one line of code per line, in order.

    Whitespace does not matter; blank lines and `#` comments are ignored, and so is a
    leading number such as `3.`. A line that is none of the step's lines raises
    OrderTextError naming it, with the closest line as a hint."""
    by_code = {normal(line.code): line.id for line in step.lines}
    order: list[str] = []
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        candidates = [stripped, stripped.split("#", 1)[0], _NUMBERED.sub("", stripped, count=1)]
        candidates.append(candidates[2].split("#", 1)[0])
        found = next((by_code[normal(c)] for c in candidates if normal(c) in by_code), None)
        if found is None:
            raise OrderTextError(msg("line {number}, `{text}`, is not one of the lines to order",
                                     number=number, text=stripped),
                                 _closest_hint(step, stripped))
        order.append(found)
    return order


def _closest_hint(step: Parsons, written: str) -> str:
    codes = {normal(line.code): line.code for line in step.lines}
    close = difflib.get_close_matches(normal(written), list(codes), n=1, cutoff=0.6)
    if close:
        return msg("did you mean `{code}`?", code=codes[close[0]])
    return msg("copy each line as given: {lines}",
               lines=listed([f"`{line.code}`" for line in step.lines]))


def grade_text(step: Parsons, text: str) -> Verdict:
    """The verdict on an answer written as text (see `order_from_text`)."""
    try:
        order = order_from_text(step, text)
    except OrderTextError as exc:
        checks = (Check("lines", "fail", exc.message, help=exc.hint),
                  Check("order", "skip", msg("not judged until every line is one of the lines")))
        return Verdict(step.id, "fail", checks, seed=0, duration_ms=0, ran=False)
    return grade(step, order)


def grade_file(step: Parsons, raw: bytes, filename: str, size: int | None = None) -> Verdict:
    """The verdict on an answer file's bytes; a file that is not UTF-8 text is an error.
    `size` is the file's size when `raw` is not all of it (a file too large is not read)."""
    problem = None
    size = len(raw) if size is None else size
    if size > MAX_ANSWER_BYTES:
        problem = msg("{file} is {size} bytes; an answer of {count} lines is short",
                      file=filename, size=size, count=len(step.lines))
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            problem = msg("{file} is not UTF-8 text", file=filename)
    if problem is not None:
        check = Check("file", "error", problem,
                      help=msg("write the lines in order, one per line, in a plain text file"))
        return Verdict(step.id, "error", (check,), seed=0, duration_ms=0, ran=False)
    return grade_text(step, text)
