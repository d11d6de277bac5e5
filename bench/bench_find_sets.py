"""Median time of `find_sets` on 12, 15, 21 and 81 cards, beside a plain triple loop.

Both are measured in the same run on the same random boards, so the ratio holds on any machine.
Prints a markdown table (the one the README quotes).

    python bench/bench_find_sets.py [--repeats 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from core.cards import Card, find_sets, full_deck, is_set

Finder = Callable[[Sequence[Card]], list[tuple[int, int, int]]]


def triple_loop(cards: Sequence[Card]) -> list[tuple[int, int, int]]:
    """The baseline: test every triple with `is_set` (n^3 / 6 tests)."""
    return [(i, j, k) for i, j, k in itertools.combinations(range(len(cards)), 3)
            if is_set(cards[i], cards[j], cards[k])]


def median_seconds(finders: Sequence[Finder], boards: list[list[Card]], repeats: int) -> list[float]:
    """Median seconds per board for each finder, over ``repeats`` timings.

    The finders take turns within each repeat, so a busy machine slows them alike and the ratio
    stays fair; each timing runs every board several times to stay well above the clock's grain.
    """
    loops = max(1, 4000 // len(boards[0]) ** 2)
    times: list[list[float]] = [[] for _ in finders]
    for _ in range(repeats):
        for finder, spent in zip(finders, times):
            start = time.perf_counter()
            for board in boards:
                for _ in range(loops):
                    finder(board)
            spent.append((time.perf_counter() - start) / (len(boards) * loops))
    return [statistics.median(spent) for spent in times]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=200, help="timings per size (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"find_sets vs triple loop: median of {args.repeats} timings; Python {platform.python_version()} "
          f"on {platform.machine()}")
    print()
    print("| cards | find_sets | triple loop | speed-up |")
    print("|---:|---:|---:|---:|")
    for size in (12, 15, 21, 81):
        boards = [rng.sample(full_deck(), size) for _ in range(20 if size < 81 else 1)]
        for board in boards:  # same answers, or the timing means nothing
            assert find_sets(board) == triple_loop(board)
        repeats = args.repeats if size < 81 else max(5, args.repeats // 10)
        fast, slow = median_seconds([find_sets, triple_loop], boards, repeats)
        print(f"| {size} | {fast * 1e6:,.1f} µs | {slow * 1e6:,.1f} µs | {slow / fast:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
