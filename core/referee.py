"""Referee a real game of SET from successive readings of the table.

The referee sits between what the camera reads (a `Board` per photo or steady frame) and the game
engine (`core.game.Game`), which owns every rule of scoring: +1 for a SET, -1 for a wrong call,
the solitaire penalty or loss, rounds and dealers in match play, the end of a round. The referee
adds what a real table needs:

- position numbers people call cards by (1-based, reading order, stable while the table stays);
- claims judged at once ("SET! Ana +1", or which features break the rule and "Ana -1");
- "no SET" calls confirmed only on a board read with confidence (``board.verdict == "no-set"``);
- the table watched between readings: which cards left and arrived, whether the cards taken were
  the claimed SET, whether the dealer dealt the right number, and no card twice or back again;
- an event log (JSON Lines) from which `replay` rebuilds the same scores, and a final summary.

Typical use::

    referee = Referee(["Ana", "Ben"])
    referee.observe(board)                 # the first 12 cards: round 1 starts
    print(referee.claim("Ana", [3, 7, 9]).message)   # "SET! Ana +1"
    referee.observe(next_board)            # the dealer replaced the three cards
    print(referee.call_no_set().message)   # "There is a SET" / "No SET among 12: deal three more"
    print(referee.summary().text())

Decisions (documented here because the rule sheets do not cover cameras):

- A claim that names a card not read with confidence (uncertain, or cut by the frame edge) is
  judged as read but scores nothing: the message gives the provisional verdict and asks for a
  better view. Scores move only on readings the referee trusts, as with "no SET".
- A reading of the table that cannot follow from the last one by the rules (cards gone that were
  not claimed, too many cards dealt, a card read twice, a taken card back) is flagged and not
  accepted: the referee keeps the last good table and waits for a better view.
- Where two views read the same card differently, neither is trusted: the card counts as unsure
  (no points on it, no "no SET") until a clear view settles it. A card first read without
  confidence and later read with it is corrected (the engine is replayed with the right card);
  an unsure re-reading never overrides a confident one.
- While the cards of an accepted SET or "no SET" call are being dealt, new calls wait for the
  table to be shown after the deal.
- "undo" takes back the last claim or "no SET" call, but only before the table changed after it.
"""

from __future__ import annotations

import datetime
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Literal

from core.board import Board, SeenCard
from core.cards import Card, explain, feature_verdicts
from core.game import ClaimResult, Game, GameError, GameOptions, NoSetResult, SolitaireReading
from core.referee_table import compare_tables, number_table, repeated_cards

Event = dict[str, object]
RulingKind = Literal["set", "not-a-set", "uncertain", "no-set", "refused", "better-view", "undo", "hint"]
FlagKind = Literal["duplicate", "returned", "not-in-deck", "not-claimed", "wrong-deal",
                   "unexpected-change", "misread"]

_ENGINE_SEED = 0  # the engine shuffles the unseen pile; any fixed seed makes replays repeat exactly
_NUMBER_WORDS = {0: "no", 1: "one", 2: "two", 3: "three", 6: "six"}


class RefereeError(ValueError):
    """A command the referee cannot act on (unknown player, a position not on the table, ...).

    Nothing changed; the message says what was wrong and what to do.
    """


@dataclass(frozen=True)
class Flag:
    """Something on the table that the rules cannot explain, in plain words."""

    kind: FlagKind
    message: str


@dataclass(frozen=True)
class Observation:
    """What the referee made of a new reading of the table.

    ``accepted`` is false when the reading was flagged (``flags``) and the last good table kept.
    ``changed`` is true when the cards on the table changed. ``left``/``arrived`` are the cards
    that went and came compared with the last accepted table.
    """

    accepted: bool
    changed: bool
    left: tuple[Card, ...]
    arrived: tuple[Card, ...]
    flags: tuple[Flag, ...]
    message: str


@dataclass(frozen=True)
class Ruling:
    """The referee's answer to a claim, a "no SET" call, a hint or an undo.

    ``points`` maps each player whose score changed to the change (+1 / -1).
    ``reason`` is the rules' explanation (`explain` for claims). ``hint`` is the 1-based position
    of the one card a hint revealed, if any.
    """

    kind: RulingKind
    message: str
    reason: str = ""
    points: dict[str, int] = field(default_factory=dict)
    hint: int | None = None


@dataclass(frozen=True)
class RoundScore:
    """One round of a game: who dealt and what each player scored in it."""

    number: int
    dealer: str
    scores: dict[str, int]
    finished: bool


@dataclass(frozen=True)
class Summary:
    """The end of a game: scores per player per round, totals, and the winner(s)."""

    players: tuple[str, ...]
    rounds: tuple[RoundScore, ...]
    totals: dict[str, int]
    winners: tuple[str, ...]
    complete: bool
    outcome: str | None  # solitaire: "won" / "lost" once the game is over
    ended: bool = False  # the game is over (complete, or ended early with `end`)

    def to_json(self) -> Event:
        return {
            "players": list(self.players),
            "rounds": [{"round": r.number, "dealer": r.dealer, "scores": dict(r.scores),
                        "finished": r.finished} for r in self.rounds],
            "totals": dict(self.totals),
            "winners": list(self.winners),
            "complete": self.complete,
            "outcome": self.outcome,
            "ended": self.ended,
        }

    def text(self) -> str:
        """A small table: one row per round, then totals and the winner."""
        width = max(len("dealer"), *(len(p) for p in self.players))
        columns = [max(5, len(p)) for p in self.players]
        lines = [f"{'round':<5}  {'dealer':<{width}}  " + "  ".join(p.rjust(w) for p, w in zip(self.players, columns))]
        for r in self.rounds:
            mark = "" if r.finished else " (unfinished)"
            lines.append(f"{r.number:<5}  {r.dealer:<{width}}  "
                         + "  ".join(f"{r.scores[p]:>{w}}" for p, w in zip(self.players, columns)) + mark)
        lines.append(f"{'total':<5}  {'':<{width}}  "
                     + "  ".join(f"{self.totals[p]:>{w}}" for p, w in zip(self.players, columns)))
        if len(self.players) == 1:
            player = self.players[0]
            result = {"won": "won", "lost": "lost"}.get(self.outcome or "", "not finished")
            lines.append(f"{player}: {self.totals[player]} point(s), solitaire {result}")
        elif len(self.winners) == 1:
            lead = "Winner" if self.ended else "Leading"
            lines.append(f"{lead}: {self.winners[0]} with {self.totals[self.winners[0]]}")
        else:
            lead = "Tie" if self.ended else "Level"
            lines.append(f"{lead}: {', '.join(self.winners)} with {self.totals[self.winners[0]]}")
        if self.ended and not self.complete:
            lines.append("(game ended before its last round was over)")
        return "\n".join(lines)


@dataclass
class _Action:
    """One scoring action passed to the engine, kept so the engine can be rebuilt with the cards
    the dealer really laid down once they are seen. ``cards``: the deal order (deal) or the three
    claimed cards (claim); ``dealt``: the cards seen arriving because of it, None until known."""

    kind: Literal["deal", "claim", "no_set"]
    player: str | None
    cards: tuple[Card, ...]
    dealt: tuple[Card, ...] | None = None


@dataclass
class _Pending:
    """The table change an accepted call is waiting for: these cards leave, this many arrive."""

    action: _Action
    to_leave: Counter[Card]
    to_arrive: int
    arrived: list[Card] = field(default_factory=list)


class Referee:
    """Referee one real game: the Python API behind ``setfinder referee``.

    :param players: names in seating order (the first deals first); one name means solitaire.
    :param match: play one round per player, the deal passing left (RULES.md "Longer game").
    :param easy: the 27-card easy deck (9 cards on the table).
    :param solitaire_reading: "penalty" (default) or "lose" (German sheet), one player only.
    :param clock: seconds since the epoch, for the log's times (default: ``time.time``).
    :param sink: called with each log event as it happens (e.g. to write JSON Lines).
    :raises ValueError: for bad players (empty, repeated).
    """

    def __init__(self, players: Sequence[str], *, match: bool = False, easy: bool = False,
                 solitaire_reading: SolitaireReading = "penalty",
                 clock: Callable[[], float] | None = None,
                 sink: Callable[[Event], None] | None = None) -> None:
        names = [p.strip() if isinstance(p, str) else p for p in players]
        self.options = GameOptions(easy=easy, match=match, solitaire_reading=solitaire_reading)
        self._game = Game(names, self.options, seed=_ENGINE_SEED)  # checks the names
        self.players: tuple[str, ...] = self._game.players
        self._clock = clock
        self._sink = sink
        self._actions: list[_Action] = []
        self._pending: _Pending | None = None
        self._table: tuple[SeenCard, ...] = ()
        self._size = (0, 0)
        self._ended = False  # `end` was called
        self._changed_since: list[bool] = []  # per action: has the table changed since it?
        self._events: list[Event] = []
        self._emit("start", players=list(self.players), options=self.options.to_json())

    # -- reading the state ----------------------------------------------------------------------
    @property
    def table(self) -> tuple[SeenCard, ...]:
        """The accepted table in position order: ``table[i]`` is position ``i + 1``."""
        return self._table

    @property
    def board(self) -> Board:
        """The accepted table as a `Board` (for verdicts and drawing)."""
        return Board(self._table, self._size[0], self._size[1])

    @property
    def scores(self) -> dict[str, int]:
        """Each player's SETs minus penalties over the whole game (the engine's count)."""
        return self._game.scores

    @property
    def round(self) -> int:
        return self._game.round

    @property
    def dealer(self) -> str:
        return self._game.dealer

    @property
    def pile_size(self) -> int:
        """Cards not yet dealt this round (exact once the latest deal has been seen)."""
        return self._game.pile_size

    @property
    def is_over(self) -> bool:
        """The game ended: its last round is over, or `end` was called."""
        return self._ended or self._game.is_over

    @property
    def waiting_for_deal(self) -> bool:
        """An accepted call awaits the table after the dealer has acted."""
        return self._pending is not None

    @property
    def events(self) -> list[Event]:
        """The log so far (copies), the same events given to ``sink``."""
        return [dict(event) for event in self._events]

    @property
    def engine_log(self) -> list[Event]:
        """The engine's own log (`Game.from_log` rebuilds the game from it)."""
        return self._game.log

    def status(self) -> str:
        """One line: round, dealer, cards on the table, pile, scores."""
        scores = ", ".join(f"{p} {s}" for p, s in self.scores.items())
        if self.is_over:
            state = "game over"
        elif self._game.phase != "playing":
            state = f"waiting for round {self._game.round + 1} to be dealt by {self.dealer}"
        else:
            state = (f"round {self.round}, dealer {self.dealer}, {len(self._table)} cards on the table, "
                     f"{self.pile_size} in the pile")
            if self._pending is not None:
                state += (", waiting for the deal" if self._pending.to_arrive
                          else ", waiting for the three cards to be taken away")
        return f"{state}; scores: {scores}"

    def table_text(self) -> str:
        """The table as numbered lines, "3: 2 red striped oval", uncertain cards marked."""
        lines = []
        for position, seen in enumerate(self._table, 1):
            mark = " (not wholly in view)" if seen.partial else " (uncertain)" if seen.uncertain else ""
            lines.append(f"{position:>2}: {seen.card}{mark}")
        return "\n".join(lines) if lines else "(no table seen yet)"

    # -- the table ------------------------------------------------------------------------------
    def observe(self, board: Board) -> Observation:
        """Take a new reading of the table (a photo, or a steady video frame).

        The first reading of a round with exactly 12 cards (9 with the easy deck) deals that
        round. Afterwards the reading is compared with the last accepted table; changes must be
        what the last accepted call makes the dealer do. Anything else is flagged and the last
        good table kept.
        """
        if not isinstance(board, Board):
            raise TypeError(f"observe needs a core.board.Board, got {type(board).__name__}")
        if self.is_over:
            return Observation(False, False, (), (), (), "The game is over.")
        seen = number_table(self._table, board.cards)
        if self._game.phase != "playing":
            return self._observe_deal(board, seen)
        seen, corrections = self._trust_confident_readings(seen)
        change = compare_tables(self._table, seen)
        if change.is_empty:
            readability_changed = _readability(seen) != _readability(self._table)
            self._table, self._size = seen, (board.width, board.height)
            message = "Same cards; readings updated." if readability_changed else "Same table."
            if readability_changed:  # matters to later calls, so the log keeps it
                self._emit_table(board, seen, "accepted", (), (), (), message)
            return Observation(True, False, (), (), (), message)
        # A correction is the same card read better: not a card leaving or arriving.
        left = list((Counter(change.left) - Counter(corrections.keys())).elements())
        arrived = list((Counter(change.arrived) - Counter(corrections.values())).elements())
        in_place = [pair for pair in change.in_place if pair not in corrections.items()]
        flags = self._check_change(seen, left, arrived, in_place)
        if not flags and corrections:
            flags = self._correct_actions(corrections)
        if flags:
            message = ("Table not accepted: " + " ".join(f.message for f in flags)
                       + " Keeping the last good table; show the table again.")
            if any(f.kind == "misread" for f in flags):
                message += " " + self._dispute({old for old, _ in in_place})
            self._emit_table(board, seen, "flagged", change.left, change.arrived, flags, message)
            return Observation(False, True, change.left, change.arrived, tuple(flags), message)
        self._table, self._size = seen, (board.width, board.height)
        notes = [f"Reading corrected: card {[s.card for s in seen].index(new) + 1} is {new}"
                 f" (was read, without confidence, as {old})." for old, new in corrections.items()]
        if left or arrived:
            self._changed_since = [True] * len(self._changed_since)
            notes.append(self._follow_deal(left, arrived))
        message = " ".join(notes)
        self._emit_table(board, seen, "accepted", change.left, change.arrived, (), message)
        return Observation(True, True, change.left, change.arrived, (), message)

    def _trust_confident_readings(self, seen: tuple[SeenCard, ...]
                                  ) -> tuple[tuple[SeenCard, ...], dict[Card, Card]]:
        """Where a card at the same place reads differently and nothing was taken from there,
        keep whichever reading was confident.

        Returns the reading with unsure re-readings of confidently read cards put back to their
        old value, and the corrections ``{old: new}`` of cards first read without confidence
        and now read with it.
        """
        before = {s.card: s for s in self._table}
        leaving = self._pending.to_leave if self._pending is not None else Counter()
        corrections: dict[Card, Card] = {}
        keep: dict[int, SeenCard] = {}
        for old, new in compare_tables(self._table, seen).in_place:
            if old in leaving:
                continue  # a taken card's place: the new card there is the dealer's replacement
            index = next(i for i, s in enumerate(seen) if s.card == new and i not in keep)
            was, now = before[old], seen[index]
            if not was.is_readable and now.is_readable:
                corrections[old] = new
            elif was.is_readable and not now.is_readable:
                keep[index] = replace(now, card=old, confidence=was.confidence, uncertain=False)
        if keep:
            seen = number_table(self._table, [keep.get(i, s) for i, s in enumerate(seen)])
        return seen, corrections

    def _dispute(self, cards: set[Card]) -> str:
        """Two views read these cards differently, so neither reading is trusted: mark them
        unsure on the accepted table. Claims naming them and "no SET" calls then wait for a
        clear view; the next confident reading settles each one (see `_trust_confident_readings`)."""
        self._table = tuple(replace(s, uncertain=True) if s.card in cards else s for s in self._table)
        disputed = [i + 1 for i, s in enumerate(self._table) if s.card in cards]
        several = len(disputed) > 1
        return (f"{'Cards' if several else 'Card'} {', '.join(map(str, disputed))} now"
                f" {'count' if several else 'counts'} as not read with confidence until a clear view"
                f" settles {'them' if several else 'it'}.")

    def _correct_actions(self, corrections: dict[Card, Card]) -> list[Flag]:
        """Tell the engine a card was misread all along: rewrite it in every action, replay.

        Safe for scores: a card read without confidence never took part in a scored call.
        """
        saved = [(a.cards, a.dealt) for a in self._actions]
        for action in self._actions:
            action.cards = tuple(corrections.get(c, c) for c in action.cards)
            if action.dealt is not None:
                action.dealt = tuple(corrections.get(c, c) for c in action.dealt)
        try:
            self._rebuild()
        except GameError as error:
            for action, (cards, dealt) in zip(self._actions, saved):
                action.cards, action.dealt = cards, dealt
            self._rebuild()
            return [Flag("misread", f"the corrected reading does not fit the game so far ({error}).")]
        return []

    def _observe_deal(self, board: Board, seen: tuple[SeenCard, ...]) -> Observation:
        """Between rounds (or before the first): wait for a full, new layout, then deal it."""
        size = self.options.base_table_size
        cards = tuple(s.card for s in seen)
        # The cards left when the round ended (and their last reading) are not a new deal.
        leftovers = (Counter(self._game.table), Counter(s.card for s in self._table))
        if len(cards) != size or (self._game.round > 0 and Counter(cards) in leftovers):
            message = (f"Waiting for round {self._game.round + 1}: {self.dealer} deals {size} cards"
                       f" ({len(cards)} seen).")
            return Observation(False, False, (), (), (), message)
        flags = [Flag("duplicate", _repeat_text(card, where)) for card, where in repeated_cards(seen).items()]
        deck = set(self.options.deck())
        flags += [Flag("not-in-deck", f"{card} is not in this game's deck.") for card in cards if card not in deck]
        if flags:
            message = "Deal not accepted: " + " ".join(f.message for f in flags)
            self._emit_table(board, seen, "flagged", (), cards, flags, message)
            return Observation(False, True, (), cards, tuple(flags), message)
        self._table, self._size = seen, (board.width, board.height)
        self._pending = None
        self._record(_Action("deal", self.dealer, cards))
        message = f"Round {self._game.round} dealt by {self._game.dealer}: {size} cards, positions 1-{size}."
        if self._game.phase != "playing":  # a layout without SET and nothing to deal (tiny decks only)
            message += " No SET and nothing left to deal: " + self._round_news()
        self._emit_table(board, seen, "accepted", (), cards, (), message)
        return Observation(True, True, (), cards, (), message)

    def _emit_table(self, board: Board, seen: Sequence[SeenCard], verdict: str, left: Sequence[Card],
                    arrived: Sequence[Card], flags: Sequence[Flag], message: str) -> None:
        self._emit("table", size=[board.width, board.height], seen=_seen_json(seen), verdict=verdict,
                   left=_names(left), arrived=_names(arrived),
                   flags=[{"kind": f.kind, "message": f.message} for f in flags], message=message)

    def _check_change(self, seen: Sequence[SeenCard], left: Sequence[Card], arrived: Sequence[Card],
                      in_place: Sequence[tuple[Card, Card]]) -> list[Flag]:
        flags = [Flag("duplicate", _repeat_text(card, where)) for card, where in repeated_cards(seen).items()]
        taken = {card: player for player, cards in self._game.collected.items() for card in cards}
        deck = set(self.options.deck())
        on_table = {s.card for s in self._table}
        for card in arrived:
            if card in taken:
                flags.append(Flag("returned", f"{card} was taken in {taken[card]}'s SET and is back on the"
                                              " table: a misreading, or a second deck."))
            elif card not in deck:
                flags.append(Flag("not-in-deck", f"{card} is not in this game's deck."))
        pending = self._pending
        if pending is None:
            misread = {old: new for old, new in in_place if old in on_table}
            for old, new in misread.items():
                flags.append(Flag("misread", f"the card read as {old} now reads {new}, and nothing was"
                                             " claimed: a likely misreading."))
            gone = [c for c in left if c not in misread]
            came = [c for c in arrived if c not in misread.values()]
            if gone or came:
                flags.append(Flag("unexpected-change", _change_text(gone, came)
                                  + " without an accepted call."))
            return flags
        extra = Counter(left) - pending.to_leave
        if extra:
            flags.append(Flag("not-claimed", f"the cards taken were not the claimed SET: {_cards_text(extra)}"
                                             f" left, but {_cards_text(pending.to_leave)} should have."))
        room = pending.to_arrive - len(pending.arrived)
        if len(arrived) > room:
            flags.append(Flag("wrong-deal", f"{_count_text(len(pending.arrived) + len(arrived))} dealt,"
                                            f" but the rules deal {_count_text(pending.to_arrive)} here."))
        return flags

    def _follow_deal(self, left: Sequence[Card], arrived: Sequence[Card]) -> str:
        """Count an accepted change towards the pending call; once complete, tell the engine."""
        pending = self._pending
        assert pending is not None  # _check_change flags any change without a pending call
        pending.to_leave -= Counter(left)
        pending.arrived.extend(arrived)
        if pending.to_leave or len(pending.arrived) < pending.to_arrive:
            still = []
            if pending.to_leave:
                still.append(f"{_cards_text(pending.to_leave)} to be taken away")
            if len(pending.arrived) < pending.to_arrive:
                still.append(f"{_count_text(pending.to_arrive - len(pending.arrived))} to be dealt")
            return "Table accepted; waiting for " + " and ".join(still) + "."
        self._pending = None
        phase = self._game.phase
        pending.action.dealt = tuple(pending.arrived)
        self._rebuild()
        message = f"Table accepted: {len(self._table)} cards, {self.pile_size} in the pile."
        if self._game.phase != phase and self._game.phase != "playing":
            message += " No SET left and the pile is empty: " + self._round_news()
        return message

    # -- calls ----------------------------------------------------------------------------------
    def claim(self, player: str, positions: Sequence[int]) -> Ruling:
        """``player`` called "SET" on the cards at these 1-based positions; judged at once.

        :raises RefereeError: unknown player, not three positions, a position not on the table or
            named twice, no round being played, or the table still being dealt. Nothing changes.
        """
        player = self._check_player(player)
        self._check_can_call()
        picked = self._check_positions(positions)
        seen = [self._table[p - 1] for p in picked]
        a, b, c = (s.card for s in seen)
        unsure = [p for p, s in zip(picked, seen) if not s.is_readable]
        claim_json = {"player": player, "positions": list(picked), "cards": _names([a, b, c])}
        if unsure:
            as_read = "a SET" if all(ok for _, ok, _ in feature_verdicts(a, b, c)) else "not a SET"
            message = (f"Cannot judge: {_positions_text(unsure)} not read with confidence; as read it is"
                       f" {as_read}. Show the cards more clearly and claim again. Scores unchanged.")
            ruling = Ruling("uncertain", message, explain(a, b, c))
            self._emit("claim", claim=claim_json, verdict="uncertain", reason=ruling.reason, message=message)
            return ruling
        phase = self._game.phase
        result = self._record(_Action("claim", player, (a, b, c)))
        assert isinstance(result, ClaimResult)
        reason = result.reason
        if result.is_set:
            message = f"SET! {player} +1"
            self._pending = _Pending(self._actions[-1], Counter((a, b, c)), len(result.replacements))
            if result.cancels_penalty:
                message += " (cancels a 'no SET' penalty)"
            if self._game.phase != phase:
                message += ". No SET left and the pile is empty: " + self._round_news()
            elif result.replacements:
                message += ". Take the three cards; dealer, deal three more."
            else:
                message += ". Take the three cards (no cards are dealt)."
            ruling = Ruling("set", message, reason, {player: 1})
        else:
            broken = ", ".join(f"{name} ({words})" for name, ok, words in feature_verdicts(a, b, c) if not ok)
            ruling = Ruling("not-a-set", f"Not a SET: {broken}. {player} -1", reason, {player: -1})
        self._emit("claim", claim=claim_json, verdict=ruling.kind, reason=reason, message=ruling.message,
                   points=ruling.points)
        return ruling

    def call_no_set(self, player: str | None = None, *, hint: bool = False) -> Ruling:
        """Someone says there is no SET on the table.

        Confirmed only when every card was read with confidence and none form a SET: the dealer
        then deals three more (with the pile empty, the round ends). Refused when a SET is there
        (``hint``: name one card of it). Otherwise the referee asks for a better view.

        :raises RefereeError: unknown player, no round being played, or the table being dealt.
        """
        if player is not None:
            player = self._check_player(player)
        self._check_can_call()
        board = self.board
        verdict = board.verdict
        if verdict == "uncertain":
            unsure = [i + 1 for i, s in enumerate(self._table) if not s.is_readable]
            reason = (f"{_positions_text(unsure)} not read with confidence" if unsure
                      else "no cards were read")
            message = f"Cannot confirm no SET: {reason}. Show the table more clearly and call again."
            self._emit("noset", claim={"player": player}, verdict="better-view", reason=reason, message=message)
            return Ruling("better-view", message, reason)
        if verdict == "sets":
            sets = board.certain_sets()
            reason = f"{len(sets)} SET{'s' if len(sets) > 1 else ''} on the table"
            message = "There is a SET."
            if hint:
                message += " " + self._hint_text(sets)
            self._emit("noset", claim={"player": player, "hint": hint}, verdict="refused", reason=reason, message=message)
            return Ruling("refused", message, reason, hint=sets[0][0] + 1 if hint else None)
        phase = self._game.phase
        n = len(self._table)
        result = self._record(_Action("no_set", player, ()))
        assert isinstance(result, NoSetResult)
        added = len(result.added)
        # Only solitaire "no SET" calls cost points, and the engine charges the one player.
        points = {self.players[0]: result.points} if result.points else {}
        if result.game_lost:
            message = f"No SET among {n}: the solitaire game is lost (German rule)."
        elif added:
            message = f"No SET among {n}: deal {_NUMBER_WORDS.get(added, str(added))} more"
            self._pending = _Pending(self._actions[-1], Counter(), added)
            for name, delta in points.items():
                message += f". {name} {delta:+d} (solitaire penalty)"
        else:
            message = f"No SET among {n} and the pile is empty"
            if self._game.phase != phase:
                message += ": " + self._round_news()
        ruling = Ruling("no-set", message, result.reason, points)
        self._emit("noset", claim={"player": player}, verdict="no-set", reason=ruling.reason,
                   message=message, points=points)
        return ruling

    def hint(self) -> Ruling:
        """Name one card that is in a SET (never more), or say there is none to show."""
        self._check_can_call()
        sets = self.board.certain_sets()
        if not sets:
            return Ruling("hint", "No SET among the cards read with confidence.")
        return Ruling("hint", self._hint_text(sets), hint=sets[0][0] + 1)

    def undo(self) -> Ruling:
        """Take back the last claim or "no SET" call, if the table has not changed since.

        :raises RefereeError: nothing to undo, or the table changed after the last call.
        """
        if self._ended:
            raise RefereeError("the game was ended: nothing can be undone")
        index = len(self._actions) - 1
        if index < 0 or self._actions[index].kind == "deal":
            raise RefereeError("nothing to undo: no claim or 'no SET' call since the deal")
        if self._changed_since[index]:
            raise RefereeError("the table changed after the last call: it can no longer be undone")
        action = self._actions.pop()
        self._changed_since.pop()
        self._pending = None
        self._rebuild()
        what = (f"{action.player}'s claim of {_cards_text(Counter(action.cards))}" if action.kind == "claim"
                else "the 'no SET' call")
        message = f"Undone: {what}. Scores: {_scores_text(self.scores)}"
        self._emit("undo", verdict="undone", reason=what, message=message)
        return Ruling("undo", message, what)

    def end(self) -> Summary:
        """End the game now (or acknowledge its end) and return the summary."""
        if not self._ended:
            self._ended = True
            summary = self.summary()
            self._emit("end", verdict="complete" if summary.complete else "ended early",
                       summary=summary.to_json(), message=summary.text())
        return self.summary()

    def summary(self) -> Summary:
        """Scores per player per round (from the engine's deals and round ends), totals, winners."""
        rounds: list[RoundScore] = []
        before = {p: 0 for p in self.players}
        dealer = ""
        finished = False
        for event in self._game.log:
            kind = event.get("type")
            if kind == "deal":
                dealer, finished = str(event.get("dealer", "")), False
            elif kind == "round_end":
                totals = _score_dict(event.get("scores"))
                rounds.append(RoundScore(int(str(event.get("round", len(rounds) + 1))), dealer,
                                         {p: totals[p] - before[p] for p in self.players}, True))
                before, finished = totals, True
        if self._game.round > len(rounds) and not finished:
            now = self.scores
            rounds.append(RoundScore(self._game.round, dealer, {p: now[p] - before[p] for p in self.players},
                                     False))
        complete = self._game.is_over
        return Summary(self.players, tuple(rounds), self.scores, tuple(self._game.winners), complete,
                       self._game.outcome, self.is_over)

    # -- internals ------------------------------------------------------------------------------
    def _check_player(self, player: str) -> str:
        name = player.strip() if isinstance(player, str) else player
        for known in self.players:
            if isinstance(name, str) and known.lower() == name.lower():
                return known
        raise RefereeError(f"unknown player {player!r}: the players are {', '.join(self.players)}")

    def _check_can_call(self) -> None:
        if self.is_over:
            raise RefereeError("the game is over: 'score' shows the result")
        if self._game.phase != "playing":
            size = self.options.base_table_size
            raise RefereeError(f"no round is being played: show the table after {self.dealer} deals {size} cards")
        if self._pending is not None:
            raise RefereeError("the table is being dealt: show it after the dealer has acted, then call")

    def _check_positions(self, positions: Sequence[int]) -> tuple[int, int, int]:
        picked = list(positions)
        if len(picked) != 3:
            raise RefereeError(f"a claim names three positions, got {len(picked)}")
        n = len(self._table)
        for p in picked:
            if not isinstance(p, int) or isinstance(p, bool) or not 1 <= p <= n:
                raise RefereeError(f"no card at position {p}: the table has positions 1 to {n}")
        for p in picked:
            if picked.count(p) > 1:
                raise RefereeError(f"position {p} is named twice: a SET is three different cards")
        return (picked[0], picked[1], picked[2])

    def _record(self, action: _Action) -> list[Card] | ClaimResult | NoSetResult:
        """Pass one action to the engine and remember it; returns the engine's result."""
        try:
            result = self._apply(self._game, action)
        except GameError as error:  # the engine and the table disagree: say so, change nothing
            raise RefereeError(f"the game engine refused this: {error}") from error
        self._actions.append(action)
        self._changed_since.append(False)
        return result

    def _rebuild(self) -> None:
        """Replay every action into a fresh engine: dealt cards seen later replace its guesses."""
        game = Game(self.players, self.options, seed=_ENGINE_SEED)
        for action in self._actions:
            self._apply(game, action)
        self._game = game

    @staticmethod
    def _apply(game: Game, action: _Action) -> list[Card] | ClaimResult | NoSetResult:
        dealt = list(action.dealt) if action.dealt else None
        if action.kind == "deal":
            return game.deal(list(action.cards))
        if action.kind == "claim":
            assert action.player is not None
            return game.claim(action.player, list(action.cards), dealt)
        return game.call_no_set(action.player, dealt)

    def _round_news(self) -> str:
        """"the game is over. ..." or "round 1 is over. ...", after the reason it ended."""
        scores = _scores_text(self.scores)
        if self._game.is_over:
            outcome = f" Solitaire {self._game.outcome}." if self._game.outcome else ""
            return f"the game is over.{outcome} Scores: {scores}"
        return f"round {self._game.round} is over. Scores: {scores}. Next dealer: {self.dealer}."

    def _hint_text(self, sets: Sequence[tuple[int, int, int]]) -> str:
        return f"Hint: card {sets[0][0] + 1} is in a SET."

    def _emit(self, kind: str, **fields: object) -> None:
        event: Event = {"time": _timestamp(self._clock), "event": kind, "round": self._game.round,
                        "board": [str(s.card) for s in self._table]}
        event.update(fields)
        event.setdefault("claim", None)
        event.setdefault("verdict", None)
        event.setdefault("reason", "")
        event["scores"] = dict(self._game.scores)
        self._events.append(event)
        if self._sink is not None:
            self._sink(dict(event))


# -- the log --------------------------------------------------------------------------------------
def write_event(stream: IO[str], event: Event) -> None:
    """Write one log event as a JSON line and flush, so a crash loses nothing."""
    stream.write(json.dumps(event, ensure_ascii=False) + "\n")
    stream.flush()


def read_log(lines: Iterable[str]) -> list[Event]:
    """Parse a JSON Lines log (blank lines skipped).

    :raises ValueError: naming the line that is not a JSON object.
    """
    events: list[Event] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"log line {number} is not JSON: {error.msg}") from None
        if not isinstance(event, dict):
            raise ValueError(f"log line {number} is not a JSON object")
        events.append(event)
    return events


def replay(events: Iterable[Event]) -> Referee:
    """Rebuild a referee by feeding a log's readings and calls back in order.

    The scores (and every verdict) come out as the rules give them, not as the log says, so
    comparing ``replay(log).scores`` with the log's last ``scores`` checks the record.

    :raises ValueError: if the log does not start with a "start" event.
    """
    items = list(events)
    if not items or items[0].get("event") != "start":
        raise ValueError("a referee log starts with a 'start' event")
    start = items[0]
    options = start.get("options")
    players = start.get("players")
    if not isinstance(options, dict) or not isinstance(players, list):
        raise ValueError("the 'start' event lacks players or options")
    game_options = GameOptions.from_json(options)
    referee = Referee([str(p) for p in players], match=game_options.match, easy=game_options.easy,
                      solitaire_reading=game_options.solitaire_reading)
    for event in items[1:]:
        kind = event.get("event")
        claim = event.get("claim") if isinstance(event.get("claim"), dict) else {}
        assert isinstance(claim, dict)
        if kind == "table":
            referee.observe(board_from_json(event))
        elif kind == "claim":
            positions = claim.get("positions")
            if not isinstance(positions, list):
                raise ValueError(f"claim event without positions: {event!r}")
            referee.claim(str(claim.get("player")), [int(p) for p in positions])
        elif kind == "noset":
            who = claim.get("player")
            referee.call_no_set(str(who) if who is not None else None, hint=bool(claim.get("hint", False)))
        elif kind == "undo":
            referee.undo()
        elif kind == "end":
            referee.end()
    return referee


def board_from_json(data: Event) -> Board:
    """The Board recorded in a "table" event (``seen``), or in a `setfinder find --json` line
    (``cards`` with count/color/shading/shape): cards in the order listed, with their corners.

    :raises ValueError: if a card or its corners cannot be read.
    """
    items = data.get("seen", data.get("cards"))
    if not isinstance(items, list):
        raise ValueError("a board needs a list of cards ('seen' or 'cards')")
    cards = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"a card must be a JSON object, got {item!r}")
        if "card" in item:
            card = Card.parse(str(item["card"]))
        else:
            card = Card.from_attributes(count=int(item["count"]), color=str(item["color"]),
                                        shading=str(item["shading"]), shape=str(item["shape"]))
        points = item.get("corners")
        if not isinstance(points, list) or len(points) != 4:
            raise ValueError(f"{card} needs four corners [[x, y] x4], got {points!r}")
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = ((float(x), float(y)) for x, y in points)
        cards.append(SeenCard(card, ((x0, y0), (x1, y1), (x2, y2), (x3, y3)),
                              float(item.get("confidence", 1.0)), partial=bool(item.get("partial", False)),
                              uncertain=bool(item.get("uncertain", False))))
    size = data.get("size")
    if isinstance(size, list) and len(size) == 2:
        width, height = int(size[0]), int(size[1])
    else:
        width, height = int(str(data.get("width", 0))), int(str(data.get("height", 0)))
    return Board(tuple(cards), width, height)


# -- helpers --------------------------------------------------------------------------------------
def _seen_json(seen: Sequence[SeenCard]) -> list[dict[str, object]]:
    return [{"card": str(s.card), "corners": [[round(x, 1), round(y, 1)] for x, y in s.corners],
             "confidence": round(s.confidence, 3), "partial": s.partial, "uncertain": s.uncertain}
            for s in seen]


def _readability(seen: Sequence[SeenCard]) -> list[tuple[Card, bool, bool]]:
    return [(s.card, s.partial, s.uncertain) for s in seen]


def _names(cards: Iterable[Card]) -> list[str]:
    return [str(card) for card in cards]


def _cards_text(cards: Counter[Card]) -> str:
    return ", ".join(str(card) for card in sorted(cards.elements()))


def _count_text(n: int) -> str:
    return f"{n} card" + ("" if n == 1 else "s")


def _positions_text(positions: Sequence[int]) -> str:
    if len(positions) == 1:
        return f"card {positions[0]} was"
    return "cards " + ", ".join(map(str, positions)) + " were"


def _repeat_text(card: Card, where: Sequence[int]) -> str:
    return (f"{card} is read at positions {', '.join(map(str, where))}: one deck has each card once,"
            " so this is a misreading or a second deck.")


def _change_text(gone: Sequence[Card], came: Sequence[Card]) -> str:
    parts = []
    if gone:
        parts.append(f"{_cards_text(Counter(gone))} left")
    if came:
        parts.append(f"{_cards_text(Counter(came))} arrived")
    return " and ".join(parts)


def _scores_text(scores: dict[str, int]) -> str:
    return ", ".join(f"{p} {s}" for p, s in scores.items())


def _score_dict(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        raise ValueError(f"expected scores in the engine log, got {value!r}")
    return {str(p): int(s) for p, s in value.items()}


def _timestamp(clock: Callable[[], float] | None) -> str:
    seconds = clock() if clock is not None else datetime.datetime.now(datetime.timezone.utc).timestamp()
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
