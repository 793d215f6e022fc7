"""The viewport's arithmetic: which body lines a terminal shows, how keys move them, how a
new verdict is brought into view, and how the reader's place survives a re-wrap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gradtutor.ui import viewport
from gradtutor.ui.fullscreen import changed

totals = st.integers(min_value=0, max_value=200)
rows = st.integers(min_value=1, max_value=60)


@given(totals, rows, st.integers(min_value=-5, max_value=300))
def test_a_window_never_needs_more_rows_than_there_are(total: int, height: int,
                                                       offset: int) -> None:
    shown = viewport.window(total, height, offset)
    used = (shown.end - shown.start) + bool(shown.above) + bool(shown.below)
    assert 0 <= shown.start <= shown.end <= total
    assert used <= height
    if height >= 3:  # each marker counts exactly the lines it stands for
        assert shown.above == shown.start and shown.below == total - shown.end
    if total <= height:
        assert (shown.start, shown.end) == (0, total)


@given(totals, rows)
def test_paging_down_from_the_top_shows_every_line_and_ends_at_the_end(total: int,
                                                                       height: int) -> None:
    seen: set[int] = set()
    offset = 0
    for _ in range(total + 2):
        shown = viewport.window(total, height, offset)
        seen |= set(range(shown.start, shown.end))
        new = viewport.scroll("page-down", total, height, offset)
        if new == offset:
            break
        offset = new
    assert seen == set(range(total))
    assert viewport.at_end(total, height, offset)


@given(totals, rows, st.integers(min_value=0, max_value=200))
def test_home_and_end_reach_the_two_ends(total: int, height: int, offset: int) -> None:
    assert viewport.window(total, height, viewport.scroll("top", total, height, offset)).start == 0
    bottom = viewport.scroll("bottom", total, height, offset)
    assert viewport.window(total, height, bottom).end == total


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=3, max_value=60),
       st.data())
def test_reveal_brings_what_changed_into_view_or_its_top_to_the_top(total: int, height: int,
                                                                    data: st.DataObject) -> None:
    start = data.draw(st.integers(min_value=0, max_value=total - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=total))
    offset = data.draw(st.integers(min_value=0, max_value=total))
    shown = viewport.window(total, height, viewport.reveal(start, end, total, height, offset))
    if shown.start <= start and end <= shown.end:
        return  # all of it is on view
    assert shown.start == start or shown.start == viewport.max_offset(total, height)
    assert shown.start <= start < shown.end  # at least its top is


@given(st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=8), st.data())
def test_a_place_names_the_same_line_again(sizes: list[int], data: st.DataObject) -> None:
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    total = sum(sizes)
    offset = data.draw(st.integers(min_value=0, max_value=total - 1))
    place = viewport.place_at(offset, starts, total, "page")
    assert place.offset(starts, total) == offset


def test_a_place_keeps_its_part_when_the_text_rewraps() -> None:
    # a part of 20 lines, read from its 10th, wraps to 30 lines in a narrower terminal
    place = viewport.place_at(10 + 5, [0, 5, 25], 40, "page")
    assert place.offset([0, 7, 37], 50) == 7 + 15


def test_what_changed_is_what_lies_between_the_lines_both_share() -> None:
    old = ["title", "task", "not checked yet", "legend"]
    new = ["title", "task", "hint 1", "verdict", "legend"]
    assert changed(old, new) == (2, 4)
    assert changed(new, new) == (5, 5)  # nothing: an empty range
    assert changed([], new) == (0, 5)


@given(totals, rows, st.integers(min_value=0, max_value=200), st.data())
def test_a_kept_focus_is_in_view_and_a_reader_s_place_otherwise_stays(
    total: int, height: int, offset: int, data: st.DataObject,
) -> None:
    start = data.draw(st.integers(min_value=0, max_value=max(0, total - 1)))
    end = data.draw(st.integers(min_value=min(total, start + 1), max_value=total))
    kept = viewport.settle(offset, total, height, (start, end), True)
    if height >= 3 and start < end:
        assert viewport.in_view(start, end, total, height, kept)
    assert viewport.settle(offset, total, height, (start, end), False) == max(
        0, min(offset, viewport.max_offset(total, height)))


def test_a_focus_in_view_does_not_move_the_screen() -> None:
    assert viewport.settle(10, 100, 20, (15, 20), True) == 10
    assert viewport.settle(10, 100, 20, (40, 45), True) > 10
    assert viewport.settle(50, 100, 20, (15, 20), True) == 15


def _screen(page: object, lines: int, focus: tuple[int, int] | None = None) -> object:
    from rich.text import Text

    from gradtutor.ui.render import Look
    from gradtutor.ui.screen import Screen

    parts = [Text(f"line {n}") for n in range(lines)]
    return Screen(Text("head"), list(parts), "", "slide", True, Look(True), 0, page, focus)


def test_the_full_screen_keeps_the_place_under_the_help_and_across_a_resize() -> None:
    import io

    from rich.console import Console

    from gradtutor.ui.fullscreen import FullScreen
    from gradtutor.ui.render import Look
    from gradtutor.ui.screen import Screen

    size = [60, 20]
    full = FullScreen(Console(file=io.StringIO(), force_terminal=False, width=60),
                      lambda: (size[0], size[1]), Look(True))

    def top() -> int:
        return full.place.offset(full.starts, len(full.body))

    step = _screen("step", 60)
    assert isinstance(step, Screen)
    full.show(step, follow=False)
    full.scroll("page-down")
    scrolled = top()
    assert scrolled > 0
    help_page = _screen("help", 10)
    assert isinstance(help_page, Screen)
    full.show(help_page, follow=False)
    full.show(step, follow=False)
    assert top() == scrolled  # closing the help returns to the same line
    size[:] = [120, 80]
    assert full.resized()
    size[:] = [60, 20]
    assert full.resized()
    assert top() == scrolled  # a body that fit the big screen did not lose the place
    # a focus that appears is brought into view, and stays there across a resize
    answered = _screen("step", 60, focus=(40, 42))
    assert isinstance(answered, Screen)
    full.show(answered, follow=True)
    assert viewport.in_view(40, 42, len(full.body), full.rows, top())
    size[:] = [60, 14]
    assert full.resized()
    assert viewport.in_view(40, 42, len(full.body), full.rows, top())
