"""The input families a declared exercise (`declared.py`) may name in `inputs:`, by that name.
Each family is one module of this package that owns its whole registration, its `FAMILY`
(a `family.Family`); this table only collects them, and tests/test_families.py fails when a
module's `FAMILY` is missing here or an entry here has no module of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from gradtutor.checking.checkers import (
    checkpoint_facts,
    clip_facts,
    eval_facts,
    grad_reading,
    gradient_kinds,
    graph_facts,
    model_facts,
    param_groups,
    tensor_facts,
    training,
    values_facts,
)
from gradtutor.checking.checkers.family import Family

FAMILIES: Mapping[str, Family] = {
    "fresh-leaf": grad_reading.FAMILY,
    "param-groups": param_groups.FAMILY,
    "gradient-kinds": gradient_kinds.FAMILY,
    "training": training.FAMILY,
    "leaf-fn": tensor_facts.FAMILY,
    "values-fn": values_facts.FAMILY,
    "squared-error": graph_facts.FAMILY,
    "model-setup": model_facts.FAMILY,
    "clip-step": clip_facts.FAMILY,
    "evaluation": eval_facts.FAMILY,
    "checkpoint": checkpoint_facts.FAMILY,
}
