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
  the blob compared with its border stroke and from the stripe texture there, and **color** from
  the white-balanced absorption and hue of the strongest ink pixels.

Each attribute's classifier sees only its own group of features (`FEATURE_GROUPS`).

Everything is computed inside a margin at the card border, so a warp that is a few pixels off
(a sliver of table at the edge) changes nothing. The features are unchanged by a 180-degree turn.
"""

from __future__ import annotations

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
# A blob is a symbol when its bounding box is at least this fraction of the largest blob's
# and of the face.
_BLOB_OF_LARGEST = 0.3
_BLOB_OF_FACE = 0.015
# ... and its centre is within this fraction of the face width of the vertical centre line.
_CENTRE_TOLERANCE = 0.2

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

# The features each attribute's classifier may use. Keeping them apart stops a model from
# leaning on accidents of the training photos (say, blur level for shading) that another deck
# or camera would not share.
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "count": ("blob_count", "filled_area", "largest_blob_area", "filled_over_largest",
              "span_over_blob_height", "row_runs"),
    # Of the median-sized symbol.
    "shape": ("solidity", "extent_rect", "extent_box", "aspect", "circularity", "poly_vertices_fine",
              "poly_vertices_coarse", "defect_depth", "mirror_iou", "width_at_15", "width_at_30",
              "width_at_50", "height_at_10", "height_at_25", "hu1", "hu2", "hu3"),
    "shading": ("inside_over_stroke", "inside_ink", "inside_texture", "inside_chroma_over_stroke"),
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
    top to bottom; ``filled`` the blobs filled, uint8 0/255.
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
    across the card. Returns float32 (H, W, 3), paper close to 1, clipped at 1.
    """
    height, width = face.shape[:2]
    grid = cv2.resize(face, (max(1, width // _PAPER_CELL), max(1, height // _PAPER_CELL)),
                      interpolation=cv2.INTER_AREA).astype(np.float32)
    gray = cv2.cvtColor(grid, cv2.COLOR_BGR2GRAY)
    local_max = cv2.dilate(gray, _PAPER_FILTER)
    first = _masked_mean(grid, (gray >= 0.85 * local_max).astype(np.float32), _PAPER_FILTER.shape, None)
    paper = first
    for _ in range(_PAPER_PASSES):
        cell_ink = 1.0 - (grid / paper).min(axis=2)
        paper = _masked_mean(grid, (cell_ink < _PAPER_INK).astype(np.float32), (_PAPER_BOX, _PAPER_BOX), first)
    paper = cv2.resize(paper, (width, height), interpolation=cv2.INTER_LINEAR)
    white = face.astype(np.float32) / paper
    return np.minimum(white, 1.0, out=white)


def _masked_mean(grid: npt.NDArray[np.float32], weight: npt.NDArray[np.float32], box: tuple[int, int],
                 prior: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
    """Box-filtered mean of ``grid`` (h, w, 3) over the cells where ``weight`` (h, w) is 1."""
    total = cv2.blur(grid * weight[:, :, None], box)
    count = cv2.blur(weight, box)
    if prior is not None:
        total += _PAPER_PRIOR * prior
        count += _PAPER_PRIOR
    return np.maximum(total / np.maximum(count, 1e-3)[:, :, None], 8.0)


def segment_ink(card: npt.NDArray[np.uint8]) -> InkSegmentation:
    """Find the ink and the symbol blobs of a canonical card (BGR uint8 (250, 160, 3))."""
    check_canonical(card)
    face = card[MARGIN:-MARGIN, MARGIN:-MARGIN]
    # An exact 2x reduction (OpenCV's fast path), then cropped to whole paper cells.
    small = cv2.resize(face, (_FACE_W // _SCALE, _FACE_H // _SCALE), interpolation=cv2.INTER_AREA)
    small = small[:_SMALL_H, :_SMALL_W]
    white = white_balance(small)
    b, g, r = cv2.split(white)
    lowest = cv2.min(cv2.min(b, g), r)
    ink = 1.0 - lowest
    chroma = cv2.max(cv2.max(b, g), r) - lowest
    paper_mask = (ink < _PAPER_INK).astype(np.uint8)
    small_b, small_g, small_r = cv2.split(small)
    darkest = cv2.min(cv2.min(small_b, small_g), small_r)
    paper_level = cv2.mean(darkest, mask=paper_mask)[0] if paper_mask.any() else float(darkest.max())
    # (A full sort: np.partition slows down tenfold on the many exact zeros of clean paper.)
    flat = np.sort(ink, axis=None)
    strong = float(flat[int(0.995 * flat.size)])
    # Paper grain and glare set the noise floor below which nothing is ink.
    paper_mean, paper_std = cv2.meanStdDev(ink, mask=paper_mask)
    noise = float(paper_mean[0, 0] + 4.0 * paper_std[0, 0]) if paper_mask.any() else 0.0
    high = max(_INK_FLOOR, _INK_FRACTION * strong, noise)
    low = max(_INK_FLOOR, _INK_LOW_FRACTION * strong, noise)
    strokes = _hysteresis(ink, high=high, low=min(low, high))
    strokes = cv2.morphologyEx(strokes, cv2.MORPH_CLOSE, _SQUARE3)
    contours, _ = cv2.findContours(strokes, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    # Blobs are sized by their bounding box, so an outline with a faint gap (which fills as
    # just its stroke) still counts as the symbol it is.
    sizes = [_box_area(c) for c in contours]
    largest = max(sizes, default=0)
    keep = [c for c, size in zip(contours, sizes)
            if size >= _BLOB_OF_LARGEST * largest and size >= _BLOB_OF_FACE * _FACE_AREA
            and _is_centred(c)]
    keep.sort(key=lambda c: float(c[:, 0, 1].min()))
    filled = np.zeros_like(strokes)
    cv2.drawContours(filled, keep, -1, 255, thickness=cv2.FILLED)
    return InkSegmentation(face, paper_level, white, ink, chroma, strong, strokes, tuple(keep), filled)


def _hysteresis(ink: npt.NDArray[np.float32], high: float, low: float) -> npt.NDArray[np.uint8]:
    """Pixels above ``low`` connected to a pixel above ``high`` (uint8 0/255): strokes whose ink
    fades in places (glare, a worn print) stay whole, while paper texture never seeds a blob."""
    weak = (ink > low).astype(np.uint8)
    n, labels = cv2.connectedComponents(weak, connectivity=8)
    if n <= 1:
        return weak * 255
    seeded = np.zeros(n, np.uint8)
    seeded[labels[ink > high]] = 255
    seeded[0] = 0
    return seeded[labels]


def _is_centred(contour: npt.NDArray[np.int32]) -> bool:
    """SET symbols sit on the card's vertical centre line; paper texture and stains need not."""
    x, _, w, _ = cv2.boundingRect(contour)
    return abs(x + w / 2 - _SMALL_W / 2) <= _CENTRE_TOLERANCE * _SMALL_W


def _box_area(contour: npt.NDArray[np.int32]) -> int:
    _, _, w, h = cv2.boundingRect(contour)
    return w * h


def card_features(card: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The feature vector of one canonical card: float32 (N_FEATURES,), in FEATURE_NAMES order."""
    seg = segment_ink(card)
    inside = cv2.erode(seg.filled, _INSIDE_DISC) if seg.symbols else seg.filled
    values: list[float] = []
    values += _count_features(seg)
    values += _shape_features(seg)
    values += _shading_features(seg, inside)
    values += _color_features(seg, inside)
    return np.asarray(values, dtype=np.float32)


def features_of_cards(cards: list[npt.NDArray[np.uint8]]) -> npt.NDArray[np.float32]:
    """Stack the features of many canonical cards: float32 (len(cards), N_FEATURES)."""
    if not cards:
        return np.zeros((0, N_FEATURES), np.float32)
    return np.stack([card_features(card) for card in cards])


def _count_features(seg: InkSegmentation) -> list[float]:
    if not seg.symbols:
        return [0.0] * 6
    boxes = [cv2.boundingRect(c) for c in seg.symbols]
    areas = [float(w * h) for _, _, w, h in boxes]
    heights = sorted(h for _, _, _, h in boxes)
    top = min(y for _, y, _, _ in boxes)
    bottom = max(y + h for _, y, _, h in boxes)
    rows = seg.filled.max(axis=1) > 0
    runs = int(np.count_nonzero(rows[1:] & ~rows[:-1]) + rows[0])
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
    mirrored = blob[:, ::-1]
    mirror_iou = np.count_nonzero(blob & mirrored) / max(np.count_nonzero(blob | mirrored), 1)
    row_width = blob.sum(axis=1) / max(w, 1)
    col_height = blob.sum(axis=0) / max(h, 1)
    hu = cv2.HuMoments(cv2.moments(contour)).ravel()[:3]
    hu = -np.sign(hu) * np.log10(np.abs(hu) + 1e-12)
    return [solidity, extent_rect, extent_box, aspect, circularity, float(fine), float(coarse),
            depth, mirror_iou, _at_both_ends(row_width, 0.15), _at_both_ends(row_width, 0.30),
            _at_both_ends(row_width, 0.5), _at_both_ends(col_height, 0.10),
            _at_both_ends(col_height, 0.25), *(float(v) for v in hu)]


def _at_both_ends(profile: npt.NDArray[np.float64], fraction: float) -> float:
    """The mean of ``profile`` at ``fraction`` of its length from either end (turn-invariant)."""
    n = len(profile)
    i = min(n - 1, int(fraction * n))
    return float(profile[i] + profile[n - 1 - i]) / 2.0


def _shading_features(seg: InkSegmentation, inside: npt.NDArray[np.uint8]) -> list[float]:
    """How much ink is inside the symbols, relative to their border stroke, and how striped."""
    strong = max(seg.strong_ink, 1e-3)
    if not seg.symbols or not cv2.countNonZero(inside):
        return [0.0] * 4
    stroke = cv2.subtract(seg.filled, inside)
    inside_ink = cv2.mean(seg.ink, mask=inside)[0]
    stroke_ink = cv2.mean(seg.ink, mask=stroke)[0] if cv2.countNonZero(stroke) else strong
    # Stripes are finer than the half-resolution grid: measure their texture at full resolution,
    # as the mean step between neighbouring pixels of the darkest channel, relative to the
    # paper's level and to the card's strongest ink (so that dim light and faint ink cancel).
    # Both directions are summed: stripes may run at any angle on another print of the deck.
    big_inside = cv2.resize(inside, (_SMALL_W * _SCALE, _SMALL_H * _SCALE), interpolation=cv2.INTER_NEAREST)
    face_b, face_g, face_r = cv2.split(seg.face[:big_inside.shape[0], :big_inside.shape[1]])
    gray = cv2.min(cv2.min(face_b, face_g), face_r)
    step_x = cv2.absdiff(gray[:, 1:], gray[:, :-1])
    step_y = cv2.absdiff(gray[1:, :], gray[:-1, :])
    texture = (cv2.mean(step_x, mask=big_inside[:, 1:])[0] + cv2.mean(step_y, mask=big_inside[1:, :])[0]) \
        / (max(seg.paper_level, 1.0) * strong)
    # Chroma (white-balanced max - min channel) tells faint coloured stripes from grey paper.
    chroma = seg.chroma
    chroma_stroke = cv2.mean(chroma, mask=stroke)[0] if cv2.countNonZero(stroke) else 1.0
    return [inside_ink / max(stroke_ink, 1e-3), inside_ink / strong, texture,
            cv2.mean(chroma, mask=inside)[0] / max(chroma_stroke, 1e-3)]


def _color_features(seg: InkSegmentation, inside: npt.NDArray[np.uint8]) -> list[float]:
    # The strongest ink pixels of the symbols carry the pigment's colour most purely.
    _, strongest = cv2.threshold(seg.ink, 0.6 * seg.strong_ink, 255, cv2.THRESH_BINARY)
    strongest = strongest.astype(np.uint8)
    if seg.symbols:
        strongest = cv2.bitwise_and(strongest, seg.filled)
    if not cv2.countNonZero(strongest):
        strongest = seg.filled if seg.symbols else np.full_like(strongest, 255)
    mean = np.array(cv2.mean(seg.white, mask=strongest)[:3])
    b, g, r = np.maximum(mean, 1e-3)
    if seg.symbols and cv2.countNonZero(inside):
        inside_mean = np.array(cv2.mean(seg.white, mask=inside)[:3])
    else:
        inside_mean = mean
    return [*_absorption(mean), float(np.log(r / g)), float(np.log(b / g)), *_hue(mean),
            *_absorption(inside_mean), *_hue(inside_mean)]


def _absorption(bgr: npt.NDArray[np.float64]) -> list[float]:
    """How much of each channel the ink takes away from the paper, as fractions summing to 1."""
    absorbed = np.maximum(1.0 - bgr, 1e-3)
    return [float(v) for v in absorbed / absorbed.sum()]


def _hue(bgr: npt.NDArray[np.float64]) -> list[float]:
    """The hue of a white-balanced colour as (cos, sin) of its angle in opponent space."""
    b, g, r = bgr
    red_green = (r - g) / np.sqrt(2.0)
    yellow_blue = (r + g - 2.0 * b) / np.sqrt(6.0)
    norm = float(np.hypot(red_green, yellow_blue)) or 1.0
    return [float(red_green / norm), float(yellow_blue / norm)]
