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

The steps, one module each, in the order the search (`search.find_cards`) calls them:

- `maps`: the binary maps in which cards show as white blobs, and the region the cards found
  leave unexplained;
- `blobs`: a quadrilateral fitted to each blob and scored as a card; blobs of touching cards
  opened or cut along their seams;
- `merge` and `consistency`: one candidate per place, and the candidates that agree with the
  typical card (`perspective`: its size at each place, the table's foreshortening);
- `neighbours`, `symbols`, `covered`: cards no map outlines, found beside a found card, round
  their printed symbols, or from the part a hand leaves in view;
- `seams` and `pieces`: two cards taken for one split, two pieces of one card joined;
- `edges`: each whole card's sides tightened onto its paper's edge.

`candidate` holds the outline found (`CardQuad`) and the geometry that relates outlines;
`paper` the tests of a card's face (paper all round, ink in the middle, centred symbols).
"""

from vision.detect.candidate import CardQuad
from vision.detect.consistency import BLANK_PATTERN
from vision.detect.search import DETECTION_SIDE, find_cards

__all__ = ["BLANK_PATTERN", "DETECTION_SIDE", "CardQuad", "find_cards"]
