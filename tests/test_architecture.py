"""docs/architecture.md's layout stays true: every module of the package is named in it, and
every module it names exists, so the map cannot go stale unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "gradtutor"


def layout_entries(text: str) -> dict[str, str]:
    """The layout's entries under `gradtutor/` (a module or a folder, as the line starts
    with it at two spaces' indent) and the words that describe each."""
    lines = text.split("```\n", 2)[1].splitlines()
    entries: dict[str, str] = {}
    current = ""
    for line in lines[lines.index("gradtutor/") + 1:]:
        if not line.startswith(" "):
            break
        if line.startswith("   "):
            entries[current] += " " + line.strip()
        else:
            current = line.split()[0]
            entries[current] = line[len(current) + 2:]
    return entries


def named_modules(entries: dict[str, str]) -> tuple[set[str], list[str]]:
    """The modules the entries name (paths under gradtutor/), and the names that are no
    module: a `name.py` is looked for in the entry's folder and the subfolders it names."""
    named: set[str] = set()
    unknown: list[str] = []
    for entry, words in entries.items():
        base = PACKAGE / entry.rstrip("/") if entry.endswith("/") else PACKAGE
        folders = [base, *(base / sub for sub in re.findall(r"\b(\w+)/", words)
                           if (base / sub).is_dir())]
        for name in [entry] * entry.endswith(".py") + re.findall(r"\b(\w+\.py)\b", words):
            found = [folder / name for folder in folders if (folder / name).is_file()]
            named.update(path.relative_to(PACKAGE).as_posix() for path in found)
            if not found:
                unknown.append(f"{entry}: {name}")
    return named, unknown


def test_the_architecture_layout_names_every_module_and_only_modules_that_exist() -> None:
    entries = layout_entries((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    named, unknown = named_modules(entries)
    modules = {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
               if not path.name.startswith("__")}
    assert sorted(modules - named) == [], "modules docs/architecture.md does not name"
    assert unknown == [], "names in docs/architecture.md that are no module"
    assert all((PACKAGE / entry).exists() for entry in entries)
