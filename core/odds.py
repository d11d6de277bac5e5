"""How likely a table holds a SET, measured by simulation, and puzzle boards with a known number of SETs.

The rule sheets quote "about 33 : 1" that 12 cards contain a SET and "about 2500 : 1" for 15.
`estimate_set_odds` checks those numbers on random cards from a shuffled deck; `simulate_play`
measures the same thing as it happens in real games, where the cards left on the table after
SETs are taken are not random (they are what nobody could combine), so "no SET" comes more often.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from core.cards import Card, easy_deck, find_sets, full_deck, has_set
from core.game import Game, GameOptions

SHEET_ODDS = {12: 33.0, 15: 2500.0}
"""The rule sheets' odds "x : 1" that a table of this many cards contains a SET."""


@dataclass(frozen=True)
class Rate:
    """``hits`` out of ``trials``, with a 95% Wilson interval on the proportion."""

    hits: int
    trials: int

    @property
    def proportion(self) -> float:
        return self.hits / self.trials if self.trials else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson score interval of the proportion (sound also when hits is 0 or small)."""
        if not self.trials:
            return (math.nan, math.nan)
        z, n, p = 1.96, self.trials, self.proportion
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (max(0.0, centre - half), min(1.0, centre + half))

    def to_json(self) -> dict[str, object]:
        low, high = self.interval
        return {"hits": self.hits, "trials": self.trials, "proportion": self.proportion,
                "interval95": [low, high]}


def odds_for(no_set: Rate) -> tuple[float, float, float]:
    """Odds "x : 1" that a table holds a SET, from the rate of tables with none.

    Returns (estimate, low, high), the range following the 95% interval of ``no_set``;
    infinite when no table without a SET was seen.
    """
    def to_odds(p_none: float) -> float:
        return math.inf if p_none <= 0 else (1 - p_none) / p_none

    low_p, high_p = no_set.interval
    return (to_odds(no_set.proportion), to_odds(high_p), to_odds(low_p))


def estimate_no_set_rate(n_cards: int, trials: int, rng: random.Random, *, easy: bool = False) -> Rate:
    """How often ``n_cards`` drawn at random from a shuffled deck hold no SET.

    :raises ValueError: if ``n_cards`` is not 3..deck size or ``trials`` is not positive.
    """
    deck = easy_deck() if easy else full_deck()
    if not 3 <= n_cards <= len(deck):
        raise ValueError(f"n_cards must be 3..{len(deck)}, got {n_cards}")
    if trials < 1:
        raise ValueError(f"trials must be positive, got {trials}")
    misses = sum(1 for _ in range(trials) if not has_set(rng.sample(deck, n_cards)))
    return Rate(misses, trials)


@dataclass(frozen=True)
class PlayStats:
    """What happened over many simulated games in which a player always takes a SET if one is there.

    ``tables``: for each table size the player faced while the pile still had cards, how many
    such tables had no SET (``Rate``). ``games_with_no_set``: games with at least one "no SET"
    deal. ``leftover``: how many cards were left at the end, counted over games.
    """

    games: int
    tables: dict[int, Rate]
    games_with_no_set: Rate
    leftover: dict[int, int]

    def to_json(self) -> dict[str, object]:
        return {"games": self.games, "tables": {str(k): v.to_json() for k, v in sorted(self.tables.items())},
                "games_with_no_set": self.games_with_no_set.to_json(),
                "leftover": {str(k): v for k, v in sorted(self.leftover.items())}}


def simulate_play(games: int, rng: random.Random, *, easy: bool = False,
                  on_game: Callable[[int], None] | None = None) -> PlayStats:
    """Play ``games`` whole solitaire games with the engine and count the "no SET" tables.

    At each turn the player takes one of the SETs on the table, chosen at random, or calls
    "no SET" when there is none. A table is counted once each time it changes (after the deal,
    after each SET replaced, after three more cards), while the pile still has cards.
    ``on_game(i)`` is called after each game (for a progress bar).
    """
    if games < 1:
        raise ValueError(f"games must be positive, got {games}")
    seen: Counter[int] = Counter()
    empty: Counter[int] = Counter()
    leftover: Counter[int] = Counter()
    games_with_no_set = 0
    for number in range(games):
        game = Game(["solo"], GameOptions(easy=easy), seed=rng.randrange(2**63))
        game.deal()
        had_no_set = False
        while not game.is_over:
            sets = game.sets_on_table()
            if game.pile_size:
                seen[len(game.table)] += 1
                empty[len(game.table)] += not sets
            if sets:
                game.claim("solo", list(rng.choice(sets)))
            else:
                had_no_set = True
                game.call_no_set()
        games_with_no_set += had_no_set
        leftover[len(game.table)] += 1
        if on_game is not None:
            on_game(number)
    tables = {size: Rate(empty[size], seen[size]) for size in sorted(seen)}
    return PlayStats(games, tables, Rate(games_with_no_set, games), dict(leftover))


# -- puzzles --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Puzzle:
    """A board and every SET on it (sorted 0-based index triples)."""

    cards: tuple[Card, ...]
    sets: tuple[tuple[int, int, int], ...]


def make_puzzle(n_sets: int = 6, n_cards: int = 12, rng: random.Random | None = None, *,
                easy: bool = False, random_draws: int = 3_000, max_steps: int = 20_000) -> Puzzle:
    """A board of ``n_cards`` distinct cards holding exactly ``n_sets`` SETs.

    Draws up to ``random_draws`` random boards; failing that, starts from random cards and swaps
    one card at a time for a card from the rest of the deck,
    keeping swaps that do not take the count of SETs further from the target (random restarts
    when stuck). Defaults: the 12-card board with 6 SETs; ``easy=True, n_cards=9, n_sets=4`` is
    the German sheet's practice puzzle.

    :raises ValueError: for impossible sizes, or when no such board was found in ``max_steps``
        swaps (the target is probably more SETs than ``n_cards`` cards can hold).
    """
    rng = rng or random.Random()
    deck = easy_deck() if easy else full_deck()
    if not 3 <= n_cards <= len(deck):
        raise ValueError(f"n_cards must be 3..{len(deck)}, got {n_cards}")
    most = n_cards * (n_cards - 1) // 6  # each pair lies in at most one SET
    if not 0 <= n_sets <= most:
        raise ValueError(f"{n_cards} cards hold 0..{most} SETs at most; asked for {n_sets}")
    # Random boards first: for the usual targets one comes up within a few hundred draws, and it
    # looks like a real table. The swap search below tends to pile up one colour or shape.
    for _ in range(random_draws):
        board = rng.sample(deck, n_cards)
        if len(find_sets(board)) == n_sets:
            return Puzzle(tuple(board), tuple(find_sets(board)))
    board = rng.sample(deck, n_cards)
    distance = abs(len(find_sets(board)) - n_sets)
    stuck = 0
    for _ in range(max_steps):
        if distance == 0:
            break
        position = rng.randrange(n_cards)
        on_board = set(board)
        candidate = rng.choice([card for card in deck if card not in on_board])
        trial = board[:position] + [candidate] + board[position + 1:]
        new_distance = abs(len(find_sets(trial)) - n_sets)
        if new_distance <= distance:
            stuck = 0 if new_distance < distance else stuck + 1
            board, distance = trial, new_distance
        else:
            stuck += 1
        if stuck > 400:  # a plateau: start again from fresh random cards
            board = rng.sample(deck, n_cards)
            distance = abs(len(find_sets(board)) - n_sets)
            stuck = 0
    if distance != 0:
        raise ValueError(f"found no board of {n_cards} cards with exactly {n_sets} SETs "
                         f"in {max_steps} swaps; try fewer SETs")
    rng.shuffle(board)  # no telltale order
    return Puzzle(tuple(board), tuple(find_sets(board)))
