"""The game of SET as RULES.md describes it: group play, match play, solitaire, the easy deck.

A `Game` is the whole state of one table. It changes in place, one action at a time, and every
action can be undone. Each action appends JSON-serialisable events to ``game.log``, from which
`Game.from_log` rebuilds the same game: a referee can save a game and replay it.

Typical group game::

    game = Game(["ann", "bob"], seed=7)
    game.deal()                          # 12 cards face up (9 with the easy deck)
    game.table                           # list[Card], in position order (0-based positions)
    result = game.claim("ann", [0, 4, 7])  # call "SET" and take three cards (positions or Cards)
    result.verdict, result.reason        # "set" / "not-a-set", and why, feature by feature
    game.call_no_set()                   # everybody agrees there is no SET: 3 more cards, or refused
    game.call_set("bob"); game.take([1, 2, 3])  # the same in two steps: call first, then take
    game.undo()                          # take back the last action (a refused call is one too)
    game.scores                          # {"ann": 1, "bob": 0}: SETs minus penalties
    game.is_over

Following a real table, whose deck order nobody knows: deal with the cards seen
(``game.deal(order=seen_twelve)``: those come first, the rest of the pile is shuffled), and pass the
cards the dealer actually laid down as ``replacements=`` to `claim`/`take` and ``added=`` to
`call_no_set`; they are taken out of the pile wherever they are in it.

Table positions are stable: cards taken from a 12-card table are replaced in the same positions.
When the table has more than 12 cards (after a "no SET" deal) or the pile is empty, the taken
cards are not replaced; the last cards on the table move into the gaps, so the table stays a
compact list whose first positions keep their cards.

Every illegal action raises a subclass of `GameError` (itself a `ValueError`) named after the
rule broken, and leaves the game unchanged.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

from core.cards import Card, easy_deck, explain, find_sets, full_deck, has_set, is_set

SolitaireReading = Literal["penalty", "lose"]
Phase = Literal["not-dealt", "playing", "round-over", "over"]
Verdict = Literal["set", "not-a-set"]
Outcome = Literal["won", "lost"]
Event = dict[str, object]
CardRef = Union[Card, int]
"""A card named in an action: a `Card` value on the table, or its 0-based table position."""

STANDARD_TABLE = 12
EASY_TABLE = 9


# -- errors ---------------------------------------------------------------------------------------
class GameError(ValueError):
    """An action the rules do not allow; the game is left unchanged."""


class NotDealtError(GameError):
    """The action needs cards on the table, but no round is being played (deal first)."""


class AlreadyDealtError(GameError):
    """`deal` was called while a round is still being played."""


class GameOverError(GameError):
    """The game has ended: no more actions (only `undo`)."""


class UnknownPlayerError(GameError):
    """The player named is not at this table."""


class NotOnTableError(GameError):
    """A card (or position) named is not on the table."""


class RepeatedCardError(GameError):
    """The same card was named twice in one action."""


class WrongCardCountError(GameError):
    """A SET is exactly three cards."""


class ControlError(GameError):
    """Another player called "SET" first and has control of the table, or nobody has."""


class NotInPileError(GameError):
    """A card named as dealt from the pile is not in the pile (or the pile is too small)."""


class BadDeckOrderError(GameError):
    """An explicit deck order has a card twice or a card that is not in this game's deck."""


class NothingToUndoError(GameError):
    """There is no action left to undo."""


# -- options and results --------------------------------------------------------------------------
@dataclass(frozen=True)
class GameOptions:
    """How this table plays.

    ``easy``: the 27 solid cards only, 9 on the table (German sheet), unless ``table_size`` says
    otherwise. ``match``: the longer game in which the deal passes to the left and every player
    deals one round; scores add up. ``solitaire_reading`` (one player only): "penalty" (default;
    Spanish/Portuguese/Japanese sheets: a "no SET" costs one point and deals three more, and the
    player wins by cancelling every such penalty with a SET found once the pile is empty, that
    is among the last cards) or "lose" (German sheet: the first "no SET" loses the game).
    """

    easy: bool = False
    match: bool = False
    solitaire_reading: SolitaireReading = "penalty"
    table_size: int | None = None

    def __post_init__(self) -> None:
        if self.solitaire_reading not in ("penalty", "lose"):
            raise ValueError(f"solitaire_reading must be 'penalty' or 'lose', got {self.solitaire_reading!r}")
        if self.table_size is not None and (self.table_size < 3 or self.table_size % 3):
            raise ValueError(f"table_size must be a positive multiple of 3, got {self.table_size}")

    @property
    def base_table_size(self) -> int:
        """Cards face up after the deal and after each replaced SET: 12, or 9 with the easy deck."""
        if self.table_size is not None:
            return self.table_size
        return EASY_TABLE if self.easy else STANDARD_TABLE

    def deck(self) -> list[Card]:
        """The cards in play: all 81, or the 27 solid ones."""
        return easy_deck() if self.easy else full_deck()

    def to_json(self) -> dict[str, object]:
        return {"easy": self.easy, "match": self.match, "solitaire_reading": self.solitaire_reading,
                "table_size": self.table_size}

    @staticmethod
    def from_json(data: dict[str, object]) -> GameOptions:
        reading = data.get("solitaire_reading", "penalty")
        size = data.get("table_size")
        if reading not in ("penalty", "lose") or not (size is None or isinstance(size, int)):
            raise ValueError(f"bad options in game log: {data!r}")
        return GameOptions(easy=bool(data.get("easy", False)), match=bool(data.get("match", False)),
                           solitaire_reading="lose" if reading == "lose" else "penalty",
                           table_size=size)


@dataclass(frozen=True)
class ClaimResult:
    """What happened when a player took three cards.

    ``verdict`` is "set" or "not-a-set"; ``reason`` says why, feature by feature (`explain`).
    ``points`` is +1 or -1. ``positions`` are the 0-based table positions the cards had.
    ``replacements`` are the cards dealt into the gaps (empty when the table was over 12 or the
    pile is empty). ``cancels_penalty`` is true in penalty solitaire when this SET, found among the
    last cards, cancels an earlier "no SET" penalty.
    """

    player: str
    cards: tuple[Card, Card, Card]
    positions: tuple[int, int, int]
    verdict: Verdict
    reason: str
    points: int
    replacements: tuple[Card, ...] = ()
    cancels_penalty: bool = False

    @property
    def is_set(self) -> bool:
        return self.verdict == "set"


@dataclass(frozen=True)
class NoSetResult:
    """The answer to a "no SET" call.

    ``accepted`` is false when a SET is on the table (``sets`` lists them, as sorted 0-based
    position triples) and nothing changes. When accepted, ``added`` holds the three cards dealt
    (none if the pile is empty, which ends the round), ``points`` the penalty (-1 in penalty
    solitaire, else 0), and ``game_lost`` is true in "lose" solitaire.
    """

    accepted: bool
    reason: str
    added: tuple[Card, ...] = ()
    points: int = 0
    sets: tuple[tuple[int, int, int], ...] = ()
    game_lost: bool = False


# -- state ----------------------------------------------------------------------------------------
@dataclass
class _State:
    """Everything that an action may change: copied whole for undo."""

    phase: Phase = "not-dealt"
    round: int = 0  # 1-based number of the round being (or last) played; 0 before the first deal
    dealer: int = 0  # index into players of the dealer of the current/next round
    pile: list[Card] = field(default_factory=list)
    table: list[Card] = field(default_factory=list)
    collected: dict[str, list[Card]] = field(default_factory=dict)  # this round's SET cards
    sets_taken: dict[str, int] = field(default_factory=dict)  # over all rounds
    penalties: dict[str, int] = field(default_factory=dict)  # over all rounds
    caller: str | None = None  # who called "SET" and has control of the table
    owed_penalties: int = 0  # penalty solitaire: "no SET" penalties not yet cancelled
    outcome: Outcome | None = None
    rng_state: tuple[object, ...] = ()
    log_length: int = 0

    def copy(self) -> _State:
        return _State(self.phase, self.round, self.dealer, list(self.pile), list(self.table),
                      {p: list(cards) for p, cards in self.collected.items()},
                      dict(self.sets_taken), dict(self.penalties), self.caller,
                      self.owed_penalties, self.outcome, self.rng_state, self.log_length)


class Game:
    """One table of SET: players, the deck, the pile, the cards face up, scores and the log.

    :param players: distinct non-empty names, in seating order (the player on a dealer's left is
        the next name). One player means solitaire.
    :param options: `GameOptions` (easy deck, match play, solitaire reading).
    :param seed: seeds the shuffles, for games that can be repeated. ``None``: unpredictable.
    :param dealer: index of the first dealer.
    :raises ValueError: for bad players or dealer.
    """

    def __init__(self, players: Sequence[str] = ("you",), options: GameOptions | None = None, *,
                 seed: int | None = None, dealer: int = 0) -> None:
        names = list(players)
        if not names or any(not isinstance(p, str) or not p.strip() for p in names):
            raise ValueError("players must be one or more non-empty names")
        if len(set(names)) != len(names):
            raise ValueError(f"player names must differ, got {names}")
        if not 0 <= dealer < len(names):
            raise ValueError(f"dealer must be a player index 0..{len(names) - 1}, got {dealer}")
        self.players: tuple[str, ...] = tuple(names)
        self.options = options or GameOptions()
        self.seed = seed
        self._rng = random.Random(seed)
        self._state = _State(dealer=dealer, sets_taken={p: 0 for p in names},
                             penalties={p: 0 for p in names}, collected={p: [] for p in names})
        self._history: list[_State] = []
        self._log: list[Event] = [{"type": "start", "players": list(names), "options": self.options.to_json(),
                                   "seed": seed, "dealer": names[dealer]}]

    # -- reading the state ----------------------------------------------------------------------
    @property
    def is_solitaire(self) -> bool:
        return len(self.players) == 1

    @property
    def table(self) -> list[Card]:
        """The cards face up, in position order (a copy)."""
        return list(self._state.table)

    @property
    def pile_size(self) -> int:
        return len(self._state.pile)

    @property
    def pile(self) -> list[Card]:
        """The draw pile, top card first (a copy). Hidden from players; for tests and referees."""
        return list(self._state.pile)

    @property
    def phase(self) -> Phase:
        """"not-dealt" before a round, "playing", "round-over" between match rounds, "over"."""
        return self._state.phase

    @property
    def is_over(self) -> bool:
        return self._state.phase == "over"

    @property
    def round(self) -> int:
        """The 1-based number of the current (or last) round; 0 before the first deal."""
        return self._state.round

    @property
    def rounds(self) -> int:
        """How many rounds the game lasts: one per player in match play, else one."""
        return len(self.players) if self.options.match else 1

    @property
    def dealer(self) -> str:
        """The dealer of the current round (or of the next one, between rounds)."""
        return self.players[self._state.dealer]

    @property
    def caller(self) -> str | None:
        """The player who called "SET" and has not yet taken cards, if any."""
        return self._state.caller

    @property
    def scores(self) -> dict[str, int]:
        """Each player's SETs minus penalties, over all rounds played."""
        return {p: self._state.sets_taken[p] - self._state.penalties[p] for p in self.players}

    @property
    def sets_taken(self) -> dict[str, int]:
        return dict(self._state.sets_taken)

    @property
    def penalties(self) -> dict[str, int]:
        return dict(self._state.penalties)

    @property
    def collected(self) -> dict[str, list[Card]]:
        """The cards each player took as SETs in the current round."""
        return {p: list(cards) for p, cards in self._state.collected.items()}

    @property
    def removed(self) -> list[Card]:
        """Cards out of play for the whole game: the 54 non-solid cards with the easy deck."""
        in_play = set(self.options.deck())
        return [card for card in full_deck() if card not in in_play]

    @property
    def owed_penalties(self) -> int:
        """Penalty solitaire: "no SET" penalties not yet cancelled by a SET among the last cards."""
        return self._state.owed_penalties

    @property
    def outcome(self) -> Outcome | None:
        """Solitaire only, once over: "won" or "lost" (see `GameOptions`). None otherwise."""
        return self._state.outcome

    @property
    def winners(self) -> list[str]:
        """The players with the highest score (several on a tie)."""
        scores = self.scores
        best = max(scores.values())
        return [p for p in self.players if scores[p] == best]

    @property
    def log(self) -> list[Event]:
        """Every action so far as JSON-serialisable dicts (a deep copy); undone actions are gone.

        Event types: "start" (players, options, seed, dealer), "deal" (round, dealer, the full
        deck order and the table), "call", "take"/"claim" (player, cards, positions, verdict,
        reason, points, replacements, cancels_penalty), "time_out", "no_set" (accepted, reason,
        added, points, or the SETs that were there), "round_end" (leftover cards, scores) and
        "game_end" (scores, winners, outcome). `Game.from_log` replays them.
        """
        return copy.deepcopy(self._log)

    def sets_on_table(self) -> list[tuple[int, int, int]]:
        """Every SET face up, as sorted 0-based position triples."""
        return find_sets(self._state.table)

    def can_undo(self) -> bool:
        return bool(self._history)

    # -- actions --------------------------------------------------------------------------------
    def deal(self, order: Sequence[Card] | None = None) -> list[Card]:
        """Start a round: shuffle and lay out 12 cards (9 with the easy deck); returns the table.

        ``order`` fixes the deck order for this round, top card first: a full order of the deck,
        or just its first cards (e.g. the 12 seen on a real table), in which case the rest of the
        deck is shuffled beneath them. In match play, call `deal` again for each round.

        :raises AlreadyDealtError: while a round is being played.
        :raises GameOverError: after the last round.
        :raises BadDeckOrderError: if ``order`` repeats a card or has one not in this deck.
        """
        state = self._state
        if state.phase == "over":
            raise GameOverError("the game is over: no more deals")
        if state.phase == "playing":
            raise AlreadyDealtError(f"round {state.round} is still being played")
        deck = self.options.deck()
        fixed = list(order or [])
        in_deck = set(deck)
        if len(set(fixed)) != len(fixed):
            raise BadDeckOrderError("the deck order names a card twice")
        strangers = [card for card in fixed if card not in in_deck]
        if strangers:
            raise BadDeckOrderError(f"{strangers[0]} is not in this game's deck")
        self._begin()
        state = self._state
        chosen = set(fixed)
        rest = [card for card in deck if card not in chosen]
        self._rng.shuffle(rest)
        state.pile = fixed + rest
        size = self.options.base_table_size
        state.table, state.pile = state.pile[:size], state.pile[size:]
        state.round += 1
        state.phase = "playing"
        state.collected = {p: [] for p in self.players}
        self._emit({"type": "deal", "round": state.round, "dealer": self.dealer,
                    "order": _names(state.table + state.pile), "table": _names(state.table)})
        self._check_round_end()
        return self.table

    def call_set(self, player: str) -> None:
        """``player`` calls "SET" and takes control of the table until they `take` three cards.

        :raises ControlError: if another player called first and has control.
        """
        self._require_playing()
        self._require_player(player)
        if self._state.caller is not None:
            raise ControlError(f"{self._state.caller} called SET first and has control of the table")
        self._begin()
        self._state.caller = player
        self._emit({"type": "call", "player": player})

    def take(self, cards: Sequence[CardRef], replacements: Sequence[Card] | None = None) -> ClaimResult:
        """The player in control takes three cards; they are checked at once.

        A SET scores +1 and the cards are replaced from the pile (unless more than 12 are out, or
        the pile is empty); anything else scores -1 and the cards stay where they were.
        ``replacements``: the cards the dealer actually put down (following a real table); by
        default the top of the pile.

        :raises ControlError: if nobody called "SET".
        :raises NotOnTableError, RepeatedCardError, WrongCardCountError, NotInPileError.
        """
        self._require_playing()
        caller = self._state.caller
        if caller is None:
            raise ControlError("nobody has called SET: call first (call_set), then take")
        return self._take(caller, cards, replacements, "take")

    def claim(self, player: str, cards: Sequence[CardRef],
              replacements: Sequence[Card] | None = None) -> ClaimResult:
        """``player`` calls "SET" and takes ``cards`` in one action (see `call_set` and `take`).

        ``cards`` are three `Card` values on the table or 0-based table positions.
        """
        self._require_playing()
        self._require_player(player)
        if self._state.caller is not None and self._state.caller != player:
            raise ControlError(f"{self._state.caller} called SET first and has control of the table")
        return self._take(player, cards, replacements, "claim")

    def time_out(self) -> None:
        """The player in control did not pick up three cards in time: a call without a SET, -1.

        :raises ControlError: if nobody called "SET".
        """
        self._require_playing()
        caller = self._state.caller
        if caller is None:
            raise ControlError("nobody has called SET")
        self._begin()
        self._state.caller = None
        self._state.penalties[caller] += 1
        self._emit({"type": "time_out", "player": caller, "points": -1})

    def call_no_set(self, player: str | None = None, added: Sequence[Card] | None = None) -> NoSetResult:
        """Everybody agrees there is no SET on the table (``player``: who said so, for the log).

        Refused, changing nothing, when a SET is on the table. Accepted otherwise: three more
        cards are dealt (``added``: the cards actually dealt, by default the top of the pile); in
        penalty solitaire the player loses a point, in "lose" solitaire the game is lost. With the
        pile empty there is nothing to deal and the round ends.

        :raises ControlError: while a player has control after calling "SET".
        :raises NotInPileError: if ``added`` are not three cards from the pile.
        """
        self._require_playing()
        if player is not None:
            self._require_player(player)
        if self._state.caller is not None:
            raise ControlError(f"{self._state.caller} called SET and has control of the table")
        sets = self.sets_on_table()
        if added and (sets or not self._state.pile):
            raise NotInPileError("no cards are dealt: " + ("a SET is on the table" if sets else "the pile is empty"))
        self._check_draw(3, added)
        self._begin()
        state = self._state
        event: Event = {"type": "no_set", "player": player, "table_size": len(state.table)}
        if sets:
            result = NoSetResult(False, f"refused: {_count(len(sets), 'SET')} on the table", sets=tuple(sets))
            event.update(accepted=False, sets=[list(s) for s in sets], reason=result.reason)
            self._emit(event)
            return result
        solitaire_player = self.players[0] if self.is_solitaire else None
        if solitaire_player is not None and self.options.solitaire_reading == "lose":
            state.outcome = "lost"
            result = NoSetResult(True, f"no SET among {len(state.table)} cards: the game is lost", game_lost=True)
            event.update(accepted=True, reason=result.reason, added=[], points=0)
            self._emit(event)
            self._finish_round(force_end=True)
            return result
        dealt = self._draw(3, added) if state.pile else []
        points = 0
        if solitaire_player is not None and dealt:
            points = -1
            state.penalties[solitaire_player] += 1
            state.owed_penalties += 1
        state.table.extend(dealt)
        reason = (f"no SET among {len(state.table) - len(dealt)} cards: dealt 3 more" if dealt
                  else "no SET and the pile is empty: the round ends")
        result = NoSetResult(True, reason, added=tuple(dealt), points=points)
        event.update(accepted=True, reason=reason, added=_names(dealt), points=points)
        self._emit(event)
        self._check_round_end()
        return result

    def undo(self) -> None:
        """Take back the last action (deal, call, take/claim, time-out or "no SET" call).

        :raises NothingToUndoError: at the start of the game.
        """
        if not self._history:
            raise NothingToUndoError("nothing to undo")
        self._state = self._history.pop()
        self._rng.setstate(self._state.rng_state)
        del self._log[self._state.log_length:]

    # -- replay ---------------------------------------------------------------------------------
    @staticmethod
    def from_log(events: Iterable[Event]) -> Game:
        """Rebuild a game by replaying a log written by `Game.log` (e.g. read back from JSON).

        :raises ValueError: if the log does not start with a "start" event or an event is unknown.
        """
        items = list(events)
        if not items or items[0].get("type") != "start":
            raise ValueError("a game log starts with a 'start' event")
        start = items[0]
        players = _strings(start["players"])
        options_data = start.get("options", {})
        if not isinstance(options_data, dict):
            raise ValueError("bad options in game log")
        seed = start.get("seed")
        dealer = players.index(str(start["dealer"])) if start.get("dealer") in players else 0
        game = Game(players, GameOptions.from_json(options_data),
                    seed=seed if isinstance(seed, int) else None, dealer=dealer)
        for event in items[1:]:
            kind = event.get("type")
            if kind == "deal":
                game.deal([Card.parse(name) for name in _strings(event["order"])])
            elif kind == "call":
                game.call_set(str(event["player"]))
            elif kind in ("take", "claim"):
                cards = [Card.parse(name) for name in _strings(event["cards"])]
                replacements = [Card.parse(name) for name in _strings(event.get("replacements", []))]
                if kind == "take":
                    game.take(cards, replacements)
                else:
                    game.claim(str(event["player"]), cards, replacements)
            elif kind == "time_out":
                game.time_out()
            elif kind == "no_set":
                who = event.get("player")
                added = [Card.parse(name) for name in _strings(event.get("added", []))]
                game.call_no_set(str(who) if who is not None else None, added)
            elif kind in ("round_end", "game_end"):
                continue  # written by the engine itself
            else:
                raise ValueError(f"unknown event type in game log: {kind!r}")
        return game

    # -- internals ------------------------------------------------------------------------------
    def _take(self, player: str, cards: Sequence[CardRef], replacements: Sequence[Card] | None,
              kind: str) -> ClaimResult:
        positions = self._positions(cards)
        state = self._state
        a, b, c = (state.table[p] for p in positions)
        good = is_set(a, b, c)
        refills = good and len(state.table) <= self.options.base_table_size and bool(state.pile)
        if replacements and not refills:
            raise NotInPileError("no cards are dealt after this take (not a SET, more than "
                                 f"{self.options.base_table_size} cards out, or the pile is empty)")
        if refills:
            self._check_draw(3, replacements)
        self._begin()
        state = self._state
        state.caller = None
        reason = explain(a, b, c)
        event: Event = {"type": kind, "player": player, "cards": _names([a, b, c]),
                        "positions": list(positions), "reason": reason}
        if not good:
            state.penalties[player] += 1
            event.update(verdict="not-a-set", points=-1, replacements=[])
            self._emit(event)
            return ClaimResult(player, (a, b, c), positions, "not-a-set", reason, -1)
        state.sets_taken[player] += 1
        state.collected[player].extend((a, b, c))
        cancels = self.is_solitaire and not state.pile and state.owed_penalties > 0
        if cancels:
            state.owed_penalties -= 1
        dealt: list[Card] = []
        if refills:
            dealt = self._draw(3, replacements)
            for position, card in zip(sorted(positions), dealt):
                state.table[position] = card
            if len(dealt) < 3:  # a short pile: only possible with a non-standard deck order
                _close_gaps(state.table, sorted(positions)[len(dealt):])
        else:
            _close_gaps(state.table, positions)
        event.update(verdict="set", points=1, replacements=_names(dealt), cancels_penalty=cancels)
        self._emit(event)
        self._check_round_end()
        return ClaimResult(player, (a, b, c), positions, "set", reason, 1, tuple(dealt), cancels)

    def _positions(self, cards: Sequence[CardRef]) -> tuple[int, int, int]:
        if len(cards) != 3:
            raise WrongCardCountError(f"a SET is three cards, got {len(cards)}")
        table = self._state.table
        positions: list[int] = []
        for ref in cards:
            if isinstance(ref, Card):
                if ref not in table:
                    raise NotOnTableError(f"{ref} is not on the table")
                positions.append(table.index(ref))
            elif isinstance(ref, int) and not isinstance(ref, bool):
                if not 0 <= ref < len(table):
                    raise NotOnTableError(f"position {ref} is not on the table (0..{len(table) - 1})")
                positions.append(ref)
            else:
                raise NotOnTableError(f"{ref!r} is neither a card nor a table position")
        if len(set(positions)) != 3:
            repeated = next(p for p in positions if positions.count(p) > 1)
            raise RepeatedCardError(f"{table[repeated]} was named twice")
        return (positions[0], positions[1], positions[2])

    def _check_draw(self, n: int, chosen: Sequence[Card] | None) -> None:
        """Raise `NotInPileError` unless ``chosen`` (if given) can be dealt as the next n cards."""
        if not chosen:
            return
        pile = self._state.pile
        wanted = list(chosen)
        if len(wanted) != min(n, len(pile)):
            raise NotInPileError(f"expected {min(n, len(pile))} cards from the pile, got {len(wanted)}")
        if len(set(wanted)) != len(wanted):
            raise NotInPileError("the same card was dealt twice")
        for card in wanted:
            if card not in pile:
                where = "on the table" if card in self._state.table else "out of play"
                raise NotInPileError(f"{card} is not in the pile (it is {where})")

    def _draw(self, n: int, chosen: Sequence[Card] | None) -> list[Card]:
        """Take n cards off the pile: the named ones wherever they are, else the top ones.

        ``chosen`` must have passed `_check_draw`.
        """
        pile = self._state.pile
        if not chosen:
            dealt = pile[:n]
            del pile[:n]
            return dealt
        for card in chosen:
            pile.remove(card)
        return list(chosen)

    def _check_round_end(self) -> None:
        state = self._state
        if not state.pile and not has_set(state.table):
            self._finish_round(force_end=False)

    def _finish_round(self, force_end: bool) -> None:
        state = self._state
        state.caller = None
        self._emit({"type": "round_end", "round": state.round, "leftover": _names(state.table),
                    "scores": dict(self.scores)})
        if force_end or state.round >= self.rounds:
            state.phase = "over"
            if self.is_solitaire and state.outcome is None:
                lost = self.options.solitaire_reading == "penalty" and state.owed_penalties > 0
                state.outcome = "lost" if lost else "won"
            self._emit({"type": "game_end", "scores": dict(self.scores), "winners": self.winners,
                        "outcome": state.outcome})
        else:
            state.phase = "round-over"
            state.dealer = (state.dealer + 1) % len(self.players)

    def _require_playing(self) -> None:
        phase = self._state.phase
        if phase == "over":
            raise GameOverError("the game is over")
        if phase != "playing":
            raise NotDealtError("no round is being played: deal first")

    def _require_player(self, player: str) -> None:
        if player not in self.players:
            raise UnknownPlayerError(f"{player!r} is not playing (players: {', '.join(self.players)})")

    def _begin(self) -> None:
        """Save the state before an action changes it (the action then works on a copy)."""
        saved = self._state.copy()
        saved.rng_state = self._rng.getstate()
        saved.log_length = len(self._log)
        self._history.append(saved)
        self._state = saved.copy()

    def _emit(self, event: Event) -> None:
        self._log.append(event)


def _close_gaps(table: list[Card], positions: Sequence[int]) -> None:
    """Remove the cards at ``positions``, moving the last cards on the table into the gaps."""
    keep = len(table) - len(positions)
    gaps = sorted(p for p in positions if p < keep)
    movers = [table[p] for p in range(keep, len(table)) if p not in positions]
    for gap, card in zip(gaps, movers):
        table[gap] = card
    del table[keep:]


def _names(cards: Iterable[Card]) -> list[str]:
    return [str(card) for card in cards]


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list in game log, got {value!r}")
    return [str(item) for item in value]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
