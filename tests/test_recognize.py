"""The recognition path's own steps after the first reading: outlines the reader's ink shows to
be off the card are made right and read again."""

from __future__ import annotations

import numpy as np
import pytest

from core.cards import Card
from vision.cardreader import DEFAULT_MODEL_PATH, CardReading
from vision.detect import CardQuad
from vision.recognize import Recognizer
from vision.render import render_card

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL_PATH.is_file(),
                                reason="models/card_reader.json absent: run `setfinder train`")


def _table_with(cards: dict[tuple[int, int], str]) -> np.ndarray:
    """A dark table (480 x 640) with the named cards drawn upright, each at its (x, y) top-left."""
    image = np.full((480, 640, 3), (45, 60, 40), np.uint8)
    for (x, y), text in cards.items():
        image[y:y + 250, x:x + 160] = render_card(Card.parse(text), background=(45, 60, 40))
    return image


class _SureReader:
    """Reads every card as "1 red solid oval", sure of every attribute: what the board's own
    checks flag is then theirs alone."""

    def read(self, cards: list[np.ndarray]) -> list[CardReading]:
        sure = {"count": 1.0, "color": 1.0, "shading": 1.0, "shape": 1.0}
        return [CardReading(Card.parse("1 red solid oval"), sure, 1.0, False) for _ in cards]


def _outline(x: float, y: float, height: float) -> CardQuad:
    corners = np.array([[x, y], [x + 159, y], [x + 159, y + height - 1], [x, y + height - 1]], np.float32)
    return CardQuad(corners, False, score=1.0)


@pytest.mark.parametrize("missing_end", ["top", "bottom"])
@pytest.mark.parametrize("length", [167, 180])
def test_an_outline_ending_two_symbols_down_a_card_of_three_is_made_whole(missing_end: str, length: int) -> None:
    # An outline that ends two symbols down a card of three (a pale stripe or a touching card's
    # edge taken for its end: dev 5062, 5107) reads "2", its symbols stretched along the card.
    # Made longer at the end that holds no table, half as long again or as much as centres its
    # symbols (bench 1169, dev 6098), it reads "3", surely.
    image = _table_with({(80, 120): "3 green solid squiggle", (400, 120): "2 red striped oval"})
    short_y = 120 if missing_end == "bottom" else 120 + 250 - length
    board, quads, _ = Recognizer().read_board_at(image, [_outline(80, short_y, length), _outline(400, 120, 250)])
    by_text = {str(card.card): card for card in board.cards}
    assert set(by_text) == {"3 green solid squiggle", "2 red striped oval"}
    assert not any(card.uncertain for card in board.cards)
    whole = by_text["3 green solid squiggle"]
    assert np.abs(np.array(whole.corners).min(axis=0) - [80, 120]).max() < 4
    assert np.abs(np.array(whole.corners).max(axis=0) - [239, 369]).max() < 4


def test_an_outline_is_made_longer_only_where_no_other_card_lies() -> None:
    # Two cards laid end to end, the upper one outlined without its top third: made longer
    # downward, the outline would run over the lower card; upward, it is the whole card.
    image = np.full((640, 400, 3), (45, 60, 40), np.uint8)
    image[40:290, 120:280] = render_card(Card.parse("3 purple outline diamond"), background=(45, 60, 40))
    image[292:542, 120:280] = render_card(Card.parse("1 red solid oval"), background=(45, 60, 40))
    board, _, _ = Recognizer().read_board_at(image, [_outline(120, 123, 167), _outline(120, 292, 250)])
    upper, lower = sorted(board.cards, key=lambda card: np.mean(card.corners, axis=0)[1])
    assert (str(upper.card), str(lower.card)) == ("3 purple outline diamond", "1 red solid oval")
    assert not upper.uncertain and not lower.uncertain
    assert np.abs(np.array(upper.corners).min(axis=0) - [120, 40]).max() < 4
    assert np.abs(np.array(upper.corners).max(axis=0) - [279, 289]).max() < 4


def test_every_card_of_a_black_and_white_photo_is_uncertain_however_sure_the_reader_is() -> None:
    # The reader reads the grey inks as some colour, and may be sure of it: no colour shows,
    # so the board must not claim any.
    import cv2

    image = _table_with({(80, 120): "3 green solid squiggle", (400, 120): "2 red striped oval"})
    quads = [_outline(80, 120, 250), _outline(400, 120, 250)]
    recognizer = Recognizer(_SureReader())  # type: ignore[arg-type]
    in_colour, _, _ = recognizer.read_board_at(image, quads)
    assert not any(card.uncertain for card in in_colour.cards)
    grey = cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    in_grey, _, _ = recognizer.read_board_at(grey, quads)
    assert len(in_grey.cards) == 2 and all(card.uncertain for card in in_grey.cards)


def test_a_card_on_clipped_white_paper_with_faint_ink_is_uncertain_however_sure_the_reader_is() -> None:
    # Overexposed, a card's paper clips white and so do the light channels of its thin inks:
    # the reader may be sure of a wrong colour or shading. A solid card's strong ink, or faint
    # ink on paper not clipped, keeps its reading.
    import dataclasses

    image = _table_with({(20, 120): "1 green striped oval", (230, 120): "2 red solid oval",
                         (440, 120): "3 purple outline oval"})
    cards = [((20, 120), (255.0, 255.0, 255.0), 0.3),   # clipped paper, faint ink
             ((230, 120), (255.0, 255.0, 255.0), 0.8),  # clipped paper, strong ink
             ((440, 120), (230.0, 235.0, 240.0), 0.3)]  # faint ink on paper not clipped
    quads = [dataclasses.replace(_outline(x, y, 250), paper=paper, ink=ink) for (x, y), paper, ink in cards]
    board, _, _ = Recognizer(_SureReader()).read_board_at(image, quads)  # type: ignore[arg-type]
    by_place = sorted(board.cards, key=lambda card: np.mean(np.asarray(card.corners)[:, 0]))
    assert [card.uncertain for card in by_place] == [True, False, False]


@pytest.mark.parametrize("patch, kept", [((215, 175, 140), False),   # a pale cell of a blue cloth
                                         ((236, 236, 236), True),    # the cards' own paper, blank
                                         ((255, 255, 255), True)])   # clipped white: its tint lost
def test_a_blank_face_whose_paper_is_unlike_the_cards_paper_is_table_not_a_card(
        patch: tuple[int, int, int], kept: bool) -> None:
    # A pale cell of a checked cloth outlined as a card shows no symbol, and its paper has the
    # cloth's tint, not the deck's; a blank face on the deck's paper (or on paper clipped
    # white, whose tint is lost) may be a card and stays, uncertain.
    import dataclasses

    image = np.full((480, 880, 3), (45, 60, 40), np.uint8)
    faces = {20: "1 green striped oval", 230: "2 red solid oval", 440: "3 purple outline diamond"}
    for x, text in faces.items():
        image[120:370, x:x + 160] = render_card(Card.parse(text), background=(45, 60, 40))
    image[120:370, 650:810] = patch
    papers = [tuple(float(v) for v in np.median(image[130:360, x + 5:x + 15].reshape(-1, 3), axis=0))
              for x in (*faces, 650)]
    quads = [dataclasses.replace(_outline(x, 120, 250), paper=paper, ink=0.8)
             for x, paper in zip((*faces, 650), papers)]
    board, _, _ = Recognizer().read_board_at(image, quads)
    assert sorted(str(card.card) for card in board.cards if not card.uncertain) == sorted(faces.values())
    assert len(board.cards) == (4 if kept else 3)
