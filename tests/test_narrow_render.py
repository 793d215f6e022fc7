"""Code at 60 to 100 columns, rendered into fixed-width consoles: a long code line continues
under its own indentation behind a mark and never restarts at column 0."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from rich.cells import cell_len
from rich.console import Console

from gradtutor.i18n import translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Exercise, Lesson, Predict, Quiz, Slide
from gradtutor.ui.codeblock import fold_code_line
from gradtutor.ui.render import Look, code_block

WIDTHS = (60, 80, 100)
ZH = translator("zh-CN")
LOOKS = [Look(plain=True), Look(plain=False), Look(plain=True, tr=ZH), Look(plain=False, tr=ZH)]
LOOK_IDS = ["plain", "fancy", "plain-zh", "fancy-zh"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def lines_of(renderable: object, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), force_terminal=False, color_system=None)
    console.print(renderable)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]  # type: ignore[attr-defined]


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
    return [("en", load_course().find("grad")),
            ("zh-CN", load_course(lang="zh-CN").find("grad"))]


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
            lines = lines_of(code_block(code, Look(plain=plain)), width)
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
    console = Console(width=60, file=io.StringIO(), force_terminal=True, color_system="standard")
    console.print(code_block("    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                             Look(plain=False)))
    rows = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    continued = next(row for row in rows if "↪" in row)
    assert "lr=0.1)" in ANSI.sub("", continued)
    number = re.search(r"\x1b\[[0-9;]*m0\.1", continued)
    assert number, "the number on the continued row lost its colour"
