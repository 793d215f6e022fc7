"""What `gradtutor doctor` finds and what it costs.

First, on tests/doctor_corpus/ (each script's first line, `# expect: ID ...`, says the
problems it must get; `# expect:` alone, a correct script), per problem id: the scripts
that have it, those it was found in, and the scripts where it was reported without being
there (a false alarm); then the correct scripts given any problem, and the scripts that
could not run (a lost probe, a time-out, or an error or no backward pass with nothing said
of it: a script whose bug stops its backward pass, and is told so, ran).

Then the cost of a training step: the same script's steps timed by the script itself, run
as `python train.py` and as `gradtutor doctor train.py`, for a small model and for one with
about 1M parameters. Prints the time of a step each way and their ratio (the target: at most
1.5x on the 1M model). Start-up (importing torch, the first steps) is not counted: the
script times its steps after a warm-up.

    python benchmarks/doctor.py [--repeats 3] [--skip-corpus] [--skip-overhead]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = """
import time
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)  # steadier figures on a shared machine; the same both ways
model = nn.Sequential({layers})
print("parameters:", sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
x, y = torch.randn({batch}, {inputs}), torch.randn({batch}, {outputs})


def step():
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()


for _ in range(5):  # warm-up
    step()
start = time.perf_counter()
for _ in range({steps}):
    step()
print("STEP_SECONDS", (time.perf_counter() - start) / {steps})
"""

CASES = {
    "small (Linear 20-64-1)": dict(layers="nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1)",
                                   batch=64, inputs=20, outputs=1, steps=200),
    "1M parameters (MLP 784-1024-256-10)": dict(
        layers="nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 256), nn.ReLU(), "
               "nn.Linear(256, 10)", batch=64, inputs=784, outputs=10, steps=40),
}


def step_seconds(command: list[str], cwd: Path) -> tuple[float, str]:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                            timeout=600)
    found = re.search(r"STEP_SECONDS (\S+)", result.stdout)
    if found is None:
        raise SystemExit(f"no timing from {command}:\n{result.stdout}\n{result.stderr}")
    params = re.search(r"parameters: (\d+)", result.stdout)
    return float(found.group(1)), params.group(1) if params else "?"


ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "doctor_corpus"


def corpus() -> None:
    """Found per problem id, false alarms and runs that failed, over the corpus, each script
    run under the real probe (tests/doctor_runner.py: one torch import, a fork a script)."""
    import json

    from gradtutor.doctor.judge import PROBLEM_IDS, diagnose

    scripts = sorted(CORPUS.glob("*.py"))
    expected = {path.name: set(path.read_text(encoding="utf-8").splitlines()[0]
                               .split(":", 1)[1].split()) for path in scripts}
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "doctor_runner.py"), "20",
                          *map(str, scripts)], capture_output=True, text=True, timeout=1200,
                         check=True)
    found: dict[str, set[str]] = {}
    failed = []
    for line in run.stdout.splitlines():
        events = json.loads(line)
        name = Path(events["script"]).name
        diagnosis = diagnose(events["events"])
        found[name] = {f.id for f in diagnosis.findings}
        told = diagnosis.findings or diagnosis.notes
        if diagnosis.ending in ("lost", "timeout") or (
                diagnosis.ending == "error" and not told) or (
                not diagnosis.backwards and not told):
            failed.append(name)
    print(f"corpus: {len(scripts)} scripts, "
          f"{sum(1 for e in expected.values() if not e)} correct")
    print(f"{'problem':22} {'scripts':>8} {'found':>6} {'false alarms':>13}")
    for problem in PROBLEM_IDS:
        having = [n for n, e in expected.items() if problem in e]
        hits = [n for n in having if problem in found.get(n, set())]
        alarms = [n for n, f in found.items() if problem in f and problem not in expected[n]]
        if having or alarms:
            print(f"{problem:22} {len(having):8} {len(hits):6} {len(alarms):13}"
                  + (f"  ({', '.join(alarms)})" if alarms else ""))
    wrongly = [n for n, e in expected.items() if not e and found.get(n)]
    print(f"correct scripts given a problem: {len(wrongly)}"
          + (f" ({', '.join(wrongly)})" if wrongly else ""))
    print(f"could not run: {len(failed)}" + (f" ({', '.join(failed)})" if failed else ""))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    repeats = args.repeats
    if not args.skip_corpus:
        corpus()
    if args.skip_overhead:
        return
    print(f"{'script':40} {'params':>9} {'plain ms':>9} {'doctor ms':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        for name, case in CASES.items():
            (where / "train.py").write_text(SCRIPT.format(**case), encoding="utf-8")
            plain, doctored = [], []
            params = "?"
            for _ in range(repeats):  # interleaved, so that a busy moment hits both
                seconds, params = step_seconds([sys.executable, "train.py"], where)
                plain.append(seconds)
                seconds, _ = step_seconds([sys.executable, "-m", "gradtutor", "doctor",
                                           "--steps", "10000", "train.py"], where)
                doctored.append(seconds)
            a, b = statistics.median(plain), statistics.median(doctored)
            print(f"{name:40} {params:>9} {a * 1000:9.3f} {b * 1000:10.3f} {b / a:5.2f}x")


if __name__ == "__main__":
    main()
