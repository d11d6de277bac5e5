"""Computer players for 358, and a simulator that pits them against each other.

A player sees only a `HandView` (its own hand, the table, the tricks played, its own exchanges
and discards) and returns one of ``view.legal_actions``; it cannot peek at other hands.

`HeuristicPlayer` plays the way a careful club player starts out:

- exchange (as a "+" player): pass the lowest card, from the shortest suit, avoiding suits that
  already bounced off this receiver (a bounce shows they hold nothing stronger there);
- trumps: the suit with the best ``2 * length + honours`` (A 4, K 3, Q 2, J 1);
- kitty discards: the weakest off-suit cards, shortest suit first so it becomes void (and can be
  ruffed), never an ace;
- leading: draw trumps while holding the master trump; otherwise cash a master card (no unseen
  card of its suit is higher) in the suit where opponents most likely still follow; otherwise lead
  low from the shortest off-suit to make a void;
- following: last to play, take the trick with the cheapest winning card (off-suit before trump,
  low before high); second to play, win only with a master card or a ruff; otherwise play the
  cheapest card, throwing off-suit low cards from short suits and keeping trumps and masters.

Every trick counts the same whatever the targets (points are tricks minus target), so the
strategy simply tries to take as many tricks as it can.

>>> stats = simulate(6, [HeuristicPlayer(), RandomPlayer(random.Random(1)), RandomPlayer(random.Random(2))], seed=3)
>>> stats["hands"], sum(p["mean_tricks"] for p in stats["players"])
(6, 16.0)
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from core.game358 import (
    ROLE_TARGETS, ROLES, SEATS, TRUMP_SUITS, Action, HandResult, HandView, PlayingCard, Rules358, Session358, Suit,
    role_of, session_winner, winning_index,
)

_HONOURS = {14: 4, 13: 3, 12: 2, 11: 1}


class Player358(Protocol):
    """Anything that picks a legal action from what one seat may see."""

    name: str

    def choose(self, view: HandView) -> Action: ...


class RandomPlayer:
    """Picks uniformly among the legal actions: the baseline the strategy is measured against."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def choose(self, view: HandView) -> Action:
        if not view.legal_actions:
            raise ValueError(f"seat {view.seat} has no legal action: it is not their turn")
        return self.rng.choice(view.legal_actions)


class HeuristicPlayer:
    """A sensible, deterministic computer player (see the module docstring)."""

    name = "heuristic"

    def choose(self, view: HandView) -> Action:
        if not view.legal_actions:
            raise ValueError(f"seat {view.seat} has no legal action: it is not their turn")
        if view.phase == "exchange":
            return Action.pass_card(choose_pass(view))
        if view.phase == "announce":
            return Action.announce(choose_trump(view.hand))
        if view.phase == "discard":
            assert view.trump is not None
            return Action.discard(choose_discard(view.hand, view.trump))
        return Action.play(choose_play(view))


def suit_score(hand: Iterable[PlayingCard], suit: Suit) -> int:
    """How good ``suit`` would be as trumps: twice its length plus honour points."""
    cards = [c for c in hand if c.suit == suit]
    return 2 * len(cards) + sum(_HONOURS.get(c.rank, 0) for c in cards)


def choose_trump(hand: Sequence[PlayingCard]) -> Suit:
    """The suit with the best `suit_score` (ties: the sheet's announcement order)."""
    return max(TRUMP_SUITS, key=lambda s: (suit_score(hand, s), -TRUMP_SUITS.index(s)))


def _suit_lengths(hand: Iterable[PlayingCard]) -> Counter[Suit]:
    return Counter(c.suit for c in hand)


def choose_discard(hand: Sequence[PlayingCard], trump: Suit) -> PlayingCard:
    """The weakest off-suit card, shortest suit first (to make a void), never an ace if avoidable."""
    lengths = _suit_lengths(hand)
    off_suit = [c for c in hand if c.suit != trump] or list(hand)
    return min(off_suit, key=lambda c: (c.rank == 14, lengths[c.suit], c.rank, c.index))


def choose_pass(view: HandView) -> PlayingCard:
    """The card to pass as a "+" player: low, from a short suit, not a suit that bounced."""
    pending = view.pending_exchange
    receiver = pending.receiver if pending else None
    bounced = {e.passed.suit for e in view.exchanges
               if e.giver == view.seat and e.receiver == receiver and e.bounced}
    lengths = _suit_lengths(view.hand)
    candidates = [c for c in view.hand if c.suit not in bounced] or list(view.hand)
    return min(candidates, key=lambda c: (c.rank, lengths[c.suit], c.index))


def is_master(card: PlayingCard, unseen: Iterable[PlayingCard]) -> bool:
    """No card this player has not seen is a stronger card of the same suit."""
    return not any(u.suit == card.suit and u.rank > card.rank for u in unseen)


def _throw_off(cards: Sequence[PlayingCard], trump: Suit, unseen: frozenset[PlayingCard],
               lengths: Counter[Suit]) -> PlayingCard:
    """The cheapest card to give away: no trump, no master, low, from a short suit."""
    return min(cards, key=lambda c: (c.suit == trump, is_master(c, unseen), c.rank,
                                     lengths[c.suit], c.index))


def choose_play(view: HandView) -> PlayingCard:
    """The card to play (see the module docstring for the rules of thumb)."""
    assert view.trump is not None
    trump = view.trump
    legal = [a.card for a in view.legal_actions if a.card is not None]
    unseen = view.unseen_cards()
    lengths = _suit_lengths(view.hand)
    trick = [card for _, card in view.current_trick]

    if not trick:  # leading
        my_trumps = sorted((c for c in legal if c.suit == trump), key=lambda c: -c.rank)
        unseen_trumps = [u for u in unseen if u.suit == trump]
        if my_trumps and unseen_trumps and is_master(my_trumps[0], unseen):
            return my_trumps[0]
        masters = [c for c in legal if c.suit != trump and is_master(c, unseen)]
        if masters:
            # Cash where the opponents most likely still hold the suit (so no ruff), lowest first
            # among equals so a run of masters is led from the bottom up.
            return max(masters, key=lambda c: (sum(1 for u in unseen if u.suit == c.suit), -c.rank))
        off_suit = [c for c in legal if c.suit != trump]
        if off_suit:
            return min(off_suit, key=lambda c: (lengths[c.suit], c.rank, c.index))
        return min(legal, key=lambda c: c.rank)

    winners = [c for c in legal if winning_index([*trick, c], trump) == len(trick)]
    cheapest_winner = min(winners, key=lambda c: (c.suit == trump, c.rank), default=None)
    if cheapest_winner is not None:
        if len(trick) == 2:  # last to play: the trick is ours for sure
            return cheapest_winner
        safe = [c for c in winners if c.suit == trump or is_master(c, unseen)]
        if safe:
            return min(safe, key=lambda c: (c.suit == trump, c.rank))
    return _throw_off(legal, trump, unseen, lengths)


# -- simulation -----------------------------------------------------------------------------------
def play_hand(session: Session358, players: Sequence[Player358]) -> HandResult:
    """Let ``players[seat]`` play the session's current hand to the end."""
    hand = session.hand
    while not hand.is_over():
        seat = hand.to_move
        assert seat is not None
        hand.push(players[seat].choose(hand.view_for(seat)), seat)
    return hand.result()


def simulate(n_hands: int, players: Sequence[Player358], *, seed: int | None = None,
             rules: Rules358 | None = None) -> dict[str, Any]:
    """Play ``n_hands`` hands, in sessions of ``rules.session_hands``, and summarise them.

    Seats keep their player; the deal (and so each seat's target) rotates. Returns a JSON-able
    dict: per player mean tricks, mean points, how often the target was made; the same per role;
    trump choices; exchange sizes; session winners and which tie-break rule decided.
    """
    if n_hands < 1:
        raise ValueError(f"n_hands must be at least 1, got {n_hands}")
    if len(players) != 3:
        raise ValueError("358 needs exactly three players")
    rules = rules or Rules358()
    rng = random.Random(seed)
    results: list[HandResult] = []
    cards_passed: list[int] = []
    bounced = 0
    session_wins = Counter[int]()
    decided_by = Counter[str]()
    sessions = 0
    while len(results) < n_hands:
        session = Session358(rules, rng=rng)
        while True:
            results.append(play_hand(session, players))
            cards_passed.append(len(session.hand.exchanges))
            bounced += sum(1 for e in session.hand.exchanges if e.bounced)
            if session.is_over() or len(results) >= n_hands:
                break
            session.deal_next()
        if session.is_over():
            sessions += 1
            won = session_winner(session.results, rules.sudden_win)
            session_wins[won.seat] += 1
            decided_by[won.rule] += 1

    n = len(results)

    def rate(count: int, total: int) -> float:
        return round(count / total, 4) if total else 0.0

    per_player = []
    for seat in SEATS:
        tricks = [r.tricks_won[seat] for r in results]
        points = [r.points[seat] for r in results]
        per_player.append({
            "seat": seat, "player": players[seat].name,
            "mean_tricks": round(sum(tricks) / n, 4), "mean_points": round(sum(points) / n, 4),
            "made_target": rate(sum(1 for p in points if p >= 0), n),
            "sessions_won": session_wins[seat],
        })
    per_role = {}
    for role in ROLES:
        rows = [(r.tricks_won[s], r.points[s]) for r in results for s in SEATS
                if role_of(s, r.dealer) == role]
        per_role[role] = {
            "target": ROLE_TARGETS[role],
            "mean_tricks": round(sum(t for t, _ in rows) / len(rows), 4),
            "made_target": rate(sum(1 for _, p in rows if p >= 0), len(rows)),
        }
    trumps = Counter(r.trump.label for r in results)
    return {
        "hands": n,
        "seed": seed,
        "rules": {"announcer": rules.announcer, "first_lead": rules.first_lead,
                  "kitty_order": rules.kitty_order, "session_hands": rules.session_hands,
                  "sudden_win": rules.sudden_win},
        "players": per_player,
        "roles": per_role,
        "trump_choices": {s.label: trumps[s.label] for s in TRUMP_SUITS},
        "exchange": {"mean_cards_passed": round(sum(cards_passed) / n, 4),
                     "bounced_fraction": rate(bounced, sum(cards_passed))},
        "sessions": {"completed": sessions,
                     "winners_by_seat": [session_wins[s] for s in SEATS],
                     "decided_by": dict(sorted(decided_by.items()))},
    }
