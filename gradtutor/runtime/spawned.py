"""What the tutor holds of a worker it spawned (spawn.py): a cold one, or one pre-started
ahead of its request (prestart.py). It imports torch, waits for `go` on a pipe, answers one
request (`supervise`) and is discarded with nothing left behind; on Windows it and all it
starts are in a job (`contain_in_job`). docs/isolation.md has the whole picture.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from gradtutor.checking import protocol
from gradtutor.checking.check import STARTUP_ALLOWANCE, Outcome
from gradtutor.runtime import wire
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.procfs import tutor_descendants
from gradtutor.runtime.signals import kill_group
from gradtutor.runtime.slot import Slot
from gradtutor.runtime.spawn import (
    WORKER,
    ReferenceProcess,
    beside,
    inheriting,
    start,
    worker_environment,
)
from gradtutor.runtime.supervise import Tree, supervise

# How a just-started worker is put in a Tree: `contain_in_job` (Windows), or a test's fake.
Contain = Callable[[subprocess.Popen[bytes]], "Tree | None"]


def contain_in_job(proc: subprocess.Popen[bytes]) -> Tree | None:
    """Windows: `proc` in a new kill-on-close Job Object. None elsewhere, or if Windows refuses
    (the tree is then killed by `taskkill /T`, as before jobs)."""
    if sys.platform != "win32":
        return None
    from gradtutor.runtime import winjob  # pragma: no cover - Windows

    try:  # pragma: no cover - Windows
        return winjob.contain(int(proc._handle))  # type: ignore[attr-defined,unused-ignore]
    except Exception:  # noqa: BLE001 # pragma: no cover - a job is a bonus; taskkill /T remains
        return None


class Spawned:
    """A worker started with Popen (a cold one, or a pre-started one), and the Tree holding it
    and what it starts, if there is one. `release` lets go of the Tree once all is over."""

    def __init__(self, proc: subprocess.Popen[bytes], tree: Tree | None = None) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.tree = tree
        self.memory_capped = False

    @property
    def ended(self) -> bool:
        return self.proc.returncode is not None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def wait_for(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def learner_starts(self, memory_bytes: int) -> None:
        if self.tree is None:
            return
        try:  # relative to what is committed now: torch, the checker and its references
            self.tree.cap_memory_above_now(memory_bytes)
        except OSError:
            return  # uncapped, and the verdict will not claim a limit
        self.memory_capped = True

    def kill(self) -> None:
        if self.tree is not None:
            self.tree.kill()  # the worker and all it started, a detached grandchild included
        if self.proc.poll() is None:
            _kill_group(self.proc, tree_killed=self.tree is not None)

    def wait(self) -> None:
        self.proc.wait()

    def release(self) -> None:
        """Close the Tree (which kills what is left in it). After the sweep; idempotent."""
        tree, self.tree = self.tree, None
        if tree is not None:
            with contextlib.suppress(OSError):
                tree.close()


class WaitingWorker:
    """A spawned worker and its `Slot`: it imports torch, then waits for `go`. A cold check
    answers it at once; a pre-started one (warm.py) later. One request each; `discard` once
    it is over (or never used) leaves nothing of it behind. `tied`: it dies with the tutor
    (Linux's parent-death signal, which fires when the thread that started it ends, so only
    for a worker whose starting thread waits for it). `references`: start the tutor's
    reference process for its request first (`spawn.ReferenceProcess`), so that it imports
    torch alongside, ahead of the worker."""

    def __init__(self, workers: Workers, *, preload: bool = False, tied: bool = False,
                 contain: Contain = contain_in_job, environ: Mapping[str, str],
                 references: bool = False) -> None:
        self._workers = workers
        self._environ = environ
        self._ahead = ReferenceProcess(self._environ, workers) if references else None
        self.slot = Slot()
        try:
            self._spawned, self._go = _spawn_worker(
                self.slot, workers, self._environ, preload=preload, tied=tied,
                contain=contain)
        except BaseException:
            self.slot.close()
            if self._ahead is not None:
                self._ahead.close()
            raise
        self.pid = self._spawned.pid
        self.slot.handed_over()

    def alive(self) -> bool:
        return self._spawned.proc.poll() is None

    def answer(self, request: protocol.Request, timeout: float) -> tuple[Outcome, bool]:
        """The run; and whether it may be retried (the worker died before it said a word,
        so before any learner code ran: killed while it waited, say). A check's
        references come from a process of the tutor's own, started now (`spawn.beside`)."""
        ahead, self._ahead = self._ahead, None
        request, references = beside(request, self._environ, self._workers, ahead)
        try:
            self.slot.write_request(request)
            before = tutor_descendants() - {self.pid}
            started = time.monotonic()
            _send_go(self._go)
            self._go = -1
            outcome = supervise(self.slot, self._spawned, request, timeout, before=before,
                                started=started, workers=self._workers)
            if references is not None:
                outcome = with_references(outcome, references)
        finally:
            if references is not None:
                references.close()
        return outcome, not self.slot.learner_started

    def settle(self, seconds: float) -> None:
        """Wait (up to `seconds`) until it has ended and is reaped."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._spawned.proc.wait(seconds)

    def discard(self) -> None:
        """End it (if it still waits) and whatever it started, and remove its slot.
        Idempotent."""
        if self._go >= 0:
            os.close(self._go)
            self._go = -1
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None
        self._spawned.kill()
        self._spawned.proc.wait()
        self._workers.forget(self.pid)
        self._spawned.release()  # before the folder goes: Windows keeps a running process's cwd
        for drain in (self.slot.output, self.slot.results):
            if drain.is_alive():
                drain.join(timeout=2.0)
        self.slot.close()


def with_references(outcome: Outcome, references: ReferenceProcess) -> Outcome:
    """`outcome` judged on the references of the tutor's own process, waited for now: that
    wait is start-up (computing references), added to it, not to the learner's clock. A run
    that timed out needs none (its verdict is the time limit)."""
    run, seen = outcome
    if run.timed_out:
        references.close()
        return outcome
    waited = time.monotonic()
    reference = references.answer(STARTUP_ALLOWANCE)
    extra = round((time.monotonic() - waited) * 1000)
    startup = None if seen.startup_ms is None else seen.startup_ms + extra
    return replace(run, reference=reference), replace(seen, startup_ms=startup)


def _spawn_worker(slot: Slot, workers: Workers, environ: Mapping[str, str], *, preload: bool,
                  tied: bool, contain: Contain) -> tuple[Spawned, int]:
    """Start a worker for `slot`: its own session (no terminal, no Ctrl+C from the tutor's
    terminal), stdin empty, output to the slot's output pipe, results to its result pipe and
    nowhere else, the slot's folder as its mark, and (Windows) in a job, by `contain`. It
    imports torch, then waits for `go` on a pipe: the returned fd, for `_send_go`."""
    go_r, go_w = os.pipe()
    try:
        kwargs, passed = inheriting([go_r, slot.results_w])
        args = [str(slot.request_path), *passed, *(["--preload"] if preload else []),
                *([f"--die-with={os.getpid()}"] if tied else [])]
        proc = start(WORKER, args, env=worker_environment(environ, mark=str(slot.base)),
                     cwd=slot.work, stdout=slot.output_w, stderr=slot.output_w, popen=kwargs,
                     starter=workers.start)
        # no learner code runs before `go`, so nothing can start outside the job meanwhile
        worker = Spawned(proc, contain(proc))
        workers.register(proc.pid, worker.kill)
    except BaseException:
        os.close(go_w)
        raise
    finally:
        os.close(go_r)
    return worker, go_w


def _send_go(fd: int) -> None:
    """Tell a worker waiting on the pipe `fd` to read its request, and close the pipe. The
    message is far below the pipe's buffer, so this never blocks."""
    with contextlib.suppress(OSError):  # it died already: supervising it will say how
        os.write(fd, wire.GO)
    os.close(fd)


def _kill_group(proc: subprocess.Popen[bytes], *, tree_killed: bool = False) -> None:
    """SIGKILL the worker's process group (it leads its own session); on Windows the worker,
    and its tree by `taskkill /T` unless its job was killed already."""
    if sys.platform == "win32":  # pragma: no cover
        if not tree_killed:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        proc.kill()
    else:
        kill_group(proc.pid)
