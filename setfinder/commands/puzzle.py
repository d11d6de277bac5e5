"""`setfinder puzzle`: a board with exactly k SETs to find (the rule sheets' practice puzzle)."""

from __future__ import annotations

import argparse
import json
import random
import sys

from core.odds import make_puzzle
from setfinder.commands.play import render_cards, use_color
from setfinder.errors import UserError

NAME = "puzzle"
ORDER = 50


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        NAME, help="a board with exactly k SETs to find",
        description="Lay out a puzzle board holding exactly the given number of SETs: by default 12 "
                    "cards with 6 SETs; with --easy the German sheet's practice puzzle, 9 solid cards "
                    "with 4 SETs.",
        epilog="Example: setfinder puzzle --sets 6 --seed 1 --solution")
    parser.add_argument("--sets", type=int, default=None, help="how many SETs (default 6; 4 with --easy)")
    parser.add_argument("--cards", type=int, default=None, help="board size (default 12; 9 with --easy)")
    parser.add_argument("--easy", action="store_true", help="only the 27 solid cards")
    parser.add_argument("--seed", type=int, default=None, help="random seed, for the same puzzle again")
    parser.add_argument("--solution", action="store_true", help="also print the SETs")
    parser.add_argument("--json", action="store_true",
                        help='machine output: {"cards": [...], "sets": [[1-based ids], ...]}')
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the board with ANSI codes (default: when writing to a terminal)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    n_sets = args.sets if args.sets is not None else (4 if args.easy else 6)
    n_cards = args.cards if args.cards is not None else (9 if args.easy else 12)
    try:
        puzzle = make_puzzle(n_sets, n_cards, random.Random(args.seed), easy=args.easy)
    except ValueError as error:
        raise UserError(str(error)) from None
    if args.json:
        print(json.dumps({"cards": [str(c) for c in puzzle.cards],
                          "sets": [[i + 1 for i in s] for s in puzzle.sets]}, indent=1))
        return 0
    print(render_cards(puzzle.cards, color=use_color(args.color, sys.stdout)))
    print()
    print(f"Find the {n_sets} SET{'s' if n_sets != 1 else ''} among these {n_cards} cards.")
    if args.solution:
        for i, j, k in puzzle.sets:
            print(f"  {i + 1:>2} {j + 1:>2} {k + 1:>2}:  "
                  f"{puzzle.cards[i]} + {puzzle.cards[j]} + {puzzle.cards[k]}")
    return 0
