"""Code, evidence and the help screen at 60 to 100 columns, rendered into fixed-width consoles:
a long code line continues under its own indentation behind a mark and never restarts at
column 0; an evidence table never cuts a value short; a help line wraps under its words."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from rich.cells import cell_len
from rich.console import Console

from gradtutor.bindings import KINDS, LINE_KINDS
from gradtutor.checking.checkers.common import fmt
from gradtutor.checking.checkers.grad_reading import loss_words
from gradtutor.checking.checkers.training import per_param_table
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Check, Table, Verdict
from gradtutor.i18n import msg, translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Predict, Quiz, Slide
from gradtutor.ui.check_view import verdict_view
from gradtutor.ui.codeblock import fold_code_line
from gradtutor.ui.legend import help_body
from gradtutor.ui.render import Look, code_block

WIDTHS = (60, 80, 100)
ZH = translator("zh-CN")
LOOKS = [Look(plain=True), Look(plain=False), Look(plain=True, tr=ZH), Look(plain=False, tr=ZH)]
LOOK_IDS = ["plain", "fancy", "plain-zh", "fancy-zh"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def lines_of(renderable: object, width: int) -> list[str]:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=False, color_system=None)
    console.print(renderable)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def code_samples(lesson: Lesson) -> Iterator[tuple[str, str]]:
    """(where, code) for every code block the lesson shows."""
    for step in lesson.steps:
        if isinstance(step, Slide) and step.code:
            yield step.id, step.code
        elif isinstance(step, Exercise):
            yield f"{step.id} starter", step.starter
            yield f"{step.id} solution", step.solution
        elif isinstance(step, Quiz):
            for n, question in enumerate(step.questions, start=1):
                if question.code:
                    yield f"{step.id} question {n}", question.code
        elif isinstance(step, Predict | Demo):
            yield step.id, step.code


def lessons() -> list[tuple[str, Lesson]]:
    return [("en", load_course(rules=EXERCISE_RULES).find("grad")),
            ("zh-CN", load_course(lang="zh-CN", rules=EXERCISE_RULES).find("grad"))]


def box_rows(lines: list[str], plain: bool) -> list[str]:
    """The rows of a code block as drawn, without the box (fancy) or the indent (plain)."""
    if plain:
        assert all(line[:4].strip() == "" for line in lines)
        return [line[4:] for line in lines]
    assert lines[0].startswith("╭") and lines[-1].startswith("╰")
    rows = lines[1:-1]
    assert all(row.startswith("│ ") and row.endswith(" │") for row in rows)
    return [row[2:-2].rstrip() for row in rows]


def check_rows(code: str, rows: list[str], mark: str) -> int:
    """Each source line, in order, as its first row and the continued rows after it: the
    first row keeps the line's indentation, each continued row sits right of it behind the
    mark, and the pieces are the line's characters in order, parted only where the line had
    a space or nothing. Returns how many rows were continued."""
    continued = 0
    rows = list(rows)
    continuation = re.compile(rf"^( +){re.escape(mark)} (.*)$")
    for source in code.expandtabs(4).rstrip().splitlines():
        source = source.rstrip()
        first = rows.pop(0)
        indent = len(source) - len(source.lstrip())
        assert first[:indent] == source[:indent], (source, first)
        pieces = [first]
        while "".join("".join(pieces).split()) != "".join(source.split()):
            assert rows, f"{source!r} ends early: {pieces}"
            found = continuation.match(rows.pop(0))
            assert found, f"{source!r} continues without the mark: {pieces}"
            assert len(found.group(1)) > indent, f"{source!r}: a continued row left of its line"
            pieces.append(found.group(2))
            continued += 1
        assert re.fullmatch(r"\s*".join(re.escape(p.strip()) for p in pieces),
                            source.strip()), (source, pieces)
    assert rows == [], f"rows after the last line: {rows}"
    return continued


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "fancy"])
@pytest.mark.parametrize("width", WIDTHS)
def test_every_code_sample_continues_under_its_own_indentation(width: int, plain: bool) -> None:
    continued = 0
    for lang, lesson in lessons():
        for where, code in code_samples(lesson):
            lines = lines_of(code_block(str(code), Look(plain=plain)), width)  # no [EN] mark
            assert max(cell_len(line) for line in lines) <= width, f"{lang} {where}"
            rows = box_rows(lines, plain)
            continued += check_rows(code, rows, ">" if plain else "↪")
    if width == 60:
        assert continued > 10  # the lesson's long lines really were continued


@pytest.mark.parametrize("width", [40, 60])
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "fancy"])
def test_a_chinese_comment_breaks_between_characters_and_keeps_every_one(width: int,
                                                                         plain: bool) -> None:
    code = ("for step in range(3):\n"
            "    loss.backward()  # 每次反向传播都会把梯度加到 w.grad 上，所以要在两次之间清零\n"
            "    # 这是一行很长的中文注释，它没有空格，只能在汉字之间换行，而且一个字也不能丢")
    lines = lines_of(code_block(code, Look(plain=plain)), width)
    assert max(cell_len(line) for line in lines) <= width
    assert check_rows(code, box_rows(lines, plain), ">" if plain else "↪") >= 2


def test_a_trailing_comment_moves_down_whole_and_a_call_breaks_between_its_parts() -> None:
    line = "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # plain SGD"
    lead, offsets = fold_code_line(line, 60, "↪")
    assert [line[a:b] for a, b in zip([0, *offsets], [*offsets, len(line)], strict=True)] == [
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  ", "# plain SGD"]
    assert lead == 6
    call = "torch.optim.SGD(model.parameters(), lr=0.1)"
    lead, offsets = fold_code_line(call, 24, ">")
    pieces = [call[a:b] for a, b in zip([0, *offsets], [*offsets, None], strict=True)]
    assert pieces == ["torch.optim.SGD(", "model.parameters(), ", "lr=0.1)"]


def test_a_continued_line_keeps_its_highlighting() -> None:
    buffer = io.StringIO()
    console = Console(width=60, file=buffer, force_terminal=True, color_system="standard")
    console.print(code_block("    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                             Look(plain=False)))
    rows = buffer.getvalue().splitlines()
    continued = next(row for row in rows if "↪" in row)
    assert "lr=0.1)" in ANSI.sub("", continued)
    number = re.search(r"\x1b\[[0-9;]*m0\.1", continued)
    assert number, "the number on the continued row lost its colour"


# --- evidence ---------------------------------------------------------------------------------


def evidence_verdict() -> tuple[Verdict, list[str]]:
    """A verdict with the evidence the checkers build, wide enough to need more than 60
    columns, and every value in it."""
    case = {"w": [[1.289, -1.251, 0.593], [-0.464, 1.75, -0.812]], "loss": "sin"}
    grads = [[0.2781, 0.3144, 0.8293], [0.8943, -0.1782, 0.6881]]
    read = Table(("w", "loss_fn(w)", msg("gradient"), msg("you returned")),
                 ((fmt(case["w"]), loss_words(case), fmt(grads), fmt([[0.0] * 3] * 2)),))
    names = ["weight", "bias"]
    used = {"weight": [0.5434, -0.6574, -0.1959, 1.17, -1.855, 0.7049, 0.3, 0.2],
            "bias": [0.8613, 0.7008]}
    mean = {"weight": [0.1087, -0.1315, -0.03917, 0.2341, -0.3709, 0.141, 0.0],
            "bias": [0.1723, 0.1402]}
    step = per_param_table(names, (msg("your step used"),
                                   msg("mean gradient of the whole batch")), used, mean)
    zeros = msg("{subject} a tensor of zeros, not the gradient.", subject=msg("You returned"))
    checks = (Check("returns-grad", "fail", zeros, evidence=read),
              Check("step-gradient", "fail", msg("not run"), evidence=step))
    values = [cell for table in (read, step) for row in table.rows for cell in row]
    return Verdict("read-grad", "fail", checks, seed=3, duration_ms=9), values


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
@pytest.mark.parametrize("width", WIDTHS)
def test_an_evidence_table_shows_every_value_in_full(width: int, look: Look) -> None:
    verdict, values = evidence_verdict()
    lines = lines_of(verdict_view(verdict, look), width)
    assert max(cell_len(line) for line in lines) <= width
    shown = " ".join(" ".join(lines).split())
    assert "…" not in shown
    for value in values:
        assert " ".join(value.split()) in shown, value
    assert "[[1.289, -1.251, 0.593], [-0.464, 1.75, -0.812]]" in values
    assert "[0.5434, -0.6574, -0.1959, 1.17, -1.855, 0.7049, ...]" in values


def test_evidence_that_fits_stays_a_table_with_its_columns() -> None:
    table = Table(("w", "loss_fn(w)", "gradient"), (("[1, 2]", "(w ** 2).sum()", "[2, 4]"),))
    verdict = Verdict("read-grad", "fail", (Check("c", "fail", "m", evidence=table),), 1, 1)
    lines = lines_of(verdict_view(verdict, Look(plain=True)), 60)
    assert "  w       loss_fn(w)      gradient" in lines
    assert "  [1, 2]  (w ** 2).sum()  [2, 4]" in lines


def test_evidence_too_wide_for_the_screen_lists_each_value_beside_its_column() -> None:
    verdict, _ = evidence_verdict()
    lines = lines_of(verdict_view(verdict, Look(plain=True)), 80)
    assert "  w             [[1.289, -1.251, 0.593], [-0.464, 1.75, -0.812]]" in lines
    assert "  loss_fn(w)    torch.sin(w).sum()" in lines


def test_the_weighted_loss_spells_out_the_weights_of_this_w() -> None:
    assert loss_words({"w": [0.5, -1.0], "loss": "weighted"}) == "(w * [1, 2]).sum()"
    assert loss_words({"w": [[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]], "loss": "weighted"}) == (
        "(w * [[1, 2, 3], [4, 5, 6]]).sum()")
    assert loss_words({"w": [0.5], "loss": "squares"}) == "(w ** 2).sum()"


# --- the help screen --------------------------------------------------------------------------


def word_starts(row: str) -> set[int]:
    """The cell columns at which a word of `row` begins."""
    cells = "".join(char + "\0" * (cell_len(char) - 1) for char in row)
    return {i for i, char in enumerate(cells)
            if char not in " \0" and (i == 0 or cells[i - 1] == " ")}


def gap_end(row: str) -> int:
    """Where the first gap of two spaces or more between words ends in `row`."""
    gap = re.search(r"\S {2,}(?=\S)", row)
    assert gap is not None, f"no gap between key and description in {row!r}"
    return gap.end()


@pytest.mark.parametrize("look", LOOKS, ids=LOOK_IDS)
@pytest.mark.parametrize("keys", [True, False], ids=["keys", "lines"])
@pytest.mark.parametrize("width", [60, 80])
def test_a_wrapped_help_line_hangs_under_its_description(width: int, keys: bool,
                                                          look: Look) -> None:
    any_wrapped = False
    for kind in KINDS if keys else LINE_KINDS:
        lines = lines_of(help_body(kind, keys, look, 4), width)
        rows = lines[2:lines.index("", 2)]
        keyed = [row for row in rows if row.startswith("  ") and row[2] != " "]
        wrapped = [row for row in rows if row not in keyed]
        # each description starts at its row's first word after a gap of two spaces or more
        # (keys are joined by ", "): the same column on every row
        starts = {gap_end(row[2:]) + 2 for row in keyed}
        assert len(starts) == 1, f"{kind}: the descriptions start in different columns"
        column = starts.pop()
        for row in wrapped:
            assert min(word_starts(row)) == column, row
        any_wrapped = any_wrapped or bool(wrapped)
    if width == 60:
        assert any_wrapped, "no help line was long enough to wrap"
