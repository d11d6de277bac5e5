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


def labelled_boards_or_exit() -> list[tuple[str, Path, list[str]]]:
    """`labelled_boards`, or exit saying why when ../shared/data is absent."""
    boards = labelled_boards()
    if not boards:
        raise SystemExit("no labelled photos: ../shared/data is absent")
    return boards


def add_model_option(parser: Any) -> None:
    """The --model option of the benchmarks that read cards (argparse ``parser``)."""
    parser.add_argument("--model", help="card_reader.json to use (default: models/card_reader.json)")


def recognizer_for(model: str | None) -> Any:
    """A `vision.recognize.Recognizer` reading with the card reader in ``model`` (a path to a
    card_reader.json), or with the shipped one when None."""
    from vision.cardreader import CardReader
    from vision.recognize import Recognizer

    return Recognizer(CardReader.load(model) if model else None)


def set_names(cards: Sequence[Any]) -> set[frozenset[str]]:
    """The SETs among ``cards`` (core.Card), each as the set of its three cards' names."""
    from core import find_sets

    return {frozenset(str(cards[i]) for i in triple) for triple in find_sets(list(cards))}


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
