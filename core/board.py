"""What the vision pipeline saw on the table, in rules terms: the hand-over point to the rules core.

A `Board` is plain data (no pixels): each card's best reading, its four corners in image pixels,
how sure the reader was, and whether the card was cut by the frame edge. The rules questions
(which SETs, or is it "no SET") are answered here with `find_sets`, so photo mode, live mode and
the referee all reach the same verdict from the same board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.cards import Card, find_sets

Point = tuple[float, float]
Corners = tuple[Point, Point, Point, Point]
Verdict = Literal["sets", "no-set", "uncertain"]


@dataclass(frozen=True)
class SeenCard:
    """One card found in an image.

    ``corners`` are (x, y) image pixels, clockwise from the card's top-left as the card is read
    (portrait, symbols stacked vertically). ``confidence`` is the lowest of the per-attribute
    confidences in ``attribute_confidence`` (count, color, shading, shape), each in [0, 1].
    ``uncertain`` is set when any attribute fell below its threshold: the reading is then a best
    guess and must not be trusted for a "no SET" call. ``partial`` cards are not wholly in
    view (cut by the frame edge, or partly under a hand); they are outlined but never read as
    part of a SET.
    """

    card: Card
    corners: Corners
    confidence: float
    partial: bool = False
    uncertain: bool = False
    attribute_confidence: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def center(self) -> Point:
        xs = [p[0] for p in self.corners]
        ys = [p[1] for p in self.corners]
        return (sum(xs) / 4.0, sum(ys) / 4.0)

    @property
    def is_readable(self) -> bool:
        """Read whole and with confidence: fit to decide SETs with."""
        return not self.partial and not self.uncertain


@dataclass(frozen=True)
class Board:
    """Every card seen in one image, in reading order (rows top to bottom, left to right).

    Position numbers shown to people are 1-based: ``board.cards[i]`` has id ``i + 1``.
    """

    cards: tuple[SeenCard, ...]
    width: int
    height: int

    @property
    def playable(self) -> list[int]:
        """Indices of the cards that take part in SETs (whole cards, partial ones left out)."""
        return [i for i, seen in enumerate(self.cards) if not seen.partial]

    def sets(self) -> list[tuple[int, int, int]]:
        """Every SET among the whole cards, as sorted 0-based index triples into ``cards``."""
        playable = self.playable
        found = find_sets([self.cards[i].card for i in playable])
        return [(playable[a], playable[b], playable[c]) for a, b, c in found]

    def certain_sets(self) -> list[tuple[int, int, int]]:
        """The SETs made only of cards read with confidence."""
        return [s for s in self.sets() if all(self.cards[i].is_readable for i in s)]

    @property
    def verdict(self) -> Verdict:
        """"sets" when a SET of confidently read cards is there; "no-set" only when every card
        was read with confidence and none form a SET; otherwise "uncertain"."""
        if self.certain_sets():
            return "sets"
        if any(not seen.is_readable for seen in self.cards) or not self.cards:
            return "uncertain"
        return "no-set"
