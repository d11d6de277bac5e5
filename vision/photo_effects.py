"""What light and a camera do to a scene: uneven light, white balance, shadows, glare, blur,
sensor noise and JPEG. Used by the scene generator and by the training-card generator alike, so a
classifier trained on generated cards sees the same range of photos as the detector does.

Two stages, both plain functions of arrays and a random generator:
1. `random_light` -> a `Light`; `light.apply(reflectance)` turns the float32 reflectance of the
   scene (H, W, 3) into linear BGR radiance: dim or bright, warm or cool, with gradients,
   vignetting, soft shadows and glare spots.
2. `camera_effects(image_float, rng, strength)` -> BGR uint8: defocus or motion blur, noise that
   grows in dim light, and a JPEG round trip.

`dim_sensor` retakes a finished photo in a dimmer room (the reader's training, the benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.tables import smooth_noise

FloatImage = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Light:
    """An illumination field. ``gain`` is (H, W, 3) float32 to multiply reflectance by (255 = a
    white sheet exposed at full scale); ``glare`` is (H, W) float32 added on top (specular shine
    that washes colour out)."""

    gain: FloatImage
    glare: FloatImage

    def apply(self, reflectance: FloatImage) -> FloatImage:
        """Reflectance (H, W, 3) float32 0..1 -> radiance float32 in 0..255 (may exceed 255)."""
        if reflectance.shape[:2] != self.gain.shape[:2]:
            raise ValueError(f"reflectance {reflectance.shape} does not match light {self.gain.shape}")
        return reflectance * self.gain + self.glare[..., None]


def white_balance(rng: np.random.Generator, spread: float = 1.0) -> npt.NDArray[np.float32]:
    """Per-channel BGR gains for a light colour from warm (tungsten, orange) to cool (shade, blue),
    with a little green-magenta tint; ``spread`` scales how far from neutral it may go."""
    warmth = rng.uniform(-1.0, 1.0) * spread  # > 0 warm
    tint = rng.normal(0.0, 0.04) * spread
    gains = np.array([1.0 - 0.28 * warmth, 1.0 + tint, 1.0 + 0.22 * warmth], np.float32)
    return gains / gains.max()


def random_light(height: int, width: int, rng: np.random.Generator, *, strength: float = 1.0,
                 shadows: list[npt.NDArray[np.float64]] | None = None, extent: float = 1.0) -> Light:
    """A random but plausible light over an image of (height, width).

    ``strength`` in 0..1 scales how uneven and coloured the light may be (0 = even neutral light).
    ``shadows`` are polygons (N, 2) (x, y) pixels to darken softly (e.g. a hand's shadow); more
    shadow bands are added at random. ``extent`` > 1 makes the image a crop of a scene that many
    times larger: gradients, shadows and glare keep the scene's size (a one-card crop must not
    get a whole room's light gradient). Light varies slowly across a picture, so the field is
    computed at a quarter of the size and scaled up.
    """
    if height < 1 or width < 1:
        raise ValueError(f"light size must be positive, got {width}x{height}")
    scale = max(height, width) * max(extent, 1.0)
    k = 4 if min(height, width) >= 64 else 1
    sh, sw = max(1, height // k), max(1, width // k)
    # Exposure: mostly normal, sometimes dim (a living room at night).
    level = rng.uniform(0.75, 1.05) if rng.random() > 0.25 * strength else rng.uniform(0.45, 0.75)
    wb = white_balance(rng, strength)
    ys = (np.arange(sh, dtype=np.float32)[:, None] * k - height / 2) / scale
    xs = (np.arange(sw, dtype=np.float32)[None, :] * k - width / 2) / scale
    angle = rng.uniform(0, 2 * np.pi)
    gradient = 1.0 + strength * rng.uniform(0.0, 0.6) * (xs * np.cos(angle) + ys * np.sin(angle))
    vignette = 1.0 - strength * rng.uniform(0.0, 0.5) * (xs ** 2 + ys ** 2) * 2
    blotches = 1.0 + strength * 0.08 * smooth_noise(sh, sw, scale / 3 / k, rng)
    field = np.clip(gradient * vignette * blotches, 0.2, 2.0) * level * 255.0

    polygons = list(shadows or [])
    if rng.random() < 0.2 * strength:
        polygons.append(_random_shadow_band(height, width, rng, scale))
    if polygons:
        field *= 1.0 - soft_mask(polygons, height, width, rng.uniform(0.005, 0.03) * scale, k) * rng.uniform(0.3, 0.6)

    glare = np.zeros((sh, sw), np.float32)
    if rng.random() < 0.3 * strength:
        # A lamp's reflection: a bright soft ellipse that washes out whatever lies under it.
        cx, cy = rng.uniform(0.1, 0.9) * sw, rng.uniform(0.1, 0.9) * sh
        ax = rng.uniform(0.03, 0.12) * scale / k
        cv2.ellipse(glare, (int(cx), int(cy)), (max(1, int(ax)), max(1, int(ax * rng.uniform(0.4, 1.0)))),
                    rng.uniform(0, 180), 0, 360, 1.0, -1, cv2.LINE_AA)
        glare = cv2.GaussianBlur(glare, (0, 0), max(0.5, ax * 0.5)) * rng.uniform(80, 220) * level
    gain = cv2.resize(field.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)
    gain = cv2.merge([gain * float(wb[0]), gain * float(wb[1]), gain * float(wb[2])])
    glare = cv2.resize(glare.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)
    return Light(gain=gain, glare=glare)


def soft_mask(polygons: list[npt.NDArray[np.float64]], height: int, width: int, softness: float,
              k: int = 4) -> FloatImage:
    """Polygons (x, y) pixels filled and blurred by ``softness`` pixels, at 1/``k`` of (height,
    width) (shadow edges are soft, so the low resolution does not show)."""
    sh, sw = max(1, height // k), max(1, width // k)
    mask = np.zeros((sh, sw), np.float32)
    for poly in polygons:
        pts = np.round(np.asarray(poly, np.float64) / k * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(mask, [pts], 1.0, cv2.LINE_AA, 4)
    return cv2.GaussianBlur(mask, (0, 0), max(0.5, softness / k))


def _random_shadow_band(height: int, width: int, rng: np.random.Generator,
                        scale: float) -> npt.NDArray[np.float64]:
    """A wide soft-edged shadow across part of the image (a person, a lamp arm, a window frame);
    ``scale`` is the size of the whole scene in pixels."""
    cx, cy = rng.uniform(0, width), rng.uniform(0, height)
    angle = rng.uniform(0, np.pi)
    length, thick = 2.0 * scale, rng.uniform(0.08, 0.35) * scale
    d = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-d[1], d[0]])
    c = np.array([cx, cy])
    return np.array([c - d * length - n * thick / 2, c + d * length - n * thick / 2,
                     c + d * length + n * thick / 2, c - d * length + n * thick / 2])


def camera_effects(radiance: FloatImage, rng: np.random.Generator, *, strength: float = 1.0,
                   jpeg: bool = True, noise_rng: np.random.Generator | None = None,
                   extent: float = 1.0) -> npt.NDArray[np.uint8]:
    """Radiance (H, W, 3) float32 (0..255 scale) -> the BGR uint8 photo a camera would save.

    Applies, at random and scaled by ``strength`` (0 = none): defocus or motion blur, a soft
    highlight roll-off, sensor noise that is stronger where the image is dark, and (if ``jpeg``)
    a JPEG round trip at quality 55-95. ``rng`` decides the blur and JPEG quality; ``noise_rng``
    (default ``rng``) draws the noise, so video frames can share one camera but not one noise.
    ``extent`` as in `random_light`: blur is sized for the whole scene, not the crop.
    """
    noise_rng = noise_rng or rng
    image = radiance
    scale = max(image.shape[:2]) * max(extent, 1.0)
    if strength > 0:
        roll = rng.random()
        if roll < 0.35 * strength:
            # Up to ~1.2 px on a 960 px frame: real crops still resolve the 3 px stripe pitch.
            sigma = rng.uniform(0.3, 1.2) * scale / 960.0 * strength
            image = cv2.GaussianBlur(image, (0, 0), max(0.3, sigma))
        elif roll < 0.5 * strength:
            image = _motion_blur(image, rng, rng.uniform(1.5, 6) * scale / 960.0 * strength)
    if strength > 0:
        # Measured on the real crops: webcam and phone noise after the camera's own denoising is
        # small (sigma ~1-3 grey levels on paper); heavier noise only breaks symbols apart.
        sigma_read = rng.uniform(0.3, 2.0) * strength
        shot = rng.uniform(0.01, 0.12) * strength
        quality = int(rng.uniform(55, 95))
        # Luminance noise per pixel plus coarser colour (chroma) noise, as from a real sensor after
        # demosaicing; its spread grows with the square root of the local signal (shot noise),
        # taken from a quarter-size grey image (the spread varies slowly).
        h, w = image.shape[:2]
        small = cv2.resize(image, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
        level = np.sqrt(np.maximum(small.mean(axis=2), 0.0)) * np.float32(shot) + np.float32(sigma_read)
        spread = cv2.resize(level.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
        luma = noise_rng.standard_normal((h, w), dtype=np.float32)
        luma *= spread
        chroma = noise_rng.standard_normal(((h + 1) // 2, (w + 1) // 2, 3), dtype=np.float32)
        chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR)
        chroma *= (spread * np.float32(0.6))[..., None]
        chroma += luma[..., None]
        image = image + chroma
    # Highlights compress smoothly before clipping (cameras keep a little detail in a bright
    # card); the tone curve and rounding are one table lookup on quarter-level steps.
    index = np.clip(image, 0.0, _TONE_MAX - 0.25)
    index *= 4.0
    out = _TONE_LUT[index.astype(np.uint16)]
    if jpeg and strength > 0:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return out


def dim_sensor(image: npt.NDArray[np.uint8], rng: np.random.Generator, *, exposure: float,
               read_noise: float, shot_noise: float = 0.0, brightness: float = 1.0) -> npt.NDArray[np.uint8]:
    """``image`` (BGR uint8, any shape) as a camera takes it when only ``exposure`` (0..1) of the
    light reaches its sensor and its gain is turned up to keep ``brightness`` of the image's
    brightness (1: all of it).

    The sensor's noise is added in linear light (the sRGB curve undone as a 2.2 power): read
    noise of spread ``read_noise`` (of full scale) and shot noise whose variance is
    ``shot_noise`` times the light. The camera's gamma curve then spreads it over dark tones far
    more than over bright ones, so dark solid ink comes out grainy, as uniform noise never makes
    it. Returns BGR uint8 of ``image``'s shape.
    """
    linear = (image.astype(np.float32) / 255.0) ** 2.2 * exposure
    sigma = np.sqrt(shot_noise * linear + read_noise ** 2)
    noisy = linear + sigma * rng.standard_normal(linear.shape).astype(np.float32)
    return (np.clip(noisy / exposure * brightness, 0.0, 1.0) ** (1 / 2.2) * 255.0 + 0.5).astype(np.uint8)


def lamp_glare(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``image`` (BGR uint8) under a lamp's reflection off a glossy table: a bright spot a third
    of the photo across, right of the middle, added in linear light (peak +0.8 of full scale),
    washing out the cards under it. Returns BGR uint8 of ``image``'s shape."""
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    spot = np.exp(-(((xs - 0.6 * width) / (0.15 * width)) ** 2 + ((ys - 0.45 * height) / (0.12 * height)) ** 2))
    linear = (image.astype(np.float32) / 255.0) ** 2.2 + 0.8 * spot[..., None]
    return (np.clip(linear, 0.0, 1.0) ** (1 / 2.2) * 255.0 + 0.5).astype(np.uint8)


def _tone_curve() -> npt.NDArray[np.uint8]:
    """uint8 output for radiance in quarter steps 0.._TONE_MAX: linear up to 200, then a soft
    shoulder that reaches 255 near radiance 400."""
    radiance = np.arange(int(_TONE_MAX * 4), dtype=np.float64) / 4.0
    over = np.maximum(radiance - 200.0, 0.0)
    toned = radiance - over + over / (1.0 + over / 80.0)
    return np.clip(np.round(toned), 0, 255).astype(np.uint8)


_TONE_MAX = 1024.0
_TONE_LUT = _tone_curve()


def _motion_blur(image: FloatImage, rng: np.random.Generator, length: float) -> FloatImage:
    """Blur along a random direction over ``length`` pixels (a shaken hand or a moving camera)."""
    size = max(3, int(round(length)) | 1)
    kernel = np.zeros((size, size), np.float32)
    kernel[size // 2, :] = 1.0
    rot = cv2.getRotationMatrix2D((size / 2 - 0.5, size / 2 - 0.5), rng.uniform(0, 180), 1.0)
    kernel = cv2.warpAffine(kernel, rot, (size, size))
    kernel /= max(kernel.sum(), 1e-6)
    return cv2.filter2D(image, -1, kernel)
