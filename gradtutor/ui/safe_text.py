"""Learner text made safe to show in a terminal. Pure.

A verdict keeps the learner's output and messages exactly as produced (JSON escapes them);
whatever draws them on a terminal first passes them through `neutralise`, so that escape
sequences in learner output cannot clear the screen, move the cursor, set the window title or
change colours, and the tutor's own lines cannot be faked or hidden.

A message (`msg()`) stays a message: its fields are neutralised, so it still translates.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from gradtutor.i18n import Msg, Untranslated

if TYPE_CHECKING:  # a slide shows no verdict: the first one loads the module
    from gradtutor.checking.verdict import Table, Verdict

_Text = TypeVar("_Text", bound=str)

# Shown as themselves: the only control characters that cannot take over a terminal.
_KEPT = frozenset("\n\t")
# Invisible characters that reorder or hide text ("Trojan Source"): bidi embeddings,
# overrides and isolates, and the line/paragraph separators some terminals act on.
_INVISIBLE = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
)


def _visible(char: str) -> str:
    code = ord(char)
    if char == "\r":
        return "\\r"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def _unsafe(char: str) -> bool:
    code = ord(char)
    return ((code < 0x20 or 0x7F <= code <= 0x9F) and char not in _KEPT) or char in _INVISIBLE


def neutralise(text: _Text) -> _Text:
    """`text` with every control character except newline and tab written out visibly, the
    way Python writes it in a string literal: ESC becomes `\\x1b`, BEL `\\x07`, CSI `\\x9b`.

    Windows line ends (CR LF) become plain newlines first; a lone CR is shown as `\\r`,
    because it would let later text overwrite earlier text on the same line.

    A message comes back a message, its fields (learner values among them) neutralised and
    its template, which is ours, kept; Untranslated text stays Untranslated."""
    if isinstance(text, Msg):
        fields = {name: _field(value) for name, value in text.fields.items()}
        return Msg(text.template, fields)  # type: ignore[return-value]
    safe = text.replace("\r\n", "\n")
    if any(_unsafe(c) for c in safe):
        safe = "".join(_visible(c) if _unsafe(c) else c for c in safe)
    if isinstance(text, Untranslated):
        return Untranslated(safe)  # type: ignore[return-value]
    return safe  # type: ignore[return-value]


def _field(value: Any) -> Any:
    # numbers are harmless and keep their format specs; anything else (a message, a learner's
    # value, a path) is shown as text, so it is neutralised as text
    if isinstance(value, (int, float)):
        return value
    return neutralise(value if isinstance(value, str) else str(value))


def _table(table: Table | None) -> Table | None:
    if table is None:
        return None
    return replace(table, columns=tuple(neutralise(c) for c in table.columns),
                   rows=tuple(tuple(neutralise(cell) for cell in row) for row in table.rows))


def neutralise_verdict(verdict: Verdict) -> Verdict:
    """The verdict with every string in it neutralised: output, and each check's message,
    help and evidence (which quote learner values, exception messages and type names)."""
    from gradtutor.checking.verdict import Check

    checks = tuple(Check(c.name, c.status, neutralise(c.message), neutralise(c.help),
                         _table(c.evidence), neutralise(c.note), neutralise(c.mistake))
                   for c in verdict.checks)
    return replace(verdict, checks=checks, output=neutralise(verdict.output))
