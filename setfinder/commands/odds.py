"""`setfinder odds`: how likely a table holds a SET, by simulation, beside the rule sheets' odds."""

from __future__ import annotations

import argparse
import json
import math
import random

from core.odds import SHEET_ODDS, Rate, estimate_no_set_rate, odds_for, simulate_play
from setfinder.errors import UserError
from setfinder.progress import progress

NAME = "odds"
ORDER = 60


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        NAME, help="simulate how likely 12 and 15 cards hold a SET",
        description="Estimate by simulation how likely 12 and 15 random cards contain a SET, and "
                    "how often a table without a SET comes up in real play (whole solitaire games "
                    "in which a SET is always taken when there is one), beside the rule sheets' "
                    '"about 33 : 1" and "about 2500 : 1". Ranges are 95 percent intervals.',
        epilog="Example: setfinder odds --trials 1000000 --games 5000 --seed 1")
    parser.add_argument("--trials", type=int, default=200_000,
                        help="random tables drawn for each size (default 200000)")
    parser.add_argument("--games", type=int, default=2_000, help="whole games played (default 2000)")
    parser.add_argument("--seed", type=int, default=None, help="random seed, for repeatable figures")
    parser.add_argument("--json", action="store_true", help="machine output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.trials < 1 or args.games < 1:
        raise UserError("--trials and --games must be positive")
    rng = random.Random(args.seed)
    random_tables = {size: estimate_no_set_rate(size, args.trials, rng) for size in (12, 15)}
    bar = iter(progress(range(args.games), label="games"))

    def tick(_game: int) -> None:
        next(bar, None)

    play = simulate_play(args.games, rng, on_game=tick)
    for _ in bar:  # let the bar finish its line
        pass
    if args.json:
        print(json.dumps({
            "seed": args.seed,
            "random_tables": {str(size): {**rate.to_json(), "odds": _json_odds(rate),
                                          "sheet_odds": SHEET_ODDS[size]}
                              for size, rate in random_tables.items()},
            "play": play.to_json(),
        }, indent=1))
        return 0
    print(f"Random tables ({args.trials} of each size): odds that the table holds a SET")
    print(f"  {'cards':>5}  {'without a SET':>17}  {'odds (95% range)':<30}  rule sheets")
    for size, rate in random_tables.items():
        print(f"  {size:>5}  {_share(rate):>17}  {_odds_text(rate):<30}  about {SHEET_ODDS[size]:g} : 1")
    print()
    print(f"In play ({play.games} whole solitaire games; a SET is always taken when there is one):")
    for size, rate in play.tables.items():
        if rate.trials:
            print(f"  {size:>2}-card tables without a SET: {_share(rate)}   odds {_odds_text(rate)}")
    print(f'  games with at least one "no SET": {_percent(play.games_with_no_set)}')
    total = sum(play.leftover.values())
    left = ", ".join(f"{cards} cards {100 * n / total:.1f}%" for cards, n in sorted(play.leftover.items()))
    print(f"  cards left at the end: {left}  (rule sheets: 6 to 9)")
    return 0


def _share(rate: Rate) -> str:
    return f"{rate.hits}/{rate.trials}"


def _percent(rate: Rate) -> str:
    low, high = rate.interval
    return f"{100 * rate.proportion:.1f}% ({100 * low:.1f}-{100 * high:.1f}%)"


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def _odds_text(rate: Rate) -> str:
    estimate, low, high = odds_for(rate)
    return f"{_fmt(estimate)} : 1 ({_fmt(low)}-{_fmt(high)})"


def _json_odds(rate: Rate) -> dict[str, float | None]:
    estimate, low, high = odds_for(rate)
    return {k: (None if math.isinf(v) else v) for k, v in (("estimate", estimate), ("low", low), ("high", high))}
