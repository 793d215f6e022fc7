"""Lesson YAML -> typed `Lesson`, or every problem found, each as `path:line:col: message`.

Parsing is safe by construction: the YAML is only *composed* into nodes, and nodes become
plain str/int/float/bool/None/list/dict here. A tag that would build a Python object is a
problem, never a call.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import yaml
from pydantic import BaseModel, ValidationError

from gradtutor.errors import LessonProblems, Problem
from gradtutor.lessons.model import LETTERS, STEP_KINDS, Lesson

Loc = tuple[Union[str, int], ...]

_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_MAX_BYTES = 2_000_000
_MAX_VALUES = 100_000  # values after aliases are expanded: stops a 'billion laughs' file
_MAX_DEPTH = 100  # lessons nest about six levels; far deeper would overflow Python's stack
_TOO_DEEP = "values are nested too deeply here; lessons need only a few levels"


@dataclass(frozen=True)
class Parsed:
    """A document as plain data, with the 1-based (line, col) of every value and key."""

    data: Any
    value_at: dict[Loc, tuple[int, int]]
    key_at: dict[Loc, tuple[int, int]]

    def position(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """The closest known position for `loc`, falling back to its nearest ancestor."""
        table = self.key_at if key else self.value_at
        for end in range(len(loc), -1, -1):
            found = table.get(loc[:end]) or self.value_at.get(loc[:end])
            if found:
                return found
        return (1, 1)


class _Composer(yaml.SafeLoader):
    """SafeLoader used only to compose nodes; its constructor is used for plain scalars."""


def _pos(mark: yaml.Mark) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1)


_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # the line breaks PyYAML counts


def _text_pos(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, col) of character `index` in `text`, counted as PyYAML counts marks."""
    breaks = list(_LINE_BREAK.finditer(text, 0, index))
    line_start = breaks[-1].end() if breaks else 0
    return (len(breaks) + 1, index - line_start + 1)


def _syntax_problem(exc: yaml.MarkedYAMLError, path: str) -> Problem:
    """One problem for a YAML syntax error, at the place the author has to fix."""
    mark = exc.problem_mark or exc.context_mark
    line, col = _pos(mark) if mark else (1, 1)
    context, problem = exc.context or "", exc.problem or ""
    if context == "while scanning a quoted scalar" and exc.context_mark and problem in {
            "found unexpected end of stream", "found unexpected document separator"}:
        # PyYAML stops at the end of the file; the quote that was never closed is the mistake
        return Problem(path, *_pos(exc.context_mark),
                       "YAML syntax error: this quoted text is never closed; add the closing quote")
    if problem == "but found another document":
        return Problem(path, line, col, "YAML syntax error: a second YAML document starts here; "
                                        "a lesson file holds one document, so remove this `---`")
    if context.startswith("found duplicate anchor") and exc.context_mark:
        first = exc.context_mark.line + 1
        anchor = context.removeprefix("found duplicate anchor ").split(";")[0]
        return Problem(path, line, col, f"YAML syntax error: duplicate anchor {anchor} "
                                        f"(first defined on line {first}); rename one of them")
    what = problem or context or "not valid YAML"
    return Problem(path, line, col, f"YAML syntax error: {what}; check indentation and quoting")


class _TooBig(Exception):
    """Raised inside conversion when aliases expand the document beyond `_MAX_VALUES`."""

    def __init__(self, loc: Loc) -> None:
        super().__init__()
        self.loc = loc


def parse_yaml(text: str, path: str) -> tuple[Parsed | None, list[Problem]]:
    """Compose `text` into plain data with positions; problems for anything unsafe or malformed."""
    problems: list[Problem] = []
    try:
        loader = _Composer(text)
    except yaml.reader.ReaderError as exc:
        # raised before any parsing: a character YAML forbids anywhere in a file
        line, col = _text_pos(text, exc.position)
        return None, [Problem(path, line, col, f"the file contains the control character "
                                               f"U+{exc.character:04X}, which YAML does not allow; "
                                               f"delete it")]
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        return None, [_syntax_problem(exc, path)]
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        return None, [Problem(path, 1, 1, f"not valid YAML ({message}); "
                                          f"check the file's encoding and syntax")]
    except RecursionError:  # PyYAML composes recursively: far deeper than `_MAX_DEPTH`
        return None, [Problem(path, *_pos(loader.get_mark()), _TOO_DEEP)]
    finally:
        loader.dispose()
    if node is None:
        return None, [Problem(path, 1, 1, "the lesson file is empty; start it with `id:`, `title:` and `steps:`")]

    value_at: dict[Loc, tuple[int, int]] = {}
    key_at: dict[Loc, tuple[int, int]] = {}
    inside: set[int] = set()  # the collection nodes being converted, to catch an alias loop
    count = 0

    def convert(node: yaml.Node, loc: Loc) -> Any:
        nonlocal count
        count += 1
        if count > _MAX_VALUES:
            raise _TooBig(loc)
        value_at[loc] = _pos(node.start_mark)
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            if len(loc) >= _MAX_DEPTH:
                problems.append(Problem(path, *_pos(node.start_mark), _TOO_DEEP))
                return None
            if id(node) in inside:
                problems.append(Problem(path, *_pos(node.start_mark),
                                        "a YAML alias (*name) refers to the value that contains "
                                        "it, which never ends; write the values out"))
                return None
            inside.add(id(node))
            try:
                return convert_collection(node, loc)
            finally:
                inside.discard(id(node))
        assert isinstance(node, yaml.ScalarNode)
        if node.tag in _PLAIN_TAGS:
            return loader.construct_object(node, deep=True)
        if node.tag.startswith("tag:yaml.org,2002:") and node.tag[18:] in {"timestamp", "binary"}:
            return node.value  # dates and the like stay the text the author wrote
        return tag_problem(node)

    def convert_collection(node: yaml.Node, loc: Loc) -> Any:
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                return tag_problem(node)
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    problems.append(Problem(path, *_pos(key_node.start_mark),
                                            "YAML merge keys (<<) are not supported; write the keys out"))
                    continue
                key = convert(key_node, loc + ("<key>",))
                if not isinstance(key, str):
                    key = str(key)
                if key in result:
                    problems.append(Problem(path, *_pos(key_node.start_mark),
                                            f"duplicate key '{key}'; keep only one of them"))
                    continue
                key_at[loc + (key,)] = _pos(key_node.start_mark)
                result[key] = convert(value_node, loc + (key,))
            return result
        if node.tag != _SEQ_TAG:
            return tag_problem(node)
        return [convert(item, loc + (i,)) for i, item in enumerate(node.value)]

    def tag_problem(node: yaml.Node) -> None:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        problems.append(Problem(path, *_pos(node.start_mark),
                                f"YAML tag '{tag}' is not allowed in lessons; remove the tag"))
        return None

    try:
        data = convert(node, ())
    except _TooBig as exc:
        # at the top-level value that grew too big: a deeper position would be arbitrary
        return None, [Problem(path, *value_at.get(exc.loc[:1], (1, 1)),
                              f"the file holds more than {_MAX_VALUES} values once YAML aliases "
                              f"(*name) are expanded; write the values out, and keep lessons "
                              f"short")]
    return Parsed(data, value_at, key_at), problems


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation may hold: Optional/Union/Annotated are opened up."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in typing.get_args(annotation) for t in _unwrap(arg)]
    return [annotation]


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The model class that validates the mapping at `loc` (as pydantic reports it)."""
    candidates: list[Any] = [Lesson]
    for part in loc:
        next_candidates: list[Any] = []
        for candidate in candidates:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                if isinstance(part, str) and part in candidate.model_fields:
                    next_candidates += _unwrap(candidate.model_fields[part].annotation)
                elif isinstance(part, str):
                    # a discriminator tag in the loc: keep the union member it names
                    field = candidate.model_fields.get("kind")
                    if field is not None and typing.get_args(field.annotation) == (part,):
                        next_candidates.append(candidate)
            elif typing.get_origin(candidate) is list and isinstance(part, int):
                next_candidates += _unwrap(typing.get_args(candidate)[0])
        candidates = next_candidates
        if not candidates:
            return None
    models = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
    return models[0] if len(models) == 1 else None


def _data_loc(loc: Loc, data: Any) -> Loc:
    """Drop the parts of a pydantic loc that are not in the data (union tags, validator names)."""
    kept: list[str | int] = []
    node = data
    parts = list(loc)
    for n, part in enumerate(parts):
        if (n == 2 and kept == ["steps", parts[1]] and isinstance(node, dict)
                and part == node.get("kind")):
            continue  # the step's kind, which pydantic puts in the loc; even if a key has its name
        if isinstance(node, dict) and part in node:
            kept.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            kept.append(part)
            node = node[part]
        elif isinstance(node, dict) and part == "with_" and "with" in node:
            kept.append("with")
            node = node["with"]
    return tuple(kept)


def _describe(value: Any) -> str:
    names = {str: "text", int: "a number", float: "a number", bool: "true/false",
             list: "a list", dict: "a mapping", type(None): "empty"}
    return names.get(type(value), type(value).__name__)


def _number(value: Any) -> str:
    """A limit or value as an author would write it: `1`, not `1.0`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _value(data: Any, loc: Loc) -> Any:
    """The value at a loc that `_data_loc` returned."""
    for part in loc:
        data = data[part]
    return data


def _field_name(loc: Loc) -> str:
    names = [str(p) for p in loc if isinstance(p, str)]
    return names[-1] if names else "lesson"


def _label(loc: Loc) -> str:
    """The field a value belongs to, with the item number for a list item: `hints[2]`."""
    parts = list(loc)
    index = ""
    while parts and isinstance(parts[-1], int):
        index = f"[{parts.pop() + 1}]" + index
    return _field_name(tuple(parts)) + index


def _where(loc: Loc) -> str:
    """A readable path such as `steps[3].choices[1]`."""
    out = ""
    for part in loc:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the lesson"


def _close_key(error: Any) -> str | None:
    """For an unknown key, the allowed key it is probably a typo of."""
    model = _model_at(tuple(error["loc"])[:-1])
    names = sorted(model.model_fields) if model else []
    allowed = ["with" if name == "with_" else name for name in names]
    close = difflib.get_close_matches(_field_name(tuple(error["loc"])), allowed, n=1)
    return close[0] if close else None


_LIMITS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}


def _explain(error: Any, loc: Loc, parsed: Parsed) -> tuple[str, tuple[int, int]]:
    """Turn one pydantic error into (message with a fix, position)."""
    kind = error["type"]
    value_loc = _data_loc(tuple(error["loc"]), parsed.data)
    field = _field_name(tuple(error["loc"]))
    label = _label(tuple(error["loc"]))
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        model = _model_at(tuple(error["loc"])[:-1])
        allowed = sorted(model.model_fields) if model else []
        allowed = ["with" if name == "with_" else name for name in allowed]
        close = _close_key(error)
        hint = f"did you mean '{close}'?" if close else f"allowed keys: {', '.join(allowed)}"
        return f"unknown key '{field}'; {hint}", parsed.position(value_loc, key=True)
    if kind == "missing":
        field = "with" if field == "with_" else field
        where = _where(value_loc)
        return (f"missing required key '{field}' in {where}; add `{field}:`",
                parsed.position(value_loc))
    if kind == "union_tag_invalid":
        tag = ctx.get("tag", "")
        step = _value(parsed.data, value_loc)
        if isinstance(step, dict) and not isinstance(step.get("kind"), str):
            return (f"'kind' must be one of: {', '.join(STEP_KINDS)}, not "
                    f"{_describe(step.get('kind'))}", parsed.position(value_loc + ("kind",)))
        close = difflib.get_close_matches(str(tag), STEP_KINDS, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(STEP_KINDS)}"
        return f"unknown step kind '{tag}'; {hint}", parsed.position(value_loc + ("kind",))
    if kind == "union_tag_not_found":
        return (f"missing required key 'kind' in {_where(value_loc)}; add `kind:` with one of: "
                f"{', '.join(STEP_KINDS)}", parsed.position(value_loc))
    if kind == "string_pattern_mismatch":
        got = error.get("input")
        if field == "answer" or (value_loc and value_loc[-2:-1] == ("answer",)):
            return (f"'answer' must be a letter a-z, not {got!r}; write for example `answer: b`",
                    parsed.position(value_loc))
        if field in {"id", "fails", "checker"} or "after" in value_loc:
            return (f"'{label}' {got!r} is not a valid id; use lowercase letters, digits and "
                    f"single dashes, like `zero-grad`", parsed.position(value_loc))
        if field == "function":
            return (f"'function' {got!r} is not a Python function name; use letters, digits and "
                    f"underscores, not starting with a digit, like `zero_grad`",
                    parsed.position(value_loc))
        return f"'{label}' {got!r} is not valid here", parsed.position(value_loc)
    if kind == "too_short":
        limit = ctx.get("min_length")
        return (f"'{label}' needs at least {limit} item{'s' if limit != 1 else ''}, "
                f"but has {ctx.get('actual_length')}", parsed.position(value_loc))
    if kind == "too_long":
        return (f"'{label}' has {ctx.get('actual_length')} items; at most "
                f"{ctx.get('max_length')} are allowed", parsed.position(value_loc))
    if kind == "string_too_short":
        return f"'{label}' must not be empty; write some text", parsed.position(value_loc)
    if kind == "string_too_long":
        return (f"'{label}' must be at most {ctx.get('max_length')} characters long, "
                f"not {len(str(error.get('input')))}", parsed.position(value_loc))
    if kind in {"string_type", "int_type", "int_parsing", "int_from_float", "float_type",
                "float_parsing", "list_type", "bool_type", "model_type", "model_attributes_type",
                "dict_type", "literal_error"}:
        wanted = {"string_type": "text", "int_type": "a whole number",
                  "int_parsing": "a whole number", "int_from_float": "a whole number",
                  "float_type": "a number",
                  "float_parsing": "a number", "list_type": "a list", "bool_type": "true or false",
                  "model_type": "a mapping of keys", "model_attributes_type": "a mapping of keys",
                  "dict_type": "a mapping of keys",
                  "literal_error": f"one of {ctx.get('expected', '')}"}[kind]
        value = error.get("input")
        got = repr(value) if kind == "int_from_float" else _describe(value)
        hint = ""
        if wanted == "text" and isinstance(value, (bool, int, float)):
            hint = " (quote it if it is text)"  # YAML read `yes`, `3` or `1.0` as a non-text value
        elif wanted == "text" and value is None:
            hint = "; write some text"
        return f"'{label}' must be {wanted}, not {got}{hint}", parsed.position(value_loc)
    if kind in _LIMITS:
        key, words = _LIMITS[kind]
        return (f"'{label}' must be {words} {_number(ctx.get(key))}, not "
                f"{_number(error.get('input'))}", parsed.position(value_loc))
    message = str(error["msg"]).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    return f"'{label}' {message}", parsed.position(value_loc)


def _answer_union(loc: Loc) -> Loc | None:
    """For an error in `answer: <letter> | [<letters>]`, the loc of the answer; else None.

    pydantic reports such an error once per union member, under a member label
    (`constrained-str`, `list[constrained-str]`) that means nothing to an author.
    """
    for n in range(len(loc) - 1):
        if loc[n] == "answer" and isinstance(loc[n + 1], str):
            return loc[: n + 1]
    return None


def _is_letter(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 1 and value in LETTERS


def _answer_messages(answer_loc: Loc, parsed: Parsed) -> Iterator[tuple[str, tuple[int, int]]]:
    """One message per wrong part of an answer that is neither a letter nor a list of letters."""
    loc = _data_loc(answer_loc, parsed.data)
    value = _value(parsed.data, loc)
    if isinstance(value, list):
        for j, item in enumerate(value):
            if not _is_letter(item):
                got = repr(item) if isinstance(item, str) else _describe(item)
                yield (f"'answer' lists {got}, which is not a letter a-z; write for example "
                       f"`answer: [a, c]`", parsed.position(loc + (j,)))
        return
    got = repr(value) if isinstance(value, str) else _describe(value)
    yield (f"'answer' must be a letter a-z or a list of letters, not {got}; write for example "
           f"`answer: b` or `answer: [a, c]`", parsed.position(loc))


def _semantic_problems(data: Any) -> Iterator[tuple[str, Loc]]:
    """Problems that span fields: duplicate ids, answers out of range, broken references.

    Works on the raw data so these are reported even when other parts fail to validate.
    """
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return
    seen: dict[str, int] = {}
    for i, step in enumerate(data["steps"]):
        if not isinstance(step, dict):
            continue
        step_id = step.get("id")
        if isinstance(step_id, str):
            if step_id in seen:
                yield (f"duplicate step id '{step_id}' (also step {seen[step_id] + 1}); "
                       f"step ids must be unique in a lesson", ("steps", i, "id"))
            else:
                seen[step_id] = i
        kind = step.get("kind")
        questions = step.get("questions") if kind == "quiz" else [step]
        if kind in ("quiz", "predict") and isinstance(questions, list):
            base: Loc = ("steps", i, "questions") if step.get("kind") == "quiz" else ("steps", i)
            question_ids: set[str] = set()
            for q, question in enumerate(questions):
                if not isinstance(question, dict):
                    continue
                qloc = base + (q,) if step.get("kind") == "quiz" else base
                qid = question.get("id")
                if isinstance(qid, str) and step.get("kind") == "quiz":
                    if qid in question_ids:
                        yield f"duplicate question id '{qid}'; make it unique", qloc + ("id",)
                    question_ids.add(qid)
                yield from _answer_problems(question, qloc)
        if step.get("kind") == "parsons" and isinstance(step.get("lines"), list):
            yield from _parsons_problems(step["lines"], ("steps", i, "lines"))


def _answer_problems(question: dict[str, Any], loc: Loc) -> Iterator[tuple[str, Loc]]:
    choices = question.get("choices")
    answer = question.get("answer")
    if not isinstance(choices, list) or not choices:
        return
    last = LETTERS[min(len(choices), len(LETTERS)) - 1]
    letters = answer if isinstance(answer, list) else [answer]
    for j, letter in enumerate(letters):
        if isinstance(letter, str) and len(letter) == 1 and letter in LETTERS:
            if LETTERS.index(letter) >= len(choices):
                where = loc + ("answer", j) if isinstance(answer, list) else loc + ("answer",)
                yield (f"answer '{letter}' is out of range: there are {len(choices)} choices "
                       f"(a-{last}); point it at one of them", where)
    if isinstance(answer, list) and len(set(map(str, answer))) != len(answer):
        yield "answer lists a letter twice; list each correct letter once", loc + ("answer",)


def _parsons_problems(lines: list[Any], loc: Loc) -> Iterator[tuple[str, Loc]]:
    ids = [line.get("id") for line in lines if isinstance(line, dict)]
    known = {i for i in ids if isinstance(i, str)}
    for n, line in enumerate(lines):
        if not isinstance(line, dict) or not isinstance(line.get("after"), list):
            continue
        for m, ref in enumerate(line["after"]):
            if isinstance(ref, str) and ref not in known:
                close = difflib.get_close_matches(ref, sorted(known), n=1)
                hint = f"did you mean '{close[0]}'?" if close else "name a line of this step"
                yield f"'after' names unknown line '{ref}'; {hint}", loc + (n, "after", m)
    graph = {line["id"]: [r for r in line.get("after", []) if isinstance(r, str) and r in known]
             for line in lines
             if isinstance(line, dict) and isinstance(line.get("id"), str)
             and isinstance(line.get("after", []), list)}
    if _has_cycle(graph):
        yield "the 'after' constraints form a cycle, so no order can satisfy them", loc


def _has_cycle(graph: dict[str, list[str]]) -> bool:
    """Whether following `after` references can come back to a line (iterative: no recursion
    limit however long the chain of lines)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in graph:
        if state.get(start):
            continue
        state[start] = 1
        stack = [(start, iter(graph[start]))]
        while stack:
            node, refs = stack[-1]
            nxt = next(refs, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return True
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(graph.get(nxt, []))))
    return False


def validate(parsed: Parsed, path: str) -> tuple[Lesson | None, list[Problem]]:
    """Validate plain data into a Lesson; all problems, sorted by position."""
    problems: list[Problem] = []
    lesson: Lesson | None = None
    if not isinstance(parsed.data, dict):
        return None, [Problem(path, 1, 1, f"a lesson must be a mapping of keys (id, title, "
                                          f"steps, ...), not {_describe(parsed.data)}")]
    try:
        lesson = Lesson.model_validate(parsed.data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # a typo like `bdy:` is reported as "did you mean 'body'?"; "missing 'body'" would repeat it
        typos = {(_data_loc(tuple(e["loc"])[:-1], parsed.data), _close_key(e))
                 for e in errors if e["type"] == "extra_forbidden"}
        answers: list[Loc] = []
        for error in errors:
            loc = tuple(error["loc"])
            answer_loc = _answer_union(loc)
            if answer_loc is not None:
                if answer_loc not in answers:
                    answers.append(answer_loc)
                    for message, (line, col) in _answer_messages(answer_loc, parsed):
                        problems.append(Problem(path, line, col, message))
                continue
            if error["type"] == "missing":
                name = "with" if loc[-1] == "with_" else loc[-1]
                if (_data_loc(loc[:-1], parsed.data), name) in typos:
                    continue
            message, (line, col) = _explain(error, loc, parsed)
            problems.append(Problem(path, line, col, message))
    for message, loc in _semantic_problems(parsed.data):
        line, col = parsed.position(_data_loc(loc, parsed.data))
        problems.append(Problem(path, line, col, message))
    if problems:
        lesson = None
    unique = sorted(set(problems), key=lambda p: (p.line, p.col, p.message))
    return lesson, unique


def display_path(path: Path) -> str:
    """The path as the user would type it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_lesson_text(path: Path) -> tuple[str | None, list[Problem]]:
    """The file's text, or a problem if it cannot be read as UTF-8."""
    shown = display_path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(shown, 1, 1, f"cannot read the file ({exc.strerror}); check its path and permissions")]
    if len(raw) > _MAX_BYTES:
        return None, [Problem(shown, 1, 1, f"the file is {len(raw)} bytes; lessons are limited to {_MAX_BYTES}")]
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is allowed, not text
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        # the bytes before the bad one are valid UTF-8: count characters, not bytes
        before = raw[: exc.start].decode("utf-8")
        line, col = _text_pos(before, len(before))
        return None, [Problem(shown, line, col, "the file is not UTF-8; save it as UTF-8")]


def load_lesson_file(path: Path) -> tuple[Lesson | None, list[Problem]]:
    """Read, parse and validate one lesson file."""
    text, problems = read_lesson_text(path)
    if text is None:
        return None, problems
    shown = display_path(path)
    parsed, problems = parse_yaml(text, shown)
    if parsed is None:
        return None, problems
    lesson, more = validate(parsed, shown)
    # a value already reported as unparseable needs no second message about its type
    seen = {(p.line, p.col) for p in problems}
    problems = sorted(problems + [p for p in more if (p.line, p.col) not in seen],
                      key=lambda p: (p.line, p.col))
    return (lesson if not problems else None), problems


def load_lesson(path: Path) -> Lesson:
    """One lesson, or LessonProblems listing everything wrong with it."""
    lesson, problems = load_lesson_file(path)
    if problems or lesson is None:
        raise LessonProblems(problems)
    return lesson
