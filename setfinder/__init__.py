"""setfinder: the command-line layer over the `core` rules and the `vision` pipeline."""

__version__ = "0.1.0"
