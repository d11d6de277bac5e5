"""Reference numbers for the rules (like perft for chess), and card text round trips."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import (COLORS, COUNTS, SHADINGS, SHAPES, Card, CardParseError, easy_deck, explain,
                  find_sets, full_deck, has_set, is_set, parse_cards, third_card)

# A largest SET-free layout: 20 cards (no 21 cards are SET-free). Found by a depth-first search
# over card indices starting from an affine basis {0, 1, 3, 9, 27}; checked below, not trusted.
TWENTY_WITHOUT_SET = [0, 1, 3, 9, 27, 4, 10, 12, 13, 28, 32, 35, 38, 47, 59, 65, 66, 67, 71, 77]

cards_st = st.integers(0, 80).map(Card.from_index)


def brute_force_sets(cards: list[Card]) -> list[tuple[int, int, int]]:
    return [t for t in itertools.combinations(range(len(cards)), 3) if is_set(*(cards[i] for i in t))]


def test_the_deck_has_81_distinct_cards_and_the_easy_deck_27_solid_ones() -> None:
    deck = full_deck()
    assert len(deck) == len(set(deck)) == 81
    assert [card.index for card in deck] == list(range(81))
    easy = easy_deck()
    assert len(easy) == len(set(easy)) == 27 and {card.shading for card in easy} == {"solid"}


def test_every_combination_of_features_is_one_card() -> None:
    seen = {(c.count, c.color, c.shading, c.shape) for c in full_deck()}
    assert seen == set(itertools.product(COUNTS, COLORS, SHADINGS, SHAPES))


def test_1080_sets_in_the_deck_and_40_through_each_card() -> None:
    deck = full_deck()
    sets = find_sets(deck)
    assert len(sets) == 1080
    assert len(brute_force_sets(deck)) == 1080
    through = [0] * 81
    for triple in sets:
        for i in triple:
            through[i] += 1
    assert through == [40] * 81


def test_every_pair_has_exactly_one_completing_card() -> None:
    deck = full_deck()
    for a, b in itertools.combinations(deck, 2):
        completions = [c for c in deck if c not in (a, b) and is_set(a, b, c)]
        assert completions == [third_card(a, b)]
    assert third_card(deck[5], deck[5]) == deck[5]


def test_known_20_card_layout_has_no_set_and_every_extension_has_one() -> None:
    layout = [Card.from_index(i) for i in TWENTY_WITHOUT_SET]
    assert len(set(layout)) == 20
    assert find_sets(layout) == [] and not has_set(layout)
    for extra in full_deck():
        if extra not in layout:
            assert has_set(layout + [extra])


def test_random_21_card_tables_always_hold_a_set() -> None:
    rng = random.Random(21)
    for _ in range(2000):
        assert has_set(rng.sample(full_deck(), 21))


def test_find_sets_equals_brute_force_on_random_boards() -> None:
    rng = random.Random(5)
    for _ in range(400):
        board = rng.sample(full_deck(), rng.randrange(0, 22))
        sets = find_sets(board)
        assert sets == brute_force_sets(board)
        assert has_set(board) == bool(sets)


def test_find_sets_with_repeated_cards_matches_brute_force() -> None:
    rng = random.Random(6)
    deck = full_deck()[:9]  # few distinct cards, so repeats are frequent
    for _ in range(200):
        board = [rng.choice(deck) for _ in range(rng.randrange(0, 12))]
        assert find_sets(board) == brute_force_sets(board)
        assert has_set(board) == bool(brute_force_sets(board))


@given(st.lists(cards_st, max_size=24))
def test_find_sets_property(board: list[Card]) -> None:
    sets = find_sets(board)
    assert sets == sorted(sets)
    assert sets == brute_force_sets(board)


@given(cards_st, cards_st)
def test_third_card_completes_and_is_symmetric(a: Card, b: Card) -> None:
    c = third_card(a, b)
    assert is_set(a, b, c) and is_set(c, a, b) and is_set(b, c, a)
    assert third_card(b, a) == c and third_card(a, c) == b


def test_the_example_from_the_rules() -> None:
    two_red_one_purple = [Card.parse("1 red solid oval"), Card.parse("2 red solid oval"),
                          Card.parse("3 purple solid oval")]
    assert not is_set(*two_red_one_purple)
    assert "color: two red, one purple" in explain(*two_red_one_purple)
    assert explain(*two_red_one_purple).startswith("Not a SET")


def test_explain_names_each_feature() -> None:
    a, b, c = (Card.parse(t) for t in ("1 red solid oval", "2 green solid squiggle", "3 purple solid diamond"))
    text = explain(a, b, c)
    assert text == ("SET: count: all different (1, 2, 3); color: all different (red, green, purple); "
                    "shading: all solid; shape: all different (oval, squiggle, diamond).")
    bad = explain(a, b, Card.parse("2 purple striped diamond"))
    assert bad.startswith("Not a SET: count: two with 2, one with 1; shading: two solid, one striped.")


# -- text --------------------------------------------------------------------------------------------
def test_every_card_round_trips_through_text_and_index() -> None:
    for card in full_deck():
        assert Card.parse(str(card)) == card
        assert Card.from_index(card.index) is card
        assert Card.from_attributes(count=card.count, color=card.color, shading=card.shading,
                                    shape=card.shape) == card
        assert Card.from_digits(card.digits) == card
        assert eval(repr(card)) == card  # noqa: S307 - repr is Card.parse("...")


@given(cards_st, st.booleans(), st.randoms(use_true_random=False))
def test_parse_accepts_plurals_case_and_any_word_order(card: Card, plural: bool, rng: random.Random) -> None:
    words = str(card).split()
    if plural and card.count > 1:
        words[3] += "s"
    rng.shuffle(words)
    text = " ".join(word.upper() if rng.random() < 0.3 else word for word in words)
    assert Card.parse(text) == card


@pytest.mark.parametrize("text, expected", [
    ("2 red striped ovals", "2 red striped oval"),
    ("3 purple empty pills", "3 purple outline oval"),
    ("1 green open capsule", "1 green outline oval"),
    ("2 green shaded oblongs", "2 green striped oval"),
    ("3 red lined stadia", "3 red striped oval"),
    ("1 red filled stadium", "1 red solid oval"),
    ("two purple contoured squiggles", "2 purple outline squiggle"),
    ("three green solid diamonds", "3 green solid diamond"),
    ("2, red, solid, rectangles", "2 red solid oval"),
])
def test_parse_synonyms(text: str, expected: str) -> None:
    assert str(Card.parse(text)) == expected


@pytest.mark.parametrize("text, word", [
    ("2 blue striped oval", "blue"),
    ("2 red striped triangle", "triangle"),
    ("4 red striped oval", "4"),
    ("2 red green striped oval", "green"),
])
def test_parse_errors_name_the_bad_word(text: str, word: str) -> None:
    with pytest.raises(CardParseError) as caught:
        Card.parse(text)
    assert caught.value.word == word and repr(word) in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_parse_error_names_the_missing_feature() -> None:
    with pytest.raises(CardParseError, match="does not say its shading"):
        Card.parse("2 red oval")


def test_parse_cards_reads_a_list_and_says_which_card_is_wrong() -> None:
    assert parse_cards("2 red striped oval; 1 green solid diamond\n3 purple outline squiggle;") == [
        Card.parse("2 red striped oval"), Card.parse("1 green solid diamond"),
        Card.parse("3 purple outline squiggle")]
    with pytest.raises(CardParseError, match="card 2: unknown word 'blu'"):
        parse_cards("2 red striped oval; 1 blu solid diamond")


def test_bad_indices_and_attributes_are_refused() -> None:
    for bad in (-1, 81, True):
        with pytest.raises(ValueError):
            Card.from_index(bad)
    with pytest.raises(ValueError, match="color"):
        Card.from_attributes(count=1, color="blue", shading="solid", shape="oval")


def test_cards_are_ordered_hashable_values() -> None:
    a, b = Card.from_index(3), Card.from_index(40)
    assert a < b and sorted([b, a]) == [a, b]
    assert {a, Card.from_index(3)} == {a}
    assert a.value("shape") == "oval" and b.value("count") == 2


def test_module_examples_run() -> None:
    import doctest

    import core.cards

    assert doctest.testmod(core.cards).failed == 0
