"""The registry of checkers that lesson YAML may name. A lesson can only pick from these;
it never carries checker code.

Each checker module defines:

- ``FUNCTION``: the name of the function the learner defines;
- ``ARITY``: how many positional parameters that function takes;
- ``cases(seed) -> list[dict]``: plain-data inputs, from ``random.Random(seed)``; no torch;
- ``expected(case) -> dict``: the reference result, computed with the real torch *before*
  any learner code is loaded, by a short-lived process of the worker's own (never in the
  process that runs learner code);
- ``observe(case, fn, trace) -> dict``: calls the learner's ``fn`` on fresh tensors built
  from ``case`` (in the worker, after the learner's file is loaded) and returns plain data:
  values via ``trace.values``, events from ``trace.events`` (a copy; a checker adds events
  of its own with ``trace.note``);
- ``judge(cases, expected, observed) -> list[Check]``: the pass/fail decision, in the
  tutor's process, from plain data only (no torch). Its messages, hints and evidence words
  are ``msg()`` templates with the run's numbers and names as fields, each translated in
  ``gradtutor/locale/zh-CN/feedback.yaml``; the checker tests fail on any that is not.

Only ``judge`` runs in the tutor; the other functions import torch and run in the worker.
"""

from __future__ import annotations

import importlib
from types import ModuleType

CHECKERS: dict[str, str] = {
    "read-grad": "read_grad",
    "none-before-backward": "none_before_backward",
    "two-backwards": "two_backwards",
    "accumulate-micro-batches": "accumulate_micro_batches",
    "fix-the-loop": "fix_the_loop",
    "manual-sgd": "manual_sgd",
    "set-to-none": "set_to_none",
    "grad-health": "grad_health",
}


def load(name: str) -> ModuleType:
    """The checker module registered under `name` (KeyError if there is none)."""
    return importlib.import_module(f"{__name__}.{CHECKERS[name]}")
