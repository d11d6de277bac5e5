"""Finding cards in an image: every white, card-shaped quadrilateral, as four ordered corners.

No single binary image separates cards from every table: a threshold on paper whiteness works on
dark and wooden tables, local contrast on grey ones, and only edges on white tables or when cards
touch. So candidates come from several maps, each outline is fitted with a quadrilateral, scored on
how card-like it is (straight sides filling the quad, card proportions under perspective, paper
inside, a size consistent with the other cards), and overlapping candidates are merged.

The two whiteness maps come first. When the cards they give explain every card-sized paper-like
blob, the search ends there (most real tables); otherwise the other maps and second looks are
searched only around the blobs left unexplained.

Cards laid edge to edge merge into one blob: it is opened by erosion, else cut along its
straight inner edges (the seams); and a candidate crossed through its middle by a thin straight
seam that reaches both its sides, blank paper on either side of it, is two cards (a tilted
camera makes two cards end to end look like one) and is split there. Once some cards are
found, their paper colour gives one more map (it tells cards from a pale patterned table), they
are taken out of the maps and the rest is searched again, so that a row of touching cards
comes apart card by card; and a found card's outline laid next to it, where there is paper and
edges trace it, finds a neighbour whose seam does not show at all. Where no map outlines a card
at all (a pale stripe or a sheet the tone of its paper, a deep shadow), its printed symbols,
grouped card by card, place it. The typical card size is a function of the place in the image
(perspective makes near cards larger), and a card's symbols must stand out of its paper about
as strongly as the other cards' do. Two pieces of a card (a cable across it, a pale stripe
under part of it) are joined, or one piece grown, into the card whose face they make. Last,
each whole card's sides are moved onto its paper's edge where the outline found lies a few
pixels off it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Callable, Iterable, Iterator, Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import warp_card
from vision.features import (InkSegmentation, darkest_channel, looks_sideways, segment_ink, shows_symbols,
                             symbols_off_centre)
from vision.quad import NEXT, aspect, fit_quad, grow_quad, order_corners, short_side

# Work on at most this many pixels on the long side: card outlines need no more, and it bounds
# the time per frame.
DETECTION_SIDE = 720
# A card's long side over its short side seen flat is 1.56; a camera tilted by up to ~55 degrees
# foreshortens one side by cos(55) = 0.57, hence this wide window.
MIN_ASPECT = 0.85
MAX_ASPECT = 2.9
# Outline area over fitted-quad area: rounded corners cost ~2%, blur and noise a few more.
MIN_FILL = 0.85
BORDER_MARGIN = 3
# All four sides of a quad, as a bit mask (bit k: the side from corner k to corner k + 1).
_ALL_SIDES = 0b1111
# A whole card's side is moved onto a sharper edge of its paper within this fraction of its width
# (`_tightened`): outlines found are off by a few pixels where they are off at all, and the
# symbols begin further in (~0.15 of the width), so their edges are never reached.
_TIGHTEN_REACH = 0.1
_TIGHTEN_OFFSETS = np.linspace(-1.0, 1.0, 25)  # of the reach: ~0.5 px steps on a webcam's cards
_TIGHTEN_ALONG = np.linspace(0.1, 0.9, 17)     # where along a side it is looked at
# A side moved outward must cross paper: whiteness at least this far from the table's (just
# beyond the new edge) towards the paper's (inside the card); moved inward, less on average.
_PAPER_BAND = 0.75
# The least step of whiteness (of 255) from paper to table that is an edge to move a side onto.
_EDGE_STEP = 3.0
# A card's ink strength over the median of the other cards' below which it is no card: on the
# 12 labelled photos the weakest card is at 0.69, on the generated samples at 0.42; pale cells
# of checked cloth come out at 0.2-0.35.
INK_RATIO = 0.35


@dataclass(frozen=True)
class CardQuad:
    """A card outline found in an image.

    ``corners``: float32 (4, 2) (x, y) image pixels, clockwise from the card's top-left with the
    card read portrait (first edge a short one). ``partial``: the card is cut by the image edge.
    """

    corners: npt.NDArray[np.float32]
    partial: bool
    score: float
    paper: tuple[float, float, float] = (0.0, 0.0, 0.0)  # typical BGR of the card's paper
    # A guess (cut out of a blob along straight edges, or found in a second look around the
    # cards already found): any other candidate for the place wins.
    guess: bool = False
    # How strongly the symbols stand out of the paper: the 99th percentile of the difference
    # from the paper over the card's middle, over the paper's brightness.
    ink: float = 0.0
    # Cut by the frame edge and judged paper only along its other sides (see `_card_quad`).
    judged_without_frame_side: bool = False
    # A guess outlined round its symbols (`_cards_from_symbols`): weighed as a plain candidate
    # in the merge, and not hidden by a quad far larger than a card (a sheet it lies on).
    from_symbols: bool = False
    # Partly covered (a hand over it): completed from the paper in view (`_covered_cards`);
    # reported partial (not wholly in view), its reading uncertain.
    covered: bool = False
    center: npt.NDArray[np.float32] = field(init=False, repr=False, compare=False)
    area: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", self.corners.sum(axis=0) / 4)  # np.mean costs 5x more
        object.__setattr__(self, "area", float(cv2.contourArea(self.corners)))


def find_cards(image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """Every card in a BGR uint8 (H, W, 3) image, in no particular order.

    An image without cards gives an empty list.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be BGR uint8 (H, W, 3), got {image.dtype} {image.shape}")
    height, width = image.shape[:2]
    scale = min(1.0, DETECTION_SIDE / max(height, width))
    cards = _find_at_scale(image, scale)
    # Small cards (a wide view of the table) lose their outlines when shrunk: look again at
    # full resolution, which costs time only for such views.
    if scale < 1.0:
        whole = [c for c in cards if not c.partial]
        small_cards = not whole or np.median([short_side(c.corners) for c in whole]) * scale < 45
        if small_cards:
            full_scale = min(1.0, 2 * scale)
            # (Where the symbols-alone search found no card at this scale, it is not run again:
            # a close-up of a card or two, where it runs, pays for it once.)
            again = _find_at_scale(image, full_scale,
                                   from_symbols_alone=any(card.from_symbols for card in cards))
            # The look that found more cards leads. Each may judge off a card the other
            # found (a faint one, beside cards it sees more ink on; a far one its neighbour
            # search did not reach): a whole card of the other stays where it shows symbols
            # and no card of the leading look lies over it (a cut one may be a cell of a
            # cloth with the pattern's edge in it).
            leading, other = (again, cards) if len(again) > len(cards) else (cards, again)
            leading = _better_outlines(leading, other)
            cards = leading + [card for card in other if not card.partial and not any(
                _covers(card, lead) or _covers(lead, card) for lead in leading)
                and _shows_symbols(image, card)]
    # (On the final cards only: partway, a search has found fewer than three whole cards
    # where it ends with more, and dropping its patches then lost cards found beside them.)
    return _without_table_patches(cards, image)


def _better_outlines(leading: list[CardQuad], other: list[CardQuad]) -> list[CardQuad]:
    """The ``leading`` look's cards, each guess among them replaced by the one card of the
    ``other`` look it overlaps where that card is whole and has far better paper all round (its
    score): the same card outlined better (bench 1022: in a grid of touching cards, the look at
    full resolution laid a neighbour's outline half a card off, where the first look's outline
    was right; the card was lost and a false card reported)."""
    result = []
    for lead in leading:
        if lead.guess and not lead.partial:
            overlapping = [card for card in other if _covers(card, lead) or _covers(lead, card)]
            # (Outlines that agree, IoU 0.8 or more, are left as the leading look has them.)
            if (len(overlapping) == 1 and not overlapping[0].partial
                    and overlapping[0].score > lead.score + _BETTER_SCORE
                    and _iou_estimate(overlapping[0], lead) < 0.8):
                lead = overlapping[0]
        result.append(lead)
    return result


# A card of one look replaces the other's guess for the place with a paper score this much higher.
_BETTER_SCORE = 0.15


def _without_table_patches(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """The ``cards`` less patches of table taken for cards where few whole cards are found.

    Three whole cards or more show this deck's paper under this light, and every other card is
    judged against them; with fewer, nothing is. A bare table then still gives its planks, felt
    or rug patches as a card or a cut card. Card paper is nearly grey under any light a camera
    balances, a cut card with no whole card beside it is no darker than the table it lies on,
    and one beside one or two whole cards (a close-up, in one light) is nearly as bright as they.
    """
    whole = [card for card in cards if not card.partial]
    if len(whole) >= 3:
        return cards
    kept = [card for card in cards if _off_grey(card.paper) <= _GREY_PAPER]
    # (A whole "card" dropped as a patch itself vouches for no cut card.)
    kept_whole = [card for card in kept if not card.partial]
    if kept_whole:
        # (Cut cards beside one or two whole ones measured 0.72 of their paper's brightness
        # and more, in the close-ups and the scenes 1000-1199 and 5000-5119; the strips of a
        # grey table either side of a card filling the frame, 0.43 and 0.54: close-up 7039.)
        level = _CUT_BESIDE_WHOLE * float(np.median([max(card.paper) for card in kept_whole]))
        return [card for card in kept if not card.partial or max(card.paper) >= level]
    table_level = float(np.median(image[::4, ::4].max(axis=2)))
    return [card for card in kept if max(card.paper) >= _CUT_PAPER_LEVEL * table_level]


def _find_at_scale(image: npt.NDArray[np.uint8], scale: float, from_symbols_alone: bool = True
                   ) -> list[CardQuad]:
    # Shrinking a little (a webcam frame), bilinear is 3x cheaper than pixel-area averaging
    # and as good for outlines; shrinking a lot, only averaging keeps noise and fine stripes
    # from aliasing into the maps.
    interpolation = cv2.INTER_LINEAR if scale >= 0.6 else cv2.INTER_AREA
    small = image if scale == 1.0 else cv2.resize(image, None, fx=scale, fy=scale,
                                                  interpolation=interpolation)
    maps = _Maps(small)
    seams = _SeamSplitter(maps)
    candidates: list[CardQuad] = []
    # Cut cards judged without their side along the frame are held apart until the end: a
    # strip of pale table reaching the frame passes that test too, and must not steer the
    # search (the paper maps' second looks start from the cards found so far).
    cut_candidates: list[CardQuad] = []

    def add(quads: Iterable[CardQuad]) -> None:
        for quad in quads:
            (cut_candidates if quad.judged_without_frame_side else candidates).append(quad)

    # The last settling: the candidates merged one per place, and the cards kept of them.
    merged: list[CardQuad] = []
    kept: list[CardQuad] = []

    def settled(final: bool = False) -> list[CardQuad]:
        """The cards the candidates so far make: one per place, consistent with each other."""
        nonlocal merged, kept
        pool = candidates + cut_candidates if final and cut_candidates else candidates
        merged = _merge_overlapping(seams.split(pool), small.shape[0] * small.shape[1], small)
        kept = _keep_consistent(merged, small)
        return kept

    def finished() -> list[CardQuad]:
        if cut_candidates:
            settled(final=True)
        final = _without_blank_pattern(_judged_by_symbols(merged, kept, small), small)
        final = _pieces_joined(_doubles_halved(final, small), small)
        return _rescaled(_tightened(final, maps.whiteness, small), scale)

    region: _Region | None = None  # where the later steps look; None: everywhere
    for index, (mask, inset, guess) in enumerate(maps.candidate_masks()):
        if not guess:
            add(_quads_in_mask(mask, maps, candidates, inset, region=region))
        else:
            # Guesses are never symbols or pieces of a card already found (only cards of a
            # block of touching cards, `_card_of_block`), nor far smaller than the cards found
            # so far (a close-up's card dwarfs the patches of wood grain that smoothed edges
            # enclose).
            so_far = settled()
            plain = [card.area for card in so_far if not card.guess]
            smallest_guess = 0.3 * min(plain, default=0.0)
            whole = [card for card in so_far if not card.partial]
            # (The typical card's fit is made only for a guess lying inside another candidate.)
            typical = cache(lambda: _typical_area_model(_plain_unless_few(whole)) if whole else None)
            add(dataclasses.replace(quad, guess=True) for quad in
                _quads_in_mask(mask, maps, candidates, inset, smallest_guess, region)
                if not any(_lies_inside(quad, other) and not _card_of_block(quad, other, typical(), small)
                           for other in candidates))
        if index == 1:
            # The costlier maps and second looks are only needed where the cards the
            # whiteness maps found leave card-sized paper-like blobs unexplained; on many
            # tables that is nowhere.
            cards = settled()
            explained, region = _unexplained_region(
                cards, [maps.global_white, maps.paper_like], maps.whiteness, [maps.half_local_white])
            if explained:
                return finished()
    cards = settled()
    # A table as pale as the cards' paper (pale stripes) may outline no card in any map: then
    # the cards are looked for from their symbols alone.
    if from_symbols_alone and sum(not card.partial for card in cards) < 3:
        alone = _cards_from_symbols_alone(cards, small, maps)
        if alone:
            candidates[:] = [quad for quad in candidates if not _holds_several(quad, alone)]
            candidates.extend(alone)
            cards = settled()
    # The cards found so far show what this deck's paper looks like under this light: a map of
    # that colour separates the other cards from a pale table far better than whiteness does.
    paper_mask = _paper_colour_mask(small, cards, region)
    if paper_mask is not None:
        before = len(candidates)
        add(dataclasses.replace(quad, guess=True) for quad in
            _quads_in_mask(paper_mask, maps, candidates, 0.5, region=region))
        if len(candidates) > before:
            cards = settled()
    paper_maps = [maps.global_white, maps.paper_like,
                  maps.local_white if paper_mask is None else paper_mask]
    # Cards found are known paper: taking them out of the whiteness maps leaves the cards
    # they touched (in a grid, a whole row or column) as smaller blobs, easier to split.
    if cards:
        found = np.zeros(small.shape[:2], np.uint8)
        for card in cards:
            cv2.fillConvexPoly(found, np.round(grow_quad(card.corners, 1.5)).astype(np.int32), 255)
        before = len(candidates)
        smallest = 0.3 * min(card.area for card in cards)
        for mask in paper_maps:  # the whiteness, paper-likeness and paper-colour (or local) maps
            residual = cv2.bitwise_and(mask, cv2.bitwise_not(found))
            add(dataclasses.replace(quad, guess=True) for quad in
                _quads_in_mask(residual, maps, candidates, 0.5, smallest, region=region))
        if len(candidates) > before:
            cards = settled()
        # Cards laid edge to edge show no seam at all in places: their neighbours are found by
        # laying a found card's outline next to it, where there is paper.
        paper = cv2.bitwise_or(cv2.bitwise_or(paper_maps[0], paper_maps[1]), paper_maps[2])
        neighbours = _grid_neighbours(cards, small, paper, maps.edges, region)
        if neighbours:
            candidates.extend(neighbours)
            cards = settled()
        # Cards that no map outlines, found from their symbols.
        from_symbols = _cards_from_symbols(cards, small, maps)
        if from_symbols:
            candidates.extend(from_symbols)
            cards = settled()
        # A cable or pen across a card cuts its paper in two pieces, neither card-like: with
        # thin dark lines bridged, the card is whole again. Such a card is looked for only
        # where no card is kept, and its pieces give way to it. (At the frame edge, bridging
        # joins the pale table round a cut card into card-like patches; a cut card lost is
        # not read anyway.)
        whole = [card for card in cards if not card.partial]
        typical = _typical_area_model(_plain_unless_few(whole)) if whole else None
        bridged = [dataclasses.replace(quad, guess=True) for quad in
                   _quads_in_mask(_bridged(maps.global_white, whole), maps, [], 0.5, smallest, region)
                   if not quad.partial and typical is not None
                   and _size_mismatch(quad, typical(quad.center)) < _BRIDGED_SIZE
                   and not any(_covers(quad, card) or _covers(card, quad) for card in cards)]
        if bridged:
            # (Its pieces: smaller parts of it, not two cards a bridge joined.)
            candidates[:] = [quad for quad in candidates if not any(
                quad.area < 0.75 * joined.area and _overlap(quad, joined)[0] > 0.8 * quad.area
                for joined in bridged)]
            candidates.extend(bridged)
            cards = settled()
        # Cards partly under a hand, completed from the paper in view (in a close-up of a
        # card or two, with no paper-colour map, from the whiteness maps).
        covered = _covered_cards(cards, small, [mask for mask in (paper_mask, maps.global_white, maps.local_white)
                                                if mask is not None], region)
        if covered:
            candidates.extend(covered)
            cards = settled()
    return finished()


def _bridged(mask: npt.NDArray[np.uint8], cards: list[CardQuad]) -> npt.NDArray[np.uint8]:
    """A binary map with dark lines bridged (a morphological closing): up to about 8 pixels
    wide, or as wide as a cable across one of the ``cards`` is seen in a close-up (a cable is
    of one thickness on the table, and the cards show how near the table is)."""
    card_width = float(np.median([short_side(card.corners) for card in cards])) if cards else 0.0
    size = max(_BRIDGE_PIXELS, 2 * int(_BRIDGE_OF_CARD * card_width / 2) + 1)
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)))


# Bridged: dark lines up to this many pixels wide, or this fraction of a card's width.
_BRIDGE_PIXELS = 9
_BRIDGE_OF_CARD = 0.08
# A card made whole by bridging is within this of the typical card's size (log area ratio):
# bridging also joins two cards lying close, or pale cells of a cloth.
_BRIDGED_SIZE = 0.3


def _lies_inside(quad: CardQuad, other: CardQuad) -> bool:
    """Whether ``quad`` is a small part of ``other`` (under half its area, centred inside it):
    a symbol of that card, or a piece of it."""
    return (quad.area < 0.5 * other.area
            and cv2.pointPolygonTest(other.corners.reshape(-1, 1, 2), tuple(map(float, quad.center)), False) > 0)


def _card_of_block(quad: CardQuad, block: CardQuad,
                   typical: Callable[[npt.NDArray[np.float32]], float] | None,
                   image: npt.NDArray[np.uint8]) -> bool:
    """Whether ``quad``, lying inside ``block``, is a whole card of the size the cards found so
    far have (``typical``), showing centred symbols, and ``block`` a candidate of two cards or
    more: touching cards seen as one blob, which the merge drops as a block once its cards are
    found (bench 1132: a card in a row of touching cards was lost, its outline discarded as a
    piece of the pair it lay in). (A pale cell of a checked cloth inside a larger pale patch
    shows no symbols.)"""
    return (typical is not None and not quad.partial
            and block.area > _BLOCK_SIZE * typical(block.center)
            and _size_mismatch(quad, typical(quad.center)) < _BRIDGED_SIZE
            and _shows_centred_symbols(image, quad))


# A candidate at least this many times the typical card's area holds two cards or more.
_BLOCK_SIZE = 1.6


def _rescaled(cards: list[CardQuad], scale: float) -> list[CardQuad]:
    """Cards found in an image resized by ``scale``, in the original image's pixels."""
    if scale == 1.0:
        return cards
    return [dataclasses.replace(card, corners=(card.corners / scale).astype(np.float32))
            for card in cards]


@dataclass(frozen=True)
class _Region:
    """A part of the image (uint8 0/255 (H, W) ``mask``) with its integral image, to ask
    cheaply whether a box touches it."""

    mask: npt.NDArray[np.uint8]
    integral: npt.NDArray[np.int32]

    @classmethod
    def of(cls, mask: npt.NDArray[np.uint8]) -> _Region:
        return cls(mask, cv2.integral(mask // 255))

    def touches(self, x: int, y: int, w: int, h: int) -> bool:
        """Whether the box at (x, y) of size (w, h) holds any pixel of the region."""
        i = self.integral
        return bool(i[y + h, x + w] - i[y, x + w] - i[y + h, x] + i[y, x] > 0)


def _unexplained_region(cards: list[CardQuad], paper_maps: list[npt.NDArray[np.uint8]],
                        whiteness: npt.NDArray[np.uint8] | None = None,
                        half_maps: Sequence[npt.NDArray[np.uint8]] = ()
                        ) -> tuple[bool, _Region | None]:
    """Whether the cards account for every card-sized blob of the paper maps (uint8 0/255),
    and of the ``half_maps`` made at half their resolution, and if not, the region around the
    blobs they leave unexplained (None: look everywhere).

    A blob far darker (in ``whiteness``, if given) than the cards' paper, even in shadow, is
    no card: the local map marks a glossy patch of a black table as locally white. One or two
    cards are never taken as the whole story: a quad around a block of touching cards looks
    like one big card until the other maps show its parts.
    """
    whole = [c for c in cards if not c.partial]
    if 0 < len(whole) < 3:
        return False, None
    height, width = paper_maps[0].shape
    paper = paper_maps[0].copy()
    for other in paper_maps[1:]:
        cv2.bitwise_or(paper, other, dst=paper)
    for card in cards:
        cv2.fillConvexPoly(paper, np.round(grow_quad(card.corners, 4.0)).astype(np.int32), 0)
    # Slivers along the cards' edges and thin lines of texture are no card. The blobs are
    # counted at half resolution: a card-sized blob needs no more, and it is 4x cheaper.
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, _SQUARE5)
    half = (width // 2, height // 2)
    paper = cv2.resize(paper, half, interpolation=cv2.INTER_NEAREST)
    if half_maps:
        more = half_maps[0].copy()
        for other in half_maps[1:]:
            cv2.bitwise_or(more, other, dst=more)
        for card in cards:
            cv2.fillConvexPoly(more, np.round(grow_quad(card.corners / 2, 2.0)).astype(np.int32), 0)
        cv2.bitwise_or(paper, cv2.morphologyEx(more, cv2.MORPH_OPEN, _SQUARE3), dst=paper)
    smallest = 0.3 * min((c.area for c in whole), default=0.0015 * height * width / 0.3) / 4
    count, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=8)
    card_sized = stats[:, cv2.CC_STAT_AREA] >= smallest
    card_sized[0] = False  # label 0 is the background
    if whiteness is not None and whole and card_sized.any():
        whiteness = cv2.resize(whiteness, half, interpolation=cv2.INTER_NEAREST)
        darkest = _SHADOWED_PAPER * float(np.median([min(c.paper) for c in whole]))
        for label in np.flatnonzero(card_sized):
            x, y, w, h = stats[label, :4]
            blob = labels[y:y + h, x:x + w] == label
            card_sized[label] = whiteness[y:y + h, x:x + w][blob].mean() >= darkest
    unexplained = np.flatnonzero(card_sized)
    if len(unexplained) == 0:
        return True, None
    if not whole:
        return False, None
    # Around the unexplained blobs, by half a card: a card there may reach out of its blob.
    lookup = np.zeros(count, np.uint8)
    lookup[unexplained] = 255
    region = cv2.resize(lookup[labels], (width, height), interpolation=cv2.INTER_NEAREST)
    reach = int(round(0.5 * np.sqrt(float(np.median([c.area for c in whole])))))
    region = cv2.dilate(region, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * reach + 1, 2 * reach + 1)))
    return False, _Region.of(region)


_SQUARE5 = np.ones((5, 5), np.uint8)
# Paper in a deep shadow still keeps this fraction of the lit cards' brightness.
_SHADOWED_PAPER = 0.35
# Paper in shadow is within this of the lit paper's tint (each channel's share of the sum); a
# card's ring judged with shadows must be this much paper.
_SHADOW_TINT = 0.02
_SHADOWED_RING = 0.9


def _grid_neighbours(cards: list[CardQuad], image: npt.NDArray[np.uint8],
                     paper: npt.NDArray[np.uint8], edges: npt.NDArray[np.uint8],
                     region: _Region | None = None, rounds: int = 2) -> list[CardQuad]:
    """Cards next to the whole cards found, each a found card's outline moved by one card side
    and sized for its new place (`_neighbour_move`), with a gap and a slip sideways
    (`_best_neighbours`), where the paper maps are paper, edges trace the moved outline, and it
    holds a card face of the others' paper with ink about as strong as theirs. They are
    guesses: any candidate found plainly wins.
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) < 2:
        return []
    height, width = paper.shape
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(card.corners).astype(np.int32), 255)
    near_edge = cv2.dilate(edges, _SQUARE3, iterations=2)
    typical_ink = float(np.median([c.ink for c in whole]))
    paper_tint = np.median([_tint(c.paper) for c in whole], axis=0)
    typical = _typical_area_model(_plain_unless_few(whole))
    found: list[CardQuad] = []
    frontier = whole
    for _ in range(rounds):
        new: list[CardQuad] = []
        outlines = [card.corners.astype(np.float64) for card in frontier]
        moves = [_neighbour_move(corners, sign * side, other, typical) for corners in outlines
                 for side, other in ((corners[1] - corners[0], corners[3] - corners[0]),
                                     (corners[3] - corners[0], corners[1] - corners[0]))
                 for sign in (1.0, -1.0)]
        # All moves of the round at once, against the cards taken when it starts: the cards taken
        # only grow, so a move that finds no place now finds none later in the round either.
        hopeful = _best_neighbours(np.array([corners for corners, _, _ in moves]),
                                   np.array([step for _, step, _ in moves]),
                                   np.array([other for _, _, other in moves]), paper, taken, near_edge)
        for (corners, step, other), first_look in zip(moves, hopeful):
            if first_look is None:
                continue
            quad = (first_look if not new else  # else look again, clear of the cards taken since
                    _best_neighbours(corners[None], step[None], other[None], paper, taken, near_edge)[0])
            if quad is None:
                continue
            x, y = np.round(quad.mean(axis=0)).astype(int)
            if region is not None and not region.mask[y, x]:
                continue  # where the plain maps explained everything
            score, colour, ink = _paper_fraction(image, quad)
            if (score < 0.6 or ink < _NEIGHBOUR_INK * typical_ink
                    or np.abs(_tint(colour) - paper_tint).max() > 0.04):
                continue
            neighbour = CardQuad(order_corners(quad), False, score=score, paper=colour,
                                 ink=ink, guess=True)
            new.append(neighbour)
            cv2.fillConvexPoly(taken, np.round(quad).astype(np.int32), 255)
        found.extend(new)
        frontier = new
        if not new:
            break
    return found


def _neighbour_move(corners: npt.NDArray[np.float64], step: npt.NDArray[np.float64],
                    across: npt.NDArray[np.float64], typical: Callable[[npt.NDArray[np.float32]], float]
                    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A card's outline moved by ``step`` and sized for its new place (perspective shrinks far
    cards), still touching the card on the side it came from; with ``step`` and ``across``."""
    moved = corners + step
    center = corners.sum(axis=0) / 4
    ratio = typical(center + step) / typical(center)
    scale = min(max(math.sqrt(ratio), 0.8), 1.25)
    # The two corners nearest the card it came from stay where they are.
    near = np.argpartition(moved @ step, 2)[:2]
    anchor = moved[near].sum(axis=0) / 2
    return anchor + (moved - anchor) * scale, step * scale, across * scale


def _best_neighbours(corners: npt.NDArray[np.float64], steps: npt.NDArray[np.float64],
                     across: npt.NDArray[np.float64], paper: npt.NDArray[np.uint8],
                     taken: npt.NDArray[np.uint8], near_edge: npt.NDArray[np.uint8]
                     ) -> list[npt.NDArray[np.float32] | None]:
    """For each quad of ``corners`` (S, 4, 2) moved next to a card by its ``steps`` (S, 2):
    the quad, moved on by a gap of up to 0.3 of the step and slipped by up to 0.2 of its other
    side ``across`` (S, 2) (rows of cards are seldom straight, and perspective skews them), whose
    outline edges trace best among the places almost all on paper, clear of the cards taken and
    inside the image; None where no such place has edges along ``_NEIGHBOUR_EDGES`` of it."""
    height, width = paper.shape
    offsets = (_NEIGHBOUR_GAPS[None, :, None, None] * steps[:, None, None]
               + _NEIGHBOUR_SLIPS[None, :, None, None] * across[:, None, None])         # (S, P, 1, 2)
    quads = corners[:, None] + offsets                                                  # (S, P, 4, 2)
    inside = ((quads[..., 0].min(axis=2) >= BORDER_MARGIN) & (quads[..., 1].min(axis=2) >= BORDER_MARGIN)
              & (quads[..., 0].max(axis=2) <= width - 1 - BORDER_MARGIN)
              & (quads[..., 1].max(axis=2) <= height - 1 - BORDER_MARGIN))
    # Sample points round the card's margin, where no symbol is (bilinear in the corners).
    points = quads.transpose(0, 1, 3, 2) @ _MARGIN_WEIGHTS.T                             # (S, P, 2, K)
    xs = np.clip(np.round(points[:, :, 0]).astype(int), 0, width - 1)
    ys = np.clip(np.round(points[:, :, 1]).astype(int), 0, height - 1)
    clear = np.mean(taken[ys, xs] > 0, axis=2) <= 0.1
    on_paper = inside & clear & (np.mean(paper[ys, xs] > 0, axis=2) > _NEIGHBOUR_SUPPORT)  # (S, P)
    # How much of each outline on paper edges trace: points along its four sides, away from
    # the corners.
    score = np.full(on_paper.shape, -1.0)
    places = quads[on_paper]                                                            # (M, 4, 2)
    along = places[:, :, None] + _SIDE_STEPS[None, None, :, None] * (places[:, NEXT] - places)[:, :, None]
    edge_xs = np.clip(np.round(along[..., 0]).astype(int), 0, width - 1)
    edge_ys = np.clip(np.round(along[..., 1]).astype(int), 0, height - 1)
    score[on_paper] = np.mean(near_edge[edge_ys, edge_xs] > 0, axis=(1, 2))
    best = np.argmax(score, axis=1)
    return [quads[s, p].astype(np.float32) if score[s, p] >= _NEIGHBOUR_EDGES else None
            for s, p in enumerate(best)]


# A neighbour guess must lie on paper at this fraction of its sample points, have edges
# along this fraction of its outline, and ink at least this fraction of the cards' typical.
_NEIGHBOUR_SUPPORT = 0.9
# The places tried for a neighbour: every gap (0 to 0.3 of the step) with every slip (-0.2 to
# 0.2 of the other side).
_NEIGHBOUR_GAPS, _NEIGHBOUR_SLIPS = (grid.ravel() for grid in np.meshgrid(np.linspace(0.0, 0.3, 7),
                                                                           np.linspace(-0.2, 0.2, 9)))
_NEIGHBOUR_EDGES = 0.7
_NEIGHBOUR_INK = 0.6
_SIDE_STEPS = np.linspace(0.15, 0.85, 8)


def _margin_weights() -> npt.NDArray[np.float64]:
    """Bilinear weights (K, 4) of the corners for points round a card's margin: 6-8% in from
    each side, where the paper shows whatever the symbols."""
    across, down = np.linspace(0.08, 0.92, 8), np.linspace(0.06, 0.94, 12)
    u = np.concatenate([across, across, np.full(12, 0.08), np.full(12, 0.92)])
    v = np.concatenate([np.full(8, 0.06), np.full(8, 0.94), down, down])
    return np.stack([(1 - u) * (1 - v), u * (1 - v), u * v, (1 - u) * v], axis=1)


_MARGIN_WEIGHTS = _margin_weights()


# -- Cards partly covered --------------------------------------------------------------------
# A hand reaching over the table hides part of a card: its paper in view has neither a card's
# outline nor a card's size, so no map finds it. Where the table's plane is known, what shows
# is enough: seen from above, the paper in view is a card's rectangle less what covers it, and
# two of its sides still show, meeting at a corner (one whole, the other at least half).

def _covered_cards(cards: list[CardQuad], image: npt.NDArray[np.uint8],
                   paper_maps: Sequence[npt.NDArray[np.uint8]], region: _Region | None = None
                   ) -> list[CardQuad]:
    """Cards partly covered (by a hand), each completed from the blob of paper it shows in one
    of the ``paper_maps`` (uint8 0/255; the paper-colour map first) outside the ``cards``
    found: on the table's plane (`_TablePlanes`) the blob fits in a card's rectangle of the
    size the cards nearest show there, and of the places for the rectangle round it
    (`_card_round_blob`), the one whose outline runs along the blob's edges and nowhere across
    paper. Kept where nearly half the card or more is in view, two adjacent sides show (one along
    nearly all its length, the other along half), its margin in view is paper of the found
    cards' tint, and what hides the rest is not the table (`_hidden_by_table`). They are
    guesses, marked covered (reported not wholly in view, their reading uncertain)."""
    whole = [card for card in cards if not card.partial and not card.guess]
    if not whole:
        return []
    height, width = image.shape[:2]
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(grow_quad(card.corners, 1.5)).astype(np.int32), 255)
    typical = _typical_area_model(_plain_unless_few(whole))
    planes = _TablePlanes(cards, unchecked=True)
    paper_tint = np.median([_tint(card.paper) for card in whole], axis=0)
    found: list[CardQuad] = []
    # (Each map in turn: on a pale wood or a felt, a covered card's paper runs into the table in
    # one map and stands apart in another.)
    for paper in paper_maps:
        loose = cv2.bitwise_and(paper, cv2.bitwise_not(taken))
        # (Opened: thin bridges to speckle of a patterned table, and slivers along the cards.)
        blobs = cv2.morphologyEx(loose, cv2.MORPH_OPEN, _SQUARE5)
        count, labels, stats, centroids = cv2.connectedComponentsWithStats(blobs, connectivity=8)
        for label in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[label])
            center = centroids[label]
            if not _COVERED_SHOWN * typical(center) <= area <= _COVERED_BLOB * typical(center):
                continue
            if (x < BORDER_MARGIN or y < BORDER_MARGIN or x + w > width - BORDER_MARGIN
                    or y + h > height - BORDER_MARGIN):
                continue  # a card cut by the frame: another step's
            if region is not None and not region.mask[int(center[1]), int(center[0])]:
                continue
            plane = planes.nearest(center)
            if plane is None:
                continue
            blob = (labels[y:y + h, x:x + w] == label).astype(np.uint8)
            contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64) + (x, y)
            corners = _card_round_blob(plane, outline, _card_sides_on(plane, whole, center), loose)
            if corners is None or not _clear_inside(corners, taken, width, height):
                continue
            corners = order_corners(corners)
            # (The blob's outline counts the symbols in it as in view, as a person does.)
            if cv2.contourArea(outline.astype(np.float32)) < _COVERED_SHOWN_OF_CARD * cv2.contourArea(corners):
                continue  # under half in view: a person would not count it either
            seen = _sides_shown(corners, loose)
            score, colour, ink = _paper_fraction(image, corners, seen)
            if score < 0.6 or np.abs(_tint(colour) - paper_tint).max() > 0.04:
                continue
            if _hidden_by_table(image, corners, loose, seen):
                continue  # a small paper lying on the table: nothing covers the rest of the "card"
            # (Nothing over any side: a card in full view that the maps' outlines missed, read
            # as any other.)
            found.append(CardQuad(corners, False, score=score, paper=colour, ink=ink, guess=True,
                                  covered=_something_over_a_side(corners, loose, taken)))
            cv2.fillConvexPoly(taken, np.round(grow_quad(corners, 1.5)).astype(np.int32), 255)
    return found


# A covered card's blob in view is this fraction of the typical card's area at least (and at
# most a little over it), and this fraction of the outline completed round it.
_COVERED_SHOWN = 0.3
_COVERED_BLOB = 1.05
_COVERED_SHOWN_OF_CARD = 0.45


def _hidden_by_table(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32],
                     loose: npt.NDArray[np.uint8], shown: int) -> bool:
    """Whether what hides the rest of a card outline (its part off the paper in view) is of
    the table's colour, as the table shows just outside the outline's ``shown`` sides (bit k:
    the side from corner k to k + 1): then nothing covers a card there, and the paper is no
    card's part (a note, a torn scrap) but all there is. The outline is portrait-ordered
    (`order_corners`), so that it grows outward."""
    reach = max(3.0, 0.15 * short_side(corners))
    grown = grow_quad(corners, reach)
    # (In the grown outline's bounding box only: this runs for every card completed.)
    height, width = loose.shape
    x0, y0 = np.maximum(np.floor(grown.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(grown.max(axis=0)).astype(int) + 1, (width, height))
    offset = np.array([x0, y0], np.float32)
    not_paper = cv2.bitwise_not(loose[y0:y1, x0:x1])
    hidden = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(hidden, np.round(corners - offset).astype(np.int32), 255)
    hidden = cv2.erode(cv2.bitwise_and(hidden, not_paper), _SQUARE5)
    beside = np.zeros_like(hidden)
    for k in range(4):
        if shown >> k & 1:
            strip = np.array([corners[k], corners[NEXT[k]], grown[NEXT[k]], grown[k]])
            cv2.fillConvexPoly(beside, np.round(grow_quad(order_corners(strip), -1.0) - offset).astype(np.int32), 255)
    beside = cv2.bitwise_and(beside, not_paper)
    if cv2.countNonZero(hidden) < 20 or cv2.countNonZero(beside) < 20:
        return False
    return _lab_distance(image[y0:y1, x0:x1], hidden, beside) < _TABLE_ALIKE


def _lab_distance(crop: npt.NDArray[np.uint8], first: npt.NDArray[np.uint8],
                  second: npt.NDArray[np.uint8]) -> float:
    """The Lab distance (8-bit units) between the median colours of two non-empty masks of a
    BGR crop."""
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    return float(np.linalg.norm(np.median(lab[first > 0], axis=0) - np.median(lab[second > 0], axis=0)))


# What hides a covered card is told from the table at this Lab distance. (Lightness counts in
# full: a hand over a dark wood table is of the wood's hue, only lighter.)
_TABLE_ALIKE = 10.0


def _card_sides_on(plane: npt.NDArray[np.float64], whole: list[CardQuad], point: npt.NDArray[np.float64]
                   ) -> tuple[float, float]:
    """A card's short and long side on the table seen from above (``plane``) near ``point``:
    the median of the three whole cards nearest it (a plane from one card is off by a few
    percent elsewhere)."""
    nearest = sorted(whole, key=lambda card: float(np.hypot(*(card.center - point))))[:3]
    sides = []
    for card in nearest:
        flat = _to_plane(plane, card.corners.astype(np.float64))
        lengths = np.linalg.norm(flat - np.roll(flat, -1, axis=0), axis=1)
        sides.append(sorted([(lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2]))
    short, long = np.median(sides, axis=0)
    return float(short), float(long)


def _card_round_blob(plane: npt.NDArray[np.float64], outline: npt.NDArray[np.float64],
                     sides: tuple[float, float], loose: npt.NDArray[np.uint8]
                     ) -> npt.NDArray[np.float32] | None:
    """The card outline (float32 (4, 2), image pixels) a blob of paper (its ``outline``, (N, 2)
    image pixels) is the part in view of: on the table seen from above (``plane``), a
    rectangle of the card's ``sides`` along one of the blob's axes (`_blob_axes`), either way
    round, flush with the blob at either end of each axis it does not span; the one whose
    outline `_outline_support` bears out best. None where the blob fits no card, or no place is borne
    out."""
    flat = cv2.convexHull(_to_plane(plane, outline).astype(np.float32)).reshape(-1, 2).astype(np.float64)
    back = np.linalg.inv(plane)
    best, best_score = None, -math.inf
    for first in _blob_axes(flat, sides[0]):
        second = np.array([-first[1], first[0]])
        along_first, along_second = flat @ first, flat @ second
        for length_first, length_second in (sides, sides[::-1]):
            if (np.ptp(along_first) > _COVERED_FIT * length_first
                    or np.ptp(along_second) > _COVERED_FIT * length_second):
                continue
            for middle_first in _flush_places(along_first, length_first):
                for middle_second in _flush_places(along_second, length_second):
                    middle = middle_first * first + middle_second * second
                    half_first, half_second = length_first / 2 * first, length_second / 2 * second
                    rectangle = middle + np.array([-half_first - half_second, half_first - half_second,
                                                   half_first + half_second, -half_first + half_second])
                    corners = _to_plane(back, rectangle).astype(np.float32)
                    support = _outline_support(corners, loose)
                    if support is not None and support > best_score:
                        best, best_score = corners, support
    return best


def _blob_axes(hull: npt.NDArray[np.float64], short: float) -> list[npt.NDArray[np.float64]]:
    """The directions (unit vectors, each up to a quarter turn) a card's sides may take round
    a blob whose convex ``hull`` (N, 2) is seen from above: those of its rectangle of least
    area, and of its long straight edges (a card's sides in view; a finger's gap reaching out
    of the blob turns its least rectangle)."""
    _, _, least = cv2.minAreaRect(hull.astype(np.float32))
    angles = [math.radians(least)]
    edges = np.roll(hull, -1, axis=0) - hull
    for dx, dy in edges[np.hypot(edges[:, 0], edges[:, 1]) >= _AXIS_EDGE * short]:
        angles.append(math.atan2(dy, dx))
    axes: list[float] = []
    for angle in angles:
        angle %= math.pi / 2
        if all(min(abs(angle - other), math.pi / 2 - abs(angle - other)) > _SAME_AXIS for other in axes):
            axes.append(angle)
    return [np.array([math.cos(angle), math.sin(angle)]) for angle in axes]


# A straight edge of a blob this long (of a card's short side) may be a card's side; axes
# closer than this (radians, 3 degrees) are one.
_AXIS_EDGE = 0.3
_SAME_AXIS = math.radians(3)


# A blob spans at most this much of a card's side (the blob's edge is a pixel or two off).
_COVERED_FIT = 1.12


def _flush_places(extent: npt.NDArray[np.float64], length: float) -> list[float]:
    """Where along an axis a card's side of ``length`` lies round a blob's ``extent`` (its
    points' coordinates on the axis): its middle, flush with either end of the blob, or
    centred where the blob spans nearly all of it."""
    low, high = float(extent.min()), float(extent.max())
    if high - low >= _SPANNED * length:
        return [(low + high) / 2]
    return [low + length / 2, high - length / 2]


_SPANNED = 0.92


def _outline_support(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]) -> float | None:
    """How well a card outline fits the paper in view (``loose``, uint8 0/255): the fraction
    of points along its sides with paper just inside and none just outside, less twice the
    fraction with paper on both sides (the card would go on there); None where the paper
    crosses it anywhere much, or no two adjacent sides show, one along nearly all its length
    and the other along half (a blob's straight edges are a card's only where they meet at
    its corner)."""
    inside, outside = _paper_across_sides(corners, loose)
    shown = inside & ~outside
    crossed = inside & outside
    if crossed.mean() > _CROSSED_SIDES:
        return None
    along = shown.mean(axis=1)
    whole, most = along >= _SIDE_SHOWN, along >= _SIDE_HALF_SHOWN
    if not np.any((whole & np.roll(most, -1)) | (most & np.roll(whole, -1))):
        return None
    return float(shown.mean() - 2.0 * crossed.mean())


# Paper runs across this fraction of a covered card's outline at most, and of two adjacent
# sides, one shows along this fraction of its length at least, and the other half of its.
_CROSSED_SIDES = 0.02
_SIDE_SHOWN = 0.85
_SIDE_HALF_SHOWN = 0.5


def _something_over_a_side(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8],
                           taken: npt.NDArray[np.uint8]) -> bool:
    """Whether something lies over a card outline's margin along some side: just inside it,
    neither its paper in view (``loose``) nor a card found beside it (``taken``: a card laid
    against it in a grid hides none of it, though the maps give it that card's margin)."""
    on_paper, _ = _paper_across_sides(corners, loose)
    on_card, _ = _paper_across_sides(corners, taken)
    return bool(((~(on_paper | on_card)).mean(axis=1) > 1.0 - _SIDE_SHOWN).any())


def _sides_shown(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]) -> int:
    """The sides (bit k for the side from corner k to k + 1) of a card outline that show along
    most of their length: paper just inside and none just outside."""
    inside, outside = _paper_across_sides(corners, loose)
    along = (inside & ~outside).mean(axis=1)
    return sum(1 << k for k in range(4) if along[k] >= _SIDE_SHOWN)


def _paper_across_sides(corners: npt.NDArray[np.float32], loose: npt.NDArray[np.uint8]
                        ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Whether ``loose`` is paper (4, K) just inside and just outside a quad, at K points
    along each of its sides (away from the corners), 4% of its short side in (2 pixels at
    least)."""
    height, width = loose.shape
    start = corners.astype(np.float64)
    end = np.roll(start, -1, axis=0)
    points = start[:, None] + _ALONG_SIDES[None, :, None] * (end - start)[:, None]      # (4, K, 2)
    direction = (end - start) / np.maximum(np.linalg.norm(end - start, axis=1, keepdims=True), 1e-9)
    normal = np.stack([-direction[:, 1], direction[:, 0]], axis=1)
    center = start.mean(axis=0)
    inward = np.where(((center - start) * normal).sum(axis=1, keepdims=True) >= 0, normal, -normal)
    step = max(2.0, 0.04 * short_side(corners))

    def paper_at(where: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        xs, ys = np.round(where[..., 0]).astype(int), np.round(where[..., 1]).astype(int)
        in_image = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
        return in_image & (loose[np.clip(ys, 0, height - 1), np.clip(xs, 0, width - 1)] > 0)

    return paper_at(points + step * inward[:, None]), paper_at(points - step * inward[:, None])


_ALONG_SIDES = np.linspace(0.08, 0.92, 20)


# -- Cards found from their printed symbols ------------------------------------------------
# A card on a table of its own paper's tone (a pale stripe of a cloth, a white table in
# shadow), or laid edge to edge with others under a hand's shadow, may show no outline in any
# map, yet its symbols stand out: ink darker than the paper round it, symbol-shaped, one to
# three of them stacked at a fixed pitch. The card's outline follows from them.

@dataclass(frozen=True)
class _Symbol:
    """A printed symbol seen in the image: its centre, its length (across the card) and
    thickness (along it) in pixels, and the unit vector of its length."""

    center: npt.NDArray[np.float64]
    length: float
    thickness: float
    axis: npt.NDArray[np.float64]
    # Its convex hull's points (N, 2), where it was seen whole (not one of a run-together stack).
    hull: npt.NDArray[np.float64] | None = None

    def outline(self) -> npt.NDArray[np.float64]:
        """Its convex hull's points (N, 2), or where it was not seen whole, its box's corners."""
        if self.hull is not None:
            return self.hull
        across = np.array([-self.axis[1], self.axis[0]])
        half_length, half_thickness = self.length / 2 * self.axis, self.thickness / 2 * across
        return self.center + np.array([-half_length - half_thickness, half_length - half_thickness,
                                       half_length + half_thickness, -half_length + half_thickness])

    def extent_along(self, direction: npt.NDArray[np.float64]) -> float:
        """Its width along a unit ``direction``."""
        if self.hull is None:
            across = np.array([-self.axis[1], self.axis[0]])
            return (self.length * abs(float(direction @ self.axis))
                    + self.thickness * abs(float(direction @ across)))
        projected = self.hull @ direction
        return float(projected.max() - projected.min())


# A symbol's length and thickness over the card's width, and the pitch of stacked symbols
# over a symbol's thickness (both decks we have and the generated prints: 0.67-0.72,
# 0.315-0.345 and 0.105-0.14 blank between, so 1.2-1.55 thicknesses).
_SYMBOL_LENGTH = 0.70
_SYMBOL_THICKNESS = 0.33
_SYMBOL_PITCH = (1.1, 1.75)


def _cards_from_symbols(cards: list[CardQuad], image: npt.NDArray[np.uint8], maps: _Maps
                        ) -> list[CardQuad]:
    """Cards outlined round groups of symbols outside the ``cards`` found (`_symbols_outside`,
    `_symbol_groups`), each snapped to the edges round it where they show, and kept only where
    its margin is paper of the others' tint, its ink as strong as a card's must be
    (`INK_RATIO`), and its face shows as many symbols as the group, centred. They are guesses
    (they never set the typical card), but weighed in the merge as plain candidates, and not
    hidden by a quad far larger than a card (the sheet of paper the card lies on).
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) < 3:
        return []
    typical = _typical_area_model(_plain_unless_few(whole))
    widths = [math.sqrt(typical(c.center) / _FLAT_ASPECT) for c in whole]
    typical_ink = float(np.median([c.ink for c in whole]))
    paper_level = float(np.median([min(c.paper) for c in whole]))
    # (Everywhere, not only round the paper the cards found leave unexplained: a card in a
    # deep shadow is no paper to any map, yet its symbols show.)
    symbols, stacks = _symbols_outside(cards, maps.darkest, typical, max(widths), typical_ink, paper_level)
    paper_tint = np.median([_tint(c.paper) for c in whole], axis=0)
    planes = _TablePlanes(cards)
    return _cards_round_groups(_symbol_groups(symbols, planes) + stacks, cards, image, maps, typical_ink,
                               paper_tint, planes=planes)


def _cards_from_symbols_alone(cards: list[CardQuad], image: npt.NDArray[np.uint8], maps: _Maps
                              ) -> list[CardQuad]:
    """Cards outlined round groups of symbols where the maps found fewer than three whole
    ``cards``: then no typical card tells the symbols' size, ink and paper, so symbols are
    looked for at each of a few card sizes in turn, with a typical card's ink assumed.

    A card on a cloth of its own paper's tone (pale stripes) shows no outline to any map, and
    a block of cards laid edge to edge shows none between them: a whole table of them gives no
    card to start from. The symbols are looked for everywhere, inside what the maps found too
    (a block's outline holds several cards); a card found here where the maps found one is
    left to the maps, and a quad of the maps holding two or more is a block (the caller drops
    it). What is found counts only when three or more cards (with those of the maps) have
    bright paper of one tint, a card's size for their place and an edge along a side: one or
    two symbol-like groups are as likely a box's printed art or a pattern.
    """
    whole = [c for c in cards if not c.partial]
    if len(whole) >= 3:
        return []
    paper_level = _percentile(maps.darkest.ravel()[::7].astype(np.float32), 0.95)
    # Every size, even beside a card or two found (those may be blocks of cards: taking
    # their size lost all of a dev scene's 12 cards found here), largest first: a symbol is
    # seen whole where the closing spans it, and seen at the smaller sizes too (as its
    # outline's strokes), where it is left out.
    symbols: list[_Symbol] = []
    stacks: list[list[_Symbol]] = []
    for card_width in sorted(_ALONE_CARD_WIDTHS, reverse=True):
        def typical(center: npt.NDArray[np.float32], area: float = card_width ** 2 * _FLAT_ASPECT) -> float:
            return area
        seen, stacked = _symbols_outside([], maps.darkest, typical, card_width, _ALONE_INK, paper_level)
        symbols += [symbol for symbol in seen if not any(
            np.hypot(*(symbol.center - other.center)) < 0.5 * other.thickness for other in symbols)]
        stacks += stacked
    # Cards' paper is among the brightest things in view, and a card's outline shows
    # somewhere; a rug's or a cloth's pattern gives symbol-like blobs on a darker ground,
    # with no edge round them.
    found = _cards_round_groups(_symbol_groups(symbols) + stacks, [], image, maps, _ALONE_INK, None,
                                paper_floor=_ALONE_PAPER * paper_level, edge_ratio=_ALONE_EDGE)
    plain = [c for c in whole if not _holds_several(c, found)]
    found = [f for f in found if not any(_covers(c, f) for c in plain)]
    if len(found) + len(plain) < 3:
        return []
    # They are of one tint, and their sizes follow one perspective (a pattern's blobs come
    # at every size).
    paper_tint = np.median([_tint(c.paper) for c in found + plain], axis=0)
    found = [c for c in found if np.abs(_tint(c.paper) - paper_tint).max() <= 0.04]
    # And their symbols are printed in coloured inks: a grey checked cloth's dark crossings,
    # ringed by pale cells, are grey.
    found = [c for c in found if _shows_coloured_ink(image, c.corners)]
    if found:
        typical = _typical_area_model(found + plain)
        found = [c for c in found if _size_mismatch(c, typical(c.center)) < _ALONE_SIZE]
    return found if len(found) + len(plain) >= 3 else []


def _strongest_side(corners: npt.NDArray[np.float32], gradient: npt.NDArray[np.float32]) -> float:
    """The largest, over a quad's four sides, of the median ``gradient`` magnitude along it."""
    height, width = gradient.shape
    strongest = 0.0
    for k in range(4):
        points = corners[k] + _SIDE_STEPS[:, None] * (corners[NEXT[k]] - corners[k])
        xs = np.clip(np.round(points[:, 0]).astype(int), 0, width - 1)
        ys = np.clip(np.round(points[:, 1]).astype(int), 0, height - 1)
        strongest = max(strongest, float(np.median(gradient[ys, xs])))
    return strongest


def _holds_several(quad: CardQuad, cards: list[CardQuad]) -> bool:
    """Whether two or more of the ``cards`` lie inside ``quad``: it outlines a block of cards."""
    return sum(_lies_inside(card, quad) for card in cards) >= 2


# The card widths (pixels, in the detection-scale image) tried when no card shows the size:
# each finds symbols of cards 0.7 to 1.5 times as wide. And the cards' ink strength assumed
# (scenes' medians are 0.26-0.99 on the dev scenes; at 0.3, paper a shade darker than a pale
# stripe beside it is taken for ink, and the symbols run together with it).
_ALONE_CARD_WIDTHS = (20.0, 40.0, 80.0, 160.0)
_ALONE_INK = 0.6
# Their paper at least this bright for the brightest in view (the 95th percentile of the
# darkest channel), and their area within this log ratio of the typical card's there.
_ALONE_PAPER = 0.5
_ALONE_SIZE = 0.7
# A card's edge shows along one side at least (against the table, a shadow, a neighbour):
# the median gradient magnitude (Sobel) along it this fraction of its paper's brightness. A
# pattern's blob on a plain ground is ringed by ground, with no edge where a card's would be.
_ALONE_EDGE = 0.08


def _cards_round_groups(groups: list[list[_Symbol]], cards: list[CardQuad], image: npt.NDArray[np.uint8],
                        maps: _Maps, typical_ink: float, paper_tint: npt.NDArray[np.float64] | None,
                        paper_floor: float = 0.0, edge_ratio: float = 0.0, planes: _TablePlanes | None = None
                        ) -> list[CardQuad]:
    """The cards the symbol ``groups`` are printed on, outside the ``cards``: each outline
    estimated from its group, snapped to the edges round it where they show, kept where its
    margin is paper (of ``paper_tint``, if given, and no channel darker than ``paper_floor``),
    its ink as strong as a card's must be (`INK_RATIO` of ``typical_ink``), an edge shows
    along one side at least (`_strongest_side` at least ``edge_ratio`` of the paper's darkest
    channel) and its face shows as many symbols as the group, centred. Where the table's
    ``planes`` are known, the outline is also made on the plane (`_card_round_symbols_on`)."""
    if not groups:
        return []
    height, width = image.shape[:2]
    taken = np.zeros((height, width), np.uint8)
    for card in cards:
        cv2.fillConvexPoly(taken, np.round(card.corners).astype(np.int32), 255)
    found = []
    for group in groups:
        # The outline estimated from the symbols is off by a few percent; the card's own
        # edges, where they show, place it exactly, but may be another card's edges. Seen
        # steeply, a lone symbol's axis is sheared off the card's: the table's plane, as the
        # nearest card shows it, gives the card's true outline round it.
        estimates = [_card_round_symbols(group)]
        plane = (planes.nearest(np.mean([symbol.center for symbol in group], axis=0))
                 if planes is not None else None)
        if plane is not None:
            estimates += [outline for outline in [_card_round_symbols_on(plane, group)] if outline is not None]
        tries = [(corners, estimate) for estimate in estimates
                 for corners in (_snapped_to_edges(estimate, maps.gradient), estimate)]
        for corners, estimate in tries:
            if not _clear_inside(corners, taken, width, height):
                continue
            if not 0.8 < cv2.contourArea(corners) / cv2.contourArea(estimate) < 1.25:
                continue
            # Its paper is judged a little inside the outline, which may still be a little off.
            center = corners.sum(axis=0) / 4
            score, colour, ink = _paper_fraction(image, center + _SYMBOL_CARD_INSET * (corners - center))
            if (score < 0.6 or ink < INK_RATIO * typical_ink or min(colour) < paper_floor
                    or (paper_tint is not None and np.abs(_tint(colour) - paper_tint).max() > 0.04)):
                continue
            if edge_ratio and _strongest_side(corners, maps.gradient) < edge_ratio * min(colour):
                continue
            face = segment_ink(warp_card(image, corners))
            if len(face.symbols) != len(group) or not shows_symbols(face) or symbols_off_centre(face):
                continue
            found.append(CardQuad(corners, False, score=score, paper=colour, ink=ink, guess=True,
                                  from_symbols=True))
            cv2.fillConvexPoly(taken, np.round(corners).astype(np.int32), 255)
            break
    return found


# The margin of a card outlined round its symbols is judged this far inside the outline.
_SYMBOL_CARD_INSET = 0.92


def _clear_of_frame(corners: npt.NDArray[np.float32], width: int, height: int) -> bool:
    """Whether every corner of a quad lies in a ``width`` x ``height`` image at least the border
    margin in from its edges (the converse margin of `_in_view`)."""
    return bool(corners[:, 0].min() >= BORDER_MARGIN and corners[:, 1].min() >= BORDER_MARGIN
                and corners[:, 0].max() <= width - 1 - BORDER_MARGIN
                and corners[:, 1].max() <= height - 1 - BORDER_MARGIN)


def _clear_inside(corners: npt.NDArray[np.float32], taken: npt.NDArray[np.uint8], width: int,
                  height: int) -> bool:
    """Whether a quad lies inside the image and at most a fifth over the cards ``taken`` (an
    outline estimated from symbols may reach a little over the touching cards)."""
    if not _clear_of_frame(corners, width, height):
        return False
    # (Drawn only in its bounding box: this runs for every outline tried.)
    outline = np.round(corners).astype(np.int32)
    x, y, w, h = cv2.boundingRect(outline)
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, outline - [x, y], 255)
    return np.count_nonzero(inside & taken[y:y + h, x:x + w]) <= 0.2 * np.count_nonzero(inside)


def _symbols_outside(cards: list[CardQuad], darkest: npt.NDArray[np.uint8],
                     typical: Callable[[npt.NDArray[np.float32]], float], largest_width: float,
                     typical_ink: float, paper_level: float
                     ) -> tuple[list[_Symbol], list[list[_Symbol]]]:
    """The symbol-like ink blobs outside the ``cards``: darker (in the darkest channel) than
    the brightest nearby by a good part of the cards' ink strength (``typical_ink``), the size
    and shape of a symbol of a card of the ``typical`` area there (the largest card
    ``largest_width`` pixels wide), not in deep shadow (for paper of ``paper_level``), and
    ringed by paper. And the blobs that are the two or three symbols of one card run together
    (blurred, or squiggles nearly touching), each as the groups of symbols it may be
    (`_stacked_symbols`).

    The brightest nearby is a grey closing over a little more than a symbol's thickness, so it
    is the paper round a symbol; the gaps between cards on a dark table come out as ink too,
    but are ringed by table, not paper.
    """
    size = int(round(0.5 * largest_width)) | 1
    nearby = cv2.morphologyEx(darkest, cv2.MORPH_CLOSE,
                              cv2.getStructuringElement(cv2.MORPH_RECT, (size, size)))
    nearby_f = nearby.astype(np.float32)
    depth = cv2.subtract(nearby, darkest).astype(np.float32)
    ink = ((depth > np.maximum(_SYMBOL_INK * typical_ink * nearby_f, 10.0))
           & (nearby_f > _SHADOWED_PAPER * paper_level)).astype(np.uint8) * 255
    for card in cards:
        cv2.fillConvexPoly(ink, np.round(grow_quad(card.corners, 2.0)).astype(np.int32), 0)
    # (The strokes of an outline symbol break up in a small card; in a tiny one they are
    # blurred solid, and the blank between its symbols is only 2-3 pixels: closing joins them.)
    if largest_width > _UNCLOSED_WIDTH:
        ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, _SQUARE3)
    # Every blob's outer boundary, also of those in a hole of another: a patterned table
    # (a checked cloth's mid-tone lines) is "ink" round the card its symbols lie in.
    contours, hierarchy = cv2.findContours(ink, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    symbols = []
    stacks = []
    largest = 2 * largest_width  # (a symbol is at most a card wide, and cards nearer the camera larger)
    for contour, links in zip(contours, hierarchy[0] if hierarchy is not None else []):
        if len(contour) < 4 or links[3] >= 0:  # (a hole's boundary has a parent)
            continue
        _, _, box_width, box_height = cv2.boundingRect(contour)
        if max(box_width, box_height) < 6 or max(box_width, box_height) > largest:
            continue
        hull = cv2.convexHull(contour)
        symbol = _symbol_of(hull)
        if symbol is None:
            continue
        card_width = math.sqrt(typical(symbol.center.astype(np.float32)) / _FLAT_ASPECT)
        reach = max(2, int(round(0.1 * card_width)))
        if _symbol_shaped(symbol.length, symbol.thickness, card_width):
            if _ringed_by_paper(hull, darkest, nearby, reach):
                symbols.append(symbol)
            continue
        stacked = _stacked_symbols(symbol, card_width)
        if stacked and _ringed_by_paper(hull, darkest, nearby, reach):
            stacks.extend(stacked)
    return symbols, stacks


def _symbol_shaped(length: float, thickness: float, card_width: float) -> bool:
    """Whether a blob ``length`` long and ``thickness`` thick has the size and shape of a
    symbol of a card ``card_width`` wide. (A card seen steeply is narrower than its area says,
    and its symbols thinner.)"""
    return 0.5 * card_width <= length <= 1.05 * card_width and 0.22 * length <= thickness <= 0.7 * length


def _stacked_symbols(blob: _Symbol, card_width: float) -> list[list[_Symbol]]:
    """The groups of two or three symbols a blob (seen as one `_Symbol`) may be, run together
    on a card about ``card_width`` wide: the symbols' length across the stack, their number
    and pitch along it, each way round the blob's axes that fits a card's print (a stack may
    be longer along either axis, as many symbols and as foreshortened as it is)."""
    hypotheses = []
    across = np.array([-blob.axis[1], blob.axis[0]])
    # (The symbols' length along the blob's axis and the stack across it, or the other way.)
    for length, extent, axis, along in ((blob.length, blob.thickness, blob.axis, across),
                                        (blob.thickness, blob.length, across, blob.axis)):
        for count in (2, 3):
            # k symbols of thickness t at a pitch of p t span (p k - (p - 1)) t.
            thickness = extent / (_STACK_PITCH * count - (_STACK_PITCH - 1))
            if not _symbol_shaped(length, thickness, card_width):
                continue
            offsets = (np.arange(count) - (count - 1) / 2) * _STACK_PITCH * thickness
            hypotheses.append([_Symbol(blob.center + offset * along, length, thickness, axis)
                               for offset in offsets])
    return hypotheses


# The pitch of a card's stacked symbols, in symbol thicknesses (the prints' 1.2-1.55).
_STACK_PITCH = 1.35


# Symbols in cards no wider than this (pixels) are looked for without closing the ink's gaps.
_UNCLOSED_WIDTH = 25

# A symbol's ink is darker than the paper round it by this fraction of the cards' typical ink
# strength (outline strokes in a small card are faint).
_SYMBOL_INK = 0.3


def _symbol_of(hull: npt.NDArray[np.int32]) -> _Symbol | None:
    """The symbol a blob's convex hull outlines: its length along the hull's principal axis (a
    diamond's smallest enclosing rectangle lies along its sides, its principal axis along its
    long diagonal), its thickness across; None for a blob too small or not filling its box
    as a symbol does (a diamond fills half of it)."""
    moments = cv2.moments(hull)
    if moments["m00"] <= 0:
        return None
    angle = 0.5 * math.atan2(2 * moments["mu11"], moments["mu20"] - moments["mu02"])
    axis = np.array([math.cos(angle), math.sin(angle)])
    across = np.array([-axis[1], axis[0]])
    points = hull.reshape(-1, 2).astype(np.float64)
    along_axis, along_across = points @ axis, points @ across
    length = float(along_axis.max() - along_axis.min())
    thickness = float(along_across.max() - along_across.min())
    if length < 6 or moments["m00"] < 0.4 * length * thickness:
        return None
    center = ((along_axis.max() + along_axis.min()) / 2 * axis
              + (along_across.max() + along_across.min()) / 2 * across)
    return _Symbol(center, length, thickness, axis, points)


def _ringed_by_paper(hull: npt.NDArray[np.int32], darkest: npt.NDArray[np.uint8],
                     nearby: npt.NDArray[np.uint8], reach: int) -> bool:
    """Whether nearly all of a ring ``reach`` pixels wide round a blob (its convex ``hull``) is
    as bright as the brightest nearby: paper, not the table between cards."""
    height, width = darkest.shape
    x, y, w, h = cv2.boundingRect(hull)
    x0, y0 = max(0, x - reach), max(0, y - reach)
    x1, y1 = min(width, x + w + reach), min(height, y + h + reach)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(blob, hull - [x0, y0], 255)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    ring = (cv2.dilate(blob, disc) > 0) & (blob == 0)
    bright = darkest[y0:y1, x0:x1][ring] >= 0.8 * nearby[y0:y1, x0:x1][ring].astype(np.float32)
    return bool(np.mean(bright) >= 0.85)


def _symbol_groups(symbols: list[_Symbol], planes: _TablePlanes | None = None) -> list[list[_Symbol]]:
    """The symbols grouped card by card: symbols of one card lie side by side along their
    thickness at the print's pitch, alike in length and direction (`_side_by_side`), in the
    image or, where the table's ``planes`` are known, on the table seen from above; failing
    that, where their axes may mislead (`_side_by_side_as_seen`), into groups of three at
    most. Groups of more than three (cards too close to tell apart) are dropped."""
    parent = list(range(len(symbols)))
    size = [1] * len(symbols)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        i, j = root(i), root(j)
        if i != j:
            parent[i] = j
            size[j] += size[i]

    pairs = [(i, j) for i in range(len(symbols)) for j in range(i + 1, len(symbols))
             if _alike(symbols[i], symbols[j])]
    for i, j in pairs:
        if _side_by_side(symbols[i], symbols[j]):
            join(i, j)
    if planes is not None:
        # Seen steeply, one card's symbols are sheared out of line and squeezed; on the
        # table's plane they lie as printed.
        for i, j in pairs:
            if root(i) != root(j):
                plane = planes.nearest((symbols[i].center + symbols[j].center) / 2)
                if plane is None:
                    continue
                a, b = _symbol_on(plane, symbols[i]), _symbol_on(plane, symbols[j])
                if a is not None and b is not None and _alike(a, b) and _side_by_side(a, b):
                    join(i, j)
    # (Only into groups of three at most: the looser test must not join a stray blob beside
    # a card's three symbols, which would drop them all.)
    for i, j in pairs:
        if (root(i) != root(j) and size[root(i)] + size[root(j)] <= 3
                and _side_by_side_as_seen(symbols[i], symbols[j])):
            join(i, j)
    groups: dict[int, list[_Symbol]] = {}
    for i, symbol in enumerate(symbols):
        groups.setdefault(root(i), []).append(symbol)
    return [group for group in groups.values() if len(group) <= 3]


def _alike(a: _Symbol, b: _Symbol) -> bool:
    """Whether two symbols point the same way and are about as long."""
    return abs(float(a.axis @ b.axis)) >= _SAME_DIRECTION and 0.8 < a.length / b.length < 1.25


def _side_by_side(a: _Symbol, b: _Symbol) -> bool:
    """Whether two alike symbols lie side by side along their thickness at the print's pitch,
    straight across or as a sheared card has them (`_SYMBOL_SHEAR`)."""
    offset = b.center - a.center
    card_width = (a.length + b.length) / 2 / _SYMBOL_LENGTH
    thickness = (a.thickness + b.thickness) / 2
    along = abs(float(offset @ a.axis))
    across = abs(float(offset[1] * a.axis[0] - offset[0] * a.axis[1]))
    pitch = across / thickness
    return (along < max(0.12 * card_width, _SYMBOL_SHEAR * across)
            and _SYMBOL_PITCH[0] < pitch < _SYMBOL_PITCH[1])


def _side_by_side_as_seen(a: _Symbol, b: _Symbol) -> bool:
    """Whether two alike symbols lie side by side by their widths along and across the line
    joining them. Seen steeply and sheared, a squiggle's or an oval's outline is nearly round
    and its principal axis says little about the card's (bench 1106: 50 degrees off), and
    their widths along that line may overlap."""
    offset = b.center - a.center
    distance = float(np.hypot(*offset))
    line = offset / max(distance, 1e-9)
    normal = np.array([-line[1], line[0]])
    width_along = (a.extent_along(line) + b.extent_along(line)) / 2
    width_across = (a.extent_along(normal) + b.extent_along(normal)) / 2
    return (_NEAREST_SIDE_BY_SIDE < distance / width_along < _SYMBOL_PITCH[1]
            and _SIDE_BY_SIDE_ACROSS[0] < distance / width_across < _SIDE_BY_SIDE_ACROSS[1])


# Symbols side by side are this far apart for their widths along the line joining them
# (from this to the pitch's upper end) and across it: flat, the pitch over a symbol's length
# is 0.58-0.72; a card seen steeply along its length brings them closer, across it shortens
# the symbols.
_NEAREST_SIDE_BY_SIDE = 0.8
_SIDE_BY_SIDE_ACROSS = (0.45, 1.0)
# A card seen obliquely is sheared: the line through its symbols leans up to 20 degrees off
# square to their axes (tan 20 degrees).
_SYMBOL_SHEAR = 0.36
# Symbols of one card point the same way within 20 degrees (squiggles' axes wander).
_SAME_DIRECTION = math.cos(math.radians(20))


def _card_round_symbols(group: list[_Symbol]) -> npt.NDArray[np.float32]:
    """The outline of the card a group of symbols is printed on, portrait-ordered: centred on
    them, as wide as their length says, and as long as that and their thickness say (a card
    seen steeply is foreshortened along its length, and its symbols with it)."""
    centers = np.array([s.center for s in group])
    center = centers.mean(axis=0)
    axis = group[0].axis
    across = np.array([-axis[1], axis[0]])
    if len(group) > 1:
        # The line through the symbols runs along the card more truly than a symbol's own
        # axis (a squiggle's wanders).
        step = centers[np.argmax(centers @ across)] - centers[np.argmin(centers @ across)]
        across = step / max(float(np.linalg.norm(step)), 1e-9)
        axis = np.array([across[1], -across[0]])
    card_width = float(np.median([s.length for s in group])) / _SYMBOL_LENGTH
    squash = float(np.median([s.thickness / s.length for s in group])) / (_SYMBOL_THICKNESS / _SYMBOL_LENGTH)
    card_length = _FLAT_ASPECT * card_width * min(max(squash, 0.5), 1.1)
    half_w, half_l = axis * card_width / 2, across * card_length / 2
    corners = np.array([center - half_w - half_l, center + half_w - half_l,
                        center + half_w + half_l, center - half_w + half_l])
    return order_corners(corners.astype(np.float32))


class _TablePlanes:
    """The table's plane as the whole cards found show it: each card is a flat rectangle of a
    card's proportions, so the homography taking it to one maps the whole table (a plane) to
    a view from straight above, up to a turn and a scale."""

    def __init__(self, cards: list[CardQuad], unchecked: bool = False) -> None:
        # (Not those outlined round their symbols: their outlines are estimates.)
        self._cards = [card for card in cards if not card.partial and not card.from_symbols]
        self._planes: dict[int, npt.NDArray[np.float64] | None] = {}
        # With too few cards to check a card's plane by, whether one card's own outline may
        # give it: a close-up of a card or two shows no more.
        self._unchecked = unchecked and 0 < len(self._cards) < _PLANE_CARDS

    def nearest(self, point: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
        """The homography (3, 3) from the image to the table seen from above, by the nearest
        of the three cards nearest ``point`` whose outline the others bear out; None where
        none does, or too few cards are found to check it by (unless unchecked: then by the
        nearest card's outline alone, `_plane_of_alone`)."""
        if len(self._cards) < _PLANE_CARDS and not self._unchecked:
            return None
        distances = [float(np.hypot(*(card.center - point))) for card in self._cards]
        if self._unchecked:
            nearest = int(np.argmin(distances))
            if nearest not in self._planes:
                self._planes[nearest] = _plane_of_alone(self._cards[nearest])
            return self._planes[nearest]
        for index in np.argsort(distances)[:3]:
            if index not in self._planes:
                self._planes[index] = self._plane_of(self._cards[index])
            if self._planes[index] is not None:
                return self._planes[index]
        return None

    def _plane_of(self, card: CardQuad) -> npt.NDArray[np.float64] | None:
        """The homography by ``card``: of the two ways its outline may be a card's (seen
        steeply, a card's long sides may look the shorter), the one that gives the other
        cards most nearly a card's proportions, if it gives most of them those closely."""
        others = [other.corners.astype(np.float64) for other in self._cards if other is not card]
        best, best_error = None, math.inf
        for turn in (0, 1):
            homography = _to_flat_card(np.roll(card.corners, turn, axis=0), short_side(card.corners))
            seen_flat = [_to_plane(homography, corners) for corners in others]
            error = float(np.median([abs(math.log(max(aspect(c), 1.0 / aspect(c)) / _FLAT_ASPECT))
                                     for c in seen_flat]))
            if error < best_error:
                best, best_error = homography, error
        return best if best_error < _FORESHORTENING_FIT else None


# A card's plane is checked by this many other cards at least.
_PLANE_CARDS = 4


def _plane_of_alone(card: CardQuad) -> npt.NDArray[np.float64] | None:
    """The homography (3, 3) from the image to the table seen from above by one card's outline
    alone, its longer sides as seen taken for its long sides; None where its proportions leave
    that in doubt (a card seen steeply along its length looks nearly square)."""
    seen_aspect = aspect(card.corners)
    if not _ALONE_ASPECT <= max(seen_aspect, 1.0 / seen_aspect):
        return None
    # (Below 1, the sides 0 and 2 are the longer pair: corner 1 then starts a short side.)
    turn = 0 if seen_aspect >= 1.0 else 1
    return _to_flat_card(np.roll(card.corners, -turn, axis=0), short_side(card.corners))


def _to_flat_card(corners: npt.NDArray[np.float32], width: float) -> npt.NDArray[np.float64]:
    """The homography (3, 3) taking a card's ``corners`` (the first side a short one) to a flat
    card ``width`` pixels wide seen from straight above."""
    flat = np.array([[0, 0], [width, 0], [width, _FLAT_ASPECT * width], [0, _FLAT_ASPECT * width]], np.float32)
    return cv2.getPerspectiveTransform(corners.astype(np.float32), flat).astype(np.float64)


# One card alone gives the table's plane where it looks at least this long for its width.
_ALONE_ASPECT = 1.2


def _to_plane(homography: npt.NDArray[np.float64], points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``points`` (N, 2) mapped by a homography (3, 3)."""
    return cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64), homography).reshape(-1, 2)


def _symbol_on(plane: npt.NDArray[np.float64], symbol: _Symbol) -> _Symbol | None:
    """The ``symbol`` as it lies on the table seen from above (``plane``: the homography from
    the image to it); None where it is no symbol there."""
    return _symbol_of(_to_plane(plane, symbol.outline()).astype(np.float32))


def _card_round_symbols_on(plane: npt.NDArray[np.float64], group: list[_Symbol]
                           ) -> npt.NDArray[np.float32] | None:
    """The outline of the card a group of symbols is printed on, found on the table seen from
    above (``plane``: the homography from the image to it), where the symbols keep their
    printed shape, and seen again in the image; None where a symbol is no symbol there."""
    flat_symbols = [flat for flat in (_symbol_on(plane, symbol) for symbol in group) if flat is not None]
    if len(flat_symbols) < len(group):
        return None
    flat_outline = _card_round_symbols(flat_symbols)
    return order_corners(_to_plane(np.linalg.inv(plane), flat_outline.astype(np.float64)).astype(np.float32))


def _snapped_to_edges(corners: npt.NDArray[np.float32], gradient: npt.NDArray[np.float32]
                      ) -> npt.NDArray[np.float32]:
    """The quad with each side moved along its normal, by up to 0.15 of the card's width, to
    where the image's ``gradient`` magnitude along it is strongest, portrait-ordered."""
    height, width = gradient.shape
    quad = corners.astype(np.float64)
    directions, normals = _sides_of(quad[None])
    reach = 0.15 * short_side(corners)
    offsets = np.linspace(-reach, reach, 13)
    starts = []
    for k in range(4):
        points = quad[k] + _SIDE_STEPS[:, None] * directions[0, k]                  # (P, 2)
        moved = points[None] + offsets[:, None, None] * normals[0, k]                # (O, P, 2)
        xs = np.clip(np.round(moved[..., 0]).astype(int), 0, width - 1)
        ys = np.clip(np.round(moved[..., 1]).astype(int), 0, height - 1)
        best = offsets[int(np.argmax(gradient[ys, xs].mean(axis=1)))]
        starts.append(quad[k] + best * normals[0, k])
    snapped, meet = _where_sides_meet(np.array(starts)[None], directions)
    return order_corners(snapped[0].astype(np.float32)) if meet[0] else corners


def _sides_of(quads: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each side of ``quads`` (N, 4, 2) as a vector (side k: corner k -> k + 1), and its unit
    normal pointing out of the quad, both (N, 4, 2)."""
    directions = quads[:, NEXT] - quads
    lengths = np.linalg.norm(directions, axis=2, keepdims=True)
    normals = np.stack([-directions[..., 1], directions[..., 0]], axis=2) / np.maximum(lengths, 1e-9)
    middles = quads + directions / 2 - quads.mean(axis=1)[:, None]
    normals[(middles * normals).sum(axis=2) < 0] *= -1
    return directions, normals


def _tightened(cards: list[CardQuad], whiteness: npt.NDArray[np.uint8], image: npt.NDArray[np.uint8]
               ) -> list[CardQuad]:
    """The ``cards`` with each side of a whole card moved onto its edge where a sharper one lies
    near: where the paper's whiteness falls most steeply to the table's.

    Outlines from blobs and guesses may be a few pixels off: a blob that took in a card's
    shadow or a pale rim of table, a corner cut off. The reader then sees the symbols off
    their places and smaller or larger than they are, which costs counts and stripes. All the
    cards' sides are looked at in one go: a frame's dozen cards cost one lookup, not a dozen.
    """
    whole = [index for index, card in enumerate(cards) if not card.partial]
    if not whole:
        return cards
    quads = np.array([cards[index].corners for index in whole], np.float64)                 # (N, 4, 2)
    directions, normals = _sides_of(quads)
    short_sides = np.linalg.norm(directions, axis=2).min(axis=1)
    offsets = (_TIGHTEN_REACH * short_sides)[:, None] * _TIGHTEN_OFFSETS                     # (N, O)
    shifts = _edge_shifts(quads, directions, normals, offsets, whiteness, image)
    if not shifts.any():
        return cards
    corners, meet = _where_sides_meet(quads + shifts[..., None] * normals, directions)
    result = list(cards)
    for row, index in enumerate(whole):
        if shifts[row].any() and meet[row]:
            result[index] = dataclasses.replace(cards[index],
                                                corners=order_corners(corners[row].astype(np.float32)))
    return result


def _edge_shifts(quads: npt.NDArray[np.float64], directions: npt.NDArray[np.float64],
                 normals: npt.NDArray[np.float64], offsets: npt.NDArray[np.float64],
                 whiteness: npt.NDArray[np.uint8], image: npt.NDArray[np.uint8]
                 ) -> npt.NDArray[np.float64]:
    """How far (N, 4) to move each side of ``quads`` (N, 4, 2) along its outward normal, of the
    ``offsets`` (N, O) tried, to the steepest fall of ``whiteness`` from paper to table; 0 where
    it stays.

    A side moves outward only across paper, of the paper's whiteness and tint, and inward only
    across what is not paper: a card's shadow is a falling edge too, but the band it adds is
    darker than paper.
    """
    # Points along each side (N, 4, P, 2), moved by each offset (N, 4, O, P, 2).
    points = quads[:, :, None] + _TIGHTEN_ALONG[:, None] * directions[:, :, None]
    moved = points[:, :, None] + offsets[:, None, :, None, None] * normals[:, :, None, None]
    flat = moved.reshape(-1, len(_TIGHTEN_ALONG), 2).astype(np.float32)
    shape = (len(quads), 4, len(_TIGHTEN_OFFSETS), len(_TIGHTEN_ALONG))
    levels = cv2.remap(whiteness, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_REPLICATE)
    profiles = cv2.reduce(levels, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).reshape(shape[:3])    # (N, 4, O)
    spacing = (offsets[:, 1] - offsets[:, 0])[:, None, None]
    falling = np.zeros_like(profiles)
    falling[..., 1:-1] = (profiles[..., :-2] - profiles[..., 2:]) / (2 * spacing)
    here = len(_TIGHTEN_OFFSETS) // 2
    best = falling.argmax(axis=2)                                                              # (N, 4)
    steeper = np.take_along_axis(falling, best[..., None], axis=2)[..., 0] > np.abs(falling[..., here])
    # The paper's level (inside, where the search begins) and the table's just beyond the new
    # edge; what lies between a side and its new place is paper when it is most of the way up.
    margin = np.ceil(2.0 / spacing[..., 0]).astype(int)                                        # 2 px
    inside = slice(0, max(1, here // 2))
    paper = profiles[..., inside].mean(axis=2)
    table = np.take_along_axis(profiles, np.minimum(best + margin, len(_TIGHTEN_OFFSETS) - 1)[..., None],
                               axis=2)[..., 0]
    paper_like = table + _PAPER_BAND * (paper - table)
    index = np.arange(len(_TIGHTEN_OFFSETS))
    crossed_out = (index >= here) & (index <= np.maximum(here, best - margin)[..., None])
    outward_ok = np.where(crossed_out, profiles, np.inf).min(axis=2) >= paper_like
    # ... and of the paper's tint: a pale patch of rug or a beige plank is as white as paper.
    # (Looked at only for the sides that would move out.)
    out = (best > here) & steeper & outward_ok
    if out.any():
        points_out = moved[out].reshape(-1, len(_TIGHTEN_ALONG), 2).astype(np.float32)
        colours = cv2.remap(image, points_out[..., 0], points_out[..., 1], cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE)
        colours = cv2.reduce(colours, 1, cv2.REDUCE_AVG, dtype=cv2.CV_32F).reshape(
            -1, len(_TIGHTEN_OFFSETS), 3)
        paper_tint = _tint(colours[:, inside].mean(axis=1))
        crossed_tint = _tint(np.where(crossed_out[out][..., None], colours, 0.0).sum(axis=1))
        outward_ok[out] = np.abs(crossed_tint - paper_tint).max(axis=1) <= _SHADOW_TINT
    crossed_in = (index >= np.minimum(best + margin, here)[..., None]) & (index <= here)
    inward_ok = np.where(crossed_in, profiles, 0.0).sum(axis=2) / crossed_in.sum(axis=2) < paper_like
    # A side on or past the frame edge is not seen there: what the search finds near it is
    # the frame edge or the card's own print (a close-up card cut by the frame).
    height, width = whiteness.shape
    in_view = ((moved[..., 0] >= 0) & (moved[..., 0] <= width - 1)
               & (moved[..., 1] >= 0) & (moved[..., 1] <= height - 1)).all(axis=(2, 3))
    # (And where no edge shows, a card outlined round its symbols on a sheet of its own paper,
    # the steepest fall is noise: too small a step is no edge.)
    moves = ((best != here) & steeper & np.where(best > here, outward_ok, inward_ok)
             & (paper - table >= _EDGE_STEP) & in_view)
    return np.where(moves, np.take_along_axis(offsets, best, axis=1), 0.0)


def _where_sides_meet(starts: npt.NDArray[np.float64], directions: npt.NDArray[np.float64]
                      ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The corners (N, 4, 2) where the lines through ``starts`` along ``directions`` (side k of
    each quad) meet: corner k where side k - 1 meets side k; and whether all four meet."""
    before, before_direction = np.roll(starts, 1, axis=1), np.roll(directions, 1, axis=1)

    def cross(u: npt.NDArray[np.float64], v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

    turn = cross(before_direction, directions)
    meet = np.abs(turn) >= 1e-9
    along = cross(starts - before, directions) / np.where(meet, turn, 1.0)
    return before + along[..., None] * before_direction, meet.all(axis=1)


def _paper_colour_mask(image: npt.NDArray[np.uint8], cards: list[CardQuad],
                       region: _Region | None = None) -> npt.NDArray[np.uint8] | None:
    """Pixels (uint8 0/255 (H, W)) of the colour of the paper of the whole cards found, or None
    with fewer than two of them. With a ``region``, only around it (a card's length beyond
    its bounding box): the Lab conversion is the costliest step of the search.

    Colour is compared in Lab with lightness weighted down, since uneven light changes a
    card's brightness far more than its tint; the tolerance follows how much the cards found
    differ among themselves.
    """
    whole = [card for card in cards if not card.partial and not card.guess]
    if len(whole) < 2:
        return None
    papers = [card.paper for card in whole]
    height, width = image.shape[:2]
    x0, y0, x1, y1 = 0, 0, width, height
    if region is not None:
        x, y, w, h = cv2.boundingRect(region.mask)
        reach = int(np.ceil(2.0 * np.sqrt(max(card.area for card in whole))))
        x0, y0 = max(0, x - reach), max(0, y - reach)
        x1, y1 = min(width, x + w + reach), min(height, y + h + reach)
    mask = np.zeros((height, width), np.uint8)
    if x1 <= x0 or y1 <= y0:
        return mask
    lab = cv2.cvtColor(cv2.GaussianBlur(image[y0:y1, x0:x1], (5, 5), 0), cv2.COLOR_BGR2LAB)
    paper_bgr = np.clip(np.array(papers, np.float32), 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    paper_lab = cv2.cvtColor(paper_bgr, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    reference = np.median(paper_lab, axis=0)
    weights = np.array([_LIGHTNESS_WEIGHT, 1.0, 1.0], np.float32)
    spread = np.sqrt((((paper_lab - reference) * weights) ** 2).sum(axis=1))
    tolerance = float(np.clip(2.0 * np.percentile(spread, 90) + 8.0, 10.0, 25.0))
    # The weighted squared distance of every pixel, in OpenCV's whole-image operations.
    difference = cv2.absdiff(lab, (*(float(v) for v in np.round(reference)), 0.0))
    squared = cv2.multiply(difference, difference, dtype=cv2.CV_32F)
    distance2 = cv2.transform(squared, (weights ** 2).reshape(1, 3))
    # Thin bridges to a patch of table of a similar colour are opened.
    mask[y0:y1, x0:x1] = cv2.morphologyEx((distance2 < tolerance ** 2).astype(np.uint8) * 255,
                                          cv2.MORPH_OPEN, _SQUARE3)
    return mask


_LIGHTNESS_WEIGHT = 0.25
_SQUARE3 = np.ones((3, 3), np.uint8)


class _Maps:
    """The maps of one BGR image that the search for cards uses, each made on first use: on
    many tables the search ends before the costlier ones are needed.

    The binary maps (uint8 0/255) are those in which cards may show as separate white blobs;
    ``candidate_masks`` gives them in search order, each with how far (pixels) its blob
    outlines lie inside the true card edge, and whether what it finds are only guesses.
    Outline points are the centres of the blob's boundary pixels, half a pixel inside its edge;
    the edge map loses the edge pixel and its dilation, the eroded map its erosion radius.
    """

    def __init__(self, image: npt.NDArray[np.uint8]) -> None:
        self.image = image

    @cached_property
    def darkest(self) -> npt.NDArray[np.uint8]:
        """The lowest of B, G, R per pixel."""
        return darkest_channel(self.image)

    @cached_property
    def whiteness(self) -> npt.NDArray[np.uint8]:
        """The darkest channel smoothed: high only for bright pixels with no colour lagging
        (paper)."""
        return cv2.GaussianBlur(self.darkest, (5, 5), 0)

    @cached_property
    def gradient(self) -> npt.NDArray[np.float32]:
        """The whiteness's gradient magnitude: where card edges are."""
        return cv2.magnitude(cv2.Sobel(self.whiteness, cv2.CV_32F, 1, 0),
                             cv2.Sobel(self.whiteness, cv2.CV_32F, 0, 1))

    @cached_property
    def equalised(self) -> npt.NDArray[np.uint8]:
        """Local contrast equalisation of the whiteness: it lifts the faint step between a
        white card and a pale or dim table."""
        return _CLAHE.apply(self.whiteness)

    @cached_property
    def edges(self) -> npt.NDArray[np.uint8]:
        """Edges of the equalised whiteness: card outlines even on pale tables, and the seams
        between cards that touch."""
        return cv2.Canny(self.equalised, 30, 90)

    @cached_property
    def global_white(self) -> npt.NDArray[np.uint8]:
        return cv2.threshold(self.whiteness, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]

    @cached_property
    def paper_like(self) -> npt.NDArray[np.uint8]:
        """Paper against light wood, rugs and cloth under tinted light."""
        likeness = cv2.GaussianBlur(paper_likeness(self.image), (5, 5), 0)
        return cv2.threshold(likeness, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]

    @cached_property
    def local_white(self) -> npt.NDArray[np.uint8]:
        """White for its neighbourhood, in the equalised whiteness: cards on pale or dim tables."""
        block = max(31, (min(self.image.shape[:2]) // 6) | 1)
        return cv2.adaptiveThreshold(self.equalised, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                     cv2.THRESH_BINARY, block, -8)

    @cached_property
    def half_local_white(self) -> npt.NDArray[np.uint8]:
        """``local_white`` made at half resolution (4x cheaper), for the test of whether the
        cards found so far explain every paper-like blob, which counts blobs at half
        resolution anyway: on many tables the full-resolution map is never needed."""
        height, width = self.whiteness.shape
        half = cv2.resize(self.whiteness, (width // 2, height // 2), interpolation=cv2.INTER_AREA)
        block = max(15, (min(half.shape[:2]) // 6) | 1)
        return cv2.adaptiveThreshold(_CLAHE.apply(half), 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                     cv2.THRESH_BINARY, block, -8)

    @cached_property
    def enclosed_by_edges(self) -> npt.NDArray[np.uint8]:
        """Regions enclosed by edges: for white on white, and for cards that touch."""
        return cv2.bitwise_not(cv2.dilate(self.edges, _SQUARE3))

    @cached_property
    def enclosed_by_smooth_edges(self) -> npt.NDArray[np.uint8]:
        """Regions enclosed by the edges of the median-smoothed equalised whiteness: on a
        grainy or patterned table (a rug, cloth) the equalisation lifts the grain into edges
        everywhere, which cut the cards apart and join them to the table; a median filter keeps
        the cards' straight outlines and drops the grain."""
        edges = cv2.Canny(cv2.medianBlur(self.equalised, 7), 30, 90)
        return cv2.bitwise_not(cv2.dilate(edges, _SQUARE3))

    @cached_property
    def enclosed_by_colour_edges(self) -> npt.NDArray[np.uint8]:
        """Regions enclosed by the edges of the median-smoothed image's lightness and colour
        (Lab): paper and a pale patterned table (a rug's pale patches under tinted light) can
        be equally white, so that no whiteness map nor its edges part them, yet differ in hue.
        (A 7-pixel median costs about 25 ms on a 720 x 540 colour image, but the cheaper
        smoothings tried, two 5-pixel medians or one at half size, found fewer cards and more
        false ones.)"""
        lab = cv2.cvtColor(cv2.medianBlur(self.image, 7), cv2.COLOR_BGR2LAB)
        lightness, green_red, blue_yellow = cv2.split(lab)
        edges = cv2.Canny(lightness, 30, 90)
        # (Lab's colour axes span about a third of its lightness's range over everyday colours.)
        cv2.bitwise_or(edges, cv2.Canny(green_red, 15, 45), dst=edges)
        cv2.bitwise_or(edges, cv2.Canny(blue_yellow, 15, 45), dst=edges)
        return cv2.bitwise_not(cv2.dilate(edges, _SQUARE3))

    @cached_property
    def eroded_white(self) -> npt.NDArray[np.uint8]:
        """Touching cards merge in the whiteness maps; eroding separates them along the seam."""
        return cv2.erode(self.global_white, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))

    @cached_property
    def edge_hulls(self) -> npt.NDArray[np.uint8]:
        """Each cluster of smoothed edges filled to its convex hull: a card on a plain table as
        pale as itself, whose faint outline has gaps (so it encloses nothing) and whose paper
        merges with the table in every whiteness map. Smoothing first keeps the table's
        grain (which the equalisation lifts) from joining the clusters."""
        edges = cv2.Canny(cv2.GaussianBlur(self.equalised, (5, 5), 0), 30, 90)
        contours, _ = cv2.findContours(cv2.dilate(edges, _SQUARE3), cv2.RETR_EXTERNAL,
                                       cv2.CHAIN_APPROX_SIMPLE)
        hulls = np.zeros_like(edges)
        for contour in contours:
            cv2.fillConvexPoly(hulls, cv2.convexHull(contour), 255)
        return hulls

    def candidate_masks(self) -> Iterator[tuple[npt.NDArray[np.uint8], float, bool]]:
        yield self.global_white, 0.5, False
        yield self.paper_like, 0.5, False
        yield self.local_white, 0.5, False
        yield self.enclosed_by_edges, 2.0, False
        # On a checked cloth, smoothed edges also enclose the pale squares, as neatly as cards:
        # what this map finds are guesses, which give way to any card found plainly and, once
        # three cards are found plainly, do not set the typical card (dev scenes 5000-5199: 35
        # more cards found, 2 fewer false).
        yield self.enclosed_by_smooth_edges, 2.0, True
        yield self.enclosed_by_colour_edges, 2.0, True
        # The hull's outline runs half a pixel outside the dilated edge, about a pixel outside
        # the card's edge.
        yield self.edge_hulls, -1.0, False
        yield self.eroded_white, 3.5, False


_CLAHE = cv2.createCLAHE(clipLimit=4.0, tileGridSize=(8, 8))


def paper_likeness(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Per pixel, how much like white paper: bright in every channel and colourless.

    The image is first white-balanced on its brightest pixels (on a card table, the paper), so
    paper under a warm or cool lamp turns neutral; then ``2 * min(B, G, R) - max(B, G, R)``,
    clipped to 0..255, is high for paper and low for light wood, skin, rugs, cloth and dark
    tables, where one channel lags. Returns uint8 (H, W).
    """
    channels = cv2.split(image)
    sample = [np.ascontiguousarray(channel[::4, ::4]).ravel() for channel in channels]
    brightness = sample[0].astype(np.uint16) + sample[1] + sample[2]
    bright = brightness >= _percentile(brightness, 0.97)
    illuminant = np.maximum([float(channel[bright].mean()) for channel in sample], 1.0)
    gains = illuminant.max() / illuminant
    blue, green, red = (cv2.convertScaleAbs(channel, alpha=float(gain))
                        for channel, gain in zip(channels, gains))
    low = cv2.min(cv2.min(blue, green), red)
    high = cv2.max(cv2.max(blue, green), red)
    return cv2.addWeighted(low, 2.0, high, -1.0, 0.0)  # saturates to 0..255


def _quads_in_mask(mask: npt.NDArray[np.uint8], maps: _Maps, found: list[CardQuad], inset: float,
                   smallest: float = 0.0, region: _Region | None = None) -> list[CardQuad]:
    """Card-like quads among the blobs of one binary map of ``maps.image``, skipping blobs
    already in ``found``, blobs under ``smallest`` pixels and blobs outside ``region`` (if given)."""
    image = maps.image
    height, width = mask.shape
    image_area = height * width
    min_area = image_area * 0.0015
    max_area = image_area * 0.8
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    if hierarchy is None:
        return []
    # Outlines of blobs, not of holes inside blobs, with enough points to enclose the smallest
    # card: an outline of n points (steps of at most sqrt(2) pixels) encloses at most
    # n^2 / (2 pi) pixels, and noisy maps hold hundreds of specks.
    points = np.fromiter(map(len, contours), dtype=np.int64, count=len(contours))
    enough = np.sqrt(2 * np.pi * max(min_area, smallest))
    blobs = np.flatnonzero((hierarchy[0][:, 3] == -1) & (points >= enough))
    quads = []
    for contour in (contours[i] for i in blobs):
        area = cv2.contourArea(contour)
        if not max(min_area, smallest) <= area <= max_area:
            continue
        if region is not None and not region.touches(*cv2.boundingRect(contour)):
            continue
        (cx, cy), (rw, rh), _ = cv2.minAreaRect(contour)
        if any(abs(q.center[0] - cx) + abs(q.center[1] - cy) < 0.05 * (rw + rh)
               and 0.9 < q.area / (rw * rh) < 1.1 for q in found):
            continue  # the same card, already found in an earlier map
        quad = _card_quad(contour, area, image, inset) if area >= _RECTANGLE_FILL * rw * rh else None
        if quad is None:
            quad = _cut_card_with_notches_closed(contour, image, inset)
        if quad is not None:
            quads.append(quad)
        elif area >= 2 * min_area and not _is_band(area, rw, rh):
            parts = _split_blob(contour, mask.shape, image, inset, min_area)
            if not parts:
                parts = _split_along_edges(contour, image, maps.edges, min_area)
            quads.extend(parts)
    return quads


def _cut_card_with_notches_closed(contour: npt.NDArray[np.int32], image: npt.NDArray[np.uint8],
                                  inset: float) -> CardQuad | None:
    """The cut card a blob at the frame edge traces once the notches it opens onto the frame edge
    are closed, as a guess; None when it touches no frame edge or is no card even so.

    The frame cuts a card anywhere, often through a symbol: the symbol's ink then opens the
    card's paper onto the frame edge, a notch that makes the cut card look too little like a
    quad to be one. Along the frame, a card's paper runs straight from one of its sides to the
    other. Pale stripes of a cloth joined by the cards on them close into a block just as well:
    the block must show a symbol, and is only a guess, which any plain candidate for the place
    outweighs. A card cut through its only symbol shows that symbol running to the frame edge
    (`_cut_sides`): there, what filled the notches must be ink, not the table between the
    stripes.
    """
    x, y, w, h = cv2.boundingRect(contour)
    top, bottom, left, right = _frame_edges_touched((x, y, w, h), image.shape)
    if not (top or bottom or left or right):
        return None
    blob = np.zeros((h, w), np.uint8)
    cv2.drawContours(blob, [contour - [x, y]], -1, 255, -1)
    before = cv2.countNonZero(blob)
    paper = blob.copy()
    for touches, line in ((top, blob[0]), (bottom, blob[-1]), (left, blob[:, 0]), (right, blob[:, -1])):
        on = np.flatnonzero(line)
        if touches and len(on):
            line[on[0]:on[-1] + 1] = 255
    outlines, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    closed = max(outlines, key=cv2.contourArea)
    area = cv2.contourArea(closed)
    if area <= before or not _fills_its_rectangle(closed, area):
        return None
    quad = _card_quad(closed + np.array([x, y], np.int32), area, image, inset)
    if quad is None:
        return None
    face = segment_ink(warp_card(image, quad.corners))
    if not shows_symbols(face) and not (
            shows_symbols(face, open_sides=_cut_sides(quad, image)) and not _notches_are_table(closed, paper, image, (x, y))):
        return None
    return dataclasses.replace(quad, guess=True)


def _notches_are_table(closed: npt.NDArray[np.int32], paper: npt.NDArray[np.uint8],
                       image: npt.NDArray[np.uint8], origin: tuple[int, int]) -> bool:
    """Whether the notches a blob of ``paper`` (a mask whose top-left lies at ``origin`` in the
    image) opened onto the frame edge, filled by its ``closed`` outline (in the mask's
    coordinates), are of the colour of the table just outside that outline."""
    pad = _NOTCH_RING
    x, y = origin
    height, width = paper.shape
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + width + pad, image.shape[1]), min(y + height + pad, image.shape[0])
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(inside, [closed + [x - x0, y - y0]], -1, 255, -1)
    notches = inside.copy()
    notches[y - y0:y - y0 + height, x - x0:x - x0 + width] &= ~paper
    ring = cv2.dilate(inside, np.ones((2 * pad + 1, 2 * pad + 1), np.uint8)) & ~inside
    if not notches.any() or not ring.any():
        return False
    return _lab_distance(image[y0:y1, x0:x1], notches, ring) < _NOTCH_TABLE_DISTANCE


# The ring of table round a closed cut card, in pixels, and the Lab distance (8-bit units) within
# which the notches are of its colour: on the dev scenes the notches of cut cards' symbols were
# 28-190 from the table (one cut card, a cable over it, at 6-9), those of blocks of pale stripes
# or patches joined by cards 7-10 (and some far further, which later tests drop).
_NOTCH_RING = 4
_NOTCH_TABLE_DISTANCE = 12.0


def _is_band(area: float, width: float, height: float) -> bool:
    """Whether a blob of ``area`` pixels whose smallest enclosing rectangle is ``width`` x
    ``height`` is a straight band, five times as long as it is wide and filling its rectangle:
    a stripe of a cloth or a strip of table, which is not split in search of cards (a striped
    cloth gives dozens, each costing milliseconds to split: 460 -> 270 ms on a generated
    frame; on the dev, fresh and bench scenes no card was lost, one more found)."""
    return max(width, height) > _BAND_ASPECT * min(width, height) and area > _BAND_FILL * width * height


_BAND_ASPECT = 5.0
_BAND_FILL = 0.8


def _card_quad(contour: npt.NDArray[np.int32], area: float, image: npt.NDArray[np.uint8],
               inset: float) -> CardQuad | None:
    """The card an outline traces, or None when the outline is not card-like."""
    height, width = image.shape[:2]
    quad = fit_quad(contour)
    if quad is None:
        return None
    quad_area = cv2.contourArea(quad)
    if quad_area <= 0 or not MIN_FILL <= area / quad_area <= 1.08:
        return None
    partial = any(_frame_edges_touched(cv2.boundingRect(contour), image.shape))
    corners = order_corners(grow_quad(quad, inset))
    if not partial and not MIN_ASPECT <= aspect(corners) <= MAX_ASPECT:
        return None
    paper, colour, ink = _paper_fraction(image, corners)
    without_frame_side = False
    if paper < 0.6 and not partial:
        # A small card's ring lies only 1-4 pixels in from its edge, and a map's blob may run
        # a pixel or two out over a table nearly as bright as the paper (blurred): its ring is
        # then partly table, too uneven for paper, and the table's grain hides faint ink
        # (bench 1172: three small cards with pale outline symbols on light wood lost). Only
        # a ring then all but entirely even and nearly grey passes: a checked cloth's cell
        # joined to a card passes half-way, and a patch of beige rug is evenly tinted.
        inner = _paper_fraction(image, grow_quad(corners, -_BLOB_OVERSHOOT))
        if inner[0] >= _EVEN_INNER_RING and _off_grey(inner[1]) <= _GREY_PAPER:
            paper, colour, ink = inner
    if paper < 0.6 and partial:
        # A card cut by the frame edge is cut anywhere, often through its symbols: the ring
        # along the frame is then no edge of the card. Judged by its other sides only, it is
        # a guess, which any candidate found plainly for the place outweighs (a patch of pale
        # table reaching the frame edge passes this test too).
        paper, colour, ink = _paper_fraction(image, corners, _inner_sides(corners, width, height))
        without_frame_side = True
    if paper < 0.6:
        return None
    return CardQuad(corners, partial, score=float(area / quad_area) * paper, paper=colour, ink=ink,
                    guess=without_frame_side, judged_without_frame_side=without_frame_side)


# How far (pixels) a blob's outline may run out over the table: a whole card whose ring fails
# the paper test is judged again on a ring this much further in, where at least this fraction
# of it must be even paper (the first test asks 0.6).
_BLOB_OVERSHOOT = 1.5
_EVEN_INNER_RING = 0.9


def _frame_edges_touched(box: tuple[int, int, int, int], shape: tuple[int, ...]
                         ) -> tuple[bool, bool, bool, bool]:
    """Which edges of an image of ``shape`` a blob whose bounding box is ``box`` (x, y, w, h)
    reaches, within the border margin: top, bottom, left, right."""
    x, y, w, h = box
    height, width = shape[:2]
    return (y <= BORDER_MARGIN, y + h - 1 >= height - 1 - BORDER_MARGIN,
            x <= BORDER_MARGIN, x + w - 1 >= width - 1 - BORDER_MARGIN)


def _inner_sides(corners: npt.NDArray[np.float32], width: int, height: int) -> int:
    """The sides of a quad in a ``width`` x ``height`` image that do not run along the image's
    edge, as a bit mask (bit k: the side from corner k to corner k + 1); never none."""
    return (_ALL_SIDES & ~_frame_sides(corners, width, height)) or _ALL_SIDES


def _frame_sides(corners: npt.NDArray[np.float32], width: int, height: int) -> int:
    """The sides of a quad in a ``width`` x ``height`` image that run along the image's edge, as
    a bit mask (bit k: the side from corner k to corner k + 1, for ordered corners the face's
    top, right, bottom, left)."""
    near = BORDER_MARGIN + 3.0
    at_edge = np.stack([corners[:, 0] <= near, corners[:, 1] <= near,
                        corners[:, 0] >= width - 1 - near, corners[:, 1] >= height - 1 - near], axis=1)
    sides = 0
    for k in range(4):
        if (at_edge[k] & at_edge[(k + 1) % 4]).any():
            sides |= 1 << k
    return sides


def _split_blob(contour: npt.NDArray[np.int32], shape: tuple[int, ...], image: npt.NDArray[np.uint8],
                inset: float, min_area: float) -> list[CardQuad]:
    """Cards that touch merge into one blob, and so do cards and a bright patch of table they
    touch; eroding the blob by growing amounts opens the thin seams and bridges between them.
    The first erosion that frees a card-like part wins."""
    x, y, w, h = cv2.boundingRect(contour)
    pad = 2
    blob = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.drawContours(blob, [contour - [x - pad, y - pad]], -1, 255, -1)
    for radius in (1, 2, 3, 5):
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        eroded = cv2.erode(blob, kernel)
        cards = _cards_in_pieces(eroded, (x - pad, y - pad), image, inset + radius, min_area)
        if cards:
            return cards
    return []


# A card's outline fills at least this much of its smallest enclosing rectangle, even under
# steep perspective (a trapezoid) with rounded corners: a cheap test before fitting a quad.
_RECTANGLE_FILL = 0.7


def _fills_its_rectangle(contour: npt.NDArray[np.int32], area: float) -> bool:
    _, (width, height), _ = cv2.minAreaRect(contour)
    return area >= _RECTANGLE_FILL * width * height


def _cards_in_pieces(pieces: npt.NDArray[np.uint8], offset: tuple[int, int],
                     image: npt.NDArray[np.uint8], inset: float, min_area: float) -> list[CardQuad]:
    """The card-like blobs of a cut-up blob mask whose pixel (0, 0) is image pixel ``offset``."""
    parts, _ = cv2.findContours(pieces, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cards = []
    for part in parts:
        part_area = cv2.contourArea(part)
        if part_area < min_area or not _fills_its_rectangle(part, part_area):
            continue
        quad = _card_quad(part + list(offset), part_area, image, inset)
        if quad is not None:
            cards.append(quad)
    return cards


def _split_along_edges(contour: npt.NDArray[np.int32], image: npt.NDArray[np.uint8],
                       edges: npt.NDArray[np.uint8], min_area: float) -> list[CardQuad]:
    """Cards in a blob whose seams erosion cannot open: cards laid edge to edge in a grid, or a
    card bridged to a bright patch of table. The seams still show as straight edges, though
    with gaps: the blob is cut along every straight edge segment longer than a symbol's side,
    gaps bridged."""
    x, y, w, h = cv2.boundingRect(contour)
    pad = 4
    height, width = image.shape[:2]
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(width, x + w + pad), min(height, y + h + pad)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [contour - [x0, y0]], -1, 255, -1)
    inner_edges = edges[y0:y1, x0:x1].copy()
    inner_edges[cv2.erode(blob, np.ones((5, 5), np.uint8)) == 0] = 0
    card_side = np.sqrt(min_area)
    segments = cv2.HoughLinesP(inner_edges, 1, np.pi / 180, threshold=int(card_side),
                               minLineLength=1.5 * card_side, maxLineGap=3)
    if segments is None:
        return []
    cut = blob.copy()
    for x_a, y_a, x_b, y_b in segments.reshape(-1, 4).astype(np.float32):
        direction = np.array([x_b - x_a, y_b - y_a]) / max(float(np.hypot(x_b - x_a, y_b - y_a)), 1e-6)
        reach = card_side / 3 * direction
        start = np.round([x_a, y_a] - reach).astype(int)
        end = np.round([x_b, y_b] + reach).astype(int)
        cv2.line(cut, tuple(map(int, start)), tuple(map(int, end)), 0, 2)
    return [dataclasses.replace(quad, guess=True)
            for quad in _cards_in_pieces(cut, (x0, y0), image, 1.5, min_area)]


def _paper_fraction(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32],
                    sides: int = _ALL_SIDES) -> tuple[float, tuple[float, float, float], float]:
    """How much of a ring just inside the quad's edge looks like card paper.

    ``sides`` (a bit mask, bit k for the side from corner k to corner k + 1) says along which
    sides the ring runs: a card cut by the frame edge is cut anywhere, often through its
    symbols, so the side along the frame is no edge of the card and is left out.

    Paper is even and nearly colourless whatever the light: the ring's typical colour must be
    bright for the scene and not strongly tinted (wood, skin and printed boxes are), and most ring
    pixels must be close to that colour (a phone screen, a hand or art on a box are not even).
    Returns the fraction 0..1, the paper's typical BGR colour and the ink's strength (the 99th
    percentile of the middle's difference from the paper, over the paper's brightness).
    """
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), _RING_PATCH_CORNERS)
    raw = cv2.warpPerspective(image, matrix, _RING_PATCH, flags=cv2.INTER_LINEAR)
    # Sensor noise in dim light is not texture: a median filter removes it and keeps edges
    # (but also thin ink lines, so ink is looked for in the unfiltered patch).
    # Channels first, (3, N): NumPy reduces over the three channels of (N, 3) arrays 10x slower.
    patch = cv2.medianBlur(raw, 3).reshape(-1, 3)
    ring_index, ring_solver, ring_design = _ring_of(sides)
    ring = np.ascontiguousarray(patch[ring_index].T, dtype=np.float32)
    typical = _median_rows(ring)
    # Paper under warm lamps turns orange, under daylight blue, but never as tinted as a
    # coloured surface.
    colour = (float(typical[0]), float(typical[1]), float(typical[2]))
    brightest = max(colour)
    if brightest < 20 or brightest > 3.0 * max(min(colour), 1.0):
        return 0.0, colour, 0.0
    # Evenness against a plane fitted to the ring, so that a smooth light gradient across the
    # card still counts as even paper.
    coefficients = ring @ ring_solver                                  # (3 channels, 3 terms)
    plane = coefficients @ ring_design
    residual = _channel_max(np.abs(ring - plane))
    close = residual < 0.08 * brightest + 5
    shadowed_brightness = None  # the ring's, where it is judged as lit and shadowed paper
    if np.count_nonzero(close) < 0.6 * len(close):
        # A shadow's edge across the card is no plane (the plane fitted lies between the lit
        # and the shadowed paper), but paper in shadow keeps its tint: darker in proportion in
        # every channel. Only a ring all but entirely of lit or shadowed paper is a card in
        # shadow, though: a grey-white table looks like paper in shadow too.
        ring_sum = ring.sum(axis=0) + 1.0
        plane_sum = np.maximum(plane.sum(axis=0), 1.0)
        shade = ring_sum / plane_sum
        tint_off = _channel_max(np.abs(ring / ring_sum - plane / plane_sum))
        either = close | ((tint_off < _SHADOW_TINT) & (shade > _SHADOWED_PAPER)
                          & (shade < 1.0 / _SHADOWED_PAPER))
        if np.count_nonzero(either) >= _SHADOWED_RING * len(close):
            close = either
            shadowed_brightness = ring_sum
    # Every card carries one to three printed symbols: ink must stand out of the paper's noise
    # over part of the middle. This rejects planks, sheets of paper, plain bright rectangles.
    ink, strength = _ink_of(*_ink_against_plane(raw, residual, coefficients), brightest)
    if ink < 0.01 and shadowed_brightness is not None:
        # (Only where the plane sees none: measured so for every shadowed ring, cards the
        # plane's measure passed changed too, and one scene of a striped cloth lost four.)
        runs = _shadow_runs(shadowed_brightness, ring_index)
        # A band of shadow across a card (close-up 9004) leaves two runs of each round the
        # ring, as a crossing of a checked cloth's cells does: there only coloured ink counts.
        if runs == (1, 1) or (runs == (2, 2) and _coloured_ink(raw)):
            ink, strength = _ink_of(*_ink_under_shadow_edge(raw, patch), brightest)
    if ink < 0.01:
        return 0.0, colour, strength
    return float(np.count_nonzero(close)) / len(close), colour, strength


def _ink_of(noise: float, difference: npt.NDArray[np.float32], brightest: float) -> tuple[float, float]:
    """From the paper's ``noise`` and each middle pixel's ``difference`` from the paper: the
    fraction of the middle that is ink (standing out of the noise, and by a tenth of the
    paper's ``brightest`` channel at least) and the ink's strength (the 99th percentile of the
    difference, over that brightness)."""
    ink = np.count_nonzero(difference > max(0.1 * brightest, 4 * noise) + 4) / len(difference)
    return ink, _percentile(difference, 0.99) / brightest


def _shadow_runs(brightness: npt.NDArray[np.float32], ring_index: npt.NDArray[np.intp]) -> tuple[int, int]:
    """In how many runs the ring's shadowed and lit paper (its pixels' ``brightness`` at the
    patch's flat ``ring_index``) lie: one each, as one shadow's edge across a card leaves them;
    two each, as a band of shadow does. Round a quad traced on a checked cloth, its cells
    alternate: each is paper-like and keeps the same tint, lit or shadowed, but they make
    several runs (empty table 11006: ten cells more taken for cards, taken as one edge), or
    round a crossing of the checks, two each."""
    low, high = _percentile(brightness, 0.1), _percentile(brightness, 0.9)
    middle, margin = (low + high) / 2, (high - low) / 4
    least = 0.03 * len(brightness)
    canvas = np.zeros(_RING_PATCH[0] * _RING_PATCH[1], np.uint8)
    runs = []
    for part in (brightness < middle - margin, brightness > middle + margin):
        canvas[:] = 0
        canvas[ring_index[part]] = 255
        _, _, stats, _ = cv2.connectedComponentsWithStats(canvas.reshape(_RING_PATCH[1], _RING_PATCH[0]),
                                                          connectivity=8)
        runs.append(int(np.count_nonzero(stats[1:, cv2.CC_STAT_AREA] >= least)))
    return runs[0], runs[1]


def _shows_coloured_ink(image: npt.NDArray[np.uint8], corners: npt.NDArray[np.float32]) -> bool:
    """Whether the middle of the card a quad of ``image`` outlines shows some coloured ink: its
    most coloured pixels (the 99th percentile) spread over their channels by at least
    `_SOME_CHROMA` of the brightest. (A small card's thin, blurred strokes mix with the paper,
    so few of its pixels pass `_coloured_ink`.)"""
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), _RING_PATCH_CORNERS)
    raw = cv2.warpPerspective(image, matrix, _RING_PATCH, flags=cv2.INTER_LINEAR)
    return _percentile(_middle_chroma(raw), 0.99) >= _SOME_CHROMA


# The small cards found from symbols alone in fresh scene 6043 (a striped cloth) measured
# 0.26-0.43; a grey checked cloth's dark crossings ringed by pale cells, 0.06-0.17 (empty
# table 11006).
_SOME_CHROMA = 0.2


def _coloured_ink(raw: npt.NDArray[np.uint8]) -> bool:
    """Whether a card patch's middle holds coloured ink: red, green and purple symbols are
    strongly coloured, paper lit or shadowed nearly grey, and a grey checked cloth's dark cells
    too."""
    chroma = _middle_chroma(raw)
    return bool(np.count_nonzero(chroma > _INK_CHROMA) >= 0.05 * len(chroma))


def _middle_chroma(raw: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """How coloured each pixel of a card patch's middle is: the spread of its channels over
    its brightest one (0 for grey)."""
    middle = raw[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).astype(np.float32)
    top, bottom = middle.max(axis=1), middle.min(axis=1)
    return (top - bottom) / np.maximum(top, 1.0)


# A pixel whose channels spread by this fraction of its brightest one is coloured (card paper,
# lit or shadowed, is nearly grey under a camera's white balance).
_INK_CHROMA = 0.4


def _ink_against_plane(raw: npt.NDArray[np.uint8], residual: npt.NDArray[np.float32],
                       coefficients: npt.NDArray[np.float32]) -> tuple[float, npt.NDArray[np.float32]]:
    """The paper's noise (the ring's median distance from the plane fitted to it) and how far
    each pixel of the middle of the unfiltered patch lies from that plane's paper colour."""
    middle = np.ascontiguousarray(raw[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).T, dtype=np.float32)
    return _percentile(residual, 0.5), _channel_max(np.abs(middle - coefficients @ _MIDDLE_DESIGN))


def _ink_under_shadow_edge(raw: npt.NDArray[np.uint8], filtered: npt.NDArray[np.uint8]
                           ) -> tuple[float, npt.NDArray[np.float32]]:
    """As `_ink_against_plane` for a patch with a shadow's edge across it, which no plane
    follows: the step between lit and shadowed paper is taken for noise, and a faint stroke
    no longer stands out of it (bench 1130: a pale outline oval half in shadow measured no ink
    at all). The paper there is the patch closed over its symbols instead: a closing keeps a
    step of light but fills dark strokes narrower than its kernel. The noise is the median
    filtered patch's (``filtered``, (N, 3)) median distance below that paper."""
    paper = cv2.morphologyEx(raw, cv2.MORPH_CLOSE, _SHADOW_CLOSING)
    below = paper.astype(np.float32) - raw.astype(np.float32)
    middle = below[_MIDDLE_ROWS, _MIDDLE_COLUMNS].reshape(-1, 3).T
    smooth_below = paper.reshape(-1, 3).astype(np.float32) - filtered.astype(np.float32)
    noise = float(np.median(smooth_below.max(axis=1)))
    return noise, _channel_max(np.ascontiguousarray(middle))


# Wider than a symbol's stroke on the 40x64 patch, and than most solid symbols' thickness.
_SHADOW_CLOSING = cv2.getStructuringElement(cv2.MORPH_RECT, (11, 11))


def _channel_max(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The largest of the three rows of a (3, N) array."""
    return np.maximum(np.maximum(values[0], values[1]), values[2])


def _median_rows(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The median of each row of a (C, N) array, as ``_percentile(row, 0.5)``."""
    count = values.shape[1]
    low = (count - 1) // 2
    high = low + 1 if count % 2 == 0 else low
    part = np.partition(values, (low, high), axis=1)
    return (0.5 * (part[:, low] + part[:, high])).astype(np.float32)


def _ring_mask(size: tuple[int, int], sides: int = _ALL_SIDES) -> npt.NDArray[np.bool_]:
    """A thin band 3-8% in from the edge: inside the card even if the quad is a little large,
    and outside the symbols even on decks whose symbols nearly fill the card; along the
    ``sides`` of the bit mask only (bit 0 the top, then clockwise)."""
    width, height = size
    ring = np.zeros((height, width), dtype=bool)
    if sides & 1:
        ring[2:5, 2:-2] = True
    if sides & 2:
        ring[2:-2, -4:-2] = True
    if sides & 4:
        ring[-5:-2, 2:-2] = True
    if sides & 8:
        ring[2:-2, 2:4] = True
    return ring


_RING_PATCH = (40, 64)
_RING_PATCH_CORNERS = np.array([[0, 0], [_RING_PATCH[0] - 1, 0], [_RING_PATCH[0] - 1, _RING_PATCH[1] - 1],
                                [0, _RING_PATCH[1] - 1]], dtype=np.float32)


@lru_cache(maxsize=None)
def _ring_of(sides: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The ring along ``sides`` of the patch: its pixels' flat indices (N,), the least-squares
    plane through them (``pixels @ solver`` (3,) for pixels (N,)), and their (y, x, 1) (3, N),
    with which a plane is evaluated at them."""
    ring = _ring_mask(_RING_PATCH, sides)
    design = np.stack([*np.nonzero(ring), np.ones(int(ring.sum()))]).astype(np.float64)
    return (np.flatnonzero(ring), np.linalg.pinv(design).astype(np.float32), design.astype(np.float32))


# The card's middle, where its symbols are: rows 8 to 8 from the bottom, columns 6 to 6 from
# the right, and each pixel's (y, x, 1) there, (3, M).
_MIDDLE_ROWS = slice(8, _RING_PATCH[1] - 8)
_MIDDLE_COLUMNS = slice(6, _RING_PATCH[0] - 6)
_MIDDLE_DESIGN = np.stack([grid.ravel() for grid in np.mgrid[_MIDDLE_ROWS, _MIDDLE_COLUMNS]]
                          + [np.ones((_MIDDLE_ROWS.stop - _MIDDLE_ROWS.start)
                                     * (_MIDDLE_COLUMNS.stop - _MIDDLE_COLUMNS.start))]).astype(np.float32)


def _percentile(values: npt.NDArray[np.floating], fraction: float) -> float:
    """``np.percentile(values, 100 * fraction)`` (linear interpolation) of a 1-d array by
    partial sorting: several times faster on the few thousand values used here."""
    position = fraction * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    part = np.partition(values, (low, high))
    return float(part[low] + (position - low) * (part[high] - part[low]))


def _overlap(a: CardQuad, b: CardQuad) -> tuple[int, int, int]:
    """Pixel counts of the intersection, of ``a`` and of ``b``, the quads drawn filled."""
    x, y, w, h = cv2.boundingRect(np.vstack([a.corners, b.corners]).astype(np.float32))
    canvas_a = np.zeros((h + 2, w + 2), np.uint8)
    canvas_b = np.zeros_like(canvas_a)
    offset = np.array([x, y], np.float32)
    cv2.fillConvexPoly(canvas_a, np.round(a.corners - offset).astype(np.int32), 1)
    cv2.fillConvexPoly(canvas_b, np.round(b.corners - offset).astype(np.int32), 1)
    return (np.count_nonzero(canvas_a & canvas_b), np.count_nonzero(canvas_a),
            np.count_nonzero(canvas_b))


def _iou_estimate(a: CardQuad, b: CardQuad) -> float:
    inter, area_a, area_b = _overlap(a, b)
    union = area_a + area_b - inter
    return inter / union if union else 0.0


def _merge_overlapping(candidates: list[CardQuad], image_area: float = np.inf,
                       image: npt.NDArray[np.uint8] | None = None) -> list[CardQuad]:
    """One quad per card from the candidates of all maps (in ``image``, of ``image_area`` pixels).

    Of overlapping candidates the best scored is kept. Then containment is settled: a quad that
    holds two or more card-sized quads is two touching cards seen as one blob, and is dropped;
    small quads inside a card are its symbols (a diamond outline is a fine quadrilateral), and
    are dropped.
    """
    # Cards on one table are alike in size: among overlapping candidates (a card, a card with a
    # strip of table, two cards as one), prefer the one closest to the typical candidate size
    # at its place in the image.
    typical = _typical_area_model(_plain_unless_few([q for q in candidates if not q.partial]))
    # A map that outlines every card with its shadow (the edges of a pale table) also moves the
    # typical size its way; what lies between two outlines of one card tells which is the card.
    loose = set() if image is None else _loose_outlines(candidates, image)

    def preference(quad: CardQuad) -> float:
        # (A card found from its symbols was found where no card was: what it competes with
        # are the outlines that lost there, a block or a card with a strip of table.)
        weight = 0.5 if (quad.guess and not quad.from_symbols) or id(quad) in loose else 1.0
        return weight * quad.score / (1.0 + 2.0 * _size_mismatch(quad, typical(quad.center)))

    kept: list[CardQuad] = []
    covering_kept: list[CardQuad] = []
    for candidate in sorted(candidates, key=lambda q: -preference(q)):
        if any(_centers_close(k, candidate) and _iou_estimate(k, candidate) > 0.5 for k in kept):
            continue
        # (A quad over twice the typical card is no card: it hides no card found from its
        # symbols lying on it.)
        if candidate.guess and any(_covers(k, candidate) and not (
                candidate.from_symbols and k.area > 2.0 * typical(k.center)) for k in kept):
            covering_kept.append(candidate)
            continue
        kept.append(candidate)
    # A guess over quads kept may be the card they are pieces of: a pale stripe of a cloth
    # running under a card parts its paper in the maps that outline cards plainly, and only a
    # later look outlines it whole.
    for guess in covering_kept:
        outline = guess.corners.reshape(-1, 1, 2)
        covered = [k for k in kept if _covers(k, guess) or cv2.pointPolygonTest(
            outline, tuple(map(float, k.center)), False) > 0]
        # (Not where the frame cuts any of them: a cut card's size says nothing of a card's.)
        if covered and not any(q.partial for q in [guess, *covered]) and _pieces_of(guess, covered, typical) and (
                len(covered) == 1 or sum(k.area for k in covered) >= _COVERING_PIECES * guess.area):
            pieces = {id(k) for k in covered}
            kept = [k for k in kept if id(k) not in pieces] + [guess]
    dropped: set[int] = set()
    blocks: list[CardQuad] = []  # quads holding two cards or more: dropped
    shows_none: dict[int, bool] = {}

    def blank(quad: CardQuad) -> bool:
        assert image is not None
        if id(quad) not in shows_none:
            shows_none[id(quad)] = not _shows_symbols(image, quad)
        return shows_none[id(quad)]

    for i, quad in enumerate(kept):
        outline = quad.corners.reshape(-1, 1, 2)
        inside = [j for j, other in enumerate(kept) if j != i and other.area < 0.7 * quad.area
                  and cv2.pointPolygonTest(outline, tuple(map(float, other.center)), False) > 0]
        # A symbol is a small part of its card; whatever is near the typical card size is a
        # card (a quad holding many cards dwarfs each of them). In a close-up, though, the
        # symbols outnumber the cards and set the typical size: there a quad traced inside a
        # printed symbol (at most an eighth of its card) is told by its ink, that symbol's
        # stripes or stroke, far fainter than the whole card's strongest ink; and in a card
        # (a quad showing symbols: not a patch of table round some cards), a quad that shows
        # none itself (the bare paper inside an outline symbol, framed by its strong stroke,
        # or a patch of paper between symbols) is no card either.
        # (Nor is a quad of paper far brighter than the outer quad's any part of it: that is a
        # card lying on a dark table, of which a strip reaching the frame edge passes for a
        # card cut by it, with the cards on it for its strong "ink": bench scene 1153.)
        # (And a card prints at most three symbols: more faint quads along the middle of a
        # close-up quad than that are cards on a pale table that the quad traces where it
        # reaches the frame edge: bench scene 1011, seven cards on a white table.)
        close_up = quad.area > _CLOSE_UP * image_area
        card_sized = [j for j in inside if kept[j].area > 0.2 * quad.area
                      or kept[j].area > 0.4 * typical(kept[j].center)]
        if close_up:
            small = [j for j in card_sized if kept[j].area < 0.15 * quad.area
                     and not _far_brighter_paper(kept[j], quad)]
            faint = [j for j in small if _on_long_axis(quad, kept[j].center)
                     and kept[j].ink < _INNER_CARD_INK * quad.ink]
            if len(_outermost([kept[j] for j in faint])) > 3:
                faint = []
            symbols = set(faint)
            others = [j for j in small if j not in symbols]
            if others and image is not None and not blank(quad):
                symbols.update(j for j in others if blank(kept[j]))
            card_sized = [j for j in card_sized if j not in symbols]
        elif len(card_sized) >= 2 and image is not None and not blank(quad):
            # A card holding small blank quads the size of a checked cloth's cells (the paper
            # between its symbols), which set the typical size, is no block of cards: close-up
            # 7015, a card on a cloth of pale cells, was dropped for two such patches. (The
            # halves of a block of two cards are half its size, and may show no symbols when
            # blurred.)
            card_sized = [j for j in card_sized if not (kept[j].area < 0.25 * quad.area and blank(kept[j]))]
        if len(card_sized) >= 2:
            dropped.add(i)
            blocks.append(quad)
            continue
        dropped.update(j for j in inside if j not in card_sized)
        # One card-sized quad inside another: a card with a strip of table, or a piece of a
        # card cut off by a symbol's outline. The one nearer the typical card size is the card.
        for j in card_sized:
            if (_size_mismatch(kept[j], typical(kept[j].center))
                    < _size_mismatch(quad, typical(quad.center))):
                dropped.add(i)
            else:
                dropped.add(j)
    merged = [quad for i, quad in enumerate(kept) if i not in dropped]
    # A guess hidden under a block of cards is one of its cards once the block is dropped (dev
    # 5038: a card in a grid of touching cards, laid beside its neighbour, was lost with the
    # block it lay under), where no quad kept covers it and its face is a card's (not half a
    # card's: bench 1083).
    if image is not None and blocks:
        for guess in covering_kept:
            if (any(_covers(block, guess) for block in blocks) and not any(guess is k for k in kept)
                    and not any(_covers(k, guess) or _covers(guess, k) for k in merged)
                    and _card_face(image, guess.corners) is not None):
                merged.append(guess)
    return merged


# Two or more pieces of a card cover at least this fraction of it.
_COVERING_PIECES = 0.7


def _pieces_of(quad: CardQuad, inner: list[CardQuad], typical: Callable[[npt.NDArray[np.float32]], float]
               ) -> bool:
    """Whether the quads ``inner`` are pieces of ``quad``: each lies inside it (`_lies_inside`)
    and it is nearer the ``typical`` card size than each of them."""
    mismatch = _size_mismatch(quad, typical(quad.center))
    return all(_lies_inside(piece, quad) and mismatch < _size_mismatch(piece, typical(piece.center))
               for piece in inner)


def _outermost(quads: list[CardQuad]) -> list[CardQuad]:
    """The ``quads`` whose centre lies inside no larger one of them."""
    return [q for q in quads if not any(
        other.area > q.area and cv2.pointPolygonTest(other.corners.reshape(-1, 1, 2),
                                                     tuple(map(float, q.center)), False) > 0
        for other in quads)]


def _far_brighter_paper(inner: CardQuad, outer: CardQuad) -> bool:
    """Whether ``inner``'s paper is far brighter than ``outer``'s: no printed symbol of a card
    shows anything brighter than the card's own paper."""
    return max(inner.paper) > _BRIGHTER_PAPER * max(outer.paper) + 10.0


_BRIGHTER_PAPER = 1.5


def _shows_centred_symbols(image: npt.NDArray[np.uint8], quad: CardQuad) -> bool:
    """Whether the face a quad outlines shows one to three printed symbols, centred, as every
    SET card does (`shows_symbols`, `symbols_off_centre`)."""
    return _centred_symbols(segment_ink(warp_card(image, quad.corners)))


def _centred_symbols(face: InkSegmentation) -> bool:
    """Whether a face shows one to three printed symbols, centred."""
    return 1 <= len(face.symbols) <= 3 and shows_symbols(face) and not symbols_off_centre(face)


# A whole card whose ink is fainter than INK_RATIO of the typical card's is still a card where
# its face shows centred symbols; only faces of at least this fraction of the typical ink are
# looked at (a look at a face costs a warp; on the 840 bench and dev scenes no card found
# this way was fainter, and none was found without this floor that was not found with it).
_FAINT_INK_RATIO = 0.1


def _shows_symbols(image: npt.NDArray[np.uint8], quad: CardQuad, cut_by_frame: bool = False) -> bool:
    """Whether the face a quad outlines shows a printed symbol (`shows_symbols`); with
    ``cut_by_frame``, one the frame may cut where the quad is a cut card (`_cut_sides`)."""
    open_sides = _cut_sides(quad, image) if cut_by_frame else 0
    return shows_symbols(segment_ink(warp_card(image, quad.corners)), open_sides=open_sides)


def _cut_sides(quad: CardQuad, image: npt.NDArray[np.uint8]) -> int:
    """The sides of a card cut by the frame edge that lie along it (`_frame_sides`), where a
    symbol the frame cuts may run to (`shows_symbols`); none for a whole card, or for a band
    across the whole image between opposite edges, which is no cut card."""
    cut = _frame_sides(quad.corners, image.shape[1], image.shape[0]) if quad.partial else 0
    return 0 if cut & (cut >> 2) else cut


# A quad inside another is a card, not a symbol, only with at least this fraction of the other's
# ink strength: symbols traced inside a card come out at 0.4-0.55 of it (generated close-ups),
# cards inside a block of cards at about 1.
_INNER_CARD_INK = 0.7
# A quad over this fraction of the image is a close-up of a card or a few.
_CLOSE_UP = 0.2


class _SeamSplitter:
    """Two cards laid edge to edge make one card-shaped blob when a tilted camera foreshortens
    them (two cards end to end, squeezed) or when they lie side by side (1.28 long for its
    width, a card seen a little from the side); their seam shows only as a thin line. A quad
    crossed near its middle by a thin dark straight line that runs to both its sides, with
    blank paper along both sides of the line and card-like halves, is two cards.

    Each candidate is looked at once, however often the search settles its candidates.
    """

    def __init__(self, maps: _Maps) -> None:
        self.maps = maps
        self.pieces: dict[int, tuple[CardQuad, list[CardQuad]]] = {}

    def split(self, candidates: list[CardQuad]) -> list[CardQuad]:
        """``candidates`` with every quad that is two touching cards replaced by the two, and
        so on down: a block of four by the four."""
        result = []
        for candidate in candidates:
            known = self.pieces.get(id(candidate))
            if known is None or known[0] is not candidate:
                known = (candidate, self._pieces(candidate))
                self.pieces[id(candidate)] = known
            result.extend(known[1])
        return result

    def _pieces(self, candidate: CardQuad) -> list[CardQuad]:
        pieces = [candidate]
        for _ in range(4):  # (a block of 4 x 4 cards halves four times)
            halves = [None if piece.partial else _halves_at_seam(piece, self.maps.darkest, self.maps.image)
                      for piece in pieces]
            if not any(halves):
                break
            pieces = [half for piece, split in zip(pieces, halves) for half in (split or [piece])]
        return pieces


def _halves_at_seam(card: CardQuad, darkest: npt.NDArray[np.uint8],
                    image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The two cards ``card`` is, split at a seam (see `_SeamSplitter`), or None."""
    steps = card.corners[NEXT] - card.corners
    sides = np.hypot(steps[:, 0], steps[:, 1]).tolist()
    for turn in (0, 1):
        corners = np.roll(card.corners, -turn, axis=0)  # the seam runs along side 0
        width = int(round(max(sides[turn], sides[turn + 2])))
        height = int(round(max(sides[turn + 1], sides[(turn + 3) % 4])))
        if width < 12 or height < 24:
            continue
        # Only the middle rows of the quad warped flat, where a seam may run, are looked at.
        top, bottom = _seam_band(height)
        target = np.float32([[0, -top], [width - 1, -top], [width - 1, height - 1 - top],
                             [0, height - 1 - top]])
        matrix = cv2.getPerspectiveTransform(corners, target)
        band = cv2.warpPerspective(darkest, matrix, (width, bottom - top), flags=cv2.INTER_LINEAR)
        row = _seam_row(band, height, top)
        if row is None:
            continue
        row_ends = np.float32([[[0, row[0]], [width - 1, row[1]]]])
        start, end = cv2.perspectiveTransform(row_ends, np.linalg.inv(matrix))[0]
        halves = []
        for outline in ([corners[0], corners[1], end, start], [start, end, corners[2], corners[3]]):
            quad = order_corners(np.array(outline, np.float32))
            if not MIN_ASPECT <= aspect(quad) <= MAX_ASPECT:
                break
            paper, colour, ink = _paper_fraction(image, quad)
            if paper < 0.6:
                break
            halves.append(CardQuad(quad, False, score=card.score, paper=colour, ink=ink, guess=card.guess))
        if len(halves) == 2:
            return halves
    return None


# A seam is looked for between these fractions of a quad's height.
_SEAM_BAND = (0.4, 0.6)
# The dark line is found as a row darker than the rows this many pixels off (a row off either
# way counted too); it may run this many pixels slanted across the quad; and the rows this far
# off it, at least, must be blank paper.
_SEAM_REACH = 2
_SEAM_SLANT = 3
_SEAM_GAP = 3
# ... or up to this many pixels further, where the line is blurred wide.
_SEAM_SHOULDER = 3


def _seam_band(height: int) -> tuple[int, int]:
    """The rows [top, bottom) of a quad warped to ``height`` rows that `_seam_row` looks at."""
    margin = _SEAM_SLANT + max(_SEAM_GAP, int(round(0.02 * height))) + _SEAM_SHOULDER + _SEAM_REACH + 1
    return (max(0, int(_SEAM_BAND[0] * height) - margin),
            min(height, int(_SEAM_BAND[1] * height) + 1 + margin))


def _seam_row(band: npt.NDArray[np.uint8], height: int, top: int) -> tuple[float, float] | None:
    """Where a thin dark straight line crosses a quad warped flat to ``height`` rows (darkest
    channel; ``band`` holds its rows `_seam_band` from ``top``) from its left side to its
    right, near its middle: its rows of ``band`` at the left and right ends."""
    width = band.shape[1]
    # Smoothing along the rows keeps a line along them and evens out noise.
    smooth = cv2.blur(band, (max(3, (width // 12) | 1), 1)).astype(np.int16)
    reach = _SEAM_REACH
    dip = np.minimum(smooth[:-2 * reach], smooth[2 * reach:]) - smooth[reach:-reach]
    dark = dip > 4  # grey levels: over what noise leaves after the smoothing
    dark[1:-1] = dark[:-2] | dark[1:-1] | dark[2:]  # a line a row off here and there
    margin = max(2, int(0.15 * width))
    gap = max(_SEAM_GAP, int(round(0.02 * height)))
    # Every line from row r at the left to r + k at the right (|k| <= 3 pixels: cards not
    # quite in line) through the middle fifth of the quad: (lines, width) row indices of
    # ``band``.
    rows = np.arange(int(_SEAM_BAND[0] * height), int(_SEAM_BAND[1] * height) + 1) - top
    # (Most quads, single cards, show no dark line at all in their margins there.)
    near = dark[max(0, rows[0] - reach - _SEAM_SLANT):rows[-1] - reach + _SEAM_SLANT + 1]
    if min(near[:, :margin].any(axis=0).mean(), near[:, -margin:].any(axis=0).mean()) <= 0.6:
        return None
    columns = np.arange(width)
    slants = np.arange(-_SEAM_SLANT, _SEAM_SLANT + 1)[:, None]
    offsets = np.round(slants * (columns / (width - 1) - 0.5)).astype(np.intp)
    lines = (rows[None, :, None] + offsets[:, None, :]).reshape(-1, width)
    farthest = gap + _SEAM_SHOULDER
    lines = lines[(lines.min(axis=1) >= max(farthest, reach)) & (lines.max(axis=1) < len(band) - max(farthest, reach))]
    if not len(lines):
        return None
    on_line = dark[lines - reach, columns]
    # Dark along its whole length and at both ends: a symbol's stripe stops short of the
    # card's edges.
    score = np.minimum(on_line.mean(axis=1), np.minimum(on_line[:, :margin].mean(axis=1),
                                                          on_line[:, -margin:].mean(axis=1)))
    candidates = np.flatnonzero(score > 0.6)
    if not len(candidates):
        return None
    # Blank paper on both sides of the line: a card's margin, not the inside of a symbol. (A
    # line blurred wider than the gap has dark shoulders there: a few pixels further out are
    # looked at too, on each side.)
    paper_level = 0.8 * np.percentile(smooth, 90)
    chosen = lines[candidates]
    blank = np.ones(len(candidates), bool)
    for side in (-1, 1):
        blank &= np.any([np.percentile(smooth[chosen + side * offset, columns], 5, axis=1) >= paper_level
                         for offset in range(gap, farthest + 1)], axis=0)
    if not blank.any():
        return None
    best = lines[candidates[blank][np.argmax(score[candidates[blank]])]]
    return float(best[0]), float(best[-1])


def _loose_outlines(candidates: list[CardQuad], image: npt.NDArray[np.uint8]) -> set[int]:
    """The ids of plain candidates that frame another plain candidate of the same card with a
    band of something that is not that card's paper: a shadow, a strip of table.

    Only a frame all round counts (the inner outline near the middle of the outer one, the band
    a few pixels wide): a piece of a card cut off along a symbol shares three edges with the
    card, and the band outside it is the table.
    """
    plain = [q for q in candidates if not q.guess and not q.partial]
    loose: set[int] = set()
    for outer in plain:
        for inner in plain:
            if inner is outer or id(outer) in loose or not 0.6 < inner.area / outer.area < 0.97:
                continue
            gap = 0.5 * (np.sqrt(outer.area) - np.sqrt(inner.area))
            if float(np.hypot(*(outer.center - inner.center))) > 1.2 * gap:
                continue
            if _band_is_not_paper(image, inner, outer, float(np.clip(0.5 * gap, 1.5, 4.0))):
                loose.add(id(outer))
    return loose


def _band_is_not_paper(image: npt.NDArray[np.uint8], inner: CardQuad, outer: CardQuad, distance: float) -> bool:
    """Whether the band ``distance`` pixels outside ``inner`` (where it lies inside ``outer``)
    differs in colour from ``inner``'s paper."""
    ring = grow_quad(inner.corners, distance).astype(np.float64)
    steps = np.linspace(0.1, 0.9, 9)  # along each side, away from the rounded corners
    points = np.vstack([ring[k] + (ring[(k + 1) % 4] - ring[k]) * steps[:, None] for k in range(4)])
    outline = outer.corners.reshape(-1, 1, 2).astype(np.float32)
    inside = [p for p in points if cv2.pointPolygonTest(outline, (float(p[0]), float(p[1])), False) >= 0]
    if len(inside) < 0.75 * len(points):
        return False
    xy = np.asarray(inside, np.float32)
    band = cv2.remap(image, xy[:, 0].reshape(1, -1), xy[:, 1].reshape(1, -1), cv2.INTER_LINEAR)
    colour = np.median(band.reshape(-1, 3).astype(np.float64), axis=0)
    paper = np.asarray(inner.paper, np.float64)
    return float(np.abs(colour - paper).max()) > 0.12 * float(paper.max()) + 4.0


def _on_long_axis(card: CardQuad, point: npt.NDArray[np.float32]) -> bool:
    """Whether a point lies on a card's long middle line (within a sixth of its width), where
    the symbols are printed, in the card's own perspective."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(card.corners.astype(np.float32), unit)
    across = cv2.perspectiveTransform(np.asarray(point, np.float32).reshape(1, 1, 2), matrix)[0, 0, 0]
    return bool(abs(float(across) - 0.5) < 1 / 6)


def _typical_area_model(quads: list[CardQuad]) -> Callable[[npt.NDArray[np.float32]], float]:
    """The typical card area (pixels) at an (x, y) place in the image.

    Under perspective, cards near the camera look up to twice as large as far ones (or more,
    seen steeply), so the typical area is a plane in log area over (x, y), fitted robustly to
    the quads that agree with the median, or with a plane through all of them, whichever more
    quads fit closely in the end; with too few quads it is just their median area.
    """
    if not quads:
        return lambda center: 1.0
    log_area = np.log(np.maximum([q.area for q in quads], 1.0))
    centers = np.array([q.center for q in quads], dtype=np.float64)
    mean = centers.mean(axis=0)  # (small numbers for the fit)
    design = np.column_stack([centers - mean, np.ones(len(quads))])
    card_width = math.sqrt(math.exp(float(np.median(log_area))) / _FLAT_ASPECT)

    def refined(coefficients: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], int]:
        """The plane refitted to the quads that agree with it, and how many agree at the end."""
        limit = 0.5  # a card twice or half the size is still a candidate for the fit
        for _ in range(3):
            agree = np.abs(log_area - design @ coefficients) < limit
            if agree.sum() < _PLANE_QUADS:
                break
            coefficients = _plane_through(design[agree, :2], log_area[agree], card_width)
            limit = 0.3
        return coefficients, int(np.count_nonzero(np.abs(log_area - design @ coefficients) < _CLOSE_FIT))

    coefficients, agreeing = refined(np.array([0.0, 0.0, float(np.median(log_area))]))
    if len(quads) >= _PLANE_QUADS:
        # Seen steeply, the near cards can be twice and the far ones half the median size:
        # too few agree with the median to start the fit from it, but a plane through all of
        # them finds the slope (it is taken only where more cards agree with it at the end).
        tilted, tilted_agreeing = refined(_plane_through(design[:, :2], log_area, card_width))
        if tilted_agreeing > agreeing:
            coefficients, agreeing = tilted, tilted_agreeing
        # A quad far off every card's size (a blank patch of cloth a fifth of a card, a box)
        # drags a plane through all of them: so does a plane through the rest.
        near_median = np.abs(log_area - np.median(log_area)) < _FAR_OFF_SIZE
        if _PLANE_QUADS <= near_median.sum() < len(quads):
            tilted, tilted_agreeing = refined(_plane_through(design[near_median, :2], log_area[near_median],
                                                             card_width))
            if tilted_agreeing > agreeing:
                coefficients = tilted

    # (The fit's offset folded into plain floats once: this is asked for every candidate.)
    slope_x, slope_y = float(coefficients[0]), float(coefficients[1])
    intercept = float(coefficients[2]) - slope_x * float(mean[0]) - slope_y * float(mean[1])

    def typical(center: npt.NDArray[np.float32]) -> float:
        return math.exp(slope_x * float(center[0]) + slope_y * float(center[1]) + intercept)
    return typical


# The fewest quads a plane of typical sizes is fitted to (with fewer, it is their median).
_PLANE_QUADS = 6
# With fewer than that, a card showing centred symbols may be this many times the median.
_NEAR_CARD = 4.0

# A quad whose area is this far (log) from the median, over 2.7 times or under 0.37 of it, is
# left out of one of the typical size's fits.
_FAR_OFF_SIZE = 1.0


def _plane_through(points: npt.NDArray[np.float64], values: npt.NDArray[np.float64], card_width: float
                   ) -> npt.NDArray[np.float64]:
    """The least-squares plane (slope x, slope y, value at 0, 0) through ``values`` at the
    (x, y) ``points``, fitted without the points that alone decide a slope (leverage over
    0.7): cards in one row and a box beside it would fit a plane exactly, whatever the box's
    size, and it would set the size beside the row. Points within a fraction of a
    ``card_width`` of one line (a row of cards, however jittered) say nothing of the slope
    across it: it is fitted along the line only. (In closed form: this runs a dozen times a
    frame, and NumPy's solvers cost 20-70 us a call on such small matrices.)"""
    offset, x, y, sxx, sxy, syy = _scatter(points)
    determinant = sxx * syy - sxy * sxy
    if determinant > 1e-6 * (sxx + syy) ** 2:
        leverage = 1.0 / len(values) + (syy * x * x - 2 * sxy * x * y + sxx * y * y) / determinant
        checked = leverage <= _HIGH_LEVERAGE
        if not checked.all() and checked.sum() >= 3:
            points, values = points[checked], values[checked]
            offset, x, y, sxx, sxy, syy = _scatter(points)
            determinant = sxx * syy - sxy * sxy
    mean_value = float(values.mean())
    sxv, syv = float(x @ (values - mean_value)), float(y @ (values - mean_value))
    # The smaller spread of the points about their mean (an eigenvalue of the 2 x 2 scatter).
    half_sum, half_difference = (sxx + syy) / 2, (sxx - syy) / 2
    radius = math.hypot(half_difference, sxy)
    if half_sum + radius < len(values) * (_ROW_WIDTH * card_width) ** 2:
        # Points all within a fraction of a card width of one place (one card's outlines by
        # several maps, once the far points that alone decide a slope are left out) say
        # nothing of any slope: a pixel's jitter between them set one of 0.015 a pixel in
        # log area, and the typical size at the card beside them 20 times too small
        # (close-up 7009).
        return np.array([0.0, 0.0, mean_value])
    if half_sum - radius < len(values) * (_ROW_WIDTH * card_width) ** 2:
        # Along the line only: the direction of the larger spread.
        dx, dy = (half_difference + radius, sxy) if half_difference >= 0 else (sxy, radius - half_difference)
        norm = math.hypot(dx, dy)
        if norm == 0.0:
            return np.array([0.0, 0.0, mean_value])
        dx, dy = dx / norm, dy / norm
        spread = dx * dx * sxx + 2 * dx * dy * sxy + dy * dy * syy
        rate = (dx * sxv + dy * syv) / spread if spread > 0 else 0.0
        slope_x, slope_y = rate * dx, rate * dy
    else:
        slope_x = (syy * sxv - sxy * syv) / determinant
        slope_y = (sxx * syv - sxy * sxv) / determinant
    return np.array([slope_x, slope_y, mean_value - slope_x * offset[0] - slope_y * offset[1]])


def _scatter(points: npt.NDArray[np.float64]
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], float, float, float]:
    """The mean of (x, y) ``points``, their x and y about it, and the sums of x x, x y and y y."""
    offset = points.mean(axis=0)
    x, y = (points - offset).T
    return offset, x, y, float(x @ x), float(x @ y), float(y @ y)


# Centres within this many card widths (standard deviation) of one line are a row of cards.
_ROW_WIDTH = 0.25
# A point whose leverage in a plane fit is over this decides a slope alone.
_HIGH_LEVERAGE = 0.7


# Cards near each other look the same size within about 15% (log area 0.15), whatever the
# perspective: the plane of typical sizes that most cards fit that closely is the right one.
_CLOSE_FIT = 0.15


def _plain_unless_few(quads: list[CardQuad]) -> list[CardQuad]:
    """The quads that are not guesses, or all of them when fewer than three are."""
    plain = [q for q in quads if not q.guess]
    return plain if len(plain) >= 3 else quads


def _size_mismatch(quad: CardQuad, typical_area: float) -> float:
    """How far a quad's area is from the typical card area, as the absolute log ratio."""
    return abs(float(np.log(max(quad.area, 1.0) / max(typical_area, 1.0))))


def _covers(a: CardQuad, b: CardQuad) -> bool:
    """Whether quad ``a`` covers a fifth or more of quad ``b``."""
    inter, _, area_b = _overlap(a, b)
    return inter > 0.2 * area_b


def _centers_close(a: CardQuad, b: CardQuad) -> bool:
    distance = float(np.hypot(*(a.center - b.center)))
    return distance < 0.5 * np.sqrt(max(a.area, b.area))


def _outside_points(image: npt.NDArray[np.uint8], quads: list[npt.NDArray[np.float32]]
                    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The BGR colours just outside each card's outline (what it lies on), at 36 points round
    it: float64 (n, 36, 3), and bool (n, 36), whether each point lies in the image."""
    corners = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)          # (n, 4, 2)
    center = corners.mean(axis=1, keepdims=True)
    outline = center + (corners - center) * 1.12
    ends = outline[:, NEXT]
    steps = np.linspace(0.1, 0.9, 9)[None, None, :, None]
    points = (outline[:, :, None] + (ends - outline)[:, :, None] * steps).reshape(len(corners), -1, 2)
    height, width = image.shape[:2]
    inside = ((points[..., 0] >= 0) & (points[..., 0] < width)
              & (points[..., 1] >= 0) & (points[..., 1] < height))
    xs = np.clip(points[..., 0], 0, width - 1).astype(int)
    ys = np.clip(points[..., 1], 0, height - 1).astype(int)
    return image[ys, xs].astype(np.float64), inside


def _outside_colours(colours: npt.NDArray[np.float64], inside: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """The median of each card's colours just outside (`_outside_points`) in the image:
    float64 (n, 3), black for an outline with no point in the image."""
    if inside.all():  # the usual case, and np.nanmedian is 40x slower than np.median
        return np.median(colours, axis=1)
    return np.array([np.median(colours[i][inside[i]], axis=0) if inside[i].any() else np.zeros(3)
                     for i in range(len(colours))])


def _tint(colour: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Chromaticity of a BGR colour (each channel over their sum): its tint without brightness.
    Of many colours at once along the last axis."""
    values = np.asarray(colour, dtype=np.float64)
    return values / np.maximum(values.sum(axis=-1, keepdims=True), 1e-6)


def _off_grey(colour: npt.ArrayLike) -> float:
    """How far a BGR colour's tint is from grey: its largest channel share's distance from 1/3."""
    return float(np.abs(_tint(colour) - 1.0 / 3.0).max())


# Card paper's tint stays this close to grey (0.11 at most under the warm webcam light of the
# 12 labelled photos' cards; generated whole cards, warm and cool light: 99% within 0.09), where
# wood, felt and rugs are 0.11-0.15 off.
_GREY_PAPER = 0.10
# A cut card with no whole one in view: its paper at least this fraction of the table's median
# brightness (a plank's darker streak is well below it).
_CUT_PAPER_LEVEL = 0.9
# A cut card beside one or two whole ones: its paper at least this fraction of theirs.
_CUT_BESIDE_WHOLE = 0.6


def _table_tint(colours: list[npt.NDArray[np.float64]]) -> tuple[npt.NDArray[np.float64] | None, float]:
    """The typical tint of what the whole cards lie on (their ``colours`` just outside), and how
    far from it a cut card's surroundings may be: 0.06, or as far as the whole cards' own are
    from it where the table is many-coloured (a rug), where no one tint is the table's."""
    if not colours:
        return None, _TABLE_TINT_SPREAD
    tints = np.array([_tint(colour) for colour in colours])
    typical = np.median(tints, axis=0)
    return typical, max(_TABLE_TINT_SPREAD, float(np.abs(tints - typical).max()))


_TABLE_TINT_SPREAD = 0.06


def _common_on_table(tint: npt.NDArray[np.float64], palette: npt.NDArray[np.float64]) -> bool:
    """Whether a tint is one the table shows round the whole cards: at least `_TABLE_SHARE` of
    the points of that ``palette`` (tints, (k, 3)) within `_TABLE_TINT_SPREAD` of it. The
    median round a card on a cloth of dark and pale stripes is either colour, as the stripes
    fall: a cut card lying on a dark stripe lies on the table all the same."""
    if not len(palette):
        return False
    close = np.abs(palette - tint).max(axis=1) <= _TABLE_TINT_SPREAD
    return bool(np.mean(close) >= _TABLE_SHARE)


_TABLE_SHARE = 0.25


def _keep_consistent(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """Drop candidates far off the typical card size (a box, a sheet of paper, a symbol blob).

    A card touching the image edge whose size and proportions are those of a whole card is only
    grazed by the edge: it is kept as a whole card. Only a card clearly cut stays partial.
    """
    cards = _without_small_guesses(cards)
    # Guesses must fit the cards found plainly, not set the standard themselves (a cloth of
    # card-white squares would otherwise make the squares the typical card).
    return _consistent_with(cards, _plain_unless_few([c for c in cards if not c.partial]), image)


def _doubles_halved(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``cards`` with each quad that is two cards laid side by side with no seam showing
    replaced by the two.

    Two cards touching along their long sides make one quad 1.28 long for its width, which a
    card seen a little from the side is too (and so, seen steeply, do two cards end to end);
    where no seam shows (`_SeamSplitter` looks for one), only the size and the faces tell: a
    quad far larger than the typical card there, whose face is no card's, and whose halves
    (across its long sides) each are: paper round centred symbols lying across it. (Two cards
    side by side warped as one lie a quarter turn off, their symbols squeezed tall. A card
    larger than the typical one, in a close-up where the typical card is a poor guess, is
    one card's face, and halved, its two symbols would lie along each half, a quarter turn
    off, its one or three be cut or off the halves' middles.)
    """
    whole = [card for card in cards if not card.partial]
    if len(whole) < 4:
        return cards
    # (The typical card's fit over the whole view costs about a millisecond: it is made only
    # where some card is well larger than its three nearest, as no card of a table seen from
    # straight above is. It judges better than the nearest alone, which may be doubles too,
    # or far: two doubles were 1.31 and 1.37 times theirs, and a grid's corner cards on the
    # real webcam frames, seen at an angle, are up to 1.37 times theirs.)
    areas, beside = _areas_beside(whole)
    if not (areas >= _LARGER_THAN_BESIDE * beside).any():
        return cards
    typical = _typical_area_model(_plain_unless_few(whole))
    result = []
    for card in cards:
        halves = None
        if (not card.partial and card.area >= _DOUBLE_AREA * typical(card.center)
                and _card_face(image, card.corners) is None):
            halves = _halves_across(card, image)
        result.extend(halves or [card])
    return result


def _areas_beside(whole: list[CardQuad]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The areas of the ``whole`` cards, and the median area of each one's three nearest."""
    centers = np.array([card.center for card in whole])
    areas = np.array([card.area for card in whole])
    distances = np.hypot(*(centers[:, None] - centers[None]).transpose(2, 0, 1))
    np.fill_diagonal(distances, np.inf)
    return areas, np.median(areas[np.argsort(distances, axis=1)[:, :3]], axis=1)


def _halves_across(card: CardQuad, image: npt.NDArray[np.uint8]) -> list[CardQuad] | None:
    """The two halves of a quad cut across its longer sides (or else its shorter ones), near
    their middles, where each is a card: card proportions, a paper margin, and centred symbols
    lying across it; else None. (The quad may take in more of one card than of the other, or
    cut one short: each half's cut is tried a little off the middle too, on its own.)"""
    corners = card.corners
    steps = corners[NEXT] - corners
    lengths = np.hypot(steps[:, 0], steps[:, 1])
    # Sides 0 and 2, or 1 and 3, are the longer pair; the cut runs from one to the other. (Two
    # cards end to end seen steeply along their length look shorter that way than across: bench
    # 1040. Then the cut across the shorter sides parts them, tried second.)
    longer = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    for turn in (longer, 1 - longer):
        a, b, c, d = np.roll(corners, -turn, axis=0).astype(np.float64)
        first = next((half for at in _DOUBLE_CUTS if (half := _card_face(
            image, np.array([a, a + at * (b - a), d + at * (c - d), d], np.float32))) is not None), None)
        if first is None:
            continue
        second = next((half for at in _DOUBLE_CUTS if (half := _card_face(
            image, np.array([b + at * (a - b), b, c, c + at * (d - c)], np.float32))) is not None), None)
        if second is not None:
            return [first, second]
    return None


def _card_face(image: npt.NDArray[np.uint8], outline: npt.NDArray[np.float32]) -> CardQuad | None:
    """The card an outline holds, as a guess, where it has a card's proportions, a paper margin
    and centred symbols lying across it; else None."""
    quad = order_corners(outline)
    if not MIN_ASPECT <= aspect(quad) <= MAX_ASPECT:
        return None
    paper, colour, ink = _paper_fraction(image, quad)
    if paper < 0.6:
        return None
    face = segment_ink(warp_card(image, quad))
    if not _centred_symbols(face) or looks_sideways(face):
        return None
    return CardQuad(quad, False, score=paper, paper=colour, ink=ink, guess=True)


# A quad at least this many times the typical card's area there may be two cards, cut at
# these fractions of its longer sides; it is looked for only where a card is at least this
# many times the median area of its three nearest.
_DOUBLE_AREA = 1.6
_LARGER_THAN_BESIDE = 1.3
_DOUBLE_CUTS = (0.5, 0.45, 0.55, 0.4, 0.6)


def _pieces_joined(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``cards`` with each two quads that are the pieces of one card replaced by the card (the
    converse of `_doubles_halved`).

    A card can come apart in two: a cable or pen across it cuts its paper, and on a cloth with
    pale stripes of its paper's tone the part over a pale stripe merges with the table, its
    outline traced along the stripe's edge. Either piece can pass for a small card seen from
    the side (the size test allows well under the typical card, as perspective needs). Two
    pieces together fill a quad of the typical card's size and proportions, whose face is one
    card's: paper round centred symbols lying across it. Two whole small cards side by side
    are no such face (their symbols lie a quarter turn off), nor end to end (twice too long).
    A piece whose face is no card's, and whose other piece was not found, is grown to the card
    (`_grown_to_card`).
    """
    whole = [card for card in cards if not card.partial]
    if len(whole) < 4:
        return cards
    # (As in `_doubles_halved`, the typical card's fit is made only where some card is well
    # smaller than its three nearest, as a piece is.)
    areas, beside = _areas_beside(whole)
    if not (areas <= _SMALLER_THAN_BESIDE * beside).any():
        return cards
    typical = _typical_area_model(_plain_unless_few(whole))
    small = [card for card in whole if card.area <= _PIECE_AREA * typical(card.center)]
    joins = []
    for index, first in enumerate(small):
        for second in small[index + 1:]:
            reach = _diagonal(typical((first.center + second.center) / 2), _FLAT_ASPECT)
            if np.linalg.norm(first.center - second.center) > reach:
                continue
            outline = _joined_outline(first, second)
            if outline is None:
                continue
            area = float(cv2.contourArea(outline))
            typical_area = typical(outline.mean(axis=0))
            # (Pieces lying apart, or overlapping, fill their joined outline poorly.)
            if (first.area + second.area < _PIECES_FILL * area
                    or first.area + second.area > area / _PIECES_FILL
                    or abs(math.log(max(area, 1.0) / typical_area)) > _JOINED_SIZE):
                continue
            joined = _card_face(image, outline)
            if joined is None or any(_covers(joined, other) for other in whole
                                     if other is not first and other is not second):
                continue
            joins.append((abs(math.log(area / typical_area)), first, second, joined))
    used: set[int] = set()
    added = []
    for _, first, second, joined in sorted(joins, key=lambda join: join[0]):
        if id(first) in used or id(second) in used:
            continue
        used.update((id(first), id(second)))
        added.append(dataclasses.replace(joined, guess=first.guess and second.guess))
    # A piece whose other piece was not found (a pale stripe's part of the card lost in it):
    # grown across one of its sides to the typical card, where that makes one card's face.
    others = [card for card in cards if id(card) not in used] + added
    for piece in small:
        if id(piece) in used or _card_face(image, piece.corners) is not None:
            continue  # (a card seen small, not a piece of one)
        grown = _grown_to_card(piece, typical, image,
                               [other for other in others if other is not piece and not other.partial])
        if grown is not None:
            used.add(id(piece))
            added.append(dataclasses.replace(grown, guess=True))
            others.append(grown)
    return [card for card in cards if id(card) not in used] + added


def _grown_to_card(piece: CardQuad, typical: Callable[[npt.NDArray[np.float32]], float],
                   image: npt.NDArray[np.uint8], cards: list[CardQuad]) -> CardQuad | None:
    """The card a piece of it grows to: the piece's outline with one side moved out until the
    quad is about the typical card's size, where the quad has a card's face (`_card_face`),
    lies in the image and covers no other card; the one nearest the typical size, or None."""
    height, width = image.shape[:2]
    corners = piece.corners.astype(np.float64)
    target = typical(piece.center) / max(piece.area, 1.0) - 1.0
    best, best_mismatch = None, _JOINED_SIZE
    for side in range(4):
        # Side ``side`` (its corners a -> b) moves out along the two sides that meet it.
        a, b = side, (side + 1) % 4
        before_a, after_b = (side - 1) % 4, (side + 2) % 4
        for stretch in _GROWTH_STEPS:
            moved = corners.copy()
            moved[a] += stretch * target * (corners[a] - corners[before_a])
            moved[b] += stretch * target * (corners[b] - corners[after_b])
            outline = moved.astype(np.float32)
            if not _clear_of_frame(outline, width, height):
                continue
            mismatch = abs(math.log(max(cv2.contourArea(outline), 1.0) / typical(outline.mean(axis=0))))
            if mismatch >= best_mismatch:
                continue
            face = _card_face(image, outline)
            if face is None or any(_covers(face, other) for other in cards):
                continue
            best, best_mismatch = face, mismatch
    return best


# A piece is grown by these fractions of what would make it the typical card's area.
_GROWTH_STEPS = (0.8, 1.0, 1.2)


def _joined_outline(first: CardQuad, second: CardQuad) -> npt.NDArray[np.float32] | None:
    """The quad round two quads together (their convex hull, the gap between them taken in),
    or None where they make no quadrilateral."""
    corners = np.concatenate([first.corners, second.corners])
    origin = np.floor(corners.min(axis=0)) - 2
    size = np.ceil(corners.max(axis=0) - origin).astype(int) + 3
    mask = np.zeros((size[1], size[0]), np.uint8)
    # (Filled and traced again: the quad's sides are fitted to the points along them.)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.round(corners - origin).astype(np.int32)), 255)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = fit_quad(contours[0]) if contours else None
    return None if outline is None else outline + origin.astype(np.float32)


# A piece of a card is at most this fraction of the typical card's area there; two pieces fill
# at least this fraction of their joined outline, which is within this of the typical card's
# size (log area ratio). Pieces are looked for only where some card is at most this fraction
# of the median area of its three nearest.
_PIECE_AREA = 0.75
_PIECES_FILL = 0.85
_JOINED_SIZE = 0.25
_SMALLER_THAN_BESIDE = 0.8


def _without_small_guesses(cards: list[CardQuad]) -> list[CardQuad]:
    """``cards`` without the guesses far smaller than every card found plainly: those are patches
    of the table (a cell of a checked cloth beside a close-up's card), as in the search
    (`_find_at_scale`)."""
    plain_areas = [c.area for c in cards if not c.partial and not c.guess]
    if not plain_areas:
        return cards
    return [c for c in cards if not (c.guess and not c.partial and c.area < 0.3 * min(plain_areas))]


def _without_blank_pattern(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``cards`` without the whole guesses that show no symbol where those are many beside
    three or more cards that show symbols: a pattern of the table (the pale cells of a checked
    cloth as large as the cards, or larger).

    A card may show no symbol for many reasons (a hand over it, an outline a little off, small
    and dim): only many blank ones at once are a pattern. (Where fewer than three cards show
    symbols, the reader drops the blank ones: `vision.recognize`, which looks at every face.)
    """
    guesses = [c for c in cards if c.guess and not c.partial]
    if len(guesses) < BLANK_PATTERN:
        return cards
    blank = {id(c) for c in guesses if not _shows_symbols(image, c)}
    if len(blank) < BLANK_PATTERN:
        return cards
    # (A look at a face costs a warp: the plain cards are looked at until three show symbols.)
    showing = len(guesses) - len(blank)
    for card in (c for c in cards if not c.partial and not c.guess):
        if showing >= 3:
            break
        showing += _shows_symbols(image, card)
    if showing < 3:
        return cards
    return [c for c in cards if id(c) not in blank]


# So many blank cards at once are a pattern of the table, not cards seen badly: on the 840
# bench and dev scenes, the real cards guessed at that show no symbol number three at most in a
# scene (occluded by a hand, or outlined half a card off in a grid); four scenes had four
# blank guesses or more beside three cards with symbols, 27 in all, 4 of them real cards;
# three had four blank cards or more beside fewer, 21 in all, none real.
BLANK_PATTERN = 4


def _judged_by_symbols(cards: list[CardQuad], kept: list[CardQuad],
                       image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``kept`` (`_keep_consistent` of ``cards``), or where that dropped whole cards, the cards
    consistent with the typical card of those that show printed symbols.

    The pale cells of a checked cloth are card-white and card-shaped, and can outnumber the
    cards (a close-up of one card shows a dozen): they then set the typical size, and the cards
    look too large. Only their faces tell them apart, so they are looked at only then.
    """
    kept_ids = {id(c) for c in kept}
    cards = _without_small_guesses(cards)
    whole = [c for c in cards if not c.partial]
    if all(id(c) in kept_ids for c in whole):
        return kept
    showing = [c for c in whole if _shows_symbols(image, c)]
    # A card or two may show none (small and blurred, or a hand over it): only blank candidates
    # in numbers, a third of them or more, are a pattern of the table.
    if not showing or 3 * (len(whole) - len(showing)) < len(whole):
        return kept
    # (A quad traced round a symbol, or round a piece of a card, shows symbols too; it lies
    # inside its card.)
    reference = [c for c in showing if not any(_lies_inside(c, other) for other in showing)]
    judged = _consistent_with(cards, _plain_unless_few(_without_small_guesses(reference)), image)
    # Most of the cards that makes must show symbols themselves: one stray candidate with
    # symbols (two small cards seen as one) is no standard for a table of blank patches.
    showing_ids = {id(c) for c in showing}
    judged_whole = [c for c in judged if not c.partial]
    if 2 * sum(id(c) in showing_ids for c in judged_whole) < len(judged_whole):
        if len(reference) < 3:
            return kept
        # Three cards or more with symbols are a standard, though: the blank patches that
        # still fit it (the far cells of a checked cloth, as small as cards there, whole or
        # cut by the frame) are patches.
        return [c for c in judged if id(c) in showing_ids or (c.partial and _shows_symbols(image, c))]
    return judged


def _consistent_with(cards: list[CardQuad], reference: list[CardQuad],
                     image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """The ``cards`` consistent in size, proportions, paper and ink with the typical card of the
    ``reference`` whole cards (see `_keep_consistent`)."""
    whole = [c for c in cards if not c.partial]
    if whole:
        typical = _typical_area_model(reference)
        typical_aspect = float(np.median([aspect(c.corners) for c in reference]))
    else:
        largest = max((c.area for c in cards), default=0.0)
        typical, typical_aspect = (lambda center: largest), _FLAT_ASPECT
    # The tint of this deck's paper under this light, which a cut card must share: even one or
    # two cards found plainly show it (a close-up, beside a patch of table at the frame edge).
    plain_whole = [c for c in whole if not c.guess]
    paper_tint = (np.median([_tint(c.paper) for c in whole], axis=0) if len(whole) >= 3 else
                  np.median([_tint(c.paper) for c in plain_whole], axis=0) if plain_whole else None)
    # What each card lies on, needed only to judge cut cards against the whole ones.
    outside = None
    table_tint, table_spread = _table_tint([])
    table_palette = np.zeros((0, 3))
    if len(whole) >= 3:
        points, in_image = _outside_points(image, [c.corners for c in cards])
        outside = _outside_colours(points, in_image)
        is_whole = np.array([not card.partial for card in cards])
        table_tint, table_spread = _table_tint(list(outside[is_whole]))
        # (Every point round the whole cards: a cloth of two colours shows both.)
        table_palette = _tint(points[is_whole][in_image[is_whole]])
    # Every card is printed with the same inks: symbols that barely stand out of the paper,
    # where the other cards' symbols stand out clearly, are the texture of a cloth, unless
    # the face shows them as symbols (a pale outline seen small and blurred).
    typical_ink = float(np.median([c.ink for c in whole])) if len(whole) >= 3 else 0.0
    # (Found only where a card's proportions fit neither typical one: that is rare.)
    foreshortening = cache(lambda: _foreshortening(reference))
    kept = []
    for index, card in enumerate(cards):
        typical_area = typical(card.center)
        if card.ink < INK_RATIO * typical_ink and not (
                card.ink >= _FAINT_INK_RATIO * typical_ink and not card.partial
                and _shows_centred_symbols(image, card)):
            continue
        if card.partial and paper_tint is not None:
            if np.abs(_tint(card.paper) - paper_tint).max() > 0.04:
                continue  # a cut "card" whose paper is not the colour of the others: not a card
            # (On a many-coloured table, only a cut card found plainly and showing half a card
            # or more may lie on a tint the whole cards' surroundings barely show: slivers
            # of a pale patch of rug at the frame edge are guesses or small.)
            spread = (table_spread if not card.guess and card.area >= 0.5 * typical_area
                      else _TABLE_TINT_SPREAD)
            # (Or on a colour common round the whole cards, a cloth's dark stripe, where its
            # face shows a symbol, which the frame may cut: a blank end of a pale stripe at the
            # frame edge shows none. Bench 1133: three cards cut by the frame on a striped
            # cloth were lost, their halved symbols taken for none.)
            if outside is not None:
                lies_on = _tint(outside[index])
                if np.abs(lies_on - table_tint).max() > spread and not (
                        _common_on_table(lies_on, table_palette)
                        and _shows_symbols(image, card, cut_by_frame=True)):
                    continue  # lying on something else than the table: the card art on a box
        if card.partial:
            # (No larger than a whole card may be, either: a patch of pale table at the frame
            # edge, far from the cards, can have their proportions at twice their size.)
            # A card only grazed by the edge has its whole outline in view: a quad reaching
            # out of the frame outlines a cut card together with what lies beside it.
            grazed = (0.85 * typical_area <= card.area <= 2.0 * typical_area
                      and 0.85 * typical_aspect <= aspect(card.corners) <= 1.15 * typical_aspect
                      and _in_view(card.corners, image.shape[1], image.shape[0]))
            if grazed:
                kept.append(dataclasses.replace(card, partial=False))
            # Less than a third of a card in view cannot be read, and such slivers at the
            # frame edge are more often a printed card on a box or a patch of table: even one
            # whole card shows how large a card is, and that no piece of one reaches further
            # than its diagonal. (Too large is told only against three or more: with fewer,
            # the typical size ignores perspective.)
            elif not whole or (0.3 * typical_area <= card.area
                               and (len(whole) < 3 or card.area <= 1.3 * typical_area)
                               and _span(card.corners) <= 1.2 * _diagonal(typical_area, typical_aspect)):
                kept.append(card)
        elif len(whole) < 3:
            kept.append(card)
        elif (0.4 * typical_area <= card.area <= 2.0 * typical_area
              and (_aspect_fits(aspect(card.corners), typical_aspect)
                   or _rectified_fits(card.corners, foreshortening()))):
            kept.append(card)
        elif (len(reference) < _PLANE_QUADS and 0.4 * typical_area <= card.area <= _NEAR_CARD * typical_area
              and 0.8 * _FLAT_ASPECT <= aspect(card.corners) <= 1.25 * _FLAT_ASPECT
              and _shows_centred_symbols(image, card)):
            # Fewer than six cards give no plane of sizes, only their median, blind to
            # perspective, and a median of proportions one odd quad may set: in a close-up
            # seen steeply, the near card is three times the far one's size (close-up 9031,
            # beside a far card and a box's printed card both 1.05 long for their width). A
            # card that size, a flat card's proportions, shows itself one by its centred
            # symbols.
            kept.append(card)
    return kept


def _in_view(corners: npt.NDArray[np.float32], width: int, height: int) -> bool:
    """Whether every corner of a quad lies in a ``width`` x ``height`` image, give or take the
    border margin."""
    return bool((corners >= -BORDER_MARGIN).all() and (corners[:, 0] <= width - 1 + BORDER_MARGIN).all()
                and (corners[:, 1] <= height - 1 + BORDER_MARGIN).all())


# A flat SET card's long side over its short side (57 x 89 mm).
_FLAT_ASPECT = 1.56


def _span(corners: npt.NDArray[np.float32]) -> float:
    """The largest distance between two corners of a quad."""
    return float(max(np.linalg.norm(corners[i] - corners[j]) for i in range(4) for j in range(i + 1, 4)))


def _diagonal(area: float, card_aspect: float) -> float:
    """The diagonal of a rectangle of ``area`` whose long side is ``card_aspect`` times its short
    one: no piece of such a card reaches further (a strip of pale table running from the frame
    edge to the cards does)."""
    return math.sqrt(area * (card_aspect + 1.0 / card_aspect))


def _rectified_aspect(corners: npt.NDArray[np.float32], foreshortening: float) -> float:
    """A quad's long side over its short one with the image's vertical stretched by
    1 / ``foreshortening``: a card's own proportions where a camera tilted forward squeezed
    the table's depth by that factor."""
    rectified = corners / np.array([1.0, foreshortening], np.float32)
    value = aspect(rectified)
    return max(value, 1.0 / value)


def _foreshortening(cards: list[CardQuad]) -> float | None:
    """The factor (0.3-1) by which the table's depth looks squeezed, as the image's vertical:
    the one that gives the ``cards`` most nearly a flat card's proportions, whichever way each
    is turned. None where too few cards tell it, or none gives most of them those proportions
    closely (a camera rolled far round, outlines a little off)."""
    if len(cards) < _FORESHORTENING_CARDS:
        return None
    best, best_error = 1.0, math.inf
    for factor in _FORESHORTENING_STEPS:
        error = float(np.median([abs(math.log(_rectified_aspect(c.corners, factor) / _FLAT_ASPECT))
                                 for c in cards]))
        if error < best_error - 1e-9:
            best, best_error = factor, error
    return best if best_error < _FORESHORTENING_FIT else None


_FORESHORTENING_STEPS = tuple(1.0 - 0.05 * i for i in range(15))
_FORESHORTENING_CARDS = 5
_FORESHORTENING_FIT = 0.08  # (log: the median card within 8% of a card's proportions)


def _rectified_fits(corners: npt.NDArray[np.float32], foreshortening: float | None) -> bool:
    """Whether a quad has a card's proportions once the table's depth is unsqueezed (where the
    ``foreshortening`` is known), within a fifth either way."""
    return (foreshortening is not None
            and 0.8 * _FLAT_ASPECT <= _rectified_aspect(corners, foreshortening) <= 1.25 * _FLAT_ASPECT)


def _aspect_fits(card_aspect: float, typical_aspect: float) -> bool:
    """Whether a card's proportions fit those of the typical card, either way round.

    A tilted camera foreshortens whatever lies along the tilt by one factor f: the cards lying
    across it look 1.56 / f long for their width, those lying along it 1.56 f (or, below 1, its
    inverse). So cards turned both ways on a steeply seen table show two typical aspects; the
    other one follows from the typical one: 1.56^2 / typical, or its inverse.
    """
    turned = _FLAT_ASPECT ** 2 / typical_aspect
    turned = max(turned, 1.0 / turned)
    return any(0.7 * typical <= card_aspect <= 1.4 * typical for typical in (typical_aspect, turned))
