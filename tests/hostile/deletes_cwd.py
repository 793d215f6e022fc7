"""Fills the working directory, locks parts of it, deletes what it can, and says where it
was so the test can see that the tutor removed it anyway."""
import os

with open(os.path.join(os.environ["GRADTUTOR_TEST_PIDDIR"], "deletes_cwd.cwd"), "w") as f:
    f.write(os.getcwd())
os.makedirs("locked/inner")
with open("locked/inner/data.txt", "w") as f:
    f.write("x")
os.chmod("locked/inner", 0)
os.chmod("locked", 0o500)
for name in os.listdir("."):
    if os.path.isfile(name):
        os.remove(name)
with open("readonly.txt", "w") as f:
    f.write("y")
os.chmod("readonly.txt", 0o400)
os.chmod(".", 0o500)


def read_grad(w, loss_fn):
    return None
