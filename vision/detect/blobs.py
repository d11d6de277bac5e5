"""Card outlines from the blobs of a binary map (`quads_in_mask`): a quadrilateral fitted to each
blob and scored as a card; blobs of touching cards opened by erosion or cut along their straight
inner edges; a card cut by the frame with the notches its symbols leave closed.
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import warp_card
from vision.detect.candidate import (CardQuad, GREY_PAPER, MAX_ASPECT, MIN_ASPECT, MIN_FILL, Region,
                                     cut_sides, frame_edges_touched, inner_sides, off_grey)
from vision.detect.maps import Maps
from vision.detect.paper import lab_distance, paper_fraction
from vision.features import segment_ink, shows_symbols
from vision.quad import aspect, fit_quad, grow_quad, order_corners


def quads_in_mask(mask: npt.NDArray[np.uint8], maps: Maps, found: list[CardQuad], inset: float,
                  smallest: float = 0.0, region: Region | None = None) -> list[CardQuad]:
    """Card-like quads among the blobs of one binary map of ``maps.image``, skipping blobs
    already in ``found``, blobs under ``smallest`` pixels and blobs outside ``region`` (if given)."""
    image = maps.image
    height, width = mask.shape
    image_area = height * width
    min_area = image_area * 0.0015
    max_area = image_area * 0.8
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    if hierarchy is None:
        return []
    # Outlines of blobs, not of holes inside blobs, with enough points to enclose the smallest
    # card: an outline of n points (steps of at most sqrt(2) pixels) encloses at most
    # n^2 / (2 pi) pixels, and noisy maps hold hundreds of specks.
    points = np.fromiter(map(len, contours), dtype=np.int64, count=len(contours))
    enough = np.sqrt(2 * np.pi * max(min_area, smallest))
    blobs = np.flatnonzero((hierarchy[0][:, 3] == -1) & (points >= enough))
    quads = []
    for contour in (contours[i] for i in blobs):
        area = cv2.contourArea(contour)
        if not max(min_area, smallest) <= area <= max_area:
            continue
        if region is not None and not region.touches(*cv2.boundingRect(contour)):
            continue
        (cx, cy), (rw, rh), _ = cv2.minAreaRect(contour)
        if any(abs(q.center[0] - cx) + abs(q.center[1] - cy) < 0.05 * (rw + rh)
               and 0.9 < q.area / (rw * rh) < 1.1 for q in found):
            continue  # the same card, already found in an earlier map
        quad = _card_quad(contour, area, image, inset) if area >= _RECTANGLE_FILL * rw * rh else None
        if quad is None:
            quad = _cut_card_with_notches_closed(contour, image, inset)
        if quad is not None:
            quads.append(quad)
        elif area >= 2 * min_area and not _is_band(area, rw, rh):
            parts = _split_blob(contour, mask.shape, image, inset, min_area)
            if not parts:
                parts = _split_along_edges(contour, image, maps.edges, min_area)
            quads.extend(parts)
    return quads


def _cut_card_with_notches_closed(contour: npt.NDArray[np.int32], image: npt.NDArray[np.uint8],
                                  inset: float) -> CardQuad | None:
    """The cut card a blob at the frame edge traces once the notches it opens onto the frame edge
    are closed, as a guess; None when it touches no frame edge or is no card even so.

    The frame cuts a card anywhere, often through a symbol: the symbol's ink then opens the
    card's paper onto the frame edge, a notch that makes the cut card look too little like a
    quad to be one. Along the frame, a card's paper runs straight from one of its sides to the
    other. Pale stripes of a cloth joined by the cards on them close into a block just as well:
    the block must show a symbol, and is only a guess, which any plain candidate for the place
    outweighs. A card cut through its only symbol shows that symbol running to the frame edge
    (`cut_sides`): there, what filled the notches must be ink, not the table between the
    stripes.
    """
    x, y, w, h = cv2.boundingRect(contour)
    top, bottom, left, right = frame_edges_touched((x, y, w, h), image.shape)
    if not (top or bottom or left or right):
        return None
    blob = np.zeros((h, w), np.uint8)
    cv2.drawContours(blob, [contour - [x, y]], -1, 255, -1)
    before = cv2.countNonZero(blob)
    paper = blob.copy()
    for touches, line in ((top, blob[0]), (bottom, blob[-1]), (left, blob[:, 0]), (right, blob[:, -1])):
        on = np.flatnonzero(line)
        if touches and len(on):
            line[on[0]:on[-1] + 1] = 255
    outlines, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    closed = max(outlines, key=cv2.contourArea)
    area = cv2.contourArea(closed)
    if area <= before or not _fills_its_rectangle(closed, area):
        return None
    quad = _card_quad(closed + np.array([x, y], np.int32), area, image, inset)
    if quad is None:
        return None
    face = segment_ink(warp_card(image, quad.corners))
    if not shows_symbols(face) and not (
            shows_symbols(face, open_sides=cut_sides(quad, image)) and not _notches_are_table(closed, paper, image, (x, y))):
        return None
    return dataclasses.replace(quad, guess=True)


def _notches_are_table(closed: npt.NDArray[np.int32], paper: npt.NDArray[np.uint8],
                       image: npt.NDArray[np.uint8], origin: tuple[int, int]) -> bool:
    """Whether the notches a blob of ``paper`` (a mask whose top-left lies at ``origin`` in the
    image) opened onto the frame edge, filled by its ``closed`` outline (in the mask's
    coordinates), are of the colour of the table just outside that outline."""
    pad = _NOTCH_RING
    x, y = origin
    height, width = paper.shape
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + width + pad, image.shape[1]), min(y + height + pad, image.shape[0])
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(inside, [closed + [x - x0, y - y0]], -1, 255, -1)
    notches = inside.copy()
    notches[y - y0:y - y0 + height, x - x0:x - x0 + width] &= ~paper
    ring = cv2.dilate(inside, np.ones((2 * pad + 1, 2 * pad + 1), np.uint8)) & ~inside
    if not notches.any() or not ring.any():
        return False
    return lab_distance(image[y0:y1, x0:x1], notches, ring) < _NOTCH_TABLE_DISTANCE


# The ring of table round a closed cut card, in pixels, and the Lab distance (8-bit units) within
# which the notches are of its colour: on the dev scenes the notches of cut cards' symbols were
# 28-190 from the table (one cut card, a cable over it, at 6-9), those of blocks of pale stripes
# or patches joined by cards 7-10 (and some far further, which later tests drop).
_NOTCH_RING = 4
_NOTCH_TABLE_DISTANCE = 12.0


def _is_band(area: float, width: float, height: float) -> bool:
    """Whether a blob of ``area`` pixels whose smallest enclosing rectangle is ``width`` x
    ``height`` is a straight band, five times as long as it is wide and filling its rectangle:
    a stripe of a cloth or a strip of table, which is not split in search of cards (a striped
    cloth gives dozens, each costing milliseconds to split: 460 -> 270 ms on a generated
    frame; on the dev, fresh and bench scenes no card was lost, one more found)."""
    return max(width, height) > _BAND_ASPECT * min(width, height) and area > _BAND_FILL * width * height


_BAND_ASPECT = 5.0
_BAND_FILL = 0.8


def _card_quad(contour: npt.NDArray[np.int32], area: float, image: npt.NDArray[np.uint8],
               inset: float) -> CardQuad | None:
    """The card an outline traces, or None when the outline is not card-like."""
    height, width = image.shape[:2]
    quad = fit_quad(contour)
    if quad is None:
        return None
    quad_area = cv2.contourArea(quad)
    if quad_area <= 0 or not MIN_FILL <= area / quad_area <= 1.08:
        return None
    partial = any(frame_edges_touched(cv2.boundingRect(contour), image.shape))
    corners = order_corners(grow_quad(quad, inset))
    if not partial and not MIN_ASPECT <= aspect(corners) <= MAX_ASPECT:
        return None
    paper, colour, ink = paper_fraction(image, corners)
    without_frame_side = False
    if paper < 0.6 and not partial:
        # A small card's ring lies only 1-4 pixels in from its edge, and a map's blob may run
        # a pixel or two out over a table nearly as bright as the paper (blurred): its ring is
        # then partly table, too uneven for paper, and the table's grain hides faint ink
        # (bench 1172: three small cards with pale outline symbols on light wood lost). Only
        # a ring then all but entirely even and nearly grey passes: a checked cloth's cell
        # joined to a card passes half-way, and a patch of beige rug is evenly tinted.
        inner = paper_fraction(image, grow_quad(corners, -_BLOB_OVERSHOOT))
        if inner[0] >= _EVEN_INNER_RING and off_grey(inner[1]) <= GREY_PAPER:
            paper, colour, ink = inner
    if paper < 0.6 and partial:
        # A card cut by the frame edge is cut anywhere, often through its symbols: the ring
        # along the frame is then no edge of the card. Judged by its other sides only, it is
        # a guess, which any candidate found plainly for the place outweighs (a patch of pale
        # table reaching the frame edge passes this test too).
        paper, colour, ink = paper_fraction(image, corners, inner_sides(corners, width, height))
        without_frame_side = True
    if paper < 0.6:
        return None
    return CardQuad(corners, partial, score=float(area / quad_area) * paper, paper=colour, ink=ink,
                    guess=without_frame_side, judged_without_frame_side=without_frame_side)


# How far (pixels) a blob's outline may run out over the table: a whole card whose ring fails
# the paper test is judged again on a ring this much further in, where at least this fraction
# of it must be even paper (the first test asks 0.6).
_BLOB_OVERSHOOT = 1.5
_EVEN_INNER_RING = 0.9


def _split_blob(contour: npt.NDArray[np.int32], shape: tuple[int, ...], image: npt.NDArray[np.uint8],
                inset: float, min_area: float) -> list[CardQuad]:
    """Cards that touch merge into one blob, and so do cards and a bright patch of table they
    touch; eroding the blob by growing amounts opens the thin seams and bridges between them.
    The first erosion that frees a card-like part wins."""
    x, y, w, h = cv2.boundingRect(contour)
    pad = 2
    blob = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.drawContours(blob, [contour - [x - pad, y - pad]], -1, 255, -1)
    for radius in (1, 2, 3, 5):
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        eroded = cv2.erode(blob, kernel)
        cards = _cards_in_pieces(eroded, (x - pad, y - pad), image, inset + radius, min_area)
        if cards:
            return cards
    return []


# A card's outline fills at least this much of its smallest enclosing rectangle, even under
# steep perspective (a trapezoid) with rounded corners: a cheap test before fitting a quad.
_RECTANGLE_FILL = 0.7


def _fills_its_rectangle(contour: npt.NDArray[np.int32], area: float) -> bool:
    _, (width, height), _ = cv2.minAreaRect(contour)
    return area >= _RECTANGLE_FILL * width * height


def _cards_in_pieces(pieces: npt.NDArray[np.uint8], offset: tuple[int, int],
                     image: npt.NDArray[np.uint8], inset: float, min_area: float) -> list[CardQuad]:
    """The card-like blobs of a cut-up blob mask whose pixel (0, 0) is image pixel ``offset``."""
    parts, _ = cv2.findContours(pieces, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cards = []
    for part in parts:
        part_area = cv2.contourArea(part)
        if part_area < min_area or not _fills_its_rectangle(part, part_area):
            continue
        quad = _card_quad(part + list(offset), part_area, image, inset)
        if quad is not None:
            cards.append(quad)
    return cards


def _split_along_edges(contour: npt.NDArray[np.int32], image: npt.NDArray[np.uint8],
                       edges: npt.NDArray[np.uint8], min_area: float) -> list[CardQuad]:
    """Cards in a blob whose seams erosion cannot open: cards laid edge to edge in a grid, or a
    card bridged to a bright patch of table. The seams still show as straight edges, though
    with gaps: the blob is cut along every straight edge segment longer than a symbol's side,
    gaps bridged."""
    x, y, w, h = cv2.boundingRect(contour)
    pad = 4
    height, width = image.shape[:2]
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(width, x + w + pad), min(height, y + h + pad)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [contour - [x0, y0]], -1, 255, -1)
    inner_edges = edges[y0:y1, x0:x1].copy()
    inner_edges[cv2.erode(blob, np.ones((5, 5), np.uint8)) == 0] = 0
    card_side = np.sqrt(min_area)
    segments = cv2.HoughLinesP(inner_edges, 1, np.pi / 180, threshold=int(card_side),
                               minLineLength=1.5 * card_side, maxLineGap=3)
    if segments is None:
        return []
    cut = blob.copy()
    for x_a, y_a, x_b, y_b in segments.reshape(-1, 4).astype(np.float32):
        direction = np.array([x_b - x_a, y_b - y_a]) / max(float(np.hypot(x_b - x_a, y_b - y_a)), 1e-6)
        reach = card_side / 3 * direction
        start = np.round([x_a, y_a] - reach).astype(int)
        end = np.round([x_b, y_b] + reach).astype(int)
        cv2.line(cut, tuple(map(int, start)), tuple(map(int, end)), 0, 2)
    return [dataclasses.replace(quad, guess=True)
            for quad in _cards_in_pieces(cut, (x0, y0), image, 1.5, min_area)]
