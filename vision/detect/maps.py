"""The binary maps in which cards show as white blobs (`Maps`: whiteness, paper-likeness, local
contrast, edges), the map of the found cards' own paper colour (`paper_colour_mask`), and the
region where the cards found leave card-sized paper unexplained (`unexplained_region`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Iterator, Sequence

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect.candidate import CardQuad, Region, SQUARE3, SQUARE5, quick_percentile
from vision.detect.paper import SHADOWED_PAPER
from vision.features import darkest_channel
from vision.quad import grow_quad


def unexplained_region(cards: list[CardQuad], paper_maps: list[npt.NDArray[np.uint8]],
                       whiteness: npt.NDArray[np.uint8] | None = None,
                       half_maps: Sequence[npt.NDArray[np.uint8]] = ()
                       ) -> tuple[bool, Region | None]:
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
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, SQUARE5)
    half = (width // 2, height // 2)
    paper = cv2.resize(paper, half, interpolation=cv2.INTER_NEAREST)
    if half_maps:
        more = half_maps[0].copy()
        for other in half_maps[1:]:
            cv2.bitwise_or(more, other, dst=more)
        for card in cards:
            cv2.fillConvexPoly(more, np.round(grow_quad(card.corners / 2, 2.0)).astype(np.int32), 0)
        cv2.bitwise_or(paper, cv2.morphologyEx(more, cv2.MORPH_OPEN, SQUARE3), dst=paper)
    smallest = 0.3 * min((c.area for c in whole), default=0.0015 * height * width / 0.3) / 4
    count, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=8)
    card_sized = stats[:, cv2.CC_STAT_AREA] >= smallest
    card_sized[0] = False  # label 0 is the background
    if whiteness is not None and whole and card_sized.any():
        whiteness = cv2.resize(whiteness, half, interpolation=cv2.INTER_NEAREST)
        darkest = SHADOWED_PAPER * float(np.median([min(c.paper) for c in whole]))
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
    return False, Region.of(region)


def paper_colour_mask(image: npt.NDArray[np.uint8], cards: list[CardQuad],
                      region: Region | None = None) -> npt.NDArray[np.uint8] | None:
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
                                          cv2.MORPH_OPEN, SQUARE3)
    return mask


_LIGHTNESS_WEIGHT = 0.25


class Maps:
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
        return cv2.bitwise_not(cv2.dilate(self.edges, SQUARE3))

    @cached_property
    def enclosed_by_smooth_edges(self) -> npt.NDArray[np.uint8]:
        """Regions enclosed by the edges of the median-smoothed equalised whiteness: on a
        grainy or patterned table (a rug, cloth) the equalisation lifts the grain into edges
        everywhere, which cut the cards apart and join them to the table; a median filter keeps
        the cards' straight outlines and drops the grain."""
        edges = cv2.Canny(median_blur(self.equalised, 7), 30, 90)
        return cv2.bitwise_not(cv2.dilate(edges, SQUARE3))

    @cached_property
    def enclosed_by_colour_edges(self) -> npt.NDArray[np.uint8]:
        """Regions enclosed by the edges of the median-smoothed image's lightness and colour
        (Lab): paper and a pale patterned table (a rug's pale patches under tinted light) can
        be equally white, so that no whiteness map nor its edges part them, yet differ in hue.
        (A 7-pixel median costs about 25 ms on a 720 x 540 colour image on one core, half that
        on two (`median_blur`), but the cheaper smoothings tried, two 5-pixel medians or one at
        half size, found fewer cards and more false ones.)"""
        lab = cv2.cvtColor(median_blur(self.image, 7), cv2.COLOR_BGR2LAB)
        lightness, green_red, blue_yellow = cv2.split(lab)
        edges = cv2.Canny(lightness, 30, 90)
        # (Lab's colour axes span about a third of its lightness's range over everyday colours.)
        cv2.bitwise_or(edges, cv2.Canny(green_red, 15, 45), dst=edges)
        cv2.bitwise_or(edges, cv2.Canny(blue_yellow, 15, 45), dst=edges)
        return cv2.bitwise_not(cv2.dilate(edges, SQUARE3))

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
        contours, _ = cv2.findContours(cv2.dilate(edges, SQUARE3), cv2.RETR_EXTERNAL,
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


def median_blur(image: npt.NDArray[np.uint8], size: int) -> npt.NDArray[np.uint8]:
    """`cv2.medianBlur` of ``image`` (uint8, one or three channels) with an odd ``size`` over 5,
    the same pixel for pixel, its top and bottom halves filtered at once where OpenCV may use
    more than one thread: OpenCV runs such a median (its histogram algorithm; 3 and 5 take a
    sorting network 20x quicker) on one core, about 25 ms for a 720 x 540 colour image. Each
    half takes ``size // 2`` rows of the other with it, so every row kept saw the same
    neighbours as in one pass (the image's own edges are replicated either way)."""
    height = image.shape[0]
    reach = size // 2
    if cv2.getNumThreads() < 2 or height < 8 * size:
        return cv2.medianBlur(image, size)
    middle = height // 2
    try:
        top = _median_pool().submit(cv2.medianBlur, image[:middle + reach], size)
    except RuntimeError:  # the interpreter is shutting down (a reading thread's last frame)
        return cv2.medianBlur(image, size)
    bottom = cv2.medianBlur(image[middle - reach:], size)
    return np.concatenate([top.result()[:middle], bottom[reach:]])


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _median_pool() -> ThreadPoolExecutor:
    """One helper thread per process (a pool made before a fork has no thread in the child)."""
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="median")
    return _POOLS[pid]


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
    bright = brightness >= quick_percentile(brightness, 0.97)
    illuminant = np.maximum([float(channel[bright].mean()) for channel in sample], 1.0)
    gains = illuminant.max() / illuminant
    blue, green, red = (cv2.convertScaleAbs(channel, alpha=float(gain))
                        for channel, gain in zip(channels, gains))
    low = cv2.min(cv2.min(blue, green), red)
    high = cv2.max(cv2.max(blue, green), red)
    return cv2.addWeighted(low, 2.0, high, -1.0, 0.0)  # saturates to 0..255
