"""The `setfinder` console script: argparse subcommands over the library.

The CLI is thin: it parses arguments, calls `core` or `vision`, and prints. Library errors that a
user can fix become one line on stderr (`setfinder: error: ...`) and exit code 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

import setfinder.commands
from setfinder import __version__
from setfinder.errors import UserError


def _command_modules() -> list[ModuleType]:
    modules = [
        importlib.import_module(f"setfinder.commands.{info.name}")
        for info in pkgutil.iter_modules(setfinder.commands.__path__)
        if not info.name.startswith("_")
    ]
    return sorted(modules, key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="setfinder",
        description="Find every SET on a real table, referee a game, or play SET and 358.",
        epilog="Example: setfinder find sample_images/table-12-cards.jpg --out out/",
    )
    parser.add_argument("--version", action="version", version=f"setfinder {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except UserError as error:
        print(f"setfinder: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("setfinder: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
