"""Generated webcam clips with per-frame ground truth: a steady table, a hand takes three cards
(a SET) and deals three new ones.

The clip stands in for a webcam in tests of live mode and the referee. Timeline, as fractions of
the clip: 0-15% steady; 15-50% a hand reaches in from the bottom edge, picks up the three cards
of a SET one by one and carries them away; 50-60% steady with three gaps; 60-90% the hand comes
back with three new cards and lays one in each gap; then steady with a full table.

Each frame's truth is the scene truth (see `vision.scene`) plus ``frame``, ``time`` (seconds),
``phase`` ("steady", "taking", "dealing") and ``events`` (what happened at this frame, e.g.
``{"took": ["2 red solid oval"]}``). Cards carried by the hand are listed with ``"in_hand": true``;
the cards lying on the table are the others.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from core.cards import Card, find_sets, full_deck
from vision.props import skin_colour
from vision.scene import PlacedCard, build_scene, draw_scene

# Phase boundaries as fractions of the clip.
_TAKE = (0.15, 0.50)
_DEAL = (0.60, 0.90)


def _ease(t: float) -> float:
    """Smooth start and stop of a hand movement (t in 0..1)."""
    t = min(max(t, 0.0), 1.0)
    return t * t * (3 - 2 * t)


class _HandPath:
    """A hand that goes from an entry point outside the frame through ``stops`` and back out,
    pausing at each stop."""

    def __init__(self, entry: npt.NDArray[np.float64], stops: list[npt.NDArray[np.float64]]):
        self.points = [entry] + stops + [entry]
        self.n_moves = len(self.points) - 1
        self.dwell = 0.35  # share of each stop's time slot spent resting

    def position(self, t: float) -> tuple[npt.NDArray[np.float64], int]:
        """The fingertip (x, y) at ``t`` in 0..1, and how many stops the hand has reached so far
        (so that a stop is never missed, however few frames the clip has)."""
        if t >= 1.0:
            return self.points[-1].copy(), self.n_moves
        slot = max(t, 0.0) * self.n_moves
        i = int(slot)
        frac = slot - i
        a, b = self.points[i], self.points[i + 1]
        move = frac / (1 - self.dwell) if i < self.n_moves - 1 else frac
        if move >= 1.0:
            return b.copy(), i + 1  # resting at a stop
        return a + (b - a) * _ease(move), i


def _held_card(card: PlacedCard, tip_plane: npt.NDArray[np.float64], k: int) -> PlacedCard:
    """``card`` moved to sit under the fingertips, its far half showing (stacked cards fan a
    little). The arm comes from the bottom of the image, so "far" is up the table."""
    center = card.plane.mean(axis=0)
    angle = 0.08 * (k - 1)
    c, s = np.cos(angle), np.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    plane = (card.plane - center) @ rot.T + tip_plane + np.array([3.0 * k, -25.0 - 3.0 * k])
    return PlacedCard(card.card, plane, card.style, lift=2.0 + k)


def generate_clip(seed: int, seconds: float = 8.0, fps: float = 15.0, size: tuple[int, int] = (960, 720), *,
                  n_cards: int = 12, table: str | None = None,
                  effects: float = 1.0) -> Iterator[tuple[npt.NDArray[np.uint8], dict[str, Any]]]:
    """Yield ``(frame, truth)`` for each frame of a take-three, deal-three clip.

    ``frame`` is BGR uint8 (height, width, 3) with ``size`` = (width, height); the clip has
    round(seconds * fps) frames. The camera, table and light stay fixed, as with a webcam;
    only the sensor noise changes between frames. ``effects`` (0..1) scales light, blur and
    noise as in `vision.scene.generate_scene`. Reproducible from ``seed``.
    """
    if not 3 <= n_cards <= 21:
        raise ValueError(f"a clip needs 3..21 cards, got {n_cards}")
    if not (seconds > 0 and fps > 0):
        raise ValueError(f"seconds and fps must be positive, got {seconds} and {fps}")
    n_frames = max(1, int(round(seconds * fps)))
    rng = np.random.default_rng([seed, 7])
    spec = build_scene(seed, n_cards, size, table=table, layout="grid", deal="sets",
                       tilt=float(rng.uniform(0, 30)), partial=False, overlap=False, props_allowed=False,
                       effects=effects)
    on_table = [p.card for p in spec.cards]
    taken = list(find_sets(on_table)[0])
    rng.shuffle(taken)
    taken_cards = [spec.cards[i] for i in taken]
    slots = [p.plane for p in taken_cards]
    remaining = [c for c in full_deck() if c not in on_table]
    new_cards = [remaining[i] for i in rng.choice(len(remaining), 3, replace=False)]
    style = spec.cards[0].style
    dealt = [PlacedCard(card, slot, style) for card, slot in zip(new_cards, slots)]

    width, height = spec.width, spec.height
    entry = np.array([rng.uniform(0.3, 0.7) * width, height + spec.card_px * 2.5])
    centers = [spec.to_image(slot).mean(axis=0) for slot in slots]
    take_path = _HandPath(entry, centers)
    deal_path = _HandPath(entry, centers)
    inverse = np.linalg.inv(spec.homography)
    skin = skin_colour(rng).tolist()

    places: list[PlacedCard | None] = list(spec.cards)  # layout order; None = an empty place
    held: list[PlacedCard] = []
    to_deal = list(dealt)
    for frame in range(n_frames):
        t = frame / max(1, n_frames - 1) if n_frames > 1 else 0.0
        events: dict[str, list[str]] = {}
        phase, hand = "steady", None
        for path, (start, end), name in ((take_path, _TAKE, "taking"), (deal_path, _DEAL, "dealing")):
            if t < start:
                continue
            tip, reached = path.position((t - start) / (end - start))
            # Past the phase's end every stop counts as reached, even if no frame fell on it.
            for stop in range(min(reached if t < end else 3, 3)):
                if name == "taking" and places[taken[stop]] is taken_cards[stop]:
                    places[taken[stop]] = None
                    held.append(taken_cards[stop])
                    events.setdefault("took", []).append(str(taken_cards[stop].card))
                if name == "dealing" and dealt[stop] in to_deal:
                    to_deal.remove(dealt[stop])
                    places[taken[stop]] = dealt[stop]
                    events.setdefault("dealt", []).append(str(dealt[stop].card))
            if t < end:
                phase = name
                direction = float(np.arctan2(entry[1] - tip[1], entry[0] - tip[0]))
                hand = {"kind": "hand", "tip": tip.tolist(), "direction": direction, "skin": skin, "spread": 0.15}
        if phase == "steady" and t >= _TAKE[1]:
            held = []  # the taken cards left the frame with the hand
        carried: list[PlacedCard] = []
        if hand is not None:
            tip_plane = cv2.perspectiveTransform(np.array([[hand["tip"]]], np.float64), inverse).reshape(2)
            in_hand = held if phase == "taking" else to_deal
            carried = [_held_card(card, tip_plane, k) for k, card in enumerate(in_hand)]
        spec.cards = [p for p in places if p is not None]
        image, truth = draw_scene(spec, frame_seed=seed * 100_003 + frame, hand=hand, extra_cards=carried)
        truth.update({"frame": frame, "time": round(frame / fps, 4), "phase": phase, "events": events})
        yield image, truth


def write_clip(stem: str | Path, seed: int, seconds: float = 8.0, fps: float = 15.0,
               size: tuple[int, int] = (960, 720), *, n_cards: int = 12,
               table: str | None = None, effects: float = 1.0) -> tuple[Path, Path, int]:
    """Write `generate_clip` to ``stem``.mp4 (codec mp4v) or, if that codec is missing,
    ``stem``.avi (MJPG), and the per-frame truth to ``stem``.jsonl (one JSON object a line).

    Returns (video path, truth path, number of frames).
    :raises OSError: when no video writer can be opened.
    """
    stem = Path(stem)
    width, height = size
    writer, video_path = None, None
    for suffix, fourcc in ((".mp4", "mp4v"), (".avi", "MJPG")):
        candidate = stem.with_suffix(suffix)
        w = cv2.VideoWriter(str(candidate), cv2.VideoWriter.fourcc(*fourcc), fps, (width, height))
        if w.isOpened():
            writer, video_path = w, candidate
            break
        w.release()
    if writer is None or video_path is None:
        raise OSError(f"no video codec available to write {stem}.mp4 or {stem}.avi")
    truth_path = stem.with_suffix(".jsonl")
    frames = 0
    try:
        with truth_path.open("w") as out:
            for image, truth in generate_clip(seed, seconds, fps, size, n_cards=n_cards, table=table,
                                               effects=effects):
                writer.write(image)
                out.write(json.dumps(truth) + "\n")
                frames += 1
    finally:
        writer.release()
    return video_path, truth_path, frames


def cards_on_table(truth: dict[str, Any]) -> list[Card]:
    """The cards lying on the table in one frame's truth (not those carried by the hand)."""
    return [Card.parse(entry["card"]) for entry in truth["cards"] if not entry.get("in_hand")]


__all__ = ["cards_on_table", "generate_clip", "write_clip"]
