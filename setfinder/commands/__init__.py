"""One module per subcommand.

Each module defines ``NAME`` (the subcommand), ``ORDER`` (its place in ``--help``) and
``register(subparsers)``, which adds its parser and sets ``run=function(args) -> int``.
The CLI finds the modules here by itself, so adding a command touches no other file.
"""
