"""Things that lie on a table besides cards: a hand, a SET card box, a phone, a pen, a cable.

Each prop is drawn onto a scene's float32 reflectance canvas (H, W, 3) in place, and marks the
pixels it covers in an ``owner`` map (H, W) int16 with `PROP_OWNER`, so the scene can tell how much
of each card stays visible. Sizes are given in pixels of one card's on-screen width (``card_px``)
so props keep their real proportions at any image size.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from core.cards import Card
from vision.render import PrintStyle, card_face

FloatImage = npt.NDArray[np.float32]
PROP_OWNER = -2
"""The ``owner`` value for pixels covered by a prop (cards are 0.., the bare table -1)."""

PROP_KINDS = ("hand", "box", "phone", "pen", "cable")


def _paint(canvas: FloatImage, owner: npt.NDArray[np.int16], mask: npt.NDArray[np.float32],
           colour: FloatImage | npt.NDArray[np.float32]) -> None:
    """Alpha-blend ``colour`` (3,) or (H, W, 3) into ``canvas`` where ``mask`` (H, W) 0..1."""
    m = mask[..., None]
    canvas *= 1.0 - m
    canvas += m * colour
    owner[mask > 0.5] = PROP_OWNER


def skin_colour(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """A skin reflectance (BGR) from light to dark tones."""
    light = np.array([0.55, 0.65, 0.85], np.float32)
    dark = np.array([0.18, 0.25, 0.38], np.float32)
    t = rng.uniform(0, 1)
    return light + (dark - light) * t


def hand_polygons(tip: npt.ArrayLike, direction: float, card_px: float,
                  spread: float = 0.3) -> tuple[list[npt.NDArray[np.float64]], list[tuple[npt.NDArray[np.float64], float]]]:
    """A hand reaching towards ``tip`` (x, y) from ``direction`` (radians: where the arm comes from).

    Returns (palm and arm polygons, fingers as (2 points, thickness)). The hand is about 1.3 card
    widths across the palm, the arm runs off far past the image edge.
    """
    t = np.asarray(tip, np.float64)
    d = np.array([np.cos(direction), np.sin(direction)])  # towards the arm
    n = np.array([-d[1], d[0]])
    palm_c = t + d * card_px * 1.35
    palm_w, palm_l = card_px * 1.25, card_px * 1.3
    palm = np.array([palm_c + n * palm_w / 2 - d * palm_l / 2, palm_c - n * palm_w / 2 - d * palm_l / 2,
                     palm_c - n * palm_w * 0.42 + d * palm_l / 2, palm_c + n * palm_w * 0.42 + d * palm_l / 2])
    arm_w = card_px * 0.95
    arm = np.array([palm_c + n * arm_w / 2, palm_c - n * arm_w / 2,
                    palm_c - n * arm_w / 2 + d * card_px * 30, palm_c + n * arm_w / 2 + d * card_px * 30])
    fingers = []
    base = palm_c - d * palm_l / 2
    lengths = (0.75, 0.95, 1.0, 0.9)
    for i, length in enumerate(lengths):
        offset = (i - 1.5) / 1.5 * palm_w * 0.36
        fan = (i - 1.5) * spread * 0.15
        fd = -(d * np.cos(fan) + n * np.sin(fan))
        start = base + n * offset
        fingers.append((np.array([start, start + fd * card_px * length]), card_px * 0.24))
    thumb_start = palm_c + n * palm_w * 0.45
    thumb_dir = -(d * 0.5) + n * 0.85
    fingers.append((np.array([thumb_start, thumb_start + thumb_dir * card_px * 0.75]), card_px * 0.28))
    return [palm, arm], fingers


def draw_hand(canvas: FloatImage, owner: npt.NDArray[np.int16], tip: npt.ArrayLike, direction: float,
              card_px: float, skin: npt.NDArray[np.float32], spread: float = 0.3) -> npt.NDArray[np.float64]:
    """Draw a hand (and forearm) reaching to ``tip``; returns its outline points (for a shadow)."""
    h, w = canvas.shape[:2]
    mask = np.zeros((h, w), np.float32)
    polys, fingers = hand_polygons(tip, direction, card_px, spread)
    for poly in polys:
        cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    points = [p for poly in polys for p in poly]
    for (a, b), thick in fingers:
        cv2.line(mask, (int(round(a[0] * 16)), int(round(a[1] * 16))), (int(round(b[0] * 16)), int(round(b[1] * 16))),
                 1.0, max(1, int(round(thick))), cv2.LINE_AA, 4)
        points += [a, b]
    mask = cv2.GaussianBlur(mask, (0, 0), max(0.6, card_px * 0.02))
    # Shading across the hand so it is not a flat sticker.
    shade = 0.85 + 0.15 * cv2.GaussianBlur(mask, (0, 0), max(1.0, card_px * 0.3))
    _paint(canvas, owner, mask, skin[None, None, :] * shade[..., None])
    return cv2.convexHull(np.array(points, np.float32)).reshape(-1, 2).astype(np.float64)


def _rotated_rect(center: npt.ArrayLike, size: tuple[float, float], angle: float) -> npt.NDArray[np.float64]:
    """Corners (4, 2) of a rectangle of ``size`` (w, h) turned by ``angle`` radians about ``center``."""
    c = np.asarray(center, np.float64)
    w, h = size
    d = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-d[1], d[0]])
    return np.array([c - d * w / 2 - n * h / 2, c + d * w / 2 - n * h / 2,
                     c + d * w / 2 + n * h / 2, c - d * w / 2 + n * h / 2])


def draw_box(canvas: FloatImage, owner: npt.NDArray[np.int16], center: npt.ArrayLike, angle: float,
             card_px: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """A SET card box lid seen from above: a coloured box with a white panel and SET symbols."""
    h, w = canvas.shape[:2]
    size = (card_px * 1.45, card_px * 2.2)
    quad = _rotated_rect(center, size, angle)
    face_h, face_w = 160, 106
    art8 = np.empty((face_h, face_w, 3), np.uint8)
    art8[:] = [(115, 30, 90), (25, 90, 190), (140, 140, 25)][rng.integers(3)]
    cv2.rectangle(art8, (12, 40), (face_w - 12, face_h - 40), (235, 235, 235), -1)
    cv2.putText(art8, "SET", (18, 30), cv2.FONT_HERSHEY_DUPLEX, 0.9, (245, 245, 245), 2, cv2.LINE_AA)
    art = art8.astype(np.float32) / 255.0
    card = Card.from_index(int(rng.integers(81)))
    symbol, _ = card_face(card, 60, PrintStyle.standard())
    sh, sw = min(70, symbol.shape[0]), 60
    art[45:45 + sh, 23:23 + sw] = symbol[(symbol.shape[0] - sh) // 2:(symbol.shape[0] - sh) // 2 + sh]
    src = np.array([[0, 0], [face_w, 0], [face_w, face_h], [0, face_h]], np.float32) - 0.5
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    warped = cv2.warpPerspective(art, m, (w, h), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.ones((face_h, face_w), np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    _paint(canvas, owner, mask, warped / np.maximum(mask[..., None], 1e-3))
    return quad


def draw_phone(canvas: FloatImage, owner: npt.NDArray[np.int16], center: npt.ArrayLike, angle: float,
               card_px: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """A phone face up: a near-black slab with a rounded outline and a faint screen reflection."""
    h, w = canvas.shape[:2]
    quad = _rotated_rect(center, (card_px * 1.25, card_px * 2.6), angle)
    mask = np.zeros((h, w), np.float32)
    cv2.fillConvexPoly(mask, np.round(quad * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (0, 0), max(0.6, card_px * 0.03))
    body = np.array([0.05, 0.05, 0.06], np.float32) + rng.uniform(0, 0.05)
    _paint(canvas, owner, mask, body)
    screen = _rotated_rect(center, (card_px * 1.1, card_px * 2.35), angle)
    smask = np.zeros((h, w), np.float32)
    cv2.fillConvexPoly(smask, np.round(screen * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    canvas += (smask * rng.uniform(0.0, 0.12))[..., None]
    return quad


def draw_pen(canvas: FloatImage, owner: npt.NDArray[np.int16], center: npt.ArrayLike, angle: float,
             card_px: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """A pen or pencil: a long thin capsule in a plain colour."""
    h, w = canvas.shape[:2]
    c = np.asarray(center, np.float64)
    d = np.array([np.cos(angle), np.sin(angle)]) * card_px * 1.2
    a, b = c - d, c + d
    mask = np.zeros((h, w), np.float32)
    cv2.line(mask, tuple(int(v) for v in np.round(a * 16)), tuple(int(v) for v in np.round(b * 16)), 1.0,
             max(2, int(card_px * 0.09)), cv2.LINE_AA, 4)
    colour = np.array([(0.6, 0.2, 0.1), (0.1, 0.1, 0.1), (0.1, 0.7, 0.9), (0.85, 0.85, 0.85)][rng.integers(4)], np.float32)
    _paint(canvas, owner, mask, colour)
    return np.array([a, b])


def draw_cable(canvas: FloatImage, owner: npt.NDArray[np.int16], rng: np.random.Generator,
               card_px: float) -> npt.NDArray[np.float64]:
    """A charging cable: a smooth curve across the image, dark or white."""
    h, w = canvas.shape[:2]
    start = np.array([rng.uniform(0, w), 0.0]) if rng.random() < 0.5 else np.array([0.0, rng.uniform(0, h)])
    end = np.array([rng.uniform(0, w), h]) if rng.random() < 0.5 else np.array([w, rng.uniform(0, h)])
    mid = np.array([rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h])
    t = np.linspace(0, 1, 60)[:, None]
    curve = (1 - t) ** 2 * start + 2 * (1 - t) * t * mid + t ** 2 * end
    mask = np.zeros((h, w), np.float32)
    cv2.polylines(mask, [np.round(curve * 16).astype(np.int32).reshape(-1, 1, 2)], False, 1.0,
                  max(2, int(card_px * 0.05)), cv2.LINE_AA, 4)
    colour = np.array([0.06, 0.06, 0.06] if rng.random() < 0.6 else [0.9, 0.9, 0.9], np.float32)
    _paint(canvas, owner, mask, colour)
    return curve
