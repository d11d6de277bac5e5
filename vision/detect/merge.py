"""One candidate per place (`merge_overlapping`): of overlapping outlines the better card is kept,
a guess over the pieces of a card replaces them, and quads holding two cards or more are dropped
once their cards are found.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import (CardQuad, centers_close, covers, iou_estimate, lies_inside, overlaps,
                                     plain_unless_few, size_mismatch)
from vision.detect.paper import card_face, card_shows_symbols
from vision.detect.perspective import typical_area_model
from vision.quad import grow_quad


def merge_overlapping(candidates: list[CardQuad], image_area: float = np.inf,
                      image: npt.NDArray[np.uint8] | None = None) -> list[CardQuad]:
    """One quad per card from the candidates of all maps (in ``image``, of ``image_area`` pixels).

    Of overlapping candidates the best scored is kept. Then containment is settled: a quad that
    holds two or more card-sized quads is two touching cards seen as one blob, and is dropped;
    small quads inside a card are its symbols (a diamond outline is a fine quadrilateral), and
    are dropped.
    """
    # Cards on one table are alike in size: among overlapping candidates (a card, a card with a
    # strip of table, two cards as one), prefer the one closest to the typical candidate size
    # at its place in the image.
    typical = typical_area_model(plain_unless_few([q for q in candidates if not q.partial]))
    # A map that outlines every card with its shadow (the edges of a pale table) also moves the
    # typical size its way; what lies between two outlines of one card tells which is the card.
    loose = set() if image is None else _loose_outlines(candidates, image)

    def preference(quad: CardQuad) -> float:
        # (A card found from its symbols was found where no card was: what it competes with
        # are the outlines that lost there, a block or a card with a strip of table.)
        weight = 0.5 if (quad.guess and not quad.from_symbols) or id(quad) in loose else 1.0
        return weight * quad.score / (1.0 + 2.0 * size_mismatch(quad, typical(quad.center)))

    kept: list[CardQuad] = []
    covering_kept: list[CardQuad] = []
    for candidate in sorted(candidates, key=lambda q: -preference(q)):
        same_place = [i for i, k in enumerate(kept) if centers_close(k, candidate) and iou_estimate(k, candidate) > 0.5]
        if same_place:
            # A card found from its symbols that a plain outline agrees with is kept as that
            # plain card: a guess never sets the typical card (dev 5278: a card's plain outline
            # lost to the one its symbols gave, and too few plain cards were left to show
            # the table's perspective; the near card, twice the far ones' size, was dropped).
            first = kept[same_place[0]]
            if first.from_symbols and not candidate.guess and iou_estimate(first, candidate) > 0.8:
                kept[same_place[0]] = candidate
            continue
        # (A quad over twice the typical card is no card: it hides no card found from its
        # symbols lying on it.)
        if candidate.guess and any(covers(k, candidate) and not (
                candidate.from_symbols and k.area > 2.0 * typical(k.center)) for k in kept):
            covering_kept.append(candidate)
            continue
        kept.append(candidate)
    # A guess over quads kept may be the card they are pieces of: a pale stripe of a cloth
    # running under a card parts its paper in the maps that outline cards plainly, and only a
    # later look outlines it whole.
    for guess in covering_kept:
        outline = guess.corners.reshape(-1, 1, 2)
        covered = [k for k in kept if covers(k, guess) or cv2.pointPolygonTest(
            outline, tuple(map(float, k.center)), False) > 0]
        # (Not where the frame cuts any of them: a cut card's size says nothing of a card's.)
        if covered and not any(q.partial for q in [guess, *covered]) and _pieces_of(guess, covered, typical) and (
                len(covered) == 1 or sum(k.area for k in covered) >= _COVERING_PIECES * guess.area):
            pieces = {id(k) for k in covered}
            kept = [k for k in kept if id(k) not in pieces] + [guess]
    dropped: set[int] = set()
    blocks: list[CardQuad] = []  # quads holding two cards or more: dropped
    shows_none: dict[int, bool] = {}

    def blank(quad: CardQuad) -> bool:
        assert image is not None
        if id(quad) not in shows_none:
            shows_none[id(quad)] = not card_shows_symbols(image, quad)
        return shows_none[id(quad)]

    for i, quad in enumerate(kept):
        outline = quad.corners.reshape(-1, 1, 2)
        inside = [j for j, other in enumerate(kept) if j != i and other.area < 0.7 * quad.area
                  and cv2.pointPolygonTest(outline, tuple(map(float, other.center)), False) > 0]
        # A symbol is a small part of its card; whatever is near the typical card size is a
        # card (a quad holding many cards dwarfs each of them). In a close-up, though, the
        # symbols outnumber the cards and set the typical size: there a quad traced inside a
        # printed symbol (at most an eighth of its card) is told by its ink, that symbol's
        # stripes or stroke, far fainter than the whole card's strongest ink; and in a card
        # (a quad showing symbols: not a patch of table round some cards), a quad that shows
        # none itself (the bare paper inside an outline symbol, framed by its strong stroke,
        # or a patch of paper between symbols) is no card either.
        # (Nor is a quad of paper far brighter than the outer quad's any part of it: that is a
        # card lying on a dark table, of which a strip reaching the frame edge passes for a
        # card cut by it, with the cards on it for its strong "ink": bench scene 1153.)
        # (And a card prints at most three symbols: more faint quads along the middle of a
        # close-up quad than that are cards on a pale table that the quad traces where it
        # reaches the frame edge: bench scene 1011, seven cards on a white table.)
        close_up = quad.area > _CLOSE_UP * image_area
        card_sized = [j for j in inside if kept[j].area > 0.2 * quad.area
                      or kept[j].area > 0.4 * typical(kept[j].center)]
        if close_up:
            small = [j for j in card_sized if kept[j].area < 0.15 * quad.area
                     and not _far_brighter_paper(kept[j], quad)]
            faint = [j for j in small if _on_long_axis(quad, kept[j].center)
                     and kept[j].ink < _INNER_CARD_INK * quad.ink]
            if len(_outermost([kept[j] for j in faint])) > 3:
                faint = []
            symbols = set(faint)
            others = [j for j in small if j not in symbols]
            if others and image is not None and not blank(quad):
                symbols.update(j for j in others if blank(kept[j]))
            card_sized = [j for j in card_sized if j not in symbols]
        elif len(card_sized) >= 2 and image is not None and not blank(quad):
            # A card holding small blank quads the size of a checked cloth's cells (the paper
            # between its symbols), which set the typical size, is no block of cards: close-up
            # 7015, a card on a cloth of pale cells, was dropped for two such patches. (The
            # halves of a block of two cards are half its size, and may show no symbols when
            # blurred.)
            card_sized = [j for j in card_sized if not (kept[j].area < 0.25 * quad.area and blank(kept[j]))]
        if (len(card_sized) < 2 and len(inside) >= 2 and not close_up and image is not None
                and card_face(image, quad.corners) is None):
            # A block of touching cards found first sets the typical size, and its cards look
            # small beside it: those inside it showing a card's face are cards all the same,
            # where it shows no card's face (touching scene 20073, a grid of 16 cards: 4 found,
            # 8 with this).
            card_sized += [j for j in inside if j not in card_sized and kept[j].area > _FACE_IN_BLOCK * quad.area
                           and card_face(image, kept[j].corners) is not None]
        if len(card_sized) >= 2:
            dropped.add(i)
            blocks.append(quad)
            continue
        dropped.update(j for j in inside if j not in card_sized)
        # One card-sized quad inside another: a card with a strip of table, or a piece of a
        # card cut off by a symbol's outline. The one nearer the typical card size is the card.
        for j in card_sized:
            if (size_mismatch(kept[j], typical(kept[j].center))
                    < size_mismatch(quad, typical(quad.center))):
                dropped.add(i)
            else:
                dropped.add(j)
    merged = [quad for i, quad in enumerate(kept) if i not in dropped]
    # A guess hidden under a block of cards is one of its cards once the block is dropped (dev
    # 5038: a card in a grid of touching cards, laid beside its neighbour, was lost with the
    # block it lay under), where no quad kept covers it and its face is a card's (not half a
    # card's: bench 1083).
    if image is not None and blocks:
        for guess in covering_kept:
            if (any(covers(block, guess) for block in blocks) and not any(guess is k for k in kept)
                    and not any(overlaps(k, guess) for k in merged)
                    and card_face(image, guess.corners) is not None):
                merged.append(guess)
    return merged


# A quad inside a block showing a card's face is a card from this fraction of the block's area
# (a block of 4 x 4 cards).
_FACE_IN_BLOCK = 0.05
# Two or more pieces of a card cover at least this fraction of it.
_COVERING_PIECES = 0.7


def _pieces_of(quad: CardQuad, inner: list[CardQuad], typical: Callable[[npt.NDArray[np.float32]], float]
               ) -> bool:
    """Whether the quads ``inner`` are pieces of ``quad``: each lies inside it (`lies_inside`)
    and it is nearer the ``typical`` card size than each of them."""
    mismatch = size_mismatch(quad, typical(quad.center))
    return all(lies_inside(piece, quad) and mismatch < size_mismatch(piece, typical(piece.center))
               for piece in inner)


def _outermost(quads: list[CardQuad]) -> list[CardQuad]:
    """The ``quads`` whose centre lies inside no larger one of them."""
    return [q for q in quads if not any(
        other.area > q.area and cv2.pointPolygonTest(other.corners.reshape(-1, 1, 2),
                                                     tuple(map(float, q.center)), False) > 0
        for other in quads)]


def _far_brighter_paper(inner: CardQuad, outer: CardQuad) -> bool:
    """Whether ``inner``'s paper is far brighter than ``outer``'s: no printed symbol of a card
    shows anything brighter than the card's own paper."""
    return max(inner.paper) > _BRIGHTER_PAPER * max(outer.paper) + 10.0


_BRIGHTER_PAPER = 1.5


# A quad inside another is a card, not a symbol, only with at least this fraction of the other's
# ink strength: symbols traced inside a card come out at 0.4-0.55 of it (generated close-ups),
# cards inside a block of cards at about 1.
_INNER_CARD_INK = 0.7
# A quad over this fraction of the image is a close-up of a card or a few.
_CLOSE_UP = 0.2


def _loose_outlines(candidates: list[CardQuad], image: npt.NDArray[np.uint8]) -> set[int]:
    """The ids of plain candidates that frame another plain candidate of the same card with a
    band of something that is not that card's paper: a shadow, a strip of table.

    Only a frame all round counts (the inner outline near the middle of the outer one, the band
    a few pixels wide): a piece of a card cut off along a symbol shares three edges with the
    card, and the band outside it is the table.
    """
    plain = [q for q in candidates if not q.guess and not q.partial]
    loose: set[int] = set()
    for outer in plain:
        for inner in plain:
            if inner is outer or id(outer) in loose or not 0.6 < inner.area / outer.area < 0.97:
                continue
            gap = 0.5 * (np.sqrt(outer.area) - np.sqrt(inner.area))
            if float(np.hypot(*(outer.center - inner.center))) > 1.2 * gap:
                continue
            if _band_is_not_paper(image, inner, outer, float(np.clip(0.5 * gap, 1.5, 4.0))):
                loose.add(id(outer))
    return loose


def _band_is_not_paper(image: npt.NDArray[np.uint8], inner: CardQuad, outer: CardQuad, distance: float) -> bool:
    """Whether the band ``distance`` pixels outside ``inner`` (where it lies inside ``outer``)
    differs in colour from ``inner``'s paper."""
    ring = grow_quad(inner.corners, distance).astype(np.float64)
    steps = np.linspace(0.1, 0.9, 9)  # along each side, away from the rounded corners
    points = np.vstack([ring[k] + (ring[(k + 1) % 4] - ring[k]) * steps[:, None] for k in range(4)])
    outline = outer.corners.reshape(-1, 1, 2).astype(np.float32)
    inside = [p for p in points if cv2.pointPolygonTest(outline, (float(p[0]), float(p[1])), False) >= 0]
    if len(inside) < 0.75 * len(points):
        return False
    xy = np.asarray(inside, np.float32)
    band = cv2.remap(image, xy[:, 0].reshape(1, -1), xy[:, 1].reshape(1, -1), cv2.INTER_LINEAR)
    colour = np.median(band.reshape(-1, 3).astype(np.float64), axis=0)
    paper = np.asarray(inner.paper, np.float64)
    return float(np.abs(colour - paper).max()) > 0.12 * float(paper.max()) + 4.0


def _on_long_axis(card: CardQuad, point: npt.NDArray[np.float32]) -> bool:
    """Whether a point lies on a card's long middle line (within a sixth of its width), where
    the symbols are printed, in the card's own perspective."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(card.corners.astype(np.float32), unit)
    across = cv2.perspectiveTransform(np.asarray(point, np.float32).reshape(1, 1, 2), matrix)[0, 0, 0]
    return bool(abs(float(across) - 0.5) < 1 / 6)
