"""What changed on the table between two readings of it, and the position numbers people see.

The referee never sees hands move: it sees one `Board`, then another. This module compares two
readings card by card (by value: a deck holds each card once) and says which cards left, which
arrived, which were read twice, and which changed value at the same place (the same physical card
read differently, when nobody took it). It also keeps the numbers people call cards by stable:
1-based, in reading order, and unchanged while the same cards lie on the table, even if the
recogniser's reading order jitters between frames.

Pure standard library; no pixels, only the corners the recogniser reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.board import Corners, Point, SeenCard
from core.cards import Card


@dataclass(frozen=True)
class TableChange:
    """The difference between two readings of the table.

    ``left`` were on the table before and are not now; ``arrived`` the reverse (both as multisets,
    in the order they are listed on their table). ``in_place`` pairs a card that left with one that
    arrived where it lay, as ``(left, arrived)``: a dealer's replacement after a SET, or, when
    nothing was taken, the same card read differently.
    """

    left: tuple[Card, ...]
    arrived: tuple[Card, ...]
    in_place: tuple[tuple[Card, Card], ...]

    @property
    def is_empty(self) -> bool:
        return not self.left and not self.arrived


def compare_tables(before: Sequence[SeenCard], after: Sequence[SeenCard]) -> TableChange:
    """Which cards left and which arrived between the table ``before`` and the table ``after``."""
    remaining = Counter(seen.card for seen in after)
    left_seen: list[SeenCard] = []
    for seen in before:
        if remaining[seen.card] > 0:
            remaining[seen.card] -= 1
        else:
            left_seen.append(seen)
    kept = Counter(seen.card for seen in before)
    arrived_seen: list[SeenCard] = []
    for seen in after:
        if kept[seen.card] > 0:
            kept[seen.card] -= 1
        else:
            arrived_seen.append(seen)
    in_place: list[tuple[Card, Card]] = []
    unmatched = list(arrived_seen)
    for gone in left_seen:
        for new in unmatched:
            if inside_corners(new.center, gone.corners):
                in_place.append((gone.card, new.card))
                unmatched.remove(new)
                break
    return TableChange(
        left=tuple(seen.card for seen in left_seen),
        arrived=tuple(seen.card for seen in arrived_seen),
        in_place=tuple(in_place),
    )


def repeated_cards(table: Sequence[SeenCard]) -> dict[Card, list[int]]:
    """Cards read more than once, each with its 1-based positions: ``{card: [3, 8]}``.

    One deck holds each card once, so a repeat is a misreading (or a second deck on the table).
    """
    positions: dict[Card, list[int]] = {}
    for position, seen in enumerate(table, 1):
        positions.setdefault(seen.card, []).append(position)
    return {card: where for card, where in positions.items() if len(where) > 1}


def number_table(previous: Sequence[SeenCard], seen: Sequence[SeenCard]) -> tuple[SeenCard, ...]:
    """The cards of a new reading in the order people number them (position = index + 1).

    While the same cards lie on the table (the same multiset of values as ``previous``), each
    keeps its previous number even if the recogniser listed them in another order; the fresh
    readings (corners, confidence) are kept. Once the cards change, the new reading order stands.
    """
    if Counter(s.card for s in previous) != Counter(s.card for s in seen):
        return tuple(seen)
    pool = list(seen)
    ordered: list[SeenCard] = []
    for old in previous:
        # A card value can repeat only through a misreading; the nearest reading then keeps the number.
        candidates = [s for s in pool if s.card == old.card]
        best = min(candidates, key=lambda s: _distance(s.center, old.center))
        pool.remove(best)
        ordered.append(best)
    return tuple(ordered)


def _distance(a: Point, b: Point) -> float:
    return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)


def inside_corners(point: Point, corners: Corners) -> bool:
    """True when ``point`` lies inside the quadrilateral ``corners`` (x, y; either winding)."""
    x, y = point
    inside = False
    for i in range(4):
        (x1, y1), (x2, y2) = corners[i], corners[(i + 1) % 4]
        if (y1 > y) != (y2 > y):
            crossing = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < crossing:
                inside = not inside
    return inside
