"""The worked example in docs/authoring.md, an exercise written in YAML alone, is a lesson
that validates, proofs included; and a wrong solution of it does not."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gradtutor.checking.lesson_proofs import SEEDS

if TYPE_CHECKING:
    from conftest import Cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "authoring.md"


@pytest.mark.slow
def test_the_authoring_guide_example_validates(cli: Cli, tmp_path: Path) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    folder = tmp_path / "my-course"
    folder.mkdir()
    (folder / "intro.yaml").write_text(blocks[0] + blocks[1], encoding="utf-8")
    code, out, err = cli("validate", str(folder))
    proofs = 6 * len(SEEDS)  # the starter, the solution and 4 mutants, on each seed
    assert (code, out) == (0, f"[OK] 1 lesson OK (2 steps; {proofs} proofs passed)\n"), err


@pytest.mark.slow
def test_a_broken_reference_solution_fails_validate(cli: Cli, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    broken = (blocks[0] + blocks[1]).replace(
        "          total = w.grad\n          return first, total\n    hints",
        "          total = w.grad * 2\n          return first, total\n    hints")
    assert broken != blocks[0] + blocks[1]
    (tmp_path / "intro.yaml").write_text(broken, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("validate", "intro.yaml")
    assert code == 2
    lines = err.splitlines()
    assert any(line.startswith("intro.yaml:74:15: the solution does not pass (seed 0): "
                               "total-is-two-gradients: ") for line in lines), err
