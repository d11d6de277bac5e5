"""The search for cards (`find_cards`): the maps in search order, the candidates of each step
settled into cards, the costlier steps only where cards may still be missing, and a second look
at full resolution where the cards are small.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Callable, Iterable

import cv2
import numpy as np
import numpy.typing as npt

from vision.canonical import warp_card
from vision.detect.blobs import quads_in_mask
from vision.detect.candidate import (CardQuad, Region, holds_several, iou_estimate, lies_inside, overlap_pixels,
                                     overlaps, plain_unless_few, rescaled, size_mismatch)
from vision.detect.consistency import (BLANK_PATTERN, judged_by_symbols, keep_consistent, without_blank_pattern,
                                       without_table_patches)
from vision.detect.covered import covered_cards
from vision.detect.edges import tightened_cards
from vision.detect.maps import Maps, paper_colour_mask, unexplained_region
from vision.detect.merge import merge_overlapping
from vision.detect.neighbours import grid_neighbours
from vision.detect.paper import card_shows_symbols, shows_centred_symbols
from vision.detect.perspective import typical_area_model
from vision.detect.pieces import pieces_joined
from vision.detect.seams import SeamSplitter, doubles_halved
from vision.detect.symbols import cards_from_symbols, cards_from_symbols_alone
from vision.features import segment_inks, shows_symbols
from vision.quad import grow_quad, short_side


# Work on at most this many pixels on the long side: card outlines need no more, and it bounds
# the time per frame.
DETECTION_SIDE = 720


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
                overlaps(card, lead) for lead in leading)
                and card_shows_symbols(image, card)]
    # (On the final cards only: partway, a search has found fewer than three whole cards
    # where it ends with more, and dropping its patches then lost cards found beside them.)
    return without_table_patches(cards, image)


def _better_outlines(leading: list[CardQuad], other: list[CardQuad]) -> list[CardQuad]:
    """The ``leading`` look's cards, each guess among them replaced by the one card of the
    ``other`` look it overlaps where that card is whole and has far better paper all round (its
    score): the same card outlined better (bench 1022: in a grid of touching cards, the look at
    full resolution laid a neighbour's outline half a card off, where the first look's outline
    was right; the card was lost and a false card reported); or by a card the other look found
    plainly in a map, with paper as good all round and not far smaller: the guess was laid there
    from a neighbour's outline (bench 1106: on a striped cloth, a neighbour's outline laid half
    over a larger, nearer card the look at full resolution outlined plainly). (Far smaller: half
    of a card, bench 1083.)"""
    result = []
    for lead in leading:
        if lead.guess and not lead.partial:
            overlapping = [card for card in other if overlaps(card, lead)]
            # (Outlines that agree, IoU 0.8 or more, are left as the leading look has them.)
            if (len(overlapping) == 1 and not overlapping[0].partial
                    and (overlapping[0].score > lead.score + _BETTER_SCORE
                         or (not overlapping[0].guess and overlapping[0].score >= lead.score
                             and overlapping[0].area >= _NOT_FAR_SMALLER * lead.area))
                    and iou_estimate(overlapping[0], lead) < 0.8):
                lead = overlapping[0]
        result.append(lead)
    return result


# A card of one look replaces the other's guess for the place with a paper score this much higher.
_BETTER_SCORE = 0.15
# A plain card of one look replaces the other's guess at least this fraction of its area.
_NOT_FAR_SMALLER = 0.8


def _find_at_scale(image: npt.NDArray[np.uint8], scale: float, from_symbols_alone: bool = True
                   ) -> list[CardQuad]:
    # Shrinking a little (a webcam frame), bilinear is 3x cheaper than pixel-area averaging
    # and as good for outlines; shrinking a lot, only averaging keeps noise and fine stripes
    # from aliasing into the maps.
    interpolation = cv2.INTER_LINEAR if scale >= 0.6 else cv2.INTER_AREA
    small = image if scale == 1.0 else cv2.resize(image, None, fx=scale, fy=scale,
                                                  interpolation=interpolation)
    maps = Maps(small)
    seams = SeamSplitter(maps)
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
        merged = merge_overlapping(seams.split(pool), small.shape[0] * small.shape[1], small)
        kept = keep_consistent(merged, small)
        return kept

    def finished() -> list[CardQuad]:
        if cut_candidates:
            settled(final=True)
        final = without_blank_pattern(judged_by_symbols(merged, kept, small), small, pattern_seen)
        final = pieces_joined(doubles_halved(final, small), small)
        return rescaled(tightened_cards(final, maps.whiteness, small), scale)

    region: Region | None = None  # where the later steps look; None: everywhere
    pattern_seen = False  # whether the table's pale cells were outlined as cards
    for index, (mask, inset, guess) in enumerate(maps.candidate_masks()):
        if not guess:
            add(quads_in_mask(mask, maps, candidates, inset, region=region))
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
            typical = cache(lambda: typical_area_model(plain_unless_few(whole)) if whole else None)
            add(dataclasses.replace(quad, guess=True) for quad in
                quads_in_mask(mask, maps, candidates, inset, smallest_guess, region)
                if not any(lies_inside(quad, other) and not _card_of_block(quad, other, typical(), small)
                           for other in candidates))
        if index == 1:
            # The costlier maps and second looks are only needed where the cards the
            # whiteness maps found leave card-sized paper-like blobs unexplained; on many
            # tables that is nowhere.
            cards = settled()
            explained, region = unexplained_region(
                cards, [maps.global_white, maps.paper_like], maps.whiteness, [maps.half_local_white])
            if explained:
                return finished()
    cards = settled()
    # A table as pale as the cards' paper (pale stripes) may outline no card in any map: then
    # the cards are looked for from their symbols alone.
    # So may one whose pale cells the maps outline as cards: those show no symbols.
    pattern = _pattern_unless_three_show_symbols(cards, small) if from_symbols_alone else []
    if from_symbols_alone and sum(not card.partial for card in cards) - len(pattern) < 3:
        alone = cards_from_symbols_alone([card for card in cards if not any(card is cell for cell in pattern)],
                                         small, maps)
        if alone:
            # (Many cells at once: a blank quad or two may be blocks of touching cards.)
            pattern_seen = len(pattern) >= BLANK_PATTERN
            # (The cells give way to the cards: a pattern's cells are no candidates at all.
            # Only the cells themselves: a cell outlined half over a card overlaps the card's
            # own candidate, dev 5278.)
            candidates[:] = [quad for quad in candidates if not holds_several(quad, alone)
                             and not any(iou_estimate(quad, cell) > 0.9 for cell in pattern)]
            candidates.extend(alone)
            cards = settled()
    # The cards found so far show what this deck's paper looks like under this light: a map of
    # that colour separates the other cards from a pale table far better than whiteness does.
    paper_mask = paper_colour_mask(small, cards, region)
    if paper_mask is not None:
        before = len(candidates)
        add(dataclasses.replace(quad, guess=True) for quad in
            quads_in_mask(paper_mask, maps, candidates, 0.5, region=region))
        if len(candidates) > before:
            cards = settled()
    paper_maps = [maps.global_white, maps.paper_like,
                  maps.local_white if paper_mask is None else paper_mask]
    # Cards found are known paper: taking them out of the whiteness maps leaves the cards
    # they touched (in a grid, a whole row or column) as smaller blobs, easier to split.
    if cards:
        before = len(candidates)
        smallest = 0.3 * min(card.area for card in cards)
        free = _outside_cards(cards, small.shape[:2])
        for mask in paper_maps:  # the whiteness, paper-likeness and paper-colour (or local) maps
            residual = cv2.bitwise_and(mask, free)
            add(dataclasses.replace(quad, guess=True) for quad in
                quads_in_mask(residual, maps, candidates, 0.5, smallest, region=region))
        if len(candidates) > before:
            cards = settled()
        # Cards laid edge to edge show no seam at all in places: their neighbours are found by
        # laying a found card's outline next to it, where there is paper.
        paper = cv2.bitwise_or(cv2.bitwise_or(paper_maps[0], paper_maps[1]), paper_maps[2])
        neighbours = grid_neighbours(cards, small, paper, maps.edges, region)
        if neighbours:
            candidates.extend(neighbours)
            cards = settled()
        # Cards that no map outlines, found from their symbols.
        from_symbols = cards_from_symbols(cards, small, maps)
        if from_symbols:
            candidates.extend(from_symbols)
            cards = settled()
        # A cable or pen across a card cuts its paper in two pieces, neither card-like: with
        # thin dark lines bridged, the card is whole again. Such a card is looked for only
        # where no card is kept, and its pieces give way to it. The cards found are taken out
        # of the bridged maps first: bridging also joins the card to the cards it touches
        # (bench 1063, 1082: a card crossed by a cable beside its neighbours). (Not in the
        # paper-colour or local map, where bridging joins a checked cloth's pale cells into
        # card-sized patches; and at the frame edge it joins the pale table round a cut card
        # into card-like patches, so cut cards are not looked for: a cut card lost is not read
        # anyway.)
        whole = [card for card in cards if not card.partial]
        typical = typical_area_model(plain_unless_few(whole)) if whole else None
        free = _outside_cards(cards, small.shape[:2])
        bridged = [dataclasses.replace(quad, guess=True) for mask in (maps.global_white, maps.paper_like)
                   for quad in quads_in_mask(cv2.bitwise_and(_bridged(mask, whole), free), maps, [], 0.5,
                                             smallest, region)
                   if not quad.partial and typical is not None
                   and size_mismatch(quad, typical(quad.center)) < _BRIDGED_SIZE
                   and not any(overlaps(quad, card) for card in cards)]
        if bridged:
            # (Its pieces: smaller parts of it, not two cards a bridge joined.)
            candidates[:] = [quad for quad in candidates if not any(
                quad.area < 0.75 * joined.area and overlap_pixels(quad, joined)[0] > 0.8 * quad.area
                for joined in bridged)]
            candidates.extend(bridged)
            cards = settled()
        # Cards partly under a hand, completed from the paper in view (in a close-up of a
        # card or two, with no paper-colour map, from the whiteness maps).
        covered = covered_cards(cards, small, [mask for mask in (paper_mask, maps.global_white, maps.local_white)
                                               if mask is not None], region)
        if covered:
            candidates.extend(covered)
            cards = settled()
    return finished()


def _pattern_unless_three_show_symbols(cards: list[CardQuad], image: npt.NDArray[np.uint8]
                                       ) -> list[CardQuad]:
    """The whole ``cards`` whose faces show no printed symbol, where fewer than three show
    one; else none.

    Then those are a pattern of the table, not cards: on a checked cloth whose pale cells are
    as bright as the paper, the maps outline cells (as many as 18 in fresh 6105), so three
    cards or more seemed found and the cards were not looked for from their symbols; and the
    cells, setting the typical card, hid the cards that other steps found. (The plain cards
    are looked at first, three at once: on most tables those show symbols, and that is all the
    look costs, about 1.5 ms.)"""
    whole = sorted((card for card in cards if not card.partial), key=lambda card: (card.guess, -card.score))
    shown = [shows_symbols(face) for face in segment_inks([warp_card(image, card.corners) for card in whole[:3]])]
    if sum(shown) < 3 and len(whole) > 3:
        shown += [shows_symbols(face) for face in segment_inks([warp_card(image, card.corners)
                                                                 for card in whole[3:]])]
    return [] if sum(shown) >= 3 else [card for card, showing in zip(whole, shown) if not showing]


def _outside_cards(cards: list[CardQuad], shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    """A uint8 0/255 map of ``shape`` (H, W), 255 outside the ``cards`` (each grown by 1.5 px)."""
    outside = np.full(shape[:2], 255, np.uint8)
    for card in cards:
        cv2.fillConvexPoly(outside, np.round(grow_quad(card.corners, 1.5)).astype(np.int32), 0)
    return outside


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
            and size_mismatch(quad, typical(quad.center)) < _BRIDGED_SIZE
            and shows_centred_symbols(image, quad))


# A candidate at least this many times the typical card's area holds two cards or more.
_BLOCK_SIZE = 1.6
