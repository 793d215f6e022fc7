"""Which units (rows) of each parameter have had a gradient, for the doctor's `dead-units`
rule: kept inside the learner's process by the probe, over a window of steps. torch comes in
as an argument: this module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class UnitWatch:
    """Per parameter: which of its units ever got a nonzero gradient since the window began.
    The window starts anew at steps 1, 2, 4, 8, ..., so it always covers at least the later
    half of the steps so far: a unit that dies halfway is seen, and one idle on a batch or
    two is not."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.alive: dict[int, Any] = {}
        self.all_alive: set[int] = set()  # parameters whose every unit has had one
        self.window = 1  # the step the window started at

    def count(self, step: int, pids: Sequence[int], grads: Sequence[Any]
              ) -> dict[int, tuple[int, int]]:
        """At optimizer step `step` (from 1): per parameter (`pids`, with their `grads`), how
        many of its units have had an exactly zero gradient at every step of the window, and
        how many it has."""
        torch = self.torch
        if step & (step - 1) == 0:  # a power of two
            self.alive, self.all_alive, self.window = {}, set(), step
        rows = [(pid, g) for pid, g in zip(pids, grads, strict=True)
                if g is not None and not g.is_sparse and g.dim() >= 1 and g.shape[0] > 1]
        counted = [(pid, g) for pid, g in rows if pid not in self.all_alive]
        found = {pid: (0, int(g.shape[0])) for pid, g in rows}
        if counted:
            with torch.no_grad():
                for pid, g in counted:
                    now = (g.detach().reshape(g.shape[0], -1) != 0).any(1)
                    seen = self.alive.get(pid)
                    self.alive[pid] = now if seen is None or seen.shape != now.shape \
                        else seen | now
                never = torch.stack([(~self.alive[pid]).sum().to("cpu")
                                     for pid, _ in counted]).tolist()
            for (pid, g), n in zip(counted, never, strict=True):
                found[pid] = (int(n), int(g.shape[0]))
                if n == 0:
                    self.all_alive.add(pid)
        return found
