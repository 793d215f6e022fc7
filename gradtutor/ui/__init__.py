"""The terminal side of the shell: the model as Rich renderables, the walkthrough's screens,
and the keys and terminal they are read from and drawn on."""
