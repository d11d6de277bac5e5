"""A card candidate (`CardQuad`: an outline found and what was measured of it), and the plain
geometry that relates candidates to each other, to the frame and to the typical card."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt


# A card's long side over its short side seen flat is 1.56; a camera tilted by up to ~55 degrees
# foreshortens one side by cos(55) = 0.57, hence this wide window.
MIN_ASPECT = 0.85
MAX_ASPECT = 2.9
# Outline area over fitted-quad area: rounded corners cost ~2%, blur and noise a few more.
MIN_FILL = 0.85
BORDER_MARGIN = 3
# All four sides of a quad, as a bit mask (bit k: the side from corner k to corner k + 1).
ALL_SIDES = 0b1111


@dataclass(frozen=True)
class CardQuad:
    """A card outline found in an image.

    ``corners``: float32 (4, 2) (x, y) image pixels, clockwise from the card's top-left with the
    card read portrait (first edge a short one). ``partial``: the card is cut by the image edge.
    """

    corners: npt.NDArray[np.float32]
    partial: bool
    score: float
    paper: tuple[float, float, float] = (0.0, 0.0, 0.0)  # typical BGR of the card's paper
    # A guess (cut out of a blob along straight edges, or found in a second look around the
    # cards already found): any other candidate for the place wins.
    guess: bool = False
    # How strongly the symbols stand out of the paper: the 99th percentile of the difference
    # from the paper over the card's middle, over the paper's brightness.
    ink: float = 0.0
    # Cut by the frame edge and judged paper only along its other sides (see `_card_quad`).
    judged_without_frame_side: bool = False
    # A guess outlined round its symbols (`cards_from_symbols`): weighed as a plain candidate
    # in the merge, and not hidden by a quad far larger than a card (a sheet it lies on).
    from_symbols: bool = False
    # Partly covered (a hand over it): completed from the paper in view (`covered_cards`);
    # reported partial (not wholly in view), its reading uncertain.
    covered: bool = False
    center: npt.NDArray[np.float32] = field(init=False, repr=False, compare=False)
    area: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", self.corners.sum(axis=0) / 4)  # np.mean costs 5x more
        object.__setattr__(self, "area", float(cv2.contourArea(self.corners)))


def lies_inside(quad: CardQuad, other: CardQuad) -> bool:
    """Whether ``quad`` is a small part of ``other`` (under half its area, centred inside it):
    a symbol of that card, or a piece of it."""
    return (quad.area < 0.5 * other.area
            and cv2.pointPolygonTest(other.corners.reshape(-1, 1, 2), tuple(map(float, quad.center)), False) > 0)


def rescaled(cards: list[CardQuad], scale: float) -> list[CardQuad]:
    """Cards found in an image resized by ``scale``, in the original image's pixels."""
    if scale == 1.0:
        return cards
    return [dataclasses.replace(card, corners=(card.corners / scale).astype(np.float32))
            for card in cards]


@dataclass(frozen=True)
class Region:
    """A part of the image (uint8 0/255 (H, W) ``mask``) with its integral image, to ask
    cheaply whether a box touches it."""

    mask: npt.NDArray[np.uint8]
    integral: npt.NDArray[np.int32]

    @classmethod
    def of(cls, mask: npt.NDArray[np.uint8]) -> Region:
        return cls(mask, cv2.integral(mask // 255))

    def touches(self, x: int, y: int, w: int, h: int) -> bool:
        """Whether the box at (x, y) of size (w, h) holds any pixel of the region."""
        i = self.integral
        return bool(i[y + h, x + w] - i[y, x + w] - i[y + h, x] + i[y, x] > 0)


SQUARE5 = np.ones((5, 5), np.uint8)


def holds_several(quad: CardQuad, cards: list[CardQuad]) -> bool:
    """Whether two or more of the ``cards`` lie inside ``quad``: it outlines a block of cards."""
    return sum(lies_inside(card, quad) for card in cards) >= 2


def clear_of_frame(corners: npt.NDArray[np.float32], width: int, height: int) -> bool:
    """Whether every corner of a quad lies in a ``width`` x ``height`` image at least the border
    margin in from its edges (the converse margin of `lies_in_view`)."""
    return bool(corners[:, 0].min() >= BORDER_MARGIN and corners[:, 1].min() >= BORDER_MARGIN
                and corners[:, 0].max() <= width - 1 - BORDER_MARGIN
                and corners[:, 1].max() <= height - 1 - BORDER_MARGIN)


def clear_inside(corners: npt.NDArray[np.float32], taken: npt.NDArray[np.uint8], width: int,
                 height: int) -> bool:
    """Whether a quad lies inside the image and at most a fifth over the cards ``taken`` (an
    outline estimated from symbols may reach a little over the touching cards)."""
    if not clear_of_frame(corners, width, height):
        return False
    # (Drawn only in its bounding box: this runs for every outline tried.)
    outline = np.round(corners).astype(np.int32)
    x, y, w, h = cv2.boundingRect(outline)
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, outline - [x, y], 255)
    return np.count_nonzero(inside & taken[y:y + h, x:x + w]) <= 0.2 * np.count_nonzero(inside)
SQUARE3 = np.ones((3, 3), np.uint8)


def frame_edges_touched(box: tuple[int, int, int, int], shape: tuple[int, ...]
                        ) -> tuple[bool, bool, bool, bool]:
    """Which edges of an image of ``shape`` a blob whose bounding box is ``box`` (x, y, w, h)
    reaches, within the border margin: top, bottom, left, right."""
    x, y, w, h = box
    height, width = shape[:2]
    return (y <= BORDER_MARGIN, y + h - 1 >= height - 1 - BORDER_MARGIN,
            x <= BORDER_MARGIN, x + w - 1 >= width - 1 - BORDER_MARGIN)


def inner_sides(corners: npt.NDArray[np.float32], width: int, height: int) -> int:
    """The sides of a quad in a ``width`` x ``height`` image that do not run along the image's
    edge, as a bit mask (bit k: the side from corner k to corner k + 1); never none."""
    return (ALL_SIDES & ~_frame_sides(corners, width, height)) or ALL_SIDES


def _frame_sides(corners: npt.NDArray[np.float32], width: int, height: int) -> int:
    """The sides of a quad in a ``width`` x ``height`` image that run along the image's edge, as
    a bit mask (bit k: the side from corner k to corner k + 1, for ordered corners the face's
    top, right, bottom, left)."""
    near = BORDER_MARGIN + 3.0
    at_edge = np.stack([corners[:, 0] <= near, corners[:, 1] <= near,
                        corners[:, 0] >= width - 1 - near, corners[:, 1] >= height - 1 - near], axis=1)
    sides = 0
    for k in range(4):
        if (at_edge[k] & at_edge[(k + 1) % 4]).any():
            sides |= 1 << k
    return sides


def quick_percentile(values: npt.NDArray[np.floating], fraction: float) -> float:
    """``np.percentile(values, 100 * fraction)`` (linear interpolation) of a 1-d array by
    partial sorting: several times faster on the few thousand values used here."""
    position = fraction * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    part = np.partition(values, (low, high))
    return float(part[low] + (position - low) * (part[high] - part[low]))


def overlap_pixels(a: CardQuad, b: CardQuad) -> tuple[int, int, int]:
    """Pixel counts of the intersection, of ``a`` and of ``b``, the quads drawn filled."""
    x, y, w, h = cv2.boundingRect(np.vstack([a.corners, b.corners]).astype(np.float32))
    canvas_a = np.zeros((h + 2, w + 2), np.uint8)
    canvas_b = np.zeros_like(canvas_a)
    offset = np.array([x, y], np.float32)
    cv2.fillConvexPoly(canvas_a, np.round(a.corners - offset).astype(np.int32), 1)
    cv2.fillConvexPoly(canvas_b, np.round(b.corners - offset).astype(np.int32), 1)
    return (np.count_nonzero(canvas_a & canvas_b), np.count_nonzero(canvas_a),
            np.count_nonzero(canvas_b))


def iou_estimate(a: CardQuad, b: CardQuad) -> float:
    inter, area_a, area_b = overlap_pixels(a, b)
    union = area_a + area_b - inter
    return inter / union if union else 0.0


def cut_sides(quad: CardQuad, image: npt.NDArray[np.uint8]) -> int:
    """The sides of a card cut by the frame edge that lie along it (`_frame_sides`), where a
    symbol the frame cuts may run to (`shows_symbols`); none for a whole card, or for a band
    across the whole image between opposite edges, which is no cut card."""
    cut = _frame_sides(quad.corners, image.shape[1], image.shape[0]) if quad.partial else 0
    return 0 if cut & (cut >> 2) else cut


def plain_unless_few(quads: list[CardQuad]) -> list[CardQuad]:
    """The quads that are not guesses, or all of them when fewer than three are."""
    plain = [q for q in quads if not q.guess]
    return plain if len(plain) >= 3 else quads


def size_mismatch(quad: CardQuad, typical_area: float) -> float:
    """How far a quad's area is from the typical card area, as the absolute log ratio."""
    return abs(float(np.log(max(quad.area, 1.0) / max(typical_area, 1.0))))


def covers(a: CardQuad, b: CardQuad) -> bool:
    """Whether quad ``a`` covers a fifth or more of quad ``b``."""
    inter, _, area_b = overlap_pixels(a, b)
    return inter > 0.2 * area_b


def overlaps(a: CardQuad, b: CardQuad) -> bool:
    """Whether either quad covers a fifth or more of the other (`covers` either way, with the
    quads drawn once)."""
    inter, area_a, area_b = overlap_pixels(a, b)
    return inter > 0.2 * min(area_a, area_b)


def centers_close(a: CardQuad, b: CardQuad) -> bool:
    distance = float(np.hypot(*(a.center - b.center)))
    return distance < 0.5 * np.sqrt(max(a.area, b.area))


def chromaticity(colour: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Chromaticity of a BGR colour (each channel over their sum): its tint without brightness.
    Of many colours at once along the last axis."""
    values = np.asarray(colour, dtype=np.float64)
    return values / np.maximum(values.sum(axis=-1, keepdims=True), 1e-6)


def off_grey(colour: npt.ArrayLike) -> float:
    """How far a BGR colour's tint is from grey: its largest channel share's distance from 1/3."""
    return float(np.abs(chromaticity(colour) - 1.0 / 3.0).max())


# Card paper's tint stays this close to grey (0.11 at most under the warm webcam light of the
# 12 labelled photos' cards; generated whole cards, warm and cool light: 99% within 0.09), where
# wood, felt and rugs are 0.11-0.15 off.
GREY_PAPER = 0.10


def areas_beside(whole: list[CardQuad]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The areas of the ``whole`` cards, and the median area of each one's three nearest."""
    centers = np.array([card.center for card in whole])
    areas = np.array([card.area for card in whole])
    distances = np.hypot(*(centers[:, None] - centers[None]).transpose(2, 0, 1))
    np.fill_diagonal(distances, np.inf)
    return areas, np.median(areas[np.argsort(distances, axis=1)[:, :3]], axis=1)


def lies_in_view(corners: npt.NDArray[np.float32], width: int, height: int) -> bool:
    """Whether every corner of a quad lies in a ``width`` x ``height`` image, give or take the
    border margin."""
    return bool((corners >= -BORDER_MARGIN).all() and (corners[:, 0] <= width - 1 + BORDER_MARGIN).all()
                and (corners[:, 1] <= height - 1 + BORDER_MARGIN).all())


# A flat SET card's long side over its short side (57 x 89 mm).
FLAT_ASPECT = 1.56


def span(corners: npt.NDArray[np.float32]) -> float:
    """The largest distance between two corners of a quad."""
    return float(max(np.linalg.norm(corners[i] - corners[j]) for i in range(4) for j in range(i + 1, 4)))


def diagonal(area: float, card_aspect: float) -> float:
    """The diagonal of a rectangle of ``area`` whose long side is ``card_aspect`` times its short
    one: no piece of such a card reaches further (a strip of pale table running from the frame
    edge to the cards does)."""
    return math.sqrt(area * (card_aspect + 1.0 / card_aspect))
