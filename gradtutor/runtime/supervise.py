"""Watching one run: the learner's clock, the kill at the deadline, the sweep of what the
run left, and what its pipes kept, as the `Outcome` the check pipeline decides.
"""

from __future__ import annotations

import os
import time
from typing import Protocol

from gradtutor.checking import protocol
from gradtutor.checking.check import STARTUP_ALLOWANCE, Outcome, Seen
from gradtutor.checking.outcome import WorkerRun
from gradtutor.runtime.channel import Drain
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.resources import MEMORY_CAP, release
from gradtutor.runtime.signals import LINUX
from gradtutor.runtime.slot import Slot

KILL_WAIT = 2.0  # seconds to wait for a killed process to be reaped, before giving up on it
EXIT_GRACE = 2.0  # seconds a worker may take to exit once its results are complete
# What a check may write in its folder in all (each file is held to FILE_BUDGET by
# RLIMIT_FSIZE, but not their number): measured every DISK_EVERY seconds while it runs, the
# check stopped once past either cap. A lesson's check writes a few small files.
DISK_CAP = 256 * 1024**2
DISK_FILES = 10_000
DISK_EVERY = 0.2


def over_disk_cap(folder: str, cap: int = DISK_CAP, files: int = DISK_FILES) -> bool:
    """Whether the files beneath `folder` hold more than `cap` bytes of disk, or number more
    than `files` (counting stops there, so a folder of a million files costs no more)."""
    used = count = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            count += 1
            if count > files:
                return True
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    used += entry.stat(follow_symlinks=False).st_blocks * 512
            except (OSError, AttributeError):  # st_blocks: POSIX only
                continue
            if used > cap:
                return True
    return False


class Process(Protocol):
    """A worker process as `supervise` sees it: a Popen, or a fork server's child."""

    pid: int

    @property
    def ended(self) -> bool:
        """It ended and was reaped (by the tutor, or by its server)."""

    @property
    def returncode(self) -> int | None:
        """How it ended (negative: killed by that signal); None while running, or unknown."""

    def wait_for(self, seconds: float) -> bool:
        """Wait up to `seconds` for it to end; whether it has."""

    @property
    def memory_capped(self) -> bool:
        """The tutor capped the memory learner code may add (a Windows job), at `learner_starts`."""

    def learner_starts(self, memory_bytes: int) -> None:
        """Learner code starts now: cap the memory it may add, where the tutor is the one
        to do it (a Windows job; on Linux the worker lowers its own RLIMIT_AS)."""

    def kill(self) -> None:
        """SIGKILL its whole process group (its job, on Windows), itself included; once it
        has ended, whatever is left of its job."""

    def wait(self) -> None:
        """After `kill`: wait until it has ended (bounded; the status may stay unknown)."""


class Tree(Protocol):
    """What holds a worker and everything it starts, where processes can leave their group
    (a `winjob.Job`): kill them all, cap their memory, let go of them (killing them too)."""

    def cap_memory_above_now(self, budget: int) -> None: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...


def supervise(slot: Slot, process: Process | None, request: protocol.Request, timeout: float,
              *, before: set[int], started: float, workers: Workers) -> Outcome:
    """Watch a worker that has its request (sent at `started`): its clock, the kill at the
    deadline, then the sweep of whatever it left running (processes not in `before`, nor
    another of `workers`), and what it sent. The sweep runs even if the tutor is interrupted
    meanwhile. `process` None: the worker never said it had the request (a fork server that
    died first); whatever may have started is swept all the same, and nothing it did is kept."""
    if process is None:
        workers.sweep(before, str(slot.base))
        release(str(slot.base), time.time() - (time.monotonic() - started))
        return _collect(slot, request, None, False, False, started)
    slot.results.when_first_line(lambda: process.learner_starts(request["memory_bytes"]))
    disk = Disk(str(slot.base))
    try:
        timed_out, startup_timed_out = _wait(process, slot.results, timeout, started, disk)
    finally:
        interrupted = not process.ended  # the tutor was interrupted
        process.kill()  # what is left: the worker if interrupted, and its job (Windows)
        if interrupted:
            process.wait()
        stopped = workers.forget(process.pid)
        workers.sweep(before, str(slot.base), group=process.pid)
        killed = release(str(slot.base), time.time() - (time.monotonic() - started))
    return _collect(slot, request, process.returncode, timed_out, startup_timed_out, started,
                    memory_capped=LINUX or process.memory_capped, stopped=stopped,
                    memory_killed=MEMORY_CAP if killed else None,
                    disk_killed=DISK_CAP if disk.over else None)


def _collect(slot: Slot, request: protocol.Request, returncode: int | None, timed_out: bool,
             startup_timed_out: bool, started: float, *, memory_capped: bool = LINUX,
             stopped: bool = False, memory_killed: int | None = None,
             disk_killed: int | None = None) -> Outcome:
    """What the drains kept, once the worker and everything it started are dead.
    `memory_capped`: the memory budget was enforced (RLIMIT_AS on Linux, a job on Windows),
    so a verdict may name it; `stopped`: the tutor ended the run because it was closing;
    `memory_killed`: the cap at which the kernel killed the check (its memory cgroup);
    `disk_killed`: the cap on its folder's files at which the tutor stopped it."""
    for drain in (slot.output, slot.results):
        drain.join(timeout=2.0)  # EOF once every holder of the pipe is dead
    run = WorkerRun(bytes(slot.results.kept), slot.results.dropped > 0, returncode,
                    timed_out, startup_timed_out,
                    request["memory_bytes"] if memory_capped else None,
                    request["file_bytes"] if os.name == "posix" else None,
                    memory_killed=memory_killed, disk_killed=disk_killed)
    startup_ms = (round((slot.results.first_line_at - started) * 1000)
                  if slot.results.first_line.is_set() else None)
    text = bytes(slot.output.kept).decode("utf-8", errors="replace").replace("\r\n", "\n")
    return run, Seen(text, slot.output.dropped, startup_ms, stopped)


class Disk:
    """The watch on what a check writes in its folder: `over` once it passed DISK_CAP."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.over = False
        self._next = 0.0

    def passed(self) -> bool:
        """Measured at most every DISK_EVERY seconds: whether the check is over the cap."""
        now = time.monotonic()
        if now >= self._next:
            self._next = now + DISK_EVERY
            self.over = self.over or over_disk_cap(self.folder)
        return self.over


def _wait(process: Process, results: Drain, timeout: float,
          started: float, disk: Disk | None = None) -> tuple[bool, bool]:
    """Wait for the worker to end; kill it at the deadline. The learner's clock starts when
    the worker sends its first message, just before it loads the learner's file; until then
    it has STARTUP_ALLOWANCE from `started`, when it got its request.

    Returns (the learner's time ran out, the worker never got as far as learner code)."""
    deadline = started + STARTUP_ALLOWANCE
    clock_started = False
    while True:
        if not clock_started and results.first_line.is_set():
            clock_started = True
            deadline = results.first_line_at + timeout
        if results.complete.is_set():
            deadline = min(deadline, results.complete_at + EXIT_GRACE)
        remaining = deadline - time.monotonic()
        if disk is not None and disk.passed():
            process.kill()
            process.wait()
            return False, False
        if remaining <= 0:
            process.kill()
            process.wait()
            complete = results.complete.is_set()
            return clock_started and not complete, not clock_started
        if process.wait_for(min(remaining, 0.05)):
            return False, False
