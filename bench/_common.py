"""Helpers shared by the benchmarks: where the labelled data lives, medians, markdown tables."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def labelled_boards() -> list[tuple[str, Path, list[str]]]:
    """(data set, photo path, card labels in reading order) for every labelled table photo."""
    boards = []
    for dataset in ("set-photos", "errcw-set-solver"):
        index = SHARED_DATA / dataset / "boards.json"
        if not index.is_file():
            continue
        for name, entry in sorted(json.loads(index.read_text()).items()):
            boards.append((dataset, SHARED_DATA / dataset / "boards" / name, list(entry["cards"])))
    return boards


def median_ms(function: Callable[[], Any], repeats: int = 15, warmup: int = 2) -> float:
    """Median wall time of ``function()`` in milliseconds over ``repeats`` runs."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)
