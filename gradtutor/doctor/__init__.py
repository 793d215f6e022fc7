"""`gradtutor doctor`: the grad lesson applied to the learner's own training script.

probe.py runs inside the script's process and records what it does to gradients as plain
events; observe.py (the parent) starts it and reads them; judge.py (pure) turns the events
into findings. docs/doctor.md has the whole picture.
"""
