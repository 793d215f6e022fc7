"""The one way the tutor starts a process of its own (a cold or pre-started worker, the fork
server, `worker --reference`, validate's batch worker): `python -m` a module of this very
gradtutor, in the worker's environment (`worker_environment`), no stdin, fds passed by name.

The environment is a parameter, never read here: the shell hands down the one it has
(`Environment.environ`), a test or a benchmark the one it means.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gradtutor
from gradtutor.checking import protocol
from gradtutor.checking.protocol import CheckerRef
from gradtutor.runtime import wire
from gradtutor.runtime.channel import LineReader
from gradtutor.runtime.lifetime import Workers
from gradtutor.runtime.wire import CHECK_MARK, TUNED_MARK

WORKER = "gradtutor.runtime.worker"  # every role of the worker process (worker.main)
BATCH = "gradtutor.runtime.batch"  # validate's batch worker

# Environment a learner's process should not inherit from the tutor's: settings that would
# turn torch's import warnings into errors or show torch's internal ones, print tracebacks
# or import logs of ours into the learner's output, or wait at a prompt with nobody there.
_DROPPED_ENV = ("PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTHONVERBOSE",
                "PYTHONIMPORTTIME", "PYTHONINSPECT", "PYTHONSTARTUP")

# Allocations through glibc's malloc, which backs its heap with transparent huge pages where
# the kernel allows it (THP "madvise" or "always"; glibc 2.35+): the fork server's heap is then
# some 100 huge pages instead of 50,000 small ones, so forking a check's child and its exit
# cost less (benchmarks/checks.py). Elsewhere they do nothing.
SERVER_TUNING = {"PYTHONMALLOC": "malloc", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


# What of the tutor's environment a worker gets: an allowlist, so that no token, agent socket
# (SSH_AUTH_SOCK), proxy or cloud credential the tutor's user has reaches learner code. What
# Python, torch and the tutor's own switches need, and what a program finds on any system.
_KEPT_ENV = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
    "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX",
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA",
    "LOCALAPPDATA", "PROGRAMDATA", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
})
_KEPT_PREFIXES = ("LC_", "PYTHON", "GRADTUTOR_", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "TORCH_",
                  "CUDA_", "GLIBC_TUNABLES")


def kept(name: str) -> bool:
    """Whether the worker gets the tutor's variable `name` (_KEPT_ENV, _KEPT_PREFIXES; never
    one of _DROPPED_ENV)."""
    return (name in _KEPT_ENV or name.startswith(_KEPT_PREFIXES)) and name not in _DROPPED_ENV


def worker_environment(base: Mapping[str, str], mark: str | None = None) -> dict[str, str]:
    """The worker's environment: the tutor's variables that are `kept`, made to import this
    very gradtutor, with one thread per numeric library and UTF-8 output; and `mark` (the
    check's folder) as CHECK_MARK, which whatever the learner starts inherits, so the sweep
    finds it where there is no subreaper (macOS)."""
    env = {k: v for k, v in base.items() if kept(k) and k != CHECK_MARK}
    if mark is not None:
        env[CHECK_MARK] = mark
    root = str(Path(gradtutor.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [base.get("PYTHONPATH")])])
    env.update({
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "PYTHONIOENCODING": "utf-8:backslashreplace",  # a Windows console code page won't do
        "PYTHONUNBUFFERED": "1",  # stdout and stderr share one pipe, in the order printed
        "PYTHONSAFEPATH": "1",  # nothing importable from the working directory (3.11+)
        "PYTHONBREAKPOINT": "0",  # a forgotten breakpoint() must not wait for a debugger
    })
    return env


def server_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The fork server's environment: a worker's, with SERVER_TUNING unless the tutor's
    environment sets those variables itself. The server removes them again once started
    (TUNED_MARK says so), so learner code neither sees nor passes them on."""
    env = worker_environment(base)
    if not any(name in base for name in SERVER_TUNING):
        env.update(SERVER_TUNING)
        env[TUNED_MARK] = ",".join(SERVER_TUNING)
    return env


def inheriting(fds: Sequence[int]) -> tuple[dict[str, Any], list[str]]:
    """Popen arguments that give the child exactly `fds` (and its standard streams) in a
    session of its own, and how to name them on its command line: fd numbers, or handles on
    Windows."""
    if sys.platform == "win32":  # pragma: no cover - exercised by CI on Windows
        import msvcrt

        handles = [msvcrt.get_osfhandle(fd) for fd in fds]
        for handle in handles:
            os.set_handle_inheritable(handle, True)
        return ({"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP,
                 "startupinfo": subprocess.STARTUPINFO(
                     lpAttributeList={"handle_list": handles})},
                [str(h) for h in handles])
    return {"pass_fds": tuple(fds), "start_new_session": True}, [str(fd) for fd in fds]


Starter = Callable[[Callable[[], "subprocess.Popen[bytes]"]], "subprocess.Popen[bytes]"]


def start(module: str, args: Sequence[str], *, env: Mapping[str, str], cwd: str | Path,
          stdout: int = subprocess.DEVNULL, stderr: int = subprocess.DEVNULL,
          popen: Mapping[str, Any] | None = None, starter: Starter | None = None,
          stdin: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """`python -m module args`, with no stdin unless given; `popen` adds Popen arguments
    (`inheriting`'s), `starter` starts it (`Workers.start`, which registers it under its
    lock)."""
    argv = [sys.executable, "-m", module, *args]

    def launch() -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=stdout,
                                stderr=stderr, env=dict(env), **(popen or {}))

    return starter(launch) if starter is not None else launch()


def start_reference(stdout: int, env: Mapping[str, str],
                    starter: Starter | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """`worker --reference`: a fresh interpreter that imports torch, then reads a checker and
    a seed from its stdin (never its command line, which any process of the user can read in
    /proc; `ask` writes them, on the returned fd), writes the check's reference results as one
    line to `stdout`, then ends (the one spawner of it: a Windows worker's registered
    checkers, and the tutor's `ReferenceProcess`)."""
    read, write = os.pipe()
    try:
        proc = start(WORKER, ["--reference"], env=env, cwd=os.path.abspath(os.sep),
                     stdout=stdout, stdin=read, starter=starter)
    except BaseException:
        os.close(write)
        raise
    finally:
        os.close(read)
    return proc, write


def ask(fd: int, checker: CheckerRef, seed: int) -> None:
    """Write a reference process's question on its stdin `fd`, and close it. The question is
    far below a pipe's buffer, so this does not block; if the process died, it says so."""
    import json

    with os.fdopen(fd, "wb") as pipe, contextlib.suppress(OSError):
        pipe.write(json.dumps({"checker": checker, "seed": seed}).encode("utf-8"))


class ReferenceProcess:
    """A check's references computed by a process the tutor starts itself (`worker
    --reference`), beside the check's worker: the way a check's references reach the tutor
    when no fork server's reference process gives them, and the one way a declared exercise's
    solution reaches a process that runs it, so that nothing the learner's process can read
    (its request, folder, environment, descriptors, the result pipe) holds either. It is
    started ahead (it imports torch meanwhile: a cold check starts it before its worker),
    `ask`ed once, and `answer` reads its one line and ends it; `close` ends it unread.
    `workers`: the checks' workers, whose sweeps must spare it while it runs (started and
    forgotten through it)."""

    def __init__(self, environ: Mapping[str, str], workers: Workers) -> None:
        self._workers = workers
        self._read, write = os.pipe()
        try:
            self._proc, self._ask = start_reference(write, worker_environment(environ),
                                                    starter=workers.start)
        except BaseException:
            os.close(self._read)
            raise
        finally:
            os.close(write)

    def ask(self, checker: CheckerRef, seed: int) -> None:
        fd, self._ask = self._ask, -1
        if fd >= 0:
            ask(fd, checker, seed)

    def answer(self, timeout: float) -> protocol.Expected | None:
        """Its references, or None if it gave none within `timeout` or none that decode."""
        try:
            line = LineReader(self._read).next(timeout)
            return wire.decode_reference(line) if line is not None else None
        except protocol.Malformed:
            return None
        finally:
            self.close()

    def close(self) -> None:
        for fd in (self._read, self._ask):
            if fd >= 0:
                os.close(fd)
        self._read = self._ask = -1
        self._proc.kill()
        self._proc.wait()
        self._workers.forget(self._proc.pid)


def reference_alone(request: protocol.CheckRequest, timeout: float, workers: Workers,
                    environ: Mapping[str, str]) -> protocol.Expected | None:
    """A check's references from a fresh process of their own, started now and waited for;
    None if they cannot be had."""
    try:
        process = ReferenceProcess(environ, workers)
    except OSError:
        return None
    process.ask(request["checker"], request["seed"])
    return process.answer(timeout)


def beside(request: protocol.Request, environ: Mapping[str, str], workers: Workers,
           ahead: ReferenceProcess | None = None) -> tuple[
        protocol.Request, ReferenceProcess | None]:
    """The request to hand a worker, and the reference process asked for it (`ahead`, one
    started before, or a new one): a check's references are computed by the tutor's own
    process (the worker only says when learner code starts); a snippet is handed as it is,
    and `ahead` is closed."""
    if request["kind"] != "check":
        if ahead is not None:
            ahead.close()
        return request, None
    process = ahead if ahead is not None else ReferenceProcess(environ, workers)
    process.ask(request["checker"], request["seed"])
    return {**request, "reference": "tutor"}, process
