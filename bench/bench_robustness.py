"""Photo mode on the labelled real photos as other cameras and lights would take them.

The 12 labelled table photos of ../shared are all read right as they are; setfinder is judged on
photos from other cameras, under other lights. Each photo is changed as such a photo would
differ (turned, smaller, warm, tungsten-lit, cool, overexposed, dim and noisy, unevenly lit,
under a lamp's glare, a paler print, out of focus, shaken, harshly compressed, seen from a
tilted camera) and read again. Each card found is compared with the labelled card at its
place: the photo as taken is read first (every card found, in the labels' reading order), its
cards' outlines are painted into a map that the variant moves as it moves the photo, and a
card found in the variant takes the label painted under its centre. The SETs are compared as sets.

    python bench/bench_robustness.py [--out DIR] [--model FILE]   # DIR: annotated photos

A variant that changes the light is applied in linear light, as a lamp or a camera's gain
would: the photo's sRGB is undone first and redone after.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from _common import add_model_option, labelled_boards_or_exit, markdown_table, recognizer_for, set_names

import cv2
import numpy as np
import numpy.typing as npt

from core import Card, find_sets
from setfinder.progress import progress
from vision.imageio import load_photo
from vision.overlay import draw_board
from vision.photo_effects import dim_sensor, lamp_glare

Image = npt.NDArray[np.uint8]


def _linear(image: Image) -> npt.NDArray[np.float32]:
    return (image.astype(np.float32) / 255.0) ** 2.2


def _display(linear: npt.NDArray[np.float32]) -> Image:
    return (np.clip(linear, 0.0, 1.0) ** (1 / 2.2) * 255.0 + 0.5).astype(np.uint8)


def _lit(gains_bgr: tuple[float, float, float]) -> Callable[[Image], Image]:
    def change(image: Image) -> Image:
        return _display(_linear(image) * np.array(gains_bgr, np.float32))
    return change


def _dim_and_noisy(image: Image) -> Image:
    """A third of the light, the gain turned up 2x: the noise of a dim room."""
    return dim_sensor(image, np.random.default_rng(1), exposure=0.33, read_noise=0.004, brightness=0.66)


def _dark_room(image: Image) -> Image:
    """About a sixth of the light, the gain turned up 3x: the grain of a dark room."""
    return dim_sensor(image, np.random.default_rng(2), exposure=0.15, read_noise=0.003, brightness=0.45)


def _uneven(image: Image) -> Image:
    """A lamp off to one side: the light falls to a third across the photo."""
    width = image.shape[1]
    ramp = np.linspace(1.0, 0.33, width, dtype=np.float32)[None, :, None]
    return _display(_linear(image) * ramp)


def _smaller(image: Image) -> Image:
    """A low-resolution camera: 640 pixels on the long side."""
    scale = 640 / max(image.shape[:2])
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image


def _blurred(image: Image) -> Image:
    """Slightly out of focus, for a 960-pixel frame (blur grows with the photo)."""
    sigma = 1.2 * max(image.shape[:2]) / 960
    return cv2.GaussianBlur(image, (0, 0), sigma)


def _compressed(image: Image) -> Image:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 30])
    assert ok
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def _camera_shake(image: Image) -> Image:
    """The camera moving sideways while the shutter is open: a blur 0.6% of the photo's long side
    (6 pixels for a 960-pixel frame) along one direction."""
    length = max(3, int(0.006 * max(image.shape[:2]))) | 1
    return cv2.blur(image, (length, 1))


def _faded_print(image: Image) -> Image:
    """Another deck's paler, greyer print (or a photo's colour washed out): every colour's
    saturation cut to 30% in HSV, its brightest channel kept, so that inks turn light."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hsv[..., 1] = (hsv[..., 1].astype(np.float32) * 0.3 + 0.5).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def _table_colour(image: Image) -> tuple[float, ...]:
    """The median colour of the photo's edge, to fill what a change brings into view with
    (smearing the edge outwards would draw pale streaks up to the cards)."""
    edge = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    return tuple(float(v) for v in np.median(edge, axis=0))


def _turned(degrees: float) -> Callable[[Image], Image]:
    """The camera turned by ``degrees`` about its axis: the photo rotated, enlarged to hold all
    of it."""
    def change(image: Image) -> Image:
        height, width = image.shape[:2]
        matrix = cv2.getRotationMatrix2D((width / 2, height / 2), degrees, 1.0)
        cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
        new_width, new_height = int(height * sin + width * cos), int(height * cos + width * sin)
        matrix[0, 2] += (new_width - width) / 2
        matrix[1, 2] += (new_height - height) / 2
        return cv2.warpAffine(image, matrix, (new_width, new_height), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=_table_colour(image))
    return change


def _tilted(image: Image) -> Image:
    """A camera tilted further: the far (top) edge of the photo squeezed to 70% of its width.
    What comes into view at the sides is filled with the table's colour."""
    height, width = image.shape[:2]
    source = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    target = np.float32([[0.15 * width, 0.1 * height], [0.85 * width, 0.1 * height], [width, height], [0, height]])
    matrix = cv2.getPerspectiveTransform(source, target)
    return cv2.warpPerspective(image, matrix, (width, height), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=_table_colour(image))


VARIANTS: dict[str, Callable[[Image], Image]] = {
    "as taken": lambda image: image,
    "turned a quarter": lambda image: cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE),
    "upside down": lambda image: cv2.rotate(image, cv2.ROTATE_180),
    "turned 30 degrees": _turned(30),
    "640 px camera": _smaller,
    "warm lamp": _lit((0.55, 0.85, 1.0)),
    "tungsten bulb": _lit((0.35, 0.7, 1.0)),
    "cool daylight": _lit((1.0, 0.9, 0.7)),
    "overexposed": _lit((1.9, 1.9, 1.9)),
    # (A camera metering on a dark table: the cards' paper clipped white, thin inks too.)
    "overexposed 3x": _lit((3.0, 3.0, 3.0)),
    "overexposed 4x": _lit((4.0, 4.0, 4.0)),
    "dim, noisy": _dim_and_noisy,
    "dark room": _dark_room,
    "uneven light": _uneven,
    "glare spot": lamp_glare,
    "faded print": _faded_print,
    "out of focus": _blurred,
    "camera shake": _camera_shake,
    "JPEG quality 30": _compressed,
    "tilted camera": _tilted,
}
# The variants that move the cards in the photo; the others leave every card where it was.
MOVES_CARDS = {"turned a quarter", "upside down", "turned 30 degrees", "640 px camera", "tilted camera"}


def _card_map(image: Image, outlines: list[npt.NDArray[np.float32]]) -> Image:
    """An image the size of ``image``, each outline filled with its index + 1, 0 elsewhere (in
    all three channels, so that a variant moves it as it moves a photo)."""
    painted = np.zeros(image.shape[:2], np.uint8)
    for index, corners in enumerate(outlines):
        cv2.fillConvexPoly(painted, np.round(corners).astype(np.int32), index + 1)
    return cv2.merge([painted] * 3)


def _labels_at(board_cards: list, where: Image, truth: list[Card]) -> list[Card | None]:
    """For each card found, the labelled card painted under its centre in ``where`` (None when
    none is, or when an earlier card found took it)."""
    taken, labels = set(), []
    for seen in board_cards:
        x, y = np.mean(np.asarray(seen.corners, np.float32), axis=0)
        inside = 0 <= int(y) < where.shape[0] and 0 <= int(x) < where.shape[1]
        index = int(where[int(y), int(x), 0]) - 1 if inside else -1
        labels.append(truth[index] if 0 <= index < len(truth) and index not in taken else None)
        taken.add(index)
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write annotated photos of every variant here")
    add_model_option(parser)
    args = parser.parse_args()
    boards = labelled_boards_or_exit()
    recognizer = recognizer_for(args.model)
    photos = [(dataset, path, [Card.parse(text) for text in labels], load_photo(path).image)
              for dataset, path, labels in boards]
    totals: dict[str, Counter[str]] = {name: Counter() for name in VARIANTS}
    wrong: dict[str, list[str]] = {name: [] for name in VARIANTS}
    # The labels have no corners: the photo as taken, whose cards are all found in the labels'
    # reading order, lends them its outlines.
    maps = {}
    for dataset, path, truth, image in photos:
        taken = recognizer.read_board(image)
        if len(taken.cards) != len(truth):
            raise SystemExit(f"{path.name}: {len(taken.cards)} cards found as taken, {len(truth)} labelled: "
                             "the cards of its variants cannot be told apart")
        maps[path] = _card_map(image, [np.asarray(s.corners, np.float32) for s in taken.cards])
    work = [(name, photo) for name in VARIANTS for photo in photos]
    for name, (dataset, path, truth, image) in progress(work, label="photos"):
        changed = VARIANTS[name](image)
        board = recognizer.read_board(changed)
        seen = [s.card for s in board.cards if not s.partial]
        found = [s for s in board.cards if not s.partial]
        labels = _labels_at(found, VARIANTS[name](maps[path]) if name in MOVES_CARDS else maps[path], truth)
        # A wrong reading the reader did not flag is the error that misleads a player.
        right = sum(s.card == label for s, label in zip(found, labels))
        unflagged = sum(label is not None and s.card != label and not s.uncertain for s, label in zip(found, labels))
        total = totals[name]
        # (A card too many or too few is told by the count alone.)
        total.update(truth=len(truth), found=len(board.cards), right=right,
                     missed=max(0, len(truth) - len(seen)), extra=max(0, len(seen) - len(truth)),
                     uncertain=sum(s.uncertain for s in board.cards),
                     unflagged=unflagged, sets_right=int(set_names(seen) == set_names(truth)), boards=1,
                     claimed_no_set=int(board.verdict == "no-set" and bool(find_sets(truth))))
        if set_names(seen) != set_names(truth):
            wrong[name].append(path.stem)
        if args.out:
            folder = Path(args.out) / name.replace(" ", "-").replace(",", "")
            folder.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(folder / f"{dataset}-{path.stem}.png"), draw_board(changed, board))
    rows = []
    for name, total in totals.items():
        n = total["truth"]
        rows.append([name, f"{total['found']} / {n}", total["missed"], total["extra"],
                     f"{100 * total['right'] / n:.1f}%",
                     total["uncertain"], total["unflagged"], f"{total['sets_right']} / {total['boards']}",
                     total["claimed_no_set"], ", ".join(wrong[name]) or "-"])
    print(markdown_table(["variant", "cards found / labelled", "missed", "too many", "read right", "uncertain",
                          "wrong, not flagged", "SET lists exact", "'no SET' wrongly", "SET list wrong on"],
                         rows))


if __name__ == "__main__":
    main()
