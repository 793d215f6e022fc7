"""One screen of the walkthrough as a renderable that keeps its parts apart: the header, the
body's parts, a notice and the key legend, so the full screen can pin the first and the last
and scroll the body. Pure: nothing here prints."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from gradtutor.bindings import Kind
from gradtutor.ui.legend import Legend, entries
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look


class Screen:
    """Everything one screen shows: the header (lesson, step, progress), the body's parts,
    a notice, and the key legend of its kind of screen. Drawn as one column it is the
    screen of a pipe (and of tests); the full screen pins the header and the footer and
    scrolls the parts. `page` names what the body is a page of: another page opens at its
    top. `focus`, if any, is the parts [first, last) that matter most (a verdict and the
    words on the learner's answer): the full screen brings them into view when they appear
    and keeps them there across a resize."""

    def __init__(self, header: RenderableType, parts: list[RenderableType], notice: str,
                 kind: Kind, keys: bool, look: Look, choices: int, page: object,
                 focus: tuple[int, int] | None = None) -> None:
        self.header = header
        self.parts = parts
        self.notice = notice
        self.kind = kind
        self.keys = keys
        self.look = look
        self.choices = choices
        self.page = page
        self.focus = focus

    def footer(self, scrollable: bool) -> RenderableType:
        """The notice, if any, and the legend; with `scrollable`, the legend says how to
        scroll."""
        legend = Legend(entries(self.kind, self.keys, self.choices, scrollable), self.look)
        if not self.notice:
            return legend
        return Group(Text(""), Prose("! " + self.look.tr(self.notice), style="bold yellow"),
                     legend)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.header
        yield from self.parts
        yield self.footer(scrollable=False)
