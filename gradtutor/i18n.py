"""Text in the learner's language: messages that remember their English template, catalogs
of translations, and the choice of language.

The core never needs to know the language. It builds messages with `msg()`, which are plain
English strings (so JSON, logs and tests read English) that also remember their template and
fields; the shell translates them at the edge with a `Translator`. Pure, except `load_catalog`,
which reads the catalog files shipped in `gradtutor/locale/<language>/*.yaml`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

ENGLISH_CODE = "en"
# The languages gradtutor speaks, by their canonical code, with their own name for themselves.
LANGUAGES: Mapping[str, str] = {"en": "English", "zh-CN": "简体中文"}
_ALIASES: Mapping[str, str] = {
    "en": "en", "english": "en", "c": "en", "posix": "en",
    "zh": "zh-CN", "zh-cn": "zh-CN", "zh-hans": "zh-CN", "zh-sg": "zh-CN", "chinese": "zh-CN",
    "zh-hans-cn": "zh-CN",
}
CATALOG_DIR = Path(__file__).parent / "locale"


class Msg(str):
    """An English message that remembers the template and fields it was made from, so that a
    `Translator` can say it in another language. Everywhere else it is just its English str."""

    template: str
    fields: Mapping[str, Any]

    def __new__(cls, template: str, fields: Mapping[str, Any] | None = None) -> Msg:
        values = dict(fields or {})
        text = template.format(**values) if values else template
        self = super().__new__(cls, text)
        self.template = template
        self.fields = values
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Msg, (self.template, dict(self.fields)))


class Untranslated(str):
    """Lesson text shown in English because its translation is missing or stale. Renderers
    mark it (a dim `[EN]`), so the learner sees where the fallback is."""

    __slots__ = ()


def msg(template: str, /, **fields: Any) -> Msg:
    """A translatable message: `template` in English with `str.format` fields.

    Write the template as a literal, so that the catalog test and `gradtutor validate` can
    find it; fields hold data (numbers, names, learner values), or other messages."""
    return Msg(template, fields)


def placeholders(template: str) -> frozenset[str]:
    """The field names a template uses: `{step}` and `{grad:.3f}` give step and grad."""
    import string

    names = set()
    for _literal, name, _spec, _conversion in string.Formatter().parse(template):
        if name is not None:
            names.add(name.split(".")[0].split("[")[0])
    return frozenset(names)


class Translator:
    """Says messages in one language; whatever its catalog lacks stays in English."""

    __slots__ = ("catalog", "lang")

    def __init__(self, lang: str = ENGLISH_CODE, catalog: Mapping[str, str] | None = None):
        self.lang = lang
        self.catalog: Mapping[str, str] = dict(catalog or {})

    def __repr__(self) -> str:
        return f"Translator({self.lang!r}, {len(self.catalog)} messages)"

    def __call__(self, text: str) -> str:
        if not self.catalog:
            return str(text)
        if isinstance(text, Msg):
            # A template the catalog lacks may be translated already (a declared check's
            # words come from the lesson in the learner's language): its fields still are.
            translated = self.catalog.get(text.template, text.template)
            fields = {k: self(v) if isinstance(v, Msg) else v for k, v in text.fields.items()}
            return translated.format(**fields) if fields else translated
        return self.catalog.get(text, str(text))

    def knows(self, template: str) -> bool:
        return self.lang == ENGLISH_CODE or template in self.catalog

    @property
    def english(self) -> bool:
        return self.lang == ENGLISH_CODE


ENGLISH = Translator()


def language_code(value: str) -> str | None:
    """The canonical code for a language name, tag or locale (`zh`, `zh_CN.UTF-8`, `en_GB`,
    `C.UTF-8`), or None when gradtutor does not speak it."""
    tag = value.strip().split(".")[0].split("@")[0].replace("_", "-").lower()
    if not tag:
        return None
    if tag in _ALIASES:
        return _ALIASES[tag]
    main = tag.split("-")[0]
    if main == "zh":
        # Traditional Chinese (zh-TW, zh-HK, zh-Hant) reads differently; English is fairer.
        return None if any(p in tag for p in ("tw", "hk", "mo", "hant")) else "zh-CN"
    return _ALIASES.get(main)


class LanguageChoice(NamedTuple):
    lang: str
    # One line to show the learner when the choice was not honoured, else "".
    note: str = ""


def choose_language(option: str | None, environ: Mapping[str, str], *, utf8: bool = True,
                    system_locale: Callable[[], str | None] | None = None,
                    saved: str | None = None) -> LanguageChoice:
    """The language to speak: `--lang`, else GRADTUTOR_LANG, else the one `saved` in the
    learner's settings (the last `--lang`), else the locale (LC_ALL, LC_MESSAGES, LANG, then
    the system's own, asked of `system_locale` only when none of those is set), else English.

    An output that cannot show Chinese characters gets English, with a note when Chinese was
    asked for explicitly. An unknown `--lang` is the caller's usage error (see `language_code`);
    an unknown GRADTUTOR_LANG gets English and a note."""
    if option is not None:
        wanted = language_code(option)
        source = "--lang"
        if wanted is None:
            return LanguageChoice(ENGLISH_CODE, f"unknown language {option!r}")
    elif environ.get("GRADTUTOR_LANG", "").strip():
        value = environ["GRADTUTOR_LANG"]
        wanted = language_code(value)
        source = "GRADTUTOR_LANG"
        if wanted is None:
            return LanguageChoice(ENGLISH_CODE, f"GRADTUTOR_LANG={value!r} is not a language "
                                  f"gradtutor speaks ({', '.join(LANGUAGES)}); using English")
    elif saved is not None and (kept := language_code(saved)) is not None:
        wanted, source = kept, "the language kept from your last --lang"
    else:
        source = ""
        wanted = ENGLISH_CODE
        for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
            if environ.get(name, "").strip():
                wanted = language_code(environ[name]) or ENGLISH_CODE
                break
        else:
            found = system_locale() if system_locale is not None else None
            if found:
                wanted = language_code(found) or ENGLISH_CODE
    if wanted != ENGLISH_CODE and not utf8:
        note = (f"{source} asks for {LANGUAGES[wanted]}, but this terminal cannot show it "
                "(set a UTF-8 locale, e.g. LANG=zh_CN.UTF-8); using English") if source else ""
        return LanguageChoice(ENGLISH_CODE, note)
    return LanguageChoice(wanted)


class CatalogError(ValueError):
    """A catalog file that cannot be used; the message says which file and entry."""


def parse_catalog(data: Any, where: str) -> dict[str, str]:
    """The English-template -> translation pairs of one catalog file's YAML data, checked:
    both sides are text and the translation uses exactly the template's fields."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise CatalogError(f"{where}: expected a mapping of English text to its translation")
    pairs: dict[str, str] = {}
    for english, translated in data.items():
        if not isinstance(english, str) or not isinstance(translated, str):
            raise CatalogError(f"{where}: {english!r}: both sides must be text")
        if placeholders(english) != placeholders(translated):
            raise CatalogError(
                f"{where}: {english!r}: the translation must use the fields "
                f"{sorted(placeholders(english))}, not {sorted(placeholders(translated))}")
        pairs[english] = translated
    return pairs


def catalog_files(lang: str, folder: Path = CATALOG_DIR) -> list[Path]:
    return sorted((folder / lang).glob("*.yaml"))


def load_catalog(lang: str, folder: Path = CATALOG_DIR) -> dict[str, str]:
    """Every catalog file of `lang` merged; {} for English. Raises CatalogError."""
    if lang == ENGLISH_CODE:
        return {}
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    merged: dict[str, str] = {}
    for path in catalog_files(lang, folder):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise CatalogError(f"{path}: cannot be read ({type(exc).__name__})") from exc
        for english, translated in parse_catalog(data, str(path)).items():
            if merged.get(english, translated) != translated:
                raise CatalogError(f"{path}: {english!r} is translated differently elsewhere")
            merged[english] = translated
    return merged


def translator(lang: str, folder: Path = CATALOG_DIR) -> Translator:
    return Translator(lang, load_catalog(lang, folder))


class Found(NamedTuple):
    """A translatable template found in source code."""

    template: str
    path: str
    line: int


MARKERS = frozenset({"msg"})


def find_messages(source: str, path: str = "<source>") -> Iterator[Found | str]:
    """Every `msg("...")` template in Python source; a str (a located problem) for a call
    whose template is not a plain literal, since no catalog could hold it."""
    import ast

    for node in ast.walk(ast.parse(source, path)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in MARKERS):
            continue
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield Found(first.value, path, node.lineno)
        else:
            yield f"{path}:{node.lineno}: msg() needs a literal template, not an expression"


def messages_in(root: Path) -> tuple[list[Found], list[str]]:
    """All templates under a package folder, and the problems found."""
    found: list[Found] = []
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        for item in find_messages(path.read_text(encoding="utf-8"), str(path)):
            if isinstance(item, Found):
                found.append(item)
            else:
                problems.append(item)
    return found, problems
