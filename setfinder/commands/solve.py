"""`setfinder solve`: every SET among cards typed as words."""

from __future__ import annotations

import argparse
import json
import sys

from core.cards import CardParseError, explain, find_sets, parse_cards
from setfinder.commands.play import render_cards, use_color
from setfinder.errors import UserError

NAME = "solve"
ORDER = 30


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        NAME, help="find every SET among cards given as words",
        description="Find every SET among cards written as words, separated by ';' or new lines.\n"
                    "Words may be plural and may use the rule sheets' synonyms (pill, empty, shaded,\n"
                    "filled ...). Card ids in the output are 1-based, in the order given.",
        epilog='Example: setfinder solve "2 red striped oval; 1 green solid diamond; '
               '3 purple outline squiggle"\n         setfinder solve - < table.txt',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cards", help="the cards, ';'-separated, or '-' to read them from standard input")
    parser.add_argument("--explain", action="store_true",
                        help="say feature by feature why each SET is one")
    parser.add_argument("--json", action="store_true",
                        help='machine output: {"cards": [...], "sets": [{"ids": [1-based], "cards": [...]}]}')
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the board with ANSI codes (default: when writing to a terminal)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.cards == "-" else args.cards
    try:
        cards = parse_cards(text)
    except CardParseError as error:
        raise UserError(f"{error}; separate cards with ';'") from None
    if not cards:
        raise UserError('no cards given; write them like "2 red striped oval; 1 green solid diamond"')
    sets = find_sets(cards)
    if args.json:
        print(json.dumps({
            "cards": [str(card) for card in cards],
            "sets": [{"ids": [i + 1 for i in s], "cards": [str(cards[i]) for i in s],
                      "explanation": explain(*(cards[i] for i in s))} for s in sets],
        }, indent=1))
        return 0
    print(render_cards(cards, color=use_color(args.color, sys.stdout)))
    print()
    if not sets:
        print(f"No SET among {len(cards)} cards: deal three more.")
        if len(cards) == 3:
            print(explain(*cards))
        return 0
    print(f"{len(sets)} SET{'s' if len(sets) != 1 else ''} among {len(cards)} cards:")
    for i, j, k in sets:
        print(f"  {i + 1:>2} {j + 1:>2} {k + 1:>2}:  {cards[i]} + {cards[j]} + {cards[k]}")
        if args.explain:
            print(f"            {explain(cards[i], cards[j], cards[k])}")
    return 0
