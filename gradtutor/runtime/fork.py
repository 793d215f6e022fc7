"""The engine that runs each request in a fresh child of a fork server (Linux).
"""

from __future__ import annotations

import os
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace

from gradtutor.checking import protocol
from gradtutor.checking.check import STARTUP_ALLOWANCE, Outcome
from gradtutor.runtime.engine import Lifecycle, Running
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.procfs import tutor_descendants
from gradtutor.runtime.server import Forked, Server
from gradtutor.runtime.signals import LINUX
from gradtutor.runtime.slot import Slot
from gradtutor.runtime.spawn import beside, reference_alone
from gradtutor.runtime.spawned import with_references
from gradtutor.runtime.supervise import supervise

FORK_SERVER = (LINUX and hasattr(os, "fork") and hasattr(socket, "send_fds")
               and hasattr(socket, "SOCK_SEQPACKET"))


KNOWN_REFERENCES = 64  # (checker, seed) pairs whose references a fork engine keeps


class ForkEngine(Lifecycle[Server, Forked]):
    """Runs requests in children of a fork server, restarting the server when it dies.
    `first`, if given, makes its first server (a clone of another engine's); it may give
    None, and a server is then spawned as usual."""

    attempts = 2

    def __init__(self, workers: Workers, environ: Mapping[str, str],
                 first: Callable[[], Server | None] | None = None,
                 warm_up: bool = True) -> None:
        super().__init__(workers, environ)
        self._first = first
        self._warm_up = warm_up
        # references by (checker, seed), the latest last: a seed checked again (a class
        # graded on one seed, `check --all` run again) needs no new ones
        self._known: OrderedDict[tuple[str, int], protocol.Expected] = OrderedDict()

    @property
    def pid(self) -> int | None:
        server = self._ready
        return server.pid if server is not None and server.alive() else None

    def _make(self) -> Server:
        first, self._first = self._first, None  # only the first: later ones are spawned
        return (first() if first is not None else None) or Server.spawn(
            self._workers, self._environ, self._warm_up)

    def _could_not_make(self) -> None:
        with self._state:
            self._broken = True

    def _take(self) -> Server | None:
        """A server ready for a request, started and waited for if need be (twice at most);
        None if there is none to be had."""
        for _ in range(2):
            with self._state:
                server = self._ready
            if server is not None and not server.alive():
                self._drop(server)
                server = None
            if server is None:
                self._await_start()
                with self._state:
                    server = self._ready
                if server is None:
                    return None
            if server.wait_ready(STARTUP_ALLOWANCE):
                return server
            self._drop(server)
            if server.error is not None:  # it cannot import torch: a cold worker will say so
                break
        with self._state:
            self._broken = True
        return None

    def wait_ready(self) -> bool:
        return self._take() is not None

    def loading(self) -> bool:
        """Whether a request now would first wait for a server to import torch: one is being
        started, or the one there has not said it is ready (asked of it at once, without
        waiting), or it is gone and must be started again. Between requests only: it reads
        the server's socket, which a running request reads too."""
        with self._state:
            if self._closed or self._broken:
                return False  # a request runs cold, or not at all: nothing to wait for
            starting = self._starting is not None and self._starting.is_alive()
            server = self._ready
        if starting or server is None:
            return True
        return not (server.alive() and server.wait_ready(0.0))

    def clone_server(self) -> Server | None:
        """A clone of this engine's server, once it is ready (`Server.clone`); the caller
        holds the lock that keeps checks off it meanwhile. None if there is none to clone."""
        server = self._take()
        return server.clone() if server is not None else None

    def _drop(self, server: Server) -> None:
        with self._state:
            if self._ready is server:
                self._ready = None
        self._let_go(server, running=False)

    def _let_go(self, kept: Server, *, running: bool) -> None:
        kept.stop()
        if not running:  # else the check in it still reads the socket; it closes it itself
            kept.close_socket()

    def _record(self, process: Running, *, kept: bool = True) -> bool:
        """Record a check's child as watched, on its server too, in one step that `close`
        cannot split: a child `close` does not see is not yet its server's `checking`, so
        `Server.stop` reaps it with the server's other orphans."""
        with self._state:
            if isinstance(process, Forked):
                process.server.checking = process.pid
            self._current[process] = kept
            return not self._closed

    def _forget(self, process: Running) -> None:
        with self._state:
            if isinstance(process, Forked) and process.server.checking == process.pid:
                process.server.checking = None
            self._current.pop(process, None)

    def _attempt(self, server: Server, request: protocol.Request,
                 timeout: float) -> tuple[Outcome, bool]:
        """One run in a fresh child; and whether it may be retried (the server went away
        before any learner code ran). A server lost on the way is replaced."""
        attempt = self._in_child(server, request, timeout)
        if server.lost:
            self._drop(server)
            self.start()  # the next server, in the background
        return attempt

    def _in_child(self, server: Server, request: protocol.Request,
                  timeout: float) -> tuple[Outcome, bool]:
        reference, asked = self._reference(server, request)
        alone = None  # the server's reference process is lost: a check's references
        if request["kind"] == "check" and (reference is not None or asked):  # are its own
            request = {**request, "reference": "tutor"}
        else:
            request, alone = beside(request, self._environ, self._workers)
        slot = Slot()
        try:
            slot.write_request(request)
            before = tutor_descendants()
            started = time.monotonic()
            pid = server.submit(slot)
            slot.handed_over()
            if pid is None:
                # gone before it said so much as a pid: a child it may have forked is found
                # by the sweep (an orphan of the tutor's now); unless learner code started in
                # it (and killed the server), nothing it did is kept
                server.stop()
                outcome = supervise(slot, None, request, timeout, before=before,
                                    started=started, workers=self._workers)
                if not slot.learner_started:
                    return outcome, True
            else:
                child = Forked(server, pid)
                self._workers.register(pid, child.kill)  # spared by other threads' sweeps
                self._record(child)
                try:
                    outcome = supervise(slot, child, request, timeout, before=before,
                                        started=started, workers=self._workers)
                finally:
                    self._forget(child)
            if asked and request["kind"] == "check":
                reference = self._answer(server, request)
                if reference is None and not slot.learner_started:
                    return outcome, True  # nothing of the learner's ran: again, the old way
                if reference is None:  # it ran (and may have killed the server with its
                    # reference process): judged on references computed alone, never run again
                    reference = reference_alone(request, STARTUP_ALLOWANCE, self._workers,
                                                self._environ)
            if alone is not None:
                return with_references(outcome, alone), server.lost and not slot.learner_started
            if reference is not None:
                outcome = replace(outcome[0], reference=reference), outcome[1]
            return outcome, server.lost and not slot.learner_started
        finally:
            slot.close()
            if alone is not None:
                alone.close()

    def _reference(self, server: Server, request: protocol.Request) -> tuple[
            protocol.Expected | None, bool]:
        """For a check: its references if known already, else whether the server's reference
        process was asked for them (False: the check's worker sends them itself)."""
        references = server.references
        if request["kind"] != "check" or references is None or references.lost:
            return None, False
        key = (protocol.checker_key(request["checker"]), request["seed"])
        known = self._known.get(key)
        if known is not None:
            self._known.move_to_end(key)
            return known, False
        return None, references.ask(request["checker"], request["seed"])

    def _answer(self, server: Server,
                request: protocol.CheckRequest) -> protocol.Expected | None:
        """The answer to `_reference`'s question, remembered; None if there is none."""
        assert server.references is not None  # it was asked
        reference = server.references.answer(STARTUP_ALLOWANCE)
        if reference is not None:
            self._known[(protocol.checker_key(request["checker"]), request["seed"])] = reference
            while len(self._known) > KNOWN_REFERENCES:
                self._known.popitem(last=False)
        return reference
