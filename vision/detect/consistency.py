"""Which candidates are cards: those consistent with the typical card (size, proportions, ink, the
table round a cut card: `keep_consistent`), judged again by the cards that show symbols
(`judged_by_symbols`), without a table's blank pattern (`without_blank_pattern`) or, where few
cards are found, the patches of table taken for cards (`without_table_patches`).
"""

from __future__ import annotations

import dataclasses
from functools import cache

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import (CardQuad, FLAT_ASPECT, GREY_PAPER, chromaticity, diagonal, lies_in_view,
                                     lies_inside, off_grey, plain_unless_few, span)
from vision.detect.paper import FAINT_INK_RATIO, INK_RATIO, card_shows_symbols, shows_centred_symbols
from vision.detect.perspective import (NEAR_CARD, PLANE_QUADS, aspect_fits, rectified_fits,
                                       table_foreshortening, table_rectification, to_plane, typical_area_model)
from vision.quad import NEXT, aspect


def without_table_patches(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
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
    kept = [card for card in cards if off_grey(card.paper) <= GREY_PAPER]
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
    tints = np.array([chromaticity(colour) for colour in colours])
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


def keep_consistent(cards: list[CardQuad], image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """Drop candidates far off the typical card size (a box, a sheet of paper, a symbol blob).

    A card touching the image edge whose size and proportions are those of a whole card is only
    grazed by the edge: it is kept as a whole card. Only a card clearly cut stays partial.
    """
    cards = _without_small_guesses(cards)
    # Guesses must fit the cards found plainly, not set the standard themselves (a cloth of
    # card-white squares would otherwise make the squares the typical card).
    return _consistent_with(cards, plain_unless_few([c for c in cards if not c.partial]), image)


def _seen_from_above(reference: list[CardQuad]) -> tuple[npt.NDArray[np.float64] | None, float]:
    """The homography from the image to the table seen from above that the ``reference`` cards
    give (`table_rectification`; None if none), and their median area there."""
    rectification = table_rectification(reference)
    if rectification is None:
        return None, 0.0
    return rectification, float(np.median([_area_from_above(c, rectification) for c in reference]))


def _area_from_above(card: CardQuad, rectification: npt.NDArray[np.float64]) -> float:
    return abs(cv2.contourArea(to_plane(rectification, card.corners).astype(np.float32)))


def _flat_card_from_above(card: CardQuad, rectification: npt.NDArray[np.float64] | None,
                          typical_area: float) -> bool:
    """Whether ``card``, seen from above (by the table's ``rectification``), has a flat card's
    proportions and about the ``typical_area`` there."""
    if rectification is None:
        return False
    flat = to_plane(rectification, card.corners).astype(np.float32)
    flat_aspect = aspect(flat)
    return (_FLAT_ASPECT_FIT[0] <= max(flat_aspect, 1.0 / flat_aspect) / FLAT_ASPECT <= _FLAT_ASPECT_FIT[1]
            and _FLAT_AREA_FIT[0] <= abs(cv2.contourArea(flat)) / typical_area <= _FLAT_AREA_FIT[1])


# Seen from above, a card is within this of a flat card's proportions, and of the median area.
_FLAT_ASPECT_FIT = (0.85, 1.18)
_FLAT_AREA_FIT = (0.7, 1.4)


def _without_small_guesses(cards: list[CardQuad]) -> list[CardQuad]:
    """``cards`` without the guesses far smaller than every card found plainly: those are patches
    of the table (a cell of a checked cloth beside a close-up's card), as in the search
    (`_find_at_scale`)."""
    plain_areas = [c.area for c in cards if not c.partial and not c.guess]
    if not plain_areas:
        return cards
    return [c for c in cards if not (c.guess and not c.partial and c.area < 0.3 * min(plain_areas))]


def without_blank_pattern(cards: list[CardQuad], image: npt.NDArray[np.uint8],
                          pattern_seen: bool = False) -> list[CardQuad]:
    """``cards`` without the whole guesses that show no symbol where those are many beside
    three or more cards that show symbols: a pattern of the table (the pale cells of a checked
    cloth as large as the cards, or larger).

    A card may show no symbol for many reasons (a hand over it, an outline a little off, small
    and dim): only many blank ones at once are a pattern. (Where fewer than three cards show
    symbols, the reader drops the blank ones: `vision.recognize`, which looks at every face.)
    Where the search has already seen the table's cells outlined as cards (``pattern_seen``),
    any blank guess is one more of them, and so is a blank quad the frame cuts.
    """
    threshold = 1 if pattern_seen else BLANK_PATTERN
    guesses = [c for c in cards if (c.guess and not c.partial)
               or (pattern_seen and c.partial and not card_shows_symbols(image, c, cut_by_frame=True))]
    if len(guesses) < threshold:
        return cards
    blank = {id(c) for c in guesses if not card_shows_symbols(image, c, cut_by_frame=c.partial)}
    if len(blank) < threshold:
        return cards
    # (A look at a face costs a warp: the plain cards are looked at until three show symbols.)
    showing = len(guesses) - len(blank)
    for card in (c for c in cards if not c.partial and not c.guess):
        if showing >= 3:
            break
        showing += card_shows_symbols(image, card)
    if showing < 3:
        return cards
    return [c for c in cards if id(c) not in blank]


# So many blank cards at once are a pattern of the table, not cards seen badly: on the 840
# bench and dev scenes, the real cards guessed at that show no symbol number three at most in a
# scene (occluded by a hand, or outlined half a card off in a grid); four scenes had four
# blank guesses or more beside three cards with symbols, 27 in all, 4 of them real cards;
# three had four blank cards or more beside fewer, 21 in all, none real.
BLANK_PATTERN = 4


def judged_by_symbols(cards: list[CardQuad], kept: list[CardQuad],
                      image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """``kept`` (`keep_consistent` of ``cards``), or where that dropped whole cards, the cards
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
    showing = [c for c in whole if card_shows_symbols(image, c)]
    # A card or two may show none (small and blurred, or a hand over it): only blank candidates
    # in numbers, a third of them or more, are a pattern of the table.
    if not showing or 3 * (len(whole) - len(showing)) < len(whole):
        return kept
    # (A quad traced round a symbol, or round a piece of a card, shows symbols too; it lies
    # inside its card.)
    reference = [c for c in showing if not any(lies_inside(c, other) for other in showing)]
    judged = _consistent_with(cards, plain_unless_few(_without_small_guesses(reference)), image)
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
        return [c for c in judged if id(c) in showing_ids or (c.partial and card_shows_symbols(image, c))]
    return judged


def _consistent_with(cards: list[CardQuad], reference: list[CardQuad],
                     image: npt.NDArray[np.uint8]) -> list[CardQuad]:
    """The ``cards`` consistent in size, proportions, paper and ink with the typical card of the
    ``reference`` whole cards (see `keep_consistent`)."""
    whole = [c for c in cards if not c.partial]
    if whole:
        typical = typical_area_model(reference)
        typical_aspect = float(np.median([aspect(c.corners) for c in reference]))
    else:
        largest = max((c.area for c in cards), default=0.0)
        typical, typical_aspect = (lambda center: largest), FLAT_ASPECT
    # The tint of this deck's paper under this light, which a cut card must share: even one or
    # two cards found plainly show it (a close-up, beside a patch of table at the frame edge).
    plain_whole = [c for c in whole if not c.guess]
    paper_tint = (np.median([chromaticity(c.paper) for c in whole], axis=0) if len(whole) >= 3 else
                  np.median([chromaticity(c.paper) for c in plain_whole], axis=0) if plain_whole else None)
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
        table_palette = chromaticity(points[is_whole][in_image[is_whole]])
    # Every card is printed with the same inks: symbols that barely stand out of the paper,
    # where the other cards' symbols stand out clearly, are the texture of a cloth, unless
    # the face shows them as symbols (a pale outline seen small and blurred).
    typical_ink = float(np.median([c.ink for c in whole])) if len(whole) >= 3 else 0.0
    # A lamp's glare over a card lightens its paper and washes its symbols out alike: a card
    # whose paper is far brighter than the others' is judged by its outline, not its ink, and
    # the recogniser flags its reading (`vision.recognize._washed_out`). (Bench 1131: a card
    # under glare on dim felt, its paper 1.3 times the others' and its ink 0.3 of theirs, was
    # dropped; over the five sets of scenes, it is the only card this keeps.)
    typical_paper = float(np.median([np.mean(c.paper) for c in whole])) if len(whole) >= 3 else 0.0
    # (Found only where a card's proportions fit neither typical one: that is rare.)
    foreshortening = cache(lambda: table_foreshortening(reference))
    from_above = cache(lambda: _seen_from_above(reference))
    kept = []
    for index, card in enumerate(cards):
        typical_area = typical(card.center)
        under_glare = (not card.partial and typical_paper > 0
                       and float(np.mean(card.paper)) >= _GLARE_PAPER * typical_paper)
        if card.ink < INK_RATIO * typical_ink and not under_glare and not (
                card.ink >= FAINT_INK_RATIO * typical_ink and not card.partial
                and shows_centred_symbols(image, card)):
            continue
        if card.partial and paper_tint is not None:
            if np.abs(chromaticity(card.paper) - paper_tint).max() > 0.04:
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
                lies_on = chromaticity(outside[index])
                if np.abs(lies_on - table_tint).max() > spread and not (
                        _common_on_table(lies_on, table_palette)
                        and card_shows_symbols(image, card, cut_by_frame=True)):
                    continue  # lying on something else than the table: the card art on a box
        if card.partial:
            # (No larger than a whole card may be, either: a patch of pale table at the frame
            # edge, far from the cards, can have their proportions at twice their size.)
            # A card only grazed by the edge has its whole outline in view: a quad reaching
            # out of the frame outlines a cut card together with what lies beside it.
            grazed = (0.85 * typical_area <= card.area <= 2.0 * typical_area
                      and 0.85 * typical_aspect <= aspect(card.corners) <= 1.15 * typical_aspect
                      and lies_in_view(card.corners, image.shape[1], image.shape[0]))
            if grazed:
                kept.append(dataclasses.replace(card, partial=False))
            # Less than a third of a card in view cannot be read, and such slivers at the
            # frame edge are more often a printed card on a box or a patch of table: even one
            # whole card shows how large a card is, and that no piece of one reaches further
            # than its diagonal. (Too large is told only against three or more: with fewer,
            # the typical size ignores perspective.)
            elif not whole or (0.3 * typical_area <= card.area
                               and (len(whole) < 3 or card.area <= 1.3 * typical_area)
                               and span(card.corners) <= 1.2 * diagonal(typical_area, typical_aspect)):
                kept.append(card)
            elif (3 <= len(whole) and len(reference) < PLANE_QUADS
                  and card.area <= 1.3 * NEAR_CARD * typical_area
                  and span(card.corners) <= 1.2 * diagonal(NEAR_CARD * typical_area, typical_aspect)
                  and card_shows_symbols(image, card, cut_by_frame=True)):
                # Fewer than six cards give no plane of sizes, only their median, blind to
                # perspective: a near card the frame cuts (a photo's bottom edge, seen
                # steeply) is up to three times the far ones' size (bench 1076, new 14139). A
                # cut card that size shows itself one by its symbols, as a whole one does.
                kept.append(card)
        elif len(whole) < 3:
            kept.append(card)
        elif (0.4 * typical_area <= card.area <= 2.0 * typical_area
              and (aspect_fits(aspect(card.corners), typical_aspect)
                   or rectified_fits(card.corners, foreshortening()))):
            kept.append(card)
        elif (0.4 * typical_area <= card.area <= 2.0 * typical_area and len(reference) >= PLANE_QUADS
              and shows_centred_symbols(image, card) and _flat_card_from_above(card, *from_above())):
            # Seen steeply, a card lying along the view looks nearly square and one across it
            # long and thin, the more so the farther it lies, and one typical proportion for
            # the whole table fits neither: seen from above, it is a card (bench 1016, a
            # striped cloth: a far card outlined right, as long as it is wide, where the
            # typical card is 1.62 long).
            kept.append(card)
        elif (len(reference) < PLANE_QUADS and 0.4 * typical_area <= card.area <= NEAR_CARD * typical_area
              and 0.8 * FLAT_ASPECT <= aspect(card.corners) <= 1.25 * FLAT_ASPECT
              and shows_centred_symbols(image, card)):
            # Fewer than six cards give no plane of sizes, only their median, blind to
            # perspective, and a median of proportions one odd quad may set: in a close-up
            # seen steeply, the near card is three times the far one's size (close-up 9031,
            # beside a far card and a box's printed card both 1.05 long for their width). A
            # card that size, a flat card's proportions, shows itself one by its centred
            # symbols.
            kept.append(card)
    return kept


# A card whose paper is this much brighter than the median card's lies under a lamp's glare.
_GLARE_PAPER = 1.25
