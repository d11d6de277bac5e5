"""Cards laid edge to edge whose seam does not show: a found card's outline moved by one card side
and sized for its new place, kept where the paper maps are paper, edges trace it and it holds a
card's face (`grid_neighbours`).
"""

from __future__ import annotations

import math
from typing import Callable

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import BORDER_MARGIN, CardQuad, Region, SQUARE3, chromaticity, plain_unless_few
from vision.detect.edges import SIDE_STEPS
from vision.detect.paper import paper_fraction
from vision.detect.perspective import typical_area_model
from vision.quad import NEXT, order_corners


def grid_neighbours(cards: list[CardQuad], image: npt.NDArray[np.uint8],
                    paper: npt.NDArray[np.uint8], edges: npt.NDArray[np.uint8],
                    region: Region | None = None, rounds: int = 2) -> list[CardQuad]:
    """Cards next to the whole cards found, each a found card's outline moved by one card side
    and sized for its new place (`_neighbour_move`), with a gap and a slip sideways
    (`_best_neighbours`), where the paper maps are paper, edges trace the moved outline, and it
    holds a card face of the others' paper with ink about as strong as theirs. They are
    guesses: any candidate found plainly wins.
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) < 2:
        return []
    height, width = paper.shape
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(card.corners).astype(np.int32), 255)
    near_edge = cv2.dilate(edges, SQUARE3, iterations=2)
    typical_ink = float(np.median([c.ink for c in whole]))
    paper_tint = np.median([chromaticity(c.paper) for c in whole], axis=0)
    typical = typical_area_model(plain_unless_few(whole))
    found: list[CardQuad] = []
    frontier = whole
    for _ in range(rounds):
        new: list[CardQuad] = []
        outlines = [card.corners.astype(np.float64) for card in frontier]
        moves = [_neighbour_move(corners, sign * side, other, typical) for corners in outlines
                 for side, other in ((corners[1] - corners[0], corners[3] - corners[0]),
                                     (corners[3] - corners[0], corners[1] - corners[0]))
                 for sign in (1.0, -1.0)]
        # All moves of the round at once, against the cards taken when it starts: the cards taken
        # only grow, so a move that finds no place now finds none later in the round either.
        hopeful = _best_neighbours(np.array([corners for corners, _, _ in moves]),
                                   np.array([step for _, step, _ in moves]),
                                   np.array([other for _, _, other in moves]), paper, taken, near_edge)
        for (corners, step, other), first_look in zip(moves, hopeful):
            if first_look is None:
                continue
            quad = (first_look if not new else  # else look again, clear of the cards taken since
                    _best_neighbours(corners[None], step[None], other[None], paper, taken, near_edge)[0])
            if quad is None:
                continue
            x, y = np.round(quad.mean(axis=0)).astype(int)
            if region is not None and not region.mask[y, x]:
                continue  # where the plain maps explained everything
            score, colour, ink = paper_fraction(image, quad)
            if (score < 0.6 or ink < _NEIGHBOUR_INK * typical_ink
                    or np.abs(chromaticity(colour) - paper_tint).max() > 0.04):
                continue
            neighbour = CardQuad(order_corners(quad), False, score=score, paper=colour,
                                 ink=ink, guess=True)
            new.append(neighbour)
            cv2.fillConvexPoly(taken, np.round(quad).astype(np.int32), 255)
        found.extend(new)
        frontier = new
        if not new:
            break
    return found


def _neighbour_move(corners: npt.NDArray[np.float64], step: npt.NDArray[np.float64],
                    across: npt.NDArray[np.float64], typical: Callable[[npt.NDArray[np.float32]], float]
                    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A card's outline moved by ``step`` and sized for its new place (perspective shrinks far
    cards), still touching the card on the side it came from; with ``step`` and ``across``."""
    moved = corners + step
    center = corners.sum(axis=0) / 4
    ratio = typical(center + step) / typical(center)
    scale = min(max(math.sqrt(ratio), 0.8), 1.25)
    # The two corners nearest the card it came from stay where they are.
    near = np.argpartition(moved @ step, 2)[:2]
    anchor = moved[near].sum(axis=0) / 2
    return anchor + (moved - anchor) * scale, step * scale, across * scale


def _best_neighbours(corners: npt.NDArray[np.float64], steps: npt.NDArray[np.float64],
                     across: npt.NDArray[np.float64], paper: npt.NDArray[np.uint8],
                     taken: npt.NDArray[np.uint8], near_edge: npt.NDArray[np.uint8]
                     ) -> list[npt.NDArray[np.float32] | None]:
    """For each quad of ``corners`` (S, 4, 2) moved next to a card by its ``steps`` (S, 2):
    the quad, moved on by a gap of up to 0.3 of the step and slipped by up to 0.2 of its other
    side ``across`` (S, 2) (rows of cards are seldom straight, and perspective skews them), whose
    outline edges trace best among the places almost all on paper, clear of the cards taken and
    inside the image; None where no such place has edges along ``_NEIGHBOUR_EDGES`` of it."""
    height, width = paper.shape
    offsets = (_NEIGHBOUR_GAPS[None, :, None, None] * steps[:, None, None]
               + _NEIGHBOUR_SLIPS[None, :, None, None] * across[:, None, None])         # (S, P, 1, 2)
    quads = corners[:, None] + offsets                                                  # (S, P, 4, 2)
    inside = ((quads[..., 0].min(axis=2) >= BORDER_MARGIN) & (quads[..., 1].min(axis=2) >= BORDER_MARGIN)
              & (quads[..., 0].max(axis=2) <= width - 1 - BORDER_MARGIN)
              & (quads[..., 1].max(axis=2) <= height - 1 - BORDER_MARGIN))
    # Sample points round the card's margin, where no symbol is (bilinear in the corners).
    points = quads.transpose(0, 1, 3, 2) @ _MARGIN_WEIGHTS.T                             # (S, P, 2, K)
    xs = np.clip(np.round(points[:, :, 0]).astype(int), 0, width - 1)
    ys = np.clip(np.round(points[:, :, 1]).astype(int), 0, height - 1)
    clear = np.mean(taken[ys, xs] > 0, axis=2) <= 0.1
    on_paper = inside & clear & (np.mean(paper[ys, xs] > 0, axis=2) > _NEIGHBOUR_SUPPORT)  # (S, P)
    # How much of each outline on paper edges trace: points along its four sides, away from
    # the corners.
    score = np.full(on_paper.shape, -1.0)
    places = quads[on_paper]                                                            # (M, 4, 2)
    along = places[:, :, None] + SIDE_STEPS[None, None, :, None] * (places[:, NEXT] - places)[:, :, None]
    edge_xs = np.clip(np.round(along[..., 0]).astype(int), 0, width - 1)
    edge_ys = np.clip(np.round(along[..., 1]).astype(int), 0, height - 1)
    score[on_paper] = np.mean(near_edge[edge_ys, edge_xs] > 0, axis=(1, 2))
    best = np.argmax(score, axis=1)
    return [quads[s, p].astype(np.float32) if score[s, p] >= _NEIGHBOUR_EDGES else None
            for s, p in enumerate(best)]


# A neighbour guess must lie on paper at this fraction of its sample points, have edges
# along this fraction of its outline, and ink at least this fraction of the cards' typical.
_NEIGHBOUR_SUPPORT = 0.9
# The places tried for a neighbour: every gap (0 to 0.3 of the step) with every slip (-0.2 to
# 0.2 of the other side).
_NEIGHBOUR_GAPS, _NEIGHBOUR_SLIPS = (grid.ravel() for grid in np.meshgrid(np.linspace(0.0, 0.3, 7),
                                                                           np.linspace(-0.2, 0.2, 9)))
_NEIGHBOUR_EDGES = 0.7
_NEIGHBOUR_INK = 0.6


def _margin_weights() -> npt.NDArray[np.float64]:
    """Bilinear weights (K, 4) of the corners for points round a card's margin: 6-8% in from
    each side, where the paper shows whatever the symbols."""
    across, down = np.linspace(0.08, 0.92, 8), np.linspace(0.06, 0.94, 12)
    u = np.concatenate([across, across, np.full(12, 0.08), np.full(12, 0.92)])
    v = np.concatenate([np.full(8, 0.06), np.full(8, 0.94), down, down])
    return np.stack([(1 - u) * (1 - v), u * (1 - v), u * v, (1 - u) * v], axis=1)


_MARGIN_WEIGHTS = _margin_weights()
