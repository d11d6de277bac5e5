"""Drawing a board on its image: outlines, position numbers, each SET in its own colour, verdict.

Photo mode writes these images, live mode shows them, the referee draws claims on them: one
drawing function for all.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from core.board import Board
from vision.report import verdict_text

# BGR colours for SETs, chosen to stand apart from each other, from the red, green and purple
# ink on the cards, and from the orange that marks uncertain cards.
SET_COLOURS: tuple[tuple[int, int, int], ...] = (
    (255, 200, 0), (255, 0, 255), (0, 255, 255), (255, 90, 60), (120, 255, 120),
    (180, 105, 255), (255, 255, 120), (60, 60, 255), (200, 255, 0), (255, 160, 200),
)
CARD_OUTLINE = (235, 235, 235)
UNCERTAIN = (0, 140, 255)
PARTIAL = (150, 150, 150)
HINT = (0, 255, 255)


def set_colour(index: int) -> tuple[int, int, int]:
    """The colour of the ``index``-th SET (cycling through the palette)."""
    return SET_COLOURS[index % len(SET_COLOURS)]


def draw_board(image: npt.NDArray[np.uint8], board: Board, *,
               sets: Sequence[tuple[int, int, int]] | None = None,
               set_numbers: Sequence[int] | None = None,
               banner: str | None = None, status: str | None = None,
               hint: int | None = None) -> npt.NDArray[np.uint8]:
    """An annotated copy of ``image`` (BGR uint8, any size with the board's aspect).

    ``sets``: 0-based index triples to highlight (default: every SET on the board);
    ``set_numbers``: the colour number of each highlighted SET (default 0, 1, 2...), so a SET
    keeps its colour when stepping through them one at a time; ``banner``: the top line
    (default: the board's verdict); ``status``: a small line at the bottom; ``hint``: a card
    index to mark as "part of a SET" without revealing the rest.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be BGR uint8 (H, W, 3), got {image.dtype} {image.shape}")
    canvas = image.copy()
    height, width = canvas.shape[:2]
    to_image = width / board.width if board.width else 1.0
    unit = max(1, round(max(width, height) / 500))  # line width that reads at any image size
    sets = board.sets() if sets is None else list(sets)
    numbers = list(range(len(sets))) if set_numbers is None else list(set_numbers)

    quads = [np.asarray(seen.corners, dtype=np.float32) * to_image for seen in board.cards]
    memberships: dict[int, list[int]] = {}
    for number, triple in zip(numbers, sets):
        for card in triple:
            memberships.setdefault(card, []).append(number)

    for index, (seen, quad) in enumerate(zip(board.cards, quads)):
        colour = PARTIAL if seen.partial else (UNCERTAIN if seen.uncertain else CARD_OUTLINE)
        _polyline(canvas, quad, colour, unit, dashed=seen.uncertain or seen.partial)
        # A card in several SETs shows one ring per SET, nested inwards.
        for ring, number in enumerate(memberships.get(index, [])):
            _polyline(canvas, _inset(quad, 0.05 + 0.06 * ring), set_colour(number), 2 * unit)
        if hint == index:
            _polyline(canvas, _inset(quad, -0.04), HINT, 3 * unit, dashed=True)
        label = str(index + 1) + ("?" if seen.uncertain and not seen.partial else "")
        # In the card's corner, where no symbol is printed, so the number hides nothing.
        anchor = quad[0] + (quad.mean(axis=0) - quad[0]) * 0.22
        _label(canvas, label, anchor, unit, colour)

    banner = verdict_text(board) if banner is None else banner
    if banner:
        _text_bar(canvas, banner, top=True, unit=unit)
    if status:
        _text_bar(canvas, status, top=False, unit=unit, small=True)
    return canvas


def _inset(quad: npt.NDArray[np.float32], fraction: float) -> npt.NDArray[np.float32]:
    center = quad.mean(axis=0)
    return quad + (center - quad) * fraction


def _polyline(canvas: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32],
              colour: tuple[int, int, int], thickness: int, dashed: bool = False) -> None:
    points = np.round(quad).astype(np.int32)
    if not dashed:
        cv2.polylines(canvas, [points], True, colour, thickness, cv2.LINE_AA)
        return
    for start, end in zip(quad, np.roll(quad, -1, axis=0)):
        length = float(np.hypot(*(end - start)))
        dashes = max(2, int(length / (8 * thickness + 6)))
        for k in range(0, dashes, 2):
            a = start + (end - start) * (k / dashes)
            b = start + (end - start) * (min(k + 1, dashes) / dashes)
            cv2.line(canvas, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)),
                     colour, thickness, cv2.LINE_AA)


def _label(canvas: npt.NDArray[np.uint8], text: str, center: npt.NDArray[np.float32],
           unit: int, colour: tuple[int, int, int]) -> None:
    scale = 0.5 * unit
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, unit)
    radius = int(max(tw, th) * 0.6) + 2 * unit
    c = (int(center[0]), int(center[1]))
    cv2.circle(canvas, c, radius, (30, 30, 30), -1, cv2.LINE_AA)
    cv2.circle(canvas, c, radius, colour, unit, cv2.LINE_AA)
    cv2.putText(canvas, text, (c[0] - tw // 2, c[1] + th // 2), cv2.FONT_HERSHEY_SIMPLEX, scale,
                (255, 255, 255), unit, cv2.LINE_AA)


def _text_bar(canvas: npt.NDArray[np.uint8], text: str, *, top: bool, unit: int,
              small: bool = False) -> None:
    height, width = canvas.shape[:2]
    scale = (0.45 if small else 0.6) * unit
    thickness = max(1, unit if not small else unit // 2 + 1)
    # Shrink long lines so they fit the image width.
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    if tw > width - 20:
        scale *= (width - 20) / tw
        (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    pad = 6 * unit
    bar = th + base + 2 * pad
    y0 = 0 if top else height - bar
    region = canvas[y0:y0 + bar]
    region[:] = (region * 0.35).astype(np.uint8)
    cv2.putText(canvas, text, (10, y0 + pad + th), cv2.FONT_HERSHEY_SIMPLEX, scale,
                (255, 255, 255), thickness, cv2.LINE_AA)
