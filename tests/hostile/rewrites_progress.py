"""Tries to mark the whole course finished: rewrites the tutor's progress.json (found as the
tutor finds it: GRADTUTOR_HOME, else the per-user data folder), replaces it with a file
written in the working folder, appends to it, deletes it. Returns the wrong thing."""
import json
import os


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


home = os.environ.get("GRADTUTOR_HOME")
if not home:
    from platformdirs import user_data_dir

    home = user_data_dir("gradtutor", appauthor=False)
progress = os.path.join(home, "progress.json")
forged = json.dumps({"version": 1, "lessons": {"grad": {"done": True, "step": 99}}})
with open("forged.json", "w") as f:
    f.write(forged)
attempts = {
    "rewrite": lambda: write(progress, forged),
    "append": lambda: write(progress, " ", "a"),
    "replace": lambda: os.replace("forged.json", progress),
    "new file": lambda: write(os.path.join(home, "progress.json.new"), forged),
    "delete": lambda: os.remove(progress),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(f"{name}: done")
    except OSError as exc:
        print(f"{name}: refused ({exc.errno})")


def read_grad(w, loss_fn):
    return None
