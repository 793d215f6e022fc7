"""gradtutor: a terminal tutor for learning how PyTorch's .grad behaves."""

__version__ = "0.1.0"
