"""`StreamRecognizer`: the cards of a still table are found once and re-read in each frame; any
change in the picture (a card taken, a hand, the camera) and every few frames, they are found
afresh."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.cardreader import DEFAULT_MODEL_PATH
from vision.recognize import Recognizer, StreamRecognizer

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL_PATH.is_file(),
                                reason="models/card_reader.json absent: run `setfinder train`")


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.fixture(scope="module")
def table() -> tuple[np.ndarray, dict]:
    from vision.scene import generate_scene

    return generate_scene(21, 12, size=(960, 720), table="felt", effects=0.3, partial=False,
                          overlap=False, distractors=False, deal="sets")


def noisy(image: np.ndarray, seed: int) -> np.ndarray:
    """The frame again, with fresh sensor noise as a camera would send it."""
    noise = np.random.default_rng(seed).normal(0, 2.5, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def cards_of(board) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(str(seen.card) for seen in board.cards)


def without_card(image: np.ndarray, corners: list[list[float]]) -> np.ndarray:
    """The table with one card taken away: its place painted in the felt's colour."""
    taken = image.copy()
    felt = np.median(image[:20, :20].reshape(-1, 3), axis=0)
    cv2.fillConvexPoly(taken, np.round(corners).astype(np.int32), felt.tolist())
    return taken


def test_a_still_table_is_searched_once_and_read_in_every_frame(recognizer: Recognizer, table) -> None:
    image, truth = table
    stream = StreamRecognizer(recognizer)
    boards = [stream.read_board(noisy(image, seed)) for seed in range(4)]
    assert (stream.searches, stream.reuses) == (1, 3)
    expected = sorted(card["card"] for card in truth["cards"])
    assert all(cards_of(board) == expected for board in boards)
    # Re-read where found, but from each frame's own pixels: the confidences differ a little.
    assert len({round(boards[i].cards[0].confidence, 6) for i in range(4)}) > 1
    assert boards[1].cards[0].corners == boards[3].cards[0].corners


def test_a_card_taken_makes_a_new_search_once_the_picture_settles(recognizer: Recognizer, table) -> None:
    image, truth = table
    stream = StreamRecognizer(recognizer)
    stream.read_board(noisy(image, 0))
    gone = truth["cards"][5]
    taken = without_card(image, gone["corners"])
    expected = sorted(card["card"] for card in truth["cards"] if card is not gone)
    # The first frame without it could be one of a hand moving: the cards away from the change
    # are re-read, none searched for; the next frame like it is searched.
    board = stream.read_board(noisy(taken, 1))
    assert (stream.searches, stream.while_moving) == (1, 1) and cards_of(board) == expected
    board = stream.read_board(noisy(taken, 2))
    assert stream.searches == 2 and cards_of(board) == expected
    assert stream.read_board(noisy(taken, 3)) and stream.reuses == 1


def test_while_the_picture_changes_only_cards_away_from_the_change_are_read(recognizer: Recognizer,
                                                                            table) -> None:
    image, truth = table
    stream = StreamRecognizer(recognizer)
    stream.read_board(noisy(image, 0))
    boards = []
    for step in range(4):  # a hand sliding in over the bottom row
        frame = noisy(image, step + 1)
        cv2.rectangle(frame, (300 + 40 * step, 480), (460 + 40 * step, 719), (120, 160, 210), -1)
        boards.append(stream.read_board(frame))
    assert (stream.searches, stream.while_moving) == (1, 4)
    top = sorted(card["card"] for card in truth["cards"] if max(y for _, y in card["corners"]) < 460)
    assert top and all(set(top) <= set(cards_of(board)) for board in boards)
    assert all(len(board.cards) < len(truth["cards"]) for board in boards)
    # The hand gone and nothing taken: the picture is the keyframe's again, all re-read.
    board = stream.read_board(noisy(image, 9))
    assert stream.searches == 1 and cards_of(board) == sorted(card["card"] for card in truth["cards"])


def test_every_few_reads_the_cards_are_searched_for_again_after_the_answer(recognizer: Recognizer,
                                                                           table) -> None:
    image, _ = table
    stream = StreamRecognizer(recognizer, refresh_every=3)
    searches = []
    for seed in range(6):
        stream.read_board(noisy(image, seed))
        searches.append(stream.searches)
    # The first read searches; the third read is answered from the old outlines and its search
    # put off, to be made by the next read (no one called catch_up) before it is answered.
    assert searches == [1, 1, 1, 2, 2, 2] and stream.reuses == 5
    assert stream.catch_up() and stream.searches == 3
    assert not stream.catch_up() and stream.searches == 3


def test_a_picture_that_never_settles_is_still_searched_now_and_then(recognizer: Recognizer, table) -> None:
    image, _ = table
    stream = StreamRecognizer(recognizer, refresh_every=2)
    stream.read_board(noisy(image, 0))
    for step in range(10):  # a screen in view, scrolling: every frame unlike the one before
        frame = noisy(image, step + 1)
        cv2.rectangle(frame, (24 * step, 0), (24 * step + 60, 90), (200, 200, 200), -1)
        stream.read_board(frame)
    # Searched first, then once 8 reads (4 x refresh_every) went without: the 9th read.
    assert stream.searches == 2 and stream.while_moving == 9


def test_a_frame_of_another_size_is_searched(recognizer: Recognizer, table) -> None:
    image, _ = table
    stream = StreamRecognizer(recognizer)
    stream.read_board(image)
    board = stream.read_board(cv2.resize(image, (640, 480), interpolation=cv2.INTER_AREA))
    assert stream.searches == 2 and (board.width, board.height) == (640, 480)


def test_refresh_every_must_be_positive(recognizer: Recognizer) -> None:
    with pytest.raises(ValueError, match="refresh_every"):
        StreamRecognizer(recognizer, refresh_every=0)


def test_a_refresh_that_outlines_a_card_worse_keeps_its_old_outline(recognizer: Recognizer, table,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The picture has not changed, so a card found again keeps whichever outline reads it more
    surely; a card the refresh finds for the first time is added."""
    import dataclasses

    from vision import recognize
    from vision.canonical import warp_card
    from vision.detect import find_cards
    from vision.quad import grow_quad

    image, truth = table
    quads = find_cards(image)
    assert len(quads) == len(truth["cards"])
    # The refresh outlines one card loosely, its shadow and a strip of felt taken for paper.
    loose_index = next(i for i, quad in enumerate(quads) if i > 0
                       and recognizer.reader.read([warp_card(image, quad.corners)])[0].card.shading == "striped")
    loose = dataclasses.replace(quads[loose_index], corners=grow_quad(quads[loose_index].corners, 9.0))
    tight, wide = recognizer.reader.read([warp_card(image, q.corners) for q in (quads[loose_index], loose)])
    assert wide.confidence < tight.confidence  # the premise: the loose outline reads less surely
    searches = iter([quads[1:], [loose if i == loose_index else q for i, q in enumerate(quads)]])
    monkeypatch.setattr(recognize, "find_cards", lambda _: next(searches))
    stream = StreamRecognizer(recognizer, refresh_every=1)
    first = stream.read_board(noisy(image, 0))
    assert len(first.cards) == len(quads) - 1  # the first search missed a card
    stream.read_board(noisy(image, 1))  # a still read: the refresh is put off ...
    assert stream.catch_up() and stream.searches == 2  # ... and made
    board = stream.read_board(noisy(image, 2))
    assert len(board.cards) == len(quads)
    kept = [seen.corners for seen in board.cards]
    center = quads[loose_index].corners.mean(axis=0)
    held = min(kept, key=lambda c: float(np.linalg.norm(np.mean(c, axis=0) - center)))
    assert np.allclose(np.sort(np.asarray(held), axis=0), np.sort(quads[loose_index].corners, axis=0), atol=0.01)
