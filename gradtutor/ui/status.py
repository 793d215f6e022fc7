"""A status line that counts the seconds of slow work (a check) on a terminal, redrawn in
place each second and cleared when the work ends."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from gradtutor.env import Environment


@contextlib.contextmanager
def counting(env: Environment, shown: bool, line: Callable[[int], str]) -> Iterator[None]:
    """While the block runs, `line(seconds)` (a message, said in the learner's language) as
    the status line, with the whole seconds so far; nothing unless `shown`."""
    if not shown:
        yield
        return
    from gradtutor.walk.background import Ticker

    ticker = Ticker(lambda seconds: env.status(env.tr(line(seconds))))
    ticker.start()
    try:
        yield
    finally:
        ticker.stop()
        env.status(None)
