"""The lesson cache: a clean file's plain data is reused, and only ever as validated data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons import cache
from gradtutor.lessons.load import load_lesson_file

FIXTURE = Path(__file__).parent / "fixtures" / "course" / "basics.yaml"


def test_a_clean_lesson_is_cached_and_loads_the_same_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    first, problems = load_lesson_file(FIXTURE, EXERCISE_RULES)
    assert problems == [] and first is not None
    entries = list(cache.cache_dir().glob("lesson-*.json"))
    assert len(entries) == 1
    again, problems = load_lesson_file(FIXTURE, EXERCISE_RULES)
    assert (again, problems) == (first, [])


def test_a_damaged_cache_entry_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    expected, _ = load_lesson_file(FIXTURE, EXERCISE_RULES)
    (entry,) = cache.cache_dir().glob("lesson-*.json")
    entry.write_text('{"id": "forged", "steps": 3}')  # valid JSON, not a valid lesson
    lesson, problems = load_lesson_file(FIXTURE, EXERCISE_RULES)
    assert (lesson, problems) == (expected, [])
    entry.write_text("{broken")
    assert load_lesson_file(FIXTURE, EXERCISE_RULES) == (expected, [])


def test_an_edited_file_is_parsed_again_with_positions(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "basics.yaml"
    shutil.copy(FIXTURE, copy)
    load_lesson_file(copy, EXERCISE_RULES)
    copy.write_text(copy.read_text().replace("title: Welcome", "titel: Welcome"))
    lesson, problems = load_lesson_file(copy, EXERCISE_RULES)
    assert lesson is None
    assert [str(p) for p in problems] == [
        "basics.yaml:9:5: unknown key 'titel'; did you mean 'title'?"]


def test_the_colours_of_code_are_kept_and_drawn_the_same(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A code block's colours come from the cache on the next start: the same segments as
    Pygments gives; other code, or a damaged entry, is coloured anew."""
    import io

    from rich.console import Console

    from gradtutor.ui.codeblock import CodeBlock

    def drawn(code: str) -> list[tuple[str, str]]:
        console = Console(file=io.StringIO(), width=60, force_terminal=True,
                          color_system="truecolor")
        return [(s.text, str(s.style)) for s in console.render(CodeBlock(code, plain=False))]

    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    code = 'w = torch.ones(3, requires_grad=True)  # a leaf\nprint("grad:", w.grad)'
    first = drawn(code)
    assert len({style for _, style in first}) > 3  # coloured: keywords, strings, comments
    (entry,) = cache.cache_dir().glob("lesson-*.json")
    assert drawn(code) == first  # from the cache
    entry.write_text('{"text": "something else", "style": "", "spans": []}')
    assert drawn(code) == first
    other = code.replace("# a leaf", "# the leaf")
    assert "".join(text for text, _ in drawn(other)).count("the leaf") == 1
