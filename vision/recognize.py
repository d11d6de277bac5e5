"""Image in, `Board` out: the one recognition path that photo mode, live mode and the referee share.

find the cards -> warp each to the canonical view -> read count, color, shading, shape -> put
them in reading order. The card reader's model is loaded once per `Recognizer`, not per image.
"""

from __future__ import annotations

import dataclasses
import math
import time
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from core.board import Board, Corners, SeenCard
from vision.canonical import warp_card
from vision.cardreader import CardReader, CardReading
from vision.detect import BLANK_PATTERN, CardQuad, find_cards
from vision.detect.candidate import chromaticity, lies_in_view, overlap_pixels
from vision.detect.paper import paper_fraction
from vision.features import segment_ink, symbols_offset, symbols_stacked_as_printed, symbols_stretched
from vision.imageio import shows_no_colour
from vision.quad import order_corners


class Recognizer:
    """Reads boards from images with one loaded card reader.

    Example::

        recognizer = Recognizer()
        board = recognizer.read_board(load_image("table.jpg"))
        print(board.verdict, board.sets())
    """

    def __init__(self, reader: CardReader | None = None) -> None:
        self.reader = reader if reader is not None else CardReader.load()

    @property
    def thresholds(self) -> dict[str, float]:
        """The reader's confidence below which each attribute's reading is uncertain."""
        return self.reader.thresholds

    def read_board(self, image: npt.NDArray[np.uint8], scale: float = 1.0) -> Board:
        """The board seen in a BGR uint8 (H, W, 3) image.

        ``scale`` maps ``image`` pixels to the coordinates reported in the board (a photo
        decoded at half size has scale 2.0, so corners are in full-photo pixels).
        """
        return self.read_board_timed(image, scale)[0]

    def read_board_timed(self, image: npt.NDArray[np.uint8], scale: float = 1.0
                         ) -> tuple[Board, dict[str, float]]:
        """`read_board` plus the milliseconds spent in each stage (detect, warp, read, order)."""
        start = time.perf_counter()
        quads = find_cards(image)
        detect_ms = _ms_since(start)
        board, _, timings = self.read_board_at(image, quads, scale)
        return board, {"detect": detect_ms, **timings}

    def read_board_at(self, image: npt.NDArray[np.uint8], quads: list[CardQuad], scale: float = 1.0
                      ) -> tuple[Board, list[CardQuad], dict[str, float]]:
        """The board of the cards at ``quads`` in ``image`` (found there or in an earlier frame of
        the same still table): the board, the outlines as finally read (a card found sideways
        is turned a quarter), and the milliseconds of each stage (warp, read, order+sets)."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        canonical = [warp_card(image, quad.corners) for quad in quads]
        timings["warp"] = _ms_since(start)

        start = time.perf_counter()
        readings = self.reader.read(canonical) if canonical else []
        quads, readings = self._turn_sideways_cards(image, quads, canonical, readings)
        quads, readings = self._lengthen_short_outlines(image, quads, readings)
        blank = sum(reading.blank for reading in readings)
        if blank == len(readings) or (len(readings) - blank < 3 and blank >= BLANK_PATTERN):
            # None of them shows a printed symbol, or four or more show none where fewer than
            # three show any: those are a pattern of the table (the pale cells of a checked
            # cloth, the gaps between a close-up's stripes), no cards.
            kept = [(quad, reading) for quad, reading in zip(quads, readings) if not reading.blank]
            quads, readings = [quad for quad, _ in kept], [reading for _, reading in kept]
        elif blank:
            table = _blank_and_table_coloured(quads, readings)
            quads = [quad for quad, patch in zip(quads, table) if not patch]
            readings = [reading for reading, patch in zip(readings, table) if not patch]
        timings["read"] = _ms_since(start)

        start = time.perf_counter()
        seen = []
        # A photo without colour (black and white) shows no card's colour: every reading is a
        # guess at it, however sure the reader is of the ink's grey.
        colourless = bool(quads) and shows_no_colour(image)
        washed_out = _washed_out(quads)
        blown_out = _blown_out(quads)
        odd_colour = _colour_unlike_its_kind(readings, [quad.partial for quad in quads])
        for quad, reading, faded, blown, odd in zip(quads, readings, washed_out, blown_out, odd_colour):
            # (A card partly under a hand is not wholly in view either: what shows of it may
            # hide a symbol.)
            partial = quad.partial or quad.covered
            seen.append(SeenCard(
                card=reading.card,
                corners=_scaled_corners(quad, scale),
                confidence=float(reading.confidence),
                partial=partial,
                # A card not wholly in view is warped distorted or in part: its reading is a
                # guess, never a fact.
                uncertain=bool(reading.uncertain or partial or faded or blown or odd or colourless),
                attribute_confidence=dict(reading.attribute_confidence),
            ))
        ordered = tuple(seen[i] for i in reading_order([s.corners for s in seen]))
        height, width = image.shape[:2]
        board = Board(cards=ordered, width=round(width * scale), height=round(height * scale))
        board.sets()  # the rules core's answer is part of the timed work
        timings["order+sets"] = _ms_since(start)
        return board, quads, timings


    def _turn_sideways_cards(self, image: npt.NDArray[np.uint8], quads: list[CardQuad],
                             canonical: list[npt.NDArray[np.uint8]], readings: list[CardReading]
                             ) -> tuple[list[CardQuad], list[CardReading]]:
        """Re-read, a quarter turn round, the cards whose symbols say they were warped sideways
        (``CardReading.sideways``, from the reader's own ink blobs), and keep the turn when its
        symbols lie as symbols should, or the reader is at least as sure of it and still sees
        a symbol (a turn that shows none, as half of a large card outlined does, is no better
        reading: taken, the card would be dropped as blank).

        A card warped sideways is read with surety as often as not: its side symbols lie off
        the face's centre line and are dropped as stains, and the middle one, stood on end,
        makes "1 oval" (three outline squiggles so read at 0.96-1.0). So that reading's
        confidence is no standard; the turn's blobs lying across the card are."""
        turned = [i for i, quad in enumerate(quads) if not quad.partial and readings[i].sideways]
        if not turned:
            return quads, readings
        quads, readings = list(quads), list(readings)
        candidates = [dataclasses.replace(quads[i], corners=np.roll(quads[i].corners, -1, axis=0))
                      for i in turned]
        second = self.reader.read([warp_card(image, quad.corners) for quad in candidates])
        for i, quad, reading in zip(turned, candidates, second):
            lies_across = not reading.sideways and not reading.blank
            loses_symbols = reading.blank and not readings[i].blank
            if lies_across or (reading.confidence >= readings[i].confidence - 0.02
                               and not loses_symbols):
                quads[i], readings[i] = quad, reading
        return quads, readings

    def _lengthen_short_outlines(self, image: npt.NDArray[np.uint8], quads: list[CardQuad],
                                 readings: list[CardReading]) -> tuple[list[CardQuad], list[CardReading]]:
        """Re-read, outlined longer at one end or the other (by each of `_LENGTHENINGS`), the
        cards whose symbols are stretched along the card (`vision.features.symbols_stretched`),
        and keep a longer outline that stays in the frame, runs over no other card, has paper
        for its margin, and is read surely, with no fewer symbols, as printed and stacked at
        the printed pitch (`vision.features.symbols_stacked_as_printed`); of several, the one
        that centres its symbols along the card.

        An outline that ends two symbols down a card of three (a pale table's stripe or a
        touching card's edge taken for the card's end) is warped to a whole card's shape: its
        symbols come out half as thick again, and it reads "2" (dev 5062, 5107, unseen 8034).
        Seen through the card's own perspective, the whole card is that outline about half as
        long again; which end is missing, only the face tells: the wrong end holds a strip of
        table, and the symbols sit off the middle, or a touching card's symbol beyond a gap
        too wide."""
        height, width = image.shape[:2]
        tries: list[tuple[int, CardQuad]] = []
        for i, (quad, reading) in enumerate(zip(quads, readings)):
            if (not reading.not_as_printed or reading.blank or quad.partial
                    or not symbols_stretched(segment_ink(warp_card(image, quad.corners)))):
                continue
            for corners in _lengthened(quad.corners):
                longer = dataclasses.replace(quad, corners=order_corners(corners))
                runs_over_another = any(other is not quad
                                        and overlap_pixels(longer, other)[0] > _LENGTHENED_OVERLAP * other.area
                                        for other in quads)
                if lies_in_view(corners, width, height) and not runs_over_another:
                    tries.append((i, longer))
        if not tries:
            return quads, readings
        first = readings
        quads, readings = list(quads), list(readings)
        faces = [warp_card(image, quad.corners) for _, quad in tries]
        best: dict[int, float] = {}  # the least offset of the symbols kept so far, per card
        for (i, quad), face, reading in zip(tries, faces, self.reader.read(faces)):
            # (Never one that shows fewer symbols: lengthened onto a pale cell of a checked
            # cloth, a card outlined right but far foreshortened squeezes its three symbols
            # into the face's middle, read "2" surely, fresh 6105.)
            if (reading.uncertain or reading.not_as_printed or reading.sideways
                    or reading.card.count < first[i].card.count
                    or not (first[i].not_as_printed or reading.confidence > first[i].confidence)):
                continue
            seg = segment_ink(face)
            # Of the lengths that pass, the one that centres the symbols along the card, as
            # printed, is the card's. (A margin of paper: an outline shifted off its card onto
            # a striped cloth, made longer, holds the stripes, evenly spaced, and read them as
            # three red squiggles, surely: dev 5070, paper 0.45; the cards made whole, 0.53-1.)
            offset = symbols_offset(seg)[1]
            if (offset < best.get(i, math.inf) and symbols_stacked_as_printed(seg)
                    and paper_fraction(image, quad.corners)[0] >= _LENGTHENED_PAPER):
                quads[i], readings[i], best[i] = quad, reading, offset
        return quads, readings


class StreamRecognizer:
    """Reads the frames of one camera stream, finding the cards afresh only when the picture
    has changed since they were last found.

    A webcam over a still table sends the same cards 30 times a second, and finding them is
    most of the cost of a board (the outline search; warping and reading 12 cards is a
    quarter of it). So each frame is first compared with the *keyframe*, the last frame the
    cards were found in, at 1/8 size in colour (which averages away sensor noise). While no
    patch of it changed, the cards are re-read where they were found: every reading is still
    made from this frame's pixels, so the tracker's votes stay fresh. A change that stays (a
    card taken or dealt or nudged, the camera, the light) makes a new keyframe, searched before
    its board is answered: the first frame that is like the one read before it. While the
    picture keeps changing from frame to frame (a hand moving over the table), nothing is
    searched: the cards away from the changed pixels are re-read, the others left out until it
    settles (the tracker holds its answer while the picture moves anyway).

    Every ``refresh_every``-th read of a still picture also searches again, so that a card the
    keyframe's search missed gets another chance, as it would frame by frame. That search is
    not needed for the answer at hand, so it is put off to `catch_up`, which live mode calls
    once the answer has gone out (and the next read does, if nobody did): on a still table no
    answer waits for a search. As the picture has not changed, a card it finds again keeps
    whichever outline, the old or the new, reads it more surely: a search that outlines a card
    a little worse than the last (its shadow taken for paper, a touching neighbour's edge for
    its own) must not spoil its readings until the next one.

    One `StreamRecognizer` per stream and per reading process (it keeps its keyframe); its
    boards come from the `Recognizer`'s own steps, so live mode reads with the one path.
    """

    def __init__(self, recognizer: Recognizer | None = None, *, level: int = 24,
                 changed_pixels: int = 4, refresh_every: int = 8) -> None:
        if refresh_every < 1:
            raise ValueError(f"refresh_every must be at least 1, got {refresh_every}")
        self.recognizer = recognizer if recognizer is not None else Recognizer()
        self.level = level  # a small pixel changed: any channel by more than this
        self.changed_pixels = changed_pixels  # the picture changed: more small pixels than this
        self.refresh_every = refresh_every
        # A picture that never settles (a flickering screen in view) is searched this often.
        self.longest_without_search = 4 * refresh_every
        self.searches = self.reuses = self.while_moving = 0
        self._keyframe: npt.NDArray[np.int16] | None = None
        self._previous: npt.NDArray[np.int16] | None = None  # the last frame read, small
        self._quads: list[CardQuad] = []
        self._reads_since_search = 0
        self._refresh: tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16]] | None = None

    @property
    def thresholds(self) -> dict[str, float]:
        """The reader's confidence thresholds (`Recognizer.thresholds`)."""
        return self.recognizer.thresholds

    def read_board(self, image: npt.NDArray[np.uint8], scale: float = 1.0) -> Board:
        """The board seen in a BGR uint8 (H, W, 3) frame of the stream (as `Recognizer.read_board`).
        The frame is kept until `catch_up` when its search was put off: do not write into it."""
        return self.read_board_timed(image, scale)[0]

    def read_board_timed(self, image: npt.NDArray[np.uint8], scale: float = 1.0
                         ) -> tuple[Board, dict[str, float]]:
        """`read_board` plus the milliseconds per stage; ``detect`` covers the change test
        and, on a keyframe, the search."""
        self.catch_up()
        start = time.perf_counter()
        small = _small_colour(image)
        changed = self._changed_since(self._keyframe, small)
        if changed is not None and np.count_nonzero(changed) <= self.changed_pixels:
            quads, self.reuses = self._quads, self.reuses + 1
            self._reads_since_search += 1
            if self._reads_since_search >= self.refresh_every:
                self._refresh = (image, small)
            keep = True
        elif changed is not None and self._still_changing(small) \
                and self._reads_since_search < self.longest_without_search:
            # A hand moving over the table: searching each frame of it costs the most and
            # gives nothing that lasts; the cards away from the change are re-read, the rest
            # wait for the picture to settle (the next frame like this one).
            quads, keep = [q for q in self._quads if not _touches(changed, q.corners)], False
            self.while_moving += 1
            self._reads_since_search += 1
        else:
            quads, keep = self._search(image, small), True
            self._reads_since_search = 1
        self._previous = small
        detect_ms = _ms_since(start)
        board, read, timings = self.recognizer.read_board_at(image, quads, scale)
        if keep:
            self._quads = read
        return board, {"detect": detect_ms, **timings}

    @property
    def put_off(self) -> bool:
        """Is there a search for `catch_up` to make?"""
        return self._refresh is not None

    def catch_up(self) -> bool:
        """Make the search the last read put off, if it did (True then): its outlines serve
        the reads that follow."""
        if self._refresh is None:
            return False
        image, small = self._refresh
        self._refresh = None
        self._quads = self._better_outlines(image, self._quads, self._search(image, small))
        return True

    def _better_outlines(self, image: npt.NDArray[np.uint8], held: list[CardQuad], found: list[CardQuad]
                         ) -> list[CardQuad]:
        """``found``, each card found again (its centre within a quarter card of a held one's)
        in whichever outline of the two the reader is surer of in ``image``."""
        pairs = []
        for index, quad in enumerate(found):
            for old in held:
                if old.partial == quad.partial and \
                        float(np.linalg.norm(old.center - quad.center)) < 0.25 * math.sqrt(max(old.area, 1.0)):
                    if float(np.abs(old.corners - quad.corners).max()) > _SAME_OUTLINE_PX:
                        pairs.append((index, old))
                    break
        if not pairs:
            return found
        outlines = [quad.corners for _, quad in pairs] + [found[index].corners for index, _ in pairs]
        readings = self.recognizer.reader.read([warp_card(image, corners) for corners in outlines])
        chosen = list(found)
        for k, (index, old) in enumerate(pairs):
            if readings[k].confidence > readings[len(pairs) + k].confidence:
                chosen[index] = old
        return chosen

    def _search(self, image: npt.NDArray[np.uint8], small: npt.NDArray[np.int16]) -> list[CardQuad]:
        self.searches += 1
        self._keyframe, self._reads_since_search = small, 0
        return find_cards(image)

    def _changed_since(self, earlier: npt.NDArray[np.int16] | None, small: npt.NDArray[np.int16]
                       ) -> npt.NDArray[np.bool_] | None:
        """Which small pixels changed since ``earlier`` (None: nothing to compare with)."""
        if earlier is None or earlier.shape != small.shape:
            return None
        return np.asarray((np.abs(small - earlier) > self.level).any(axis=2))

    def _still_changing(self, small: npt.NDArray[np.int16]) -> bool:
        """Did the picture change since the last frame read, too?"""
        changed = self._changed_since(self._previous, small)
        return changed is not None and np.count_nonzero(changed) > self.changed_pixels


# Outlines whose corners are all this close (pixels) read the same: no need to compare them.
_SAME_OUTLINE_PX = 1.5


def _touches(changed: npt.NDArray[np.bool_], corners: npt.NDArray[np.float32]) -> bool:
    """Is any changed small pixel (1/8 size) within the bounding box of ``corners`` (pixels)?"""
    height, width = changed.shape
    x0, y0 = np.floor(corners.min(axis=0) / 8).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0) / 8).astype(int)
    return bool(changed[max(0, y0):min(height, y1 + 1), max(0, x0):min(width, x1 + 1)].any())


def _small_colour(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.int16]:
    """``image`` at 1/8 size (area-averaged), as signed integers ready to subtract."""
    height, width = image.shape[:2]
    small = cv2.resize(image, (max(1, width // 8), max(1, height // 8)), interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.int16)


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


def _washed_out(quads: list[CardQuad]) -> list[bool]:
    """For each quad, whether its card's symbols are far fainter than the other cards' on the
    board: under half the median card's ink (`CardQuad.ink`, the strongest ink over the
    paper's brightness). A lamp's glare washes a card out, a shaken camera smears its symbols
    into the paper: either way its shading and colour are guesses, whatever the reader's
    confidence. (Errcw `a.jpg` under a glare spot: a purple solid squiggle washed to 0.2 of
    the median card's ink, its paper clipped white, read striped at 0.99; unseen 8081: a
    striped squiggle smeared to 0.34, its paper not clipped, read solid at 0.96.) Over the
    five sets of generated scenes, the cards in full view under half the median ink are read
    wrong 8 times in 58, those above it 1.5% of the time; the rule flags 34 of 8,270 sure
    right readings there, and no card of the real photos as taken, whose faintest lies at
    0.71."""
    whole = [quad for quad in quads if not quad.partial]
    if len(whole) < 3:
        return [False] * len(quads)
    typical_ink = float(np.median([quad.ink for quad in whole]))
    return [quad.ink < _FADED_INK * typical_ink for quad in quads]


def _blown_out(quads: list[CardQuad]) -> list[bool]:
    """For each quad, whether its card's paper is clipped white (`CardQuad.paper`: every channel
    at ``_CLIPPED_PAPER`` or more) and its ink faint (`CardQuad.ink` under ``_FAINT_INK``).

    An overexposed photo (a camera metering on a dark table) clips the paper, and with it the
    white the reader balances the inks by; the light channels of a thin ink clip as well, so
    that a green stripe turns cyan or grey, and the reader may be sure of a wrong colour or
    shading. The whole board is blown out alike, so `_washed_out`, which compares a card with
    the others, does not see it. On the 12 real photos made brighter in linear light
    (bench_robustness's "overexposed" is 1.9x): at 2.5x, 3x, 4x and 6x, 1, 6, 16 and 24 cards
    read wrong and sure, of which this flags 1, 6, 14 and 21, for 13, 19, 26 and 31 of the
    right readings flagged; at 1.9x, 2 of 181; as taken, none (no card's paper above 214)."""
    return [min(quad.paper) >= _CLIPPED_PAPER and quad.ink < _FAINT_INK for quad in quads]


# Paper this white in every channel is clipped; ink fainter than this on it has lost its colour
# (as taken, a card's ink on the real photos is 0.43-1.0, median 0.65; read wrong and sure
# on their overexposed versions, 0.2-0.43).
_CLIPPED_PAPER = 245.0
_FAINT_INK = 0.45


def _blank_and_table_coloured(quads: list[CardQuad], readings: list[CardReading]) -> list[bool]:
    """For each card, whether it shows no printed symbol (`CardReading.blank`) and its paper's
    colour (`CardQuad.paper`) is unlike that of the board's cards read without doubt: a patch
    of the table (a pale cell of a checked cloth, its own tint under the room's light), no card.

    The cards of one deck share their paper and lie under the same light, so that their
    paper's tint (`chromaticity`) agrees across the board however bright each card is lit; a
    blank face is the only kind taken out (a card whose symbols show is a card, whatever its
    paper looks like). Needs three whole cards read without doubt, and a paper not clipped in
    any channel (a card washed white by glare has lost its tint, not changed it). Over the five
    sets of generated scenes it drops 9 false cards (bench 16 -> 12) and no true one; the real
    photos and their variants read as before (bench/HISTORY.md, 2026-12-08 from 02:07)."""
    sure = [chromaticity(quad.paper) for quad, reading in zip(quads, readings)
            if not reading.blank and not reading.uncertain and not quad.partial]
    if len(sure) < 3:
        return [False] * len(quads)
    board_paper = np.median(sure, axis=0)
    return [reading.blank and max(quad.paper) < _CLIPPED_PAPER
            and float(np.abs(chromaticity(quad.paper) - board_paper).max()) >= _UNLIKE_PAPER
            for quad, reading in zip(quads, readings)]


# A blank face whose paper's tint (`chromaticity`, a channel's share) differs this much from the
# board's cards' is table: over the five sets of generated scenes, the papers of the cards read
# without doubt lie within it of the rest of their board's in all but 7 of 8,281 (uneven coloured
# light), and those of every blank true card (at most 0.031); 9 of the 114 blank false cards lie
# beyond it. (A card cut by the frame is judged so against the whole cards at 0.04:
# `vision.detect.consistency`.)
_UNLIKE_PAPER = 0.035


def _colour_unlike_its_kind(readings: list[CardReading], partial: list[bool]) -> list[bool]:
    """For each reading, whether its ink's hue lies nearer the cards of another colour on this
    board than the cards of its own, by ``_HUE_MARGIN`` degrees or more.

    Under a coloured light a thin red ink can look purple, and the reader be sure of it (a red
    outline oval under a blue cast read purple at 0.985, generated bench 1124); but the board's
    other cards are under the same light, and its hue still lies nearer the board's reds
    (its hue -10 degrees, the reds' 31, the purples' -77). Compared are the whole cards read
    without doubt, two or more of a colour, the card itself left out."""
    # Each colour's sure cards as a sum of unit vectors, from which a card takes itself out.
    sums: dict[str, list[float]] = {}
    for i, reading in enumerate(readings):
        if not partial[i] and not reading.uncertain and math.isfinite(reading.ink_hue):
            total = sums.setdefault(reading.card.color, [0.0, 0.0, 0.0])
            angle = math.radians(reading.ink_hue)
            total[0] += math.cos(angle)
            total[1] += math.sin(angle)
            total[2] += 1
    odd = [False] * len(readings)
    for i, reading in enumerate(readings):
        if partial[i] or not math.isfinite(reading.ink_hue):
            continue
        angle = math.radians(reading.ink_hue)
        mine = not reading.uncertain  # (then counted in its own colour's sum)
        by_colour = {colour: (x - mine * math.cos(angle), y - mine * math.sin(angle), n - mine)
                     if colour == reading.card.color else (x, y, n) for colour, (x, y, n) in sums.items()}
        own = by_colour.get(reading.card.color, (0.0, 0.0, 0))
        others = [mean for colour, mean in by_colour.items() if colour != reading.card.color and mean[2] >= 2]
        if own[2] < 2 or not others:
            continue
        to_own = _hue_distance(reading.ink_hue, math.degrees(math.atan2(own[1], own[0])))
        nearest_other = min(_hue_distance(reading.ink_hue, math.degrees(math.atan2(y, x))) for x, y, _ in others)
        odd[i] = nearest_other <= to_own - _HUE_MARGIN
    return odd


def _hue_distance(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


# A card's hue must lie this many degrees nearer another colour's cards than its own to be
# doubted: over the bench, new and unseen scenes, 20 flags both sure colour misreads and 2 of
# 5,178 sure right readings (purples whose hue lies between the board's reds and purples).
_HUE_MARGIN = 20.0


# Ink under this fraction of the board's median card's is washed out.
_FADED_INK = 0.5


def _scaled_corners(quad: CardQuad, scale: float) -> Corners:
    points = [(float(x) * scale, float(y) * scale) for x, y in quad.corners]
    return (points[0], points[1], points[2], points[3])


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


# The margin of a card's outline made longer is at least this fraction paper.
_LENGTHENED_PAPER = 0.5
# A card's outline made longer overlaps another card found by at most this fraction of it.
_LENGTHENED_OVERLAP = 0.2


def _lengthened(corners: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
    """The outline ``corners`` (clockwise from the top-left, portrait) made longer beyond its
    top and beyond its bottom, through its own perspective, by each of ``_LENGTHENINGS``."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_image = cv2.getPerspectiveTransform(unit, np.asarray(corners, np.float32))
    ends = [end for f in _LENGTHENINGS for end in (
        np.array([[0, -f], [1, -f], [1, 1], [0, 1]], np.float32),
        np.array([[0, 0], [1, 0], [1, 1 + f], [0, 1 + f]], np.float32))]
    return [cv2.perspectiveTransform(end.reshape(-1, 1, 2), to_image).reshape(4, 2) for end in ends]


# How much longer an outline ending two symbols down its card is made, a fraction of its
# length: half as long again where it ends at the card's third, less or more where it ends
# a little after or before (bench 1169: 0.3; dev 6098: 0.4).
_LENGTHENINGS = (0.3, 0.4, 0.5, 0.6)
