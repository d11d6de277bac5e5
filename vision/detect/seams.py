"""Two cards taken for one: a quad crossed through its middle by a thin straight seam is split there
(`SeamSplitter`), and a quad of two cards' size whose halves are two card faces is halved
(`doubles_halved`).
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import CardQuad, MAX_ASPECT, MIN_ASPECT, areas_beside, plain_unless_few
from vision.detect.maps import Maps
from vision.detect.paper import card_face, paper_fraction
from vision.detect.perspective import typical_area_model
from vision.quad import NEXT, aspect, order_corners


class SeamSplitter:
    """Two cards laid edge to edge make one card-shaped blob when a tilted camera foreshortens
    them (two cards end to end, squeezed) or when they lie side by side (1.28 long for its
    width, a card seen a little from the side); their seam shows only as a thin line. A quad
    crossed near its middle by a thin dark straight line that runs to both its sides, with
    blank paper along both sides of the line and card-like halves, is two cards.

    Each candidate is looked at once, however often the search settles its candidates.
    """

    def __init__(self, maps: Maps) -> None:
        self.maps = maps
        self.pieces: dict[int, tuple[CardQuad, list[CardQuad]]] = {}

    def split(self, candidates: list[CardQuad]) -> list[CardQuad]:
        """``candidates`` with every quad that is two touching cards replaced by the two, and
        so on down: a block of four by the four."""
        result = []
        for candidate in candidates:
            known = self.pieces.get(id(candidate))
            if known is None or known[0] is not candidate:
                known = (candidate, self._pieces(candidate))
                self.pieces[id(candidate)] = known
            result.extend(known[1])
        return result

    def _pieces(self, candidate: CardQuad) -> list[CardQuad]:
        pieces = [candidate]
        for _ in range(4):  # (a block of 4 x 4 cards halves four times)
            halves = [None if piece.partial else _halves_at_seam(piece, self.maps.darkest, self.maps.image)
                      for piece in pieces]
            if not any(halves):
                break
            pieces = [half for piece, split in zip(pieces, halves) for half in (split or [piece])]
        return pieces


def _halves_at_seam(card: CardQuad, darkest: npt.NDArray[np.uint8],
                    image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The two cards ``card`` is, split at a seam (see `SeamSplitter`), or None."""
    steps = card.corners[NEXT] - card.corners
    sides = np.hypot(steps[:, 0], steps[:, 1]).tolist()
    for turn in (0, 1):
        corners = np.roll(card.corners, -turn, axis=0)  # the seam runs along side 0
        width = int(round(max(sides[turn], sides[turn + 2])))
        height = int(round(max(sides[turn + 1], sides[(turn + 3) % 4])))
        if width < 12 or height < 24:
            continue
        # Only the middle rows of the quad warped flat, where a seam may run, are looked at.
        top, bottom = _seam_band(height)
        target = np.float32([[0, -top], [width - 1, -top], [width - 1, height - 1 - top],
                             [0, height - 1 - top]])
        matrix = cv2.getPerspectiveTransform(corners, target)
        band = cv2.warpPerspective(darkest, matrix, (width, bottom - top), flags=cv2.INTER_LINEAR)
        row = _seam_row(band, height, top)
        if row is None:
            continue
        row_ends = np.float32([[[0, row[0]], [width - 1, row[1]]]])
        start, end = cv2.perspectiveTransform(row_ends, np.linalg.inv(matrix))[0]
        halves = []
        for outline in ([corners[0], corners[1], end, start], [start, end, corners[2], corners[3]]):
            quad = order_corners(np.array(outline, np.float32))
            if not MIN_ASPECT <= aspect(quad) <= MAX_ASPECT:
                break
            paper, colour, ink = paper_fraction(image, quad)
            if paper < 0.6:
                break
            halves.append(CardQuad(quad, False, score=card.score, paper=colour, ink=ink, guess=card.guess))
        if len(halves) == 2:
            return halves
    return None


# A seam is looked for between these fractions of a quad's height.
_SEAM_BAND = (0.4, 0.6)
# The dark line is found as a row darker than the rows this many pixels off (a row off either
# way counted too); it may run this many pixels slanted across the quad; and the rows this far
# off it, at least, must be blank paper.
_SEAM_REACH = 2
_SEAM_SLANT = 3
_SEAM_GAP = 3
# ... or up to this many pixels further, where the line is blurred wide.
_SEAM_SHOULDER = 3


def _seam_band(height: int) -> tuple[int, int]:
    """The rows [top, bottom) of a quad warped to ``height`` rows that `_seam_row` looks at."""
    margin = _SEAM_SLANT + max(_SEAM_GAP, int(round(0.02 * height))) + _SEAM_SHOULDER + _SEAM_REACH + 1
    return (max(0, int(_SEAM_BAND[0] * height) - margin),
            min(height, int(_SEAM_BAND[1] * height) + 1 + margin))


def _seam_row(band: npt.NDArray[np.uint8], height: int, top: int) -> tuple[float, float] | None:
    """Where a thin dark straight line crosses a quad warped flat to ``height`` rows (darkest
    channel; ``band`` holds its rows `_seam_band` from ``top``) from its left side to its
    right, near its middle: its rows of ``band`` at the left and right ends."""
    width = band.shape[1]
    # Smoothing along the rows keeps a line along them and evens out noise.
    smooth = cv2.blur(band, (max(3, (width // 12) | 1), 1)).astype(np.int16)
    reach = _SEAM_REACH
    dip = np.minimum(smooth[:-2 * reach], smooth[2 * reach:]) - smooth[reach:-reach]
    dark = dip > 4  # grey levels: over what noise leaves after the smoothing
    dark[1:-1] = dark[:-2] | dark[1:-1] | dark[2:]  # a line a row off here and there
    margin = max(2, int(0.15 * width))
    gap = max(_SEAM_GAP, int(round(0.02 * height)))
    # Every line from row r at the left to r + k at the right (|k| <= 3 pixels: cards not
    # quite in line) through the middle fifth of the quad: (lines, width) row indices of
    # ``band``.
    rows = np.arange(int(_SEAM_BAND[0] * height), int(_SEAM_BAND[1] * height) + 1) - top
    # (Most quads, single cards, show no dark line at all in their margins there.)
    near = dark[max(0, rows[0] - reach - _SEAM_SLANT):rows[-1] - reach + _SEAM_SLANT + 1]
    if min(near[:, :margin].any(axis=0).mean(), near[:, -margin:].any(axis=0).mean()) <= 0.6:
        return None
    columns = np.arange(width)
    slants = np.arange(-_SEAM_SLANT, _SEAM_SLANT + 1)[:, None]
    offsets = np.round(slants * (columns / (width - 1) - 0.5)).astype(np.intp)
    lines = (rows[None, :, None] + offsets[:, None, :]).reshape(-1, width)
    farthest = gap + _SEAM_SHOULDER
    lines = lines[(lines.min(axis=1) >= max(farthest, reach)) & (lines.max(axis=1) < len(band) - max(farthest, reach))]
    if not len(lines):
        return None
    on_line = dark[lines - reach, columns]
    # Dark along its whole length and at both ends: a symbol's stripe stops short of the
    # card's edges.
    score = np.minimum(on_line.mean(axis=1), np.minimum(on_line[:, :margin].mean(axis=1),
                                                          on_line[:, -margin:].mean(axis=1)))
    candidates = np.flatnonzero(score > 0.6)
    if not len(candidates):
        return None
    # Blank paper on both sides of the line: a card's margin, not the inside of a symbol. (A
    # line blurred wider than the gap has dark shoulders there: a few pixels further out are
    # looked at too, on each side.)
    paper_level = 0.8 * np.percentile(smooth, 90)
    chosen = lines[candidates]
    blank = np.ones(len(candidates), bool)
    for side in (-1, 1):
        blank &= np.any([np.percentile(smooth[chosen + side * offset, columns], 5, axis=1) >= paper_level
                         for offset in range(gap, farthest + 1)], axis=0)
    if not blank.any():
        return None
    best = lines[candidates[blank][np.argmax(score[candidates[blank]])]]
    return float(best[0]), float(best[-1])


def doubles_halved(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``cards`` with each quad that is two cards laid side by side with no seam showing
    replaced by the two.

    Two cards touching along their long sides make one quad 1.28 long for its width, which a
    card seen a little from the side is too (and so, seen steeply, do two cards end to end);
    where no seam shows (`SeamSplitter` looks for one), only the size and the faces tell: a
    quad well larger than the typical card there, whose face is no card's, and whose halves
    (across its long sides) each are: paper round centred symbols lying across it. (Two cards
    side by side warped as one lie a quarter turn off, their symbols squeezed tall. A card
    larger than the typical one, in a close-up where the typical card is a poor guess, is
    one card's face, and halved, its two symbols would lie along each half, a quarter turn
    off, its one or three be cut or off the halves' middles.)

    With fewer than four whole cards (a close-up of two or three) there is no typical size to
    go by, and the faces alone tell: two cards side by side, or one lying partly over the
    other, make one quad whose face is no card's (five or six symbols, two groups off its
    middle), and whose halves are two cards' faces (close-ups 7003, 7039, 9007, 9010: the pair
    was found as one card and read as one).
    """
    whole = [card for card in cards if not card.partial]
    if len(whole) >= 4:
        # (The typical card's fit over the whole view costs about a millisecond: it is made only
        # where some card is well larger than its three nearest, as no card of a table seen from
        # straight above is. It judges better than the nearest alone, which may be doubles too,
        # or far: two doubles were 1.31 and 1.37 times theirs, and a grid's corner cards on the
        # real webcam frames, seen at an angle, are up to 1.37 times theirs.)
        areas, beside = areas_beside(whole)
        if not (areas >= _LARGER_THAN_BESIDE * beside).any():
            return cards
        typical = typical_area_model(plain_unless_few(whole))

        def may_be_two(card: CardQuad) -> bool:
            return card.area >= _DOUBLE_AREA * typical(card.center)
    else:
        def may_be_two(card: CardQuad) -> bool:
            return True  # (no typical size to go by: the faces decide)
    result = []
    for card in cards:
        halves = None
        if not card.partial and may_be_two(card) and card_face(image, card.corners) is None:
            halves = _halves_across(card, image)
        result.extend(halves or [card])
    return result


def _halves_across(card: CardQuad, image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The two halves of a quad cut across its longer sides (or else its shorter ones), near
    their middles, where each is a card: card proportions, a paper margin, and centred symbols
    lying across it; else None. (The quad may take in more of one card than of the other, or
    cut one short: each half's cut is tried a little off the middle too, on its own.)"""
    corners = card.corners
    steps = corners[NEXT] - corners
    lengths = np.hypot(steps[:, 0], steps[:, 1])
    # Sides 0 and 2, or 1 and 3, are the longer pair; the cut runs from one to the other. (Two
    # cards end to end seen steeply along their length look shorter that way than across: bench
    # 1040. Then the cut across the shorter sides parts them, tried second.)
    longer = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    for turn in (longer, 1 - longer):
        a, b, c, d = np.roll(corners, -turn, axis=0).astype(np.float64)
        first = next((half for at in _DOUBLE_CUTS if (half := card_face(
            image, np.array([a, a + at * (b - a), d + at * (c - d), d], np.float32))) is not None), None)
        if first is None:
            continue
        second = next((half for at in _DOUBLE_CUTS if (half := card_face(
            image, np.array([b + at * (a - b), b, c, c + at * (d - c)], np.float32))) is not None), None)
        if second is not None:
            return [first, second]
    return None


# A quad at least this many times the typical card's area there may be two cards, cut at
# these fractions of its longer sides; it is looked for only where a card is at least this
# many times the median area of its three nearest.
_DOUBLE_AREA = 1.3
_LARGER_THAN_BESIDE = 1.3
_DOUBLE_CUTS = (0.5, 0.45, 0.55, 0.4, 0.6)
