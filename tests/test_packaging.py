"""What an ordinary (non-editable) install ships: the course must travel with the package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_carries_the_lessons(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "hatchling" in result.stderr:
        result = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
             str(ROOT)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("gradtutor-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("gradtutor/_lessons/"))
    lessons = ROOT / "lessons"
    expected = sorted(f"gradtutor/_lessons/{p.relative_to(lessons).as_posix()}"
                      for p in lessons.rglob("*.yaml"))
    assert shipped == expected
    assert "gradtutor/__main__.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "gradtutor = gradtutor.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_lesson_ids_complete_in_the_shell() -> None:
    from gradtutor.cli import _complete_lesson

    assert _complete_lesson("g") == ["grad"]
    assert _complete_lesson("zz") == []
