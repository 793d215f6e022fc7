"""Fills the working directory, locks parts of it (where chmod is allowed: Linux's walls
refuse it), deletes what it can, and says where it was so the test can see that the tutor
removed it anyway."""
import contextlib
import os


def lock(path, mode):
    with contextlib.suppress(PermissionError):
        os.chmod(path, mode)


with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "deletes_cwd.cwd"), "w") as f:
    f.write(os.getcwd())
os.makedirs("locked/inner")
with open("locked/inner/data.txt", "w") as f:
    f.write("x")
lock("locked/inner", 0)
lock("locked", 0o500)
for name in os.listdir("."):
    if os.path.isfile(name):
        os.remove(name)
with open("readonly.txt", "w") as f:
    f.write("y")
lock("readonly.txt", 0o400)
lock(".", 0o500)


def read_grad(w, loss_fn):
    return None
