"""Procedural table surfaces for generated scenes: wood, plain tables, cloth, rugs and felt.

Every table is a float32 BGR reflectance image (H, W, 3) in 0..1; the scene multiplies it by the
light. Textures are built from smooth noise (random values on a coarse grid, resized up), which is
cheap: a 960 x 720 table takes a few milliseconds. Light tables (white, grey, light wood, pale
cloth) matter most: a white card on a pale table is the hard case for finding cards.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import numpy.typing as npt

FloatImage = npt.NDArray[np.float32]


def smooth_noise(height: int, width: int, cell: float, rng: np.random.Generator,
                 stretch: tuple[float, float] = (1.0, 1.0)) -> FloatImage:
    """Smooth random field (height, width) float32, zero mean, unit-ish spread.

    ``cell`` is the feature size in pixels; ``stretch`` (x, y) lengthens features along one axis
    (wood grain is noise stretched along the grain).
    """
    gw = max(2, int(np.ceil(width / (cell * stretch[0]))) + 1)
    gh = max(2, int(np.ceil(height / (cell * stretch[1]))) + 1)
    coarse = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)


def _tint(field: FloatImage, dark: tuple[float, float, float], light: tuple[float, float, float]) -> FloatImage:
    """Map a field in 0..1 to colours between ``dark`` and ``light`` (BGR reflectance)."""
    f = np.clip(field, 0.0, 1.0)[..., None]
    d = np.array(dark, np.float32)
    l_ = np.array(light, np.float32)
    return (d + (l_ - d) * f).astype(np.float32)


def _jitter_colour(rng: np.random.Generator, colour: tuple[float, float, float], spread: float) -> tuple[float, float, float]:
    c = np.clip(np.array(colour) * rng.uniform(1 - spread, 1 + spread) + rng.normal(0, spread / 3, 3), 0.0, 1.0)
    return (float(c[0]), float(c[1]), float(c[2]))


def _wood(height: int, width: int, rng: np.random.Generator, dark: tuple[float, float, float],
          light: tuple[float, float, float]) -> FloatImage:
    """Planks with grain along x: rings warped by smooth noise, fine streaks, plank seams."""
    scale = max(height, width) / 960.0
    plank = rng.uniform(90, 200) * scale
    ys = np.arange(height, dtype=np.float32)[:, None]
    xs = np.arange(width, dtype=np.float32)[None, :]
    warp = smooth_noise(height, width, 120 * scale, rng, stretch=(4.0, 1.0)) * 10 * scale
    rings = 0.5 + 0.5 * np.sin((ys + warp) * (2 * np.pi / (rng.uniform(10, 26) * scale)))
    streaks = smooth_noise(height, width, 3 * scale, rng, stretch=(25.0, 1.0))
    tone = smooth_noise(height, width, 200 * scale, rng, stretch=(3.0, 1.0))
    plank_index = np.floor(ys / plank)
    plank_tone = np.sin(plank_index * 12.9898 + rng.uniform(0, 6)) * 0.12
    field = 0.55 + 0.18 * rings ** 3 + 0.08 * streaks + 0.1 * tone + plank_tone + 0 * xs
    image = _tint(field, dark, light)
    seam = (np.abs(ys - np.round(ys / plank) * plank) < 1.0 * max(1.0, scale))
    image[np.broadcast_to(seam, (height, width))] *= 0.55
    return image


def light_wood(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """Beech or birch: pale orange, like the table in the errcw board photos."""
    return _wood(height, width, rng, _jitter_colour(rng, (0.28, 0.48, 0.70), 0.08),
                 _jitter_colour(rng, (0.52, 0.74, 0.93), 0.05))


def dark_wood(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """Walnut or stained oak."""
    return _wood(height, width, rng, _jitter_colour(rng, (0.04, 0.07, 0.12), 0.15),
                 _jitter_colour(rng, (0.14, 0.24, 0.36), 0.12))


def _plain(height: int, width: int, rng: np.random.Generator, base: tuple[float, float, float],
           grain: float) -> FloatImage:
    tone = smooth_noise(height, width, 150, rng) * 0.015
    fine = smooth_noise(height, width, 1.5, rng) * grain
    field = np.array(base, np.float32)[None, None, :] + (tone + fine)[..., None]
    return np.clip(field, 0.0, 1.0).astype(np.float32)


def white_table(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A white laminate or painted table: nearly the paper's own colour (the hard case)."""
    return _plain(height, width, rng, _jitter_colour(rng, (0.86, 0.87, 0.88), 0.04), 0.01)


def grey_table(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A grey laminate or concrete table."""
    g = rng.uniform(0.35, 0.7)
    return _plain(height, width, rng, _jitter_colour(rng, (g, g, g * 1.02), 0.03), 0.02)


def black_table(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A black or very dark table, like the set-photos board photos."""
    g = rng.uniform(0.03, 0.1)
    return _plain(height, width, rng, (g, g, g), 0.01)


def felt(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """Card-table felt: a saturated green, blue or red with fine fuzz."""
    colour = [(0.18, 0.42, 0.10), (0.45, 0.25, 0.08), (0.12, 0.12, 0.45), (0.30, 0.30, 0.08)][rng.integers(4)]
    return _plain(height, width, rng, _jitter_colour(rng, colour, 0.15), 0.035)


def checked_cloth(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A gingham or plaid tablecloth: two crossing sets of coloured bands on a pale ground."""
    scale = max(height, width) / 960.0
    period = rng.uniform(20, 70) * scale
    band = rng.uniform(0.35, 0.6)
    ys = np.arange(height, dtype=np.float32)[:, None]
    xs = np.arange(width, dtype=np.float32)[None, :]
    vx = ((xs / period) % 1.0 < band).astype(np.float32)
    vy = ((ys / period) % 1.0 < band).astype(np.float32)
    weave = (vx + vy) / 2.0
    ground = np.array(_jitter_colour(rng, (0.9, 0.9, 0.92), 0.04), np.float32)
    colour = np.array(_jitter_colour(rng, [(0.2, 0.2, 0.75), (0.6, 0.3, 0.1), (0.2, 0.5, 0.2),
                                           (0.3, 0.3, 0.3)][rng.integers(4)], 0.1), np.float32)
    image = ground + (colour - ground) * weave[..., None]
    fine = smooth_noise(height, width, 1.2, rng) * 0.03
    return np.clip(image + fine[..., None], 0.0, 1.0).astype(np.float32)


def striped_cloth(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A striped tablecloth or runner."""
    scale = max(height, width) / 960.0
    period = rng.uniform(25, 90) * scale
    ys = np.arange(height, dtype=np.float32)[:, None] + np.zeros((1, width), np.float32)
    wave = 0.5 + 0.5 * np.sign(np.sin(ys * 2 * np.pi / period))
    a = _jitter_colour(rng, (0.85, 0.85, 0.85), 0.06)
    b = _jitter_colour(rng, [(0.5, 0.3, 0.2), (0.25, 0.25, 0.6), (0.4, 0.6, 0.7)][rng.integers(3)], 0.15)
    image = _tint(wave, b, a)
    fine = smooth_noise(height, width, 1.2, rng) * 0.03
    return np.clip(image + fine[..., None], 0.0, 1.0).astype(np.float32)


def rug(height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A patterned rug: blotchy colour regions from thresholded noise, with woven texture."""
    scale = max(height, width) / 960.0
    palette = np.array([_jitter_colour(rng, c, 0.15) for c in
                        [(0.15, 0.2, 0.55), (0.55, 0.75, 0.85), (0.35, 0.2, 0.15), (0.7, 0.7, 0.7)]], np.float32)
    rng.shuffle(palette)
    field = smooth_noise(height, width, rng.uniform(30, 90) * scale, rng)
    levels = np.digitize(field, [-0.6, 0.0, 0.6])
    image = palette[levels]
    ys = np.arange(height, dtype=np.float32)[:, None]
    xs = np.arange(width, dtype=np.float32)[None, :]
    weave = 0.04 * np.sin(xs * 2.1) * np.sin(ys * 2.1)
    fuzz = smooth_noise(height, width, 1.5, rng) * 0.05
    image = cv2.GaussianBlur(image, (0, 0), 1.2 * scale)
    return np.clip(image + (weave + fuzz)[..., None], 0.0, 1.0).astype(np.float32)


TABLES: dict[str, Callable[[int, int, np.random.Generator], FloatImage]] = {
    "dark-wood": dark_wood,
    "light-wood": light_wood,
    "white": white_table,
    "grey": grey_table,
    "black": black_table,
    "felt": felt,
    "checked-cloth": checked_cloth,
    "striped-cloth": striped_cloth,
    "rug": rug,
}
"""Every table kind by name; `make_table` draws one."""


def make_table(kind: str, height: int, width: int, rng: np.random.Generator) -> FloatImage:
    """A table of ``kind`` (a key of `TABLES`) as float32 BGR reflectance (height, width, 3)."""
    if kind not in TABLES:
        raise ValueError(f"table must be one of {', '.join(TABLES)}, got {kind!r}")
    if height < 1 or width < 1:
        raise ValueError(f"table size must be positive, got {width}x{height}")
    return TABLES[kind](height, width, rng)
