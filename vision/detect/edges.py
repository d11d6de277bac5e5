"""Outlines moved onto the edges of a card's paper: a guess snapped to the edges round it
(`snapped_to_edges`), and at the end each whole card's sides tightened onto its paper's edge
(`tightened_cards`).
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import CardQuad, chromaticity
from vision.detect.paper import SHADOW_TINT
from vision.quad import NEXT, order_corners, short_side


# A whole card's side is moved onto a sharper edge of its paper within this fraction of its width
# (`tightened_cards`): outlines found are off by a few pixels where they are off at all, and the
# symbols begin further in (~0.15 of the width), so their edges are never reached.
_TIGHTEN_REACH = 0.1
_TIGHTEN_OFFSETS = np.linspace(-1.0, 1.0, 25)  # of the reach: ~0.5 px steps on a webcam's cards
_TIGHTEN_ALONG = np.linspace(0.1, 0.9, 17)     # where along a side it is looked at
# A side moved outward must cross paper: whiteness at least this far from the table's (just
# beyond the new edge) towards the paper's (inside the card); moved inward, less on average.
_PAPER_BAND = 0.75
# The least step of whiteness (of 255) from paper to table that is an edge to move a side onto.
_EDGE_STEP = 3.0
SIDE_STEPS = np.linspace(0.15, 0.85, 8)


def snapped_to_edges(corners: npt.NDArray[np.float32], gradient: npt.NDArray[np.float32]
                     ) -> npt.NDArray[np.float32]:
    """The quad with each side moved along its normal, by up to 0.15 of the card's width, to
    where the image's ``gradient`` magnitude along it is strongest, portrait-ordered."""
    height, width = gradient.shape
    quad = corners.astype(np.float64)
    directions, normals = _sides_of(quad[None])
    reach = 0.15 * short_side(corners)
    offsets = np.linspace(-reach, reach, 13)
    starts = []
    for k in range(4):
        points = quad[k] + SIDE_STEPS[:, None] * directions[0, k]                  # (P, 2)
        moved = points[None] + offsets[:, None, None] * normals[0, k]                # (O, P, 2)
        xs = np.clip(np.round(moved[..., 0]).astype(int), 0, width - 1)
        ys = np.clip(np.round(moved[..., 1]).astype(int), 0, height - 1)
        best = offsets[int(np.argmax(gradient[ys, xs].mean(axis=1)))]
        starts.append(quad[k] + best * normals[0, k])
    snapped, meet = _where_sides_meet(np.array(starts)[None], directions)
    return order_corners(snapped[0].astype(np.float32)) if meet[0] else corners


def _sides_of(quads: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each side of ``quads`` (N, 4, 2) as a vector (side k: corner k -> k + 1), and its unit
    normal pointing out of the quad, both (N, 4, 2)."""
    directions = quads[:, NEXT] - quads
    lengths = np.linalg.norm(directions, axis=2, keepdims=True)
    normals = np.stack([-directions[..., 1], directions[..., 0]], axis=2) / np.maximum(lengths, 1e-9)
    middles = quads + directions / 2 - quads.mean(axis=1)[:, None]
    normals[(middles * normals).sum(axis=2) < 0] *= -1
    return directions, normals


def tightened_cards(cards: list[CardQuad], whiteness: npt.NDArray[np.uint8], image: npt.NDArray[np.uint8]
                    ) -> list[CardQuad]:
    """The ``cards`` with each side of a whole card moved onto its edge where a sharper one lies
    near: where the paper's whiteness falls most steeply to the table's.

    Outlines from blobs and guesses may be a few pixels off: a blob that took in a card's
    shadow or a pale rim of table, a corner cut off. The reader then sees the symbols off
    their places and smaller or larger than they are, which costs counts and stripes. All the
    cards' sides are looked at in one go: a frame's dozen cards cost one lookup, not a dozen.
    """
    whole = [index for index, card in enumerate(cards) if not card.partial]
    if not whole:
        return cards
    quads = np.array([cards[index].corners for index in whole], np.float64)                 # (N, 4, 2)
    directions, normals = _sides_of(quads)
    short_sides = np.linalg.norm(directions, axis=2).min(axis=1)
    offsets = (_TIGHTEN_REACH * short_sides)[:, None] * _TIGHTEN_OFFSETS                     # (N, O)
    shifts = _edge_shifts(quads, directions, normals, offsets, whiteness, image)
    if not shifts.any():
        return cards
    corners, meet = _where_sides_meet(quads + shifts[..., None] * normals, directions)
    result = list(cards)
    for row, index in enumerate(whole):
        if shifts[row].any() and meet[row]:
            result[index] = dataclasses.replace(cards[index],
                                                corners=order_corners(corners[row].astype(np.float32)))
    return result


def _edge_shifts(quads: npt.NDArray[np.float64], directions: npt.NDArray[np.float64],
                 normals: npt.NDArray[np.float64], offsets: npt.NDArray[np.float64],
                 whiteness: npt.NDArray[np.uint8], image: npt.NDArray[np.uint8]
                 ) -> npt.NDArray[np.float64]:
    """How far (N, 4) to move each side of ``quads`` (N, 4, 2) along its outward normal, of the
    ``offsets`` (N, O) tried, to the steepest fall of ``whiteness`` from paper to table; 0 where
    it stays.

    A side moves outward only across paper, of the paper's whiteness and tint, and inward only
    across what is not paper: a card's shadow is a falling edge too, but the band it adds is
    darker than paper.
    """
    # Points along each side (N, 4, P, 2), moved by each offset (N, 4, O, P, 2).
    points = quads[:, :, None] + _TIGHTEN_ALONG[:, None] * directions[:, :, None]
    moved = points[:, :, None] + offsets[:, None, :, None, None] * normals[:, :, None, None]
    flat = moved.reshape(-1, len(_TIGHTEN_ALONG), 2).astype(np.float32)
    shape = (len(quads), 4, len(_TIGHTEN_OFFSETS), len(_TIGHTEN_ALONG))
    levels = cv2.remap(whiteness, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_REPLICATE)
    profiles = cv2.reduce(levels, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).reshape(shape[:3])    # (N, 4, O)
    spacing = (offsets[:, 1] - offsets[:, 0])[:, None, None]
    falling = np.zeros_like(profiles)
    falling[..., 1:-1] = (profiles[..., :-2] - profiles[..., 2:]) / (2 * spacing)
    here = len(_TIGHTEN_OFFSETS) // 2
    best = falling.argmax(axis=2)                                                              # (N, 4)
    steeper = np.take_along_axis(falling, best[..., None], axis=2)[..., 0] > np.abs(falling[..., here])
    # The paper's level (inside, where the search begins) and the table's just beyond the new
    # edge; what lies between a side and its new place is paper when it is most of the way up.
    margin = np.ceil(2.0 / spacing[..., 0]).astype(int)                                        # 2 px
    inside = slice(0, max(1, here // 2))
    paper = profiles[..., inside].mean(axis=2)
    table = np.take_along_axis(profiles, np.minimum(best + margin, len(_TIGHTEN_OFFSETS) - 1)[..., None],
                               axis=2)[..., 0]
    paper_like = table + _PAPER_BAND * (paper - table)
    index = np.arange(len(_TIGHTEN_OFFSETS))
    crossed_out = (index >= here) & (index <= np.maximum(here, best - margin)[..., None])
    outward_ok = np.where(crossed_out, profiles, np.inf).min(axis=2) >= paper_like
    # ... and of the paper's tint: a pale patch of rug or a beige plank is as white as paper.
    # (Looked at only for the sides that would move out.)
    out = (best > here) & steeper & outward_ok
    if out.any():
        points_out = moved[out].reshape(-1, len(_TIGHTEN_ALONG), 2).astype(np.float32)
        colours = cv2.remap(image, points_out[..., 0], points_out[..., 1], cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE)
        colours = cv2.reduce(colours, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).reshape(
            -1, len(_TIGHTEN_OFFSETS), 3)
        paper_tint = chromaticity(colours[:, inside].mean(axis=1))
        crossed_tint = chromaticity(np.where(crossed_out[out][..., None], colours, 0.0).sum(axis=1))
        outward_ok[out] = np.abs(crossed_tint - paper_tint).max(axis=1) <= SHADOW_TINT
    crossed_in = (index >= np.minimum(best + margin, here)[..., None]) & (index <= here)
    inward_ok = np.where(crossed_in, profiles, 0.0).sum(axis=2) / crossed_in.sum(axis=2) < paper_like
    # A side on or past the frame edge is not seen there: what the search finds near it is
    # the frame edge or the card's own print (a close-up card cut by the frame).
    height, width = whiteness.shape
    in_view = ((moved[..., 0] >= 0) & (moved[..., 0] <= width - 1)
               & (moved[..., 1] >= 0) & (moved[..., 1] <= height - 1)).all(axis=(2, 3))
    # (And where no edge shows, a card outlined round its symbols on a sheet of its own paper,
    # the steepest fall is noise: too small a step is no edge.)
    moves = ((best != here) & steeper & np.where(best > here, outward_ok, inward_ok)
             & (paper - table >= _EDGE_STEP) & in_view)
    return np.where(moves, np.take_along_axis(offsets, best, axis=1), 0.0)


def _where_sides_meet(starts: npt.NDArray[np.float64], directions: npt.NDArray[np.float64]
                      ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The corners (N, 4, 2) where the lines through ``starts`` along ``directions`` (side k of
    each quad) meet: corner k where side k - 1 meets side k; and whether all four meet."""
    before, before_direction = np.roll(starts, 1, axis=1), np.roll(directions, 1, axis=1)

    def cross(u: npt.NDArray[np.float64], v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

    turn = cross(before_direction, directions)
    meet = np.abs(turn) >= 1e-9
    along = cross(starts - before, directions) / np.where(meet, turn, 1.0)
    return before + along[..., None] * before_direction, meet.all(axis=1)
