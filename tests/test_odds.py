"""Simulated odds and puzzle boards."""

from __future__ import annotations

import math
import random

import pytest

from core.cards import find_sets, is_set
from core.odds import Rate, estimate_no_set_rate, make_puzzle, odds_for, simulate_play


def test_random_12_card_tables_lack_a_set_about_one_time_in_thirty() -> None:
    # The exact share is about 3.2%; 20,000 draws put the estimate within +-0.5% nearly always.
    rate = estimate_no_set_rate(12, 20_000, random.Random(1))
    assert 0.025 < rate.proportion < 0.04
    low, high = rate.interval
    assert low < rate.proportion < high


def test_21_random_cards_never_lack_a_set_and_easy_10_neither() -> None:
    assert estimate_no_set_rate(21, 500, random.Random(2)).hits == 0
    assert estimate_no_set_rate(10, 500, random.Random(3), easy=True).hits == 0


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="n_cards"):
        estimate_no_set_rate(2, 10, random.Random())
    with pytest.raises(ValueError, match="trials"):
        estimate_no_set_rate(12, 0, random.Random())


def test_odds_from_a_rate() -> None:
    estimate, low, high = odds_for(Rate(1, 34))
    assert estimate == pytest.approx(33.0) and low < estimate < high
    assert math.isinf(odds_for(Rate(0, 100))[0])


def test_simulated_play_counts_no_set_tables_and_leftovers() -> None:
    stats = simulate_play(60, random.Random(4))
    assert stats.games == 60 and sum(stats.leftover.values()) == 60
    assert all(cards % 3 == 0 and cards <= 20 for cards in stats.leftover)
    twelve = stats.tables[12]
    assert twelve.trials > 60 * 15 and 0 < twelve.hits < twelve.trials
    # In play, leftovers are what nobody could combine, so "no SET" is commoner than at random.
    assert twelve.proportion > 0.04
    assert stats.games_with_no_set.hits >= 1
    assert "tables" in stats.to_json()


@pytest.mark.parametrize("n_sets", [0, 1, 6, 10, 14])
def test_puzzle_has_exactly_the_asked_number_of_sets(n_sets: int) -> None:
    puzzle = make_puzzle(n_sets, rng=random.Random(n_sets))
    assert len(puzzle.cards) == 12 and len(set(puzzle.cards)) == 12
    assert list(puzzle.sets) == find_sets(puzzle.cards) and len(puzzle.sets) == n_sets
    assert all(is_set(*(puzzle.cards[i] for i in s)) for s in puzzle.sets)


def test_easy_puzzle_is_nine_solid_cards_with_four_sets() -> None:
    for seed in range(5):
        puzzle = make_puzzle(4, 9, random.Random(seed), easy=True)
        assert len(puzzle.cards) == 9 and len(puzzle.sets) == 4
        assert {card.shading for card in puzzle.cards} == {"solid"}


def test_impossible_puzzles_are_refused() -> None:
    with pytest.raises(ValueError, match="hold 0..22 SETs at most"):
        make_puzzle(23)
    with pytest.raises(ValueError, match="found no board"):
        make_puzzle(22, rng=random.Random(0), random_draws=10, max_steps=300)
