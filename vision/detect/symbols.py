"""Cards found from their printed symbols.

A card on a table of its own paper's tone (a pale stripe of a cloth, a white table in shadow), or
laid edge to edge with others under a hand's shadow, may show no outline in any map, yet its
symbols stand out: ink darker than the paper round it, symbol-shaped, one to three of them
stacked at a fixed pitch. The card's outline follows from them (`cards_from_symbols`, and
`cards_from_symbols_alone` where no map outlines any card).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import warp_card
from vision.detect.candidate import (CardQuad, FLAT_ASPECT, SQUARE3, chromaticity, clear_inside, covers,
                                     holds_several, plain_unless_few, quick_percentile, size_mismatch)
from vision.detect.edges import SIDE_STEPS, snapped_to_edges
from vision.detect.maps import Maps
from vision.detect.paper import INK_RATIO, SHADOWED_PAPER, card_shows_symbols, paper_fraction, shows_coloured_ink
from vision.detect.perspective import TablePlanes, to_plane, typical_area_model
from vision.features import segment_ink, shows_symbols, symbols_off_centre
from vision.quad import NEXT, grow_quad, order_corners


@dataclass(frozen=True)
class _Symbol:
    """A printed symbol seen in the image: its centre, its length (across the card) and
    thickness (along it) in pixels, and the unit vector of its length."""

    center: npt.NDArray[np.float64]
    length: float
    thickness: float
    axis: npt.NDArray[np.float64]
    # Its convex hull's points (N, 2), where it was seen whole (not one of a run-together stack).
    hull: npt.NDArray[np.float64] | None = None

    def outline(self) -> npt.NDArray[np.float64]:
        """Its convex hull's points (N, 2), or where it was not seen whole, its box's corners."""
        if self.hull is not None:
            return self.hull
        across = np.array([-self.axis[1], self.axis[0]])
        half_length, half_thickness = self.length / 2 * self.axis, self.thickness / 2 * across
        return self.center + np.array([-half_length - half_thickness, half_length - half_thickness,
                                       half_length + half_thickness, -half_length + half_thickness])

    def extent_along(self, direction: npt.NDArray[np.float64]) -> float:
        """Its width along a unit ``direction``."""
        if self.hull is None:
            across = np.array([-self.axis[1], self.axis[0]])
            return (self.length * abs(float(direction @ self.axis))
                    + self.thickness * abs(float(direction @ across)))
        projected = self.hull @ direction
        return float(projected.max() - projected.min())


# A symbol's length and thickness over the card's width, and the pitch of stacked symbols
# over a symbol's thickness (both decks we have and the generated prints: 0.67-0.72,
# 0.315-0.345 and 0.105-0.14 blank between, so 1.2-1.55 thicknesses).
_SYMBOL_LENGTH = 0.70
_SYMBOL_THICKNESS = 0.33
_SYMBOL_PITCH = (1.1, 1.75)


def cards_from_symbols(cards: list[CardQuad], image: npt.NDArray[np.uint8], maps: Maps
                       ) -> list[CardQuad]:
    """Cards outlined round groups of symbols outside those ``cards`` found that show a symbol
    (`_symbols_outside`, `_symbol_groups`), each snapped to the edges round it where they show,
    and kept only where its margin is paper of the others' tint, its ink as strong as a card's
    must be (`INK_RATIO`), and its face shows as many symbols as the group, centred. They are
    guesses (they never set the typical card), but weighed in the merge as plain candidates,
    and not hidden by a quad far larger than a card (the sheet of paper the card lies on).
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) < 3:
        return []
    # A guess whose face shows no symbol (a grid neighbour placed half a card off, over two
    # cards' edges: unseen 8007's middle row) hides no symbols: those under it are looked for.
    cards = [c for c in cards if not c.guess or c.from_symbols or card_shows_symbols(image, c)]
    typical = typical_area_model(plain_unless_few(whole))
    widths = [math.sqrt(typical(c.center) / FLAT_ASPECT) for c in whole]
    typical_ink = float(np.median([c.ink for c in whole]))
    paper_level = float(np.median([min(c.paper) for c in whole]))
    # (Everywhere, not only round the paper the cards found leave unexplained: a card in a
    # deep shadow is no paper to any map, yet its symbols show.)
    symbols, stacks = _symbols_outside(cards, maps.darkest, typical, max(widths), typical_ink, paper_level)
    paper_tint = np.median([chromaticity(c.paper) for c in whole], axis=0)
    planes = TablePlanes(cards)
    return _cards_round_groups(_symbol_groups(symbols, planes) + stacks, cards, image, maps, typical_ink,
                               paper_tint, planes=planes)


def cards_from_symbols_alone(cards: list[CardQuad], image: npt.NDArray[np.uint8], maps: Maps
                             ) -> list[CardQuad]:
    """Cards outlined round groups of symbols where the maps found fewer than three whole
    ``cards``: then no typical card tells the symbols' size, ink and paper, so symbols are
    looked for at each of a few card sizes in turn, with a typical card's ink assumed.

    A card on a cloth of its own paper's tone (pale stripes) shows no outline to any map, and
    a block of cards laid edge to edge shows none between them: a whole table of them gives no
    card to start from. The symbols are looked for everywhere, inside what the maps found too
    (a block's outline holds several cards); a card found here where the maps found one is
    left to the maps, and a quad of the maps holding two or more is a block (the caller drops
    it). What is found counts only when three or more cards (with those of the maps) have
    bright paper of one tint, a card's size for their place and an edge along a side: one or
    two symbol-like groups are as likely a box's printed art or a pattern.
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) >= 3:
        return []
    paper_level = quick_percentile(maps.darkest.ravel()[::7].astype(np.float32), 0.95)
    # Every size, even beside a card or two found (those may be blocks of cards: taking
    # their size lost all of a dev scene's 12 cards found here), largest first: a symbol is
    # seen whole where the closing spans it, and seen at the smaller sizes too (as its
    # outline's strokes), where it is left out.
    symbols: list[_Symbol] = []
    stacks: list[list[_Symbol]] = []
    for card_width in sorted(_ALONE_CARD_WIDTHS, reverse=True):
        def typical(center: npt.NDArray[np.float32], area: float = card_width ** 2 * FLAT_ASPECT) -> float:
            return area
        seen, stacked = _symbols_outside([], maps.darkest, typical, card_width, _ALONE_INK, paper_level,
                                         _ALONE_ROUNDEST)
        symbols += [symbol for symbol in seen if not any(
            np.hypot(*(symbol.center - other.center)) < 0.5 * other.thickness for other in symbols)]
        stacks += stacked
    # Cards' paper is among the brightest things in view, and a card's outline shows
    # somewhere; a rug's or a cloth's pattern gives symbol-like blobs on a darker ground,
    # with no edge round them.
    found = _cards_round_groups(_symbol_groups(symbols) + stacks, [], image, maps, _ALONE_INK, None,
                                paper_floor=_ALONE_PAPER * paper_level, edge_ratio=_ALONE_EDGE)
    plain = [c for c in whole if not holds_several(c, found)]
    found = [f for f in found if not any(covers(c, f) for c in plain)]
    if len(found) + len(plain) < 3:
        return []
    # They are of one tint, and their sizes follow one perspective (a pattern's blobs come
    # at every size).
    paper_tint = np.median([chromaticity(c.paper) for c in found + plain], axis=0)
    found = [c for c in found if np.abs(chromaticity(c.paper) - paper_tint).max() <= 0.04]
    # And their symbols are printed in coloured inks: a grey checked cloth's dark crossings,
    # ringed by pale cells, are grey.
    found = [c for c in found if shows_coloured_ink(image, c.corners)]
    if found:
        typical = typical_area_model(found + plain)
        found = [c for c in found if size_mismatch(c, typical(c.center)) < _ALONE_SIZE]
    return found if len(found) + len(plain) >= 3 else []


def _strongest_side(corners: npt.NDArray[np.float32], gradient: npt.NDArray[np.float32]) -> float:
    """The largest, over a quad's four sides, of the median ``gradient`` magnitude along it."""
    height, width = gradient.shape
    strongest = 0.0
    for k in range(4):
        points = corners[k] + SIDE_STEPS[:, None] * (corners[NEXT[k]] - corners[k])
        xs = np.clip(np.round(points[:, 0]).astype(int), 0, width - 1)
        ys = np.clip(np.round(points[:, 1]).astype(int), 0, height - 1)
        strongest = max(strongest, float(np.median(gradient[ys, xs])))
    return strongest


# The card widths (pixels, in the detection-scale image) tried when no card shows the size:
# each finds symbols of cards 0.7 to 1.5 times as wide. And the cards' ink strength assumed
# (scenes' medians are 0.26-0.99 on the dev scenes; at 0.3, paper a shade darker than a pale
# stripe beside it is taken for ink, and the symbols run together with it).
_ALONE_CARD_WIDTHS = (20.0, 40.0, 80.0, 160.0)
_ALONE_INK = 0.6
# Their paper at least this bright for the brightest in view (the 95th percentile of the
# darkest channel), and their area within this log ratio of the typical card's there.
_ALONE_PAPER = 0.5
_ALONE_SIZE = 0.7
# A printed symbol is at most this thick for its length (a diamond 0.47, an oval 0.5). Seen
# steeply along the card, where no card found shows the view, as round as this: touching 20037
# (a grid of 11 on light wood, none found) shows ovals and squiggles 0.70-0.77 as thick as
# long. (Beside cards found, taking such blobs lost 1-4 cards in each set of scenes.)
_ROUNDEST = 0.7
_ALONE_ROUNDEST = 0.85
# A card's edge shows along one side at least (against the table, a shadow, a neighbour):
# the median gradient magnitude (Sobel) along it this fraction of its paper's brightness. A
# pattern's blob on a plain ground is ringed by ground, with no edge where a card's would be.
_ALONE_EDGE = 0.08


def _cards_round_groups(groups: list[list[_Symbol]], cards: list[CardQuad], image: npt.NDArray[np.uint8],
                        maps: Maps, typical_ink: float, paper_tint: npt.NDArray[np.float64] | None,
                        paper_floor: float = 0.0, edge_ratio: float = 0.0, planes: TablePlanes | None = None
                        ) -> list[CardQuad]:
    """The cards the symbol ``groups`` are printed on, outside the ``cards``: each outline
    estimated from its group, snapped to the edges round it where they show, kept where its
    margin is paper (of ``paper_tint``, if given, and no channel darker than ``paper_floor``),
    its ink as strong as a card's must be (`INK_RATIO` of ``typical_ink``), an edge shows
    along one side at least (`_strongest_side` at least ``edge_ratio`` of the paper's darkest
    channel) and its face shows as many symbols as the group, centred. Where the table's
    ``planes`` are known, the outline is also made on the plane (`_card_round_symbols_on`)."""
    if not groups:
        return []
    height, width = image.shape[:2]
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(card.corners).astype(np.int32), 255)
    found = []
    for group in groups:
        # The outline estimated from the symbols is off by a few percent; the card's own
        # edges, where they show, place it exactly, but may be another card's edges. Seen
        # steeply, a lone symbol's axis is sheared off the card's: the table's plane, as the
        # nearest card shows it, gives the card's true outline round it.
        estimates = [_card_round_symbols(group)]
        plane = (planes.nearest(np.mean([symbol.center for symbol in group], axis=0))
                 if planes is not None else None)
        if plane is not None:
            estimates += [outline for outline in [_card_round_symbols_on(plane, group)] if outline is not None]
        tries = [(corners, estimate) for estimate in estimates
                 for corners in (snapped_to_edges(estimate, maps.gradient), estimate)]
        for corners, estimate in tries:
            if not clear_inside(corners, taken, width, height):
                continue
            if not 0.8 < cv2.contourArea(corners) / cv2.contourArea(estimate) < 1.25:
                continue
            # Its paper is judged a little inside the outline, which may still be a little off.
            center = corners.sum(axis=0) / 4
            score, colour, ink = paper_fraction(image, center + _SYMBOL_CARD_INSET * (corners - center))
            if (score < 0.6 or ink < INK_RATIO * typical_ink or min(colour) < paper_floor
                    or (paper_tint is not None and np.abs(chromaticity(colour) - paper_tint).max() > 0.04)):
                continue
            if edge_ratio and _strongest_side(corners, maps.gradient) < edge_ratio * min(colour):
                continue
            face = segment_ink(warp_card(image, corners))
            if len(face.symbols) != len(group) or not shows_symbols(face) or symbols_off_centre(face):
                continue
            found.append(CardQuad(corners, False, score=score, paper=colour, ink=ink, guess=True,
                                  from_symbols=True))
            cv2.fillConvexPoly(taken, np.round(corners).astype(np.int32), 255)
            break
    return found


# The margin of a card outlined round its symbols is judged this far inside the outline.
_SYMBOL_CARD_INSET = 0.92


def _symbols_outside(cards: list[CardQuad], darkest: npt.NDArray[np.uint8],
                     typical: Callable[[npt.NDArray[np.float32]], float], largest_width: float,
                     typical_ink: float, paper_level: float, roundest: float = _ROUNDEST
                     ) -> tuple[list[_Symbol], list[list[_Symbol]]]:
    """The symbol-like ink blobs outside the ``cards``: darker (in the darkest channel) than
    the brightest nearby by a good part of the cards' ink strength (``typical_ink``), the size
    and shape of a symbol of a card of the ``typical`` area there (the largest card
    ``largest_width`` pixels wide), not in deep shadow (for paper of ``paper_level``), and
    ringed by paper. And the blobs that are the two or three symbols of one card run together
    (blurred, or squiggles nearly touching), each as the groups of symbols it may be
    (`_stacked_symbols`).

    The brightest nearby is a grey closing over a little more than a symbol's thickness, so it
    is the paper round a symbol; the gaps between cards on a dark table come out as ink too,
    but are ringed by table, not paper.
    """
    size = int(round(0.5 * largest_width)) | 1
    nearby = cv2.morphologyEx(darkest, cv2.MORPH_CLOSE,
                              cv2.getStructuringElement(cv2.MORPH_RECT, (size, size)))
    nearby_f = nearby.astype(np.float32)
    depth = cv2.subtract(nearby, darkest).astype(np.float32)
    ink = ((depth > np.maximum(_SYMBOL_INK * typical_ink * nearby_f, 10.0))
           & (nearby_f > SHADOWED_PAPER * paper_level)).astype(np.uint8) * 255
    for card in cards:
        cv2.fillConvexPoly(ink, np.round(grow_quad(card.corners, 2.0)).astype(np.int32), 0)
    # (The strokes of an outline symbol break up in a small card; in a tiny one they are
    # blurred solid, and the blank between its symbols is only 2-3 pixels: closing joins them.)
    if largest_width > _UNCLOSED_WIDTH:
        ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, SQUARE3)
    # Every blob's outer boundary, also of those in a hole of another: a patterned table
    # (a checked cloth's mid-tone lines) is "ink" round the card its symbols lie in.
    contours, hierarchy = cv2.findContours(ink, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    symbols = []
    stacks = []
    largest = 2 * largest_width  # (a symbol is at most a card wide, and cards nearer the camera larger)
    for contour, links in zip(contours, hierarchy[0] if hierarchy is not None else []):
        if len(contour) < 4 or links[3] >= 0:  # (a hole's boundary has a parent)
            continue
        _, _, box_width, box_height = cv2.boundingRect(contour)
        if max(box_width, box_height) < 6 or max(box_width, box_height) > largest:
            continue
        hull = cv2.convexHull(contour)
        symbol = _symbol_of(hull)
        if symbol is None:
            continue
        card_width = math.sqrt(typical(symbol.center.astype(np.float32)) / FLAT_ASPECT)
        reach = max(2, int(round(0.1 * card_width)))
        if _symbol_shaped(symbol.length, symbol.thickness, card_width, roundest):
            if _ringed_by_paper(hull, darkest, nearby, reach):
                symbols.append(symbol)
            continue
        stacked = _stacked_symbols(symbol, card_width)
        if stacked and _ringed_by_paper(hull, darkest, nearby, reach):
            stacks.extend(stacked)
    return symbols, stacks


def _symbol_shaped(length: float, thickness: float, card_width: float, roundest: float = _ROUNDEST) -> bool:
    """Whether a blob ``length`` long and ``thickness`` thick has the size and shape of a
    symbol of a card ``card_width`` wide, at most ``roundest`` as thick as it is long. (A card
    seen steeply is narrower than its area says, and its symbols thinner.)"""
    return 0.5 * card_width <= length <= 1.05 * card_width and 0.22 * length <= thickness <= roundest * length


def _stacked_symbols(blob: _Symbol, card_width: float) -> list[list[_Symbol]]:
    """The groups of two or three symbols a blob (seen as one `_Symbol`) may be, run together
    on a card about ``card_width`` wide: the symbols' length across the stack, their number
    and pitch along it, each way round the blob's axes that fits a card's print (a stack may
    be longer along either axis, as many symbols and as foreshortened as it is)."""
    hypotheses = []
    across = np.array([-blob.axis[1], blob.axis[0]])
    # (The symbols' length along the blob's axis and the stack across it, or the other way.)
    for length, extent, axis, along in ((blob.length, blob.thickness, blob.axis, across),
                                        (blob.thickness, blob.length, across, blob.axis)):
        for count in (2, 3):
            # k symbols of thickness t at a pitch of p t span (p k - (p - 1)) t.
            thickness = extent / (_STACK_PITCH * count - (_STACK_PITCH - 1))
            if not _symbol_shaped(length, thickness, card_width):
                continue
            offsets = (np.arange(count) - (count - 1) / 2) * _STACK_PITCH * thickness
            hypotheses.append([_Symbol(blob.center + offset * along, length, thickness, axis)
                               for offset in offsets])
    return hypotheses


# The pitch of a card's stacked symbols, in symbol thicknesses (the prints' 1.2-1.55).
_STACK_PITCH = 1.35


# Symbols in cards no wider than this (pixels) are looked for without closing the ink's gaps.
_UNCLOSED_WIDTH = 25

# A symbol's ink is darker than the paper round it by this fraction of the cards' typical ink
# strength (outline strokes in a small card are faint).
_SYMBOL_INK = 0.3


def _symbol_of(hull: npt.NDArray[np.int32]) -> _Symbol | None:
    """The symbol a blob's convex hull outlines: its length along the hull's principal axis (a
    diamond's smallest enclosing rectangle lies along its sides, its principal axis along its
    long diagonal), its thickness across; None for a blob too small or not filling its box
    as a symbol does (a diamond fills half of it)."""
    moments = cv2.moments(hull)
    if moments["m00"] <= 0:
        return None
    angle = 0.5 * math.atan2(2 * moments["mu11"], moments["mu20"] - moments["mu02"])
    axis = np.array([math.cos(angle), math.sin(angle)])
    across = np.array([-axis[1], axis[0]])
    points = hull.reshape(-1, 2).astype(np.float64)
    along_axis, along_across = points @ axis, points @ across
    length = float(along_axis.max() - along_axis.min())
    thickness = float(along_across.max() - along_across.min())
    if length < 6 or moments["m00"] < 0.4 * length * thickness:
        return None
    center = ((along_axis.max() + along_axis.min()) / 2 * axis
              + (along_across.max() + along_across.min()) / 2 * across)
    return _Symbol(center, length, thickness, axis, points)


def _ringed_by_paper(hull: npt.NDArray[np.int32], darkest: npt.NDArray[np.uint8],
                     nearby: npt.NDArray[np.uint8], reach: int) -> bool:
    """Whether nearly all of a ring ``reach`` pixels wide round a blob (its convex ``hull``) is
    as bright as the brightest nearby: paper, not the table between cards."""
    height, width = darkest.shape
    x, y, w, h = cv2.boundingRect(hull)
    x0, y0 = max(0, x - reach), max(0, y - reach)
    x1, y1 = min(width, x + w + reach), min(height, y + h + reach)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(blob, hull - [x0, y0], 255)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    ring = (cv2.dilate(blob, disc) > 0) & (blob == 0)
    bright = darkest[y0:y1, x0:x1][ring] >= 0.8 * nearby[y0:y1, x0:x1][ring].astype(np.float32)
    return bool(np.mean(bright) >= 0.85)


def _symbol_groups(symbols: list[_Symbol], planes: TablePlanes | None = None) -> list[list[_Symbol]]:
    """The symbols grouped card by card: symbols of one card lie side by side along their
    thickness at the print's pitch, alike in length and direction (`_side_by_side`), in the
    image or, where the table's ``planes`` are known, on the table seen from above; failing
    that, where their axes may mislead (`_side_by_side_as_seen`), into groups of three at
    most. Groups of more than three (cards too close to tell apart) are dropped."""
    parent = list(range(len(symbols)))
    size = [1] * len(symbols)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        i, j = root(i), root(j)
        if i != j:
            parent[i] = j
            size[j] += size[i]

    pairs = [(i, j) for i in range(len(symbols)) for j in range(i + 1, len(symbols))
             if _alike(symbols[i], symbols[j])]
    for i, j in pairs:
        if _side_by_side(symbols[i], symbols[j]):
            join(i, j)
    if planes is not None:
        # Seen steeply, one card's symbols are sheared out of line and squeezed; on the
        # table's plane they lie as printed.
        for i, j in pairs:
            if root(i) != root(j):
                plane = planes.nearest((symbols[i].center + symbols[j].center) / 2)
                if plane is None:
                    continue
                a, b = _symbol_on(plane, symbols[i]), _symbol_on(plane, symbols[j])
                if a is not None and b is not None and _alike(a, b) and _side_by_side(a, b):
                    join(i, j)
    # (Only into groups of three at most: the looser test must not join a stray blob beside
    # a card's three symbols, which would drop them all.)
    for i, j in pairs:
        if (root(i) != root(j) and size[root(i)] + size[root(j)] <= 3
                and _side_by_side_as_seen(symbols[i], symbols[j])):
            join(i, j)
    groups: dict[int, list[_Symbol]] = {}
    for i, symbol in enumerate(symbols):
        groups.setdefault(root(i), []).append(symbol)
    return [group for group in groups.values() if len(group) <= 3]


def _alike(a: _Symbol, b: _Symbol) -> bool:
    """Whether two symbols point the same way and are about as long."""
    return abs(float(a.axis @ b.axis)) >= _SAME_DIRECTION and 0.8 < a.length / b.length < 1.25


def _side_by_side(a: _Symbol, b: _Symbol) -> bool:
    """Whether two alike symbols lie side by side along their thickness at the print's pitch,
    straight across or as a sheared card has them (`_SYMBOL_SHEAR`)."""
    offset = b.center - a.center
    card_width = (a.length + b.length) / 2 / _SYMBOL_LENGTH
    thickness = (a.thickness + b.thickness) / 2
    along = abs(float(offset @ a.axis))
    across = abs(float(offset[1] * a.axis[0] - offset[0] * a.axis[1]))
    pitch = across / thickness
    return (along < max(0.12 * card_width, _SYMBOL_SHEAR * across)
            and _SYMBOL_PITCH[0] < pitch < _SYMBOL_PITCH[1])


def _side_by_side_as_seen(a: _Symbol, b: _Symbol) -> bool:
    """Whether two alike symbols lie side by side by their widths along and across the line
    joining them. Seen steeply and sheared, a squiggle's or an oval's outline is nearly round
    and its principal axis says little about the card's (bench 1106: 50 degrees off), and
    their widths along that line may overlap."""
    offset = b.center - a.center
    distance = float(np.hypot(*offset))
    line = offset / max(distance, 1e-9)
    normal = np.array([-line[1], line[0]])
    width_along = (a.extent_along(line) + b.extent_along(line)) / 2
    width_across = (a.extent_along(normal) + b.extent_along(normal)) / 2
    return (_NEAREST_SIDE_BY_SIDE < distance / width_along < _SYMBOL_PITCH[1]
            and _SIDE_BY_SIDE_ACROSS[0] < distance / width_across < _SIDE_BY_SIDE_ACROSS[1])


# Symbols side by side are this far apart for their widths along the line joining them
# (from this to the pitch's upper end) and across it: flat, the pitch over a symbol's length
# is 0.58-0.72; a card seen steeply along its length brings them closer, across it shortens
# the symbols.
_NEAREST_SIDE_BY_SIDE = 0.8
_SIDE_BY_SIDE_ACROSS = (0.45, 1.0)
# A card seen obliquely is sheared: the line through its symbols leans up to 20 degrees off
# square to their axes (tan 20 degrees).
_SYMBOL_SHEAR = 0.36
# Symbols of one card point the same way within 20 degrees (squiggles' axes wander).
_SAME_DIRECTION = math.cos(math.radians(20))


def _card_round_symbols(group: list[_Symbol]) -> npt.NDArray[np.float32]:
    """The outline of the card a group of symbols is printed on, portrait-ordered: centred on
    them, as wide as their length says, and as long as that and their thickness say (a card
    seen steeply is foreshortened along its length, and its symbols with it)."""
    centers = np.array([s.center for s in group])
    center = centers.mean(axis=0)
    axis = group[0].axis
    across = np.array([-axis[1], axis[0]])
    if len(group) > 1:
        # The line through the symbols runs along the card more truly than a symbol's own
        # axis (a squiggle's wanders).
        step = centers[np.argmax(centers @ across)] - centers[np.argmin(centers @ across)]
        across = step / max(float(np.linalg.norm(step)), 1e-9)
        axis = np.array([across[1], -across[0]])
    card_width = float(np.median([s.length for s in group])) / _SYMBOL_LENGTH
    squash = float(np.median([s.thickness / s.length for s in group])) / (_SYMBOL_THICKNESS / _SYMBOL_LENGTH)
    card_length = FLAT_ASPECT * card_width * min(max(squash, 0.5), 1.1)
    half_w, half_l = axis * card_width / 2, across * card_length / 2
    corners = np.array([center - half_w - half_l, center + half_w - half_l,
                        center + half_w + half_l, center - half_w + half_l])
    return order_corners(corners.astype(np.float32))


def _symbol_on(plane: npt.NDArray[np.float64], symbol: _Symbol) -> _Symbol | None:
    """The ``symbol`` as it lies on the table seen from above (``plane``: the homography from
    the image to it); None where it is no symbol there."""
    return _symbol_of(to_plane(plane, symbol.outline()).astype(np.float32))


def _card_round_symbols_on(plane: npt.NDArray[np.float64], group: list[_Symbol]
                           ) -> npt.NDArray[np.float32] | None:
    """The outline of the card a group of symbols is printed on, found on the table seen from
    above (``plane``: the homography from the image to it), where the symbols keep their
    printed shape, and seen again in the image; None where a symbol is no symbol there."""
    flat_symbols = [flat for flat in (_symbol_on(plane, symbol) for symbol in group) if flat is not None]
    if len(flat_symbols) < len(group):
        return None
    flat_outline = _card_round_symbols(flat_symbols)
    return order_corners(to_plane(np.linalg.inv(plane), flat_outline.astype(np.float64)).astype(np.float32))
