"""The board's JSON schema, its verdict text, reading order and the overlay, on hand-built boards."""

from __future__ import annotations

import numpy as np

from core import Card
from core.board import Board, SeenCard
from vision.overlay import draw_board, set_colour
from vision.recognize import reading_order
from vision.report import board_table, board_to_json, verdict_text


def seen(text: str, x: float, y: float, *, uncertain: bool = False, partial: bool = False) -> SeenCard:
    corners = ((x, y), (x + 60, y), (x + 60, y + 90), (x, y + 90))
    return SeenCard(Card.parse(text), corners, 0.6 if uncertain else 0.99, partial, uncertain,
                    {"count": 0.99, "color": 0.99, "shading": 0.99, "shape": 0.99})


SET_BOARD = Board((seen("1 red solid oval", 10, 10), seen("2 green striped squiggle", 100, 10),
                   seen("3 purple outline diamond", 190, 10), seen("1 red solid diamond", 10, 120)),
                  width=320, height=240)


def test_json_schema_exact() -> None:
    record = board_to_json(SET_BOARD)
    assert set(record) == {"width", "height", "cards", "sets", "verdict"}
    card = record["cards"][0]
    assert set(card) == {"id", "count", "color", "shading", "shape", "corners", "confidence",
                         "partial", "uncertain"}
    assert card["id"] == 1 and card["count"] == 1 and card["color"] == "red"
    assert card["corners"] == [[10, 10], [70, 10], [70, 100], [10, 100]]
    assert record["sets"] == [[1, 2, 3]]
    assert record["verdict"] == "sets"


def test_verdicts() -> None:
    assert verdict_text(SET_BOARD) == "1 SET: (1 2 3)"
    no_set = Board((seen("1 red solid oval", 0, 0), seen("1 red solid squiggle", 70, 0),
                    seen("2 red solid oval", 140, 0)), 300, 100)
    assert no_set.verdict == "no-set"
    assert verdict_text(no_set) == "No SET among 3 cards: deal three more"


def test_uncertain_card_blocks_no_set_call() -> None:
    board = Board((seen("1 red solid oval", 0, 0), seen("1 red solid squiggle", 70, 0),
                   seen("2 red solid oval", 140, 0, uncertain=True)), 300, 100)
    assert board.verdict == "uncertain"
    text = verdict_text(board)
    assert text.startswith("Uncertain") and "card 3" in text


def test_partial_card_not_in_sets() -> None:
    board = Board((seen("1 red solid oval", 0, 0), seen("2 green striped squiggle", 70, 0),
                   seen("3 purple outline diamond", 140, 0, partial=True)), 300, 100)
    assert board.sets() == []
    assert board.verdict == "uncertain"
    assert board_to_json(board)["cards"][2]["partial"] is True
    assert "partial" in board_table(board)


def test_reading_order_rows_then_columns() -> None:
    # Two rows, slightly crooked, given shuffled.
    quads = [((x, y), (x + 50, y), (x + 50, y + 80), (x, y + 80))
             for x, y in [(200, 108), (10, 100), (100, 95), (105, 200), (8, 210)]]
    assert reading_order(quads) == [1, 2, 0, 4, 3]


def test_overlay_draws_each_set_in_its_colour() -> None:
    image = np.full((240, 320, 3), 40, np.uint8)
    annotated = draw_board(image, SET_BOARD, banner="")
    assert annotated.shape == image.shape and not np.array_equal(annotated, image)
    assert image.max() == 40  # the input is left untouched
    colour = np.array(set_colour(0))
    hits = np.all(np.abs(annotated.astype(int) - colour) < 40, axis=2)
    assert hits[:, :280].any()  # cards 1-3 ringed in the first SET colour
    assert not hits[120:, :90].any()  # card 4 is in no SET


def test_overlay_scales_to_a_smaller_image() -> None:
    small = np.full((120, 160, 3), 40, np.uint8)
    annotated = draw_board(small, SET_BOARD)
    assert annotated.shape == small.shape
