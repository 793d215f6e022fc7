"""How long a test waits for a condition before it calls it a failure.

A passing test waits only as long as its condition takes; a ceiling is reached only when
something is wrong. So ceilings are generous, never a measure of speed: the suite must pass
on a loaded machine too (`python benchmarks/under_load.py` runs it with a CPU burner on each
core), where a 5-second wait for a screen or a 10-second wait for a stopped check was seen to
run out (load 10-12, 2 cores). Speed is the benchmarks' business.
"""

PATIENCE_S = 180.0  # a process to start, a check to end, a screen to be drawn
HANG_S = 60.0  # what a check may take beyond its own time limit before it counts as hung


def as_from_a_terminal() -> None:
    """A child's `preexec_fn`: SIGINT, SIGHUP and SIGQUIT at their defaults, as a tutor started
    from a terminal has them, whatever started the suite. `nohup` leaves SIGHUP ignored, and a
    shell without job control starts a background job with SIGINT and SIGQUIT ignored; a child
    inherits an ignored signal, and the tutor rightly keeps it ignored (so does Python for
    SIGINT), so a test that sends it one would wait in vain (seen: the suite run by
    `nohup ... &` hung on every such test)."""
    import signal

    for name in ("SIGINT", "SIGHUP", "SIGQUIT"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.SIG_DFL)
