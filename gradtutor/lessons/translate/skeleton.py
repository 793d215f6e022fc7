"""Writing translation files: a new one with every text still to translate, or one brought
up to date with the lesson, its translations kept. Each entry carries its English as a comment
and the fingerprint the tools check. Pure: text out.
"""

from __future__ import annotations

from gradtutor.lessons.model import Lesson
from gradtutor.lessons.translate.fields import FieldKey, lesson_texts
from gradtutor.lessons.translate.files import Entry, Translation
from gradtutor.lessons.translate.fingerprint import fingerprint


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
