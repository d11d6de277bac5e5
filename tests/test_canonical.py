"""The canonical card view: warping known corners, and telling a card warped sideways."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from core import Card, full_deck
from vision.canonical import CARD_HEIGHT, CARD_WIDTH, is_sideways, resize_crop, warp_card
from vision.render import render_card


def test_warp_recovers_a_card_drawn_at_known_corners() -> None:
    card = render_card(Card.parse("3 purple solid diamond"))
    canvas = np.full((400, 500, 3), 30, np.uint8)
    corners = np.array([[300, 60], [420, 140], [300, 330], [180, 250]], np.float32)  # turned
    matrix = cv2.getPerspectiveTransform(
        np.array([[0, 0], [CARD_WIDTH - 1, 0], [CARD_WIDTH - 1, CARD_HEIGHT - 1], [0, CARD_HEIGHT - 1]], np.float32),
        corners)
    cv2.warpPerspective(card, matrix, (500, 400), canvas, borderMode=cv2.BORDER_TRANSPARENT)
    back = warp_card(canvas, corners)
    assert back.shape == (CARD_HEIGHT, CARD_WIDTH, 3)
    inner = (slice(15, -15), slice(15, -15))
    assert np.abs(back[inner].astype(int) - card[inner].astype(int)).mean() < 12


@pytest.mark.parametrize("card", full_deck()[::2], ids=str)
def test_sideways_only_when_turned(card: Card) -> None:
    upright = render_card(card)
    assert not is_sideways(upright)
    # Warped with the wrong pair of sides as top and bottom: turned and squeezed to portrait.
    sideways = cv2.resize(cv2.rotate(upright, cv2.ROTATE_90_CLOCKWISE), (CARD_WIDTH, CARD_HEIGHT))
    assert is_sideways(sideways)


def test_resize_crop_turns_landscape_crops() -> None:
    landscape = np.zeros((100, 160, 3), np.uint8)
    assert resize_crop(landscape).shape == (CARD_HEIGHT, CARD_WIDTH, 3)
    with pytest.raises(ValueError):
        warp_card(np.zeros((10, 10), np.uint8), np.zeros((4, 2)))
