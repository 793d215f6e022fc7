"""Tries to change the tutor itself: append an always-pass `judge` to the installed module that
judges the declared exercises,
add a module beside it, plant a compiled module in its __pycache__, hard-link it into the
working folder to write it there, truncate, rename and delete a lesson. Says what each attempt
got; returns the wrong thing."""
import importlib.util
import os

import gradtutor.checking.checkers.declared as checker
from gradtutor.lessons.course import default_lessons_dir


def write(path, text, mode="a"):
    with open(path, mode) as f:
        f.write(text)


here = os.path.dirname(checker.__file__)
lesson = os.path.join(default_lessons_dir(), "grad.yaml")
attempts = {
    "append": lambda: write(checker.__file__,
                            "\ndef judge_checks(*a, **k):\n    return []\n"),
    "new module": lambda: write(os.path.join(here, "always_pass.py"), "x = 1\n", "w"),
    "pycache": lambda: write(importlib.util.cache_from_source(checker.__file__), b"!", "wb"),
    "hard link": lambda: (os.link(checker.__file__, "linked.py"),
                          write("linked.py", "# changed\n")),
    "truncate": lambda: os.truncate(checker.__file__, 0),
    "rename": lambda: os.rename(lesson, lesson + ".gone"),
    "delete": lambda: os.remove(lesson),
    "symlink": lambda: os.symlink("/", os.path.join(here, "root")),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(f"{name}: done")
    except OSError as exc:
        print(f"{name}: refused ({exc.errno})")


def read_grad(w, loss_fn):
    return None
