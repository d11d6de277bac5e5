"""Photo loading: every kind of bad input gives ImageError with a useful one-line message."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.imageio import ImageError, header_size, load_image, load_photo, shows_no_colour

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"


def _write(path: Path, image: np.ndarray, ext: str = ".png") -> Path:
    ok, data = cv2.imencode(ext, image)
    assert ok
    path.write_bytes(data.tobytes())
    return path


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height, followed by no real pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    end = struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return b"\x89PNG\r\n\x1a\n" + chunk + end


def test_reads_colour_png(tmp_path: Path) -> None:
    image = np.zeros((60, 80, 3), np.uint8)
    image[:, :, 2] = 200
    loaded = load_image(_write(tmp_path / "a.png", image))
    assert loaded.shape == (60, 80, 3) and loaded.dtype == np.uint8
    assert loaded[0, 0].tolist() == [0, 0, 200]


@pytest.mark.parametrize("image", [
    np.full((50, 50), 128, np.uint8),                     # grayscale
    np.full((50, 50, 3), 40000, np.uint16),               # 16-bit
    np.full((50, 50, 4), 200, np.uint8),                  # with alpha
], ids=["gray", "16bit", "alpha"])
def test_unusual_formats_become_bgr8(tmp_path: Path, image: np.ndarray) -> None:
    loaded = load_image(_write(tmp_path / "odd.png", image))
    assert loaded.ndim == 3 and loaded.shape[2] == 3 and loaded.dtype == np.uint8


@pytest.mark.parametrize("name", ["webcam-960x720.jpg", "table-12-no-set.jpg", "light-wood.jpg"])
def test_a_black_and_white_photo_shows_no_colour_and_a_colour_one_does_even_dim(tmp_path: Path, name: str) -> None:
    colour = load_image(SAMPLES / name)
    assert not shows_no_colour(colour)
    assert not shows_no_colour((colour * 0.25).astype(np.uint8))  # a quarter of the light
    grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    assert shows_no_colour(load_image(_write(tmp_path / "grey.png", grey)))
    # Saved as colour, its compression noise is no colour either.
    noisy = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR).astype(np.int16)
    noisy += np.random.default_rng(1).integers(-4, 5, size=noisy.shape, dtype=np.int16)
    assert shows_no_colour(load_image(_write(tmp_path / "grey.jpg", np.clip(noisy, 0, 255).astype(np.uint8), ".jpg")))


def test_a_heic_photo_is_named_and_the_way_round_it_given(tmp_path: Path) -> None:
    # The start of an iPhone photo: an ISO media 'ftyp' box of brand heic (OpenCV has no decoder).
    path = tmp_path / "IMG_0001.HEIC"
    path.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(200))
    with pytest.raises(ImageError, match="HEIC photo.*export it as JPEG"):
        load_image(path)


def test_16bit_is_scaled_not_clipped(tmp_path: Path) -> None:
    loaded = load_image(_write(tmp_path / "deep.png", np.full((40, 40, 3), 40000, np.uint16)))
    assert 150 < loaded[0, 0, 0] < 160  # 40000 / 257


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"this is a text file, not a photo", "not an image"),
], ids=["empty", "text"])
def test_not_an_image(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "bad.jpg"
    path.write_bytes(content)
    with pytest.raises(ImageError, match=words):
        load_image(path)


def test_truncated_jpeg(tmp_path: Path) -> None:
    ok, data = cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (200, 200, 3), np.uint8))
    path = tmp_path / "cut.jpg"
    path.write_bytes(data.tobytes()[: len(data) // 2])
    with pytest.raises(ImageError, match="truncated"):
        load_image(path)


def test_huge_header_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(40000, 40000))
    assert header_size(path.read_bytes()) == (40000, 40000)
    with pytest.raises(ImageError, match="too large"):
        load_image(path)


def _jpeg_claiming(width: int, height: int) -> bytes:
    """A small real JPEG whose frame header claims width x height."""
    ok, data = cv2.imencode(".jpg", np.full((48, 64, 3), 128, np.uint8))
    data = bytearray(data.tobytes())
    frame = data.index(b"\xff\xc0")
    data[frame + 5:frame + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def test_a_108_mp_phone_jpeg_is_read_and_a_jpeg_bomb_refused(tmp_path: Path) -> None:
    # A JPEG is decoded at 1/8 of its side, so a 108 MP phone photo is cheap to read; far
    # beyond that is refused before decoding, as for every other format over 50 MP.
    phone = tmp_path / "phone.jpg"
    phone.write_bytes(_jpeg_claiming(12000, 9000))
    assert header_size(phone.read_bytes()) == (12000, 9000)
    try:
        load_photo(phone)  # (what is decoded of so little data does not matter here)
    except ImageError as error:
        assert "too large" not in str(error)
    bomb = tmp_path / "bomb.jpg"
    bomb.write_bytes(_jpeg_claiming(40000, 40000))
    with pytest.raises(ImageError, match="too large"):
        load_image(bomb)


def test_tiny_image(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="too small"):
        load_image(_write(tmp_path / "dot.png", np.zeros((1, 1, 3), np.uint8)))


def test_directory_and_missing(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="directory"):
        load_image(tmp_path)
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")


def test_large_jpeg_decoded_at_reduced_scale_keeps_full_size(tmp_path: Path) -> None:
    image = np.zeros((2400, 3200, 3), np.uint8)
    cv2.rectangle(image, (800, 600), (1600, 1800), (255, 255, 255), -1)
    path = _write(tmp_path / "big.jpg", image, ".jpg")
    photo = load_photo(path, max_working_pixels=1_000_000)
    assert (photo.width, photo.height) == (3200, 2400)
    assert photo.image.shape[:2] == (1200, 1600)
    assert photo.scale == 2.0


def test_exif_orientation_is_applied(tmp_path: Path) -> None:
    """A JPEG stored landscape with EXIF orientation 6 (rotate 90 CW) loads as portrait."""
    image = np.zeros((100, 200, 3), np.uint8)
    image[:, :100] = 255  # left half white in the stored pixels
    ok, data = cv2.imencode(".jpg", image)
    raw = data.tobytes()
    # A minimal APP1 Exif segment: little-endian TIFF, one IFD entry Orientation(0x0112)=6.
    tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) \
        + struct.pack("<HHII", 0x0112, 3, 1, 6) + struct.pack("<I", 0)
    app1 = b"Exif\x00\x00" + tiff
    segment = b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1
    path = tmp_path / "rotated.jpg"
    path.write_bytes(raw[:2] + segment + raw[2:])
    photo = load_photo(path)
    assert photo.image.shape[:2] == (200, 100)
    assert (photo.width, photo.height) == (100, 200)
    # Rotated clockwise: the stored left half is now the top half.
    assert photo.image[20, 50].mean() > 200 and photo.image[180, 50].mean() < 50
