"""The lesson cache: a clean file's plain data is reused, and only ever as validated data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons import cache
from gradtutor.lessons.load import load_lesson_file
from gradtutor.lessons.model import Exercise
from gradtutor.lessons.schema import Loc

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


class CountingRules:
    """Checking's rules, counting how often they are asked about an exercise; `state` stands
    for the state of their code."""

    def __init__(self, state: str = EXERCISE_RULES.state) -> None:
        self.state = state
        self.checker_names = EXERCISE_RULES.checker_names
        self.asked = 0

    def problems(self, exercise: Exercise, /) -> list[tuple[str, Loc]]:
        self.asked += 1
        return list(EXERCISE_RULES.problems(exercise))


SECOND = FIXTURE.parent / "second.yaml"  # its exercises declare checks: the rules are asked


def test_a_lesson_that_passed_is_not_checked_again_until_it_or_the_code_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`start` and `show` (recheck=False) take an unchanged lesson's earlier pass as its
    answer; `validate` and the whole course (recheck=True) ask the rules every time, and a
    change to the rules' code or the loader's makes the lesson checked again."""
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    rules = CountingRules()
    first, problems = load_lesson_file(SECOND, rules, recheck=False)
    assert problems == [] and first is not None and rules.asked > 0
    asked = rules.asked
    assert load_lesson_file(SECOND, rules, recheck=False) == (first, [])
    assert rules.asked == asked  # not asked again
    assert load_lesson_file(SECOND, rules) == (first, []) and rules.asked == 2 * asked
    changed = CountingRules(state=EXERCISE_RULES.state + " edited")
    assert load_lesson_file(SECOND, changed, recheck=False) == (first, [])
    assert changed.asked == asked
    monkeypatch.setattr(cache, "_loader_state", lambda: "the loader, edited")
    again = CountingRules()
    assert load_lesson_file(SECOND, again, recheck=False) == (first, [])
    assert again.asked == asked


def test_a_lesson_edited_after_it_passed_is_checked_and_its_problems_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "second.yaml"
    shutil.copy(SECOND, copy)
    assert load_lesson_file(copy, EXERCISE_RULES, recheck=False)[1] == []
    copy.write_text(copy.read_text().replace("[backward-count is solution]",
                                             "[backward-cnt is solution]"))
    lesson, problems = load_lesson_file(copy, EXERCISE_RULES, recheck=False)
    assert lesson is None
    assert [p.message for p in problems] == [
        "unknown fact 'backward-cnt'; did you mean 'backward-count'?"]


def test_a_damaged_entry_of_a_lesson_that_passed_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRADTUTOR_HOME", str(tmp_path / "home"))
    expected, _ = load_lesson_file(FIXTURE, EXERCISE_RULES, recheck=False)
    (entry,) = cache.cache_dir().glob("lesson-*.json")
    entry.write_text('{"id": "forged", "steps": 3}')  # valid JSON, not a valid lesson
    assert load_lesson_file(FIXTURE, EXERCISE_RULES, recheck=False) == (expected, [])
