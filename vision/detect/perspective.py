"""What the cards found tell of the table's perspective: the typical card's area at each place in
the image (`typical_area_model`), the table's plane round cards seen alone (`TablePlanes`), the
table seen from above as all the cards give it (`table_rectification`), and how far the table's
depth is squeezed (`table_foreshortening`); a candidate's size and proportions are judged
against them.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Callable

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import CardQuad, FLAT_ASPECT
from vision.quad import aspect, short_side


class TablePlanes:
    """The table's plane as the whole cards found show it: each card is a flat rectangle of a
    card's proportions, so the homography taking it to one maps the whole table (a plane) to
    a view from straight above, up to a turn and a scale."""

    def __init__(self, cards: list[CardQuad], unchecked: bool = False) -> None:
        # (Not those outlined round their symbols: their outlines are estimates.)
        self._cards = [card for card in cards if not card.partial and not card.from_symbols]
        self._planes: dict[int, npt.NDArray[np.float64] | None] = {}
        # With too few cards to check a card's plane by, whether one card's own outline may
        # give it: a close-up of a card or two shows no more.
        self._unchecked = unchecked and 0 < len(self._cards) < _PLANE_CARDS

    def nearest(self, point: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
        """The homography (3, 3) from the image to the table seen from above, by the nearest
        of the three cards nearest ``point`` whose outline the others bear out; None where
        none does, or too few cards are found to check it by (unless unchecked: then by the
        nearest card's outline alone, `_plane_of_alone`)."""
        if len(self._cards) < _PLANE_CARDS and not self._unchecked:
            return None
        distances = [float(np.hypot(*(card.center - point))) for card in self._cards]
        if self._unchecked:
            nearest = int(np.argmin(distances))
            if nearest not in self._planes:
                self._planes[nearest] = _plane_of_alone(self._cards[nearest])
            return self._planes[nearest]
        for index in np.argsort(distances)[:3]:
            if index not in self._planes:
                self._planes[index] = self._plane_of(self._cards[index])
            if self._planes[index] is not None:
                return self._planes[index]
        return None

    def _plane_of(self, card: CardQuad) -> npt.NDArray[np.float64] | None:
        """The homography by ``card``: of the two ways its outline may be a card's (seen
        steeply, a card's long sides may look the shorter), the one that gives the other
        cards most nearly a card's proportions, if it gives most of them those closely."""
        others = [other.corners.astype(np.float64) for other in self._cards if other is not card]
        best, best_error = None, math.inf
        for turn in (0, 1):
            homography = _to_flat_card(np.roll(card.corners, turn, axis=0), short_side(card.corners))
            seen_flat = [to_plane(homography, corners) for corners in others]
            error = float(np.median([abs(math.log(max(aspect(c), 1.0 / aspect(c)) / FLAT_ASPECT))
                                     for c in seen_flat]))
            if error < best_error:
                best, best_error = homography, error
        return best if best_error < _FORESHORTENING_FIT else None


# A card's plane is checked by this many other cards at least.
_PLANE_CARDS = 4


def _plane_of_alone(card: CardQuad) -> npt.NDArray[np.float64] | None:
    """The homography (3, 3) from the image to the table seen from above by one card's outline
    alone, its longer sides as seen taken for its long sides; None where its proportions leave
    that in doubt (a card seen steeply along its length looks nearly square)."""
    seen_aspect = aspect(card.corners)
    if not _ALONE_ASPECT <= max(seen_aspect, 1.0 / seen_aspect):
        return None
    # (Below 1, the sides 0 and 2 are the longer pair: corner 1 then starts a short side.)
    turn = 0 if seen_aspect >= 1.0 else 1
    return _to_flat_card(np.roll(card.corners, -turn, axis=0), short_side(card.corners))


def _to_flat_card(corners: npt.NDArray[np.float32], width: float) -> npt.NDArray[np.float64]:
    """The homography (3, 3) taking a card's ``corners`` (the first side a short one) to a flat
    card ``width`` pixels wide seen from straight above."""
    flat = np.array([[0, 0], [width, 0], [width, FLAT_ASPECT * width], [0, FLAT_ASPECT * width]], np.float32)
    return cv2.getPerspectiveTransform(corners.astype(np.float32), flat).astype(np.float64)


# One card alone gives the table's plane where it looks at least this long for its width.
_ALONE_ASPECT = 1.2


def to_plane(homography: npt.NDArray[np.float64], points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``points`` (N, 2) mapped by a homography (3, 3)."""
    return cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), homography).reshape(-1, 2)


def table_rectification(cards: list[CardQuad]) -> npt.NDArray[np.float64] | None:
    """The homography (3, 3) from the image to the table seen from straight above (up to a turn
    and a scale), fitted to all the ``cards`` at once: the one under which most nearly every
    card is a rectangle of a flat card's proportions (the median card's misfit least). None
    for fewer than `PLANE_QUADS` cards, or where even the best leaves the median card more than
    8% off (a table that is no plane, outlines far off).

    One card's outline gives a plane too (`TablePlanes`), but a pixel off at a small card's
    corners tilts it far off across the table. The fit starts from the horizon the cards'
    sides point to (where each card's two pairs of sides meet, a line fitted through those
    points), then searches the horizon, shear and squeeze together."""
    if len(cards) < PLANE_QUADS:
        return None
    quads = np.array([card.corners for card in cards], np.float64)
    # (In coordinates centred on the cards and about 1 across, for a well-conditioned fit.)
    mean = quads.reshape(-1, 2).mean(axis=0)
    scale = math.sqrt(2) / float(np.mean(np.hypot(*(quads.reshape(-1, 2) - mean).T)))
    normed = (quads - mean) * scale
    params = _fitted_rectification(normed, _horizon(normed))
    if params is None:
        return None
    horizon_x, horizon_y, shear, log_squeeze = params
    to_normed = np.array([[scale, 0, -scale * mean[0]], [0, scale, -scale * mean[1]], [0, 0, 1]])
    parallel = np.array([[1, 0, 0], [0, 1, 0], [horizon_x, horizon_y, 1]])
    square = np.array([[1, shear, 0], [0, math.exp(log_squeeze), 0], [0, 0, 1]])
    return square @ parallel @ to_normed


def _horizon(normed: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The (x, y) of the horizon line x X + y Y + 1 = 0 through the points where each card's
    (``normed``: (n, 4, 2)) opposite sides meet, fitted by least squares to the three quarters
    nearest it; (0, 0), the line at infinity, where that line crosses the cards."""
    points = np.concatenate([normed, np.ones((len(normed), 4, 1))], axis=2)
    meeting = np.concatenate([np.cross(np.cross(points[:, a], points[:, b]), np.cross(points[:, c], points[:, d]))
                              for a, b, c, d in ((0, 1, 3, 2), (1, 2, 0, 3))])
    meeting /= np.maximum(np.linalg.norm(meeting, axis=1, keepdims=True), 1e-12)
    nearest = np.ones(len(meeting), bool)
    for _ in range(2):
        line = np.linalg.svd(meeting[nearest])[2][-1]
        distance = np.abs(meeting @ line)
        nearest = distance <= np.quantile(distance, 0.75)
    if abs(line[2]) < 1e-6:
        return np.zeros(2)
    horizon = line[:2] / line[2]
    return horizon if np.all(normed @ horizon + 1 > _IN_FRONT) else np.zeros(2)


def _fitted_rectification(normed: npt.NDArray[np.float64], horizon: npt.NDArray[np.float64]
                          ) -> npt.NDArray[np.float64] | None:
    """The horizon (2), shear and log squeeze under which the cards (``normed``) are most nearly
    flat cards (`_rectification_misfit`): a grid of shears and squeezes under the given
    ``horizon``, then a search of all four from the best; None where it misfits."""
    shears, squeezes = np.meshgrid(np.linspace(-2, 2, 17), np.linspace(math.log(0.15), math.log(6), 17))
    grid = np.column_stack([np.full(shears.size, horizon[0]), np.full(shears.size, horizon[1]),
                            shears.ravel(), squeezes.ravel()])
    misfits = _rectification_misfit(normed, grid)
    params, best = grid[int(np.argmin(misfits))], float(misfits.min())
    moves = np.concatenate([np.eye(4), -np.eye(4)])
    step = 0.2
    while step > 1e-3:
        trials = params + step * moves
        misfits = _rectification_misfit(normed, trials)
        if misfits.min() < best:
            params, best = trials[int(np.argmin(misfits))], float(misfits.min())
        else:
            step /= 2
    return params if best < _FORESHORTENING_FIT else None


def _rectification_misfit(normed: npt.NDArray[np.float64], params: npt.NDArray[np.float64]
                          ) -> npt.NDArray[np.float64]:
    """For each row of ``params`` (m, 4: horizon x and y, shear, log squeeze), the median over
    the cards (``normed``: (n, 4, 2)) of how far each is from a flat card once rectified: its
    sides' log ratio off a card's, plus the cosine of the angle between them."""
    depth = np.einsum("nkj,mj->mnk", normed, params[:, :2]) + 1
    behind = (depth <= _IN_FRONT).any(axis=(1, 2))
    flat = normed[None] / np.where(depth <= _IN_FRONT, 1.0, depth)[..., None]
    across = ((flat[:, :, 1] - flat[:, :, 0]) + (flat[:, :, 2] - flat[:, :, 3])) / 2
    along = ((flat[:, :, 2] - flat[:, :, 1]) + (flat[:, :, 3] - flat[:, :, 0])) / 2
    shear, squeeze = params[:, 2:3], np.exp(params[:, 3:4])
    across = np.stack([across[..., 0] + shear * across[..., 1], squeeze * across[..., 1]], axis=-1)
    along = np.stack([along[..., 0] + shear * along[..., 1], squeeze * along[..., 1]], axis=-1)
    across_length, along_length = np.linalg.norm(across, axis=-1), np.linalg.norm(along, axis=-1)
    ratio = np.maximum(across_length / along_length, along_length / across_length)
    cosine = np.abs((across * along).sum(axis=-1)) / (across_length * along_length)
    misfit = np.median(np.abs(np.log(ratio / FLAT_ASPECT)) + cosine, axis=1)
    return np.where(behind, np.inf, misfit)


# Every card lies in front of the horizon: its corners' depth (1 at the cards' centre of view)
# at least this.
_IN_FRONT = 0.05


# The typical card area (pixels) at an (x, y) place in the image.
TypicalArea = Callable[[npt.NDArray[np.float32]], float]


def typical_area_model(quads: list[CardQuad]) -> TypicalArea:
    """The typical card area (pixels) at an (x, y) place in the image (`_fitted_typical_area`),
    made once for the same quads: one search asks for it again and again (at each settling,
    and in each later step, for the same cards), and each fit costs about 0.4 ms."""
    key = tuple(map(id, quads))
    with _RECENT_LOCK:
        recent = _RECENT_FITS.get(key)
    if recent is not None:
        return recent[1]
    model = _fitted_typical_area(quads)
    with _RECENT_LOCK:
        # (The quads are held with their fit, so no other quad takes one's id while it is kept.)
        _RECENT_FITS[key] = (tuple(quads), model)
        while len(_RECENT_FITS) > _RECENT:
            _RECENT_FITS.popitem(last=False)
    return model


_RECENT_FITS: OrderedDict[tuple[int, ...], tuple[tuple[CardQuad, ...], TypicalArea]] = OrderedDict()
_RECENT = 8
_RECENT_LOCK = threading.Lock()


def _fitted_typical_area(quads: list[CardQuad]) -> TypicalArea:
    """The typical card area (pixels) at an (x, y) place in the image.

    Under perspective, cards near the camera look up to twice as large as far ones (or more,
    seen steeply), so the typical area is a plane in log area over (x, y), fitted robustly to
    the quads that agree with the median, or with a plane through all of them, whichever more
    quads fit closely in the end; with too few quads it is just their median area.
    """
    if not quads:
        return lambda center: 1.0
    log_area = np.log(np.maximum([q.area for q in quads], 1.0))
    centers = np.array([q.center for q in quads], dtype=np.float64)
    mean = centers.mean(axis=0)  # (small numbers for the fit)
    design = np.column_stack([centers - mean, np.ones(len(quads))])
    card_width = math.sqrt(math.exp(float(np.median(log_area))) / FLAT_ASPECT)

    def refined(coefficients: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], int]:
        """The plane refitted to the quads that agree with it, and how many agree at the end."""
        limit = 0.5  # a card twice or half the size is still a candidate for the fit
        for _ in range(3):
            agree = np.abs(log_area - design @ coefficients) < limit
            if agree.sum() < PLANE_QUADS:
                break
            coefficients = _plane_through(design[agree, :2], log_area[agree], card_width)
            limit = 0.3
        return coefficients, int(np.count_nonzero(np.abs(log_area - design @ coefficients) < _CLOSE_FIT))

    coefficients, agreeing = refined(np.array([0.0, 0.0, float(np.median(log_area))]))
    if len(quads) >= PLANE_QUADS:
        # Seen steeply, the near cards can be twice and the far ones half the median size:
        # too few agree with the median to start the fit from it, but a plane through all of
        # them finds the slope (it is taken only where more cards agree with it at the end).
        tilted, tilted_agreeing = refined(_plane_through(design[:, :2], log_area, card_width))
        if tilted_agreeing > agreeing:
            coefficients, agreeing = tilted, tilted_agreeing
        # A quad far off every card's size (a blank patch of cloth a fifth of a card, a box)
        # drags a plane through all of them: so does a plane through the rest.
        near_median = np.abs(log_area - np.median(log_area)) < _FAR_OFF_SIZE
        if PLANE_QUADS <= near_median.sum() < len(quads):
            tilted, tilted_agreeing = refined(_plane_through(design[near_median, :2], log_area[near_median],
                                                             card_width))
            if tilted_agreeing > agreeing:
                coefficients = tilted

    # (The fit's offset folded into plain floats once: this is asked for every candidate.)
    slope_x, slope_y = float(coefficients[0]), float(coefficients[1])
    intercept = float(coefficients[2]) - slope_x * float(mean[0]) - slope_y * float(mean[1])

    def typical(center: npt.NDArray[np.float32]) -> float:
        return math.exp(slope_x * float(center[0]) + slope_y * float(center[1]) + intercept)
    return typical


# The fewest quads a plane of typical sizes is fitted to (with fewer, it is their median).
PLANE_QUADS = 6
# With fewer than that, a card showing centred symbols may be this many times the median.
NEAR_CARD = 4.0

# A quad whose area is this far (log) from the median, over 2.7 times or under 0.37 of it, is
# left out of one of the typical size's fits.
_FAR_OFF_SIZE = 1.0


def _plane_through(points: npt.NDArray[np.float64], values: npt.NDArray[np.float64], card_width: float
                   ) -> npt.NDArray[np.float64]:
    """The least-squares plane (slope x, slope y, value at 0, 0) through ``values`` at the
    (x, y) ``points``, fitted without the points that alone decide a slope (leverage over
    0.7): cards in one row and a box beside it would fit a plane exactly, whatever the box's
    size, and it would set the size beside the row. Points within a fraction of a
    ``card_width`` of one line (a row of cards, however jittered) say nothing of the slope
    across it: it is fitted along the line only. (In closed form: this runs a dozen times a
    frame, and NumPy's solvers cost 20-70 us a call on such small matrices.)"""
    offset, x, y, sxx, sxy, syy = _scatter(points)
    determinant = sxx * syy - sxy * sxy
    if determinant > 1e-6 * (sxx + syy) ** 2:
        leverage = 1.0 / len(values) + (syy * x * x - 2 * sxy * x * y + sxx * y * y) / determinant
        checked = leverage <= _HIGH_LEVERAGE
        if not checked.all() and checked.sum() >= 3:
            points, values = points[checked], values[checked]
            offset, x, y, sxx, sxy, syy = _scatter(points)
            determinant = sxx * syy - sxy * sxy
    mean_value = float(values.mean())
    sxv, syv = float(x @ (values - mean_value)), float(y @ (values - mean_value))
    # The smaller spread of the points about their mean (an eigenvalue of the 2 x 2 scatter).
    half_sum, half_difference = (sxx + syy) / 2, (sxx - syy) / 2
    radius = math.hypot(half_difference, sxy)
    if half_sum + radius < len(values) * (_ROW_WIDTH * card_width) ** 2:
        # Points all within a fraction of a card width of one place (one card's outlines by
        # several maps, once the far points that alone decide a slope are left out) say
        # nothing of any slope: a pixel's jitter between them set one of 0.015 a pixel in
        # log area, and the typical size at the card beside them 20 times too small
        # (close-up 7009).
        return np.array([0.0, 0.0, mean_value])
    if half_sum - radius < len(values) * (_ROW_WIDTH * card_width) ** 2:
        # Along the line only: the direction of the larger spread.
        dx, dy = (half_difference + radius, sxy) if half_difference >= 0 else (sxy, radius - half_difference)
        norm = math.hypot(dx, dy)
        if norm == 0.0:
            return np.array([0.0, 0.0, mean_value])
        dx, dy = dx / norm, dy / norm
        spread = dx * dx * sxx + 2 * dx * dy * sxy + dy * dy * syy
        rate = (dx * sxv + dy * syv) / spread if spread > 0 else 0.0
        slope_x, slope_y = rate * dx, rate * dy
    else:
        slope_x = (syy * sxv - sxy * syv) / determinant
        slope_y = (sxx * syv - sxy * sxv) / determinant
    return np.array([slope_x, slope_y, mean_value - slope_x * offset[0] - slope_y * offset[1]])


def _scatter(points: npt.NDArray[np.float64]
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], float, float, float]:
    """The mean of (x, y) ``points``, their x and y about it, and the sums of x x, x y and y y."""
    offset = points.mean(axis=0)
    x, y = (points - offset).T
    return offset, x, y, float(x @ x), float(x @ y), float(y @ y)


# Centres within this many card widths (standard deviation) of one line are a row of cards.
_ROW_WIDTH = 0.25
# A point whose leverage in a plane fit is over this decides a slope alone.
_HIGH_LEVERAGE = 0.7


# Cards near each other look the same size within about 15% (log area 0.15), whatever the
# perspective: the plane of typical sizes that most cards fit that closely is the right one.
_CLOSE_FIT = 0.15


def _rectified_aspect(corners: npt.NDArray[np.float32], foreshortening: float) -> float:
    """A quad's long side over its short one with the image's vertical stretched by
    1 / ``foreshortening``: a card's own proportions where a camera tilted forward squeezed
    the table's depth by that factor."""
    rectified = corners / np.array([1.0, foreshortening], np.float32)
    value = aspect(rectified)
    return max(value, 1.0 / value)


def table_foreshortening(cards: list[CardQuad]) -> float | None:
    """The factor (0.3-1) by which the table's depth looks squeezed, as the image's vertical:
    the one that gives the ``cards`` most nearly a flat card's proportions, whichever way each
    is turned. None where too few cards tell it, or none gives most of them those proportions
    closely (a camera rolled far round, outlines a little off)."""
    if len(cards) < _FORESHORTENING_CARDS:
        return None
    best, best_error = 1.0, math.inf
    for factor in _FORESHORTENING_STEPS:
        error = float(np.median([abs(math.log(_rectified_aspect(c.corners, factor) / FLAT_ASPECT))
                                 for c in cards]))
        if error < best_error - 1e-9:
            best, best_error = factor, error
    return best if best_error < _FORESHORTENING_FIT else None


_FORESHORTENING_STEPS = tuple(1.0 - 0.05 * i for i in range(15))
_FORESHORTENING_CARDS = 5
_FORESHORTENING_FIT = 0.08  # (log: the median card within 8% of a card's proportions)


def rectified_fits(corners: npt.NDArray[np.float32], foreshortening: float | None) -> bool:
    """Whether a quad has a card's proportions once the table's depth is unsqueezed (where the
    ``foreshortening`` is known), within a fifth either way."""
    return (foreshortening is not None
            and 0.8 * FLAT_ASPECT <= _rectified_aspect(corners, foreshortening) <= 1.25 * FLAT_ASPECT)


def aspect_fits(card_aspect: float, typical_aspect: float) -> bool:
    """Whether a card's proportions fit those of the typical card, either way round.

    A tilted camera foreshortens whatever lies along the tilt by one factor f: the cards lying
    across it look 1.56 / f long for their width, those lying along it 1.56 f (or, below 1, its
    inverse). So cards turned both ways on a steeply seen table show two typical aspects; the
    other one follows from the typical one: 1.56^2 / typical, or its inverse.
    """
    turned = FLAT_ASPECT ** 2 / typical_aspect
    turned = max(turned, 1.0 / turned)
    return any(0.7 * typical <= card_aspect <= 1.4 * typical for typical in (typical_aspect, turned))
