"""Median time of `find_sets` on 12, 15, 21 and 81 cards, beside a plain triple loop.

A second baseline, `itertools.combinations` with `is_set`, is the fastest all-triples loop we know.

All three run in turns on the same random boards in the same run, so the ratios hold on any machine.
Prints a markdown table (the one the README quotes).

    python bench/bench_find_sets.py [--repeats 1000] [--seed 1]
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
    """The baseline: a plain triple loop testing every triple with `is_set` (n^3 / 6 tests)."""
    found = []
    n = len(cards)
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                if is_set(cards[i], cards[j], cards[k]):
                    found.append((i, j, k))
    return found


def combinations_loop(cards: Sequence[Card]) -> list[tuple[int, int, int]]:
    """A tighter baseline: every triple from `itertools.combinations`, tested with `is_set`."""
    return [(i, j, k) for i, j, k in itertools.combinations(range(len(cards)), 3)
            if is_set(cards[i], cards[j], cards[k])]


def median_seconds(finders: Sequence[Finder], boards: list[list[Card]], repeats: int) -> list[float]:
    """Median seconds per board for each finder, over ``repeats`` timings.

    The finders take turns within each repeat, so a busy machine slows them alike. Each timing
    is short (every board once), so that most timings run without being preempted by other
    processes and the median is the uncontended time.
    """
    times: list[list[float]] = [[] for _ in finders]
    for _ in range(max(10, repeats // 10)):  # warm up: caches, and the interpreter's specialising
        for finder in finders:
            for board in boards:
                finder(board)
    for _ in range(repeats):
        for finder, spent in zip(finders, times):
            start = time.perf_counter()
            for board in boards:
                finder(board)
            spent.append((time.perf_counter() - start) / len(boards))
    return [statistics.median(spent) for spent in times]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1000, help="timings per size (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"find_sets vs all-triples loops: median of {args.repeats} timings; Python {platform.python_version()} "
          f"on {platform.machine()}")
    print()
    print("| cards | find_sets | triple loop | speed-up | combinations loop | speed-up |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in (12, 15, 21, 81):
        boards = [rng.sample(full_deck(), size) for _ in range(20 if size < 81 else 1)]
        for board in boards:  # same answers, or the timing means nothing
            assert find_sets(board) == triple_loop(board) == combinations_loop(board)
        repeats = args.repeats if size < 81 else max(5, args.repeats // 20)
        fast, slow, tight = median_seconds([find_sets, triple_loop, combinations_loop], boards, repeats)
        print(f"| {size} | {fast * 1e6:,.1f} µs | {slow * 1e6:,.1f} µs | {slow / fast:.1f}x "
              f"| {tight * 1e6:,.1f} µs | {tight / fast:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
