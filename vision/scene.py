"""Generated table photos with exact ground truth.

`generate_scene(seed, n_cards)` lays SET cards out on a table, looks at it through a tilted
camera under uneven light, adds props and camera noise, and returns the photo with the truth:
each card's label, its four corners in image pixels and how much of it is visible. Everything
follows from ``seed``, so a scene can be made again exactly.

How a scene is made:
1. Layout (`layout_cards`): card rectangles on the table plane, in millimetres (a card is
   57 x 89 mm), as a grid, loose rows, touching rows or scattered, each card turned a little.
2. Camera (`camera_homography`): a pinhole camera tilted up to ~50 degrees and rolled a little,
   zoomed so the layout fills the frame; a 3x3 homography maps table millimetres to pixels.
3. Drawing (`draw_scene`): the table texture and each card face are warped straight from their
   own pixels to the image with one homography (no double resampling); cards cast soft shadows;
   props (hand, box, phone, pen, cable) go on top; `photo_effects` adds light and the camera.

Ground truth corners are (x, y) pixels of the card's outer edge (pixel centres at integers),
clockwise from the card's top-left in portrait orientation, the same order `warp_card` expects:
``warp_card(image, corners)`` gives back the card face.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from core.cards import Card, find_sets, full_deck
from vision import photo_effects, props
from vision.canonical import warp_card
from vision.render import PrintStyle, card_face, random_style
from vision.tables import TABLES, make_table

CARD_MM = (57.0, 89.0)
"""A real SET card, width x height in millimetres (portrait)."""

LAYOUTS = ("grid", "rows", "touching", "scattered")
DEALS = ("any", "sets", "no-set")
FloatImage = npt.NDArray[np.float32]
Quad = npt.NDArray[np.float64]  # (4, 2) (x, y), clockwise from the portrait top-left


@dataclass
class PlacedCard:
    """One card on the table plane: its value and its corners in millimetres (TL, TR, BR, BL)."""

    card: Card
    plane: Quad
    style: PrintStyle
    lift: float = 0.0  # drawn above cards with lower lift (a card lying on another)


@dataclass
class SceneSpec:
    """Everything needed to draw a scene; `draw_scene` turns it into pixels.

    Kept apart from the drawing so that a video can change a few cards or move a hand between
    frames while the table, light and camera stay put.
    """

    width: int
    height: int
    table: str
    layout: str
    cards: list[PlacedCard]
    homography: npt.NDArray[np.float64]  # table mm -> image pixels
    tilt: float
    seed: int
    effects: float = 1.0  # 0 = clean: even light, no noise, no blur, no JPEG, no props
    props: list[dict[str, Any]] = field(default_factory=list)
    table_seed: int = 0
    light_seed: int = 0
    camera_seed: int = 0
    extent: float = 1.0  # > 1: the image is a crop of a scene this many times larger (light, blur)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Things that stay the same between video frames (table layer, card faces, light)."""

    @property
    def card_px(self) -> float:
        """The typical on-screen width of a card, in pixels."""
        if not self.cards:
            return 0.1 * min(self.width, self.height)
        widths = [np.linalg.norm(q[1] - q[0]) for q in (self.to_image(c.plane) for c in self.cards)]
        return float(np.median(widths))

    def to_image(self, points: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Table millimetres (N, 2) -> image pixels (N, 2) (x, y)."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.homography).reshape(-1, 2)


# ---------------------------------------------------------------- choosing cards

def deal_cards(n_cards: int, rng: np.random.Generator, deal: str = "any") -> list[Card]:
    """``n_cards`` distinct cards. ``deal``: "any", "sets" (at least one SET) or "no-set" (none).

    :raises ValueError: for an impossible request (more than 81 cards, or "no-set" with more than
        20 cards: 20 is the largest board without a SET).
    """
    if not 0 <= n_cards <= 81:
        raise ValueError(f"n_cards must be 0..81, got {n_cards}")
    if deal not in DEALS:
        raise ValueError(f"deal must be one of {', '.join(DEALS)}, got {deal!r}")
    deck = full_deck()
    if deal == "no-set":
        if n_cards > 20:
            raise ValueError(f"no board of {n_cards} cards is without a SET (20 is the most)")
        return _deal_without_set(n_cards, rng, deck)
    if deal == "sets" and n_cards < 3:
        raise ValueError("a board with a SET needs at least 3 cards")
    for _ in range(1000):
        picked = [deck[i] for i in rng.choice(81, size=n_cards, replace=False)]
        if deal == "any" or find_sets(picked):
            return picked
    raise RuntimeError("could not deal a board with a SET")  # pragma: no cover - astronomically rare


def _deal_without_set(n_cards: int, rng: np.random.Generator, deck: list[Card]) -> list[Card]:
    """Greedy random cap set: add cards that complete no SET; restart when stuck."""
    for _ in range(2000):
        order = rng.permutation(81)
        chosen: list[Card] = []
        for i in order:
            card = deck[i]
            if not find_sets(chosen + [card]):
                chosen.append(card)
                if len(chosen) == n_cards:
                    return chosen
    raise RuntimeError(f"could not deal {n_cards} cards without a SET")  # pragma: no cover


# ---------------------------------------------------------------- layout on the table

def _card_quad(center: npt.ArrayLike, angle: float) -> Quad:
    """Corners (TL, TR, BR, BL) in mm of a portrait card turned by ``angle`` radians."""
    w, h = CARD_MM
    local = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
    c, s = np.cos(angle), np.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    return local @ rot.T + np.asarray(center, np.float64)


def _grid_shape(n_cards: int, rng: np.random.Generator) -> tuple[int, int]:
    """Rows and columns for ``n_cards``: 3 rows as on a real table, 4 for large boards."""
    if n_cards <= 4:
        return 1, n_cards
    rows = 3 if n_cards <= 15 or rng.random() < 0.5 else 4
    if n_cards in (6, 8) and rng.random() < 0.5:
        rows = 2
    return rows, int(np.ceil(n_cards / rows))


def layout_cards(cards: list[Card], layout: str, rng: np.random.Generator,
                 styles: list[PrintStyle], overlap: bool = False) -> list[PlacedCard]:
    """Place ``cards`` on the table plane (mm), in reading order for grids and rows.

    ``layout``: "grid" (neat rows, small jitter), "rows" (loose rows, cards turned up to ~15
    degrees), "touching" (a grid with no gaps: cards touch) or "scattered" (anywhere, any angle,
    not overlapping). With ``overlap`` one card is slid partly over a neighbour.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    n = len(cards)
    w, h = CARD_MM
    # Whole-layout orientation: portrait cards, landscape cards (the set-photos boards), or any.
    base = float(rng.choice([0.0, np.pi / 2, np.pi, -np.pi / 2]))
    flips = rng.random(n) < 0.5  # a card may lie upside down: a half turn
    placed: list[PlacedCard] = []
    if layout == "scattered":
        radius = np.sqrt(n) * 75.0 + 40.0
        for i, card in enumerate(cards):
            for _ in range(300):
                center = rng.uniform(-radius, radius, 2) * np.array([1.2, 0.9])
                quad = _card_quad(center, rng.uniform(0, 2 * np.pi))
                if all(_overlap_area(quad, p.plane) == 0 for p in placed):
                    break
                radius *= 1.01
            placed.append(PlacedCard(card, quad, styles[i]))
        return placed

    rows, cols = _grid_shape(n, rng)
    jitter_pos, jitter_rot = {"grid": (2.0, 3.0), "rows": (6.0, 14.0), "touching": (0.0, 0.0)}[layout]
    gap_x = 0.0 if layout == "touching" else rng.uniform(5.0, 25.0)
    gap_y = 0.0 if layout == "touching" else rng.uniform(5.0, 25.0)
    landscape = abs(np.sin(base)) > 0.5
    cell_w, cell_h = (h, w) if landscape else (w, h)
    # Columns are filled top to bottom for landscape grids so that reading order stays natural.
    for i, card in enumerate(cards):
        r, c = divmod(i, cols)
        center = np.array([(c - (cols - 1) / 2) * (cell_w + gap_x), (r - (rows - 1) / 2) * (cell_h + gap_y)])
        if layout == "touching":
            center += np.array([c * 0.25, r * 0.25])  # keep hair-line gaps so cards touch, not overlap
        center += rng.normal(0.0, jitter_pos, 2)
        angle = base + np.deg2rad(rng.normal(0.0, jitter_rot / 2)) + (np.pi if flips[i] else 0.0)
        placed.append(PlacedCard(card, _card_quad(center, angle), styles[i]))
    if layout != "touching":
        _separate(placed)
    if overlap and n >= 2:
        _slide_over(placed, rng)
    return placed


def _overlap_area(a: Quad, b: Quad) -> float:
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return float(area)


def _separate(placed: list[PlacedCard], iterations: int = 20) -> None:
    """Push apart cards that jitter made overlap (loose rows), keeping their angles."""
    for _ in range(iterations):
        moved = False
        for i in range(len(placed)):
            for j in range(i + 1, len(placed)):
                if _overlap_area(placed[i].plane, placed[j].plane) > 0:
                    ci, cj = placed[i].plane.mean(0), placed[j].plane.mean(0)
                    d = ci - cj
                    d = d / (np.linalg.norm(d) + 1e-9) * 1.5
                    placed[i].plane = placed[i].plane + d
                    placed[j].plane = placed[j].plane - d
                    moved = True
        if not moved:
            return


def _slide_over(placed: list[PlacedCard], rng: np.random.Generator) -> None:
    """Move one card so that it covers 10-35% of a neighbour, and lift it above the others."""
    i = int(rng.integers(len(placed)))
    ci = placed[i].plane.mean(0)
    dists = np.array([np.linalg.norm(p.plane.mean(0) - ci) if j != i else np.inf for j, p in enumerate(placed)])
    j = int(np.argmin(dists))
    target = placed[j].plane.mean(0)
    start = placed[i].plane.copy()
    for t in np.linspace(0, 1, 60):
        moved = start + (target - ci) * t * 0.8
        frac = _overlap_area(moved, placed[j].plane) / (CARD_MM[0] * CARD_MM[1])
        if frac >= rng.uniform(0.1, 0.35):
            break
    placed[i].plane = moved
    placed[i].lift = 1.0


# ---------------------------------------------------------------- camera

def camera_homography(quads: list[Quad], size: tuple[int, int], rng: np.random.Generator, *,
                      tilt: float, fill: float, roll: float = 0.0,
                      shift: tuple[float, float] = (0.0, 0.0)) -> npt.NDArray[np.float64]:
    """A 3x3 homography from table mm to image pixels for a camera tilted by ``tilt`` degrees.

    The camera looks at the layout centre with a ~55-70 degree field of view, far side at the top
    of the image; it is rolled by ``roll`` degrees; then the picture is scaled so that the layout's
    bounding box fills ``fill`` of the frame (> 1 cuts cards at the edges), and moved by ``shift``
    (fractions of the frame size).
    """
    w, h = size
    pts = np.vstack(quads) if quads else np.zeros((1, 2))
    center = (pts.min(0) + pts.max(0)) / 2
    radius = max(float(np.linalg.norm(pts - center, axis=1).max()), 60.0)
    fov = np.deg2rad(rng.uniform(55, 70))
    distance = radius / np.tan(fov / 2) * rng.uniform(1.0, 1.5)
    t = np.deg2rad(tilt)
    to_center = np.array([[1, 0, -center[0]], [0, 1, -center[1]], [0, 0, 1]], np.float64)
    # Plane point (X, Y, 0) seen by a camera at distance D tilted about its x axis:
    # x = X, y = Y cos t, z = D - Y sin t  (negative Y, the top, is farther away).
    project = np.array([[1, 0, 0], [0, np.cos(t), 0], [0, -np.sin(t), distance]], np.float64)
    r = np.deg2rad(roll)
    rotate = np.array([[np.cos(r), -np.sin(r), 0], [np.sin(r), np.cos(r), 0], [0, 0, 1]], np.float64)
    homography = rotate @ project @ to_center
    img = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), homography).reshape(-1, 2)
    lo, hi = img.min(0), img.max(0)
    scale = fill * min(w / (hi[0] - lo[0]), h / (hi[1] - lo[1]))
    mid = (lo + hi) / 2
    fit = np.array([[scale, 0, w / 2 - 0.5 - scale * mid[0] + shift[0] * w],
                    [0, scale, h / 2 - 0.5 - scale * mid[1] + shift[1] * h], [0, 0, 1]], np.float64)
    return fit @ homography


# ---------------------------------------------------------------- building and drawing

def build_scene(seed: int, n_cards: int, size: tuple[int, int] = (960, 720), *, table: str | None = None,
                layout: str | None = None, cards: list[Card] | None = None, deal: str = "any",
                tilt: float | None = None, partial: bool | None = None, overlap: bool | None = None,
                effects: float = 1.0, props_allowed: bool | None = None,
                fill: float | None = None) -> SceneSpec:
    """Choose everything about a scene from ``seed`` (see `generate_scene` for the arguments)."""
    width, height = _check_size(size)
    if cards is not None and len(cards) != n_cards:
        raise ValueError(f"got {len(cards)} cards but n_cards={n_cards}")
    if table is not None and table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(TABLES)}, got {table!r}")
    rng = np.random.default_rng(seed)
    chosen_cards = list(cards) if cards is not None else deal_cards(n_cards, rng, deal)
    table = table or str(rng.choice(list(TABLES), p=_TABLE_WEIGHTS))
    if layout is None:
        layout = str(rng.choice(LAYOUTS, p=[0.45, 0.3, 0.1, 0.15])) if n_cards > 1 else "grid"
    if tilt is None:
        tilt = float(rng.choice([rng.uniform(0, 15), rng.uniform(15, 35), rng.uniform(35, 50)], p=[0.5, 0.35, 0.15]))
    if not 0.0 <= tilt <= 70.0:
        raise ValueError(f"tilt must be 0..70 degrees, got {tilt}")
    if partial is None:
        partial = bool(rng.random() < 0.15 * effects)
    if overlap is None:
        overlap = bool(rng.random() < 0.08 * effects)
    deck_style = random_style(rng) if effects > 0 else PrintStyle.standard()
    styles = [deck_style] * n_cards  # one deck per table
    placed = layout_cards(chosen_cards, layout, rng, styles, overlap=overlap)
    if fill is None:
        fill = rng.uniform(1.08, 1.3) if partial else rng.uniform(0.6, 0.92)
    shift = tuple(rng.uniform(-0.12, 0.12, 2)) if partial else tuple(rng.uniform(-0.04, 0.04, 2))
    roll = float(rng.normal(0, 4)) if effects > 0 else 0.0
    # An empty table is framed as if a game's twelve cards lay on it, and seen at that scale.
    framed = placed or layout_cards(deal_cards(12, rng), "grid", rng, [deck_style] * 12)
    homography = camera_homography([p.plane for p in framed], (width, height), rng, tilt=tilt,
                                   fill=fill, roll=roll, shift=shift)  # type: ignore[arg-type]
    spec = SceneSpec(width=width, height=height, table=table, layout=layout, cards=placed,
                     homography=homography, tilt=tilt, seed=seed, effects=effects,
                     table_seed=int(rng.integers(2**31)), light_seed=int(rng.integers(2**31)),
                     camera_seed=int(rng.integers(2**31)))
    if props_allowed is None:
        props_allowed = effects > 0
    if props_allowed:
        spec.props = _choose_props(spec, rng)
    return spec


# How often each table of TABLES is drawn (in its order): light tables are the hard case, so
# white, grey and light wood are well represented. Sums to 1.
_TABLE_WEIGHTS = np.array([0.14, 0.16, 0.14, 0.1, 0.12, 0.09, 0.08, 0.07, 0.1])


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    try:
        width, height = int(size[0]), int(size[1])
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"size must be (width, height), got {size!r}") from None
    if not (64 <= width <= 8000 and 64 <= height <= 8000):
        raise ValueError(f"size must be 64..8000 pixels each way, got {width}x{height}")
    return width, height


def _choose_props(spec: SceneSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Pick 0-3 props and where they lie: box, phone and pen beside the cards; hand and cable may
    cross them."""
    chosen: list[dict[str, Any]] = []
    card_quads = [spec.to_image(c.plane) for c in spec.cards]
    px = spec.card_px
    for kind in props.PROP_KINDS:
        if rng.random() > {"hand": 0.15, "box": 0.12, "phone": 0.12, "pen": 0.15, "cable": 0.1}[kind]:
            continue
        angle = float(rng.uniform(0, 2 * np.pi))
        if kind == "hand":
            target = card_quads[int(rng.integers(len(card_quads)))].mean(0) if card_quads else \
                np.array([spec.width / 2, spec.height / 2])
            tip = target + rng.normal(0, px * 0.3, 2)
            chosen.append({"kind": kind, "tip": tip.tolist(), "direction": _edge_direction(tip, spec, rng),
                           "skin": props.skin_colour(rng).tolist()})
            continue
        if kind == "cable":
            chosen.append({"kind": kind, "seed": int(rng.integers(2**31))})
            continue
        # Beside the cards: try spots until one clears every card.
        for _ in range(40):
            center = rng.uniform([0, 0], [spec.width, spec.height])
            quad = props._rotated_rect(center, (px * 1.5, px * 2.7), angle)
            if all(_overlap_area(quad, q) == 0 for q in card_quads):
                chosen.append({"kind": kind, "center": center.tolist(), "angle": angle,
                               "seed": int(rng.integers(2**31))})
                break
    return chosen


def _edge_direction(tip: npt.NDArray[np.float64], spec: SceneSpec, rng: np.random.Generator) -> float:
    """The direction (radians) from ``tip`` towards the nearest image edge, where an arm comes from."""
    x, y = tip
    options = [(spec.height - y, np.pi / 2), (x, np.pi), (spec.width - x, 0.0), (y * 1.5, -np.pi / 2)]
    _, direction = min(options)
    return float(direction + rng.normal(0, 0.3))


def draw_scene(spec: SceneSpec, *, frame_seed: int | None = None, hand: dict[str, Any] | None = None,
               extra_cards: list[PlacedCard] | None = None) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
    """Render ``spec`` to a BGR uint8 image (height, width, 3) and its truth dict.

    ``extra_cards`` are drawn last (cards held by a hand in a video, marked ``in_hand``), and
    ``hand`` is a hand prop drawn above them. ``frame_seed`` varies the sensor noise per frame.
    """
    w, h = spec.width, spec.height
    if "table" not in spec.cache:
        spec.cache["table"] = _table_layer(spec)
    canvas = spec.cache["table"].copy()
    owner = np.full((h, w), -1, np.int16)
    all_cards = sorted(enumerate(spec.cards), key=lambda item: item[1].lift)
    in_hand_start = len(spec.cards)
    if extra_cards:
        all_cards += [(in_hand_start + k, c) for k, c in enumerate(extra_cards)]
    # Cards are 0.2-0.3 mm thick: a soft contact shadow around each card lying on the table.
    if spec.effects > 0:
        key = ("contact", tuple(tuple(np.round(c.plane[0], 2)) for c in spec.cards))
        if key not in spec.cache:
            spec.cache = {k: v for k, v in spec.cache.items() if k[0] != "contact"}
            spec.cache[key] = _contact_shadow(spec)
        canvas *= spec.cache[key]
    quads = {}
    for index, placed in all_cards:
        quads[index] = _draw_card(canvas, owner, index, placed, spec)
    shadows = []
    for prop in spec.props + ([hand] if hand else []):
        outline = _draw_prop(canvas, owner, prop, spec)
        if prop["kind"] in ("hand", "box", "phone") and outline is not None:
            shadows.append(outline + np.array([spec.card_px * 0.15, spec.card_px * 0.25]))
    if spec.effects > 0:
        if "light" not in spec.cache:
            light_rng = np.random.default_rng(spec.light_seed)
            spec.cache["light"] = photo_effects.random_light(h, w, light_rng, strength=spec.effects,
                                                             extent=spec.extent)
        light = spec.cache["light"]
        if shadows:  # props shade the table near them; drawn as soft darkening
            small = photo_effects.soft_mask(shadows, h, w, spec.card_px * 0.2)
            mask = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
            light = photo_effects.Light(gain=light.gain * (1 - 0.35 * mask)[..., None], glare=light.glare)
        radiance = light.apply(canvas)
        camera_rng = np.random.default_rng(spec.camera_seed)
        noise_rng = np.random.default_rng(frame_seed) if frame_seed is not None else None
        image = photo_effects.camera_effects(radiance, camera_rng, strength=spec.effects,
                                             jpeg=frame_seed is None, noise_rng=noise_rng,
                                             extent=spec.extent)
    else:
        image = np.clip(canvas * 255.0 + 0.5, 0, 255).astype(np.uint8)
    truth = _truth(spec, all_cards, quads, owner, in_hand_start)
    return image, truth


def _contact_shadow(spec: SceneSpec) -> FloatImage:
    """The darkening (height, width, 1) float32 that cards cast on the table right around them."""
    w, h = spec.width, spec.height
    shadow = np.zeros((h, w), np.float32)
    for placed in spec.cards:
        quad = spec.to_image(placed.plane)
        cv2.fillConvexPoly(shadow, np.round(quad * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    soft = cv2.GaussianBlur(shadow, (0, 0), max(1.0, spec.card_px * 0.04))
    offset = np.array([[1, 0, spec.card_px * 0.02], [0, 1, spec.card_px * 0.03]], np.float32)
    soft = cv2.warpAffine(soft, offset, (w, h))
    return (1.0 - 0.35 * soft)[..., None]


def _table_layer(spec: SceneSpec) -> FloatImage:
    """The table texture seen through the camera: float32 reflectance (height, width, 3)."""
    w, h = spec.width, spec.height
    rng = np.random.default_rng(spec.table_seed)
    inverse = np.linalg.inv(spec.homography)
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64).reshape(-1, 1, 2)
    plane = cv2.perspectiveTransform(corners, inverse).reshape(-1, 2)
    lo, hi = plane.min(0), plane.max(0)
    # Keep the texture to a sane size when a strong tilt shows the table far away.
    card_span = np.vstack([c.plane for c in spec.cards]) if spec.cards else plane
    limit_lo = card_span.min(0) - 3 * (card_span.max(0) - card_span.min(0)) - 200
    limit_hi = card_span.max(0) + 3 * (card_span.max(0) - card_span.min(0)) + 200
    lo, hi = np.maximum(lo, limit_lo), np.minimum(hi, limit_hi)
    mm = hi - lo
    px_per_mm = min(max(w, h) / max(mm), 4.0)
    tw, th = max(8, int(mm[0] * px_per_mm)), max(8, int(mm[1] * px_per_mm))
    texture = make_table(spec.table, th, tw, rng)
    tex_to_plane = np.array([[1 / px_per_mm, 0, lo[0]], [0, 1 / px_per_mm, lo[1]], [0, 0, 1]], np.float64)
    return cv2.warpPerspective(texture, spec.homography @ tex_to_plane, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REFLECT)


def _draw_card(canvas: FloatImage, owner: npt.NDArray[np.int16], index: int, placed: PlacedCard,
               spec: SceneSpec) -> Quad:
    """Warp one card face onto the canvas; mark its pixels in ``owner``; return its image quad."""
    h, w = canvas.shape[:2]
    quad = spec.to_image(placed.plane)
    edge = max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[3]))
    tex_w = int(np.clip(np.ceil(edge * 1.1), 16, 480))
    key = ("face", placed.card.index, tex_w, id(placed.style))
    if key not in spec.cache:
        face, alpha = card_face(placed.card, tex_w, placed.style, supersample=3 if tex_w < 200 else 2)
        spec.cache[key] = np.dstack([face * alpha[..., None], alpha])  # premultiplied alpha
    rgba = spec.cache[key]
    tex_h = rgba.shape[0]
    src = np.array([[0, 0], [tex_w, 0], [tex_w, tex_h], [0, tex_h]], np.float64) - 0.5
    tex_to_plane = cv2.getPerspectiveTransform(src.astype(np.float32), placed.plane.astype(np.float32))
    x0, y0 = np.floor(quad.min(0)).astype(int) - 2
    x1, y1 = np.ceil(quad.max(0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return quad
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    matrix = shift @ spec.homography @ tex_to_plane
    # Premultiplied alpha warps without dark fringes at the card edge.
    warped = cv2.warpPerspective(rgba, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    a = warped[..., 3:4]
    region = canvas[y0:y1, x0:x1]
    region *= 1.0 - a
    region += warped[..., :3]
    owner[y0:y1, x0:x1][a[..., 0] > 0.5] = index
    return quad


def _draw_prop(canvas: FloatImage, owner: npt.NDArray[np.int16], prop: dict[str, Any],
               spec: SceneSpec) -> npt.NDArray[np.float64] | None:
    px = spec.card_px
    kind = prop["kind"]
    if kind == "hand":
        return props.draw_hand(canvas, owner, prop["tip"], prop["direction"], px,
                               np.array(prop["skin"], np.float32), prop.get("spread", 0.3))
    rng = np.random.default_rng(prop["seed"])
    if kind == "cable":
        props.draw_cable(canvas, owner, rng, px)
        return None
    draw = {"box": props.draw_box, "phone": props.draw_phone, "pen": props.draw_pen}[kind]
    return draw(canvas, owner, prop["center"], prop["angle"], px, rng)


def _truth(spec: SceneSpec, all_cards: list[tuple[int, PlacedCard]], quads: dict[int, Quad],
           owner: npt.NDArray[np.int16], in_hand_start: int) -> dict[str, Any]:
    """The ground-truth dict (JSON-able) for the drawn cards."""
    counts = np.bincount(owner[owner >= 0].ravel(), minlength=in_hand_start + len(all_cards))
    w, h = spec.width, spec.height
    entries = []
    for index, placed in sorted(all_cards, key=lambda item: item[0]):
        quad = quads[index]
        full_area = abs(_shoelace(quad)) * (1 - (4 - np.pi) * placed.style.corner_radius ** 2 / (CARD_MM[1] / CARD_MM[0]))
        fraction = float(min(1.0, counts[index] / max(full_area, 1e-6)))
        cut = bool(np.any(quad[:, 0] < -0.5) or np.any(quad[:, 1] < -0.5)
                   or np.any(quad[:, 0] > w - 0.5) or np.any(quad[:, 1] > h - 0.5))
        visibility = "partial" if cut else ("full" if fraction >= 0.97 else "occluded")
        card = placed.card
        entry: dict[str, Any] = {
            "card": str(card), "count": card.count, "color": card.color, "shading": card.shading,
            "shape": card.shape, "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in quad],
            "visibility": visibility, "visible_fraction": round(fraction, 3), "partial": cut,
        }
        if index >= in_hand_start:
            entry["in_hand"] = True
        entries.append(entry)
    on_table = [Card.parse(e["card"]) for e in entries if not e["partial"] and not e.get("in_hand")]
    return {
        "seed": spec.seed, "width": w, "height": h, "table": spec.table, "layout": spec.layout,
        "tilt": round(spec.tilt, 1), "props": [p["kind"] for p in spec.props],
        "cards": entries,
        "sets": [[str(on_table[i]) for i in s] for s in find_sets(on_table)],
    }


def _shoelace(quad: Quad) -> float:
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def generate_scene(seed: int, n_cards: int, size: tuple[int, int] = (960, 720), table: str | None = None,
                   layout: str | None = None, *, cards: list[Card] | None = None, deal: str = "any",
                   tilt: float | None = None, partial: bool | None = None, overlap: bool | None = None,
                   effects: float = 1.0, distractors: bool | None = None) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
    """A generated table photo and its ground truth, reproducible from ``seed``.

    :param seed: any int; the same arguments and seed give the same image, byte for byte.
    :param n_cards: cards on the table, 0..81 (3-21 are realistic).
    :param size: (width, height) of the image in pixels.
    :param table: a kind from `vision.tables.TABLES` (random if None).
    :param layout: one of `LAYOUTS` (random if None).
    :param cards: the cards to lay out (else dealt at random according to ``deal``).
    :param deal: "any", "sets" (at least one SET) or "no-set".
    :param tilt: camera tilt in degrees (0 = straight down; random up to 50 if None).
    :param partial: cut some cards with the frame edge (random if None).
    :param overlap: slide one card partly over another (random if None).
    :param effects: 0..1 strength of light, blur, noise, JPEG and props (0 = a clean drawing).
    :param distractors: allow props (hand, box, phone, pen, cable); default: when effects > 0.
    :returns: ``(image, truth)``: BGR uint8 (height, width, 3) and the JSON-able truth dict
        (schema in the module docstring and docs: seed, width, height, table, cards[...]).
    """
    spec = build_scene(seed, n_cards, size, table=table, layout=layout, cards=cards, deal=deal, tilt=tilt,
                       partial=partial, overlap=overlap, effects=effects, props_allowed=distractors)
    return draw_scene(spec)


def render_training_card(card: Card, rng: np.random.Generator, *,
                         corner_jitter: float = 0.015) -> npt.NDArray[np.uint8]:
    """One card photographed as in a scene, cut out as a canonical card: BGR uint8 (250, 160, 3).

    The card lies on a random table under random light, seen by a tilted camera at a random
    size (50-260 px wide on screen), with the same blur, noise and JPEG as `generate_scene`. It
    is then warped to the canonical view from its true corners moved by ``corner_jitter`` card
    widths (a detector is never exact); one crop in four is cut 3-14% inside the card edge, as
    tight hand-made crops are (the set-photos crops are, up to ~13%). Cheap (~20-40 ms): for
    training card readers.
    """
    if not isinstance(card, Card):
        raise TypeError(f"card must be a core.Card, got {type(card).__name__}")
    card_px = rng.uniform(80, 260) if rng.random() < 0.9 else rng.uniform(50, 80)
    fill = rng.uniform(0.45, 0.8)
    side = int(card_px * CARD_MM[1] / CARD_MM[0] / fill) + 8
    tilt = float(rng.uniform(0, 50) if rng.random() < 0.6 else rng.uniform(0, 15))
    spec = build_scene(int(rng.integers(2**31)), 1, (side, side), cards=[card], tilt=tilt,
                       partial=False, overlap=False, fill=fill, props_allowed=False)
    # The crop stands for one card of a 9-21 card table: light and blur at that table's size.
    spec.extent = float(rng.uniform(2.5, 5.0))
    image, truth = draw_scene(spec)
    corners = np.array(truth["cards"][0]["corners"])
    width = np.linalg.norm(corners[1] - corners[0])
    if rng.random() < 0.25:
        center = corners.mean(axis=0)
        corners = center + (corners - center) * rng.uniform(0.86, 0.97)
    corners = corners + rng.normal(0.0, corner_jitter * width, corners.shape)
    return warp_card(image, corners)


__all__ = ["CARD_MM", "DEALS", "LAYOUTS", "PlacedCard", "SceneSpec", "build_scene", "camera_homography",
           "deal_cards", "draw_scene", "generate_scene", "layout_cards",
           "render_training_card"]
