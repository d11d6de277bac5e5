"""A dependency-free progress bar for long work (training, benchmarks, batches)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], total: int | None = None, label: str = "",
             stream: TextIO | None = None) -> Iterator[T]:
    """Yield ``items`` while drawing a one-line bar on stderr (only when stderr is a terminal).

    Example: ``for path in progress(paths, label="reading"): ...``
    """
    stream = stream or sys.stderr
    if total is None:
        total = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    interactive = stream.isatty()
    start = time.monotonic()
    last_draw = 0.0
    done = 0
    for done, item in enumerate(items, 1):
        yield item
        now = time.monotonic()
        if interactive and (now - last_draw > 0.1 or done == total):
            last_draw = now
            _draw(stream, label, done, total, now - start)
    if interactive:
        _draw(stream, label, done, total, time.monotonic() - start)
        stream.write("\n")
        stream.flush()


def _draw(stream: TextIO, label: str, done: int, total: int | None, elapsed: float) -> None:
    if total:
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        text = f"\r{label} [{bar}] {done}/{total} {elapsed:5.1f}s"
    else:
        text = f"\r{label} {done} {elapsed:5.1f}s"
    stream.write(text)
    stream.flush()
