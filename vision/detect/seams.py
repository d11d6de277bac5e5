"""Two or three cards taken for one: a quad crossed through its middle by a thin straight seam, or
by two a third of the way along from either end, is split there (`SeamSplitter`), and a quad of
two cards' size whose halves are two card faces is halved (`doubles_halved`).
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
    blank paper along both sides of the line and card-like halves, is two cards. Three cards in
    a row (a grid's column of cards lying sideways is as long for its width as one card) are
    crossed so a third of the way along from either end, and each piece shows a card's face.

    Each candidate is looked at once, however often the search settles its candidates.
    """

    def __init__(self, maps: Maps) -> None:
        self.maps = maps
        self.pieces: dict[int, tuple[CardQuad, list[CardQuad]]] = {}

    def split(self, candidates: list[CardQuad]) -> list[CardQuad]:
        """``candidates`` with every quad that is two or three touching cards replaced by them,
        and so on down: a block of four by the four."""
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
            halves = [None if piece.partial else _cards_at_seams(piece, self.maps.darkest, self.maps.image)
                      for piece in pieces]
            if not any(halves):
                break
            pieces = [half for piece, split in zip(pieces, halves) for half in (split or [piece])]
        return pieces


def _cards_at_seams(card: CardQuad, darkest: npt.NDArray[np.uint8],
                    image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The two or three cards ``card`` is, split at its seams (see `SeamSplitter`), or None."""
    steps = card.corners[NEXT] - card.corners
    sides = np.hypot(steps[:, 0], steps[:, 1]).tolist()
    flats = []
    for turn in (0, 1):
        corners = np.roll(card.corners, -turn, axis=0)  # the seam runs along side 0
        width = int(round(max(sides[turn], sides[turn + 2])))
        height = int(round(max(sides[turn + 1], sides[(turn + 3) % 4])))
        if width >= 12 and height >= 24:
            # (Three cards in a row are over 1.9 times as long as they are wide: their seams
            # cross the longer sides.)
            flats.append(_Flat(corners, width, height, darkest, thirds=height >= width))
    for flat in flats:
        seam = flat.seam(_MIDDLE_BAND)
        if seam is not None:
            halves = _pieces_between(card, flat.corners, [seam], image)
            if halves is not None:
                return halves
    for flat in flats:
        if not flat.thirds:
            continue
        first = flat.seam(_THIRD_BANDS[0])
        second = flat.seam(_THIRD_BANDS[1]) if first is not None else None
        if first is None or second is None:
            continue
        seams = [first, second]
        thirds = _pieces_between(card, flat.corners, seams, image)
        # Three cards show three cards' faces (or, a block of three rows of cards, split at
        # seams again), and the whole no card's: a cable across one card, or a quad laid
        # half over two, leaves pieces with parts of symbols, or none.
        if (thirds is not None and card_face(image, card.corners) is None
                and all(card_face(image, third.corners) is not None
                        or _cards_at_seams(third, darkest, image) is not None for third in thirds)):
            return thirds
    return None


class _Flat:
    """The rows of a quad (``corners``, turned so that side 0 runs along a seam; ``width`` by
    ``height`` pixels) warped flat from the darkest channel where a seam may run: those of
    the middle band, and with ``thirds`` those of the bands a third of the way along too,
    warped once."""

    def __init__(self, corners: npt.NDArray[np.float32], width: int, height: int,
                 darkest: npt.NDArray[np.uint8], thirds: bool) -> None:
        self.corners, self.height, self.thirds = corners, height, thirds
        self.top, bottom = _seam_band(height, (_THIRD_BANDS[0][0], _THIRD_BANDS[-1][1]) if thirds else _MIDDLE_BAND)
        target = np.float32([[0, -self.top], [width - 1, -self.top], [width - 1, height - 1 - self.top],
                             [0, height - 1 - self.top]])
        self.matrix = cv2.getPerspectiveTransform(corners, target)
        self.rows = cv2.warpPerspective(darkest, self.matrix, (width, bottom - self.top), flags=cv2.INTER_LINEAR)

    def seam(self, band_range: tuple[float, float]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
        """The ends, in the image, of a seam across the quad between the fractions
        ``band_range`` of its height, from side 3 to side 1; or None."""
        top, bottom = _seam_band(self.height, band_range)
        row = _seam_row(self.rows[top - self.top:bottom - self.top], self.height, top, band_range)
        if row is None:
            return None
        width = self.rows.shape[1]
        offset = top - self.top  # (``row`` counts from the band's first row)
        row_ends = np.float32([[[0, row[0] + offset], [width - 1, row[1] + offset]]])
        start, end = cv2.perspectiveTransform(row_ends, np.linalg.inv(self.matrix))[0]
        return start, end


def _pieces_between(card: CardQuad, corners: npt.NDArray[np.float32],
                    seams: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]],
                    image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The pieces of ``card`` (``corners`` turned as for `_Flat`) between its ``seams``
    (in order from side 0), where each has a card's proportions and a paper margin; else None."""
    lines = [(corners[0], corners[1]), *seams, (corners[3], corners[2])]
    pieces = []
    for (start, end), (next_start, next_end) in zip(lines, lines[1:]):
        quad = order_corners(np.array([start, end, next_end, next_start], np.float32))
        if not MIN_ASPECT <= aspect(quad) <= MAX_ASPECT:
            return None
        paper, colour, ink = paper_fraction(image, quad)
        if paper < 0.6:
            return None
        pieces.append(CardQuad(quad, False, score=card.score, paper=colour, ink=ink, guess=card.guess))
    return pieces


# A seam is looked for between these fractions of a quad's height: near its middle (two
# cards), else two, near a third of the way along from either end (three cards in a row).
_MIDDLE_BAND = (0.4, 0.6)
_THIRD_BANDS = ((0.27, 0.39), (0.61, 0.73))
# The dark line is found as a row darker than the rows this many pixels off (a row off either
# way counted too); it may run this many pixels slanted across the quad; and the rows this far
# off it, at least, must be blank paper.
_SEAM_REACH = 2
_SEAM_SLANT = 3
_SEAM_GAP = 3
# ... or up to this many pixels further, where the line is blurred wide.
_SEAM_SHOULDER = 3


def _seam_band(height: int, band_range: tuple[float, float]) -> tuple[int, int]:
    """The rows [top, bottom) of a quad warped to ``height`` rows that `_seam_row` looks at
    for a seam between the fractions ``band_range`` of its height."""
    margin = _SEAM_SLANT + max(_SEAM_GAP, int(round(0.02 * height))) + _SEAM_SHOULDER + _SEAM_REACH + 1
    return (max(0, int(band_range[0] * height) - margin),
            min(height, int(band_range[1] * height) + 1 + margin))


def _seam_row(band: npt.NDArray[np.uint8], height: int, top: int,
              band_range: tuple[float, float]) -> tuple[float, float] | None:
    """Where a thin dark straight line crosses a quad warped flat to ``height`` rows (darkest
    channel; ``band`` holds its rows `_seam_band` from ``top``) from its left side to its
    right, between the fractions ``band_range`` of its height: its rows of ``band`` at the
    left and right ends."""
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
    # quite in line) through the band looked at: (lines, width) row indices of
    # ``band``.
    rows = np.arange(int(band_range[0] * height), int(band_range[1] * height) + 1) - top
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
