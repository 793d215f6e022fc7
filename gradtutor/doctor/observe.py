"""The parent's side of `gradtutor doctor`: start the learner's script under the probe, read
its events, keep the time limit, and end the process when it is done.

The script is the learner's own, on their own machine: it runs unconfined, in their folder,
with their stdin, and its output passes through (or goes nowhere, quiet). Only the probe's
private pipe carries events; nothing here writes a file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg

EXIT_GRACE = 5.0  # seconds the script may take to wind down once the probe has its report
EVENTS_CAP = 64 * 1024 * 1024  # bytes of events read at most


@dataclass(frozen=True)
class Observation:
    events: tuple[Mapping[str, Any], ...]
    ending: str | None  # 'timeout' or 'lost' when the parent ended it; else the probe's word
    returncode: int | None


def probe_command(script: Path, args: Sequence[str], steps: int, channel: str) -> list[str]:
    """`python -m gradtutor.doctor.probe CHANNEL STEPS SCRIPT ARGS`; CHANNEL names the events
    pipe's write end (a descriptor, or `handle:N` on Windows)."""
    return [sys.executable, "-m", "gradtutor.doctor.probe", channel, str(steps), str(script),
            *args]


def observe(script: Path, args: Sequence[str], steps: int, timeout: float, quiet: bool,
            output_to_stderr: bool = False) -> Observation:
    """Runs `python SCRIPT ARGS` under the probe until it ends, is stopped after `steps`
    steps, or `timeout` seconds pass."""
    if not script.is_file():
        raise GradtutorError(msg("no such script: {path}", path=script),
                             msg("give the path of your training script, as for `python "
                                 "SCRIPT`"))
    read_end, write_end = os.pipe()
    out: Any = subprocess.DEVNULL if quiet else (sys.stderr if output_to_stderr else None)
    try:
        passed, options = _hand_over(write_end)
        process = subprocess.Popen(
            probe_command(script, args, steps, passed), stdout=out,
            stderr=subprocess.DEVNULL if quiet else None, **options)
    except OSError as exc:
        os.close(read_end)
        raise GradtutorError(msg("cannot start Python to run {path} ({error})", path=script,
                                 error=exc.strerror or type(exc).__name__),
                             msg("check that {python} runs", python=sys.executable)) from None
    finally:
        os.close(write_end)
    events: list[Mapping[str, Any]] = []
    finished = threading.Event()
    reader = threading.Thread(target=_read_events, args=(read_end, events, finished),
                              daemon=True)
    reader.start()
    ending = None
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None:
            if finished.is_set():  # the report is complete: the script has a moment to end
                try:
                    process.wait(EXIT_GRACE)
                except subprocess.TimeoutExpired:
                    _kill(process)
                break
            if time.monotonic() > deadline:
                ending = "timeout"
                _kill(process)
                break
            finished.wait(0.05)
    except KeyboardInterrupt:
        _kill(process)
        raise
    process.wait()
    reader.join(2.0)
    if ending is None and not any(e.get("e") == "end" for e in events):
        ending = "lost"  # killed by a signal, os._exit, or a crash of Python itself
    return Observation(tuple(events), ending, process.returncode)


def _hand_over(fd: int) -> tuple[str, dict[str, Any]]:
    """How the probe gets the write end of the events pipe, and the Popen options that give
    it: on POSIX the descriptor itself, in a session of its own (so the script's workers end
    with it); on Windows the pipe's handle, made inheritable and handed to that child only,
    in a process group of its own."""
    if sys.platform == "win32":
        import msvcrt

        handle = msvcrt.get_osfhandle(fd)
        os.set_handle_inheritable(handle, True)
        info = subprocess.STARTUPINFO()
        info.lpAttributeList = {"handle_list": [handle]}
        return f"handle:{handle}", {"startupinfo": info, "close_fds": True,
                                    "creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return str(fd), {"pass_fds": (fd,), "start_new_session": True}


def _read_events(fd: int, events: list[Mapping[str, Any]], finished: threading.Event) -> None:
    size = 0
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as stream:
        for line in stream:
            size += len(line)
            if size > EVENTS_CAP:
                break
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
                if event.get("e") == "end":
                    finished.set()
    finished.set()


def _kill(process: subprocess.Popen[Any]) -> None:
    """Ends the script and whatever it started (data loader workers)."""
    if sys.platform == "win32":
        process.kill()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
