"""A card parted in pieces (a cable across it, a pale stripe under part of it): two pieces joined,
or one piece grown, into the card whose face they make (`pieces_joined`)."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import (CardQuad, FLAT_ASPECT, areas_beside, clear_of_frame, covers, diagonal,
                                     plain_unless_few)
from vision.detect.paper import card_face, paper_fraction
from vision.detect.perspective import typical_area_model
from vision.quad import fit_quad


def pieces_joined(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``cards`` with each two quads that are the pieces of one card replaced by the card (the
    converse of `doubles_halved`).

    A card can come apart in two: a cable or pen across it cuts its paper, and on a cloth with
    pale stripes of its paper's tone the part over a pale stripe merges with the table, its
    outline traced along the stripe's edge. Either piece can pass for a small card seen from
    the side (the size test allows well under the typical card, as perspective needs). Two
    pieces together fill a quad of the typical card's size and proportions, whose face is one
    card's: paper round centred symbols lying across it. Two whole small cards side by side
    are no such face (their symbols lie a quarter turn off), nor end to end (twice too long).
    A piece whose face is no card's, and whose other piece was not found, is grown to the card
    (`_grown_to_card`).
    """
    whole = [card for card in cards if not card.partial]
    if len(whole) < 4:
        return cards
    # (As in `doubles_halved`, the typical card's fit is made only where some card is well
    # smaller than its three nearest, as a piece is.)
    areas, beside = areas_beside(whole)
    if not (areas <= _SMALLER_THAN_BESIDE * beside).any():
        return cards
    typical = typical_area_model(plain_unless_few(whole))
    small = [card for card in whole if card.area <= _PIECE_AREA * typical(card.center)]
    joins = []
    for index, first in enumerate(small):
        for second in small[index + 1:]:
            reach = diagonal(typical((first.center + second.center) / 2), FLAT_ASPECT)
            if np.linalg.norm(first.center - second.center) > reach:
                continue
            outline = _joined_outline(first, second)
            if outline is None:
                continue
            area = float(cv2.contourArea(outline))
            typical_area = typical(outline.mean(axis=0))
            # (Pieces lying apart, or overlapping, fill their joined outline poorly.)
            if (first.area + second.area < _PIECES_FILL * area
                    or first.area + second.area > area / _PIECES_FILL
                    or abs(math.log(max(area, 1.0) / typical_area)) > _JOINED_SIZE):
                continue
            joined = card_face(image, outline)
            if joined is None:
                joined = card_face(_gap_painted_over(image, outline, first, second), outline)
            if joined is None or any(covers(joined, other) for other in whole
                                     if other is not first and other is not second):
                continue
            joins.append((abs(math.log(area / typical_area)), first, second, joined))
    used: set[int] = set()
    added = []
    for _, first, second, joined in sorted(joins, key=lambda join: join[0]):
        if id(first) in used or id(second) in used:
            continue
        used.update((id(first), id(second)))
        added.append(dataclasses.replace(joined, guess=first.guess and second.guess))
    # A piece whose other piece was not found (a pale stripe's part of the card lost in it):
    # grown across one of its sides to the typical card, where that makes one card's face.
    others = [card for card in cards if id(card) not in used] + added
    for piece in small:
        if id(piece) in used or card_face(image, piece.corners) is not None:
            continue  # (a card seen small, not a piece of one)
        grown = _grown_to_card(piece, typical, image,
                               [other for other in others if other is not piece and not other.partial])
        if grown is not None:
            used.add(id(piece))
            added.append(dataclasses.replace(grown, guess=True))
            others.append(grown)
    return [card for card in cards if id(card) not in used] + added


def _grown_to_card(piece: CardQuad, typical: Callable[[npt.NDArray[np.float32]], float],
                   image: npt.NDArray[np.uint8], cards: list[CardQuad]) -> CardQuad | None:
    """The card a piece of it grows to: the piece's outline with one side moved out until the
    quad is about the typical card's size, where the quad has a card's face (`card_face`),
    lies in the image and covers no other card; the one nearest the typical size, or None."""
    height, width = image.shape[:2]
    corners = piece.corners.astype(np.float64)
    target = typical(piece.center) / max(piece.area, 1.0) - 1.0
    best, best_mismatch = None, _JOINED_SIZE
    for side in range(4):
        # Side ``side`` (its corners a -> b) moves out along the two sides that meet it.
        a, b = side, (side + 1) % 4
        before_a, after_b = (side - 1) % 4, (side + 2) % 4
        for stretch in _GROWTH_STEPS:
            moved = corners.copy()
            moved[a] += stretch * target * (corners[a] - corners[before_a])
            moved[b] += stretch * target * (corners[b] - corners[after_b])
            outline = moved.astype(np.float32)
            if not clear_of_frame(outline, width, height):
                continue
            mismatch = abs(math.log(max(cv2.contourArea(outline), 1.0) / typical(outline.mean(axis=0))))
            if mismatch >= best_mismatch:
                continue
            face = card_face(image, outline)
            if face is None or any(covers(face, other) for other in cards):
                continue
            best, best_mismatch = face, mismatch
    return best


# A piece is grown by these fractions of what would make it the typical card's area.
_GROWTH_STEPS = (0.8, 1.0, 1.2)


def _gap_painted_over(image: npt.NDArray[np.uint8], outline: npt.NDArray[np.float32], first: CardQuad,
                      second: CardQuad) -> npt.NDArray[np.uint8]:
    """A copy of ``image`` with the gap between two pieces, within their joined ``outline``,
    painted their paper's colour: what parted them (a cable, a pen) lies across the card, and a
    dark line across the face from side to side is no printed symbol (bench 1130: a cable
    across a card of two ovals made two false cards of one oval each)."""
    x, y, w, h = cv2.boundingRect(np.round(outline).astype(np.int32))
    x0, y0 = max(x - _GAP_BORDER, 0), max(y - _GAP_BORDER, 0)
    x1, y1 = min(x + w + _GAP_BORDER, image.shape[1]), min(y + h + _GAP_BORDER, image.shape[0])
    gap = np.zeros((y1 - y0, x1 - x0), np.uint8)
    origin = np.float32([x0, y0])
    cv2.fillConvexPoly(gap, np.round(outline - origin).astype(np.int32), 255)
    for piece in (first, second):
        cv2.fillConvexPoly(gap, np.round(piece.corners - origin).astype(np.int32), 0)
    painted = image.copy()
    paper = np.mean([paper_fraction(image, piece.corners)[1] for piece in (first, second)], axis=0)
    painted[y0:y1, x0:x1][gap > 0] = np.clip(paper, 0, 255).astype(np.uint8)
    return painted


# The box round a joined outline copied and painted: a few pixels more each way.
_GAP_BORDER = 4


def _joined_outline(first: CardQuad, second: CardQuad) -> npt.NDArray[np.float32] | None:
    """The quad round two quads together (their convex hull, the gap between them taken in),
    or None where they make no quadrilateral."""
    corners = np.concatenate([first.corners, second.corners])
    origin = np.floor(corners.min(axis=0)) - 2
    size = np.ceil(corners.max(axis=0) - origin).astype(int) + 3
    mask = np.zeros((size[1], size[0]), np.uint8)
    # (Filled and traced again: the quad's sides are fitted to the points along them.)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.round(corners - origin).astype(np.int32)), 255)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = fit_quad(contours[0]) if contours else None
    return None if outline is None else outline + origin.astype(np.float32)


# A piece of a card is at most this fraction of the typical card's area there; two pieces fill
# at least this fraction of their joined outline, which is within this of the typical card's
# size (log area ratio). Pieces are looked for only where some card is at most this fraction
# of the median area of its three nearest.
_PIECE_AREA = 0.75
_PIECES_FILL = 0.85
_JOINED_SIZE = 0.25
_SMALLER_THAN_BESIDE = 0.8
