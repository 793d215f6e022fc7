"""Translations of lesson text, kept in `<lessons>/<language>/<lesson file>` beside the lesson.

Each translated text carries the fingerprint of the English it was made from, so a text whose
English changed afterwards is noticed (stale) and shown in English instead. `localize` is pure:
lesson and translation in, translated lesson and a report of what fell back to English out.
`python -m gradtutor.lessons.translate` holds the author's tools (docs/translating.md).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from gradtutor.errors import Problem
from gradtutor.i18n import Untranslated
from gradtutor.lessons import cache
from gradtutor.lessons.load import (
    Parsed,
    display_path,
    load_lesson_file,
    parse_yaml,
    read_lesson_text,
)
from gradtutor.lessons.model import LETTERS, Lesson
from gradtutor.lessons.schema import key_of

SOURCE_LANGUAGE = "en"
FINGERPRINT_CHARS = 12

Loc = tuple[str | int, ...]
At = tuple[int, int]  # 1-based (line, col) in the translation file; (0, 0) when not known
T = TypeVar("T")

# --- which texts are translated ---------------------------------------------------------------

# Which fields of each model record hold prose, by class name (names, not classes, so that
# a record type added to the model later needs no import here; until it is listed, its
# texts simply stay English, and tests/test_translate.py names the unlisted fields).
PROSE: dict[str, tuple[str, ...]] = {
    "Lesson": ("title", "summary"),
    "Slide": ("title", "body", "notes"),
    "Quiz": ("title", "intro"),
    "Question": ("prompt",),
    "Choice": ("text", "why"),
    "Exercise": ("title", "prompt", "starter", "why"),
    "Mutant": ("mistake",),
    "Predict": ("title", "prompt"),
    "Parsons": ("title", "prompt"),
    "ParsonsLine": ("why",),
    "Demo": ("title", "body"),
    "Chart": ("title", "x_label", "y_label"),
    "DeclaredCheck": ("pass_", "help", "unjudged"),
    "Rule": ("say", "subject", "help"),
    "Column": ("title",),
}


def _by_id(_: int, item: Any) -> str:
    return str(item.id)


def _by_letter(index: int, _: Any) -> str:
    return LETTERS[index]


def _by_number(index: int, _: Any) -> str:
    return str(index + 1)


# Lists whose items hold prose, and how an item is named in a field path: questions, mutants
# and parsons lines by id, choices by letter, hints by number (1, 2, ...).
ITEMS: dict[str, dict[str, Callable[[int, Any], str]]] = {
    "Quiz": {"questions": _by_id},
    "Question": {"choices": _by_letter},
    "Exercise": {"hints": _by_number, "mutants": _by_id, "checks": _by_id},
    "DeclaredCheck": {"fail": _by_number, "skip": _by_number, "evidence": _by_number},
    "Predict": {"choices": _by_letter},
    "Parsons": {"lines": _by_id},
}
# Code whose comments are translated: the translation must be the same code, token for token,
# with only its comments changed (`same_code`); otherwise the English is shown.
COMMENTED_CODE: dict[str, tuple[str, ...]] = {"Exercise": ("starter",)}
# A single record inside another that holds prose.
NESTED: dict[str, tuple[str, ...]] = {"Demo": ("chart",)}
# Kept exactly as written in every language: code, identifiers, answer keys, settings.
KEPT: dict[str, tuple[str, ...]] = {
    "Lesson": ("id", "order", "steps", "minutes"),
    "Slide": ("kind", "id", "code", "optional"),
    "Quiz": ("kind", "id", "pass_mark"),
    "Question": ("id", "answer", "code"),
    "Exercise": ("kind", "id", "checker", "function", "solution", "timeout", "optional",
                 "inputs", "catches", "returns"),
    "DeclaredCheck": ("id", "expect", "after", "table"),
    "Rule": ("when", "explain", "value"),
    "Column": ("shows",),
    "Mutant": ("id", "replace", "fails"),
    "Replacement": ("find", "with_"),
    "Predict": ("kind", "id", "code", "show", "answer", "optional"),
    "Parsons": ("kind", "id", "solution", "run", "optional"),
    "ParsonsLine": ("id", "code", "after"),
    "ParsonsRun": ("setup", "record", "series", "repeat"),
    "Demo": ("kind", "id", "code", "optional"),
    "Chart": ("series",),
}


class FieldKey(NamedTuple):
    """One translatable text: its step id (None for the lesson's own title and summary) and
    its field path in that step, such as `body`, `hints.2` or `questions.q3.choices.b.why`."""

    step: str | None
    path: str

    def __str__(self) -> str:
        return f"lesson {self.path}" if self.step is None else f"step {self.step} {self.path}"


def texts_of(record: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(field path, English text) of every translatable text in a step, or in a lesson's
    own fields (its steps are not included), in the order the fields are declared."""
    kind = type(record).__name__
    items = ITEMS.get(kind, {})
    for field in dataclasses.fields(record):
        name, value = field.name, getattr(record, field.name)
        if name in PROSE.get(kind, ()) and isinstance(value, str):
            yield prefix + key_of(field), value
        elif name in items:
            for index, item in enumerate(value):
                path = f"{prefix}{name}.{items[name](index, item)}"
                if isinstance(item, str):
                    yield path, item
                else:
                    yield from texts_of(item, path + ".")
        elif name in NESTED.get(kind, ()) and value is not None:
            yield from texts_of(value, f"{prefix}{name}.")


def lesson_texts(lesson: Lesson) -> Iterator[tuple[FieldKey, str]]:
    """Every translatable text of a lesson: its own, then each step's, in lesson order."""
    for path, text in texts_of(lesson):
        yield FieldKey(None, path), text
    for step in lesson.steps:
        for path, text in texts_of(step):
            yield FieldKey(step.id, path), text


def _rebuild(record: T, prefix: str, pick: Callable[[str, str], str]) -> T:
    """`record` with each translatable text replaced by `pick(path, english)`, visited in the
    same order as `texts_of`."""
    kind = type(record).__name__
    items = ITEMS.get(kind, {})
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        name, value = field.name, getattr(record, field.name)
        new: Any = value
        if name in PROSE.get(kind, ()) and isinstance(value, str):
            new = pick(prefix + key_of(field), value)
        elif name in items:
            rebuilt = tuple(
                pick(path, item) if isinstance(item, str) else _rebuild(item, path + ".", pick)
                for index, item in enumerate(value)
                for path in [f"{prefix}{name}.{items[name](index, item)}"])
            if any(n is not o for n, o in zip(rebuilt, value, strict=True)):
                new = rebuilt
        elif name in NESTED.get(kind, ()) and value is not None:
            new = _rebuild(value, f"{prefix}{name}.", pick)
        if new is not value:
            changes[name] = new
    return dataclasses.replace(record, **changes) if changes else record  # type: ignore[type-var]


# --- fingerprints -----------------------------------------------------------------------------

_FENCE = re.compile(r" {0,3}(```|~~~)")
_BLANK_LINE = re.compile(r"\n\s*\n")


def normalize(text: str) -> str:
    """The English text as its fingerprint sees it: NFC, and outside code fences each paragraph's
    whitespace collapsed, so re-wrapping a paragraph or changing YAML style keeps a
    translation fresh while any change of words, paragraphs or code makes it stale."""
    text = unicodedata.normalize("NFC", text).strip()
    if "```" not in text and "~~~" not in text:  # the usual case, about 5x faster
        return "\n".join(" ".join(block.split()) for block in _BLANK_LINE.split(text))
    blocks: list[str] = []
    words: list[str] = []
    fence = ""
    for line in text.splitlines():
        if fence:
            blocks.append(line.rstrip())
            if line.strip().startswith(fence):
                fence = ""
            continue
        opening = _FENCE.match(line)
        if opening or not line.strip():
            if words:
                blocks.append(" ".join(words))
                words = []
            if opening:
                fence = opening.group(1)
                blocks.append(line.strip())
            continue
        words += line.split()
    if words:
        blocks.append(" ".join(words))
    return "\n".join(blocks)


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of the normalized English text."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:FINGERPRINT_CHARS]


# --- the translation file ---------------------------------------------------------------------

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
_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})*")
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


def in_language(lesson: Lesson, lesson_path: Path,
                language: str) -> tuple[Lesson, list[Problem]]:
    """The lesson as the tutor shows it in `language`, and the problems of a translation file
    that could not be used; then every text stays English (`Untranslated`)."""
    translation, problems = load_translation(lesson_path, language)
    localized, _ = localize(lesson, translation, language)
    return localized, problems


# --- localize ---------------------------------------------------------------------------------

class Stale(NamedTuple):
    """A translation made from English that has changed since."""

    key: FieldKey
    at: At
    was: str  # the fingerprint the file holds
    now: str  # the fingerprint of the English today


class Unused(NamedTuple):
    """An entry, or a whole step, of the translation file that the lesson has no place for."""

    where: str  # `step grad-atribute` or `step grad-attribute bdy`
    at: At
    hint: str


class Reshaped(NamedTuple):
    """A fresh translation whose markdown does not match its English: different code fences,
    code spans, list items or paragraphs. It is still shown; `validate` warns."""

    key: FieldKey
    at: At
    differences: tuple[str, ...]


class Report(NamedTuple):
    """What `localize` did: the texts still in English (`english`; the renderer reads the
    same from the lesson itself, where each is an `i18n.Untranslated`); for `validate`, each
    missing, stale or unused entry, field by field."""

    lesson_id: str
    language: str
    path: str | None  # the translation file, if there is one
    total: int  # translatable texts in the lesson
    translated: int  # of them, shown translated
    missing: tuple[FieldKey, ...] = ()
    stale: tuple[Stale, ...] = ()
    unused: tuple[Unused, ...] = ()
    reshaped: tuple[Reshaped, ...] = ()
    mismatch: str | None = None  # why the whole file could not be used
    english: frozenset[FieldKey] = frozenset()
    recoded: tuple[FieldKey, ...] = ()  # translated code that is not the English code

    def shows_english(self, step: str | None, path: str) -> bool:
        """Whether this text fell back to English (for tools; the renderer reads it from the
        lesson's own text, an `i18n.Untranslated`)."""
        return FieldKey(step, path) in self.english

    @property
    def complete(self) -> bool:
        return self.translated == self.total and not self.unused and self.mismatch is None


def localize(lesson: Lesson, translation: Translation | None,
             language: str) -> tuple[Lesson, Report]:
    """The lesson with every text that has a fresh translation into `language` replaced by
    it, and the report of the rest, which stays English as `Untranslated` text, so renderers
    can mark it. Code and identifiers never change."""
    if language == SOURCE_LANGUAGE:
        total = sum(1 for _ in lesson_texts(lesson))
        return lesson, Report(lesson.id, language, None, total, total, (), (), (), (), None,
                              frozenset())
    mismatch = None
    if translation is not None and translation.language != language:
        mismatch = f"it translates into {translation.language}, not {language}"
    elif translation is not None and translation.lesson_id != lesson.id:
        mismatch = f"it translates lesson '{translation.lesson_id}', not '{lesson.id}'"
    path = translation.path if translation is not None else None
    entries = translation.entries if translation is not None and mismatch is None else {}

    keys: dict[FieldKey, str] = {}
    missing: list[FieldKey] = []
    stale: list[Stale] = []
    recoded: list[FieldKey] = []
    kinds = {step.id: type(step).__name__ for step in lesson.steps}

    def is_commented_code(step: str | None, field_path: str) -> bool:
        return step is not None and field_path in COMMENTED_CODE.get(kinds[step], ())

    def pick(step: str | None) -> Callable[[str, str], str]:
        def choose(field_path: str, english: str) -> str:
            key = FieldKey(step, field_path)
            keys[key] = english
            entry = entries.get(key)
            if entry is None or entry.text is None:
                missing.append(key)
                return Untranslated(english)
            now = fingerprint(english)
            if entry.source != now:
                stale.append(Stale(key, entry.at, entry.source, now))
                return Untranslated(english)
            if is_commented_code(step, field_path) and not same_code(english, entry.text):
                recoded.append(key)
                return Untranslated(english)
            return entry.text
        return choose

    localized = _rebuild(lesson, "", pick(None))
    steps = tuple(_rebuild(step, "", pick(step.id)) for step in lesson.steps)
    if any(new is not old for new, old in zip(steps, lesson.steps, strict=True)):
        localized = dataclasses.replace(localized, steps=steps)
    unused = _unused(lesson, keys, translation) if translation and mismatch is None else []
    english = frozenset(missing) | {s.key for s in stale} | set(recoded)
    return localized, Report(lesson.id, language, path, len(keys), len(keys) - len(english),
                             tuple(missing), tuple(stale), tuple(unused), (), mismatch, english,
                             tuple(recoded))


def check_translations(found: Sequence[tuple[Lesson, Path]], only: str | None = None,
                       whole_folder: bool = True
                       ) -> tuple[list[Report], list[str], list[Problem]]:
    """Every translation beside each lesson file (into `only`, or every language there is), as
    `validate` reports them: a report per lesson and language (a missing file: every text
    missing), a line per translation file with no lesson to translate (when a whole folder is
    checked), and the problems of the files that cannot be used."""
    reports: list[Report] = []
    problems: list[Problem] = []
    folders = {path.parent for _, path in found}
    for lesson, path in found:
        for language in [only] if only else languages_in(path.parent):
            translation, broken = load_translation(path, language, use_cache=False)
            problems += broken
            if broken:
                continue
            report = check_translation(lesson, translation, language)
            if translation is None:
                report = report._replace(path=f"{display_path(translation_file(path, language))} "
                                              f"(no such file)")
            reports.append(report)
    unmatched = []
    if whole_folder:
        names = {path.name for _, path in found}
        for folder in sorted(folders):
            for language in [only] if only else languages_in(folder):
                for path in sorted((folder / language).glob("*.y*ml")):
                    if path.name not in names:
                        unmatched.append(f"{display_path(path)}: unused: there is no lesson "
                                         f"{display_path(folder / path.name)} to translate")
    return reports, unmatched, problems


def translation_target(target: Path) -> tuple[Path, str] | None:
    """A path that names translations rather than lessons, as (the lessons it translates,
    the language): `lessons/zh-CN/grad.yaml` -> (`lessons/grad.yaml`, zh-CN), and
    `lessons/zh-CN` -> (`lessons`, zh-CN) when every file in it has its lesson beside the
    folder. None for anything else."""
    folder = target.parent if target.is_file() else target
    language = folder.name
    if not _LANGUAGE.fullmatch(language) or language == SOURCE_LANGUAGE:
        return None
    lessons = folder.parent
    if target.is_file():
        return (lessons / target.name, language) if (lessons / target.name).is_file() else None
    files = [p for p in target.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()]
    if files and all((lessons / p.name).is_file() for p in files):
        return lessons, language
    return None


def check_translation(lesson: Lesson, translation: Translation | None,
                      language: str) -> Report:
    """`localize`'s report plus the markdown check of every translation it used: what
    `validate` prints. Kept out of `localize`, which runs on every start."""
    _, report = localize(lesson, translation, language)
    if translation is None or report.mismatch is not None:
        return report
    reshaped = []
    kinds = {step.id: type(step).__name__ for step in lesson.steps}
    for key, english in lesson_texts(lesson):
        entry = translation.entries.get(key)
        if entry is None or entry.text is None or key in report.english:
            continue
        if key.path in COMMENTED_CODE.get(kinds.get(key.step or "", ""), ()):
            continue  # code, not markdown: `same_code` has checked it
        differences = shape_differences(english, entry.text)
        if differences:
            reshaped.append(Reshaped(key, entry.at, differences))
    return report._replace(reshaped=tuple(reshaped))


def _unused(lesson: Lesson, keys: Mapping[FieldKey, str],
            translation: Translation) -> list[Unused]:
    """Entries for steps or fields the lesson does not have, with the likely intended one."""
    step_ids = [step.id for step in lesson.steps]
    paths: dict[str | None, list[str]] = {}
    for key in keys:
        paths.setdefault(key.step, []).append(key.path)
    out: list[Unused] = []
    for step_id, at in translation.step_at.items():
        if step_id not in paths:
            close = difflib.get_close_matches(step_id, step_ids, n=1)
            hint = (f"did you mean '{close[0]}'?" if close
                    else "the step was removed or renamed; move its texts or delete them")
            out.append(Unused(f"step {step_id}", at,
                              f"lesson '{lesson.id}' has no step '{step_id}'; {hint}"))
    kinds = {step.id: type(step).__name__ for step in lesson.steps}
    for key, entry in translation.entries.items():
        if key.step in paths and key not in keys:
            owner = "the lesson" if key.step is None else f"step {key.step}"
            kept = KEPT.get(kinds.get(key.step or "", "Lesson"), ())
            close = difflib.get_close_matches(key.path, paths[key.step], n=1)
            if key.path.rsplit(".", 1)[-1] in kept:
                hint = "it is code or an identifier, which stays as written; delete the entry"
            elif close:
                hint = f"did you mean '{close[0]}'?"
            else:
                hint = "delete the entry"
            out.append(Unused(str(key), entry.key_at, f"{owner} has no text '{key.path}'; "
                                                      f"{hint}"))
    return sorted(out, key=lambda u: (u.at, u.where))


def same_code(english: str, translated: str) -> bool:
    """Whether two pieces of Python are the same code, token for token and indent for indent,
    whatever their comments say. Code that does not tokenize is the same only if identical."""
    import io
    import tokenize

    def tokens(code: str) -> list[tuple[int, str]]:
        skip = (tokenize.COMMENT, tokenize.NL)
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(code).readline)
                if t.type not in skip]

    try:
        return tokens(english) == tokens(translated)
    except (tokenize.TokenError, SyntaxError):
        return english == translated


# --- markdown shape ---------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d+[.)])\s")


def markdown_shape(text: str) -> dict[str, tuple[str, ...]]:
    """What a translation must keep from its English: fenced code (verbatim), inline code
    spans, list markers in order, and the number of paragraphs and list items. Deliberately
    simple; lesson text uses only these markdown features."""
    fences: list[str] = []
    blocks = 0
    markers: list[str] = []
    prose: list[str] = []
    fence, current, blank = "", [], True
    for line in text.strip().splitlines():
        if fence:
            current.append(line)
            if line.strip().startswith(fence):
                fences.append("\n".join(current))
                fence, current = "", []
            continue
        opening = _FENCE.match(line)
        if opening:
            fence, current, blank = opening.group(1), [line.strip()], True
            continue
        if not line.strip():
            blank = True
            continue
        item = _LIST_ITEM.match(line)
        if item:
            markers.append("1." if item.group(1)[0].isdigit() else item.group(1))
        if item or blank:
            blocks += 1
        blank = False
        prose.append(line)
    joined = "\n".join(prose)
    spans = sorted(" ".join(m.group(2).split()) for m in _CODE_SPAN.finditer(joined))
    return {"code fences": tuple(fences), "code spans": tuple(spans),
            "list items": tuple(markers), "paragraphs and items": (str(blocks),)}


def shape_differences(english: str, translated: str) -> tuple[str, ...]:
    """How the translation's markdown differs from the English, in words; () if it does not."""
    want, got = markdown_shape(english), markdown_shape(translated)
    out: list[str] = []
    for what in want:
        if want[what] == got[what]:
            continue
        if what == "code spans":
            lost = sorted(set(want[what]) - set(got[what]))
            extra = sorted(set(got[what]) - set(want[what]))
            parts = [f"`{s}` missing" for s in lost] + [f"`{s}` added" for s in extra]
            out.append("code spans differ: " + (", ".join(parts) or "a span repeats a "
                                                "different number of times"))
        elif what == "paragraphs and items":
            out.append(f"{got[what][0]} paragraphs and list items, the English has "
                       f"{want[what][0]}")
        else:
            out.append(f"{what} differ from the English")
    return tuple(out)


# --- the report in words ----------------------------------------------------------------------

def _located(path: str, at: At, message: str) -> str:
    return f"{path}:{at[0]}:{at[1]}: {message}" if at != (0, 0) else f"{path}: {message}"


def summary_line(report: Report) -> str:
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


def report_lines(report: Report) -> list[str]:
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


# --- writing translation files ----------------------------------------------------------------

def _round_trips(snippet: str, key: str, value: str) -> bool:
    import yaml  # only the author's tools write files

    try:
        loaded = yaml.safe_load(snippet)
    except (yaml.YAMLError, ValueError, RecursionError):  # ValueError: a date like 2024-13-01
        return False
    return isinstance(loaded, dict) and loaded == {key: value}


def _quoted(value: str) -> str:
    """`value` as a YAML double-quoted scalar; anything not plainly printable is escaped."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char.isprintable() and char not in "\x85\u2028\u2029\ufeff":
            out.append(char)
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def _scalar(value: str) -> str:
    """`value` as a one-line YAML scalar: plain when that reads back the same, else quoted."""
    if ("\n" not in value and value == value.strip() and value.isprintable()
            and _round_trips(f"k: {value}", "k", value)):
        return value
    return _quoted(value)


def _value(key: str, value: str, indent: int) -> list[str]:
    """`key: value` lines at `indent`, as a `|` block for text of several lines."""
    pad = " " * indent
    if "\n" in value.strip():
        body = value if value.endswith("\n") else value + "\n"
        chomp = "" if value.endswith("\n") and not value.endswith("\n\n") else (
            "+" if value.endswith("\n") else "-")
        indicator = "2" if value[:1] == " " else ""
        lines = [f"{pad}{key}: |{indicator}{chomp}"]
        lines += [f"{pad}  {line}" if line else "" for line in body.splitlines()]
        if _round_trips("\n".join(line[indent:] for line in lines) + "\n", key, value):
            return lines
    return [f"{pad}{key}: {_scalar(value)}"]


def _english_comment(english: str, indent: int) -> list[str]:
    pad = " " * indent
    lines = ["".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in line)
             for line in english.strip().splitlines()] or [""]
    out = [f"{pad}# en: {lines[0]}".rstrip()]
    out += [f"{pad}#     {line}".rstrip() for line in lines[1:]]
    return out


def _entry_lines(field_path: str, english: str | None, entry: Entry | None,
                 indent: int) -> list[str]:
    """One entry. A translation is kept with the fingerprint it was made from; an untranslated
    text gets the current fingerprint; `english` None means the lesson has no such text."""
    pad = " " * indent
    lines = [f"{pad}{_scalar(field_path)}:"]
    now = fingerprint(english) if english is not None else None
    if english is None:
        lines.append(f"{pad}  # unused: the lesson has no such text; move it or delete it")
    else:
        lines += _english_comment(english, indent + 2)
    translated = entry is not None and entry.text is not None
    if translated and entry is not None and now is not None and entry.source != now:
        lines.append(f"{pad}  # stale: the English changed; revise the text, then set "
                     f"`source: {now}`")
    source = entry.source if entry is not None and (translated or now is None) else now
    lines.append(f"{pad}  source: {_scalar(source or '')}")  # quoted if it is all digits
    if entry is not None and entry.text is not None:
        lines += _value("text", entry.text, indent + 2)
    else:
        lines.append(f"{pad}  text:")
    return lines


def skeleton(lesson: Lesson, language: str, existing: Translation | None = None,
             source_name: str = "") -> str:
    """The text of a translation file for `lesson`: every translatable text in lesson order,
    its English as a comment, its current fingerprint and an empty `text:`. With `existing`,
    its translations are kept (a stale one keeps its old fingerprint and is marked), and
    entries the lesson has no place for are kept at the end of their step, marked unused."""
    entries = dict(existing.entries) if existing is not None else {}
    named = f" of {source_name}" if source_name else ""
    out = [f"# The {language} translation{named} (lesson '{lesson.id}').",
           "# Each entry: `source` is the fingerprint of the English the text was translated",
           "# from, `text` the translation (empty: the English is shown). See "
           "docs/translating.md.",
           f"translates: {lesson.id}",
           f"language: {language}"]
    by_step: dict[str | None, list[tuple[str, str]]] = {}
    for key, english in lesson_texts(lesson):
        by_step.setdefault(key.step, []).append((key.path, english))
    sections: list[str | None] = [None] + [step.id for step in lesson.steps]
    if existing is not None:
        sections += [s for s in existing.step_at if s not in sections]
    for step in sections:
        texts = by_step.get(step, [])
        extra = [key.path for key in entries if key.step == step
                 and key.path not in {path for path, _ in texts}]
        if not texts and not extra:
            continue
        if step is None:
            out += ["", "lesson:"]
            indent = 2
        else:
            if "steps:" not in out:
                out += ["", "steps:"]
            out += [f"  {_scalar(step)}:"] if out[-1] == "steps:" else ["", f"  {_scalar(step)}:"]
            if not texts:
                out.append("    # unused: the lesson has no such step; move its texts or "
                           "delete it")
            indent = 4
        for field_path, english in texts:
            out += _entry_lines(field_path, english, entries.get(FieldKey(step, field_path)),
                                indent)
        for field_path in extra:
            out += _entry_lines(field_path, None, entries[FieldKey(step, field_path)], indent)
    return "\n".join(out) + "\n"


# --- the languages a folder has -------------------------------------------------------------

def languages_in(folder: Path) -> list[str]:
    """The languages a lesson folder has translations for: its subfolders named by a tag."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.is_dir() and _LANGUAGE.fullmatch(p.name) and p.name != SOURCE_LANGUAGE)


# --- the author's tools -----------------------------------------------------------------------

def _lesson_or_exit(path: Path) -> Lesson:
    lesson, problems = load_lesson_file(path)
    if lesson is None:
        for problem in problems:
            print(problem, file=sys.stderr)
        raise SystemExit(2)
    return lesson


def _translation_or_exit(path: Path) -> Translation | None:
    if not path.is_file():
        return None
    translation, problems = load_translation_file(path, use_cache=False)
    if translation is None:
        for problem in problems:
            print(problem, file=sys.stderr)
        raise SystemExit(2)
    return translation


def main(argv: list[str] | None = None) -> int:
    """`python -m gradtutor.lessons.translate skeleton|update|report LESSON LANGUAGE`."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gradtutor.lessons.translate",
        description="Tools for translating lessons (see docs/translating.md).")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in [
            ("skeleton", "print a new translation file with every text still to translate"),
            ("update", "rewrite the translation file for the lesson as it is now: new texts "
                       "added, stale ones marked, translations kept"),
            ("report", "list what is missing, stale or unused; exit 1 if anything is")]:
        command = commands.add_parser(name, help=text, description=text)
        command.add_argument("lesson", type=Path, help="the lesson file, e.g. lessons/grad.yaml")
        command.add_argument("language", help="a language tag, e.g. zh-CN")
        command.add_argument("--file", type=Path, default=None,
                             help="the translation file (default: LESSON_DIR/LANGUAGE/NAME)")
    args = parser.parse_args(argv)
    language = args.language
    if not _LANGUAGE.fullmatch(language) or language == SOURCE_LANGUAGE:
        parser.error(f"{language!r} is not a language to translate into; use a tag like zh-CN")
    lesson = _lesson_or_exit(args.lesson)
    target = args.file or translation_file(args.lesson, language)
    name = display_path(args.lesson)
    if args.command == "skeleton":
        sys.stdout.write(skeleton(lesson, language, None, name))
        return 0
    existing = _translation_or_exit(target)
    if args.command == "update":
        from gradtutor.store import write_atomic

        write_atomic(target, skeleton(lesson, language, existing, name))
        print(f"wrote {display_path(target)}")
        existing = _translation_or_exit(target)
    report = check_translation(lesson, existing, language)
    lines = report_lines(report)
    print("\n".join(lines[:1] if args.command == "update" else lines))
    return 0 if args.command == "update" or report.complete else 1


if __name__ == "__main__":
    raise SystemExit(main())
