"""The README is for the learner: short, its two commands first, and every link it and the
guides in docs/ give leads to a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_the_readme_is_short_and_starts_with_what_it_is_and_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150
    assert max(len(line) for line in lines if not line.startswith("|")) <= 100
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[0] == "## Two commands"
    assert 'python3 -m pip install torch==2.13.0 . && gradtutor start' in text
    assert 'python3 -m pip install torch==2.13.0 ".[test]" && python3 -m pytest' in text


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.name} links to {target}"
