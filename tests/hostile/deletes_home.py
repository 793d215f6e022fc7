"""Tries to delete every file in the home folder and every other submission beside the
learner's own file (and that file too), and to write a file into each of those folders.
Returns the wrong thing."""
import os
import sys

folders = [os.path.expanduser("~"), os.path.dirname(os.path.abspath(sys.argv[0]))]
for folder in folders:
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        try:
            os.remove(path)
            print(f"deleted {name}")
        except OSError as exc:
            print(f"{name}: refused ({exc.errno})")
    try:
        with open(os.path.join(folder, "planted.txt"), "w") as f:
            f.write("x")
        print(f"planted in {folder}")
    except OSError as exc:
        print(f"planting: refused ({exc.errno})")


def read_grad(w, loss_fn):
    return None
