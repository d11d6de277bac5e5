"""The rules of 358 "Sargento mayor": three players, a 52-card French deck, trick targets 8-5-3.

Standard library only. The rules are RULES.md's "358" section; where the sheet is silent or can
be read two ways, `Rules358` holds the choice and its default is the sheet's reading:

==================  =====================  ======================================================
option              default                alternatives
==================  =====================  ======================================================
``announcer``       ``"dealer"``           ``"left"``, ``"right"``: the sheet does not say who
                                           names trumps; the usual rule is the dealer (target 8).
``first_lead``      ``"announcer"``        ``"left"`` (eldest hand, the common English rule),
                                           ``"right"`` (the sheet calls the player on the dealer's
                                           right "first", i.e. *mano*), ``"dealer"``.
``kitty_order``     ``"discard-first"``    ``"take-first"``: the sheet has the announcer set aside
                                           4 cards and then take the kitty unseen; many tables
                                           let the announcer take the kitty into hand first and
                                           then discard any 4 of the 20.
``session_hands``   ``3``                  any positive number: the sheet does not say how long a
                                           session is; one round (every player deals once, as in
                                           the SET sheet's longer game) is the default.
``sudden_win``      ``None`` (off)         e.g. ``12``: the common English rule that taking that
                                           many tricks in one hand wins the session at once.
==================  =====================  ======================================================

On who leads trick 1 the sheet reads two ways: its play section says the announcer leads, while
its targets line calls the player on the dealer's right "first" (the Spanish *mano*, who leads
in the sheet's counter-clockwise tradition). The engine follows the play section by default and
offers the other reading, and the common English rule (dealer's left leads), as options. The
exchange's "the one with the higher target exchanges first" uses the targets of the hand about
to be played, since those are the seats' targets when the exchange happens.

Seats are 0, 1, 2 in the direction of play, which is clockwise: seat ``s + 1`` sits on the left
of seat ``s`` and plays after it. For a hand dealt by seat ``d`` the targets are dealer 8,
dealer's left ``d + 1`` 5, dealer's right ``d + 2`` 3; the next hand is dealt by ``d + 1``.

A `Hand358` changes in place, python-chess style: `legal_actions`, `push` (or the named
`pass_card`, `announce`, `discard`, `play`) and `pop` to undo. Every illegal action raises a
subclass of `Rule358Error` whose message names the rule broken. `Hand358.view_for(seat)` is what
one player may see: their hand, the table, the tricks played, their own exchanges and discards.

>>> hand = Hand358.deal(dealer=0, rng=random.Random(7))
>>> hand.phase, hand.to_move, hand.targets
('announce', 0, (8, 5, 3))
>>> hand.announce(Suit.SPADES)
>>> hand.phase
'discard'
>>> str(PlayingCard.parse("10h")), PlayingCard.parse("10♥").code
('10♥', '10h')
"""

from __future__ import annotations

import enum
import functools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

Seat = int  # 0, 1, 2 in the direction of play (clockwise)
SEATS: Final = (0, 1, 2)
Role = Literal["dealer", "left", "right"]
ROLES: Final[tuple[Role, ...]] = ("dealer", "left", "right")
ROLE_TARGETS: Final[dict[Role, int]] = {"dealer": 8, "left": 5, "right": 3}

DECK_SIZE: Final = 52
HAND_SIZE: Final = 16
KITTY_SIZE: Final = 4
TRICKS_PER_HAND: Final = 16
RANKS: Final = tuple(range(2, 15))  # 2 .. 10, J=11, Q=12, K=13, A=14; higher is stronger

Phase = Literal["exchange", "announce", "discard", "play", "over"]
ActionKind = Literal["pass", "announce", "discard", "play"]
FirstLead = Literal["announcer", "dealer", "left", "right"]
KittyOrder = Literal["discard-first", "take-first"]


# -- errors ---------------------------------------------------------------------------------------
class Rule358Error(ValueError):
    """An action that the rules of 358 forbid; the message names the rule."""


class OutOfTurnError(Rule358Error):
    """A player acted when it was another player's turn."""


class WrongPhaseError(Rule358Error):
    """An action that belongs to another phase of the hand (e.g. playing before trumps are named)."""


class CardNotHeldError(Rule358Error):
    """A player passed, discarded or played a card that is not in their hand."""


class MustFollowSuitError(Rule358Error):
    """A player who holds the suit led played another suit."""


class SessionOverError(Rule358Error):
    """Asked to deal after the session ended, or before the hand in play was finished."""


class PlayingCardParseError(ValueError):
    """Text that does not name a playing card (not a rules error: a reading error)."""


# -- seats ----------------------------------------------------------------------------------------
def left_of(seat: Seat) -> Seat:
    """The player on ``seat``'s left, who plays next (play is clockwise)."""
    return (seat + 1) % 3


def right_of(seat: Seat) -> Seat:
    """The player on ``seat``'s right, who played just before."""
    return (seat + 2) % 3


def seat_of(role: Role, dealer: Seat) -> Seat:
    """The seat holding ``role`` ("dealer", "left", "right") when ``dealer`` deals."""
    return (dealer + ROLES.index(role)) % 3


def role_of(seat: Seat, dealer: Seat) -> Role:
    """The role of ``seat`` ("dealer", "left" or "right") when ``dealer`` deals."""
    return ROLES[(seat - dealer) % 3]


def targets_for(dealer: Seat) -> tuple[int, int, int]:
    """Each seat's target for a hand dealt by ``dealer``: dealer 8, left 5, right 3 (sum 16)."""
    _check_seat(dealer, "dealer")
    return (ROLE_TARGETS[role_of(0, dealer)], ROLE_TARGETS[role_of(1, dealer)],
            ROLE_TARGETS[role_of(2, dealer)])


def _check_seat(seat: object, name: str = "seat") -> None:
    if not isinstance(seat, int) or isinstance(seat, bool) or seat not in SEATS:
        raise ValueError(f"{name} must be 0, 1 or 2, got {seat!r}")


# -- cards ----------------------------------------------------------------------------------------
class Suit(enum.IntEnum):
    """The four French suits. The int value is only an index; no suit outranks another."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self.value]

    @property
    def letter(self) -> str:
        return "cdhs"[self.value]

    @property
    def label(self) -> str:
        """The suit's English name, plural: "spades"."""
        return self.name.lower()

    @property
    def is_red(self) -> bool:
        return self in (Suit.DIAMONDS, Suit.HEARTS)

    @staticmethod
    def parse(text: str) -> Suit:
        """Read a suit from "s", "S", "♠", "♤", "spade" or "spades" (any case).

        :raises PlayingCardParseError: when the text names no suit.
        """
        key = text.strip().lower() if isinstance(text, str) else ""
        suit = _SUIT_WORDS.get(key) or _SUIT_WORDS.get(key.rstrip("s"))
        if suit is None:
            raise PlayingCardParseError(f"not a suit: {text!r} (write s, h, d, c, a symbol, or the name)")
        return suit


_SUIT_WORDS: Final[dict[str, Suit]] = {}
for _suit, _symbols in ((Suit.CLUBS, "♣♧"), (Suit.DIAMONDS, "♦♢"), (Suit.HEARTS, "♥♡"),
                        (Suit.SPADES, "♠♤")):
    for _word in (_suit.letter, _suit.label, _suit.label[:-1], *_symbols):
        _SUIT_WORDS[_word] = _suit

# The order in which the sheet lists the trump announcements.
TRUMP_SUITS: Final = (Suit.SPADES, Suit.DIAMONDS, Suit.HEARTS, Suit.CLUBS)

_RANK_NAMES: Final = {11: "J", 12: "Q", 13: "K", 14: "A"}
_RANK_WORDS: Final = {**{str(r): r for r in range(2, 11)}, "t": 10, "j": 11, "q": 12, "k": 13, "a": 14}


def rank_name(rank: int) -> str:
    """"2" .. "10", "J", "Q", "K", "A"."""
    return _RANK_NAMES.get(rank, str(rank))


@functools.total_ordering
@dataclass(frozen=True, eq=True)
class PlayingCard:
    """One card of the French deck: ``rank`` 2..14 (J=11, Q=12, K=13, A=14) and ``suit``.

    Hashable and small; ordered by ``index`` (suit, then rank) so hands sort stably. Strength
    inside a suit is the rank: A high, 2 low. Text forms round-trip: ``str(card)`` is "10♥",
    ``card.code`` is "10h", and `parse` reads both as well as "AS", "Th", "q♠".
    """

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not isinstance(self.rank, int) or isinstance(self.rank, bool) or self.rank not in RANKS:
            raise ValueError(f"rank must be an int in 2..14 (J=11, Q=12, K=13, A=14), got {self.rank!r}")
        if not isinstance(self.suit, Suit):
            raise ValueError(f"suit must be a Suit, got {self.suit!r}")

    @property
    def index(self) -> int:
        """0..51: ``13 * suit + rank - 2``."""
        return 13 * int(self.suit) + self.rank - 2

    @staticmethod
    def from_index(index: int) -> PlayingCard:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < DECK_SIZE:
            raise ValueError(f"card index must be an int in 0..51, got {index!r}")
        return _DECK[index]

    @staticmethod
    def parse(text: str) -> PlayingCard:
        """Read "10♥", "10h", "Th", "AS", "q♠" (rank then suit, any case, spaces ignored).

        :raises PlayingCardParseError: saying how to write a card.
        """
        if not isinstance(text, str):
            raise PlayingCardParseError(f"card text must be a string, got {type(text).__name__}")
        compact = "".join(text.split())
        if len(compact) >= 2:
            rank = _RANK_WORDS.get(compact[:-1].lower())
            suit = _SUIT_WORDS.get(compact[-1].lower())
            if rank is not None and suit is not None:
                return _DECK[13 * int(suit) + rank - 2]
        raise PlayingCardParseError(f"not a card: {text!r} (write the rank then the suit, e.g. 10h, AS, Q♠)")

    @property
    def code(self) -> str:
        """ASCII form, "10h", "As": what a player can type."""
        return f"{rank_name(self.rank)}{self.suit.letter}"

    def __str__(self) -> str:
        return f"{rank_name(self.rank)}{self.suit.symbol}"

    def __repr__(self) -> str:
        return f"PlayingCard.parse({self.code!r})"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PlayingCard):
            return NotImplemented
        return self.index < other.index


_DECK: Final = tuple(PlayingCard(rank, suit) for suit in Suit for rank in RANKS)


def french_deck() -> list[PlayingCard]:
    """The 52 cards, clubs 2..A, diamonds, hearts, spades (index order)."""
    return list(_DECK)


def parse_cards(text: str) -> list[PlayingCard]:
    """Cards separated by spaces or commas: ``parse_cards("AS 10h 2♦")``."""
    return [PlayingCard.parse(word) for word in text.replace(",", " ").split()]


def sort_for_display(cards: Iterable[PlayingCard]) -> list[PlayingCard]:
    """Suits alternating in colour (spades, hearts, clubs, diamonds), strongest first."""
    suit_order = {Suit.SPADES: 0, Suit.HEARTS: 1, Suit.CLUBS: 2, Suit.DIAMONDS: 3}
    return sorted(cards, key=lambda c: (suit_order[c.suit], -c.rank))


# -- tricks ---------------------------------------------------------------------------------------
def winning_index(cards: Sequence[PlayingCard], trump: Suit | None) -> int:
    """Which of ``cards`` (in play order, first = led) wins so far: the strongest trump, else the
    strongest card of the suit led. Works on a partial trick too."""
    if not cards:
        raise ValueError("a trick needs at least one card")
    best = 0  # the winning card so far is always of the suit led or a trump
    for i, card in enumerate(cards[1:], 1):
        top = cards[best]
        if card.suit == top.suit:
            if card.rank > top.rank:
                best = i
        elif card.suit == trump:  # the first trump on a trick led in another suit
            best = i
        # any other card is off-suit and cannot win, however strong
    return best


def trick_winner(leader: Seat, cards: Sequence[PlayingCard], trump: Suit | None) -> Seat:
    """The seat winning a trick led by ``leader`` with ``cards`` in play order."""
    _check_seat(leader, "leader")
    return (leader + winning_index(cards, trump)) % 3


@dataclass(frozen=True)
class Trick:
    """A completed trick: three cards in play order, the first led by ``leader``."""

    leader: Seat
    cards: tuple[PlayingCard, PlayingCard, PlayingCard]
    trump: Suit

    @property
    def winner(self) -> Seat:
        return trick_winner(self.leader, self.cards, self.trump)

    @property
    def led_suit(self) -> Suit:
        return self.cards[0].suit

    @property
    def plays(self) -> tuple[tuple[Seat, PlayingCard], ...]:
        """(seat, card) in play order."""
        return tuple(((self.leader + i) % 3, card) for i, card in enumerate(self.cards))

    def card_of(self, seat: Seat) -> PlayingCard:
        return self.cards[(seat - self.leader) % 3]


# -- the exchange between hands -------------------------------------------------------------------
@dataclass(frozen=True)
class Transfer:
    """``giver`` (who was "+") passes ``count`` cards, one at a time, to ``receiver`` (who was "-")."""

    giver: Seat
    receiver: Seat
    count: int


def exchange_plan(previous_points: Sequence[int], targets: Sequence[int]) -> tuple[Transfer, ...]:
    """Who passes how many cards to whom before this hand, from each seat's +/- last hand.

    Each "+" player passes one card per point over target; each "-" player receives one card per
    point under. Points sum to zero, so with three players there is either one "+" (passing to
    each "-" as many cards as that player was down) or one "-" (receiving from each "+" as many as
    that player was up). Order: the "+" player with the higher target *in this hand* exchanges
    first (RULES.md); within one giver, the "-" player with the higher target receives first.

    >>> exchange_plan((2, -1, -1), (3, 8, 5))
    (Transfer(giver=0, receiver=1, count=1), Transfer(giver=0, receiver=2, count=1))
    """
    if len(previous_points) != 3 or len(targets) != 3:
        raise ValueError("exchange_plan needs three points and three targets")
    if sum(previous_points) != 0:
        raise ValueError(f"points of a hand sum to zero, got {tuple(previous_points)!r}")
    by_target = sorted(SEATS, key=lambda s: -targets[s])
    givers = [s for s in by_target if previous_points[s] > 0]
    receivers = [s for s in by_target if previous_points[s] < 0]
    plan: list[Transfer] = []
    if len(givers) == 1:
        plan = [Transfer(givers[0], r, -previous_points[r]) for r in receivers]
    elif len(receivers) == 1:
        plan = [Transfer(g, receivers[0], previous_points[g]) for g in givers]
    return tuple(plan)


def exchange_return(receiver_hand: Iterable[PlayingCard], passed: PlayingCard) -> PlayingCard:
    """The card the "-" player must give back for ``passed``: their strongest card of its suit if
    that is stronger than ``passed``, otherwise ``passed`` itself (RULES.md: "the card passed")."""
    same_suit = [c for c in receiver_hand if c.suit == passed.suit and c != passed]
    strongest = max(same_suit, key=lambda c: c.rank, default=None)
    return strongest if strongest is not None and strongest.rank > passed.rank else passed


@dataclass(frozen=True)
class Exchange:
    """One card of the exchange: ``passed`` from giver to receiver, ``returned`` back."""

    giver: Seat
    receiver: Seat
    passed: PlayingCard
    returned: PlayingCard

    @property
    def bounced(self) -> bool:
        """The receiver held nothing stronger in that suit, so the card came back."""
        return self.passed == self.returned


# -- rules options --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rules358:
    """The choices where RULES.md is silent or ambiguous; each default is the sheet's reading
    (see the module docstring for the alternatives and where they come from)."""

    announcer: Role = "dealer"
    first_lead: FirstLead = "announcer"
    kitty_order: KittyOrder = "discard-first"
    session_hands: int = 3
    sudden_win: int | None = None

    def __post_init__(self) -> None:
        if self.announcer not in ROLES:
            raise ValueError(f"announcer must be one of {', '.join(ROLES)}; got {self.announcer!r}")
        if self.first_lead not in ("announcer", *ROLES):
            raise ValueError(f"first_lead must be announcer, dealer, left or right; got {self.first_lead!r}")
        if self.kitty_order not in ("discard-first", "take-first"):
            raise ValueError(f"kitty_order must be discard-first or take-first; got {self.kitty_order!r}")
        if not isinstance(self.session_hands, int) or self.session_hands < 1:
            raise ValueError(f"session_hands must be a positive int, got {self.session_hands!r}")
        if self.sudden_win is not None and not 6 <= self.sudden_win <= TRICKS_PER_HAND:
            raise ValueError(f"sudden_win must be None or 6..16 tricks, got {self.sudden_win!r}")


# -- actions --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    """One step of a hand: pass a card in the exchange, announce trumps, discard, or play.

    Use the constructors: ``Action.play(card)``, ``Action.pass_card(card)``,
    ``Action.announce(suit)``, ``Action.discard(card)``.
    """

    kind: ActionKind
    card: PlayingCard | None = None
    suit: Suit | None = None

    def __post_init__(self) -> None:
        if self.kind == "announce":
            if not isinstance(self.suit, Suit) or self.card is not None:
                raise ValueError("an announce action names a suit and no card")
        elif self.kind in ("pass", "discard", "play"):
            if not isinstance(self.card, PlayingCard) or self.suit is not None:
                raise ValueError(f"a {self.kind} action names one card and no suit")
        else:
            raise ValueError(f"action kind must be pass, announce, discard or play; got {self.kind!r}")

    @staticmethod
    def play(card: PlayingCard) -> Action:
        return Action("play", card=card)

    @staticmethod
    def pass_card(card: PlayingCard) -> Action:
        return Action("pass", card=card)

    @staticmethod
    def announce(suit: Suit) -> Action:
        return Action("announce", suit=suit)

    @staticmethod
    def discard(card: PlayingCard) -> Action:
        return Action("discard", card=card)

    def __str__(self) -> str:
        if self.kind == "announce":
            assert self.suit is not None
            return f"announce {self.suit.symbol} {self.suit.label}"
        return f"{self.kind} {self.card}"


# -- results and views ----------------------------------------------------------------------------
@dataclass(frozen=True)
class HandResult:
    """The outcome of one finished hand."""

    dealer: Seat
    announcer: Seat
    trump: Suit
    targets: tuple[int, int, int]
    tricks_won: tuple[int, int, int]
    trick_winners: tuple[Seat, ...]  # winner of trick 1 .. 16

    @property
    def points(self) -> tuple[int, int, int]:
        """Up (+) or down (-) for each seat: tricks taken minus target. Sums to zero."""
        t, w = self.targets, self.tricks_won
        return (w[0] - t[0], w[1] - t[1], w[2] - t[2])


@dataclass(frozen=True)
class HandView:
    """What ``seat`` may see of a hand: own cards, the table, the tricks played, the exchanges
    this seat took part in, and (for the announcer) the own discards and the kitty once taken.
    The other hands, the kitty before it is taken, and others' discards are never here."""

    seat: Seat
    dealer: Seat
    announcer: Seat
    targets: tuple[int, int, int]
    previous_points: tuple[int, int, int] | None
    phase: Phase
    to_move: Seat | None
    trump: Suit | None
    hand: tuple[PlayingCard, ...]
    hand_sizes: tuple[int, int, int]
    kitty_size: int
    kitty_taken: tuple[PlayingCard, ...]  # only for the announcer, once taken
    discards: tuple[PlayingCard, ...]  # only for the announcer
    exchanges: tuple[Exchange, ...]  # only those this seat gave or received
    pending_exchange: Transfer | None  # the transfer under way, cards still to pass
    tricks: tuple[Trick, ...]
    leader: Seat
    current_trick: tuple[tuple[Seat, PlayingCard], ...]
    tricks_won: tuple[int, int, int]
    legal_actions: tuple[Action, ...]  # empty unless it is this seat's turn

    @property
    def played_cards(self) -> frozenset[PlayingCard]:
        """Every card face up on the table so far (completed tricks and the current one)."""
        cards = {c for trick in self.tricks for c in trick.cards}
        cards.update(c for _, c in self.current_trick)
        return frozenset(cards)

    def unseen_cards(self) -> frozenset[PlayingCard]:
        """Cards this seat has not seen: in the others' hands, or in the kitty / others' discards."""
        return frozenset(_DECK) - set(self.hand) - self.played_cards - set(self.discards)


@dataclass(frozen=True)
class _Step:
    """What `Hand358.pop` needs to undo one action."""

    action: Action
    seat: Seat
    exchange: Exchange | None = None
    took_kitty: bool = False
    closed: Trick | None = None


# -- one hand -------------------------------------------------------------------------------------
class Hand358:
    """One deal of 358, from the exchange to the last trick. Changes in place; `pop` undoes.

    Phases in order (RULES.md "Order after the deal"): ``exchange`` (only when the previous hand
    left someone "+"), ``announce``, ``discard`` (the kitty exchange), ``play``, ``over``.
    ``to_move`` is whose action it is. The engine itself sees everything; players get `view_for`.
    """

    def __init__(self, dealer: Seat, hands: Sequence[Iterable[PlayingCard]], kitty: Iterable[PlayingCard],
                 *, rules: Rules358 | None = None,
                 previous_points: Sequence[int] | None = None) -> None:
        """A hand with a known deal (``hands[seat]``, 16 cards each, and the 4-card kitty).

        :raises ValueError: unless the deal is exactly the 52 cards, 16 / 16 / 16 / 4.
        """
        _check_seat(dealer, "dealer")
        self.rules = rules or Rules358()
        self.dealer: Seat = dealer
        self.targets = targets_for(dealer)
        self.announcer: Seat = seat_of(self.rules.announcer, dealer)
        self._hands = [set(cards) for cards in hands]
        self._kitty_cards = tuple(kitty)
        if len(self._hands) != 3 or any(len(h) != HAND_SIZE for h in self._hands):
            raise ValueError(f"a deal is three hands of {HAND_SIZE} cards, got sizes "
                             f"{[len(h) for h in self._hands]}")
        if len(self._kitty_cards) != KITTY_SIZE:
            raise ValueError(f"the kitty has {KITTY_SIZE} cards, got {len(self._kitty_cards)}")
        dealt = [c for h in self._hands for c in h] + list(self._kitty_cards)
        if len(set(dealt)) != DECK_SIZE:
            raise ValueError("a deal must use each of the 52 cards exactly once")
        self.previous_points: tuple[int, int, int] | None = None
        self._plan: tuple[Transfer, ...] = ()
        if previous_points is not None:
            if len(previous_points) != 3:
                raise ValueError("previous_points needs one number per seat")
            self.previous_points = (previous_points[0], previous_points[1], previous_points[2])
            self._plan = exchange_plan(self.previous_points, self.targets)
        # One (giver, receiver) per card to pass, in order.
        self._exchange_queue = [(t.giver, t.receiver) for t in self._plan for _ in range(t.count)]
        self.exchanges: list[Exchange] = []
        self.trump: Suit | None = None
        self.kitty_taken = False
        self._discards: list[PlayingCard] = []
        self.tricks: list[Trick] = []
        self._current: list[PlayingCard] = []
        self._history: list[_Step] = []

    @classmethod
    def deal(cls, dealer: Seat, rng: random.Random, *, rules: Rules358 | None = None,
             previous_points: Sequence[int] | None = None) -> Hand358:
        """Shuffle with ``rng`` and deal one card at a time clockwise from the dealer's left;
        the last 4 cards are the kitty."""
        _check_seat(dealer, "dealer")
        deck = french_deck()
        rng.shuffle(deck)
        hands: list[list[PlayingCard]] = [[], [], []]
        for i, card in enumerate(deck[:3 * HAND_SIZE]):
            hands[(dealer + 1 + i) % 3].append(card)
        return cls(dealer, hands, deck[3 * HAND_SIZE:], rules=rules, previous_points=previous_points)

    def __repr__(self) -> str:
        trump = self.trump.symbol if self.trump is not None else "-"
        return (f"<Hand358 dealer={self.dealer} phase={self.phase} to_move={self.to_move} "
                f"trump={trump} tricks={len(self.tricks)}/16 won={self.tricks_won}>")

    # -- state questions ---------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        if len(self.exchanges) < len(self._exchange_queue):
            return "exchange"
        if self.trump is None:
            return "announce"
        if len(self._discards) < KITTY_SIZE:
            return "discard"
        if len(self.tricks) < TRICKS_PER_HAND:
            return "play"
        return "over"

    def is_over(self) -> bool:
        return self.phase == "over"

    @property
    def exchange_plan(self) -> tuple[Transfer, ...]:
        return self._plan

    @property
    def first_leader(self) -> Seat:
        """Who leads trick 1 under ``rules.first_lead``."""
        if self.rules.first_lead == "announcer":
            return self.announcer
        return seat_of(self.rules.first_lead, self.dealer)

    @property
    def leader(self) -> Seat:
        """Who leads (or led) the trick in progress: the winner of the last trick."""
        return self.tricks[-1].winner if self.tricks else self.first_leader

    @property
    def to_move(self) -> Seat | None:
        phase = self.phase
        if phase == "exchange":
            return self._exchange_queue[len(self.exchanges)][0]
        if phase in ("announce", "discard"):
            return self.announcer
        if phase == "play":
            return (self.leader + len(self._current)) % 3
        return None

    @property
    def pending_exchange(self) -> Transfer | None:
        """The transfer under way, with the count of cards still to pass in it."""
        done = len(self.exchanges)
        if done >= len(self._exchange_queue):
            return None
        giver, receiver = self._exchange_queue[done]
        left = sum(1 for pair in self._exchange_queue[done:] if pair == (giver, receiver))
        return Transfer(giver, receiver, left)

    def cards_of(self, seat: Seat) -> frozenset[PlayingCard]:
        """The cards ``seat`` holds now (omniscient: for the engine and tests, not for players)."""
        _check_seat(seat)
        return frozenset(self._hands[seat])

    @property
    def kitty(self) -> tuple[PlayingCard, ...]:
        """The kitty still on the table (empty once taken). Omniscient."""
        return () if self.kitty_taken else self._kitty_cards

    @property
    def discards(self) -> tuple[PlayingCard, ...]:
        """The announcer's discards. Omniscient."""
        return tuple(self._discards)

    @property
    def current_trick(self) -> tuple[tuple[Seat, PlayingCard], ...]:
        leader = self.leader
        return tuple(((leader + i) % 3, c) for i, c in enumerate(self._current))

    @property
    def tricks_won(self) -> tuple[int, int, int]:
        won = [0, 0, 0]
        for trick in self.tricks:
            won[trick.winner] += 1
        return (won[0], won[1], won[2])

    @property
    def history(self) -> tuple[tuple[Seat, Action], ...]:
        """Every action so far as (seat, action), oldest first."""
        return tuple((step.seat, step.action) for step in self._history)

    # -- legal actions ------------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        """Every action the player to move may take now (empty once the hand is over)."""
        phase, seat = self.phase, self.to_move
        if seat is None:
            return []
        if phase == "announce":
            return [Action.announce(s) for s in TRUMP_SUITS]
        if phase == "play":
            return [Action.play(c) for c in self.legal_plays()]
        kind: ActionKind = "pass" if phase == "exchange" else "discard"
        return [Action(kind, card=c) for c in sorted(self._hands[seat])]

    def legal_plays(self) -> list[PlayingCard]:
        """The cards the player to move may play: the suit led if they hold it, else any card."""
        seat = self.to_move
        if self.phase != "play" or seat is None:
            return []
        hand = self._hands[seat]
        if self._current:
            led = self._current[0].suit
            following = sorted(c for c in hand if c.suit == led)
            if following:
                return following
        return sorted(hand)

    def is_legal(self, action: Action, seat: Seat | None = None) -> bool:
        try:
            self._check(action, seat)
        except Rule358Error:
            return False
        return True

    def _check(self, action: Action, seat: Seat | None) -> Seat:
        """The seat acting, or the `Rule358Error` the action would raise."""
        phase, to_move = self.phase, self.to_move
        if to_move is None:
            raise WrongPhaseError("the hand is over: all 16 tricks have been played")
        if seat is not None and seat != to_move:
            raise OutOfTurnError(f"it is seat {to_move}'s turn to {_PHASE_VERB[phase]}, not seat {seat}'s")
        wanted = _PHASE_ACTION[phase]
        if action.kind != wanted:
            raise WrongPhaseError(f"cannot {action.kind} now: {_PHASE_RULE[phase]}")
        if action.card is not None:
            hand = self._hands[to_move]
            if action.card not in hand:
                raise CardNotHeldError(f"you do not hold {action.card}: only cards in your hand "
                                       f"can be {_PAST[action.kind]}")
            if action.kind == "play" and self._current:
                led = self._current[0].suit
                if action.card.suit != led and any(c.suit == led for c in hand):
                    raise MustFollowSuitError(f"must follow suit: you hold {led.label}")
        return to_move

    # -- actions ------------------------------------------------------------------------------------
    def push(self, action: Action, seat: Seat | None = None) -> None:
        """Apply ``action`` for the player to move (checked against ``seat`` when given).

        :raises Rule358Error: (a subclass naming the rule) when the action is illegal; the hand is
            then unchanged.
        """
        mover = self._check(action, seat)
        step = _Step(action, mover)
        if action.kind == "pass":
            assert action.card is not None
            giver, receiver = self._exchange_queue[len(self.exchanges)]
            returned = exchange_return(self._hands[receiver], action.card)
            self._hands[giver].discard(action.card)
            self._hands[receiver].add(action.card)
            self._hands[receiver].discard(returned)
            self._hands[giver].add(returned)
            exchange = Exchange(giver, receiver, action.card, returned)
            self.exchanges.append(exchange)
            step = _Step(action, mover, exchange=exchange)
        elif action.kind == "announce":
            assert action.suit is not None
            self.trump = action.suit
            if self.rules.kitty_order == "take-first":
                self._take_kitty()
                step = _Step(action, mover, took_kitty=True)
        elif action.kind == "discard":
            assert action.card is not None
            self._hands[mover].remove(action.card)
            self._discards.append(action.card)
            if len(self._discards) == KITTY_SIZE and not self.kitty_taken:
                self._take_kitty()
                step = _Step(action, mover, took_kitty=True)
        else:
            assert action.card is not None and self.trump is not None
            self._hands[mover].remove(action.card)
            self._current.append(action.card)
            if len(self._current) == 3:
                trick = Trick(self.leader, (self._current[0], self._current[1], self._current[2]),
                              self.trump)
                self.tricks.append(trick)
                self._current = []
                step = _Step(action, mover, closed=trick)
        self._history.append(step)

    def pop(self) -> Action:
        """Undo the last action and return it.

        :raises IndexError: when nothing has been done yet.
        """
        if not self._history:
            raise IndexError("nothing to undo: no action has been taken in this hand")
        step = self._history.pop()
        action, seat = step.action, step.seat
        if action.kind == "pass":
            assert step.exchange is not None
            ex = step.exchange
            self._hands[ex.giver].discard(ex.returned)
            self._hands[ex.receiver].add(ex.returned)
            self._hands[ex.receiver].discard(ex.passed)
            self._hands[ex.giver].add(ex.passed)
            self.exchanges.pop()
        elif action.kind == "announce":
            if step.took_kitty:
                self._untake_kitty()
            self.trump = None
        elif action.kind == "discard":
            assert action.card is not None
            if step.took_kitty:
                self._untake_kitty()
            self._discards.pop()
            self._hands[seat].add(action.card)
        else:
            assert action.card is not None
            if step.closed is not None:
                self.tricks.pop()
                self._current = list(step.closed.cards[:2])
            else:
                self._current.pop()
            self._hands[seat].add(action.card)
        return action

    def _take_kitty(self) -> None:
        self._hands[self.announcer].update(self._kitty_cards)
        self.kitty_taken = True

    def _untake_kitty(self) -> None:
        self._hands[self.announcer].difference_update(self._kitty_cards)
        self.kitty_taken = False

    def pass_card(self, card: PlayingCard, seat: Seat | None = None) -> Exchange:
        """Pass ``card`` in the exchange; the receiver's return is applied by the rule. Returns the
        exchange record (``returned`` is what came back)."""
        self.push(Action.pass_card(card), seat)
        return self.exchanges[-1]

    def announce(self, suit: Suit, seat: Seat | None = None) -> None:
        self.push(Action.announce(suit), seat)

    def discard(self, card: PlayingCard, seat: Seat | None = None) -> None:
        self.push(Action.discard(card), seat)

    def play(self, card: PlayingCard, seat: Seat | None = None) -> Trick | None:
        """Play ``card``; returns the trick if this card completed one, else None."""
        before = len(self.tricks)
        self.push(Action.play(card), seat)
        return self.tricks[-1] if len(self.tricks) > before else None

    # -- outcome and views --------------------------------------------------------------------------
    def result(self) -> HandResult:
        """The finished hand's tricks and points.

        :raises WrongPhaseError: before the 16th trick.
        """
        if not self.is_over():
            raise WrongPhaseError(f"the hand is not over: {len(self.tricks)} of 16 tricks played")
        assert self.trump is not None
        return HandResult(self.dealer, self.announcer, self.trump, self.targets, self.tricks_won,
                          tuple(t.winner for t in self.tricks))

    def view_for(self, seat: Seat) -> HandView:
        """What ``seat`` may see now (see `HandView`)."""
        _check_seat(seat)
        is_announcer = seat == self.announcer
        to_move = self.to_move
        return HandView(
            seat=seat, dealer=self.dealer, announcer=self.announcer, targets=self.targets,
            previous_points=self.previous_points, phase=self.phase, to_move=to_move,
            trump=self.trump, hand=tuple(sorted(self._hands[seat])),
            hand_sizes=(len(self._hands[0]), len(self._hands[1]), len(self._hands[2])),
            kitty_size=0 if self.kitty_taken else KITTY_SIZE,
            kitty_taken=self._kitty_cards if is_announcer and self.kitty_taken else (),
            discards=tuple(self._discards) if is_announcer else (),
            exchanges=tuple(e for e in self.exchanges if seat in (e.giver, e.receiver)),
            pending_exchange=self.pending_exchange, tricks=tuple(self.tricks), leader=self.leader,
            current_trick=self.current_trick, tricks_won=self.tricks_won,
            legal_actions=tuple(self.legal_actions()) if to_move == seat else (),
        )


_PHASE_ACTION: Final[dict[Phase, ActionKind]] = {
    "exchange": "pass", "announce": "announce", "discard": "discard", "play": "play"}
_PHASE_VERB: Final[dict[Phase, str]] = {
    "exchange": "pass a card", "announce": "announce trumps", "discard": "discard",
    "play": "play", "over": "wait"}
_PHASE_RULE: Final[dict[Phase, str]] = {
    "exchange": "the exchange between players comes first (\"+\" players pass cards to \"-\" players)",
    "announce": "trumps must be announced before the kitty exchange and play",
    "discard": "the announcer must set aside 4 cards for the kitty before play starts",
    "play": "the exchanges and the announcement are done; it is time to play a card",
    "over": "the hand is over",
}
_PAST: Final[dict[ActionKind, str]] = {"pass": "passed", "discard": "discarded", "play": "played",
                                       "announce": "announced"}


# -- a session of several hands -------------------------------------------------------------------
@dataclass(frozen=True)
class SessionWinner:
    """Who won a session and by which rule (``rule`` is one of "sudden win", "total",
    "last hand points", "most recent trick")."""

    seat: Seat
    rule: str
    detail: str


def session_totals(results: Sequence[HandResult]) -> tuple[int, int, int]:
    totals = [0, 0, 0]
    for result in results:
        for seat, points in enumerate(result.points):
            totals[seat] += points
    return (totals[0], totals[1], totals[2])


def session_winner(results: Sequence[HandResult], sudden_win: int | None = None) -> SessionWinner:
    """The winner of a session of ``results`` (oldest first), with RULES.md's tie-breaks.

    Highest total points wins. Tied players: more points in the last hand wins; if still tied
    (all three, or two), the one of them who won a trick most recently in the last hand (trick
    16, else 15, ...) wins. With ``sudden_win``, the first player to take that many tricks in one
    hand wins outright.
    """
    if not results:
        raise ValueError("a session winner needs at least one finished hand")
    if sudden_win is not None:
        for number, result in enumerate(results, 1):
            for seat in SEATS:
                if result.tricks_won[seat] >= sudden_win:
                    return SessionWinner(seat, "sudden win",
                                         f"took {result.tricks_won[seat]} tricks in hand {number}")
    totals = session_totals(results)
    best = max(totals)
    tied = [s for s in SEATS if totals[s] == best]
    if len(tied) == 1:
        return SessionWinner(tied[0], "total", f"highest total ({best:+d})")
    last = results[-1]
    best_last = max(last.points[s] for s in tied)
    still = [s for s in tied if last.points[s] == best_last]
    if len(still) == 1:
        return SessionWinner(still[0], "last hand points",
                             f"tied on {best:+d}; more points in the last hand ({best_last:+d})")
    for number in range(len(last.trick_winners), 0, -1):
        if last.trick_winners[number - 1] in still:
            return SessionWinner(last.trick_winners[number - 1], "most recent trick",
                                 f"tied on {best:+d} and on {best_last:+d} in the last hand; "
                                 f"won trick {number} of the last hand")
    raise ValueError("tied players won no trick in the last hand: results are inconsistent")


class Session358:
    """Several hands: random first dealer, then the deal passes clockwise (to the dealer's left);
    from the second hand the previous hand's +/- drive the exchange.

    ``session.hand`` is the hand in play; when it is over call `deal_next` until `is_over`.
    """

    def __init__(self, rules: Rules358 | None = None, *, rng: random.Random | None = None,
                 first_dealer: Seat | None = None) -> None:
        self.rules = rules or Rules358()
        self.rng = rng or random.Random()
        if first_dealer is None:
            first_dealer = self.rng.randrange(3)
        _check_seat(first_dealer, "first_dealer")
        self.first_dealer: Seat = first_dealer
        self.hands: list[Hand358] = [Hand358.deal(first_dealer, self.rng, rules=self.rules)]

    @property
    def hand(self) -> Hand358:
        return self.hands[-1]

    @property
    def results(self) -> list[HandResult]:
        return [h.result() for h in self.hands if h.is_over()]

    @property
    def totals(self) -> tuple[int, int, int]:
        return session_totals(self.results)

    def is_over(self) -> bool:
        results = self.results
        if len(results) >= self.rules.session_hands:
            return True
        limit = self.rules.sudden_win
        return limit is not None and any(max(r.tricks_won) >= limit for r in results)

    def deal_next(self) -> Hand358:
        """Deal the next hand (dealer's left deals; exchange from last hand's points).

        :raises SessionOverError: if the hand in play is not finished or the session is over.
        """
        if not self.hand.is_over():
            raise SessionOverError("finish the hand in play before dealing the next one")
        if self.is_over():
            raise SessionOverError(f"the session is over after {len(self.hands)} hands")
        previous = self.hand.result()
        hand = Hand358.deal(left_of(self.hand.dealer), self.rng, rules=self.rules,
                            previous_points=previous.points)
        self.hands.append(hand)
        return hand

    def winner(self) -> SessionWinner:
        """The session winner with the tie-break rules.

        :raises SessionOverError: while the session is still going.
        """
        if not self.is_over():
            raise SessionOverError("the session is not over yet")
        return session_winner(self.results, self.rules.sudden_win)
