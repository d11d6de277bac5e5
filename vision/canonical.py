"""The canonical card: every card found in an image is warped to this one portrait size.

A canonical card is a BGR uint8 array of shape (CARD_HEIGHT, CARD_WIDTH, 3): the card face
filling the whole array, portrait (the short edges at top and bottom), so its symbols are stacked
vertically. The card readers only ever see this view, whatever the camera, so a model trained
on one source of cards applies to all.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

# A real SET card is 57 x 89 mm (ratio 1.56); the size is small enough to warp 21 cards per
# frame in well under a millisecond each, and large enough to keep fine stripes visible.
CARD_WIDTH = 160
CARD_HEIGHT = 250
CARD_ASPECT = CARD_HEIGHT / CARD_WIDTH

_CANONICAL_CORNERS = np.array(
    [[0, 0], [CARD_WIDTH - 1, 0], [CARD_WIDTH - 1, CARD_HEIGHT - 1], [0, CARD_HEIGHT - 1]],
    dtype=np.float32,
)


def warp_card(image: npt.NDArray[np.uint8], corners: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Warp the card at ``corners`` of ``image`` to the canonical view.

    ``image`` is BGR uint8 (H, W, 3); ``corners`` is (4, 2) float (x, y) pixels, clockwise from
    the card's top-left in portrait orientation. Returns (CARD_HEIGHT, CARD_WIDTH, 3) uint8.
    """
    quad = np.asarray(corners, dtype=np.float32).reshape(4, 2)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be BGR uint8 (H, W, 3), got {image.dtype} {image.shape}")
    matrix = cv2.getPerspectiveTransform(quad, _CANONICAL_CORNERS)
    # (Bilinear: the warps have no area averaging, their INTER_AREA is INTER_LINEAR, OpenCV
    # issue 21060. Averaging a large card down before the warp was measured and not kept:
    # `bench/HISTORY.md`, 2026-12-07 from 21:41.)
    return cv2.warpPerspective(image, matrix, (CARD_WIDTH, CARD_HEIGHT), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def resize_crop(crop: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Bring an already cropped card image (any size, portrait or landscape) to canonical size."""
    if crop.ndim != 3 or crop.shape[2] != 3:
        raise ValueError(f"crop must be BGR (H, W, 3), got shape {crop.shape}")
    if crop.shape[1] > crop.shape[0]:
        crop = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(crop, (CARD_WIDTH, CARD_HEIGHT), interpolation=cv2.INTER_AREA)


def is_sideways(card: npt.NDArray[np.uint8]) -> bool:
    """Whether a canonical card was warped a quarter turn off.

    Seen steeply from the side, a card's long sides can look shorter than its short sides,
    so the detector may take the wrong pair of sides for the top and bottom. The printed symbols
    settle it: every SET symbol is about twice as wide as it is tall across the card, so in a
    correct warp the ink blobs are wide; a quarter turn off, they come out tall and thin.
    ``card``: canonical BGR uint8 (CARD_HEIGHT, CARD_WIDTH, 3). The card reader gets the same
    answer from the ink blobs it segments anyway (``CardReading.sideways``); this is that check
    on its own.
    """
    from vision.features import looks_sideways, segment_ink  # (features builds on this module)

    return looks_sideways(segment_ink(card))
