"""Reading photos safely: one-line errors for bad files, EXIF orientation applied, size capped.

Everything that reaches the pipeline is BGR uint8 (H, W, 3), whatever came in (grayscale, 16-bit,
alpha, palette). Large photos are decoded at reduced scale straight from the JPEG (much faster
than decoding 12 MP and shrinking), since cards read as well at 2-3 MP.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

# Refuse images whose header claims more pixels than this before decoding them: a 40000 x 40000
# header would otherwise take gigabytes. 50 MP covers every phone camera in common use...
MAX_PIXELS = 50_000_000
# ... but a JPEG is decoded at reduced scale (below), so the 108 MP of some phones' main cameras
# cost little: measured here on a 12000 x 9000 photo decoded at 1/8 of its side, 0.23 s and a
# 70 MB peak for the whole process (baseline JPEG, as cameras write), 0.7 s and 380 MB
# progressive (whose decoder holds every coefficient of the photo).
MAX_JPEG_PIXELS = 120_000_000
MIN_SIDE = 32
# Large JPEGs are decoded at 1/2, 1/4 or 1/8 scale (DCT scaling in the decoder, several times
# faster than a full decode), the largest reduction that still leaves this many pixels.
WORKING_PIXELS = 1_500_000


class ImageError(ValueError):
    """The file is not an image setfinder can read; the message says why and what to do."""


@dataclass(frozen=True)
class Photo:
    """A decoded photo: ``image`` BGR uint8 (h, w, 3), possibly decoded at reduced scale.

    ``width`` x ``height`` is the photo's displayed size (EXIF orientation applied); multiply
    ``image`` pixel coordinates by ``scale`` to get coordinates in the full photo.
    """

    image: npt.NDArray[np.uint8]
    width: int
    height: int

    @property
    def scale(self) -> float:
        return self.width / self.image.shape[1]


def shows_no_colour(image: npt.NDArray[np.uint8]) -> bool:
    """Whether a BGR uint8 photo holds no colour at all: a black-and-white photo (or one saved
    as colour from it, or a monochrome camera's). Then no card's colour can be read from it.

    Counted on every fourth pixel each way: fewer than ``COLOURLESS_FRACTION`` of them have
    channels more than ``COLOURLESS_SPREAD`` levels apart. A colour photo of cards always has
    its inks: on the real photos and the samples, 2-100% of pixels lie over 20 levels apart,
    and 0.6-65% with the light cut to a quarter."""
    height, width = image.shape[:2]
    # (OpenCV's per-pixel maxima of a small copy: 0.1 ms a webcam frame, where NumPy's
    # reductions over the colour axis of a strided view took 2.4 ms.)
    sample = cv2.resize(image, (max(1, width // 4), max(1, height // 4)), interpolation=cv2.INTER_NEAREST)
    blue, green, red = cv2.split(sample)
    spread = cv2.subtract(cv2.max(cv2.max(blue, green), red), cv2.min(cv2.min(blue, green), red))
    return cv2.countNonZero(cv2.compare(spread, COLOURLESS_SPREAD, cv2.CMP_GT)) < COLOURLESS_FRACTION * spread.size


COLOURLESS_SPREAD = 12
COLOURLESS_FRACTION = 1e-4


def load_photo(path: str | os.PathLike[str], *, max_working_pixels: int = WORKING_PIXELS) -> Photo:
    """Like `load_image`, but also gives the photo's full displayed size and the decode scale."""
    data = _read_bytes(Path(path))
    image = decode_image(data, name=str(path), max_working_pixels=max_working_pixels)
    size = header_size(data)
    height, width = image.shape[:2]
    if size is not None and (size[0] > width or size[1] > height):
        full_w, full_h = size
        if (full_w > full_h) != (width > height):  # EXIF rotated the photo by 90 degrees
            full_w, full_h = full_h, full_w
        width, height = full_w, full_h
    return Photo(image=image, width=width, height=height)


def load_image(path: str | os.PathLike[str], *, max_working_pixels: int = WORKING_PIXELS
               ) -> npt.NDArray[np.uint8]:
    """Read a photo as BGR uint8 (H, W, 3) with its EXIF orientation applied.

    Large JPEGs are decoded at a reduced scale (1/2, 1/4 or 1/8), the largest that keeps at
    least ``max_working_pixels``. Raises ImageError with a one-line reason for anything unreadable.
    """
    data = _read_bytes(Path(path))
    return decode_image(data, name=str(path), max_working_pixels=max_working_pixels)


def _read_bytes(path: Path) -> bytes:
    if path.is_dir():
        raise ImageError(f"{path} is a directory: pass image files (e.g. {path}/*.jpg)")
    if not path.exists():
        raise ImageError(f"{path}: no such file")
    try:
        return path.read_bytes()
    except OSError as error:
        raise ImageError(f"{path}: cannot read file ({error.strerror})") from None


def decode_image(data: bytes, *, name: str = "image", max_working_pixels: int = WORKING_PIXELS
                 ) -> npt.NDArray[np.uint8]:
    """Decode encoded image bytes (JPEG, PNG, BMP, TIFF, WebP...) like `load_image` does."""
    if not data:
        raise ImageError(f"{name}: the file is empty")
    size = header_size(data)
    if size is not None:
        width, height = size
        largest = MAX_JPEG_PIXELS if data[:2] == b"\xff\xd8" else MAX_PIXELS
        if width * height > largest:
            raise ImageError(f"{name}: {width}x{height} pixels is too large "
                             f"(at most {largest // 1_000_000} MP); resize the photo")
    if _looks_truncated(data):
        raise ImageError(f"{name}: the file is truncated (incomplete download or copy?); "
                         "take or copy the photo again")
    buffer = np.frombuffer(data, dtype=np.uint8)
    flags = cv2.IMREAD_COLOR
    if size is not None and data[:2] == b"\xff\xd8":
        pixels = size[0] * size[1]
        for reduced, factor in ((cv2.IMREAD_REDUCED_COLOR_8, 8), (cv2.IMREAD_REDUCED_COLOR_4, 4),
                                (cv2.IMREAD_REDUCED_COLOR_2, 2)):
            if pixels / (factor * factor) >= max_working_pixels:
                flags = reduced
                break
    image = cv2.imdecode(buffer, flags)
    if image is None and _is_heif(data):
        raise ImageError(f"{name}: a HEIC photo (an iPhone's own format), which OpenCV cannot decode; "
                         "export it as JPEG (or set the iPhone's Camera > Formats to Most Compatible)")
    if image is None:
        raise ImageError(f"{name}: not an image OpenCV can decode (is it a photo? try JPEG or PNG)")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.dtype != np.uint8:
        image = (image / 257).astype(np.uint8)
    if min(image.shape[:2]) < MIN_SIDE:
        raise ImageError(f"{name}: {image.shape[1]}x{image.shape[0]} pixels is too small to show "
                         f"cards (at least {MIN_SIDE} pixels a side); use a real photo")
    if size is None and image.shape[0] * image.shape[1] > MAX_PIXELS:
        raise ImageError(f"{name}: {image.shape[1]}x{image.shape[0]} pixels is too large; resize it")
    return np.ascontiguousarray(image)


def _is_heif(data: bytes) -> bool:
    """Whether ``data`` starts as a HEIF/HEIC file: an ISO media box 'ftyp' with an image brand."""
    return data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS


_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


def header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header without decoding, or None if unknown."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            position += 1
            continue
        marker = data[position + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            position += 1 if marker == 0xFF else 2
            continue
        length = struct.unpack(">H", data[position + 2:position + 4])[0]
        # Start-of-frame markers carry the size; C4, C8 and CC are other tables.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return int(width), int(height)
        position += 2 + length
    return None


def _looks_truncated(data: bytes) -> bool:
    if data[:2] == b"\xff\xd8":
        # A complete JPEG ends with the EOI marker (some writers add a few bytes of padding).
        return b"\xff\xd9" not in data[-64:]
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return b"IEND" not in data[-32:]
    return False
