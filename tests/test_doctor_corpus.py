"""`gradtutor doctor` judges every script of tests/doctor_corpus/ right: each problem family
is found where it is, and no problem is reported on a correct loop (the official examples'
MNIST loop, nanoGPT-like accumulation with clipping, a GAN, L-BFGS, manual SGD, Hugging
Face-style accumulation and more). Each script's first line says what it should get:
`# expect: ID ...`, or `# expect:` alone for a correct one.

The scripts run under the real probe, each in a process of its own, forked from one that has
imported torch once (tests/doctor_runner.py), so that the 28 of them take seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradtutor.doctor.judge import PROBLEM_IDS, Diagnosis, diagnose

CORPUS = Path(__file__).parent / "doctor_corpus"
SCRIPTS = sorted(path.name for path in CORPUS.glob("*.py"))
RUNNER = Path(__file__).parent / "doctor_runner.py"


def expected(name: str) -> set[str]:
    first = (CORPUS / name).read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect:"), f"{name} must say what it expects on its first line"
    return set(first.split(":", 1)[1].split())


@pytest.fixture(scope="module")
def judged() -> dict[str, Diagnosis]:
    result = subprocess.run([sys.executable, str(RUNNER), "20", *(str(CORPUS / name)
                                                                 for name in SCRIPTS)],
                            capture_output=True, text=True, timeout=600, check=True)
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    return {Path(run["script"]).name: diagnose(run["events"]) for run in runs}


def test_the_corpus_has_every_family_and_correct_loops() -> None:
    families = set().union(*(expected(name) for name in SCRIPTS))
    assert families == set(PROBLEM_IDS)
    assert sum(not expected(name) for name in SCRIPTS) >= 10


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_is_judged_right(judged: dict[str, Diagnosis], name: str) -> None:
    diagnosis = judged[name]
    found = {finding.id for finding in diagnosis.findings}
    assert found == expected(name), [(f.id, f.summary, f.evidence) for f in diagnosis.findings]
    assert diagnosis.fault is None
    if diagnosis.error is not None:  # only where the error is the problem found
        assert any(diagnosis.error in value for f in diagnosis.findings for _, value in f.evidence)
    assert diagnosis.steps + diagnosis.backwards > 0 or diagnosis.error is not None
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    for finding in diagnosis.findings:  # each names a line of the script, with code on it
        assert finding.where is not None and finding.where.startswith(name + ":")
        number = int(finding.where.rsplit(":", 1)[1])
        assert lines[number - 1].strip() and not lines[number - 1].lstrip().startswith("#")
        assert finding.evidence
