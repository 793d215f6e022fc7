"""The walkthrough's background thread tells a check's wait for PyTorch: CheckWaiting at once
and each second after, none after the verdict, and none where the screen is not redrawn in
place or the checker has nothing to load. A stand-in checker holds the check until the test
lets it go, so each step waits for a condition, never for a fixed time."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.verdict import Verdict
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise
from gradtutor.runtime.checker import ColdChecker
from gradtutor.walk.background import Background, Ticker
from gradtutor.walk.events import CheckDone, CheckWaiting, News

NEWS_S = 30.0  # a generous bound on waiting for news that comes within a second or two


class Held:
    """A checker that is `loading` (or not) and holds each check until `release`."""

    def __init__(self, loading: bool) -> None:
        self._loading = loading
        self.released = threading.Event()

    def start(self) -> None:
        pass

    def loading(self) -> bool:
        return self._loading

    def check(self, exercise: Exercise, path: Path, *, seed: int,
              timeout: float | None = None) -> Verdict:
        assert self.released.wait(NEWS_S)
        return Verdict(exercise.id, "pass", (), seed, 1)

    def run_snippet(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no snippet here")

    def close(self) -> None:
        self.released.set()


@pytest.fixture
def exercise() -> Exercise:
    return load_course(rules=EXERCISE_RULES).find_exercise("read-grad")


def run_held(exercise: Exercise, *, loading: bool, waits: bool,
             seconds_before_release: int) -> list[News]:
    """Everything posted for one check, held until CheckWaiting of `seconds_before_release`
    came (or at once if no wait is told)."""
    events: queue.Queue[News] = queue.Queue()
    held = Held(loading)
    work = Background(events.put, {}, checker=lambda environ: held, waits=waits)
    work.start()
    work.check(exercise, Path("read-grad.py"))
    posted: list[News] = []
    try:
        if waits and loading:
            while not posted or posted[-1] != CheckWaiting(exercise.id, seconds_before_release):
                posted.append(events.get(timeout=NEWS_S))
        held.released.set()
        while not (posted and isinstance(posted[-1], CheckDone)):
            posted.append(events.get(timeout=NEWS_S))
    finally:
        work.close()  # its thread has ended: whatever it posted is in the queue now
    return posted + list(events.queue)


def test_a_check_that_waits_for_pytorch_is_told_each_second_until_its_verdict(
    exercise: Exercise,
) -> None:
    posted = run_held(exercise, loading=True, waits=True, seconds_before_release=2)
    *waiting, done = posted
    assert waiting == [CheckWaiting(exercise.id, n) for n in range(3)]
    assert isinstance(done, CheckDone) and done.verdict.passed  # the last news of all


@pytest.mark.parametrize(("loading", "waits"), [(False, True), (True, False)])
def test_no_wait_is_told_when_nothing_loads_or_the_screen_is_a_transcript(
    exercise: Exercise, loading: bool, waits: bool,
) -> None:
    posted = run_held(exercise, loading=loading, waits=waits, seconds_before_release=0)
    assert [type(news) for news in posted] == [CheckDone]


def test_a_cold_checker_never_waits_for_a_worker_started_before() -> None:
    assert not ColdChecker({}).loading()  # each check loads torch in its own process


def test_a_ticker_counts_whole_seconds_from_zero_and_stops_for_good() -> None:
    ticks: queue.Queue[int] = queue.Queue()
    ticker = Ticker(ticks.put)
    ticker.start()
    assert [ticks.get(timeout=NEWS_S) for _ in range(2)] == [0, 1]
    ticker.stop()  # returns once its thread has ended
    assert not any(t.name == "gradtutor-ticker" for t in threading.enumerate())
    counted = list(ticks.queue)  # those that came before stop, on a slow machine
    assert counted == list(range(2, 2 + len(counted)))
    ticker.stop()  # idempotent
