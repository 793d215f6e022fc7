"""How well `gradtutor ask` finds the step that answers a learner's question, and how fast.

    python benchmarks/ask.py [--set benchmarks/ask_questions.yaml] [--misses] [--lessons DIR]

For each question of a set (benchmarks/ask_questions.yaml: the questions this project wrote
the way beginners ask; benchmarks/ask_heldout.yaml: questions in real beginners' wording
written blind to everything else, measured but never tuned on), the answer of the course:
top-1 and top-3 (an answering step among the first three cited) for covered questions,
English and Chinese apart, the share of off-course questions answered "not covered", and
how many answers would carry an exercise's fix (must be 0). Then the time of one answer
(p50, p95) over every question, after the index is built, and the time to build it (the
first question of a run pays it). `--misses` lists the questions it got wrong.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import yaml

from gradtutor.asking import guard
from gradtutor.asking.answer import answer
from gradtutor.asking.index import load
from gradtutor.checking.exercise_rules import EXERCISE_RULES

HERE = Path(__file__).parent


def questions(path: Path) -> list[dict[str, object]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for entry in data["questions"]:
        off = entry.get("off", entry.get(False))  # a bare `off:` is YAML 1.1's False
        out.append({"q": entry["q"], "lang": entry["lang"], "steps": entry.get("steps"),
                    "off": off})
    return out


def measure(path: Path, folder: Path | None, misses: bool) -> dict[str, float]:
    began = time.perf_counter()
    index, exercises = load(folder, EXERCISE_RULES)
    built = time.perf_counter() - began
    asked = questions(path)
    times, leaks = [], 0
    tally: dict[str, list[int]] = {"en": [0, 0, 0], "zh": [0, 0, 0]}  # n, top1, top3
    off_n = off_ok = 0
    wrong: list[str] = []
    for entry in asked:
        q = str(entry["q"])
        start = time.perf_counter()
        found = answer(index, q, lang="zh-CN" if entry["lang"] == "zh" else "en",
                       exercises=exercises)
        times.append(time.perf_counter() - start)
        said = " ".join([found.sentences, *(c.passage for c in found.steps),
                         *(c.snippet or "" for c in found.steps)])
        leaks += any(guard.shows_solution(said, e) for e in exercises)
        cited = [f"{c.doc.lesson}/{c.doc.step}" for c in found.steps]
        if entry["off"]:
            off_n += 1
            off_ok += not found.covered
            if found.covered:
                wrong.append(f"OFF  {q[:90]!r} -> {cited}")
            continue
        right = set(entry["steps"] or ())  # type: ignore[arg-type]
        row = tally[str(entry["lang"])]
        row[0] += 1
        row[1] += bool(cited) and cited[0] in right
        hit3 = bool(right & set(cited[:3]))
        row[2] += hit3
        if not hit3:
            wrong.append(f"MISS {q[:90]!r} -> {cited or 'not covered'} want {sorted(right)}")
        elif cited[0] not in right:
            wrong.append(f"2ND  {q[:90]!r} -> {cited} want {sorted(right)}")
    n_cov = tally["en"][0] + tally["zh"][0]
    top1_all = (tally["en"][1] + tally["zh"][1]) / max(1, n_cov)
    ms = sorted(t * 1000 for t in times)
    print(f"{path.name}: {len(asked)} questions ({tally['en'][0]} covered en, "
          f"{tally['zh'][0]} covered zh, {off_n} off-course)")
    for lang, (n, top1, top3) in tally.items():
        if n:
            print(f"  {lang}: top-1 {top1 / n:.0%} ({top1}/{n}), top-3 {top3 / n:.0%} "
                  f"({top3}/{n})")
    print(f"  all covered: top-1 {top1_all:.0%}")
    if off_n:
        print(f"  off-course answered 'not covered': {off_ok / off_n:.0%} ({off_ok}/{off_n})")
    print(f"  answers carrying a solution: {leaks}")
    print(f"  one answer: p50 {statistics.median(ms):.1f} ms, "
          f"p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms; the index built (course read in "
          f"two languages) in {built * 1000:.0f} ms")
    if misses:
        print("\n".join("    " + line for line in wrong))
    return {"top1": top1_all}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", dest="sets")
    parser.add_argument("--lessons", type=Path, default=None)
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    for path in args.sets or [HERE / "ask_questions.yaml", HERE / "ask_heldout.yaml"]:
        measure(path, args.lessons, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
