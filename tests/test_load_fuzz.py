"""Property-based tests: whatever bytes an author saves, the loader answers with a lesson or
with located problems, never with an exception.

Files are written with `tempfile`, so no function-scoped fixture is shared between examples.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import Problem
from gradtutor.lessons.load import display_path, load_lesson_file
from gradtutor.lessons.model import STEP_KINDS, Lesson
from gradtutor.lessons.schema import key_of

FIXTURE = Path(__file__).parent / "fixtures" / "course"
FIXTURE_TEXT = {name: (FIXTURE / f"{name}.yaml").read_text(encoding="utf-8")
                for name in ("basics", "second")}
FIXTURE_DATA = {name: yaml.safe_load(text) for name, text in FIXTURE_TEXT.items()}
LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # the breaks YAML (and PyYAML) count

FAST = settings(max_examples=150, deadline=None)
SLOW = settings(max_examples=150, deadline=None)  # each example loads a whole fixture lesson


def load_bytes(raw: bytes) -> tuple[Lesson | None, list[Problem]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lesson.yaml"
        path.write_bytes(raw)
        lesson, found = load_lesson_file(path, EXERCISE_RULES)
        shown = display_path(path)
    for problem in found:
        assert problem.path == shown
    return lesson, found


def assert_well_formed(lesson: Lesson | None, found: list[Problem],
                       text: str | None = None) -> None:
    """A lesson and no problems, or no lesson and problems an author can follow, in order."""
    if lesson is not None:
        assert found == []
        return
    assert found, "a file that does not load must say why"
    assert found == sorted(found, key=lambda p: (p.line, p.col)), "problems are sorted by line"
    assert len(set(found)) == len(found), "each problem is reported once"
    for problem in found:
        assert problem.line >= 1 and problem.col >= 1, problem
        assert problem.message and not any(c in problem.message for c in "\r\n"), problem
        assert str(problem).startswith(f"{problem.path}:{problem.line}:{problem.col}: ")
    if text is not None:
        # the rows between line breaks: one more than the line count when the file ends with a
        # newline, which is where an error at the end of the file is reported
        rows = LINE_BREAK.split(text.removeprefix("\ufeff"))
        for problem in found:
            assert problem.line <= len(rows), (problem, len(rows))
            assert problem.col <= len(rows[problem.line - 1]) + 1, problem


def load_text(text: str) -> tuple[Lesson | None, list[Problem]]:
    lesson, found = load_bytes(text.encode("utf-8"))
    assert_well_formed(lesson, found, text)
    return lesson, found


# --- random text and bytes ------------------------------------------------------------------

YAML_BITS = [
    "id: ", "title: ", "summary: ", "order: ", "steps:", "kind: ", "questions:", "choices:",
    "answer: ", "text: ", "why: ", "lines:", "after: ", "mutants:", "replace:", "with: ",
    *STEP_KINDS, "- ", "  ", "    ", "\n", "\n", "\n", ": ", ":", "[", "]", "{", "}", ", ",
    "&a ", "*a", "<<: ", "!!python/object/apply:os.system [x]", "!!python/name:os.system ",
    "!tag ", "!!str ", "!!binary ", "'", '"', "# ", "---\n", "...\n", "|\n", ">-\n", "? ",
    "\t", "\r\n", "\r", "\x85", "\u2028", "\ufeff", "\x07", "\x00", "é", "1", "-1", "1.5",
    ".nan", "yes", "no", "~", "null", "2024-01-01", "a", "b", "z", "B", "x-y", "%YAML 1.1\n",
]
yamlish = st.lists(st.one_of(st.sampled_from(YAML_BITS), st.text(max_size=4)),
                   max_size=40).map("".join)


@FAST
@given(yamlish)
def test_yaml_like_text_never_raises(text: str) -> None:
    load_text(text)


@FAST
@given(st.text(max_size=200))
def test_any_text_never_raises(text: str) -> None:
    load_text(text)


@FAST
@given(st.binary(max_size=200))
def test_any_bytes_never_raise(raw: bytes) -> None:
    lesson, found = load_bytes(raw)
    assert_well_formed(lesson, found)
    decoded = raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    assert all(p.line <= len(LINE_BREAK.split(decoded)) for p in found)


# --- random lesson-shaped data --------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 30), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["a", "b", "c", "z", "B", "", "zero-grad", "Bad_Id", "x", *STEP_KINDS]),
    st.text(max_size=6),
)
KEYS = ["id", "title", "summary", "order", "minutes", "steps", "kind", "body", "code", "notes",
        "intro", "questions", "pass_mark", "prompt", "choices", "answer", "text", "why",
        "lines", "after", "checker", "function", "starter", "solution", "hints", "mutants",
        "mistake", "replace", "find", "with", "fails", "timeout", "show", "chart", "series",
        "x_label", "y_label", "extra"]
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)), max_leaves=6)
answers = st.one_of(st.sampled_from(["a", "b", "c", "z", "B"]),
                    st.lists(st.sampled_from(["a", "b", "c", "z", "B", 1]), max_size=3), values)
choice = st.fixed_dictionaries({}, optional={"text": values, "why": st.just("w"), "extra": values})
question = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["q1", "q2", "Q"]), "prompt": st.just("P"),
    "choices": st.lists(choice, max_size=3), "answer": answers})
parsons_line = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["a", "b", "c"]), "code": st.just("x"), "why": st.just("w"),
    "after": st.lists(st.one_of(st.sampled_from(["a", "b", "c", "d"]), values), max_size=3)})
step = st.fixed_dictionaries({}, optional={
    "kind": st.one_of(st.sampled_from([*STEP_KINDS, "slid"]), values),
    "id": st.sampled_from(["s1", "s2", "Bad"]), "title": st.sampled_from(["T", ""]),
    "body": st.just("B"), "code": values, "questions": st.lists(question, max_size=2),
    "choices": st.lists(choice, max_size=3), "answer": answers, "prompt": st.just("P"),
    "show": st.just("x"), "lines": st.lists(parsons_line, max_size=3), "extra": values})
lesson_like = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["demo", "Demo"]), "title": st.sampled_from(["T", 5]),
    "summary": st.just("S"), "order": st.one_of(st.integers(-1, 3), values),
    "steps": st.one_of(st.lists(step, max_size=3), values), "minutes": values, "extra": values})


def as_data(value: Any) -> Any:
    """A loaded model as the plain data it came from: YAML keys, lists for tuples."""
    if dataclasses.is_dataclass(value):
        return {key_of(f): as_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [as_data(item) for item in value]
    return value


def written_in(data: Any, loaded: Any) -> bool:
    """Every key and value the author wrote is in the loaded lesson, unchanged."""
    if isinstance(data, dict):
        return isinstance(loaded, dict) and all(
            key in loaded and written_in(value, loaded[key]) for key, value in data.items())
    if isinstance(data, list):
        return (isinstance(loaded, list) and len(data) == len(loaded)
                and all(written_in(a, b) for a, b in zip(data, loaded, strict=True)))
    same_type = type(data) is type(loaded) or (type(data), type(loaded)) == (int, float)
    return same_type and data == loaded


@FAST
@given(lesson_like)
def test_lesson_shaped_data_loads_unchanged_or_not_at_all(data: dict[str, Any]) -> None:
    lesson, problems = load_text(dump(data))
    if lesson is None:
        assert problems, "a rejected lesson must say why"
    else:
        assert problems == []
        assert written_in(data, as_data(lesson)), "the loaded lesson differs from the file"
        assert "extra" not in data, "an unknown key was accepted"


# --- mutations of the valid fixture lessons -------------------------------------------------


def key_paths(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path of a mapping, one of its keys), for every key in the document."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield path, key
            yield from key_paths(value, path + (key,))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from key_paths(item, path + (i,))


def at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


OTHER_TYPE = {str: 7, int: "seven", float: "half", bool: 3, type(None): ["x"], list: "x", dict: 5}


DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's is four times faster


def dump(data: Any) -> str:
    text: str = yaml.dump(data, Dumper=DUMPER, sort_keys=False, allow_unicode=True, width=1000)
    return text


fixture_names = st.sampled_from(sorted(FIXTURE_DATA))


# Keys needed only as one of a few, or only with another: their problem names them in quotes,
# not as one missing key. An exercise is judged by a checker or by declared checks (with their
# inputs); a rule of a check says something or names an explainer, and an explainer of a fact
# needs the fact named ('value'). (Deleting each key of each fixture in turn finds no other.)
ONE_OF = {"checker", "inputs", "checks", "say", "explain", "value"}


def delete_key(data: Any, draw: st.DataObject) -> Any:
    path, key = draw.draw(st.sampled_from(list(key_paths(data))), label="deleted key")
    del at(data, path)[key]

    def check(lesson: Lesson | None, found: list[Problem], text: str) -> None:
        if lesson is None:  # an optional key may go; a required one is named
            if key in ONE_OF:
                assert any(f"'{key}'" in p.message for p in found)
            else:
                assert any(p.message.startswith(f"missing required key '{key}' in ")
                           for p in found)
    return check


def rename_key(data: Any, draw: st.DataObject) -> Any:
    path, key = draw.draw(st.sampled_from(list(key_paths(data))), label="renamed key")
    new = f"{key}_{draw.draw(st.integers(0, 99))}"
    parent = at(data, path)
    items = list(parent.items())
    parent.clear()
    parent.update((new if k == key else k, v) for k, v in items)  # same place, new name

    def check(lesson: Lesson | None, found: list[Problem], text: str) -> None:
        assert lesson is None
        if key == "kind":  # without a kind, the step's other keys cannot be checked
            assert any(p.message.startswith("missing required key 'kind' in steps[") for p in found)
            return
        lines = LINE_BREAK.split(text)
        (line,) = [n for n, row in enumerate(lines, 1) if re.match(rf"^[ -]*{new}:", row)]
        col = len(lines[line - 1]) - len(lines[line - 1].lstrip(" -")) + 1
        assert any(p.line == line and p.col == col
                   and p.message.startswith(f"unknown key '{new}'; ") for p in found), (line, col)
    return check


def retype_value(data: Any, draw: st.DataObject) -> Any:
    path, key = draw.draw(st.sampled_from(list(key_paths(data))), label="retyped key")
    parent = at(data, path)
    parent[key] = OTHER_TYPE[type(parent[key])]
    return None  # many keys accept several types (`code: null`), so only the invariants hold


def duplicate_step(data: Any, draw: st.DataObject) -> Any:
    steps = data["steps"]
    source = draw.draw(st.integers(0, len(steps) - 1), label="copied step")
    step_id = steps[source]["id"]
    at_index = draw.draw(st.integers(0, len(steps)), label="copy at")
    steps.insert(at_index, copy.deepcopy(steps[source]))
    first = [s["id"] for s in steps].index(step_id)

    def check(lesson: Lesson | None, found: list[Problem], text: str) -> None:
        # safe_dump writes each step as `- kind: ...` with `  id: ...` under it
        rows = LINE_BREAK.split(text)
        id_lines = [n for n, row in enumerate(rows, 1) if row == f"  id: {step_id}"]
        assert lesson is None
        assert [str(p) for p in found] == [
            f"{found[0].path}:{id_lines[1]}:7: duplicate step id '{step_id}' (also step "
            f"{first + 1}); step ids must be unique in a lesson"]
    return check


DATA_MUTATIONS = {f.__name__: f for f in (delete_key, rename_key, retype_value, duplicate_step)}


@SLOW
@given(fixture_names, st.sampled_from(sorted(DATA_MUTATIONS)), st.data())
def test_data_mutations_of_the_fixture_never_raise(name: str, mutation: str,
                                                  draw: st.DataObject) -> None:
    data = copy.deepcopy(FIXTURE_DATA[name])
    check = DATA_MUTATIONS[mutation](data, draw)
    text = dump(data)
    lesson, found = load_text(text)  # never raises; problems within the file's lines
    if check is not None:
        check(lesson, found, text)


@SLOW
@given(fixture_names, st.sampled_from(["truncate", "insert"]), st.data())
def test_text_mutations_of_the_fixture_never_raise(name: str, mutation: str,
                                                  draw: st.DataObject) -> None:
    text = FIXTURE_TEXT[name]
    where = draw.draw(st.integers(0, len(text)), label="offset")
    if mutation == "truncate":
        lesson, _ = load_text(text[:where])
        if where == 0:
            assert lesson is None
        if where == len(text):
            assert lesson is not None
    else:
        char = draw.draw(st.one_of(st.sampled_from(list(":-[]{}&*!|>'\"#%@`\t\r\n\x07\x85\ufeff ")),
                                   st.characters(codec="utf-8")), label="inserted")
        load_text(text[:where] + char + text[where:])


@pytest.mark.parametrize("name", sorted(FIXTURE_TEXT))
def test_the_mutation_helpers_start_from_a_valid_lesson(name: str) -> None:
    lesson, found = load_text(dump(FIXTURE_DATA[name]))
    assert found == [] and lesson == load_text(FIXTURE_TEXT[name])[0]
