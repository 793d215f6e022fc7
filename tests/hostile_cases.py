"""The one table of hostile learner files (tests/hostile/): for each, the verdict status it
must get, words its checks must contain, where it can run, and the ways of checking it meets.

A file whose ending depends on the engine (how a process is timed, ended, swept, how its
output is kept apart from its results, where the references live) meets every way it can;
a file decided by the trace and the judge, which every engine shares (`outcome.decide`),
meets one engine and `check --all`.

Who runs what:
- test_isolation.py: the files that are not `forged`, on the cold path (`run_check`);
- test_warm.py: the files that are not `forged`, through the fork server;
- test_forgery.py (through tests/forgery_driver.py, as an ordinary user): the `forged` files on
  each of their `paths`, and through the fork server on fresh seeds (a file passes only if its
  function is correct).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

COLD, FORK, PRE_STARTED, CHECK_ALL = "cold", "fork_server", "pre_started", "check_all"
PATHS = (COLD, FORK, PRE_STARTED, CHECK_ALL)
EVERY = frozenset(PATHS)
SHARED = frozenset({FORK, CHECK_ALL})  # decided by the judge: one engine and the CLI
ENDINGS = frozenset({COLD, FORK})  # the two engines that end processes their own way
ONCE = frozenset({COLD})

LINUX = sys.platform.startswith("linux")
POSIX = os.name == "posix"


@dataclass(frozen=True)
class Hostile:
    """A learner file, the verdict status it must get, and words its checks must contain
    (`{timeout}` stands for the exercise's time limit, in seconds)."""

    status: str
    says: tuple[str, ...] = ()
    only: str = "any"  # "posix": needs fork/signals; "linux": needs /proc or RLIMIT_AS
    paths: frozenset[str] = ONCE
    forged: bool = False  # tries to pass without doing the exercise: test_forgery's
    correct: bool = False  # its function is correct (a control, or the stated gap)

    @property
    def runs_here(self) -> bool:
        return {"any": True, "posix": POSIX, "linux": LINUX}[self.only]

    def said(self, timeout: float) -> tuple[str, ...]:
        return tuple(words.format(timeout=f"{timeout:g}") for words in self.says)


LOOPS = "still running after {timeout} s"

HOSTILE_FILES: dict[str, Hostile] = {
    # slowest first, so the lanes of test_isolation's pool finish together
    "infinite_loop": Hostile("timeout", (LOOPS,), paths=ENDINGS),
    "ignores_sigterm": Hostile("timeout", (LOOPS,), "posix", ENDINGS),
    "thread_blocked": Hostile("timeout", (LOOPS,)),
    "memory_flood": Hostile("error", ("ran out of memory (the limit is 2 GiB)",), "linux",
                            ENDINGS),
    "output_flood": Hostile("fail", paths=ENDINGS),
    "segfault": Hostile("error", ("segmentation fault",), paths=ENDINGS),
    "fork_children": Hostile("fail", (), "posix", ENDINGS),
    "setsid_grandchild": Hostile("fail", (), "linux", ENDINGS),
    "setsid_exec_sleep": Hostile("fail", (), "posix", ENDINGS),
    "reads_stdin": Hostile("error", ("tried to read input", "EOFError")),
    # tampering with torch: a warm child must not hand it on to the next check
    "tamper_torch": Hostile("fail", ("backward",), paths=ENDINGS),
    "tamper_builtins": Hostile("error", ("ImportError: imports are switched off",)),
    "deletes_cwd": Hostile("fail", (), "posix"),
    "huge_exception": Hostile("error", ("raised ValueError: gradient gradient",)),
    "escape_codes": Hostile("error", ("RuntimeError",)),
    "sys_exit_at_import": Hostile("error", ("could not be loaded", "called sys.exit(0)")),
    "os_exit_in_function": Hostile("error",
                                   ("ended the process (exit code 0) before the checks",)),
    "keyboard_interrupt": Hostile("error", ("raised KeyboardInterrupt",)),
    # forged verdicts. Where the references live, and how output is kept apart from results,
    # is each engine's own: those meet every way.
    "forge_reads_reference": Hostile(  # no function: reads the reference from memory, forges
        "error", ("does not define a function named `read_grad`",), "linux", EVERY, True),
    "writes_fake_results": Hostile("error", ("results came back unreadable",), "posix", EVERY,
                                   True),
    "correct_prints_passed": Hostile("pass", paths=EVERY, forged=True, correct=True),
    "wrong_prints_passed": Hostile("fail", paths=EVERY, forged=True),
    "thread_left_running": Hostile("pass", paths=EVERY, forged=True, correct=True),
    # What docs/isolation.md states still passes: a file that computes every answer itself
    # and forges a whole observation. Checked, so that the statement stays true.
    "gap_forges_computed_answers": Hostile("pass", paths=EVERY, forged=True, correct=True),
    # children of learner code (os.fork, multiprocessing's fork): each ends where it returns,
    # raises or calls sys.exit, with Python's exit code for it, and never reaches the result
    # path, on every way. A correct function passes; a child's answer is not its parent's.
    "fork_child_returns": Hostile("pass", (), "posix", EVERY, True, True),
    "fork_child_raises": Hostile("pass", (), "posix", EVERY, True, True),
    "fork_child_exits": Hostile("pass", (), "posix", EVERY, True, True),
    "multiprocessing_children": Hostile("pass", (), "posix", EVERY, True, True),
    "fork_child_answers": Hostile("fail", ("You returned None",), "posix", EVERY, True),
    # the trace's and the judge's: the same on every engine
    "forge_calls_hooks": Hostile(  # no backward: calls the trace's hooks by hand
        "fail", ("called the checker's gradient hooks itself",), paths=SHARED, forged=True),
    "forge_hooks_in_other_backward": Hostile(  # ... from inside an unrelated backward
        "fail", ("called the checker's gradient hooks itself",), paths=SHARED, forged=True),
    "forge_appends_events": Hostile(  # no backward: appends an event to the trace
        "fail", ("no backward pass put it there",), paths=SHARED, forged=True),
    "forge_notes_events": Hostile(  # ... through the method checkers add their own events with
        "error", ("the trace records 'accumulate' events itself",), paths=SHARED, forged=True),
    "subclass_lies": Hostile(  # zeros whose __torch_function__ answers tolist with the truth
        "fail", ("You returned a tensor of zeros",), paths=SHARED, forged=True),
    "subclass_dispatch_lies": Hostile(  # zeros whose __torch_dispatch__ answers every operator
        "fail", ("an object of type Liar",), paths=SHARED, forged=True),
    "eq_always_true": Hostile("fail", ("Anything",), paths=SHARED, forged=True),
}
GAPS = ("gap_forges_computed_answers",)


def run_by(path: str, *, forged: bool) -> list[str]:
    """The files that meet `path`, of test_forgery's (`forged`) or of the others."""
    return [name for name, case in HOSTILE_FILES.items()
            if path in case.paths and case.forged == forged]
