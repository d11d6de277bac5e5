"""Draw one SET card as a picture: the card face a camera would see, before any camera effects.

A card is drawn in portrait (short edges at top and bottom) with its 1-3 symbols stacked
vertically and centred, each symbol wider than tall, as on the real deck. Geometry and inks were
measured on the two real decks in ``../shared/data`` (symbol ~0.68 of the card width, ~0.33 tall,
~0.12 card widths between symbols, outline stroke ~0.014 wide, vertical stripes 0.0197 apart); a
`PrintStyle` holds those numbers so that print runs can be varied within realistic bounds.

Colours are handled as reflectance (float, 0..1 per BGR channel): the paper reflects ``paper``,
ink reflects ``ink * paper``. The scene multiplies by the light, so a dim warm scene darkens and
tints paper and ink together, as a real photo does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from core.cards import Card
from vision.canonical import CARD_ASPECT, CARD_WIDTH

FloatImage = npt.NDArray[np.float32]
Mask = npt.NDArray[np.float32]

# Ink reflectance relative to the paper (BGR), measured as median solid-fill colour divided by
# median paper colour on the real crops: set-photos deck (deep crimson, dark green, dark purple)
# and errcw deck (orange-red, teal-green, lighter purple).
_INKS_SET_PHOTOS = {
    "red": (0.04, 0.05, 0.98),
    "green": (0.21, 0.61, 0.02),
    "purple": (0.58, 0.09, 0.38),
}
_INKS_ERRCW = {
    "red": (0.16, 0.32, 1.00),
    "green": (0.44, 0.72, 0.03),
    "purple": (0.60, 0.19, 0.47),
}


# Size of each shape relative to the oval (width, height, gap between symbols), measured as the median ink bounding box
# of solid cards on both decks (they agree within 1%): the oval is 0.675 x 0.325 card widths,
# the squiggle 0.644 x 0.294, the diamond 0.662 x 0.319; symbols are stacked with an equal gap
# (~0.12 card widths) between them, not at an equal pitch.
_SHAPE_SIZE = {"oval": (1.0, 1.0, 1.0), "squiggle": (0.95, 0.97, 0.91), "diamond": (1.05, 1.05, 0.87)}


@dataclass(frozen=True)
class PrintStyle:
    """How one print run of the deck looks. Lengths are fractions of the card width.

    ``inks`` maps colour name -> BGR reflectance in 0..1 relative to the paper; ``paper`` is the
    paper's own BGR reflectance. ``stripe_angle`` is in degrees from vertical (0 = the stripes
    run across the symbol's long axis, as on both real decks).
    """

    paper: tuple[float, float, float] = (0.93, 0.93, 0.94)
    inks: dict[str, tuple[float, float, float]] = field(default_factory=lambda: dict(_INKS_SET_PHOTOS))
    symbol_width: float = 0.696
    symbol_height: float = 0.33
    symbol_gap: float = 0.122  # blank space between stacked symbols
    stroke: float = 0.014
    stripe_pitch: float = 0.0197
    stripe_width: float = 0.003
    stripe_angle: float = 0.0
    corner_radius: float = 0.065
    squiggle_phase: float = 0.0

    @staticmethod
    def standard() -> PrintStyle:
        """The set-photos deck: the default look."""
        return PrintStyle()

    @staticmethod
    def errcw() -> PrintStyle:
        """The errcw deck: brighter orange-red and teal-green, a little larger symbols."""
        return PrintStyle(paper=(0.95, 0.95, 0.96), inks=dict(_INKS_ERRCW), symbol_width=0.70,
                          stroke=0.015, stripe_pitch=0.0199, stripe_width=0.002)


def random_style(rng: np.random.Generator) -> PrintStyle:
    """A print style between and a little around the two measured decks.

    Inks are blended between the decks and jittered; geometry varies by a few percent. Stripes
    stay vertical and ~0.0197 card widths apart: both real decks measure the same (3.15 px on
    a canonical card); slanted stripes in board photos are aliasing, not print.
    """
    blend = rng.uniform(-0.15, 1.15)
    inks = {}
    for name in _INKS_SET_PHOTOS:
        a = np.array(_INKS_SET_PHOTOS[name])
        b = np.array(_INKS_ERRCW[name])
        ink = a + blend * (b - a) + rng.normal(0.0, 0.035, 3)
        inks[name] = tuple(float(v) for v in np.clip(ink, 0.0, 1.0))
    paper_tint = rng.normal(0.0, 0.012, 3)
    paper = tuple(float(v) for v in np.clip(rng.uniform(0.88, 0.97) + paper_tint, 0.8, 1.0))
    # Earlier versions drew a slant for some decks here; the draws are kept (unused) so that a
    # seed still gives the same scene as before.
    if rng.random() >= 0.75:
        rng.choice([-1, 1]), rng.uniform(15, 45)
    return PrintStyle(
        paper=paper,  # type: ignore[arg-type]
        inks=inks,  # type: ignore[arg-type]
        symbol_width=float(rng.uniform(0.67, 0.72)),
        symbol_height=float(rng.uniform(0.315, 0.345)),
        symbol_gap=float(rng.uniform(0.105, 0.14)),
        stroke=float(rng.uniform(0.011, 0.02)),
        stripe_pitch=float(rng.uniform(0.0185, 0.021)),
        stripe_width=float(rng.uniform(0.0021, 0.0041)),
        stripe_angle=float(rng.normal(0.0, 1.5)),
        corner_radius=float(rng.uniform(0.05, 0.08)),
        squiggle_phase=float(rng.normal(0.0, 0.04)),
    )


def _closed_spline(points: npt.NDArray[np.float64], samples_per_segment: int = 16) -> npt.NDArray[np.float64]:
    """A smooth closed Catmull-Rom curve through ``points`` (N, 2) -> (N * samples, 2)."""
    p = np.asarray(points, dtype=np.float64)
    t = np.linspace(0.0, 1.0, samples_per_segment, endpoint=False)[:, None]
    out = []
    n = len(p)
    for i in range(n):
        p0, p1, p2, p3 = p[i - 1], p[i], p[(i + 1) % n], p[(i + 2) % n]
        out.append(0.5 * ((2 * p1) + (-p0 + p2) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t ** 2
                          + (-p0 + 3 * p1 - 3 * p2 + p3) * t ** 3))
    return np.vstack(out)


@functools.lru_cache(maxsize=64)
def _squiggle_outline(phase: float) -> npt.NDArray[np.float64]:
    """The squiggle in a box x in [-1, 1], y in [-0.5, 0.5] (y down), traced on a real card.

    The points were traced clockwise from the left end on a 600 px wide scan of the errcw deck.
    ``phase`` moves the waist a little sideways to vary the print.
    """
    traced = np.array([
        (-0.975, 0.10), (-0.875, -0.25), (-0.675, -0.40), (-0.425, -0.44), (-0.10, -0.375),
        (0.15, -0.26), (0.35, -0.225), (0.60, -0.30), (0.825, -0.45), (0.95, -0.44),
        (1.00, -0.275), (0.95, -0.05), (0.80, 0.20), (0.60, 0.325), (0.35, 0.35), (0.10, 0.29),
        (-0.15, 0.235), (-0.40, 0.25), (-0.65, 0.35), (-0.80, 0.45), (-0.925, 0.40), (-0.975, 0.25),
    ])
    waist = np.abs(traced[:, 0]) < 0.5
    traced[waist, 0] += phase
    curve = _closed_spline(traced)
    # Normalise to exactly fill the box so that symbol_width / symbol_height mean what they say.
    lo, hi = curve.min(axis=0), curve.max(axis=0)
    return (curve - (lo + hi) / 2) / (hi - lo) * np.array([2.0, 1.0])


def _oval_outline() -> npt.NDArray[np.float64]:
    """A stadium (a rectangle with half-circle ends) in the box x in [-1, 1], y in [-0.5, 0.5]."""
    r = 0.5
    # In box units the ends are semicircles of radius 0.5 high; x and y scale differently later,
    # so build it in an aspect-free way: ends span 0.5 / (w/h) in x. Done in _symbol_polygon.
    angles = np.linspace(-np.pi / 2, np.pi / 2, 24)
    right = np.stack([np.cos(angles), np.sin(angles)], axis=1) * r
    left = -right
    return np.vstack([right, left])


def _symbol_polygon(shape: str, center: tuple[float, float], width: float, height: float,
                    phase: float) -> npt.NDArray[np.float64]:
    """The outline of one symbol in pixels (M, 2) (x, y), centred at ``center``."""
    cx, cy = center
    if shape == "diamond":
        pts = np.array([(-1.0, 0.0), (0.0, -0.5), (1.0, 0.0), (0.0, 0.5)])
        return pts * np.array([width / 2, height]) + np.array([cx, cy])
    if shape == "oval":
        ends = _oval_outline() * height  # semicircles of radius height / 2, in pixels
        shift = width / 2 - height / 2
        ends[:24, 0] += shift
        ends[24:, 0] -= shift
        return ends + np.array([cx, cy])
    if shape == "squiggle":
        return _squiggle_outline(round(phase, 3)) * np.array([width / 2, height]) + np.array([cx, cy])
    raise ValueError(f"shape must be oval, squiggle or diamond, got {shape!r}")


def _fixed(points: npt.NDArray[np.float64], shift: int) -> npt.NDArray[np.int32]:
    """Pixel coordinates to OpenCV fixed point (sub-pixel accurate polygons)."""
    return np.round(points * (1 << shift)).astype(np.int32).reshape(-1, 1, 2)


def card_face(card: Card, width: int, style: PrintStyle | None = None,
              supersample: int = 3) -> tuple[FloatImage, Mask]:
    """The card face as reflectance and the card's own shape.

    Returns ``(reflectance, alpha)``: reflectance float32 (H, W, 3) BGR in 0..1 and alpha float32
    (H, W) in 0..1 (0 outside the rounded corners), with H = round(width * CARD_ASPECT). The card's
    outer edge runs along the outer border of the array: pixel (0, 0) is the top-left pixel.
    """
    if width < 8:
        raise ValueError(f"width must be at least 8 pixels, got {width}")
    style = style or PrintStyle()
    height = int(round(width * CARD_ASPECT))
    s = max(1, int(supersample))
    big_w, big_h = width * s, height * s
    shift = 4

    def px(v: float) -> float:  # a length in card widths -> supersampled pixels
        return v * big_w

    # Card shape: a rounded rectangle.
    alpha = np.zeros((big_h, big_w), np.uint8)
    r = px(style.corner_radius)
    rect = np.array([(0, 0), (big_w, 0), (big_w, big_h), (0, big_h)], np.float64) - 0.5
    outline = _rounded_rect(rect, r)
    cv2.fillPoly(alpha, [_fixed(outline, shift)], 255, cv2.LINE_AA, shift)

    ink_mask = np.zeros((big_h, big_w), np.uint8)
    width_factor, height_factor, gap_factor = _SHAPE_SIZE[card.shape]
    sym_w = px(style.symbol_width * width_factor)
    sym_h = px(style.symbol_height * height_factor)
    pitch = sym_h + px(style.symbol_gap * gap_factor)
    offsets = (np.arange(card.count) - (card.count - 1) / 2) * pitch
    polys = [_symbol_polygon(card.shape, (big_w / 2 - 0.5, big_h / 2 - 0.5 + dy), sym_w, sym_h,
                             style.squiggle_phase) for dy in offsets]
    fixed = [_fixed(p, shift) for p in polys]
    stroke = max(1, int(round(px(style.stroke))))
    if card.shading == "solid":
        cv2.fillPoly(ink_mask, fixed, 255, cv2.LINE_AA, shift)
    else:
        if card.shading == "striped":
            inside = np.zeros_like(ink_mask)
            cv2.fillPoly(inside, fixed, 255, cv2.LINE_AA, shift)
            # Stripes only where the symbols are (a third of the card): the costly part.
            pts = np.vstack(polys)
            x0, y0 = np.maximum(np.floor(pts.min(0)).astype(int) - 2, 0)
            x1, y1 = np.ceil(pts.max(0)).astype(int) + 3
            box = (slice(y0, min(y1, big_h)), slice(x0, min(x1, big_w)))
            stripes = _stripes(box[1].stop - x0, box[0].stop - y0, px(style.stripe_pitch),
                               px(style.stripe_width), style.stripe_angle, origin=(x0, y0))
            ink_mask[box] = np.minimum(inside[box], stripes)
        cv2.polylines(ink_mask, fixed, True, 255, stroke, cv2.LINE_AA, shift)

    # Mix colours at the output size: the coverage masks average down exactly (INTER_AREA is a
    # box filter), and mixing is linear, so this equals mixing first at a fraction of the cost.
    if s > 1:
        ink_mask = cv2.resize(ink_mask, (width, height), interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(alpha, (width, height), interpolation=cv2.INTER_AREA)
    paper = np.array(style.paper, np.float32)
    ink = np.array(style.inks[card.color], np.float32) * paper
    cover = ink_mask.astype(np.float32)[..., None] * np.float32(1 / 255)
    face = paper + (ink - paper) * cover
    return face.astype(np.float32), alpha.astype(np.float32) * np.float32(1 / 255)


def _rounded_rect(rect: npt.NDArray[np.float64], radius: float) -> npt.NDArray[np.float64]:
    """Outline (M, 2) of the axis-aligned rectangle ``rect`` (4 corners TL, TR, BR, BL) with
    rounded corners of ``radius`` pixels."""
    (x0, y0), (x1, _), (_, y1) = rect[0], rect[1], rect[2]
    arc = np.linspace(0, np.pi / 2, 8)
    pieces = []
    for (cx, cy), start in (((x1 - radius, y0 + radius), -np.pi / 2), ((x1 - radius, y1 - radius), 0.0),
                            ((x0 + radius, y1 - radius), np.pi / 2), ((x0 + radius, y0 + radius), np.pi)):
        a = start + arc
        pieces.append(np.stack([cx + radius * np.cos(a), cy + radius * np.sin(a)], axis=1))
    return np.vstack(pieces)


def _stripes(width: int, height: int, pitch: float, line: float, angle_deg: float,
             origin: tuple[int, int] = (0, 0)) -> npt.NDArray[np.uint8]:
    """A uint8 (height, width) mask of parallel lines ``line`` px wide every ``pitch`` px.

    ``origin`` (x, y) is the mask's top-left in card pixels, so that pieces line up.
    """
    theta = np.deg2rad(angle_deg)
    xs = (np.arange(width, dtype=np.float32)[None, :] + origin[0]) * np.float32(np.cos(theta))
    ys = (np.arange(height, dtype=np.float32)[:, None] + origin[1]) * np.float32(np.sin(theta))
    u = xs + ys
    # Distance to the nearest line centre, turned into an anti-aliased coverage.
    d = np.abs(np.mod(u, np.float32(pitch)) - np.float32(pitch / 2))
    cover = np.clip(np.float32(line / 2 + 0.5) - d, 0.0, 1.0)
    return (cover * 255).astype(np.uint8)


def render_card(card: Card, width: int = CARD_WIDTH, rng: np.random.Generator | None = None,
                style: PrintStyle | None = None,
                background: tuple[int, int, int] = (40, 40, 40)) -> npt.NDArray[np.uint8]:
    """One card as a BGR uint8 image (round(width * 1.5625), width, 3), evenly lit, no noise.

    ``style`` fixes the print; otherwise ``rng`` picks a random realistic one; with neither the
    standard deck is drawn. The rounded corners show ``background`` (BGR). At the default width
    the result has the canonical shape (CARD_HEIGHT, CARD_WIDTH, 3).

    >>> render_card(Card.parse("2 red striped oval")).shape
    (250, 160, 3)
    """
    if not isinstance(card, Card):
        raise TypeError(f"card must be a core.Card, got {type(card).__name__}")
    if style is None:
        style = random_style(rng) if rng is not None else PrintStyle()
    face, alpha = card_face(card, width, style)
    bg = np.array(background, np.float32)
    out = face * 255.0 * alpha[..., None] + bg * (1.0 - alpha[..., None])
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)

