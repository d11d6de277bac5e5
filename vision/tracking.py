"""Steady boards from a stream of per-frame boards: tracking, voting, and "hold still".

A recogniser reading every camera frame on its own flickers: a card missed in one frame, a
stripe read as outline in the next, ids reshuffled when a card jitters across a row boundary.
`BoardTracker` sits between the recogniser and the screen:

* **Tracking.** Each frame's cards are matched to *tracks* by centre distance (greedy, nearest
  pairs first, gated at half a card), so a card keeps one track while it stays put or slides.
* **Voting.** Each track keeps its last ``window`` readings. Every attribute (count, colour,
  shading, shape) is voted separately, weighted by the reader's confidence in that attribute; a
  track's value changes only when a challenger outweighs it by ``switch_ratio``. A card that was
  really swapped (several attributes different, read the same way ``replace_after`` frames in a
  row) is re-read at once instead of waiting out the vote. A challenger read only unsure must
  also outweigh the held value in the track's longer memory (see `_voted_card`). Readings
  taken while the picture moves (a card half under a hand is read as another) never make a
  swap and say nothing of how sure the card is read: that is judged on still pictures.
* **Settling.** A frame is *unsettled* when cards move, when several cards appear or vanish from
  one frame to the next, or when the caller says the picture itself is moving (a hand, the
  camera). The published board changes only after ``settle_frames`` settled frames in a row;
  meanwhile the last steady board is kept, and after ``hold_after`` unsettled frames the status
  says "hold-still".
* **Bounded memory.** Votes live in deques with ``maxlen``; a track not seen for ``drop_after``
  settled frames (or ``forget_after`` frames whatever happens) is dropped, so nothing grows over
  a long game.

The tracker knows nothing of pixels or cameras: it takes and returns `core.board.Board` values,
so it is tested on hand-built board sequences.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.board import Board, Corners, Point, SeenCard
from core.cards import FEATURES, Card
from vision.recognize import reading_order

Status = Literal["starting", "steady", "hold-still"]


@dataclass(frozen=True)
class TrackerSettings:
    """The tracker's knobs, in frames and in card sizes (``sqrt`` of a card's pixel area).

    The defaults suit a camera processed at about 30 frames per second: a card taken by a hand
    leaves the steady board ``settle_frames`` (3) frames after the hand has gone, one that
    vanishes with nothing moving after ``drop_after`` (10) frames; a dealt card arrives after
    about ``confirm_hits + settle_frames`` frames.
    """

    window: int = 15  # readings kept per track for the vote
    switch_ratio: float = 2.0  # a new attribute value must outweigh the current one this much
    min_switch_votes: int = 5  # ... and have been read at least this many times in the window
    # Each track also keeps every still reading's vote weight, fading by this factor per
    # reading (a memory of about 1 / (1 - memory_fading) = 50 readings, near 2 s at 30 fps):
    # a challenger read only unsure must outweigh the held value there too.
    memory_fading: float = 0.98
    replace_after: int = 5  # identical readings in a row, differing in >= 2 attributes: a swap
    confirm_hits: int = 3  # a new track is a card once seen in this many frames
    tentative_drop_after: int = 2  # an unconfirmed track is forgotten after this many misses
    # A card missing this long is gone from the table, but only decided on a settled frame: a
    # card taken by a hand has been missing all the while, so it goes as soon as the hand has.
    drop_after: int = 10
    forget_after: int = 150  # ... and after this many frames whatever happens (memory bound)
    settle_frames: int = 3  # settled frames in a row before a new board is published
    hold_after: int = 5  # unsettled frames in a row before the status says "hold-still"
    match_gate: float = 0.5  # max centre distance to match a card to a track, in card sizes
    motion_threshold: float = 0.06  # centre movement per frame that counts as moving
    moving_fraction: float = 0.25  # share of moving cards that unsettles the frame
    churn_fraction: float = 0.25  # share of cards appearing/vanishing at once that unsettles
    disagree_fraction: float = 0.5  # share of cards read against their vote that unsettles
    smoothing: float = 0.5  # weight of the new corners in each track's corner average
    # The reader's confidence thresholds per attribute (`CardReader.thresholds`), if known: a
    # card is then uncertain by the share of its readings clearly below one, among those
    # clearly below or above (see `_reading_of`), else of the readings the reader flagged.
    thresholds: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for name in ("window", "min_switch_votes", "replace_after", "confirm_hits",
                     "tentative_drop_after", "drop_after", "forget_after", "settle_frames",
                     "hold_after"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.switch_ratio < 1.0:
            raise ValueError(f"switch_ratio must be at least 1, got {self.switch_ratio}")
        if not 0.0 <= self.memory_fading < 1.0:
            raise ValueError(f"memory_fading must be in [0, 1), got {self.memory_fading}")
        if not 0.0 < self.smoothing <= 1.0:
            raise ValueError(f"smoothing must be in (0, 1], got {self.smoothing}")


@dataclass(frozen=True)
class SteadyBoard:
    """What the tracker says after one frame.

    ``board`` is the last steady board (``None`` until the first one settles), cards in reading
    order; ``track_ids[i]`` is the tracker's id for ``board.cards[i]`` and stays the same for a
    card as long as it is on the table. ``version`` goes up by one each time the cards or their
    readings change (not when they only jitter). ``changed`` is true on exactly those frames.
    ``seen`` is how many cards the recogniser found in this frame.
    """

    board: Board | None
    track_ids: tuple[int, ...]
    status: Status
    version: int
    changed: bool
    seen: int


@dataclass(frozen=True)
class _Reading:
    """One frame's reading of one card, as cast into a track's vote."""

    card: Card
    digits: tuple[int, int, int, int]  # card.digits, kept at hand for the tallies
    confidences: tuple[float, float, float, float]  # the reader's, per attribute in FEATURES order
    weights: tuple[float, float, float, float]  # the same as vote weights (see `_reading_of`)
    partial: bool
    uncertain: bool  # clearly: below a threshold by more than the dead band (or so flagged)
    sure: bool  # clearly: above every threshold by more than the dead band (or not flagged)
    # flagged by the recogniser although clearly above every threshold: a check of its own
    # doubts the card (a face showing no symbol, washed out by glare, a colour among another's)
    doubted: bool
    moving: bool  # taken while the picture moved (a hand over the table, the camera)


class _Votes:
    """A track's window of readings with running per-attribute tallies.

    ``weight[f][d]``, ``count[f][d]``, ``sure_count[f][d]`` and ``support[f][d]`` are the
    summed vote weight, number of readings, number of those clearly sure (`_Reading.sure`) and
    summed reader confidence of digit ``d`` of attribute ``f`` over the window;
    ``still`` and ``still_support`` count the readings taken while the picture was still. They
    are updated as readings enter and leave, so a frame costs the same however long the window.
    """

    def __init__(self, window: int) -> None:
        self.readings: deque[_Reading] = deque(maxlen=window)
        self._clear_tallies()

    def _clear_tallies(self) -> None:
        self.weight = [[0.0, 0.0, 0.0] for _ in FEATURES]
        self.count = [[0, 0, 0] for _ in FEATURES]
        self.sure_count = [[0, 0, 0] for _ in FEATURES]
        self.support = [[0.0, 0.0, 0.0] for _ in FEATURES]
        self.still_support = [[0.0, 0.0, 0.0] for _ in FEATURES]
        self.still = 0
        self.partial = 0
        self.uncertain = 0
        self.sure = 0
        self.doubted = 0

    def __len__(self) -> int:
        return len(self.readings)

    def add(self, reading: _Reading) -> None:
        if len(self.readings) == self.readings.maxlen:
            self._tally(self.readings[0], -1)
        self.readings.append(reading)
        self._tally(reading, 1)

    def keep_last(self, n: int) -> None:
        """Forget all but the last ``n`` readings."""
        recent = list(self.readings)[-n:]
        self.readings.clear()
        self._clear_tallies()
        for reading in recent:
            self.add(reading)

    def _tally(self, reading: _Reading, sign: int) -> None:
        for feature, digit in enumerate(reading.digits):
            self.weight[feature][digit] += sign * reading.weights[feature]
            self.count[feature][digit] += sign
            self.sure_count[feature][digit] += sign * reading.sure
            self.support[feature][digit] += sign * reading.confidences[feature]
            if not reading.moving:
                self.still_support[feature][digit] += sign * reading.confidences[feature]
        self.still += sign * (not reading.moving)
        self.partial += sign * reading.partial
        self.uncertain += sign * reading.uncertain
        self.sure += sign * reading.sure
        self.doubted += sign * reading.doubted


@dataclass
class _Track:
    """One card followed across frames: its smoothed corners and its recent readings."""

    track_id: int
    corners: list[list[float]]  # 4 x (x, y), smoothed
    votes: _Votes
    card: Card
    # Per attribute and digit, the vote weight of every still reading, fading with each new
    # one (`TrackerSettings.memory_fading`): the vote over a longer time than the window.
    memory: list[list[float]] = field(default_factory=lambda: [[0.0, 0.0, 0.0] for _ in FEATURES])
    center: Point = (0.0, 0.0)  # of ``corners``, kept up to date with them
    partial: bool = False
    uncertain: bool = False
    confidence: float = 0.0
    attribute_confidence: dict[str, float] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0  # consecutive frames without a match
    confirmed: bool = False

    def move_to(self, corners: list[list[float]]) -> None:
        self.corners = corners
        self.center = (sum(p[0] for p in corners) / 4.0, sum(p[1] for p in corners) / 4.0)


class BoardTracker:
    """Turns per-frame boards into a steady board (see the module docstring).

    Example::

        tracker = BoardTracker()
        for image in frames:
            steady = tracker.update(recognizer.read_board(image))
            if steady.changed:
                print(steady.board.sets(), steady.status)
    """

    def __init__(self, settings: TrackerSettings | None = None) -> None:
        self.settings = settings or TrackerSettings()
        self._tracks: dict[int, _Track] = {}
        self._next_id = 1
        self._previous_matched: set[int] = set()
        self._calm_run = 0
        self._unsettled_run = 0
        self._published: Board | None = None
        self._published_ids: tuple[int, ...] = ()
        self._published_key: tuple[tuple[int, int, bool, bool], ...] | None = None
        self._version = 0

    @property
    def track_count(self) -> int:
        """How many tracks are alive (confirmed or not); bounded, see `TrackerSettings`."""
        return len(self._tracks)

    def update(self, board: Board, *, scene_moving: bool = False) -> SteadyBoard:
        """Take one frame's board; return the steady board and the status after it.

        ``scene_moving`` is the caller's own sign that the picture is changing (a pixel
        difference between frames: a hand over the table, the camera moving); such a frame is
        unsettled whatever the cards do.
        """
        if not isinstance(board, Board):
            raise TypeError(f"board must be a core.board.Board, got {type(board).__name__}")
        settings = self.settings
        centers = [seen.center for seen in board.cards]
        sizes = [_card_size(seen.corners) for seen in board.cards]
        matches, new_cards = self._match(board.cards, centers, sizes)

        moving = 0
        disagreeing = 0
        for track_id, (seen, center, size) in matches.items():
            track = self._tracks[track_id]
            if _distance(track.center, center) > settings.motion_threshold * size:
                moving += 1
            if track.confirmed and seen.card != track.card and not seen.partial:
                disagreeing += 1
            self._observe(track, seen, scene_moving)
        started = {self._start_track(seen, scene_moving) for seen in new_cards}
        # Churn: cards seen in the previous frame and not in this one, plus cards never seen
        # before. A card coming back after a missed frame is not churn, and a removed card
        # counts once, so a single lost detection costs little and the count falls back to zero
        # as soon as the table is still again.
        current = set(matches) | started
        churn = len(self._previous_matched - current) + len(started)
        self._previous_matched = current
        crowd = max(len(current), len(self._confirmed_ids()), 1)
        settled = not scene_moving
        settled &= moving <= settings.moving_fraction * max(len(matches), 1)
        settled &= churn <= max(1.0, settings.churn_fraction * crowd)
        settled &= disagreeing <= max(1.0, settings.disagree_fraction * max(len(matches), 1))

        for track_id, track in list(self._tracks.items()):
            if track_id in matches:
                continue
            track.misses += 1
            limit = settings.drop_after if track.confirmed else settings.tentative_drop_after
            if (settled and track.misses > limit) or track.misses > settings.forget_after:
                del self._tracks[track_id]

        if settled:
            self._calm_run += 1
            self._unsettled_run = 0
        else:
            self._calm_run = 0
            self._unsettled_run += 1

        changed = False
        # A card seen twice but not yet confirmed is most likely real: wait for it rather than
        # publish a board without it and another one frames later (one-off detections, hits == 1,
        # do not hold anything up).
        pending = any(not t.confirmed and t.hits >= 2 for t in self._tracks.values())
        if self._calm_run >= settings.settle_frames and not pending:
            changed = self._publish(board.width, board.height)

        if self._published is None:
            status: Status = "starting"
        elif self._unsettled_run >= settings.hold_after:
            status = "hold-still"
        else:
            status = "steady"
        return SteadyBoard(self._published, self._published_ids, status, self._version, changed,
                           len(board.cards))

    # -- matching ---------------------------------------------------------------------------------
    def _match(self, cards: tuple[SeenCard, ...], centers: list[Point], sizes: list[float]
               ) -> tuple[dict[int, tuple[SeenCard, Point, float]], list[SeenCard]]:
        """Greedy nearest-first matching of this frame's cards to live tracks.

        Returns ``{track id: (card, its centre, its size)}`` and the cards matching no track.
        With at most a few dozen cards that never overlap, nearest-first gives the same pairs as
        an optimal assignment in practice, at a fraction of the code.
        """
        pairs: list[tuple[float, int, int]] = []
        tracks = [(track_id, track.center) for track_id, track in self._tracks.items()]
        for card_index, (cx, cy) in enumerate(centers):
            gate_squared = (self.settings.match_gate * sizes[card_index]) ** 2
            for track_id, (tx, ty) in tracks:
                distance_squared = (tx - cx) ** 2 + (ty - cy) ** 2
                if distance_squared <= gate_squared:
                    pairs.append((distance_squared, card_index, track_id))
        pairs.sort()
        matches: dict[int, tuple[SeenCard, Point, float]] = {}
        used_cards: set[int] = set()
        for _, card_index, track_id in pairs:
            if card_index in used_cards or track_id in matches:
                continue
            matches[track_id] = (cards[card_index], centers[card_index], sizes[card_index])
            used_cards.add(card_index)
        new_cards = [seen for i, seen in enumerate(cards) if i not in used_cards]
        return matches, new_cards

    # -- per-track voting -------------------------------------------------------------------------
    def _start_track(self, seen: SeenCard, moving: bool) -> int:
        track = _Track(track_id=self._next_id, corners=[], votes=_Votes(self.settings.window),
                       card=seen.card)
        track.move_to([[p[0], p[1]] for p in seen.corners])
        self._next_id += 1
        self._tracks[track.track_id] = track
        self._observe(track, seen, moving, first=True)
        return track.track_id

    def _observe(self, track: _Track, seen: SeenCard, moving: bool, first: bool = False) -> None:
        settings = self.settings
        if not first:
            aligned = _align_corners(seen.corners, track.corners)
            alpha = settings.smoothing
            track.move_to([[(1 - alpha) * old[0] + alpha * new[0], (1 - alpha) * old[1] + alpha * new[1]]
                           for old, new in zip(track.corners, aligned)])
        track.hits += 1
        track.misses = 0
        reading = _reading_of(seen, settings.thresholds, moving)
        track.votes.add(reading)
        if not moving:
            _remember(track.memory, reading, settings.memory_fading)
        if not track.confirmed:
            track.confirmed = track.hits >= settings.confirm_hits
            track.card = _plurality_card(track.votes, reading)
        elif _is_swap(track, settings.replace_after):
            # Another card: what the track remembers is of the one before.
            track.votes.keep_last(settings.replace_after)
            track.memory = [[0.0, 0.0, 0.0] for _ in FEATURES]
            for kept in track.votes.readings:
                _remember(track.memory, kept, settings.memory_fading)
            track.card = reading.card
        elif reading.card != track.card:
            # Only a reading that disagrees can tip a vote; agreeing ones just add weight.
            track.card = _voted_card(track, settings)
        _summarise(track, settings.thresholds)

    # -- publishing -------------------------------------------------------------------------------
    def _confirmed_ids(self) -> list[int]:
        return [t for t, track in self._tracks.items() if track.confirmed]

    def _publish(self, width: int, height: int) -> bool:
        """Rebuild the steady board from the confirmed tracks; say whether its content changed.

        Cards keep their published order while the same cards stay on the table (only their
        corners follow the picture); the order is re-read only when cards come or go.
        """
        live = self._confirmed_ids()
        if self._published is not None and set(live) == set(self._published_ids):
            order = list(self._published_ids)
        else:
            quads = [_seen_card_of(self._tracks[t]).corners for t in live]
            order = [live[i] for i in reading_order(quads)]
        cards = tuple(_seen_card_of(self._tracks[t]) for t in order)
        key = tuple((t, self._tracks[t].card.index, self._tracks[t].partial, self._tracks[t].uncertain)
                    for t in order)
        changed = key != self._published_key
        self._published = Board(cards, width, height)
        self._published_ids = tuple(order)
        if changed:
            self._published_key = key
            self._version += 1
        return changed


# -- helpers (plain functions on small values) --------------------------------------------------
def _distance(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _card_size(corners: Corners | list[list[float]]) -> float:
    """The square root of the quadrilateral's area (shoelace): one length for a card's size."""
    area = 0.0
    for i in range(4):
        x0, y0 = corners[i][0], corners[i][1]
        x1, y1 = corners[(i + 1) % 4][0], corners[(i + 1) % 4][1]
        area += x0 * y1 - x1 * y0
    return max(math.sqrt(abs(area) / 2.0), 1.0)


def _align_corners(new: Corners, old: list[list[float]]) -> list[tuple[float, float]]:
    """``new`` corners rotated in order to best line up with ``old``: a card read upside down
    in one frame (top-left is ambiguous up to a half turn) must not collapse the average."""
    x, y = old[0]
    shift = min(range(4), key=lambda k: (new[k][0] - x) ** 2 + (new[k][1] - y) ** 2)
    return [new[(i + shift) % 4] for i in range(4)]


def _reading_of(seen: SeenCard, thresholds: Mapping[str, float] | None = None, moving: bool = False
                ) -> _Reading:
    """One frame's reading, each attribute weighted by the reader's confidence in it.

    Partial and uncertain readings still vote (their best guess is usually right) but at half
    weight; a small floor keeps a zero-confidence reading from being ignored altogether. With
    the reader's ``thresholds``, the reading is clearly uncertain, clearly sure, or (within
    ``_THRESHOLD_BAND`` of a threshold) neither, and a reading flagged although clearly above
    every threshold is "doubted" (a check other than the confidences doubts it; counted apart,
    see `_summarise`); without, as the reader flagged it. A reading taken while the picture
    moved is neither: a card half under a hand is read badly, which says nothing of how well
    it is read once the hand has gone.
    """
    scale = 0.5 if (seen.partial or seen.uncertain) else 1.0
    c = [min(1.0, max(0.0, float(seen.attribute_confidence.get(f, seen.confidence)))) for f in FEATURES]
    w = [max(0.05, scale * value) for value in c]
    unsure, sure, doubted = seen.uncertain, not seen.uncertain, False
    if thresholds:
        margin = min(c[i] - thresholds[f] for i, f in enumerate(FEATURES) if f in thresholds)
        unsure, sure = margin < -_THRESHOLD_BAND, margin > _THRESHOLD_BAND
        doubted = sure and seen.uncertain and not seen.partial
        sure = sure and not doubted
    if moving:
        unsure = sure = doubted = False
    return _Reading(seen.card, seen.card.digits, (c[0], c[1], c[2], c[3]), (w[0], w[1], w[2], w[3]), seen.partial,
                    unsure, sure, doubted, moving)


def _remember(memory: list[list[float]], reading: _Reading, fading: float) -> None:
    """Fade a track's memory by one reading and add this one's vote weights."""
    for feature, digit in enumerate(reading.digits):
        remembered = memory[feature]
        for d in range(3):
            remembered[d] *= fading
        remembered[digit] += reading.weights[feature]


def _plurality_card(votes: _Votes, latest: _Reading) -> Card:
    """The heaviest value of each attribute (ties to the latest reading): for new tracks."""
    digits = []
    for feature in range(4):
        weight = votes.weight[feature]
        digits.append(max(range(3), key=lambda d: (weight[d], d == latest.digits[feature])))
    return Card.from_digits(digits)


def _voted_card(track: _Track, settings: TrackerSettings) -> Card:
    """Each attribute keeps its value unless a challenger clearly wins the window's vote
    (hysteresis).

    A challenger with no clearly sure reading in the window must also outweigh the held value
    in the track's memory. A card the reader can hardly tell (faint stripes read striped in
    most frames, outline in the rest) is read the same wrong way for as long as an outline
    search happens to give it, a second or more on a still table: that fills the window but
    not the memory, so the card does not swap between two unsure guesses, while a first guess
    that the later readings mostly contradict is still given up.
    """
    votes = track.votes
    digits = list(track.card.digits)
    for feature in range(4):
        weight = votes.weight[feature]
        held = digits[feature]
        challenger = max(range(3), key=lambda d: weight[d])
        if (challenger != held and votes.count[feature][challenger] >= settings.min_switch_votes
                and weight[challenger] > settings.switch_ratio * weight[held]
                and (votes.sure_count[feature][challenger] > 0
                     or track.memory[feature][challenger] >= track.memory[feature][held])):
            digits[feature] = challenger
    return Card.from_digits(digits)


def _is_swap(track: _Track, replace_after: int) -> bool:
    """The last ``replace_after`` whole readings, taken while the picture was still, agree on a
    card differing from the track's value in two or more attributes: the card itself was
    exchanged, not misread (a hand over a card makes it read as another, the same way for as
    long as it stays)."""
    readings = track.votes.readings
    if len(readings) < replace_after:
        return False
    card = readings[-1].card
    if sum(a != b for a, b in zip(readings[-1].digits, track.card.digits)) < 2:
        return False
    return all(readings[-k].card == card and not readings[-k].partial and not readings[-k].moving
               for k in range(1, replace_after + 1))


def _summarise(track: _Track, thresholds: Mapping[str, float] | None = None) -> None:
    """Set the track's published flags and confidences from its window of readings.

    An attribute's confidence is the reader's confidence in the held value, summed over the
    window's readings of that value and divided by the window's length: unanimous readings at
    0.9 give 0.9, a 50/50 split gives at most 0.5. The card is partial or uncertain when most
    recent readings said so (of those clearly one way or the other, see `_reading_of`), or
    (uncertain) when that confidence is low, or when most still readings are doubted by the
    recogniser's own checks.

    Readings taken while the picture moved count only when the window holds no other: how sure
    a card is read is judged on a still picture. With none still, the uncertain flag stays as it
    was (the board is not published while the picture moves anyway).
    """
    votes = track.votes
    held = track.card.digits
    still = votes.still > 0
    n = votes.still if still else len(votes)
    support = votes.still_support if still else votes.support
    track.attribute_confidence = {name: max(0.0, support[f][held[f]]) / n for f, name in enumerate(FEATURES)}
    track.confidence = min(track.attribute_confidence.values())
    partial_share = votes.partial / len(votes)
    decided = votes.uncertain + votes.sure
    # Both flags switch with a dead band, so a card read at the edge of a threshold does not
    # blink between sure and unsure.
    # A reader unsure of a card every other frame leaves the flag as it was.
    if track.partial:
        track.partial = partial_share > 1 / 3
    else:
        track.partial = partial_share >= 2 / 3
    # The share of the readings clearly unsure, among those clearly one way or the other, with a
    # dead band; with the reader's thresholds also the window's mean confidence in the held
    # values, with a dead band round each threshold. The flag switches only when both say so: a
    # card read right at a threshold (flagged in about every other frame) wanders across the
    # share's band but not the mean's, and a burst of poor readings (an outline a little off,
    # until the next search) drags the mean down but not the share past its band.
    # An unsure card is declared sure by a mean that clears the band by more the fewer readings
    # it holds (as the mean's noise shrinks with their square root): a few good frames (the
    # first after a hand has gone, or after a swap cut the window down) do not outweigh a reader
    # at the edge of its threshold, while a card read well clear of it is declared sure soon.
    if not still:
        return  # judged on still pictures only (see above)
    margin = _margin(track, thresholds) if thresholds else None
    # A doubt of the recogniser's own checks (see `_reading_of`) says nothing of the
    # confidences: it is judged by its share of the still readings alone, with the same band.
    doubted = votes.doubted / votes.still
    if track.uncertain:
        sure_band = _THRESHOLD_BAND * math.sqrt(votes.readings.maxlen / n)
        track.uncertain = (decided == 0 or votes.uncertain / decided > 1 / 3
                           or (margin is not None and margin < sure_band) or track.confidence < 0.55
                           or doubted > 1 / 3)
    else:
        track.uncertain = ((decided > 0 and votes.uncertain / decided >= 2 / 3
                            and (margin is None or margin < -_THRESHOLD_BAND)) or track.confidence < 0.4
                            or doubted >= 2 / 3)


def _margin(track: _Track, thresholds: Mapping[str, float]) -> float:
    """How far the track's least sure attribute (its window's mean confidence) is above that
    attribute's threshold."""
    return min(track.attribute_confidence[name] - level for name, level in thresholds.items()
               if name in track.attribute_confidence)


# Half the width of the dead band round each reader threshold: a reading this close to one is
# neither clearly sure nor clearly uncertain.
_THRESHOLD_BAND = 0.01


def _seen_card_of(track: _Track) -> SeenCard:
    p = track.corners
    corners: Corners = ((p[0][0], p[0][1]), (p[1][0], p[1][1]), (p[2][0], p[2][1]), (p[3][0], p[3][1]))
    return SeenCard(track.card, corners, track.confidence, partial=track.partial,
                    uncertain=track.uncertain, attribute_confidence=dict(track.attribute_confidence))
