"""Lesson YAML -> typed `Lesson`, or every problem found, each as `path:line:col: message`.

What only checking knows (the registered checkers, what makes a declared check valid) comes
in as `ExerciseRules`, handed in by the caller: this package never imports checking.

Parsing is safe by construction: the YAML is only *composed* into nodes, and nodes become
plain str/int/float/bool/None/list/dict here. A tag that would build a Python object is a
problem, never a call.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from gradtutor.errors import LessonProblems, Problem
from gradtutor.files import FileTooLarge, NotAFile, read_capped
from gradtutor.lessons import cache
from gradtutor.lessons.exercise_rules import ExerciseRules
from gradtutor.lessons.model import LETTERS, STEP_KINDS, Demo, Exercise, Lesson, Parsons, Quiz
from gradtutor.lessons.parsons import first_out_of_place, is_correct
from gradtutor.lessons.schema import Issue, build
from gradtutor.records import record

Loc = tuple[str | int, ...]

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


@record
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


_FastComposer: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def _compose_fast(text: str) -> tuple[Any, yaml.Node | None] | None:
    """Nodes composed by libyaml, about 10x faster than pure Python; None if libyaml is
    missing or finds anything wrong, so that problems are always worded and located by
    the pure-Python parser."""
    if _FastComposer is None:
        return None
    loader = _FastComposer(text)
    try:
        return loader, loader.get_single_node()
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    finally:
        loader.dispose()


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
    fast = _compose_fast(text)
    if fast is not None:
        loader, node = fast
    else:
        try:
            loader = _Composer(text)
        except yaml.reader.ReaderError as exc:
            # raised before any parsing: a character YAML forbids anywhere in a file
            line, col = _text_pos(text, exc.position)
            return None, [Problem(path, line, col, f"the file contains the control character "
                                                   f"U+{exc.character:04X}, which YAML does not "
                                                   f"allow; "
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
        return None, [Problem(path, 1, 1, "the lesson file is empty; start it with `id:`, "
                                          "`title:` and `steps:`")]

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
                                            "YAML merge keys (<<) are not supported; "
                                            "write the keys out"))
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
    if any(p.message == _TOO_DEEP for p in problems):
        # as when the parser itself gives up: the structure is not worth validating
        return None, [p for p in problems if p.message == _TOO_DEEP][:1]
    return Parsed(data, value_at, key_at), problems


def _describe(value: Any) -> str:
    names = {str: "text", int: "a number", float: "a number", bool: "true/false",
             list: "a list", dict: "a mapping", type(None): "empty"}
    return names.get(type(value), type(value).__name__)


def _number(value: Any) -> str:
    """A limit or value as an author would write it: `1`, not `1.0`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _field_name(loc: Loc) -> str:
    names = [str(p) for p in loc if isinstance(p, str)]
    return names[-1] if names else "lesson"


def _label(loc: Loc) -> str:
    """The field a value belongs to, with the item number for a list item: `hints[2]`."""
    parts = list(loc)
    index = ""
    while parts and isinstance(parts[-1], int):
        index = f"[{int(parts.pop()) + 1}]" + index
    return _field_name(tuple(parts)) + index


def _where(loc: Loc) -> str:
    """A readable path such as `steps[3].choices[1]`."""
    out = ""
    for part in loc:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the lesson"


_WANTED = {"text": "text", "integer": "a whole number", "number": "a number",
           "list": "a list", "mapping": "a mapping of keys", "boolean": "true or false",
           "empty": "empty"}
_BOUNDS = {"ge": "at least", "gt": "more than", "le": "at most"}
_ANSWER_FIX = "write for example `answer: b` or `answer: [a, c]`"


def _close_key(issue: Issue) -> str | None:
    """For an unknown key, the allowed key it is probably a typo of."""
    close = difflib.get_close_matches(str(issue.loc[-1]), issue.detail["allowed"], n=1)
    return close[0] if close else None


def _is_quiz_answer(loc: Loc) -> bool:
    """Whether `loc` is (in) a quiz question's answer, which may be a letter or a list."""
    return "questions" in loc and "answer" in loc[-2:]


def _explain(issue: Issue, parsed: Parsed) -> tuple[str, tuple[int, int]]:
    """Turn one validation issue into (message with a fix, position)."""
    loc, detail = issue.loc, issue.detail
    label = _label(loc)
    at = parsed.position(loc)
    if issue.kind == "unknown_key":
        close = _close_key(issue)
        allowed = ", ".join(sorted(detail["allowed"]))
        hint = f"did you mean '{close}'?" if close else f"allowed keys: {allowed}"
        return f"unknown key '{loc[-1]}'; {hint}", parsed.position(loc, key=True)
    if issue.kind == "missing":
        key = detail["key"]
        return f"missing required key '{key}' in {_where(loc)}; add `{key}:`", at
    if issue.kind == "missing_kind":
        return (f"missing required key 'kind' in {_where(loc)}; add `kind:` with one of: "
                f"{', '.join(STEP_KINDS)}", at)
    if issue.kind == "unknown_kind":
        got = detail["got"]
        if not isinstance(got, str):
            return f"'kind' must be one of: {', '.join(STEP_KINDS)}, not {_describe(got)}", at
        kinds = difflib.get_close_matches(got, STEP_KINDS, n=1)
        hint = f"did you mean '{kinds[0]}'?" if kinds else f"use one of: {', '.join(STEP_KINDS)}"
        return f"unknown step kind '{got}'; {hint}", at
    if _is_quiz_answer(loc) and issue.kind in ("type", "pattern"):
        got = detail["got"]
        shown = repr(got) if isinstance(got, str) else _describe(got)
        if loc[-1] != "answer":
            return (f"'answer' lists {shown}, which is not a letter a-z; write for example "
                    f"`answer: [a, c]`", at)
        return f"'answer' must be a letter a-z or a list of letters, not {shown}; {_ANSWER_FIX}", at
    if issue.kind == "pattern":
        got, what = detail["got"], detail["what"]
        if what == "letter":
            return f"'{label}' must be a letter a-z, not {got!r}; write for example `answer: b`", at
        if what == "variable name":
            return (f"'{label}' {got!r} is not a Python variable name; use letters, digits and "
                    f"underscores, not starting with a digit, like `losses`", at)
        if what == "python name":
            return (f"'{label}' {got!r} is not a Python function name; use letters, digits and "
                    f"underscores, not starting with a digit, like `zero_grad`", at)
        return (f"'{label}' {got!r} is not a valid id; use lowercase letters, digits and "
                f"single dashes, like `zero-grad`", at)
    if issue.kind == "type":
        got, wanted = detail["got"], _WANTED.get(detail["want"], detail["want"])
        fraction = wanted == "a whole number" and isinstance(got, float)
        shown = repr(got) if fraction else _describe(got)
        hint = ""
        if wanted == "text" and isinstance(got, (bool, int, float)):
            hint = " (quote it if it is text)"  # YAML read `yes`, `3` or `1.0` as a non-text value
        elif wanted == "text" and got is None:
            hint = "; write some text"
        return f"'{label}' must be {wanted}, not {shown}{hint}", at
    if issue.kind == "too_short":
        if _is_quiz_answer(loc):
            return "'answer' needs at least one letter, for example [a, c]", at
        low = detail["min"]
        return (f"'{label}' needs at least {low} item{'s' if low != 1 else ''}, "
                f"but has {detail['got']}", at)
    if issue.kind == "too_long":
        return f"'{label}' has {detail['got']} items; at most {detail['max']} are allowed", at
    if issue.kind == "empty":
        return f"'{label}' must not be empty; write some text", at
    if issue.kind == "too_many_chars":
        return (f"'{label}' must be at most {detail['max']} characters long, "
                f"not {detail['got']}", at)
    if issue.kind == "range":
        return (f"'{label}' must be {_BOUNDS[detail['bound']]} {_number(detail['limit'])}, "
                f"not {_number(detail['got'])}", at)
    return f"'{label}' is not valid here", at  # pragma: no cover - every kind is handled above


def _semantic_problems(data: Any, rules: ExerciseRules,
                       built: Mapping[int, Exercise]) -> Iterator[tuple[str, Loc]]:
    """Problems that span fields: duplicate ids, answers out of range, broken references.

    Works on the raw data so these are reported even when other parts fail to validate.
    `built`: the exercises the lesson's validation already made, by step index.
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
                yield from _proof_problems(question, qloc, quiz=kind == "quiz")
        if step.get("kind") == "parsons" and isinstance(step.get("lines"), list):
            yield from _parsons_problems(step["lines"], ("steps", i, "lines"))
            yield from _parsons_solution_problems(step, ("steps", i))
        if step.get("kind") == "exercise":
            yield from _exercise_problems(step, ("steps", i), rules, built.get(i))


def _answer_problems(question: dict[str, Any], loc: Loc) -> Iterator[tuple[str, Loc]]:
    choices = question.get("choices")
    answer = question.get("answer")
    if not isinstance(choices, list) or not choices:
        return
    last = LETTERS[min(len(choices), len(LETTERS)) - 1]
    letters = answer if isinstance(answer, list) else [answer]
    for j, letter in enumerate(letters):
        if (isinstance(letter, str) and len(letter) == 1 and letter in LETTERS
                and LETTERS.index(letter) >= len(choices)):
            where = loc + ("answer", j) if isinstance(answer, list) else loc + ("answer",)
            yield (f"answer '{letter}' is out of range: there are {len(choices)} choices "
                   f"(a-{last}); point it at one of them", where)
    if isinstance(answer, list) and len(set(map(str, answer))) != len(answer):
        yield "answer lists a letter twice; list each correct letter once", loc + ("answer",)


def _proof_problems(question: dict[str, Any], loc: Loc, *,
                    quiz: bool) -> Iterator[tuple[str, Loc]]:
    """A quiz choice's proof is Python that parses: it runs only in `gradtutor validate`, so
    a typo is reported here, where loading runs nothing. A predict step's choices carry none:
    running its code and `show` already proves its answer key."""
    choices = question.get("choices")
    for c, choice in enumerate(choices if isinstance(choices, list) else []):
        proof = choice.get("proof") if isinstance(choice, dict) else None
        if not isinstance(proof, dict):
            continue
        where = loc + ("choices", c, "proof")
        if not quiz:
            yield ("a predict step's choices take no 'proof': running its code and `show` "
                   "proves the answer key; remove it"), where
            continue
        for key, mode, hint in (
                ("code", "exec", "it runs after the question's code, in the same namespace"),
                ("holds", "eval", "write one expression, such as `w.grad is None`")):
            source = proof.get(key)
            if not isinstance(source, str) or not source.strip():
                continue  # the schema reports a wrong type or empty text
            error = _python_syntax_error(source, mode)
            if error is not None:
                yield (f"the proof's '{key}' is not valid Python: {error}; {hint}",
                       where + (key,))


def _python_syntax_error(source: str, mode: str) -> str | None:
    """Why `source` does not parse as Python (`mode` "exec": statements, "eval": one
    expression, its surrounding whitespace ignored), or None if it parses. Parsed only,
    never run."""
    try:
        compile(source.strip() if mode == "eval" else source, "<proof>", mode,
                flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        line = f" (line {exc.lineno} of it)" if exc.lineno and source.strip().count("\n") else ""
        return f"{exc.msg}{line}"
    except ValueError as exc:  # a NUL character
        return str(exc)
    return None


def _exercise_problems(step: dict[str, Any], loc: Loc, rules: ExerciseRules,
                       built: Exercise | None) -> Iterator[tuple[str, Loc]]:
    """An exercise names a registered checker or declares its checks on an input family
    (whose conditions, facts and words must make sense), and each mutant's edits apply to
    the solution. `built`: the step as the lesson's validation made it, if it did (else it
    is made here, so that the rules are checked even when another step is broken)."""
    checker = step.get("checker")
    if ("checker" in step) == ("inputs" in step):
        yield ("an exercise names a registered 'checker', or declares its 'checks' on "
               "'inputs' (an input family): one of the two" if "checker" in step else
               "an exercise needs a 'checker' (a registered checker's name), or 'inputs' (an "
               "input family) and the 'checks' declared on it"), loc
    elif "inputs" in step:
        if built is None:
            built, _ = build(Exercise, step)
        if built is not None:  # else the schema's problems are reported
            for text, where in rules.problems(built):
                yield text, loc + where
    names = rules.checker_names
    if isinstance(checker, str) and checker not in names:
        close = difflib.get_close_matches(checker, sorted(names), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"checkers: {', '.join(names)}"
        yield f"unknown checker '{checker}'; {hint}", loc + ("checker",)
    solution = step.get("solution")
    mutants = step.get("mutants")
    if not isinstance(solution, str) or not isinstance(mutants, list):
        return
    for m, mutant in enumerate(mutants):
        edits = mutant.get("replace") if isinstance(mutant, dict) else None
        for e, edit in enumerate(edits if isinstance(edits, list) else []):
            find = edit.get("find") if isinstance(edit, dict) else None
            if isinstance(find, str) and find and solution.count(find) != 1:
                times = solution.count(find)
                yield (f"'find' occurs {times} times in the solution, not once; quote a longer, "
                       f"unique piece of it", loc + ("mutants", m, "replace", e, "find"))


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
    elif graph and not any(graph.values()):
        yield ("no line has 'after', so every order would be right; say which lines must "
               "come before which"), loc
    codes: dict[str, str] = {}
    for n, line in enumerate(lines):
        code = line.get("code") if isinstance(line, dict) else None
        if not isinstance(code, str) or not code.strip():
            continue
        if len(code.strip().splitlines()) > 1:
            yield ("'code' must be one line of code: an answer names each line by its text"
                   ), loc + (n, "code")
        key = "".join(code.split())
        if key in codes:
            yield (f"this line has the same code as line '{codes[key]}'; make every line "
                   f"different, or an answer could not say which is which"), loc + (n, "code")
        elif isinstance(line.get("id"), str):
            codes[key] = line["id"]


def _parsons_solution_problems(step: dict[str, Any], loc: Loc) -> Iterator[tuple[str, Loc]]:
    """`solution`, when given, lists every line of the step exactly once."""
    solution = step.get("solution")
    if not isinstance(solution, list):
        return
    known = [line["id"] for line in step["lines"]
             if isinstance(line, dict) and isinstance(line.get("id"), str)]
    seen: set[str] = set()
    for n, ref in enumerate(solution):
        if not isinstance(ref, str):
            continue
        if ref not in known:
            close = difflib.get_close_matches(ref, sorted(known), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "name the lines of this step"
            yield f"'solution' names unknown line '{ref}'; {hint}", loc + ("solution", n)
        elif ref in seen:
            yield f"'solution' lists line '{ref}' twice; list each line once", loc + (
                "solution", n)
        seen.add(ref)
    missing = [i for i in known if i not in seen]
    if missing:
        yield (f"'solution' leaves out {', '.join(repr(i) for i in missing)}; list every line "
               f"once, in a correct order"), loc + ("solution",)


def _model_problems(lesson: Lesson) -> Iterator[tuple[str, Loc]]:
    """Problems only the built model shows: a Parsons step's own answer must pass its
    grading; a chart's labels name its series one for one."""
    for i, step in enumerate(lesson.steps):
        chart = step.chart if isinstance(step, Demo) else None
        if chart is not None and chart.labels and len(chart.labels) != len(chart.series):
            yield (f"'labels' has {len(chart.labels)} and 'series' {len(chart.series)}; give "
                   f"one label per series, in its order"), ("steps", i, "chart", "labels")
        if not isinstance(step, Parsons):
            continue
        order = step.solution_order
        graph = {line.id: list(line.after) for line in step.lines}
        if (sorted(order) != sorted(graph) or _has_cycle(graph)
                or any(ref not in graph for refs in graph.values() for ref in refs)):
            continue  # reported by _parsons_problems or _parsons_solution_problems
        if is_correct(step, order):
            continue
        wrong = first_out_of_place(step, order)
        assert wrong is not None
        line_id, later = wrong
        names = " and ".join(f"'{ref}'" for ref in later)
        if step.solution is not None:
            yield (f"'solution' is not a correct order: '{line_id}' comes before {names}, "
                   f"which its 'after' names"), ("steps", i, "solution")
        else:
            index = [line.id for line in step.lines].index(line_id)
            yield (f"the lines are not listed in a correct order: '{line_id}' comes before "
                   f"{names}, which its 'after' names; list them in an order that works, or "
                   f"give one as `solution:`"), ("steps", i, "lines", index)


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


def validate(parsed: Parsed, path: str,
             rules: ExerciseRules) -> tuple[Lesson | None, list[Problem]]:
    """Validate plain data into a Lesson, its exercises by `rules`; all problems, sorted by
    position."""
    if not isinstance(parsed.data, dict):
        return None, [Problem(path, 1, 1, f"a lesson must be a mapping of keys (id, title, "
                                          f"steps, ...), not {_describe(parsed.data)}")]
    lesson, issues = build(Lesson, parsed.data)
    model_problems = list(_model_problems(lesson)) if lesson is not None else []
    # a typo like `bdy:` is reported as "did you mean 'body'?"; "missing 'body'" would repeat it
    typos = {(i.loc[:-1], _close_key(i)) for i in issues if i.kind == "unknown_key"}
    problems: list[Problem] = []
    for issue in issues:
        if issue.kind == "missing" and (issue.loc, issue.detail["key"]) in typos:
            continue
        message, (line, col) = _explain(issue, parsed)
        problems.append(Problem(path, line, col, message))
    # the exercises the lesson was built with, so that checking their rules builds none again
    # (11 of the 39 ms that loading the course took)
    built = ({i: step for i, step in enumerate(lesson.steps) if isinstance(step, Exercise)}
             if lesson is not None else {})
    for message, loc in [*_semantic_problems(parsed.data, rules, built), *model_problems]:
        line, col = parsed.position(loc)
        problems.append(Problem(path, line, col, message))
    unique = sorted(set(problems), key=lambda p: (p.line, p.col, p.message))
    return (lesson if not unique else None), unique


def unproven_choices(lesson: Lesson) -> Iterator[tuple[str, Loc]]:
    """The authoring rule on quiz proofs, as (message, where): in a question that shows
    code, every choice says something about what that code does, so each needs a proof.
    `gradtutor validate` holds authors to it; loading does not, so that a lesson still being
    written runs."""
    for i, step in enumerate(lesson.steps):
        if not isinstance(step, Quiz):
            continue
        for q, question in enumerate(step.questions):
            if not question.code:
                continue
            for c, choice in enumerate(question.choices):
                if choice.proof is None:
                    yield (f"lesson '{lesson.id}', question '{question.id}' shows code, so "
                           f"each choice needs a proof of what that code does; choice "
                           f"{LETTERS[c]} has none: add `proof:` with `holds:` (and `code:` "
                           f"if it needs a few lines first)",
                           ("steps", i, "questions", q, "choices", c))


def rule_problems(lessons: list[tuple[Lesson, Path]]) -> list[Problem]:
    """Every break of the authoring rules that only `validate` holds to, located."""
    return locate([(path, loc, text) for lesson, path in lessons
                   for text, loc in unproven_choices(lesson)])


def locate(found: list[tuple[Path, Loc, str]]) -> list[Problem]:
    """Each (lesson file, where in it, message) as a Problem at its line and column; each
    file is read and parsed once, for its positions."""
    positions: dict[Path, Parsed | None] = {}
    problems: list[Problem] = []
    for path, loc, text in found:
        if path not in positions:
            source, _ = read_lesson_text(path)
            positions[path], _ = parse_yaml(source or "", display_path(path))
        parsed = positions[path]
        line, col = parsed.position(loc) if parsed else (1, 1)
        problems.append(Problem(display_path(path), line, col, text))
    return problems


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
        raw = read_capped(path, _MAX_BYTES)  # no more than that is read, and never a pipe
    except FileTooLarge as exc:
        return None, [Problem(shown, 1, 1, f"the file is {exc.size} bytes; lessons are "
                                           f"limited to {_MAX_BYTES}")]
    except NotAFile as exc:
        return None, [Problem(shown, 1, 1, f"it is {exc.kind}, not a regular file; name a "
                                           f"lesson file")]
    except OSError as exc:
        return None, [Problem(shown, 1, 1, f"cannot read the file ({exc.strerror}); "
                                           f"check its path and permissions")]
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is allowed, not text
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        # the bytes before the bad one are valid UTF-8: count characters, not bytes
        before = raw[: exc.start].decode("utf-8")
        line, col = _text_pos(before, len(before))
        return None, [Problem(shown, line, col, "the file is not UTF-8; save it as UTF-8")]


_HEAD = {"id": "tag:yaml.org,2002:str", "title": "tag:yaml.org,2002:str",
         "order": "tag:yaml.org,2002:int"}


def lesson_head(text: str) -> tuple[str, str, int] | None:
    """The id, title and order that a lesson file states as plain top-level values, read
    from the YAML's parse events up to the last of the three; the rest of the file is not
    read (nor checked). None when the file does not state all three plainly (not a mapping,
    a tag, an alias, a value of another type, a syntax error on the way): only loading the
    file can then say what is wrong with it. Nothing is constructed from the YAML."""
    loader = (_FastComposer or _Composer)(text)
    found: dict[str, str] = {}
    try:
        opening = (yaml.StreamStartEvent, yaml.DocumentStartEvent, yaml.MappingStartEvent)
        if not all(isinstance(loader.get_event(), kind) for kind in opening):
            return None
        while len(found) < len(_HEAD):
            key, value = loader.get_event(), loader.get_event()
            if not isinstance(key, yaml.ScalarEvent) or key.tag is not None:
                return None  # the end of the mapping, or a key that is no plain text
            if isinstance(value, yaml.CollectionStartEvent):
                _skip_collection(loader)
            if key.value not in _HEAD:
                continue
            if (key.value in found or not isinstance(value, yaml.ScalarEvent)
                    or value.tag not in (None, "!") or _tag(loader, value) != _HEAD[key.value]):
                return None
            found[key.value] = value.value
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    finally:
        loader.dispose()
    order = found["order"]
    if not re.fullmatch(r"[-+]?[0-9]{1,9}", order):
        return None  # 0x10, 1_000 and the like: the loader says what it makes of them
    return found["id"], found["title"], int(order)


def _tag(loader: Any, scalar: yaml.ScalarEvent) -> str:
    """The type YAML gives a scalar that has no tag of its own: str, int, bool, null..."""
    return str(loader.resolve(yaml.ScalarNode, scalar.value, scalar.implicit))


def _skip_collection(loader: Any) -> None:
    """Read past the collection whose start event was just read."""
    depth = 1
    while depth:
        event = loader.get_event()
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.StreamEndEvent):
            raise ValueError("the stream ended inside a collection")


def load_lesson_file(path: Path, rules: ExerciseRules, *, recheck: bool = True
                     ) -> tuple[Lesson | None, list[Problem]]:
    """Read, parse and validate one lesson file, its exercises by `rules`. With `recheck`
    false, a text that passed these very checks before (the cache keeps its data under the
    state of their code) is only built into the model again, its structure checked: the
    checks beyond that, which import checking's modules, gave their answer already."""
    text, problems = read_lesson_text(path)
    if text is None:
        return None, problems
    shown = display_path(path)
    checker = cache.checked_by(rules.state)
    cached = cache.get(text, checker)
    if cached is not None:
        lesson = build(Lesson, cached)[0] if not recheck else None
        if lesson is None:
            lesson, _ = validate(Parsed(cached, {}, {}), shown, rules)
        if lesson is not None:
            return lesson, []
    parsed, problems = parse_yaml(text, shown)
    if parsed is None:
        return None, problems
    lesson, more = validate(parsed, shown, rules)
    # a value already reported as unparseable needs no second message about its type
    seen = {(p.line, p.col) for p in problems}
    problems = sorted(problems + [p for p in more if (p.line, p.col) not in seen],
                      key=lambda p: (p.line, p.col))
    if lesson is not None and not problems:
        cache.put(text, parsed.data, checker)
    return (lesson if not problems else None), problems


def load_lesson(path: Path, rules: ExerciseRules) -> Lesson:
    """One lesson, or LessonProblems listing everything wrong with it."""
    lesson, problems = load_lesson_file(path, rules)
    if problems or lesson is None:
        raise LessonProblems(problems)
    return lesson
