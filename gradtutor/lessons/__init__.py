"""Lessons as data: the typed model, the YAML loader and the course that holds them."""
