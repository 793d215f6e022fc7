"""Words the checkers' feedback shares: several items said as one phrase, in the learner's
language. Pure. (Learner text is made safe for a terminal by `gradtutor.ui.safe_text`.)
"""

from __future__ import annotations

from collections.abc import Sequence

from gradtutor.i18n import msg


def joined(items: Sequence[str]) -> str:
    """Items as one phrase: `a`, `a and b`, `a, b and c`, ...; a message, so the words
    between them translate (the items themselves may be messages or data)."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return msg("{items} and {last}", items=listed(items[:-1]), last=items[-1])


def listed(items: Sequence[str]) -> str:
    """Items as `a, b, c`; a message, so that the commas can be the language's own."""
    if len(items) <= 1:
        return items[0] if items else ""
    return msg("{items}, {last}", items=listed(items[:-1]), last=items[-1])
