"""Translation files: where the translation of a lesson file lives, reading and validating one
into a `Translation` (every problem located, `file:line:col`), and the languages a lesson folder
has translations for. Parsing is pure; the loaders read files, and cache their plain data as
lessons are cached.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gradtutor.errors import Problem
from gradtutor.lessons import cache
from gradtutor.lessons.load import Parsed, display_path, parse_yaml, read_lesson_text
from gradtutor.lessons.translate.fields import FieldKey
from gradtutor.lessons.translate.fingerprint import FINGERPRINT_CHARS

SOURCE_LANGUAGE = "en"
_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})*")

Loc = tuple[str | int, ...]
At = tuple[int, int]  # 1-based (line, col) in the translation file; (0, 0) when not known


def is_target_language(tag: str) -> bool:
    """Whether `tag` is a language tag a lesson can be translated into (not English)."""
    return bool(_LANGUAGE.fullmatch(tag)) and tag != SOURCE_LANGUAGE


class Entry(NamedTuple):
    """One translated text: the fingerprint of its English source, and the translation
    (None while nobody has translated it yet)."""

    source: str
    text: str | None
    at: At = (0, 0)  # where its `source:` value is, for messages
    key_at: At = (0, 0)  # where its field path is


class Translation(NamedTuple):
    """A translation file, read: which lesson and language, and its entries by field."""

    path: str
    lesson_id: str
    language: str
    entries: Mapping[FieldKey, Entry]
    step_at: Mapping[str, At]


TOP_KEYS = ("translates", "language", "lesson", "steps")
ENTRY_KEYS = ("source", "text")
_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_HEX = re.compile(f"[0-9a-f]{{{FINGERPRINT_CHARS}}}")
_NAMES = {str: "text", int: "a number", float: "a number", bool: "true/false",
          list: "a list", dict: "a mapping", type(None): "empty"}


def _describe(value: Any) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def _unknown_key(key: str, allowed: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
    return f"unknown key '{key}'; {hint}"


def read_translation(parsed: Parsed, path: str) -> tuple[Translation | None, list[Problem]]:
    """Validate a parsed translation file into a Translation; all problems, sorted."""
    data = parsed.data
    found: list[tuple[str, Loc, bool]] = []  # message, where, at the key rather than the value

    def problem(message: str, loc: Loc, key: bool = False) -> None:
        found.append((message, loc, key))

    def located() -> list[Problem]:
        out = {Problem(path, *parsed.position(loc, key=key), message)
               for message, loc, key in found}
        return sorted(out, key=lambda p: (p.line, p.col, p.message))

    if not isinstance(data, dict):
        problem(f"a translation file must be a mapping of keys ({', '.join(TOP_KEYS)}), "
                f"not {_describe(data)}", ())
        return None, located()
    for key in data:
        if key not in TOP_KEYS:
            problem(_unknown_key(key, TOP_KEYS), (key,), True)
    lesson_id = data.get("translates")
    if "translates" not in data:
        problem("missing required key 'translates'; add `translates:` with the id of the "
                "lesson this file translates", ())
    elif not isinstance(lesson_id, str) or not _ID.fullmatch(lesson_id):
        shown = repr(lesson_id) if isinstance(lesson_id, str) else _describe(lesson_id)
        problem(f"'translates' must be a lesson id such as `grad`, not {shown}",
                ("translates",))
    language = data.get("language")
    if "language" not in data:
        problem("missing required key 'language'; add a language tag such as "
                "`language: zh-CN`", ())
    elif not isinstance(language, str) or not _LANGUAGE.fullmatch(language):
        shown = repr(language) if isinstance(language, str) else _describe(language)
        problem(f"'language' must be a language tag such as `zh-CN`, not {shown}",
                ("language",))
    elif language == SOURCE_LANGUAGE:
        problem("'language' is en, the language lessons are written in; name the language "
                "this file translates into", ("language",))

    entries: dict[FieldKey, Entry] = {}
    step_at: dict[str, At] = {}

    def at(loc: Loc, key: bool = False) -> At:
        """Where `loc` is; (0, 0) for data from the cache, which has no positions."""
        return parsed.position(loc, key=key) if parsed.value_at else (0, 0)

    def read_entries(section: Any, loc: Loc, step: str | None) -> None:
        if section is None:
            problem(f"'{loc[-1]}' is empty; add entries or remove it", loc, True)
            return
        if not isinstance(section, dict):
            problem(f"'{loc[-1]}' must be a mapping of field paths (title, body, hints.1, "
                    f"...) to entries, not {_describe(section)}", loc)
            return
        for field_path, value in section.items():
            entry = read_entry(value, loc + (field_path,))
            if entry is not None:
                entries[FieldKey(step, field_path)] = entry

    def read_entry(value: Any, loc: Loc) -> Entry | None:
        if not isinstance(value, dict):
            problem(f"'{loc[-1]}' must be a mapping with `source:` (the English fingerprint) "
                    f"and `text:`, not {_describe(value)}; the `skeleton` and `update` tools "
                    f"write entries for you", loc)
            return None
        typos: set[str] = set()  # `txt:` is reported as "did you mean"; "missing" would repeat it
        for key in value:
            if key not in ENTRY_KEYS:
                problem(_unknown_key(key, ENTRY_KEYS), loc + (key,), True)
                typos.update(difflib.get_close_matches(key, ENTRY_KEYS, n=1))
        bad = any(key not in ENTRY_KEYS for key in value)
        source, text = value.get("source"), value.get("text")
        if "source" not in value:
            if "source" not in typos:
                problem(f"missing required key 'source' in '{loc[-1]}'; add `source:` with the "
                        f"fingerprint of the English text", loc)
            bad = True
        elif not isinstance(source, str) or not _HEX.fullmatch(source):
            shown = repr(source) if isinstance(source, str) else _describe(source)
            hint = ("; quote a fingerprint of digits only, as in `source: \"012345678901\"`"
                    if isinstance(source, int) else "")
            problem(f"'source' must be the {FINGERPRINT_CHARS}-digit hex fingerprint of the "
                    f"English text, such as `3f2a9c0d1b7e`, not {shown}{hint}",
                    loc + ("source",))
            bad = True
        if "text" not in value:
            if "text" not in typos:
                problem(f"missing required key 'text' in '{loc[-1]}'; add `text:` (left "
                        f"empty, the English is shown)", loc)
            bad = True
        elif text is not None and not isinstance(text, str):
            hint = " (quote it if it is text)" if isinstance(text, (bool, int, float)) else ""
            problem(f"'text' must be text, not {_describe(text)}{hint}", loc + ("text",))
            bad = True
        if bad or not isinstance(source, str):
            return None
        if isinstance(text, str) and not text.strip():
            text = None
        return Entry(source, text, at(loc + ("source",)), at(loc, key=True))

    if "lesson" in data:
        read_entries(data["lesson"], ("lesson",), None)
    steps = data.get("steps")
    if "steps" in data and steps is None:
        problem("'steps' is empty; add a step id with its entries, or remove it",
                ("steps",), True)
    elif "steps" in data and not isinstance(steps, dict):
        problem(f"'steps' must be a mapping of step ids to their entries, not "
                f"{_describe(steps)}", ("steps",))
    elif isinstance(steps, dict):
        for step_id, section in steps.items():
            step_at[step_id] = at(("steps", step_id), key=True)
            read_entries(section, ("steps", step_id), step_id)

    problems = located()
    if problems:
        return None, problems
    assert isinstance(lesson_id, str) and isinstance(language, str)
    return Translation(path, lesson_id, language, entries, step_at), []


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _parse(text: str, path: str) -> tuple[Parsed | None, Translation | None, list[Problem]]:
    if _only_comments(text):
        return None, None, [Problem(path, 1, 1, "the translation file is empty; start it with "
                                                "`translates:`, `language:` and `steps:`")]
    parsed, problems = parse_yaml(text, path)
    if parsed is None:
        return None, None, problems
    translation, more = read_translation(parsed, path)
    # a value already reported as unparseable needs no second message about its type
    seen = {(p.line, p.col) for p in problems}
    problems = sorted(problems + [p for p in more if (p.line, p.col) not in seen],
                      key=lambda p: (p.line, p.col))
    return parsed, (translation if not problems else None), problems


def parse_translation(text: str, path: str) -> tuple[Translation | None, list[Problem]]:
    """A translation from the text of its file, or every problem found, located."""
    _, translation, problems = _parse(text, path)
    return translation, problems


def load_translation_file(path: Path, use_cache: bool = True
                          ) -> tuple[Translation | None, list[Problem]]:
    """Read and validate one translation file. Its plain data is cached like a lesson's, so
    a start with an unchanged file skips YAML parsing; positions are then unknown, so
    `validate`, whose messages need them, passes `use_cache=False`."""
    text, problems = read_lesson_text(path)
    if text is None:
        return None, problems
    shown = display_path(path)
    if use_cache:
        cached = cache.get(text)
        if cached is not None:
            translation, problems = read_translation(Parsed(cached, {}, {}), shown)
            if translation is not None:
                return translation, []
    parsed, translation, problems = _parse(text, shown)
    if translation is not None and parsed is not None and use_cache:
        cache.put(text, parsed.data)
    return translation, problems


def translation_file(lesson_path: Path, language: str) -> Path:
    """Where the translation of a lesson file lives: `<folder>/<language>/<file name>`. A
    subfolder, so that course discovery (the `*.yaml` files of the folder itself) never
    mistakes a translation for a lesson."""
    return lesson_path.parent / language / lesson_path.name


def load_translation(lesson_path: Path, language: str,
                     use_cache: bool = True) -> tuple[Translation | None, list[Problem]]:
    """The translation of a lesson file into `language`: (None, []) when there is none."""
    if language == SOURCE_LANGUAGE:
        return None, []
    path = translation_file(lesson_path, language)
    if not path.is_file():
        return None, []
    return load_translation_file(path, use_cache)


def translation_target(target: Path) -> tuple[Path, str] | None:
    """A path that names translations rather than lessons, as (the lessons it translates,
    the language): `lessons/zh-CN/grad.yaml` -> (`lessons/grad.yaml`, zh-CN), and
    `lessons/zh-CN` -> (`lessons`, zh-CN) when every file in it has its lesson beside the
    folder. None for anything else."""
    folder = target.parent if target.is_file() else target
    language = folder.name
    if not is_target_language(language):
        return None
    lessons = folder.parent
    if target.is_file():
        return (lessons / target.name, language) if (lessons / target.name).is_file() else None
    files = [p for p in target.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()]
    if files and all((lessons / p.name).is_file() for p in files):
        return lessons, language
    return None


def languages_in(folder: Path) -> list[str]:
    """The languages a lesson folder has translations for: its subfolders named by a tag."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.is_dir() and is_target_language(p.name))
