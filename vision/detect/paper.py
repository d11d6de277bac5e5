"""Whether a quad holds a card's face: paper all round the inside of its outline
(`paper_fraction`), ink as strong as a card's in its middle, symbols centred on it (`card_face`,
`card_shows_symbols`).
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import warp_card
from vision.detect.candidate import ALL_SIDES, CardQuad, MAX_ASPECT, MIN_ASPECT, cut_sides, quick_percentile
from vision.features import InkSegmentation, looks_sideways, segment_ink, shows_symbols, symbols_off_centre
from vision.quad import aspect, order_corners


# A card's ink strength over the median of the other cards' below which it is no card: on the
# 12 labelled photos the weakest card is at 0.69, on the generated samples at 0.42; pale cells
# of checked cloth come out at 0.2-0.35.
INK_RATIO = 0.35
# Paper in a deep shadow still keeps this fraction of the lit cards' brightness.
SHADOWED_PAPER = 0.35
# Paper in shadow is within this of the lit paper's tint (each channel's share of the sum); a
# card's ring judged with shadows must be this much paper.
SHADOW_TINT = 0.02
_SHADOWED_RING = 0.9


def lab_distance(crop: npt.NDArray[np.uint8], first: npt.NDArray[np.uint8],
                 second: npt.NDArray[np.uint8]) -> float:
    """The Lab distance (8-bit units) between the median colours of two non-empty masks of a
    BGR crop."""
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    return float(np.linalg.norm(np.median(lab[first > 0], axis=0) - np.median(lab[second > 0], axis=0)))


def paper_fraction(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32],
                   sides: int = ALL_SIDES) -> tuple[float, tuple[float, float, float], float]:
    """How much of a ring just inside the quad's edge looks like card paper.

    ``sides`` (a bit mask, bit k for the side from corner k to corner k + 1) says along which
    sides the ring runs: a card cut by the frame edge is cut anywhere, often through its
    symbols, so the side along the frame is no edge of the card and is left out.

    Paper is even and nearly colourless whatever the light: the ring's typical colour must be
    bright for the scene and not strongly tinted (wood, skin and printed boxes are), and most ring
    pixels must be close to that colour (a phone screen, a hand or art on a box are not even).
    Returns the fraction 0..1, the paper's typical BGR colour and the ink's strength (the 99th
    percentile of the middle's difference from the paper, over the paper's brightness).
    """
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), _RING_PATCH_CORNERS)
    raw = cv2.warpPerspective(image, matrix, _RING_PATCH, flags=cv2.INTER_LINEAR)
    # Sensor noise in dim light is not texture: a median filter removes it and keeps edges
    # (but also thin ink lines, so ink is looked for in the unfiltered patch).
    # Channels first, (3, N): NumPy reduces over the three channels of (N, 3) arrays 10x slower.
    patch = cv2.medianBlur(raw, 3).reshape(-1, 3)
    ring_index, ring_solver, ring_design = _ring_of(sides)
    ring = np.ascontiguousarray(patch[ring_index].T, dtype=np.float32)
    typical = _median_rows(ring)
    # Paper under warm lamps turns orange, under daylight blue, but never as tinted as a
    # coloured surface.
    colour = (float(typical[0]), float(typical[1]), float(typical[2]))
    brightest = max(colour)
    if brightest < 20 or brightest > 3.0 * max(min(colour), 1.0):
        return 0.0, colour, 0.0
    # Evenness against a plane fitted to the ring, so that a smooth light gradient across the
    # card still counts as even paper.
    coefficients = ring @ ring_solver                                  # (3 channels, 3 terms)
    plane = coefficients @ ring_design
    residual = _channel_max(np.abs(ring - plane))
    close = residual < 0.08 * brightest + 5
    shadowed_brightness = None  # the ring's, where it is judged as lit and shadowed paper
    if np.count_nonzero(close) < 0.6 * len(close):
        # A shadow's edge across the card is no plane (the plane fitted lies between the lit
        # and the shadowed paper), but paper in shadow keeps its tint: darker in proportion in
        # every channel. Only a ring all but entirely of lit or shadowed paper is a card in
        # shadow, though: a grey-white table looks like paper in shadow too.
        ring_sum = ring.sum(axis=0) + 1.0
        plane_sum = np.maximum(plane.sum(axis=0), 1.0)
        shade = ring_sum / plane_sum
        tint_off = _channel_max(np.abs(ring / ring_sum - plane / plane_sum))
        either = close | ((tint_off < SHADOW_TINT) & (shade > SHADOWED_PAPER)
                          & (shade < 1.0 / SHADOWED_PAPER))
        if np.count_nonzero(either) >= _SHADOWED_RING * len(close):
            close = either
            shadowed_brightness = ring_sum
    # Every card carries one to three printed symbols: ink must stand out of the paper's noise
    # over part of the middle. This rejects planks, sheets of paper, plain bright rectangles.
    ink, strength = _ink_of(*_ink_against_plane(raw, residual, coefficients), brightest)
    if ink < 0.01 and sides == ALL_SIDES:
        bowed = _under_bowed_light(ring, residual, close, brightest)
        if bowed is not None:
            ink, strength = _ink_of(*_ink_against_bowed_light(raw, *bowed), brightest)
    if ink < 0.01 and shadowed_brightness is not None:
        # (Only where the plane sees none: measured so for every shadowed ring, cards the
        # plane's measure passed changed too, and one scene of a striped cloth lost four.)
        runs = _shadow_runs(shadowed_brightness, ring_index)
        # A band of shadow across a card (close-up 9004) leaves two runs of each round the
        # ring, as a crossing of a checked cloth's cells does: there only coloured ink counts.
        if runs == (1, 1) or (runs == (2, 2) and _coloured_ink(raw)):
            ink, strength = _ink_of(*_ink_under_shadow_edge(raw, patch), brightest)
    if ink < 0.01:
        return 0.0, colour, strength
    return float(np.count_nonzero(close)) / len(close), colour, strength


def _ink_of(noise: float, difference: npt.NDArray[np.float32], brightest: float) -> tuple[float, float]:
    """From the paper's ``noise`` and each middle pixel's ``difference`` from the paper: the
    fraction of the middle that is ink (standing out of the noise, and by a tenth of the
    paper's ``brightest`` channel at least) and the ink's strength (the 99th percentile of the
    difference, over that brightness)."""
    ink = np.count_nonzero(difference > max(0.1 * brightest, 4 * noise) + 4) / len(difference)
    return ink, quick_percentile(difference, 0.99) / brightest


def _shadow_runs(brightness: npt.NDArray[np.float32], ring_index: npt.NDArray[np.intp]) -> tuple[int, int]:
    """In how many runs the ring's shadowed and lit paper (its pixels' ``brightness`` at the
    patch's flat ``ring_index``) lie: one each, as one shadow's edge across a card leaves them;
    two each, as a band of shadow does. Round a quad traced on a checked cloth, its cells
    alternate: each is paper-like and keeps the same tint, lit or shadowed, but they make
    several runs (empty table 11006: ten cells more taken for cards, taken as one edge), or
    round a crossing of the checks, two each."""
    low, high = quick_percentile(brightness, 0.1), quick_percentile(brightness, 0.9)
    middle, margin = (low + high) / 2, (high - low) / 4
    least = 0.03 * len(brightness)
    canvas = np.zeros(_RING_PATCH[0] * _RING_PATCH[1], np.uint8)
    runs = []
    for part in (brightness < middle - margin, brightness > middle + margin):
        canvas[:] = 0
        canvas[ring_index[part]] = 255
        _, _, stats, _ = cv2.connectedComponentsWithStats(canvas.reshape(_RING_PATCH[1], _RING_PATCH[0]),
                                                          connectivity=8)
        runs.append(int(np.count_nonzero(stats[1:, cv2.CC_STAT_AREA] >= least)))
    return runs[0], runs[1]


def shows_coloured_ink(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32]) -> bool:
    """Whether the middle of the card a quad of ``image`` outlines shows some coloured ink: its
    most coloured pixels (the 99th percentile) spread over their channels by at least
    `_SOME_CHROMA` of the brightest. (A small card's thin, blurred strokes mix with the paper,
    so few of its pixels pass `_coloured_ink`.)"""
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), _RING_PATCH_CORNERS)
    raw = cv2.warpPerspective(image, matrix, _RING_PATCH, flags=cv2.INTER_LINEAR)
    return quick_percentile(_middle_chroma(raw), 0.99) >= _SOME_CHROMA


# The small cards found from symbols alone in fresh scene 6043 (a striped cloth) measured
# 0.26-0.43; a grey checked cloth's dark crossings ringed by pale cells, 0.06-0.17 (empty
# table 11006).
_SOME_CHROMA = 0.2


def _coloured_ink(raw: npt.NDArray[np.uint8]) -> bool:
    """Whether a card patch's middle holds coloured ink: red, green and purple symbols are
    strongly coloured, paper lit or shadowed nearly grey, and a grey checked cloth's dark cells
    too."""
    chroma = _middle_chroma(raw)
    return bool(np.count_nonzero(chroma > _INK_CHROMA) >= 0.05 * len(chroma))


def _middle_chroma(raw: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """How coloured each pixel of a card patch's middle is: the spread of its channels over
    its brightest one (0 for grey)."""
    middle = raw[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).astype(np.float32)
    top, bottom = middle.max(axis=1), middle.min(axis=1)
    return (top - bottom) / np.maximum(top, 1.0)


# A pixel whose channels spread by this fraction of its brightest one is coloured (card paper,
# lit or shadowed, is nearly grey under a camera's white balance).
_INK_CHROMA = 0.4


def _ink_against_plane(raw: npt.NDArray[np.uint8], residual: npt.NDArray[np.float32],
                       coefficients: npt.NDArray[np.float32]) -> tuple[float, npt.NDArray[np.float32]]:
    """The paper's noise (the ring's median distance from the plane fitted to it) and how far
    each pixel of the middle of the unfiltered patch lies from that plane's paper colour."""
    return quick_percentile(residual, 0.5), _middle_off_surface(raw, coefficients, _MIDDLE_DESIGN)


def _middle_off_surface(raw: npt.NDArray[np.uint8], coefficients: npt.NDArray[np.float32],
                        middle_terms: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """How far each pixel of the middle of the unfiltered patch lies from the paper colour of
    the surface fitted to the ring (its ``coefficients`` (3, T), evaluated with the middle's
    ``middle_terms`` (T, M))."""
    middle = np.ascontiguousarray(raw[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).T, dtype=np.float32)
    return _channel_max(np.abs(middle - coefficients @ middle_terms))


def _under_bowed_light(ring: npt.NDArray[np.float32], residual: npt.NDArray[np.float32],
                       close: npt.NDArray[np.bool_], brightest: float
                       ) -> tuple[float, npt.NDArray[np.float32]] | None:
    """Where light falls off round a spot across the card (a lamp's glare, a close lamp's
    pool), the paper's brightness bows, and the plane fitted to the ring misses it by far more
    than the paper's grain: the faint symbols of a washed-out card then hide in that "noise".
    For a ``ring`` (3, N) all round the card whose paper is even (``close`` to the plane
    nearly all round) and which a quadratic surface fits far better than the plane (its
    ``residual``), and fits to within the grain of smooth paper: the paper's noise under that
    surface and its coefficients (3, 6). Else None: a checked cloth's cells or wood grain round
    a patch of table are no smooth bow of light, and the quadratic's three more terms would let
    such patches' texture pass for ink. (Measured with the quadratic for every ring, the
    generated scenes' false cards went from 85 to 144; gated so, and asked only where the plane
    sees no ink, not one scene changed, while of the 8 cards the labelled photos under a glare
    spot lost, 3 are found.)"""
    if np.count_nonzero(close) < _BOWED_EVEN_RING * len(close):
        return None
    solver, terms = _RING_QUADRATIC
    coefficients = ring @ solver
    noise = quick_percentile(_channel_max(np.abs(ring - coefficients @ terms)), 0.5)
    if quick_percentile(residual, 0.5) < _BOW_MISFIT * noise + 1 or noise > _SMOOTH_PAPER * brightest + 0.5:
        return None
    return noise, coefficients


def _ink_against_bowed_light(raw: npt.NDArray[np.uint8], noise: float, coefficients: npt.NDArray[np.float32]
                             ) -> tuple[float, npt.NDArray[np.float32]]:
    """As `_ink_against_plane`, against the quadratic surface `_under_bowed_light` fitted."""
    return noise, _middle_off_surface(raw, coefficients, _MIDDLE_QUADRATIC)


# Light is taken to bow across a card whose ring is this much even paper, which the plane misses
# (median distance) by twice what a quadratic surface does, and a pixel more, where that surface
# fits to within this fraction of the paper's brightness (plus half a pixel): under the glare
# spot of the labelled photos, 1.0-1.9 of 200-250 against the plane's 4.5-8.6; patches of
# checked cloth and light wood whose texture the quadratic took for ink, 2.3-5.3 of 84-186.
_BOWED_EVEN_RING = 0.95
_BOW_MISFIT = 2.0
_SMOOTH_PAPER = 0.01


def _ink_under_shadow_edge(raw: npt.NDArray[np.uint8], filtered: npt.NDArray[np.uint8]
                           ) -> tuple[float, npt.NDArray[np.float32]]:
    """As `_ink_against_plane` for a patch with a shadow's edge across it, which no plane
    follows: the step between lit and shadowed paper is taken for noise, and a faint stroke
    no longer stands out of it (bench 1130: a pale outline oval half in shadow measured no ink
    at all). The paper there is the patch closed over its symbols instead: a closing keeps a
    step of light but fills dark strokes narrower than its kernel. The noise is the median
    filtered patch's (``filtered``, (N, 3)) median distance below that paper."""
    paper = cv2.morphologyEx(raw, cv2.MORPH_CLOSE, _SHADOW_CLOSING)
    below = paper.astype(np.float32) - raw.astype(np.float32)
    middle = below[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).T
    smooth_below = paper.reshape(-1, 3).astype(np.float32) - filtered.astype(np.float32)
    noise = float(np.median(smooth_below.max(axis=1)))
    return noise, _channel_max(np.ascontiguousarray(middle))


# Wider than a symbol's stroke on the 40x64 patch, and than most solid symbols' thickness.
_SHADOW_CLOSING = cv2.getStructuringElement(cv2.MORPH_RECT, (11, 11))


def _channel_max(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The largest of the three rows of a (3, N) array."""
    return np.maximum(np.maximum(values[0], values[1]), values[2])


def _median_rows(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The median of each row of a (C, N) array, as ``quick_percentile(row, 0.5)``."""
    count = values.shape[1]
    low = (count - 1) // 2
    high = low + 1 if count % 2 == 0 else low
    part = np.partition(values, (low, high), axis=1)
    return (0.5 * (part[:, low] + part[:, high])).astype(np.float32)


def _ring_mask(size: tuple[int, int], sides: int = ALL_SIDES) -> npt.NDArray[np.bool_]:
    """A thin band 3-8% in from the edge: inside the card even if the quad is a little large,
    and outside the symbols even on decks whose symbols nearly fill the card; along the
    ``sides`` of the bit mask only (bit 0 the top, then clockwise)."""
    width, height = size
    ring = np.zeros((height, width), dtype=bool)
    if sides & 1:
        ring[2:5, 2:-2] = True
    if sides & 2:
        ring[2:-2, -4:-2] = True
    if sides & 4:
        ring[-5:-2, 2:-2] = True
    if sides & 8:
        ring[2:-2, 2:4] = True
    return ring


_RING_PATCH = (40, 64)
_RING_PATCH_CORNERS = np.array([[0, 0], [_RING_PATCH[0] - 1, 0], [_RING_PATCH[0] - 1, _RING_PATCH[1] - 1],
                                [0, _RING_PATCH[1] - 1]], dtype=np.float32)


@lru_cache(maxsize=None)
def _ring_of(sides: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The ring along ``sides`` of the patch: its pixels' flat indices (N,), the least-squares
    plane through them (``pixels @ solver`` (3,) for pixels (N,)), and their (y, x, 1) (3, N),
    with which a plane is evaluated at them."""
    ring = _ring_mask(_RING_PATCH, sides)
    design = np.stack([*np.nonzero(ring), np.ones(int(ring.sum()))]).astype(np.float64)
    return (np.flatnonzero(ring), np.linalg.pinv(design).astype(np.float32), design.astype(np.float32))


# The card's middle, where its symbols are: rows 8 to 8 from the bottom, columns 6 to 6 from
# the right, and each pixel's (y, x, 1) there, (3, M).
_MIDDLE_ROWS = slice(8, _RING_PATCH[1] - 8)
_MIDDLE_COLUMNS = slice(6, _RING_PATCH[0] - 6)
_MIDDLE_DESIGN = np.stack([grid.ravel() for grid in np.mgrid[_MIDDLE_ROWS, _MIDDLE_COLUMNS]]
                          + [np.ones((_MIDDLE_ROWS.stop - _MIDDLE_ROWS.start)
                                     * (_MIDDLE_COLUMNS.stop - _MIDDLE_COLUMNS.start))]).astype(np.float32)


def _quadratic_terms(rows: npt.NDArray[np.intp], columns: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """The terms of a quadratic surface (v, u, 1, v^2, uv, u^2) at patch pixels (``rows``,
    ``columns``), v and u running -1..1 across the patch so that its terms are of one scale:
    (6, N)."""
    v = (rows - (_RING_PATCH[1] - 1) / 2) / (_RING_PATCH[1] / 2)
    u = (columns - (_RING_PATCH[0] - 1) / 2) / (_RING_PATCH[0] / 2)
    return np.stack([v, u, np.ones(len(v)), v * v, u * v, u * u]).astype(np.float64)


def _ring_quadratic() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The least-squares quadratic surface through the ring all round the patch (``pixels @
    solver`` (6,) for its pixels (N,)), and its terms there (6, N)."""
    terms = _quadratic_terms(*np.nonzero(_ring_mask(_RING_PATCH, ALL_SIDES)))
    return np.linalg.pinv(terms).astype(np.float32), terms.astype(np.float32)


_RING_QUADRATIC = _ring_quadratic()
# The quadratic's terms over the card's middle (6, M).
_MIDDLE_QUADRATIC = _quadratic_terms(
    *(grid.ravel() for grid in np.mgrid[_MIDDLE_ROWS, _MIDDLE_COLUMNS])).astype(np.float32)


def shows_centred_symbols(image: npt.NDArray[np.uint8], quad: CardQuad) -> bool:
    """Whether the face a quad outlines shows one to three printed symbols, centred, as every
    SET card does (`shows_symbols`, `symbols_off_centre`)."""
    return _centred_symbols(segment_ink(warp_card(image, quad.corners)))


def _centred_symbols(face: InkSegmentation) -> bool:
    """Whether a face shows one to three printed symbols, centred."""
    return 1 <= len(face.symbols) <= 3 and shows_symbols(face) and not symbols_off_centre(face)


# A whole card whose ink is fainter than INK_RATIO of the typical card's is still a card where
# its face shows centred symbols; only faces of at least this fraction of the typical ink are
# looked at (a look at a face costs a warp; on the 840 bench and dev scenes no card found
# this way was fainter, and none was found without this floor that was not found with it).
FAINT_INK_RATIO = 0.1


def card_shows_symbols(image: npt.NDArray[np.uint8], quad: CardQuad, cut_by_frame: bool = False) -> bool:
    """Whether the face a quad outlines shows a printed symbol (`shows_symbols`); with
    ``cut_by_frame``, one the frame may cut where the quad is a cut card (`cut_sides`)."""
    open_sides = cut_sides(quad, image) if cut_by_frame else 0
    return shows_symbols(segment_ink(warp_card(image, quad.corners)), open_sides=open_sides)


def card_face(image: npt.NDArray[np.uint8], outline: npt.NDArray[np.float32]) -> CardQuad | None:
    """The card an outline holds, as a guess, where it has a card's proportions, a paper margin
    and centred symbols lying across it; else None."""
    quad = order_corners(outline)
    if not MIN_ASPECT <= aspect(quad) <= MAX_ASPECT:
        return None
    paper, colour, ink = paper_fraction(image, quad)
    if paper < 0.6:
        return None
    face = segment_ink(warp_card(image, quad))
    if not _centred_symbols(face) or looks_sideways(face):
        return None
    return CardQuad(quad, False, score=paper, paper=colour, ink=ink, guess=True)
