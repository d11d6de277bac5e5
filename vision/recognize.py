"""Image in, `Board` out: the one recognition path that photo mode, live mode and the referee share.

find the cards -> warp each to the canonical view -> read count, color, shading, shape -> put
them in reading order. The card reader's model is loaded once per `Recognizer`, not per image.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from core.board import Board, Corners, SeenCard
from vision.canonical import warp_card
from vision.cardreader import CardReader, CardReading
from vision.detect import CardQuad, find_cards


class Recognizer:
    """Reads boards from images with one loaded card reader.

    Example::

        recognizer = Recognizer()
        board = recognizer.read_board(load_image("table.jpg"))
        print(board.verdict, board.sets())
    """

    def __init__(self, reader: CardReader | None = None) -> None:
        self.reader = reader if reader is not None else CardReader.load()

    def read_board(self, image: npt.NDArray[np.uint8], scale: float = 1.0) -> Board:
        """The board seen in a BGR uint8 (H, W, 3) image.

        ``scale`` maps ``image`` pixels to the coordinates reported in the board (a photo
        decoded at half size has scale 2.0, so corners are in full-photo pixels).
        """
        return self.read_board_timed(image, scale)[0]

    def read_board_timed(self, image: npt.NDArray[np.uint8], scale: float = 1.0
                         ) -> tuple[Board, dict[str, float]]:
        """`read_board` plus the milliseconds spent in each stage (detect, warp, read, order)."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        quads = find_cards(image)
        timings["detect"] = _ms_since(start)

        start = time.perf_counter()
        canonical = [warp_card(image, quad.corners) for quad in quads]
        timings["warp"] = _ms_since(start)

        start = time.perf_counter()
        readings = self.reader.read(canonical) if canonical else []
        quads, readings = self._turn_sideways_cards(image, quads, canonical, readings)
        timings["read"] = _ms_since(start)

        start = time.perf_counter()
        seen = []
        for quad, reading in zip(quads, readings):
            seen.append(SeenCard(
                card=reading.card,
                corners=_scaled_corners(quad, scale),
                confidence=float(reading.confidence),
                partial=quad.partial,
                # A cut card's warp is distorted: its reading is a guess, never a fact.
                uncertain=bool(reading.uncertain or quad.partial),
                attribute_confidence=dict(reading.attribute_confidence),
            ))
        ordered = tuple(seen[i] for i in reading_order([s.corners for s in seen]))
        height, width = image.shape[:2]
        board = Board(cards=ordered, width=round(width * scale), height=round(height * scale))
        board.sets()  # the rules core's answer is part of the timed work
        timings["order+sets"] = _ms_since(start)
        return board, timings


    def _turn_sideways_cards(self, image: npt.NDArray[np.uint8], quads: list[CardQuad],
                             canonical: list[npt.NDArray[np.uint8]], readings: list[CardReading]
                             ) -> tuple[list[CardQuad], list[CardReading]]:
        """Re-read, a quarter turn round, the cards whose symbols say they were warped sideways
        (``CardReading.sideways``, from the reader's own ink blobs), and keep the turn when the
        reader is at least as sure of it."""
        turned = [i for i, quad in enumerate(quads) if not quad.partial and readings[i].sideways]
        if not turned:
            return quads, readings
        quads, readings = list(quads), list(readings)
        candidates = [CardQuad(np.roll(quads[i].corners, -1, axis=0), False, quads[i].score,
                               quads[i].paper) for i in turned]
        second = self.reader.read([warp_card(image, quad.corners) for quad in candidates])
        for i, quad, reading in zip(turned, candidates, second):
            if reading.confidence >= readings[i].confidence - 0.02:
                quads[i], readings[i] = quad, reading
        return quads, readings


@lru_cache(maxsize=1)
def default_recognizer() -> Recognizer:
    """A process-wide recognizer, loaded on first use."""
    return Recognizer()


def read_board(image: npt.NDArray[np.uint8], scale: float = 1.0) -> Board:
    """`Recognizer.read_board` with the default card reader."""
    return default_recognizer().read_board(image, scale)


def reading_order(corners: list[Corners]) -> list[int]:
    """Indices of cards in reading order: rows from top to bottom, each row left to right.

    Cards join a row when their centre is within half a card of the row's centre line, so a
    slightly crooked grid still reads as rows.
    """
    if not corners:
        return []
    quads = [np.asarray(c, dtype=np.float64) for c in corners]
    centers = np.array([q.mean(axis=0) for q in quads])
    heights = np.array([q[:, 1].max() - q[:, 1].min() for q in quads])
    tolerance = 0.5 * float(np.median(heights))
    rows: list[list[int]] = []
    for index in np.argsort(centers[:, 1], kind="stable"):
        if rows and abs(centers[index, 1] - np.mean(centers[rows[-1], 1])) <= tolerance:
            rows[-1].append(int(index))
        else:
            rows.append([int(index)])
    return [i for row in rows for i in sorted(row, key=lambda i: centers[i, 0])]


def _scaled_corners(quad: CardQuad, scale: float) -> Corners:
    points = [(float(x) * scale, float(y) * scale) for x, y in quad.corners]
    return (points[0], points[1], points[2], points[3])


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
