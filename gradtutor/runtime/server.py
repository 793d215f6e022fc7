"""The tutor's side of a fork server (worker side: forkserver.py): its process and control
socket, its reference process, a check's child it forked, and the reaping of its orphans; and
references from a fresh process when the server's are lost.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping

from gradtutor.checking import protocol
from gradtutor.runtime import wire
from gradtutor.runtime.channel import LineReader, readable_within
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.procfs import children_of, is_running, own_children_in_session, parent_of
from gradtutor.runtime.signals import kill_group
from gradtutor.runtime.slot import Slot
from gradtutor.runtime.spawn import (
    WORKER,
    server_environment,
    start,
)
from gradtutor.runtime.supervise import KILL_WAIT

REPLY_WAIT = 10.0  # seconds a server may take to say it forked




class Server:
    """The tutor's handle on one fork server: its process and its end of the control socket.
    `spawn` starts one (the tutor's child); `clone` forks another from a ready one (that
    server's child, which the tutor cannot reap or wait for, only watch)."""

    def __init__(self, workers: Workers, control: socket.socket, pid: int,
                 proc: subprocess.Popen[bytes] | None = None) -> None:
        self.workers = workers  # where it is registered, and its clones
        self.control = control
        self.pid = pid
        self.proc = proc
        self.ready = False
        self.lost = False  # it is gone, or no longer to be trusted
        self.error: str | None = None  # why it could not start, as it said
        self.references: _References | None = None  # its reference process, once ready
        self.parent: int | None = None  # a clone's: the server it was forked from
        # the children it told of that the tutor must reap if the server dies: its reference
        # process and the child it forked ahead for the next check
        self.told: dict[str, int] = {}
        # the check's child that a `Forked` watches now (and reaps); set and cleared with
        # the engine's record of it (`ForkEngine._record`), so that `stop` leaves to that
        # watcher only a child `close` can see; any other child is reaped as an orphan
        self.checking: int | None = None

    @classmethod
    def spawn(cls, workers: Workers, environ: Mapping[str, str],
              warm_up: bool = True) -> Server:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            fd = theirs.fileno()
            proc = start(WORKER, [
                "--serve", str(fd), "--tutor", str(os.getpid()),  # a sweep can tell when
                *([] if warm_up else ["--no-warm-up"])],  # its tutor is gone
                env=server_environment(environ), cwd=os.path.abspath(os.sep),
                popen={"pass_fds": (fd,), "start_new_session": True}, starter=workers.start)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return cls(workers, mine, proc.pid, proc)

    def clone(self) -> Server | None:
        """A second server forked from this ready one (no check may be running on it): it
        shares this one's memory and costs no import. None if this one is gone. The clone
        ends with this server (its parent-death signal)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.control, [protocol.line(wire.clone())], [theirs.fileno()])
        except OSError:
            self.lost = True
            mine.close()
            return None
        finally:
            theirs.close()
        reply = self.receive(REPLY_WAIT)
        if reply is None or reply["type"] != "cloned":
            mine.close()
            return None
        pid = reply["pid"]
        self.workers.register(pid)
        clone = Server(self.workers, mine, pid)
        clone.parent = self.pid
        return clone

    def alive(self) -> bool:
        if self.lost:
            return False
        return self.proc.poll() is None if self.proc is not None else self._clone_running()

    def _clone_running(self) -> bool:
        """A clone is not the tutor's child, so its pid may name another process once its
        parent has reaped it: it is this clone only while that parent is still its parent."""
        return is_running(self.pid) and parent_of(self.pid) == self.parent

    def receive(self, timeout: float,
                fds: list[int] | None = None) -> wire.FromServer | None:
        """The server's next message but a `Spare` (noted in `told`); None if none came in
        time or the server is gone. The fds that came with it are appended to `fds` (closed,
        if it is None)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive_one(deadline - time.monotonic(), fds)
            if message is None or message["type"] != "spare":
                return message
            self.told["spare"] = message["pid"]

    def _receive_one(self, timeout: float, fds: list[int] | None = None, *,
                     even_if_lost: bool = False) -> wire.FromServer | None:
        if self.lost and not even_if_lost:
            return None
        try:
            readable = readable_within(self.control.fileno(), timeout)
            data, passed = (socket.recv_fds(self.control, 65536, 1)[:2] if readable
                            else (None, []))
        except (OSError, ValueError):  # closed under us by close()
            data, passed = b"", []
        if fds is None:
            for fd in passed:
                os.close(fd)
        else:
            fds.extend(passed)
        if data is None:
            return None
        try:
            return wire.decode_from_server(data)
        except protocol.Malformed:  # end of file, or something the server never says
            self.lost = True
            return None

    def wait_ready(self, timeout: float) -> bool:
        if not self.ready:
            fds: list[int] = []
            message = self.receive(timeout, fds)
            if message is not None and message["type"] == "failed":
                self.error = message["error"]
            if message is not None and message["type"] == "ready":
                self.ready = True
                if fds:
                    self.references = _References(fds.pop())
                self.told["references"] = message["references"]
                if message["spare"] is not None:
                    self.told["spare"] = message["spare"]
            for fd in fds:
                os.close(fd)
        return self.ready

    def submit(self, slot: Slot) -> int | None:
        """Hand the server the slot's request and pipes; the pid of the child it forked, or
        None if it is gone or did not answer."""
        request = protocol.line(wire.hand_over(str(slot.request_path), str(slot.work)))
        try:
            socket.send_fds(self.control, [request], [slot.output_w, slot.results_w])
        except OSError:
            self.lost = True
            return None
        reply = self.receive(REPLY_WAIT)
        if reply is None or reply["type"] != "child":
            self.lost = True
            return None
        pid = reply["pid"]
        if self.told.get("spare") == pid:  # a check's child now: `Forked` reaps it
            del self.told["spare"]
        return pid

    def stop(self) -> None:
        """Kill the server (it leads its own session) and reap it. Idempotent. The socket
        stays open for a check still reading it; `close_socket` closes it."""
        with contextlib.suppress(OSError, ValueError):  # what it said before it went: the
            while (said := self._receive_one(0.0, even_if_lost=True)) is not None:
                if said["type"] == "spare":  # the child it forked last, say
                    self.told["spare"] = said["pid"]
        self.lost = True
        # its reference process and waiting child (and a check's child, clones: those are
        # reaped by whoever watches them too, harmlessly)
        orphans = {*self.told.values(), *children_of(self.pid)} - {self.checking}
        if self.proc is None:  # a clone: its parent server reaps it, or the tutor once
            if self._clone_running():  # that parent is gone (the tutor is the subreaper)
                kill_group(self.pid)
            _reap_orphans([self.pid], self.parent)  # its parent's, or the tutor's
        elif self.proc.poll() is None:
            kill_group(self.pid)  # its reference process too: it is in the server's group
            self.proc.wait()
        # and a spare it forked but died before it told of: still of the server's session
        orphans |= set(own_children_in_session(self.pid)) - {self.checking}
        self.workers.forget(self.pid)
        _reap_orphans(sorted(orphans), self.pid)

    def close_socket(self) -> None:
        self.control.close()
        if self.references is not None:
            self.references.close()


class _References:
    """The tutor's end of the fork server's reference process (`references.serve_references`):
    asked for a checker's references on a seed while the check's child starts, it answers
    once the check is over. One question at a time; after any failure it is of no more use,
    and checks get them from a process of their own (`spawn.beside`)."""

    def __init__(self, fd: int) -> None:
        self._socket = socket.socket(fileno=fd)
        self._lines = LineReader(fd)
        self.lost = False

    def ask(self, checker: protocol.CheckerRef, seed: int) -> bool:
        try:
            self._socket.sendall(protocol.line(wire.reference_request(checker, seed)))
        except OSError:
            self.lost = True
        return not self.lost

    def answer(self, timeout: float) -> protocol.Expected | None:
        """The answer to the last question, or None (it failed, or said nothing in `timeout`
        seconds)."""
        line = None if self.lost else self._lines.next(timeout)
        try:
            if line is not None:
                return wire.decode_reference(line)
        except protocol.Malformed:
            pass
        self.lost = True
        return None

    def close(self) -> None:
        self.lost = True
        self._socket.close()


class Forked:
    """A check's child, forked by the server: the `supervise.Process` that `supervise` watches.

    The server reports how it ended. If the server dies meanwhile, the child re-parents to the
    tutor (the subreaper), which then reaps it itself and so still learns its exit status."""

    memory_capped = False  # the child lowers its own RLIMIT_AS, as every Linux worker does

    def __init__(self, server: Server, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.ended = False
        self.returncode: int | None = None

    def learner_starts(self, memory_bytes: int) -> None:
        pass

    def wait_for(self, seconds: float) -> bool:
        if self.ended:
            return True
        deadline = time.monotonic() + seconds
        if not self.server.lost:
            message = self.server.receive(seconds)
            if message is not None and message["type"] == "exit":
                self.returncode, self.ended = message["code"], True
                return True
            if not self.server.lost:
                return False
            self.server.stop()  # once it is reaped, its orphans are the tutor's
        return self.reap_orphan(deadline)

    def settle(self, seconds: float) -> None:
        """After `close` stopped it, its server gone: reap it as the tutor's orphan (bounded)."""
        self.reap_orphan(time.monotonic() + seconds)

    def reap_orphan(self, deadline: float) -> bool:
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # not ours (no subreaper): it went to init, or is gone
                if not is_running(self.pid):
                    self.ended = True
                    return True
            else:
                if done:
                    self.returncode, self.ended = os.waitstatus_to_exitcode(status), True
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def kill(self) -> None:
        if not self.ended:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)  # it may not have left the server's group yet
        kill_group(self.pid)

    def wait(self) -> None:
        if self.wait_for(KILL_WAIT):
            return
        self.server.stop()  # a server that does not report its child is of no more use
        if not self.wait_for(KILL_WAIT):
            self.ended = True  # give up waiting; the exit status stays unknown


def _reap_orphans(pids: list[int], server: int | None) -> None:
    """Once `server` is dead, its children die too (their parent-death signal) and become
    the tutor's, the subreaper's: reap them (bounded). One that is neither the tutor's child
    nor still the server's is left alone: its pid may name another process by now."""
    deadline = time.monotonic() + KILL_WAIT
    for pid in pids:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                if not is_running(pid) or parent_of(pid) != server:
                    break  # gone, or someone else's
                done = 0
            else:
                if not done and time.monotonic() >= deadline:
                    # the tutor's own child, still dying on a loaded machine: its pid cannot
                    # name another process until it is reaped, so it is safe to make sure
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    break
            if done or time.monotonic() >= deadline:
                break
            time.sleep(0.005)
