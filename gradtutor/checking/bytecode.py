"""A function's bytecode instructions, read once per code object: the checks that read how
learner code was written (a method named but not called, a `return ....backward()`) ask for
the same function's instructions on every case of a check."""

from __future__ import annotations

import dis
import functools
import types


@functools.lru_cache(maxsize=256)
def _read(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    return tuple(i for i in dis.get_instructions(code) if i.opname != "CACHE")


def instructions(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    """`code`'s instructions (CACHE entries left out). Equal code objects (the same source
    compiled twice) share one reading; a code object is immutable, so a reading never goes
    stale. Raises what `dis` raises on odd code."""
    return _read(code)
