"""Geometry of card outlines: four corners, fitted to a blob's outline, ordered, grown, compared.

Corners are (x, y) image pixels, float32 (4, 2), clockwise on screen (y points down) from the
card's top-left with the card read portrait: the first side is a short one.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

# Corner (or side) indices one step on and one step back round a quad.
NEXT = np.array([1, 2, 3, 0])
PREVIOUS = np.array([3, 0, 1, 2])
# (x, y) -> (-y, x) after swapping the columns: a direction turned a quarter left.
_TURN_LEFT = np.array([-1.0, 1.0])


def fit_quad(contour: npt.NDArray[np.int32]) -> npt.NDArray[np.float32] | None:
    """Four corners of the quadrilateral an outline traces, or None if it is no quadrilateral.

    The rough quad from polygon simplification sits inside the rounded corners; each side is
    then refitted as a straight line through the outline points along it, and the corners are
    the intersections of neighbouring sides.
    """
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    rough = None
    for fraction in (0.02, 0.03, 0.045, 0.06):
        approx = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(approx) == 4:
            rough = approx.reshape(4, 2).astype(np.float64)
            break
        if len(approx) < 4:
            break
    if rough is None:
        return None
    points = contour.reshape(-1, 2).astype(np.float64)
    sides = rough[NEXT] - rough                                       # side i: corner i -> i+1
    lengths = np.hypot(sides[:, 0], sides[:, 1])
    if lengths.min() < 4:
        return None
    directions = sides / lengths[:, None]
    normals = directions[:, ::-1] * _TURN_LEFT
    # All four sides at once: (4, N) offsets across and positions along each side.
    offsets = normals @ points.T - (normals * rough).sum(axis=1)[:, None]
    along = directions @ points.T - (directions * rough).sum(axis=1)[:, None]
    # Points close to the side and away from the (rounded) corners.
    near = ((np.abs(offsets) < np.maximum(2.0, 0.04 * lengths)[:, None])
            & (along > 0.15 * lengths[:, None]) & (along < 0.85 * lengths[:, None])).astype(np.float64)
    # Least-squares line of each side: through the mean of its points, along their principal
    # axis (the band around the rough side already keeps other sides and corners out).
    counts = near.sum(axis=1)
    refit = counts >= 5  # too few points: keep the rough side
    x, y = points[:, 0], points[:, 1]
    # Per side: the means of x, y, x*x, y*y and x*y over its points, (4, 5).
    moments = near @ np.column_stack([x, y, x * x, y * y, x * y]) / np.maximum(counts, 1.0)[:, None]
    means = moments[:, :2]
    xx = moments[:, 2] - means[:, 0] ** 2
    yy = moments[:, 3] - means[:, 1] ** 2
    xy = moments[:, 4] - means[:, 0] * means[:, 1]
    angle = 0.5 * np.arctan2(2 * xy, xx - yy)
    fitted = np.column_stack([np.cos(angle), np.sin(angle)])
    if refit.all():
        anchors, line_directions = means, fitted
    else:
        anchors = np.where(refit[:, None], means, rough)
        line_directions = np.where(refit[:, None], fitted, directions)
    # Corner i is where side i-1 meets side i.
    p1, d1 = anchors[PREVIOUS], line_directions[PREVIOUS]
    p2, d2 = anchors, line_directions
    determinant = d1[:, 1] * d2[:, 0] - d1[:, 0] * d2[:, 1]
    if np.abs(determinant).min() < 1e-6:
        return None
    delta = p2 - p1
    t = (delta[:, 1] * d2[:, 0] - delta[:, 0] * d2[:, 1]) / determinant
    quad = (p1 + t[:, None] * d1).astype(np.float32)
    # A refit that moves a corner far from the rough one means the sides were not straight.
    moved = np.sqrt(((quad - rough) ** 2).sum(axis=1))
    if moved.max() > 0.25 * np.sqrt(cv2.contourArea(rough.astype(np.float32))):
        return rough.astype(np.float32)
    return quad


def grow_quad(quad: npt.NDArray[np.float32], distance: float) -> npt.NDArray[np.float32]:
    """Move every side of a convex quad outwards by ``distance`` pixels."""
    # Plain floats: on four points NumPy's per-call cost is most of the time.
    points = order_corners(quad).tolist()
    outward = []                                                       # side i: point i -> i+1
    for i in range(4):
        (xa, ya), (xb, yb) = points[i], points[(i + 1) % 4]
        length = max(math.hypot(xb - xa, yb - ya), 1e-9)
        outward.append(((yb - ya) / length, -(xb - xa) / length))      # clockwise order, y down
    grown = []
    for i in range(4):
        (ax, ay), (bx, by) = outward[i - 1], outward[i]                # the sides meeting at i
        factor = distance / max(1.0 + ax * bx + ay * by, 1e-3)
        grown.append((points[i][0] + factor * (ax + bx), points[i][1] + factor * (ay + by)))
    return np.array(grown, dtype=np.float32)


def order_corners(quad: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Order four (x, y) points clockwise from the card's top-left, portrait: a short side first.

    Of the two short sides, the one higher in the image is the top (a card upside down reads the
    same to the card reader, which is trained on both ways round).
    """
    points = np.asarray(quad, dtype=np.float32).reshape(4, 2)
    xs, ys = points[:, 0].tolist(), points[:, 1].tolist()
    center_x, center_y = sum(xs) / 4, sum(ys) / 4
    # Clockwise on screen (y points down).
    order = sorted(range(4), key=lambda i: math.atan2(ys[i] - center_y, xs[i] - center_x))
    xs, ys = [xs[i] for i in order], [ys[i] for i in order]
    sides = [math.hypot(xs[(i + 1) % 4] - xs[i], ys[(i + 1) % 4] - ys[i]) for i in range(4)]
    # Start on a short side: side i runs from point i to point i+1.
    start = 0 if sides[0] + sides[2] <= sides[1] + sides[3] else 1
    if ys[(start + 2) % 4] + ys[(start + 3) % 4] < ys[start] + ys[(start + 1) % 4]:
        start += 2  # the other short side is the higher one
    return points[[order[(i + start) % 4] for i in range(4)]]


def aspect(corners: npt.NDArray[np.float32]) -> float:
    """Mean long side over mean short side of ordered corners (a flat SET card: 1.56)."""
    sides = np.sqrt(((corners[NEXT] - corners) ** 2).sum(axis=1))
    short = (sides[0] + sides[2]) / 2
    long = (sides[1] + sides[3]) / 2
    return float(long / max(short, 1e-6))


def short_side(corners: npt.NDArray[np.float32]) -> float:
    """The mean length of the shorter pair of opposite sides, in pixels."""
    sides = np.sqrt(((corners[NEXT] - corners) ** 2).sum(axis=1))
    return float(min(sides[0] + sides[2], sides[1] + sides[3]) / 2)


def quad_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two convex quads (4, 2) (x, y), rasterised at whole pixels
    (as bench/bench_scenes.py scores detections)."""
    a = np.asarray(a, np.float64).reshape(4, 2)
    b = np.asarray(b, np.float64).reshape(4, 2)
    x, y, w, h = cv2.boundingRect(np.vstack([a, b]).astype(np.float32))
    canvas_a = np.zeros((h + 2, w + 2), np.uint8)
    canvas_b = np.zeros_like(canvas_a)
    cv2.fillConvexPoly(canvas_a, np.round(a - [x, y]).astype(np.int32), 1)
    cv2.fillConvexPoly(canvas_b, np.round(b - [x, y]).astype(np.int32), 1)
    union = np.count_nonzero(canvas_a | canvas_b)
    return np.count_nonzero(canvas_a & canvas_b) / union if union else 0.0
