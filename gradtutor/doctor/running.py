"""Running the learner's script as `python SCRIPT` would, for the doctor's probe: torch hooked
the moment the script imports it, the script's traceback without the probe's frames, the line
of the script an error came from, and the events pipe the parent handed over.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import traceback
import types
from collections.abc import Callable, Sequence


class TorchWatcher(importlib.abc.MetaPathFinder):
    """Installs the recorder's observers when the script first imports torch."""

    def __init__(self, install: Callable[[types.ModuleType], object]) -> None:
        self.install = install

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        load = loader.exec_module
        install = self.install

        def exec_module(module: types.ModuleType) -> None:
            load(module)
            install(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def script_traceback(exc: BaseException, script: str) -> str:
    """The script's traceback as Python would print it, without the probe's frames."""
    tb = exc.__traceback__
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    if tb is None:  # it never ran (a syntax error, an unreadable file): the error alone
        return "".join(traceback.format_exception_only(type(exc), exc))
    return "".join(traceback.format_exception(type(exc), exc, tb))


def error_line(exc: BaseException, user_file: Callable[[str], bool]) -> str | None:
    """file:line of the last frame in the learner's own files that the error went through."""
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if user_file(frame.f_code.co_filename):
            found = f"{os.path.relpath(frame.f_code.co_filename)}:{line}"
    return found


def events_fd(channel: str) -> int:
    """The descriptor of the events pipe that `observe` handed over: a descriptor number, or
    on Windows an inherited handle (`handle:N`) opened as one."""
    if sys.platform == "win32" and channel.startswith("handle:"):
        import msvcrt

        return int(msvcrt.open_osfhandle(int(channel.removeprefix("handle:")), os.O_WRONLY))
    return int(channel)
