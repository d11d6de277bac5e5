"""Geometry of card outlines: four corners, fitted to a blob's outline, ordered, grown.

Corners are (x, y) image pixels, float32 (4, 2), clockwise on screen (y points down) from the
card's top-left with the card read portrait: the first side is a short one.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

# Corner (or side) indices one step on and one step back round a quad.
NEXT = np.array([1, 2, 3, 0])
PREVIOUS = np.array([3, 0, 1, 2])


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
    lengths = np.sqrt((sides ** 2).sum(axis=1))
    if lengths.min() < 4:
        return None
    directions = sides / lengths[:, None]
    normals = np.stack([-directions[:, 1], directions[:, 0]], axis=1)
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
    safe = np.maximum(counts, 1.0)
    x, y = points[:, 0], points[:, 1]
    mean_x, mean_y = near @ x / safe, near @ y / safe
    xx = near @ (x * x) / safe - mean_x ** 2
    yy = near @ (y * y) / safe - mean_y ** 2
    xy = near @ (x * y) / safe - mean_x * mean_y
    angle = 0.5 * np.arctan2(2 * xy, xx - yy)
    anchors = np.where(refit[:, None], np.stack([mean_x, mean_y], axis=1), rough)
    line_directions = np.where(refit[:, None], np.stack([np.cos(angle), np.sin(angle)], axis=1),
                               directions)
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
    points = order_corners(quad).astype(np.float64)
    sides = points[NEXT] - points                                     # side i: point i -> i+1
    directions = sides / np.maximum(np.sqrt((sides ** 2).sum(axis=1)), 1e-9)[:, None]
    outward = np.stack([directions[:, 1], -directions[:, 0]], axis=1)  # clockwise order, y down
    n1, n2 = outward[PREVIOUS], outward                               # the sides meeting at i
    denominator = np.maximum(1.0 + (n1 * n2).sum(axis=1), 1e-3)
    return (points + distance * (n1 + n2) / denominator[:, None]).astype(np.float32)


def order_corners(quad: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Order four (x, y) points clockwise from the card's top-left, portrait: a short side first.

    Of the two short sides, the one higher in the image is the top (a card upside down reads the
    same to the card reader, which is trained on both ways round).
    """
    points = np.asarray(quad, dtype=np.float32).reshape(4, 2)
    center = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - center[1], points[:, 0] - center[0])
    points = points[np.argsort(angles)]  # clockwise on screen (y points down)
    sides = np.sqrt(((points[NEXT] - points) ** 2).sum(axis=1))
    # Start on a short side: side i runs from point i to point i+1.
    start = 0 if sides[0] + sides[2] <= sides[1] + sides[3] else 1
    top_mid = (points[start] + points[(start + 1) % 4]) / 2
    bottom_mid = (points[(start + 2) % 4] + points[(start + 3) % 4]) / 2
    if bottom_mid[1] < top_mid[1]:
        start += 2
    return points[(np.arange(4) + start) % 4]


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
