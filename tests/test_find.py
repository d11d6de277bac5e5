"""Photo mode end to end: `setfinder find` on generated photos with exact truth, on every labelled
photo in ../shared (skipped when absent), the JSON schema, and each kind of bad input."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from core import Card, find_sets
from setfinder.cli import main
from vision.cardreader import DEFAULT_MODEL_PATH

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL_PATH.is_file(),
                                reason="models/card_reader.json absent: run `setfinder train`")

KEYS = ["image", "width", "height", "elapsed_ms", "cards", "sets", "verdict"]
CARD_KEYS = ["id", "count", "color", "shading", "shape", "corners", "confidence", "partial", "uncertain"]


def run_find(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    code = main(["find", *args])
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines() if line.strip()]
    return code, records, captured.err


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    from vision.scene import generate_scene

    image, truth = generate_scene(11, 12, size=(960, 720), table="dark-wood", effects=0.3,
                                  partial=False, overlap=False, distractors=False, deal="sets")
    path = tmp_path_factory.mktemp("scene") / "scene.png"
    cv2.imwrite(str(path), image)
    return path, truth


def test_generated_photo_read_exactly(scene: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    path, truth = scene
    code, records, _ = run_find([str(path), "--json"], capsys)
    assert code == 0 and len(records) == 1
    record = records[0]
    assert list(record) == KEYS
    assert (record["width"], record["height"]) == (960, 720)
    assert len(record["cards"]) == len(truth["cards"])
    for card in record["cards"]:
        assert list(card) == CARD_KEYS
        center = np.mean(card["corners"], axis=0)
        nearest = min(truth["cards"], key=lambda t: np.hypot(*(np.mean(t["corners"], axis=0) - center)))
        assert f"{card['count']} {card['color']} {card['shading']} {card['shape']}" == nearest["card"]
        assert np.max(np.abs(np.array(card["corners"]) - _same_order(card["corners"], nearest["corners"]))) < 6
    truth_cards = [Card.parse(c["card"]) for c in truth["cards"]]
    truth_sets = {frozenset(str(truth_cards[i]) for i in s) for s in find_sets(truth_cards)}
    by_id = {c["id"]: f"{c['count']} {c['color']} {c['shading']} {c['shape']}" for c in record["cards"]}
    assert {frozenset(by_id[i] for i in s) for s in record["sets"]} == truth_sets
    assert record["verdict"] == "sets"


def _same_order(found: list, truth: list) -> np.ndarray:
    """The truth corners rotated to line up with the found ones (a card's top is ambiguous)."""
    truth_array = np.array(truth)
    shifts = [np.roll(truth_array, s, axis=0) for s in range(4)]
    return min(shifts, key=lambda t: float(np.abs(t - np.array(found)).max()))


def test_human_output_and_annotated_image(scene: tuple[Path, dict], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = scene
    code = main(["find", str(path), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "12 cards" in out and "SET 1:" in out
    annotated = cv2.imread(str(tmp_path / "scene.annotated.jpg"))
    assert annotated is not None and annotated.shape == (720, 960, 3)


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk + struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))


def _bad_inputs(folder: Path) -> dict[str, Path]:
    files = {}
    (folder / "text.jpg").write_text("not a photo")
    files["not an image"] = folder / "text.jpg"
    (folder / "empty.jpg").write_bytes(b"")
    files["empty"] = folder / "empty.jpg"
    ok, data = cv2.imencode(".jpg", np.random.default_rng(1).integers(0, 255, (300, 300, 3), np.uint8))
    (folder / "cut.jpg").write_bytes(data.tobytes()[:2000])
    files["truncated"] = folder / "cut.jpg"
    cv2.imwrite(str(folder / "dot.png"), np.zeros((1, 1, 3), np.uint8))
    files["too small"] = folder / "dot.png"
    (folder / "bomb.png").write_bytes(_png_header(40000, 40000))
    files["too large"] = folder / "bomb.png"
    (folder / "a-folder").mkdir()
    files["directory"] = folder / "a-folder"
    cv2.imwrite(str(folder / "blank.png"), np.full((480, 640, 3), 90, np.uint8))
    files["no cards"] = folder / "blank.png"
    files["no such file"] = folder / "missing.jpg"
    return files


@pytest.mark.parametrize("kind", ["not an image", "empty", "truncated", "too small", "too large",
                                  "directory", "no cards", "no such file"])
def test_bad_input_one_line_error(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad_inputs(tmp_path)[kind]
    code, records, err = run_find([str(path), "--json"], capsys)
    assert code == 1
    assert records == [{"image": str(path), "error": records[0]["error"]}]
    assert kind in records[0]["error"]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("setfinder: error:")
    assert "Traceback" not in err


@pytest.mark.parametrize("level, advice", [(10, "almost black: light the table"),
                                           (250, "almost white: it is overexposed"),
                                           (90, "photograph the table from above")])
def test_no_cards_says_what_to_do_about_a_black_or_white_photo(level: int, advice: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "table.png"
    noisy = level + np.random.default_rng(2).integers(-3, 4, (480, 640, 3))
    cv2.imwrite(str(path), np.clip(noisy, 0, 255).astype(np.uint8))
    code, records, _ = run_find([str(path), "--json"], capsys)
    assert code == 1 and records[0]["error"].startswith(f"{path}: no cards found; ")
    assert advice in records[0]["error"]


def test_bad_photo_does_not_stop_the_batch(scene: tuple[Path, dict], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jpg"
    bad.write_text("nope")
    code, records, _ = run_find([str(bad), str(scene[0]), "--json"], capsys)
    assert code == 0
    assert "error" in records[0] and records[1]["verdict"] == "sets"


def test_unusual_pixel_formats_are_read(scene: tuple[Path, dict], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    image = cv2.imread(str(scene[0]))
    gray = tmp_path / "gray.png"
    cv2.imwrite(str(gray), cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    deep = tmp_path / "deep.png"
    cv2.imwrite(str(deep), image.astype(np.uint16) * 257)
    alpha = tmp_path / "alpha.png"
    cv2.imwrite(str(alpha), cv2.cvtColor(image, cv2.COLOR_BGR2BGRA))
    code, records, err = run_find([str(gray), str(deep), str(alpha), "--json"], capsys)
    assert code == 0
    assert len(records[1]["cards"]) == 12 and len(records[2]["cards"]) == 12
    # Black and white: the cards are found, but no colour can be read, and the answer says so.
    assert records[0]["cards"] and all(card["uncertain"] for card in records[0]["cards"])
    assert records[0]["verdict"] == "uncertain"
    assert err.splitlines() == [f"setfinder: note: {gray} is black and white: no card's colour can be read "
                                "from it, so every card is uncertain; take a colour photo"]
