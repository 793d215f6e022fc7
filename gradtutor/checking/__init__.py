"""Checking learner code: an isolated worker runs it, pure judges decide from plain data."""
