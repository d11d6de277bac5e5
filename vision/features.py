"""From a canonical card to a short vector of engineered features the card reader classifies.

The features describe what a person looks at, not raw pixels, so that a model trained on one
deck and one camera carries over to others:

* **paper**: the card's own white is estimated locally (the mean colour of the nearby cells that
  hold no ink) and every pixel is divided by it, which cancels warm, cool, dim and uneven light;
* **ink**: ink strength is how far a pixel falls below its paper white in its darkest channel;
  thresholding it (with hysteresis) at fractions of the card's strongest ink gives the symbol
  strokes, and filling each outer contour gives one solid blob per symbol (stripes and outlines
  fill the same way);
* **count** from the number and sizes of the blobs, **shape** from the blob outline (solidity,
  extent, width profile, mirror symmetry, polygon fit...), **shading** from the ink deep inside
  the blob and at its very core compared with its border stroke and with the bare paper around
  it (blur and noise put some "ink" on bare paper too), from the brightness (luma) lost there
  against the stroke's (a camera's colour bleed tints an outline's inside but keeps its luma),
  from the stripe texture there, beyond the bare paper's own (in dim light sensor noise
  roughens solid ink as much as paper), and how much more it steps one way than another
  (stripes are lines; noise and tint step alike every way), and from how sharp the symbols'
  edges are (a card seen small or out of focus shows its stripes as an even tint), and
  **color** from the white-balanced absorption and hue of the strongest ink pixels.

Many cards are read together (`segment_inks`, `features_and_ink_checks`: the tiny paper-white
grids of all faces in one stack, the rest face by face), with exactly the result of one card at
a time; the same segmentation also says whether a card was warped a quarter turn off
(`looks_sideways`) and whether it shows a printed symbol at all (`shows_symbols`).

Each attribute's classifier sees only its own group of features (`FEATURE_GROUPS`).

Everything is computed inside a margin at the card border, so a warp that is a few pixels off
(a sliver of table at the edge) changes nothing. The features are all but unchanged by a
180-degree turn: what is laid out from the face's corner (the paper-white cells) or fitted from
a contour's first point (the symbols' polygons) comes out a little different, by 4-13% on the
core and polygon features of a striped card (`CardReader.read` reads an uncertain card both
ways up).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import CARD_HEIGHT, CARD_WIDTH

# Pixels ignored at each border of the canonical card: a detected quad can be off by a few
# pixels, and the rounded corners and table show there.
MARGIN = 8
# Segmentation, shape and colour work on the face at half resolution (4x fewer pixels, the speed
# budget is a fraction of a millisecond per card); only the stripe texture uses full resolution.
_SCALE = 2
# Size of the coarse paper-white grid cells (half-resolution pixels), and the neighbourhood
# (cells) of the first pass's brightest-cell search: it must reach paper from the middle of the
# largest solid symbol (about 50 px tall on a 250 px card).
_PAPER_CELL = 4
_PAPER_FILTER = np.ones((9, 9), np.uint8)
# First-pass ink above which a cell is not used for the paper estimate, and the box size
# (cells) of the local paper mean.
_PAPER_INK = 0.12
_PAPER_BOX = 7
_PAPER_PRIOR = 0.02
# Refinements of the paper estimate (each re-selects the paper cells with the last estimate).
_PAPER_PASSES = 3
# Ink threshold as a fraction of the card's strongest ink, with a floor against paper noise.
_INK_FRACTION = 0.42
# Ink connected to such strong ink is kept down to this fraction (hysteresis).
_INK_LOW_FRACTION = 0.22
_INK_FLOOR = 0.08
# Faint ink is kept down to this many of the paper noise's deviations over its mean, when
# connected to ink over the threshold.
_FAINT_LOW_SPREADS = 2.5
# A blob is a symbol when its bounding box is at least this fraction of the largest blob's
# and of the face.
_BLOB_OF_LARGEST = 0.3
_BLOB_OF_FACE = 0.015
# ... and its centre is within this fraction of the face width of the vertical centre line.
_CENTRE_TOLERANCE = 0.2
# A blob is tall (or wide) when its box is this much taller than wide (or wider than tall).
_SIDEWAYS_RATIO = 1.3

_FACE_H = CARD_HEIGHT - 2 * MARGIN
_FACE_W = CARD_WIDTH - 2 * MARGIN
# (Rounded down to whole paper cells, so that the coarse grid is an exact 4x4 average.)
_SMALL_H = _FACE_H // _SCALE // _PAPER_CELL * _PAPER_CELL
_SMALL_W = _FACE_W // _SCALE // _PAPER_CELL * _PAPER_CELL
_FACE_AREA = float(_SMALL_H * _SMALL_W)
# The inside of a symbol is its blob shrunk by this disc (half-resolution pixels): deep enough
# that a blurred outline stroke leaves nothing inside, so outline cards read as bare paper.
_INSIDE_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))
_SQUARE3 = np.ones((3, 3), np.uint8)
# Rec. 601 luma of BGR, as cameras and JPEG weigh brightness (for cv2.transform).
_LUMA_WEIGHTS = np.array([[0.114, 0.587, 0.299]], np.float32)
# The bare paper of the shading baseline is this far (half-resolution pixels) from any symbol.
_PAPER_CLEARANCE = np.ones((7, 7), np.uint8)
# The core of a symbol: its pixels at least this fraction of the deepest one's distance from
# the blob's edge.
_CORE_DEPTH = 0.6

# The features each attribute's classifier may use. Keeping them apart stops a model from
# leaning on accidents of the training photos that another deck or camera would not share.
# Shading does see how sharp the card is (``edge_sharpness``), as context rather than evidence:
# faint ink inside a symbol means stripes on a blurred card and an outline's colour bleed on a
# sharp one, and the generated training scenes show every shading at every size and blur alike
# (on the bench, dev, fresh and unseen scenes it took the cards read wrong from 153 to 132,
# shading's from 73 to 47; bench/HISTORY.md, 2026-12-06, 22:02).
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "count": ("blob_count", "filled_area", "largest_blob_area", "filled_over_largest",
              "span_over_blob_height", "row_runs"),
    # Of the median-sized symbol.
    "shape": ("solidity", "extent_rect", "extent_box", "aspect", "circularity", "poly_vertices_fine",
              "poly_vertices_coarse", "defect_depth", "mirror_iou", "width_at_15", "width_at_30",
              "width_at_50", "height_at_10", "height_at_25", "hu1", "hu2", "hu3"),
    "shading": ("inside_over_stroke", "inside_ink", "inside_texture_excess", "inside_chroma_over_stroke",
                "inside_excess_ink", "inside_excess_chroma", "inside_ink_over_noise",
                "core_excess_ink", "core_excess_chroma", "core_ink_over_noise",
                "inside_excess_luma", "core_excess_luma", "edge_sharpness", "inside_step_spread",
                "inside_step_spread_ratio"),
    # White-balanced.
    "color": ("absorb_b", "absorb_g", "absorb_r", "log_r_over_g", "log_b_over_g", "hue_cos", "hue_sin",
              "inside_absorb_b", "inside_absorb_g", "inside_absorb_r", "inside_hue_cos", "inside_hue_sin"),
}
# The feature vector: the groups one after another, in this order.
FEATURE_NAMES: tuple[str, ...] = tuple(name for attribute in ("count", "shape", "shading", "color")
                                       for name in FEATURE_GROUPS[attribute])
N_FEATURES = len(FEATURE_NAMES)


@dataclass(frozen=True)
class InkSegmentation:
    """The ink of one card face, inside the border margin.

    ``face`` is the full-resolution face, BGR uint8 (CARD_HEIGHT - 2 * MARGIN,
    CARD_WIDTH - 2 * MARGIN, 3); ``paper_level`` the mean darkest channel of its paper (0..255).
    Everything else is at half that resolution, (H, W):
    ``white`` the face divided by its paper white, float32 (H, W, 3) BGR, paper near 1;
    ``ink`` ink strength float32 (H, W) in [0, 1]; ``chroma`` the white-balanced colourfulness
    (max - min channel of ``white``) float32 (H, W); ``strong_ink`` its 99.5th percentile (the
    card's strongest ink, which the thresholds are fractions of); ``strokes`` the thresholded ink, uint8 0/255;
    ``symbols`` the outer contours of the symbol blobs (OpenCV int32 (N, 1, 2) arrays of (x, y)),
    top to bottom; ``filled`` the blobs filled, uint8 0/255; ``boxes`` the symbols' bounding boxes
    (x, y, w, h); ``blob_boxes`` those of every ink blob, symbol or not; ``paper_noise`` the
    standard deviation of the ink on the paper (its grain and noise); ``ink_threshold`` the ink
    above which a pixel seeds a stroke (no paper grain reaches it); ``ink_chroma_luma`` ink,
    chroma and luma (the face's Rec. 601 brightness over its paper white's, not clipped: a tint
    may lift it over 1) as the three channels of one float32 (H, W, 3) array (one masked mean
    gives all three).
    """

    face: npt.NDArray[np.uint8]
    paper_level: float
    white: npt.NDArray[np.float32]
    ink: npt.NDArray[np.float32]
    chroma: npt.NDArray[np.float32]
    strong_ink: float
    strokes: npt.NDArray[np.uint8]
    symbols: tuple[npt.NDArray[np.int32], ...]
    filled: npt.NDArray[np.uint8]
    boxes: tuple[tuple[int, int, int, int], ...]
    blob_boxes: tuple[tuple[int, int, int, int], ...]
    ink_chroma_luma: npt.NDArray[np.float32]
    paper_noise: float
    ink_threshold: float


def check_canonical(card: npt.NDArray[np.uint8]) -> None:
    """Raise ValueError unless ``card`` is a canonical BGR uint8 (CARD_HEIGHT, CARD_WIDTH, 3)."""
    if not isinstance(card, np.ndarray) or card.dtype != np.uint8 or card.shape != (CARD_HEIGHT, CARD_WIDTH, 3):
        shape = getattr(card, "shape", None)
        dtype = getattr(card, "dtype", type(card).__name__)
        raise ValueError(f"card must be a canonical BGR uint8 array of shape "
                         f"({CARD_HEIGHT}, {CARD_WIDTH}, 3), got {dtype} {shape}")


def white_balance(face: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Divide each pixel of ``face`` (BGR uint8 (H, W, 3)) by its local paper white.

    The paper white is estimated on a coarse grid of ``_PAPER_CELL``-pixel cells. First, the
    mean colour of the cells nearly as bright as the brightest cell around them (brightness,
    not per channel: red ink is brighter than bluish paper in the red channel); that finds the
    cells holding ink. Then, ``_PAPER_PASSES`` times, the local mean colour of the cells with no
    ink under the last estimate (a normalised box filter, with the first estimate as a weak
    prior where no paper cell is near); the repeats let it follow light that falls off steeply
    across the card. Returns float32 (H, W, 3), paper close to 1, clipped at 1. H and W must be
    multiples of ``_PAPER_CELL``.
    """
    if face.ndim != 3 or face.shape[2] != 3 or face.shape[0] % _PAPER_CELL or face.shape[1] % _PAPER_CELL:
        raise ValueError(f"face must be (H, W, 3) with H and W multiples of {_PAPER_CELL}, got {face.shape}")
    height, width = face.shape[:2]
    grid = cv2.resize(face, (width // _PAPER_CELL, height // _PAPER_CELL), interpolation=cv2.INTER_AREA)
    return _divide_by_paper(face, _paper_grids(grid, 1))


def _paper_grids(grids: npt.NDArray[np.uint8], n: int) -> npt.NDArray[np.float32]:
    """The paper white of `white_balance` on the cell grids of ``n`` faces stacked top to bottom,
    uint8 (n * h, w, 3) (each cell the mean of a face's ``_PAPER_CELL`` square): float32
    (n * h, w, 3), in one go.

    Every step is tile-local: the neighbourhood filters run on each face's grid alone
    (`_per_tile`), the rest cell by cell, so a face gets the same paper whatever faces share its
    stack. The grids are tiny: done together they cost little more than one alone.
    """
    # The grid with a fourth channel of ones: one box filter of the masked grid then gives the
    # masked colour sums and the cell counts together (exactly: sums of whole numbers).
    grid = cv2.cvtColor(grids, cv2.COLOR_BGR2BGRA).astype(np.float32)
    grid[:, :, 3] = 1.0
    gray = cv2.cvtColor(grid, cv2.COLOR_BGRA2GRAY)
    local_max = _per_tile(gray, n, lambda a, dst: cv2.dilate(a, _PAPER_FILTER, dst=dst))
    first = _masked_mean(grid, cv2.compare(gray, 0.85 * local_max, cv2.CMP_GE), _PAPER_FILTER.shape[0], n)
    prior = np.empty_like(grid)
    prior[:, :, :3] = _PAPER_PRIOR * first
    prior[:, :, 3] = _PAPER_PRIOR
    paper = first
    colour = grid[:, :, :3]
    for _ in range(_PAPER_PASSES):
        b, g, r = cv2.split(colour / paper)
        cell_ink = 1.0 - cv2.min(cv2.min(b, g), r)
        paper = _masked_mean(grid, (cell_ink < _PAPER_INK).view(np.uint8), _PAPER_BOX, n, prior)
    return paper


def _divide_by_paper(face: npt.NDArray[np.uint8], paper: npt.NDArray[np.float32],
                     clip: bool = True) -> npt.NDArray[np.float32]:
    """``face`` (H, W, 3) divided by its ``paper`` grid (H / cell, W / cell, 3) brought to full
    size bilinearly, clipped at 1 unless ``clip`` is False: float32 (H, W, 3). (One face at a
    time: its arrays stay small.)"""
    height, width = face.shape[:2]
    full = cv2.resize(paper, (width, height), interpolation=cv2.INTER_LINEAR)
    white = cv2.divide(face.astype(np.float32), full, dst=full)
    return np.minimum(white, 1.0, out=white) if clip else white


def _per_tile(image: npt.NDArray[np.float32], n: int,
              operation: Callable[..., npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
    """Apply a neighbourhood ``operation(src, dst=...)`` to each of ``n`` tiles stacked top to
    bottom in ``image`` (n * h, w[, c]) on its own (with OpenCV's border of one image)."""
    h = image.shape[0] // n
    out = np.empty_like(image)
    for i in range(n):
        operation(image[i * h:(i + 1) * h], dst=out[i * h:(i + 1) * h])
    return out


def _masked_mean(grid: npt.NDArray[np.float32], mask: npt.NDArray[np.uint8], box: int, n: int,
                 prior: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
    """Box-filtered (``box`` x ``box`` cells, per tile) mean colour of ``grid`` (n * h, w, 4: BGR
    and ones) over the cells where ``mask`` (n * h, w uint8) is non-zero, with ``prior`` (sums
    and weight, (n * h, w, 4)) added: float32 (n * h, w, 3), at least 8."""
    masked = cv2.bitwise_and(grid, grid, mask=mask)
    sums = _per_tile(masked, n, lambda a, dst: cv2.blur(a, (box, box), dst=dst))
    if prior is not None:
        sums += prior
    return np.maximum(sums[:, :, :3] / np.maximum(sums[:, :, 3:], 1e-3), 8.0)


def segment_ink(card: npt.NDArray[np.uint8]) -> InkSegmentation:
    """Find the ink and the symbol blobs of a canonical card (BGR uint8 (250, 160, 3))."""
    return segment_inks([card])[0]


def segment_inks(cards: Sequence[npt.NDArray[np.uint8]]) -> list[InkSegmentation]:
    """`segment_ink` of many cards; the pixel work is done for all of them at once (the same
    result as one by one, faster)."""
    for card in cards:
        check_canonical(card)
    n = len(cards)
    if not n:
        return []
    # An exact 2x reduction (OpenCV's fast path) of the rows that make whole paper cells; the
    # paper-white grids of all faces are estimated together, the rest is done face by face
    # (arrays of one face stay small, which is faster than one stack of them all).
    cells_h, cells_w = _SMALL_H // _PAPER_CELL, _SMALL_W // _PAPER_CELL
    smalls = []
    grids = np.empty((n * cells_h, cells_w, 3), np.uint8)
    for i, card in enumerate(cards):
        small = cv2.resize(card[MARGIN:MARGIN + _SMALL_H * _SCALE, MARGIN:MARGIN + _SMALL_W * _SCALE],
                           (_SMALL_W, _SMALL_H), interpolation=cv2.INTER_AREA)
        cv2.resize(small, (cells_w, cells_h), dst=grids[i * cells_h:(i + 1) * cells_h], interpolation=cv2.INTER_AREA)
        smalls.append(small)
    papers = _paper_grids(grids, n)
    # (The face is copied out of the card: OpenCV's Python binding splits the channels of a
    # strided view four times slower than those of a whole array.)
    return [_segment_face(np.ascontiguousarray(card[MARGIN:-MARGIN, MARGIN:-MARGIN]), small,
                          _divide_by_paper(small, papers[i * cells_h:(i + 1) * cells_h], clip=False))
            for i, (card, small) in enumerate(zip(cards, smalls))]


def _segment_face(face: npt.NDArray[np.uint8], small: npt.NDArray[np.uint8],
                  unclipped: npt.NDArray[np.float32]) -> InkSegmentation:
    """The ink, strokes and symbol blobs of one face (``face`` full resolution, ``small`` at half
    resolution, ``unclipped`` that divided by its paper white, not yet clipped at 1)."""
    # Luma before clipping: a tint that lifts one channel over the paper's keeps its brightness.
    luma = cv2.transform(unclipped, _LUMA_WEIGHTS)
    white = np.minimum(unclipped, 1.0, out=unclipped)
    b, g, r = cv2.split(white)
    lowest = cv2.min(cv2.min(b, g), r)
    ink = 1.0 - lowest
    chroma = cv2.max(cv2.max(b, g), r) - lowest
    ink_chroma_luma = cv2.merge([ink, chroma, luma])
    # The paper's level (its mean darkest channel) and the ink that paper grain and glare reach:
    # the noise floor below which nothing is ink.
    paper_mask = (ink < _PAPER_INK).view(np.uint8)
    darkest = darkest_channel(small)
    if cv2.countNonZero(paper_mask):
        paper_level = cv2.mean(darkest, mask=paper_mask)[0]
        paper_mean, paper_std = cv2.meanStdDev(ink, mask=paper_mask)
        paper_ink, spread = float(paper_mean[0, 0]), float(paper_std[0, 0])
    else:
        paper_level, paper_ink, spread = float(darkest.max()), 0.0, 0.0
    noise = paper_ink + 4.0 * spread
    strong = _strongest(ink)
    high = max(_INK_FLOOR, _INK_FRACTION * strong, noise)
    low = max(_INK_FLOOR, _INK_LOW_FRACTION * strong, noise)
    if noise > max(_INK_FLOOR, _INK_FRACTION * strong):
        # Faint ink (a small, blurred card with outline symbols): the paper's noise decides
        # the threshold, but the faint strokes are under the paper mask's cut too and inflate
        # that noise up to their own level. The paper's noise measured without them lets the
        # strokes through, and joins their fainter stretches.
        level, quiet_spread = _clipped_noise(ink, paper_ink, spread)
        high = max(_INK_FLOOR, _INK_FRACTION * strong, level + 4.0 * quiet_spread)
        low = level + _FAINT_LOW_SPREADS * quiet_spread
    strokes = _hysteresis(ink, high=high, low=min(low, high))
    strokes = cv2.morphologyEx(strokes, cv2.MORPH_CLOSE, _SQUARE3)
    contours, _ = cv2.findContours(strokes, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    # Blobs are sized by their bounding box, so an outline with a faint gap (which fills as
    # just its stroke) still counts as the symbol it is.
    boxes = [cv2.boundingRect(c) for c in contours]
    largest = max((w * h for _, _, w, h in boxes), default=0)
    least = max(_BLOB_OF_LARGEST * largest, _BLOB_OF_FACE * _FACE_AREA)
    keep = sorted(((box, c) for box, c in zip(boxes, contours)
                   if box[2] * box[3] >= least and _is_centred(box)), key=lambda item: item[0][1])
    filled = np.zeros_like(strokes)
    symbols = tuple(c for _, c in keep)
    cv2.drawContours(filled, symbols, -1, 255, thickness=cv2.FILLED)
    return InkSegmentation(face, paper_level, white, ink, chroma, strong, strokes, symbols, filled,
                           tuple(box for box, _ in keep), tuple(boxes), ink_chroma_luma, spread, high)


def _clipped_noise(ink: npt.NDArray[np.float32], mean: float, spread: float) -> tuple[float, float]:
    """The mean and standard deviation of the ink on bare paper, sigma-clipped: from those of
    the ink under the paper mask's cut (``mean``, ``spread``), the pixels more than three
    deviations over the mean (faint strokes, specks) are left out, twice more."""
    cut = mean + 3.0 * spread
    for _ in range(2):
        values = ink[ink < cut]
        if values.size == 0:
            break
        mean, spread = float(values.mean()), float(values.std())
        cut = mean + 3.0 * spread
    return mean, spread


def _strongest(ink: npt.NDArray[np.float32]) -> float:
    """The 99.5th percentile of ``ink`` (the value at that rank of the sorted pixels).

    Only the pixels above a low floor are partitioned when they hold that rank: a partition of
    the whole card slows down tenfold on the many exact zeros of clean paper.
    """
    flat = ink.reshape(-1)
    rank = int(0.995 * flat.size)
    top = flat.size - rank  # pixels at or above the rank
    candidates = flat[flat > _INK_FLOOR / 2]
    if candidates.size >= top:
        at = candidates.size - top
        return float(np.partition(candidates, at)[at])
    return float(np.sort(flat)[rank])


def _hysteresis(ink: npt.NDArray[np.float32], high: float, low: float) -> npt.NDArray[np.uint8]:
    """Pixels above ``low`` connected to a pixel above ``high`` (uint8 0/255): strokes whose ink
    fades in places (glare, a worn print) stay whole, while paper texture never seeds a blob.

    Ink that reaches three sides of the face is no symbol (SET prints every symbol well inside
    the card) but what lies around the card: an outline found a little too large frames the
    face with a band of table or shadow, which would otherwise be taken for one giant symbol.
    """
    weak = (ink > low).view(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(weak, connectivity=8)
    if n <= 1:
        return weak * 255
    seeded = np.zeros(n, np.uint8)
    seeded[labels[ink > high]] = 255
    seeded[0] = 0
    height, width = ink.shape
    x, y, w, h = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    sides = ((x == 0).astype(int) + (y == 0) + (x + w == width) + (y + h == height))
    seeded[sides >= 3] = 0
    return np.take(seeded, labels)


def _is_centred(box: tuple[int, int, int, int]) -> bool:
    """SET symbols sit on the card's vertical centre line; paper texture and stains need not."""
    x, _, w, _ = box
    return abs(x + w / 2 - _SMALL_W / 2) <= _CENTRE_TOLERANCE * _SMALL_W


def looks_sideways(seg: InkSegmentation) -> bool:
    """Whether the ink blobs say the card was warped a quarter turn off.

    Every SET symbol is about twice as wide as it is tall across the card, so in a correct warp
    its blob is wide; a quarter turn off (the detector took the long sides for the short ones,
    as a steeply tilted camera can make them look), the blobs come out tall and thin. Only
    clear evidence counts: a tall blob and not one wide blob (of at least ``_BLOB_OF_FACE`` of
    the face, anywhere on it: turned symbols are side by side, off the centre line).
    """
    least = _BLOB_OF_FACE * _FACE_AREA
    tall = wide = 0
    for _, _, w, h in seg.blob_boxes:
        if w * h < least:
            continue
        if h > _SIDEWAYS_RATIO * w:
            tall += 1
        elif w > _SIDEWAYS_RATIO * h:
            wide += 1
    return tall > 0 and wide == 0


def shows_symbols(seg: InkSegmentation, open_sides: int = 0) -> bool:
    """Whether a face shows a printed symbol: an ink blob clear of the face's edges, longer
    across the card than along it and reaching across much of it (every SET symbol is about
    twice as wide as it is tall, and well over half as wide as the card), or the same along it
    (the symbols of a card warped a quarter turn off, `looks_sideways`).

    A patch of table cut out as a card (a pale cell of a checked cloth) shows none: its ink is
    grain, a fleck of the pattern, or the pattern's edge reaching in from a side.

    ``open_sides`` (bit mask: 1 top, 2 right, 4 bottom, 8 left of the portrait face) names the
    sides where the frame edge cuts the card: the frame cuts a card anywhere, often through its
    only symbol, which then runs to that side.
    """
    return _any_symbol_box(seg.blob_boxes, open_sides)


def _any_symbol_box(boxes: Sequence[tuple[int, int, int, int]], open_sides: int = 0) -> bool:
    """Whether any blob box (x, y, w, h) on the small face is a symbol's (`shows_symbols`)."""
    for x, y, w, h in boxes:
        touched = (y <= 0) | (x + w >= _SMALL_W) << 1 | (y + h >= _SMALL_H) << 2 | (x <= 0) << 3
        # (A symbol the frame cuts runs to one side: a band from side to side is the table's.)
        if touched & ~open_sides or touched & (touched - 1):
            continue
        across = w >= _SYMBOL_ELONGATION * h and w >= _SYMBOL_REACH * _SMALL_W
        along = h >= _SYMBOL_ELONGATION * w and h >= _SYMBOL_REACH * _SMALL_H
        if across or along:
            return True
    return False


def shows_symbols_under_shadow(seg: InkSegmentation) -> bool:
    """Whether a face that `shows_symbols` calls blank shows a symbol once a shadow across it
    is set aside.

    The paper white that the ink is measured against is smooth, so it cannot follow a shadow's
    sharp edge: the shadowed part of the face comes out as ink, one blob from edge to edge that
    swallows the symbols (a close-up of one card with a hand's or a phone's shadow across it
    was dropped as a blank patch of table). Here the paper is the face closed over its
    symbols instead, as `vision.detect` does for its own ink test: a closing keeps a step of
    light but fills dark marks narrower than its kernel, and every symbol is. The features
    are still made of the shadow as ink: `vision.cardreader` reads such a card again relit
    (`without_shadow`).
    """
    small = cv2.resize(seg.face[:_SMALL_H * _SCALE, :_SMALL_W * _SCALE], (_SMALL_W, _SMALL_H),
                       interpolation=cv2.INTER_AREA).astype(np.float32)
    ratio = small / np.maximum(cv2.morphologyEx(small, cv2.MORPH_CLOSE, _SHADOW_CLOSING), 1.0)
    lowest = ratio.min(axis=2)
    ink = 1.0 - lowest
    strong = float(np.percentile(ink, 99.5))
    if strong < _SHADOW_INK_FLOOR:
        return False
    marks = ink > 0.5 * strong
    # Printed ink is coloured against its paper; the dark marks of a table cut out as a card
    # (wood grain, a phone, a neutral cloth's checks) are not.
    if float(np.median((ratio.max(axis=2) - lowest)[marks])) < _SHADOW_INK_CHROMA:
        return False
    contours, _ = cv2.findContours(marks.view(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return _any_symbol_box([cv2.boundingRect(contour) for contour in contours])


def without_shadow(card: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """A canonical card (BGR uint8 (250, 160, 3)) relit evenly, a shadow's edge across it taken out.

    Its paper is told from its ink by colour, not brightness: SET's inks are coloured against
    the paper, and paper in shadow keeps the paper's colour, only darker. The paper behind the
    ink (grown by a few pixels, for the colour a stroke bleeds into the paper beside it) is
    filled in from the paper round it, nearest first (normalised Gaussian blurs, each wider
    than the last, taken where they reach enough paper); the card is divided by that paper and
    brought back to its brightest paper's level. (A closing over the symbols, as
    `shows_symbols_under_shadow` uses, left blocks of the shadow's soft edge in place.)
    """
    face = card.astype(np.float32) + 1.0
    # The paper is made at half resolution (it is smooth but for the shadow's edge; 4x cheaper).
    half = cv2.resize(face, (CARD_WIDTH // 2, CARD_HEIGHT // 2), interpolation=cv2.INTER_AREA)
    brightness = half.sum(axis=2)
    paper_colour = np.median(half[brightness >= np.percentile(brightness, 80)], axis=0)
    balanced = half / paper_colour
    highest, lowest = balanced.max(axis=2), balanced.min(axis=2)
    ink = ((highest - lowest) / highest > _RELIGHT_INK_CHROMA).astype(np.uint8)
    paper_weight = 1.0 - cv2.dilate(ink, _RELIGHT_INK_GROWTH).astype(np.float32)
    paper = np.empty_like(half)
    paper[:] = paper_colour
    filled = np.zeros(paper_weight.shape, dtype=bool)
    for sigma in _RELIGHT_SIGMAS:
        weight = cv2.GaussianBlur(paper_weight, (0, 0), sigma)
        estimate = cv2.GaussianBlur(half * paper_weight[:, :, None], (0, 0), sigma) / np.maximum(weight, 1e-6)[:, :, None]
        take = ~filled & (weight > 0.2)
        paper[take] = estimate[take]
        filled |= take
    level = np.percentile(paper.reshape(-1, 3), 95, axis=0)
    paper = cv2.resize(paper, (CARD_WIDTH, CARD_HEIGHT), interpolation=cv2.INTER_LINEAR)
    return np.clip(face / paper * level - 1.0, 0, 255).astype(np.uint8)


# A pixel whose white-balanced colour spreads by more than this fraction of its brightest
# channel is ink; grown by this much; paper filled in at these widths (pixels of the half-size
# card).
_RELIGHT_INK_CHROMA = 0.12
_RELIGHT_INK_GROWTH = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
_RELIGHT_SIGMAS = (1.0, 3.0, 10.0, 25.0)
# Wider than any symbol is thick on the small face (symbols are a fifth of its height, some 23
# pixels, at most); a shadow narrower than this is filled in as ink.
_SHADOW_CLOSING = cv2.getStructuringElement(cv2.MORPH_RECT, (31, 31))
# Printed ink takes at least this much of the light off the paper at its darkest, and its
# colour (largest minus smallest channel over the paper's) spreads by at least this much. On the
# faces that looked blank in 90 generated empty tables and 90 close-ups (seeds 11000, 9000,
# 13000), cards under a shadow's edge measured 0.85-0.97 and 0.25-0.61; patches of wood, rug,
# cloth and a phone 0.29-0.39, or 0.08-0.10 (one patch of rug, 0.82 and 0.28, passes both).
_SHADOW_INK_FLOOR = 0.6
_SHADOW_INK_CHROMA = 0.18


# A symbol blob's long side over its short one is at least this, even seen steeply from the
# side (a symbol's own is about 2); and it reaches over at least this fraction of the face
# (a symbol's width is 0.6-0.75 of the card's on the decks we have, a little less in an outline
# found a little too large).
_SYMBOL_ELONGATION = 1.1
_SYMBOL_REACH = 0.4


def symbols_off_centre(seg: InkSegmentation) -> bool:
    """Whether the symbols, as a group, sit off the middle of the face.

    SET symbols are printed centred on the card: on the 12 labelled photos the middle of
    their group lies within 7% of the face's width and height of the face's middle, on the
    labelled crops within 3% (all but one in 1,315). Off by more, the outline read is not the
    card's (it holds a strip of the table, or of a touching card, or misses part of the card),
    and a symbol may be cut off or another card's counted: the reading is a guess.
    """
    across, along = symbols_offset(seg)
    return across > _OFF_CENTRE or along > _OFF_CENTRE


def symbols_offset(seg: InkSegmentation) -> tuple[float, float]:
    """How far the middle of the symbols' group lies off the face's middle, across the card
    and along it, as fractions of the face's width and height ((0, 0) without symbols)."""
    if not seg.boxes:
        return 0.0, 0.0
    height, width = seg.filled.shape
    left = min(x for x, _, _, _ in seg.boxes)
    right = max(x + w for x, _, w, _ in seg.boxes)
    top = min(y for _, y, _, _ in seg.boxes)
    bottom = max(y + h for _, y, _, h in seg.boxes)
    return abs((left + right) / (2 * width) - 0.5), abs((top + bottom) / (2 * height) - 0.5)


def symbols_unlike_each_other(seg: InkSegmentation) -> bool:
    """Whether the face's symbols differ in size more than any printed card's do.

    SET prints a card's symbols alike. Symbols whose widths or heights differ by a factor of
    ``_UNLIKE`` are parts of two things: an outline over two touching cards (generated dev
    5042: a card's three diamonds, side by side, and another's ovals, read "2 red striped
    squiggle" at 0.96) or over a card and the table (unseen 8071: a rug's blob above a
    diamond, "2 red solid oval" at 0.97). On the labelled crops 3 of 4,000 differ so much, on
    the cards found in the generated scenes 10 of 8,212 read right and surely."""
    if len(seg.boxes) < 2:
        return False
    widths = [w for _, _, w, _ in seg.boxes]
    heights = [h for _, _, _, h in seg.boxes]
    return (max(widths) > _UNLIKE * max(1, min(widths))) or (max(heights) > _UNLIKE * max(1, min(heights)))


_UNLIKE = 1.8


def symbols_stretched(seg: InkSegmentation) -> bool:
    """Whether the face's symbols are far thicker, along the card, for their width than SET
    prints them: the outline read ends short of its card, and the face, warped to a whole
    card's shape, stretches what it holds along the card (dev 5062, unseen 8034 and 8098: a
    card of three squiggles outlined two symbols long, read "2" at 0.98-0.99; their
    squiggles' height 0.65-0.85 of their width, where a card's are about 0.5). A symbol may
    lie beyond the outline's end: the count is a guess. On the cards found in the generated
    scenes, 35 of 8,211 read right and surely are this thick."""
    if not seg.boxes:
        return False
    return float(np.median([h / max(w, 1) for _, _, w, h in seg.boxes])) >= _STRETCHED


_STRETCHED = 0.65


def symbols_stacked_as_printed(seg: InkSegmentation) -> bool:
    """Whether the face's symbols are stacked as SET prints them: none touching the face's top
    or bottom, each gap between two at most ``_WIDEST_GAP`` of their height, and the gaps
    alike (within ``_GAPS_ALIKE`` of it). An outline run on over a touching card's end takes in
    that card's nearest symbol beyond a gap of both cards' margins (touching 20011 and 20035:
    twice to four times the printed gap), or a piece of it at the face's end."""
    if not seg.boxes:
        return False
    height = seg.filled.shape[0]
    tops = [y for _, y, _, _ in seg.boxes]
    bottoms = [y + h for _, y, _, h in seg.boxes]
    if min(tops) <= 0 or max(bottoms) >= height:
        return False
    symbol_height = float(np.median([h for _, _, _, h in seg.boxes]))
    gaps = [top - bottom for top, bottom in zip(tops[1:], bottoms[:-1])]
    return not gaps or (max(gaps) <= _WIDEST_GAP * symbol_height
                        and max(gaps) - min(gaps) <= _GAPS_ALIKE * symbol_height)


# The blank between two printed symbols over their height: 0.2-0.3 on the cards we print and
# photograph (a pitch of 1.2-1.55 symbol heights); the gaps of one card alike within a few pixels.
_WIDEST_GAP = 0.6
_GAPS_ALIKE = 0.35


# How far (a fraction of the face's width or height) the symbols' middle may lie off the
# face's middle (generated dev scenes: 3 of 1,064 cards read right and surely lie further,
# and 3 of the 10 read wrong and surely).
_OFF_CENTRE = 0.12


def card_features(card: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The feature vector of one canonical card: float32 (N_FEATURES,), in FEATURE_NAMES order."""
    return _features(segment_ink(card))


def _features(seg: InkSegmentation) -> npt.NDArray[np.float32]:
    inside = cv2.erode(seg.filled, _INSIDE_DISC) if seg.symbols else seg.filled
    values: list[float] = []
    values += _count_features(seg)
    values += _shape_features(seg)
    values += _shading_features(seg, inside)
    values += _color_features(seg, inside)
    return np.asarray(values, dtype=np.float32)


def features_of_cards(cards: list[npt.NDArray[np.uint8]]) -> npt.NDArray[np.float32]:
    """Stack the features of many canonical cards: float32 (len(cards), N_FEATURES)."""
    return features_and_ink_checks(cards)[0]


def features_and_ink_checks(cards: list[npt.NDArray[np.uint8]]) -> tuple[
        npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
        npt.NDArray[np.bool_]]:
    """The features of many canonical cards, float32 (n, N_FEATURES); and for each, bool (n,):
    whether its ink says it was warped a quarter turn off (`looks_sideways`), whether it shows
    no printed symbol at all (neither `shows_symbols` nor `shows_symbols_under_shadow`),
    whether its symbols are not as a SET card prints them (`symbols_off_centre`,
    `symbols_unlike_each_other`, `symbols_stretched`), and whether its symbols
    show only once a shadow across it is set aside (its features are then made of the shadow
    too): one segmentation serves all."""
    if not cards:
        none = np.zeros(0, bool)
        return np.zeros((0, N_FEATURES), np.float32), none, none, none, none
    segmentations = segment_inks(cards)
    plain = np.array([shows_symbols(seg) for seg in segmentations], dtype=bool)
    shadowed = np.array([not seen and shows_symbols_under_shadow(seg) for seen, seg in zip(plain, segmentations)],
                        dtype=bool)
    return (np.stack([_features(seg) for seg in segmentations]),
            np.array([looks_sideways(seg) for seg in segmentations], dtype=bool),
            ~plain & ~shadowed,
            np.array([symbols_off_centre(seg) or symbols_unlike_each_other(seg) or symbols_stretched(seg)
                      for seg in segmentations], dtype=bool),
            shadowed)


def _count_features(seg: InkSegmentation) -> list[float]:
    if not seg.symbols:
        return [0.0] * 6
    boxes = seg.boxes
    areas = [float(w * h) for _, _, w, h in boxes]
    heights = sorted(h for _, _, _, h in boxes)
    top = min(y for _, y, _, _ in boxes)
    bottom = max(y + h for _, y, _, h in boxes)
    # Runs of rows holding ink: a filled blob covers every row of its box, so merge the boxes'
    # row spans (top to bottom).
    runs, reach = 0, -1
    for _, y, _, h in boxes:
        if y > reach + 1:
            runs += 1
        reach = max(reach, y + h - 1)
    total, largest = sum(areas), max(max(areas), 1.0)
    return [float(len(areas)), total / _FACE_AREA, largest / _FACE_AREA, total / largest,
            (bottom - top) / max(heights[len(heights) // 2], 1), float(runs)]


def _shape_features(seg: InkSegmentation) -> list[float]:
    if not seg.symbols:
        return [0.0] * 17
    # One typical symbol (the median by area) speaks for all: they are printed alike.
    by_area = sorted(seg.symbols, key=cv2.contourArea)
    return _symbol_shape(by_area[len(by_area) // 2])


def _symbol_shape(contour: npt.NDArray[np.int32]) -> list[float]:
    area = max(cv2.contourArea(contour), 1.0)
    perimeter = max(cv2.arcLength(contour, True), 1.0)
    hull_index = cv2.convexHull(contour, returnPoints=False)
    solidity = area / max(cv2.contourArea(contour[hull_index.ravel()]), 1.0)
    (_, _), (rect_w, rect_h), _ = cv2.minAreaRect(contour)
    short_side = max(min(rect_w, rect_h), 1.0)
    extent_rect = area / max(rect_w * rect_h, 1.0)
    x, y, w, h = cv2.boundingRect(contour)
    extent_box = area / max(w * h, 1)
    aspect = max(rect_w, rect_h) / short_side
    circularity = 4.0 * np.pi * area / perimeter**2
    fine = len(cv2.approxPolyDP(contour, 0.015 * perimeter, True))
    coarse = len(cv2.approxPolyDP(contour, 0.04 * perimeter, True))
    depth = 0.0
    if len(hull_index) > 3 and len(contour) > 3:
        try:
            defects = cv2.convexityDefects(contour, hull_index)
        except cv2.error:  # a self-touching simplified contour: no defect depth to report
            defects = None
        if defects is not None and len(defects):
            depth = float(defects.reshape(-1, 4)[:, 3].max()) / 256.0 / short_side
    # The symbol alone in its bounding box: the mirror test and the width/height profiles.
    blob = np.zeros((h, w), np.uint8)
    cv2.drawContours(blob, [contour], -1, 1, cv2.FILLED, offset=(-x, -y))
    widths = np.count_nonzero(blob, axis=1).tolist()
    heights = np.count_nonzero(blob, axis=0).tolist()
    mirrored = cv2.flip(blob, 1)
    mirror_iou = cv2.countNonZero(cv2.bitwise_and(blob, mirrored)) / max(cv2.countNonZero(cv2.bitwise_or(blob, mirrored)), 1)
    hu = [(-1.0 if v > 0 else 1.0) * math.log10(abs(v) + 1e-12) if v else 0.0
          for v in cv2.HuMoments(cv2.moments(contour)).ravel()[:3].tolist()]
    return [solidity, extent_rect, extent_box, aspect, circularity, float(fine), float(coarse),
            depth, mirror_iou, _at_both_ends(widths, w, 0.15), _at_both_ends(widths, w, 0.30),
            _at_both_ends(widths, w, 0.5), _at_both_ends(heights, h, 0.10),
            _at_both_ends(heights, h, 0.25), *hu]


def _at_both_ends(counts: list[int], length: int, fraction: float) -> float:
    """The symbol's filled fraction of the row (or column) ``length`` at ``fraction`` of the
    profile ``counts`` from either end, averaged (turn-invariant)."""
    n = len(counts)
    i = min(n - 1, int(fraction * n))
    return (counts[i] / max(length, 1) + counts[n - 1 - i] / max(length, 1)) / 2.0


def _shading_features(seg: InkSegmentation, inside: npt.NDArray[np.uint8]) -> list[float]:
    """How much ink is inside the symbols, relative to their border stroke and to the bare paper
    around them, and how striped.

    Blur, sensor noise and JPEG put some "ink" on bare paper too (the darkest of three noisy
    channels is biased dark); the paper away from the symbols measures that level (and the
    paper's grain its spread), so the ``*_excess_*`` and ``*_over_noise`` features read an
    outline card as bare paper inside however noisy the photo.
    """
    strong = max(seg.strong_ink, 1e-3)
    if not seg.symbols or not cv2.countNonZero(inside):
        return [0.0] * len(FEATURE_GROUPS["shading"])
    stroke = cv2.subtract(seg.filled, inside)
    inside_ink, inside_chroma, inside_luma = cv2.mean(seg.ink_chroma_luma, mask=inside)[:3]
    if cv2.countNonZero(stroke):
        stroke_ink, stroke_chroma, stroke_luma = cv2.mean(seg.ink_chroma_luma, mask=stroke)[:3]
    else:
        stroke_ink, stroke_chroma, stroke_luma = strong, 1.0, 1.0 - strong
    # The bare paper: away from every symbol blob, and without the strong ink that is no
    # symbol (a frame of table round a face outlined a little too large, a neighbour's edge,
    # a stain), which would make the paper look inked and every inside look cleaner than it.
    paper = cv2.bitwise_not(cv2.dilate(seg.filled, _PAPER_CLEARANCE))
    cv2.bitwise_and(paper, cv2.compare(seg.ink, seg.ink_threshold, cv2.CMP_LT), dst=paper)
    paper_ink, paper_chroma, paper_luma = (cv2.mean(seg.ink_chroma_luma, mask=paper)[:3]
                                           if cv2.countNonZero(paper) else (0.0, 0.0, 1.0))
    noise = max(seg.paper_noise, 1e-3)
    # Stripes are finer than the half-resolution grid: measure their texture at full resolution,
    # as the mean step between neighbouring pixels of the darkest channel, relative to the
    # paper's level and to the card's strongest ink (so that dim light and faint ink cancel).
    # Both directions are summed: stripes may run at any angle on another print of the deck.
    # Only the box around the inside (and one pixel before it, for the first steps) is read.
    x, y, w, h = cv2.boundingRect(inside)
    x0, y0 = max(_SCALE * x - 1, 0), max(_SCALE * y - 1, 0)
    x1, y1 = _SCALE * (x + w), _SCALE * (y + h)
    big_inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    big_inside[_SCALE * y - y0:, _SCALE * x - x0:] = cv2.resize(
        inside[y:y + h, x:x + w], (_SCALE * w, _SCALE * h), interpolation=cv2.INTER_NEAREST)
    # Sensor noise is texture too: in dim light it roughens a solid symbol's ink as much as the
    # paper's, and a solid then looks striped. The same steps over the bare paper at the face's
    # two sides (where no symbol is printed) measure that noise, which is taken off.
    darkest = darkest_channel(seg.face)
    directional = _directional_steps(darkest[y0:y1, x0:x1], big_inside)
    texture_scale = max(seg.paper_level, 1.0) * strong
    texture_excess = (directional[0] + directional[1] - _paper_steps(darkest, seg.ink)) / texture_scale
    # Stripes are lines: across them the darkest channel steps up and down, along them hardly,
    # while sensor noise, paper grain and an outline's colour bleed step alike every way. So
    # the spread of the steps over four directions (the diagonals' taken per unit of distance)
    # tells faint stripes from an even tint or noise, whichever way the stripes run (a
    # misjudged corner slants them, and stripes too fine for the photo alias into a moire of
    # another direction). A quick network on generated scene cards read half as many shadings
    # wrong with it; in the full reader it flags fewer cards, with as many misread (bench/
    # HISTORY.md, 2026-12-07 from 17:51). A smear from a shaken camera has a direction too: the
    # reader is trained on shaken crops (vision/training.py: _shaken).
    steps = np.array(directional) / _STEP_DISTANCE
    spread = float(steps.max() - steps.min())
    # The core of the symbols: the pixels deepest inside them (at least _CORE_DEPTH of the
    # deepest). A blurred outline stroke (a small card seen from afar) spreads ink some way in,
    # but not to the middle; stripes and solid ink reach it.
    depth = cv2.distanceTransform(seg.filled, cv2.DIST_L2, 3)
    core = cv2.compare(depth, _CORE_DEPTH * cv2.minMaxLoc(depth)[1], cv2.CMP_GE)
    core_ink, core_chroma, core_luma = cv2.mean(seg.ink_chroma_luma, mask=core)[:3]
    # Brightness (luma) lost inside, against that lost in the stroke: cameras and JPEG keep
    # colour at a fraction of the resolution of brightness, so a thin coloured outline bleeds
    # its tint inwards (red turns the inside pink), which lowers the darkest channel (the ink)
    # as faint stripes do; but the bleed keeps the luma, and stripes take it away.
    stroke_drop = max(paper_luma - stroke_luma, 1e-3)
    inside_drop = paper_luma - inside_luma
    core_drop = paper_luma - core_luma
    # How sharp the symbols' edges are: the ink's mean rise per pixel across the blobs' border,
    # per unit of the stroke's ink over the paper's. A card seen small or out of focus is warped
    # up from few pixels, its stripes blurred into an even tint; on a sharp card the same faint
    # tint inside is an outline's colour bleed. The warp hides the card's size in the photo:
    # this says how much detail the face could show.
    border = cv2.morphologyEx(seg.filled, cv2.MORPH_GRADIENT, _SQUARE3)
    rise = _gradient_magnitude(seg.ink)
    sharpness = cv2.mean(rise, mask=border)[0] / (_SOBEL_GAIN * max(stroke_ink - paper_ink, 1e-3))
    # Chroma (white-balanced max - min channel) tells faint coloured stripes from grey paper.
    return [inside_ink / max(stroke_ink, 1e-3), inside_ink / strong, texture_excess,
            inside_chroma / max(stroke_chroma, 1e-3),
            (inside_ink - paper_ink) / max(stroke_ink - paper_ink, 1e-3),
            (inside_chroma - paper_chroma) / max(stroke_chroma - paper_chroma, 1e-3),
            _clip((inside_ink - paper_ink) / noise, -20.0, 50.0),
            (core_ink - paper_ink) / max(stroke_ink - paper_ink, 1e-3),
            (core_chroma - paper_chroma) / max(stroke_chroma - paper_chroma, 1e-3),
            _clip((core_ink - paper_ink) / noise, -20.0, 50.0),
            _clip(inside_drop / stroke_drop, -5.0, 5.0), _clip(core_drop / stroke_drop, -5.0, 5.0),
            _clip(sharpness, 0.0, 5.0), spread / texture_scale, spread / max(float(steps.max() + steps.min()), 1e-3)]


# How far a pixel's neighbour to the left, above, above left and above right lies.
_STEP_DISTANCE = np.array([1.0, 1.0, np.sqrt(2.0), np.sqrt(2.0)])


# A 3x3 Sobel filter gives four times a step's height.
_SOBEL_GAIN = 4.0


def _gradient_magnitude(image: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The 3x3 Sobel gradient's magnitude of a float32 (H, W) image, border reflected as
    OpenCV's default reflects it. In NumPy, whose float arithmetic is the same on every run:
    `cv2.magnitude` rounded a pixel differently once in 60,000 calls on the same arrays
    (presumably its vector code and scalar tail split a row by memory alignment), and a feature
    so made made `setfinder train` build a different model each time."""
    # (A copy, no arithmetic: OpenCV's is 7x quicker than NumPy's pad.)
    padded = cv2.copyMakeBorder(image, 1, 1, 1, 1, cv2.BORDER_REFLECT_101)
    across = padded[:, 2:] - padded[:, :-2]
    down = padded[2:, :] - padded[:-2, :]
    dx = across[:-2] + 2 * across[1:-1] + across[2:]
    dy = down[:, :-2] + 2 * down[:, 1:-1] + down[:, 2:]
    return np.sqrt(dx * dx + dy * dy)


def darkest_channel(bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The darkest channel of a BGR uint8 image."""
    b, g, r = cv2.split(bgr)
    return cv2.min(cv2.min(b, g), r)


def _mean_steps(gray: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8]) -> float:
    """The mean absolute step to the left neighbour plus that to the neighbour above, over
    the pixels of ``mask`` (uint8, ``gray``'s shape) that have one (0 if none)."""
    return sum(_directional_steps(gray, mask, diagonals=False))


def _directional_steps(gray: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8], diagonals: bool = True
                       ) -> tuple[float, ...]:
    """The mean absolute step from each pixel of ``mask`` (uint8, ``gray``'s shape) to its
    neighbour to the left, above and, with ``diagonals``, above left and above right, over the
    pixels that have that neighbour (0 if none). ``gray`` is at least two pixels wide."""
    # (Steps between neighbours of the flattened rows; a step that wraps from one row's end to
    # the next row's start is masked out by its first or last column.)
    gray = np.ascontiguousarray(gray)
    pixels, flat, width = gray.reshape(-1), mask.reshape(-1), gray.shape[1]
    not_first = mask.copy()
    not_first[:, 0] = 0
    has_left = not_first.reshape(-1)
    # (pixel offset back to the neighbour, mask of the pixels that have it)
    neighbours = [(1, has_left), (width, flat)]
    if diagonals:
        not_last = mask.copy()
        not_last[:, -1] = 0
        neighbours += [(width + 1, has_left), (width - 1, not_last.reshape(-1))]
    if pixels.size - width - 1 > 4:
        return tuple(cv2.mean(cv2.absdiff(pixels[back:], pixels[:-back]), mask=has[back:])[0]
                     for back, has in neighbours)
    # A sliver of an inside (a corner of table taken for a symbol): OpenCV would take arrays of
    # four values or fewer for scalars, so these few steps are summed by NumPy.
    return tuple(_masked_mean_steps(pixels, has, back) for back, has in neighbours)


def _paper_steps(darkest: npt.NDArray[np.uint8], ink: npt.NDArray[np.float32]) -> float:
    """`_mean_steps` of a face's full-resolution ``darkest`` channel over the bare paper (by
    its half-resolution ``ink``) of its two side strips, an eighth of its width each, where SET
    prints no symbol: the paper's grain and the sensor's noise. Ink there (a stain, a
    neighbour's edge) is left out."""
    strip = _SMALL_W // 8
    total, count = 0.0, 0
    for start in (0, _SMALL_W - strip):
        paper = (ink[:, start:start + strip] < _PAPER_INK).view(np.uint8)
        if not cv2.countNonZero(paper):
            continue
        full = cv2.resize(paper, (_SCALE * strip, _SCALE * _SMALL_H), interpolation=cv2.INTER_NEAREST)
        total += _mean_steps(darkest[:_SCALE * _SMALL_H, _SCALE * start:_SCALE * (start + strip)], full)
        count += 1
    return total / count if count else 0.0


def _masked_mean_steps(pixels: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8], step: int) -> float:
    """Mean of |pixels[i] - pixels[i - step]| over the i >= step where ``mask[i]`` is set (0 if
    none), as `cv2.mean` gives it; for the few pixels of a tiny inside."""
    steps = np.abs(pixels[step:].astype(np.int16) - pixels[:-step].astype(np.int16))
    chosen = steps[mask[step:] != 0]
    return float(chosen.mean()) if chosen.size else 0.0


def _clip(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _color_features(seg: InkSegmentation, inside: npt.NDArray[np.uint8]) -> list[float]:
    # The strongest ink pixels of the symbols carry the pigment's colour most purely.
    strongest = cv2.compare(seg.ink, 0.6 * seg.strong_ink, cv2.CMP_GT)
    if seg.symbols:
        strongest = cv2.bitwise_and(strongest, seg.filled)
    if not cv2.countNonZero(strongest):
        strongest = seg.filled if seg.symbols else np.full_like(strongest, 255)
    mean = cv2.mean(seg.white, mask=strongest)[:3]
    b, g, r = (max(v, 1e-3) for v in mean)
    if seg.symbols and cv2.countNonZero(inside):
        inside_mean = cv2.mean(seg.white, mask=inside)[:3]
    else:
        inside_mean = mean
    return [*_absorption(mean), math.log(r / g), math.log(b / g), *_hue(mean),
            *_absorption(inside_mean), *_hue(inside_mean)]


def _absorption(bgr: tuple[float, ...]) -> list[float]:
    """How much of each channel the ink takes away from the paper, as fractions summing to 1."""
    absorbed = [max(1.0 - v, 1e-3) for v in bgr]
    total = absorbed[0] + absorbed[1] + absorbed[2]
    return [v / total for v in absorbed]


def _hue(bgr: tuple[float, ...]) -> list[float]:
    """The hue of a white-balanced colour as (cos, sin) of its angle in opponent space."""
    b, g, r = bgr
    red_green = (r - g) / math.sqrt(2.0)
    yellow_blue = (r + g - 2.0 * b) / math.sqrt(6.0)
    norm = math.hypot(red_green, yellow_blue) or 1.0
    return [red_green / norm, yellow_blue / norm]
