"""How long a test waits for a condition before it calls it a failure.

A passing test waits only as long as its condition takes; a ceiling is reached only when
something is wrong. So ceilings are generous, never a measure of speed: the suite must pass
on a loaded machine too (`python benchmarks/under_load.py` runs it with a CPU burner on each
core), where a 5-second wait for a screen or a 10-second wait for a stopped check was seen to
run out (load 10-12, 2 cores). Speed is the benchmarks' business.
"""

PATIENCE_S = 180.0  # a process to start, a check to end, a screen to be drawn
HANG_S = 60.0  # what a check may take beyond its own time limit before it counts as hung
