"""Photo mode on every labelled table photo in ../shared (skipped when ../shared is absent).

These photos are a development set, so the bars here are what the pipeline must never fall
below, not a tuning target: every card found with no false cards, and nearly every card read.
`bench/bench_boards.py` prints the full figures.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from core import Card
from tests.conftest import shared_dataset
from vision.canonical import warp_card
from vision.cardreader import DEFAULT_MODEL_PATH
from vision.imageio import load_photo
from vision.photo_effects import dim_sensor, lamp_glare
from vision.recognize import Recognizer

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL_PATH.is_file(),
                                reason="models/card_reader.json absent: run `setfinder train`")


def labelled(name: str) -> list[tuple[Path, list[Card]]]:
    folder = shared_dataset(name)
    index = json.loads((folder / "boards.json").read_text())
    return [(folder / "boards" / photo, [Card.parse(text) for text in entry["cards"]])
            for photo, entry in sorted(index.items())]


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.mark.parametrize("dataset", ["set-photos", "errcw-set-solver"])
def test_every_card_found_and_read(dataset: str, recognizer: Recognizer) -> None:
    right = total = 0
    for path, truth in labelled(dataset):
        photo = load_photo(path)
        board = recognizer.read_board(photo.image, photo.scale)
        assert len(board.cards) == len(truth), f"{path.name}: found {len(board.cards)} of {len(truth)}"
        assert not any(seen.partial for seen in board.cards), path.name
        right += sum(seen.card == card for seen, card in zip(board.cards, truth))
        total += len(truth)
    assert right / total >= 0.95, f"{right}/{total} cards read right"


def test_wrong_readings_are_mostly_flagged(recognizer: Recognizer) -> None:
    """A misread card should carry the uncertain flag: a confident wrong reading is the worst case."""
    confident_wrong = total = 0
    for dataset in ("set-photos", "errcw-set-solver"):
        for path, truth in labelled(dataset):
            photo = load_photo(path)
            board = recognizer.read_board(photo.image, photo.scale)
            for seen, card in zip(board.cards, truth):
                confident_wrong += seen.card != card and not seen.uncertain
                total += 1
    assert confident_wrong <= 0.02 * total


def test_in_a_dark_room_wrong_readings_are_still_flagged(recognizer: Recognizer) -> None:
    """About a sixth of the light and the camera's gain turned up 3x, sensor noise added in
    linear light: the camera's gamma spreads that noise over dark ink, which a reader trained
    without it took for stripes, surely (7 of these 189 cards, where the bar is 2%)."""
    rng = np.random.default_rng(2)
    confident_wrong = total = 0
    for dataset in ("set-photos", "errcw-set-solver"):
        for path, truth in labelled(dataset):
            dark = dim_sensor(load_photo(path).image, rng, exposure=0.15, read_noise=0.003, brightness=0.45)
            board = recognizer.read_board(dark)
            sure = Counter(seen.card for seen in board.cards if not seen.uncertain)
            # (Compared as a set: a card read as another card of the table counts once wrong.)
            confident_wrong += sum((sure - Counter(truth)).values())
            total += len(truth)
    assert confident_wrong <= 0.02 * total, f"{confident_wrong} of {total} cards read wrong and sure"


def test_stripes_a_shaking_camera_blurred_away_are_not_read_solid_and_sure(recognizer: Recognizer) -> None:
    """The camera moving sideways by 0.6% of the photo's width while the shutter is open (as
    bench_robustness's "camera shake"): on the errcw `c.jpg` the blur runs across a green
    striped squiggle's stripes and fills them in. The reader before 2026-12-07 read it solid at
    0.98 and sure; its shading features lie far from every solid card it was trained on, and
    such a reading is uncertain whatever the network says (`CardReading.unfamiliar`)."""
    path = shared_dataset("errcw-set-solver") / "boards" / "c.jpg"
    image = load_photo(path).image
    length = max(3, int(0.006 * max(image.shape[:2]))) | 1
    shaken = cv2.blur(image, (length, 1))
    board = recognizer.read_board(shaken)
    truth = Counter(card for photo, cards in labelled("errcw-set-solver") if photo.name == "c.jpg" for card in cards)
    sure = Counter(seen.card for seen in board.cards if not seen.uncertain)
    assert not sure - truth, f"read wrong and sure: {sorted(map(str, sure - truth))}"
    assert len(board.cards) == sum(truth.values())
    # Stripes read solid are flagged for lying far from the solid cards trained on, whatever
    # the network's confidence (with the reader of 2026-12-07, the one card so misread).
    for seen in board.cards:
        if seen.card not in truth and seen.card.shading == "solid":
            reading = recognizer.reader.read([warp_card(shaken, np.asarray(seen.corners, np.float32))])[0]
            assert reading.unfamiliar, f"{seen.card} read at {reading.confidence:.2f}, not flagged unfamiliar"


def test_under_a_lamps_glare_no_card_is_read_wrong_and_sure(recognizer: Recognizer) -> None:
    """A lamp's reflection a third of the photo across (`lamp_glare`, bench_robustness's
    "glare spot"): the cards at its peak are washed out, their paper clipped white. On the
    errcw `a.jpg` a purple solid squiggle washed pale was read striped at 0.99, and the board
    was called "no SET"; a card whose paper is clipped and whose ink is far fainter than the
    other cards' is uncertain (`vision.recognize._washed_out`)."""
    confident_wrong = total = 0
    for dataset in ("set-photos", "errcw-set-solver"):
        for path, truth in labelled(dataset):
            board = recognizer.read_board(lamp_glare(load_photo(path).image))
            sure = Counter(seen.card for seen in board.cards if not seen.uncertain)
            confident_wrong += sum((sure - Counter(truth)).values())
            total += len(truth)
            assert board.verdict != "no-set", f"{path.name}: 'no SET' called under glare"
    assert confident_wrong == 0, f"{confident_wrong} of {total} cards read wrong and sure"


def test_under_a_lamps_glare_no_card_is_read_wrong_and_sure_at_its_place(recognizer: Recognizer) -> None:
    """As above, each card compared with the label of the card at its place (the photo as
    taken is read in the labels' order), not the board as a multiset: on
    `webcam-20170529_203823` a red solid squiggle under the glare was read striped at 0.99,
    hidden in a multiset by the board's own red striped squiggle. A striped reading whose
    symbols hold strong, even ink inside is doubted (`vision.cardreader._evenly_filled_striped`)."""
    wrong = []
    for dataset in ("set-photos", "errcw-set-solver"):
        for path, truth in labelled(dataset):
            image = load_photo(path).image
            taken = recognizer.read_board(image)
            assert [seen.card for seen in taken.cards] == truth
            places = np.array([np.mean(seen.corners, axis=0) for seen in taken.cards])
            for seen in recognizer.read_board(lamp_glare(image)).cards:
                nearest = int(np.argmin(np.hypot(*(places - np.mean(seen.corners, axis=0)).T)))
                if not seen.uncertain and not seen.partial and seen.card != truth[nearest]:
                    wrong.append(f"{path.name}: {truth[nearest]} read {seen.card} at {seen.confidence:.2f}")
    assert not wrong, wrong
