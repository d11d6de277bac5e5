"""Cards partly covered.

A hand reaching over the table hides part of a card: its paper in view has neither a card's
outline nor a card's size, so no map finds it. Where the table's plane is known, what shows is
enough: seen from above, the paper in view is a card's rectangle less what covers it, and two of
its sides still show, meeting at a corner (one whole, the other at least half): `covered_cards`.
"""

from __future__ import annotations

import math
from typing import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import (BORDER_MARGIN, CardQuad, Region, SQUARE5, chromaticity, clear_inside,
                                     plain_unless_few)
from vision.detect.paper import lab_distance, paper_fraction
from vision.detect.perspective import TablePlanes, to_plane, typical_area_model
from vision.quad import NEXT, grow_quad, order_corners, short_side


def covered_cards(cards: list[CardQuad], image: npt.NDArray[np.uint8],
                  paper_maps: Sequence[npt.NDArray[np.uint8]], region: Region | None = None
                  ) -> list[CardQuad]:
    """Cards partly covered (by a hand), each completed from the blob of paper it shows in one
    of the ``paper_maps`` (uint8 0/255; the paper-colour map first) outside the ``cards``
    found: on the table's plane (`TablePlanes`) the blob fits in a card's rectangle of the
    size the cards nearest show there, and of the places for the rectangle round it
    (`_card_round_blob`), the one whose outline runs along the blob's edges and nowhere across
    paper. Kept where nearly half the card or more is in view, two adjacent sides show (one along
    nearly all its length, the other along half), its margin in view is paper of the found
    cards' tint, and what hides the rest is not the table (`_hidden_by_table`). They are
    guesses, marked covered (reported not wholly in view, their reading uncertain)."""
    whole = [card for card in cards if not card.partial and not card.guess]
    if not whole:
        return []
    height, width = image.shape[:2]
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(grow_quad(card.corners, 1.5)).astype(np.int32), 255)
    typical = typical_area_model(plain_unless_few(whole))
    planes = TablePlanes(cards, unchecked=True)
    paper_tint = np.median([chromaticity(card.paper) for card in whole], axis=0)
    found: list[CardQuad] = []
    # (Each map in turn: on a pale wood or a felt, a covered card's paper runs into the table in
    # one map and stands apart in another.)
    for paper in paper_maps:
        loose = cv2.bitwise_and(paper, cv2.bitwise_not(taken))
        # (Opened: thin bridges to speckle of a patterned table, and slivers along the cards.)
        blobs = cv2.morphologyEx(loose, cv2.MORPH_OPEN, SQUARE5)
        count, labels, stats, centroids = cv2.connectedComponentsWithStats(blobs, connectivity=8)
        for label in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[label])
            center = centroids[label]
            if not _COVERED_SHOWN * typical(center) <= area <= _COVERED_BLOB * typical(center):
                continue
            if (x < BORDER_MARGIN or y < BORDER_MARGIN or x + w > width - BORDER_MARGIN
                    or y + h > height - BORDER_MARGIN):
                continue  # a card cut by the frame: another step's
            if region is not None and not region.mask[int(center[1]), int(center[0])]:
                continue
            plane = planes.nearest(center)
            if plane is None:
                continue
            blob = (labels[y:y + h, x:x + w] == label).astype(np.uint8)
            contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64) + (x, y)
            corners = _card_round_blob(plane, outline, _card_sides_on(plane, whole, center), loose)
            if corners is None or not clear_inside(corners, taken, width, height):
                continue
            corners = order_corners(corners)
            # (The blob's outline counts the symbols in it as in view, as a person does.)
            if cv2.contourArea(outline.astype(np.float32)) < _COVERED_SHOWN_OF_CARD * cv2.contourArea(corners):
                continue  # under half in view: a person would not count it either
            seen = _sides_shown(corners, loose)
            score, colour, ink = paper_fraction(image, corners, seen)
            if score < 0.6 or np.abs(chromaticity(colour) - paper_tint).max() > 0.04:
                continue
            if _hidden_by_table(image, corners, loose, seen):
                continue  # a small paper lying on the table: nothing covers the rest of the "card"
            # (Nothing over any side: a card in full view that the maps' outlines missed, read
            # as any other.)
            found.append(CardQuad(corners, False, score=score, paper=colour, ink=ink, guess=True,
                                  covered=_something_over_a_side(corners, loose, taken)))
            cv2.fillConvexPoly(taken, np.round(grow_quad(corners, 1.5)).astype(np.int32), 255)
    return found


# A covered card's blob in view is this fraction of the typical card's area at least (and at
# most a little over it), and this fraction of the outline completed round it.
_COVERED_SHOWN = 0.3
_COVERED_BLOB = 1.05
_COVERED_SHOWN_OF_CARD = 0.45


def _hidden_by_table(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32],
                     loose: npt.NDArray[np.uint8], shown: int) -> bool:
    """Whether what hides the rest of a card outline (its part off the paper in view) is of
    the table's colour, as the table shows just outside the outline's ``shown`` sides (bit k:
    the side from corner k to k + 1): then nothing covers a card there, and the paper is no
    card's part (a note, a torn scrap) but all there is. The outline is portrait-ordered
    (`order_corners`), so that it grows outward."""
    reach = max(3.0, 0.15 * short_side(corners))
    grown = grow_quad(corners, reach)
    # (In the grown outline's bounding box only: this runs for every card completed.)
    height, width = loose.shape
    x0, y0 = np.maximum(np.floor(grown.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(grown.max(axis=0)).astype(int) + 1, (width, height))
    offset = np.array([x0, y0], np.float32)
    not_paper = cv2.bitwise_not(loose[y0:y1, x0:x1])
    hidden = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(hidden, np.round(corners - offset).astype(np.int32), 255)
    hidden = cv2.erode(cv2.bitwise_and(hidden, not_paper), SQUARE5)
    beside = np.zeros_like(hidden)
    for k in range(4):
        if shown >> k & 1:
            strip = np.array([corners[k], corners[NEXT[k]], grown[NEXT[k]], grown[k]])
            cv2.fillConvexPoly(beside, np.round(grow_quad(order_corners(strip), -1.0) - offset).astype(np.int32), 255)
    beside = cv2.bitwise_and(beside, not_paper)
    if cv2.countNonZero(hidden) < 20 or cv2.countNonZero(beside) < 20:
        return False
    return lab_distance(image[y0:y1, x0:x1], hidden, beside) < _TABLE_ALIKE


# What hides a covered card is told from the table at this Lab distance. (Lightness counts in
# full: a hand over a dark wood table is of the wood's hue, only lighter.)
_TABLE_ALIKE = 10.0


def _card_sides_on(plane: npt.NDArray[np.float64], whole: list[CardQuad], point: npt.NDArray[np.float64]
                   ) -> tuple[float, float]:
    """A card's short and long side on the table seen from above (``plane``) near ``point``:
    the median of the three whole cards nearest it (a plane from one card is off by a few
    percent elsewhere)."""
    nearest = sorted(whole, key=lambda card: float(np.hypot(*(card.center - point))))[:3]
    sides = []
    for card in nearest:
        flat = to_plane(plane, card.corners.astype(np.float64))
        lengths = np.linalg.norm(flat - np.roll(flat, -1, axis=0), axis=1)
        sides.append(sorted([(lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2]))
    short, long = np.median(sides, axis=0)
    return float(short), float(long)


def _card_round_blob(plane: npt.NDArray[np.float64], outline: npt.NDArray[np.float64],
                     sides: tuple[float, float], loose: npt.NDArray[np.uint8]
                     ) -> npt.NDArray[np.float32] | None:
    """The card outline (float32 (4, 2), image pixels) a blob of paper (its ``outline``, (N, 2)
    image pixels) is the part in view of: on the table seen from above (``plane``), a
    rectangle of the card's ``sides`` along one of the blob's axes (`_blob_axes`), either way
    round, flush with the blob at either end of each axis it does not span; the one whose
    outline `_outline_support` bears out best. None where the blob fits no card, or no place is borne
    out."""
    flat = cv2.convexHull(to_plane(plane, outline).astype(np.float32)).reshape(-1, 2).astype(np.float64)
    back = np.linalg.inv(plane)
    best, best_score = None, -math.inf
    for first in _blob_axes(flat, sides[0]):
        second = np.array([-first[1], first[0]])
        along_first, along_second = flat @ first, flat @ second
        for length_first, length_second in (sides, sides[::-1]):
            if (np.ptp(along_first) > _COVERED_FIT * length_first
                    or np.ptp(along_second) > _COVERED_FIT * length_second):
                continue
            for middle_first in _flush_places(along_first, length_first):
                for middle_second in _flush_places(along_second, length_second):
                    middle = middle_first * first + middle_second * second
                    half_first, half_second = length_first / 2 * first, length_second / 2 * second
                    rectangle = middle + np.array([-half_first - half_second, half_first - half_second,
                                                   half_first + half_second, -half_first + half_second])
                    corners = to_plane(back, rectangle).astype(np.float32)
                    support = _outline_support(corners, loose)
                    if support is not None and support > best_score:
                        best, best_score = corners, support
    return best


def _blob_axes(hull: npt.NDArray[np.float64], short: float) -> list[npt.NDArray[np.float64]]:
    """The directions (unit vectors, each up to a quarter turn) a card's sides may take round
    a blob whose convex ``hull`` (N, 2) is seen from above: those of its rectangle of least
    area, and of its long straight edges (a card's sides in view; a finger's gap reaching out
    of the blob turns its least rectangle)."""
    _, _, least = cv2.minAreaRect(hull.astype(np.float32))
    angles = [math.radians(least)]
    edges = np.roll(hull, -1, axis=0) - hull
    for dx, dy in edges[np.hypot(edges[:, 0], edges[:, 1]) >= _AXIS_EDGE * short]:
        angles.append(math.atan2(dy, dx))
    axes: list[float] = []
    for angle in angles:
        angle %= math.pi / 2
        if all(min(abs(angle - other), math.pi / 2 - abs(angle - other)) > _SAME_AXIS for other in axes):
            axes.append(angle)
    return [np.array([math.cos(angle), math.sin(angle)]) for angle in axes]


# A straight edge of a blob this long (of a card's short side) may be a card's side; axes
# closer than this (radians, 3 degrees) are one.
_AXIS_EDGE = 0.3
_SAME_AXIS = math.radians(3)


# A blob spans at most this much of a card's side (the blob's edge is a pixel or two off).
_COVERED_FIT = 1.12


def _flush_places(extent: npt.NDArray[np.float64], length: float) -> list[float]:
    """Where along an axis a card's side of ``length`` lies round a blob's ``extent`` (its
    points' coordinates on the axis): its middle, flush with either end of the blob, or
    centred where the blob spans nearly all of it."""
    low, high = float(extent.min()), float(extent.max())
    if high - low >= _SPANNED * length:
        return [(low + high) / 2]
    return [low + length / 2, high - length / 2]


_SPANNED = 0.92


def _outline_support(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]) -> float | None:
    """How well a card outline fits the paper in view (``loose``, uint8 0/255): the fraction
    of points along its sides with paper just inside and none just outside, less twice the
    fraction with paper on both sides (the card would go on there); None where the paper
    crosses it anywhere much, or no two adjacent sides show, one along nearly all its length
    and the other along half (a blob's straight edges are a card's only where they meet at
    its corner)."""
    inside, outside = _paper_across_sides(corners, loose)
    shown = inside & ~outside
    crossed = inside & outside
    if crossed.mean() > _CROSSED_SIDES:
        return None
    along = shown.mean(axis=1)
    whole, most = along >= _SIDE_SHOWN, along >= _SIDE_HALF_SHOWN
    if not np.any((whole & np.roll(most, -1)) | (most & np.roll(whole, -1))):
        return None
    return float(shown.mean() - 2.0 * crossed.mean())


# Paper runs across this fraction of a covered card's outline at most, and of two adjacent
# sides, one shows along this fraction of its length at least, and the other half of its.
_CROSSED_SIDES = 0.02
_SIDE_SHOWN = 0.85
_SIDE_HALF_SHOWN = 0.5


def _something_over_a_side(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8],
                           taken: npt.NDArray[np.uint8]) -> bool:
    """Whether something lies over a card outline's margin along some side: just inside it,
    neither its paper in view (``loose``) nor a card found beside it (``taken``: a card laid
    against it in a grid hides none of it, though the maps give it that card's margin)."""
    on_paper, _ = _paper_across_sides(corners, loose)
    on_card, _ = _paper_across_sides(corners, taken)
    return bool(((~(on_paper | on_card)).mean(axis=1) > 1.0 - _SIDE_SHOWN).any())


def _sides_shown(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]) -> int:
    """The sides (bit k for the side from corner k to k + 1) of a card outline that show along
    most of their length: paper just inside and none just outside."""
    inside, outside = _paper_across_sides(corners, loose)
    along = (inside & ~outside).mean(axis=1)
    return sum(1 << k for k in range(4) if along[k] >= _SIDE_SHOWN)


def _paper_across_sides(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]
                        ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Whether ``loose`` is paper (4, K) just inside and just outside a quad, at K points
    along each of its sides (away from the corners), 4% of its short side in (2 pixels at
    least)."""
    height, width = loose.shape
    start = corners.astype(np.float64)
    end = np.roll(start, -1, axis=0)
    points = start[:, None] + _ALONG_SIDES[None, :, None] * (end - start)[:, None]      # (4, K, 2)
    direction = (end - start) / np.maximum(np.linalg.norm(end - start, axis=1, keepdims=True), 1e-9)
    normal = np.stack([-direction[:, 1], direction[:, 0]], axis=1)
    center = start.mean(axis=0)
    inward = np.where(((center - start) * normal).sum(axis=1, keepdims=True) >= 0, normal, -normal)
    step = max(2.0, 0.04 * short_side(corners))

    def paper_at(where: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        xs, ys = np.round(where[..., 0]).astype(int), np.round(where[..., 1]).astype(int)
        in_image = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
        return in_image & (loose[np.clip(ys, 0, height - 1), np.clip(xs, 0, width - 1)] > 0)

    return paper_at(points + step * inward[:, None]), paper_at(points - step * inward[:, None])


_ALONG_SIDES = np.linspace(0.08, 0.92, 20)
