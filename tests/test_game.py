"""The SET game engine: rules, errors, undo, the log, and whole simulated games to the end."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cards import Card, find_sets, full_deck, has_set
from core.game import (AlreadyDealtError, BadDeckOrderError, ControlError, Game, GameOptions,
                       GameOverError, NotDealtError, NothingToUndoError, NotInPileError, NotOnTableError,
                       RepeatedCardError, UnknownPlayerError, WrongCardCountError)

from tests.test_cards import TWENTY_WITHOUT_SET

CAP = [Card.from_index(i) for i in TWENTY_WITHOUT_SET]  # 20 cards, no SET among them


def accounted(game: Game) -> int:
    return (game.pile_size + len(game.table) + sum(len(c) for c in game.collected.values())
            + len(game.removed))


def cap_first_order() -> list[Card]:
    """A deck order whose first 20 cards hold no SET: "no SET" at 12, 15 and 18 cards."""
    return CAP + [card for card in full_deck() if card not in CAP]


def play_out(game: Game, rng: random.Random, *, mistakes: float = 0.0) -> None:
    """Play to the end: a random player takes a random SET (sometimes three wrong cards),
    or everybody calls "no SET"; checks the invariants after every action."""
    while not game.is_over:
        if game.phase != "playing":
            game.deal()
            continue
        sets = game.sets_on_table()
        player = rng.choice(game.players)
        before = len(game.table)
        if sets and rng.random() < mistakes:
            wrong = [t for t in _triples(len(game.table), rng) if t not in sets][:1]
            if wrong:
                table = game.table
                result = game.claim(player, list(wrong[0]))
                assert result.verdict == "not-a-set" and result.points == -1 and game.table == table
        elif sets:
            result = game.claim(player, list(rng.choice(sets)))
            assert result.is_set
            if before > game.options.base_table_size:
                assert len(game.table) == before - 3
        else:
            result_no = game.call_no_set()
            assert result_no.accepted
        assert accounted(game) == 81
        for name in game.players:
            assert game.scores[name] == game.sets_taken[name] - game.penalties[name]
        assert len(game.table) <= 21


def _triples(n: int, rng: random.Random) -> list[tuple[int, int, int]]:
    picks = [tuple(sorted(rng.sample(range(n), 3))) for _ in range(10)]
    return [(a, b, c) for a, b, c in picks]


# -- dealing and claims -----------------------------------------------------------------------------
def test_deal_lays_12_cards_and_keeps_every_card_accounted_for() -> None:
    game = Game(["ann", "bob"], seed=1)
    assert game.phase == "not-dealt"
    table = game.deal()
    assert len(table) == 12 and game.pile_size == 69 and accounted(game) == 81
    assert game.phase == "playing" and game.dealer == "ann"
    with pytest.raises(AlreadyDealtError):
        game.deal()


def test_a_correct_set_scores_and_is_replaced_in_the_same_positions() -> None:
    game = Game(["ann", "bob"], seed=2)
    game.deal()
    table, pile = game.table, game.pile
    i, j, k = game.sets_on_table()[0]
    result = game.claim("bob", [table[i], j, k])  # cards and positions may be mixed
    assert result.verdict == "set" and result.points == 1 and result.positions == (i, j, k)
    assert "SET" in result.reason and result.replacements == tuple(pile[:3])
    after = game.table
    assert [after[p] for p in (i, j, k)] == pile[:3]
    assert [c for p, c in enumerate(after) if p not in (i, j, k)] == [
        c for p, c in enumerate(table) if p not in (i, j, k)]
    assert game.scores == {"ann": 0, "bob": 1} and game.collected["bob"] == [table[i], table[j], table[k]]


def test_a_wrong_set_costs_a_point_and_the_cards_stay() -> None:
    game = Game(["ann", "bob"], seed=3)
    game.deal()
    table = game.table
    wrong = next((a, b, c) for a in range(12) for b in range(a + 1, 12) for c in range(b + 1, 12)
                 if (a, b, c) not in game.sets_on_table())
    result = game.claim("ann", list(wrong))
    assert result.verdict == "not-a-set" and result.points == -1
    assert result.reason.startswith("Not a SET:")
    assert game.table == table and game.scores["ann"] == -1 and game.pile_size == 69


def test_illegal_actions_raise_named_errors_and_change_nothing() -> None:
    game = Game(["ann", "bob"], seed=4)
    with pytest.raises(NotDealtError):
        game.claim("ann", [0, 1, 2])
    game.deal()
    not_out = game.pile[0]
    log = game.log
    for cards, error in (([0, 1], WrongCardCountError), ([0, 1, 1], RepeatedCardError),
                         ([0, 1, 12], NotOnTableError), ([0, 1, not_out], NotOnTableError),
                         ([game.table[0], 0, 1], RepeatedCardError)):
        with pytest.raises(error):
            game.claim("ann", cards)
    with pytest.raises(UnknownPlayerError):
        game.claim("carl", [0, 1, 2])
    assert game.log == log and game.scores == {"ann": 0, "bob": 0}
    assert issubclass(NotOnTableError, ValueError)


def test_call_first_then_take_and_nobody_else_may_take_meanwhile() -> None:
    game = Game(["ann", "bob"], seed=5)
    game.deal()
    with pytest.raises(ControlError):
        game.take([0, 1, 2])
    game.call_set("bob")
    assert game.caller == "bob"
    with pytest.raises(ControlError):
        game.call_set("ann")
    with pytest.raises(ControlError):
        game.claim("ann", list(game.sets_on_table()[0]))
    with pytest.raises(ControlError):
        game.call_no_set()
    result = game.take(list(game.sets_on_table()[0]))
    assert result.player == "bob" and game.caller is None and game.scores["bob"] == 1
    game.call_set("ann")
    game.time_out()  # a call without a SET
    assert game.scores["ann"] == -1 and game.caller is None
    assert [e["type"] for e in game.log] == ["start", "deal", "call", "take", "call", "time_out"]


# -- "no SET" ---------------------------------------------------------------------------------------
def test_no_set_is_refused_while_a_set_is_on_the_table() -> None:
    game = Game(["ann", "bob"], seed=6)
    game.deal()
    sets = game.sets_on_table()
    table = game.table
    result = game.call_no_set("ann")
    assert not result.accepted and list(result.sets) == sets and game.table == table
    assert game.scores == {"ann": 0, "bob": 0}


def test_no_set_deals_three_more_up_to_21_which_always_hold_a_set() -> None:
    game = Game(["ann", "bob"], seed=7)
    game.deal(cap_first_order())
    for size in (12, 15, 18):
        assert len(game.table) == size and not has_set(game.table)
        result = game.call_no_set()
        assert result.accepted and len(result.added) == 3 and result.points == 0
    assert len(game.table) == 21
    assert not game.call_no_set().accepted
    # Above 12 cards a SET is not replaced, so the table shrinks by three, down to 12.
    for _ in range(30):
        if len(game.table) == 12:
            break
        before = len(game.table)
        if game.sets_on_table():
            game.claim("ann", list(game.sets_on_table()[0]))
            assert len(game.table) == before - 3
        else:
            game.call_no_set()
            assert len(game.table) == before + 3
        assert accounted(game) == 81
    assert len(game.table) == 12
    pile = game.pile_size
    if game.sets_on_table():
        game.claim("bob", list(game.sets_on_table()[0]))
        assert len(game.table) == 12 and game.pile_size == pile - 3


def test_after_an_extra_deal_the_extra_cards_fill_the_gaps() -> None:
    game = Game(["ann"], seed=8)
    game.deal(cap_first_order())
    game.call_no_set()
    game.call_no_set()
    game.call_no_set()
    table = game.table
    taken = game.sets_on_table()[0]
    game.claim("ann", list(taken))
    after = game.table
    kept = [p for p in range(18) if p not in taken]
    assert sorted(after) == sorted(table[p] for p in range(21) if p not in taken)
    assert all(after[p] == table[p] for p in kept)


# -- following a real table -------------------------------------------------------------------------
def test_following_a_real_table_with_the_cards_actually_dealt() -> None:
    rng = random.Random(9)
    seen = rng.sample(full_deck(), 12)
    game = Game(["ann", "bob"])
    assert game.deal(seen) == seen
    sets = game.sets_on_table()
    if not sets:
        pytest.skip("this sample has no SET")
    laid = [c for c in full_deck() if c not in seen][:3]
    result = game.claim("ann", list(sets[0]), replacements=laid)
    assert result.replacements == tuple(laid) and all(c in game.table for c in laid)
    with pytest.raises(NotInPileError):
        game.claim("bob", list(game.sets_on_table()[0]), replacements=[laid[0], *laid[1:]])
    with pytest.raises(BadDeckOrderError):
        Game().deal([seen[0], seen[0]])


def test_easy_deck_orders_must_use_solid_cards() -> None:
    game = Game(options=GameOptions(easy=True))
    with pytest.raises(BadDeckOrderError, match="not in this game's deck"):
        game.deal([Card.parse("1 red striped oval")])


# -- undo and the log -------------------------------------------------------------------------------
def test_every_action_can_be_undone_back_to_the_start() -> None:
    game = Game(["ann", "bob"], seed=10)
    states = []
    rng = random.Random(10)
    game.deal()
    for _ in range(15):
        states.append((game.table, game.pile, game.scores, game.log, game.phase))
        sets = game.sets_on_table()
        if sets:
            game.claim(rng.choice(game.players), list(sets[-1]))
        else:
            game.call_no_set()
        if game.is_over:
            break
    for table, pile, scores, log, phase in reversed(states):
        game.undo()
        assert (game.table, game.pile, game.scores, game.log, game.phase) == (table, pile, scores, log, phase)
    game.undo()
    assert game.phase == "not-dealt" and len(game.log) == 1
    with pytest.raises(NothingToUndoError):
        game.undo()
    # Undoing a deal also rewinds the shuffle: the same cards come again.
    assert game.deal() == states[0][0]


def test_the_log_is_json_and_replays_to_the_same_game() -> None:
    game = Game(["ann", "bob", "cy"], GameOptions(match=True), seed=11)
    play_out(game, random.Random(11), mistakes=0.1)
    text = json.dumps(game.log)
    replayed = Game.from_log(json.loads(text))
    assert replayed.log == game.log and replayed.scores == game.scores and replayed.is_over


# -- whole games ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_group_game_runs_to_the_end(seed: int) -> None:
    game = Game(["ann", "bob", "cy"], seed=seed)
    play_out(game, random.Random(seed), mistakes=0.05)
    assert game.is_over and game.pile_size == 0 and not has_set(game.table)
    assert len(game.table) % 3 == 0 and len(game.table) <= 20
    assert sum(game.sets_taken.values()) == (81 - len(game.table)) // 3
    assert game.winners and game.log[-1]["type"] == "game_end"
    with pytest.raises(GameOverError):
        game.call_no_set()
    with pytest.raises(GameOverError):
        game.deal()


def test_match_play_passes_the_deal_left_and_every_player_deals_once() -> None:
    game = Game(["ann", "bob", "cy"], GameOptions(match=True), seed=12, dealer=1)
    rng = random.Random(12)
    dealers = []
    while not game.is_over:
        game.deal()
        dealers.append(game.dealer)
        play_out_round(game, rng)
    assert dealers == ["bob", "cy", "ann"] and game.round == 3
    rounds = [e for e in game.log if e["type"] == "round_end"]
    assert len(rounds) == 3
    assert rounds[-1]["scores"] == game.scores
    leftovers = [r["leftover"] for r in rounds]
    assert sum(game.sets_taken.values()) == sum((81 - len(left)) // 3 for left in leftovers
                                                if isinstance(left, list))
    assert sum(game.sets_taken.values()) > 27  # three rounds were scored, not one


def play_out_round(game: Game, rng: random.Random) -> None:
    while game.phase == "playing":
        sets = game.sets_on_table()
        if sets:
            game.claim(rng.choice(game.players), list(rng.choice(sets)))
        else:
            game.call_no_set()


@pytest.mark.parametrize("seed", range(8))
def test_penalty_solitaire_wins_only_when_every_no_set_penalty_is_cancelled(seed: int) -> None:
    game = Game(["me"], seed=seed)
    play_out(game, random.Random(seed))
    no_sets = [e for e in game.log if e["type"] == "no_set" and e["accepted"]]
    cancels = [e for e in game.log if e.get("cancels_penalty")]
    assert game.penalties["me"] == len(no_sets) - sum(1 for e in no_sets if not e["added"])
    assert game.owed_penalties == game.penalties["me"] - len(cancels)
    assert game.outcome == ("won" if game.owed_penalties == 0 else "lost")


def test_penalty_solitaire_no_set_costs_a_point_and_deals_three() -> None:
    game = Game(["me"], seed=13)
    game.deal(cap_first_order())
    result = game.call_no_set()
    assert result.accepted and result.points == -1 and len(game.table) == 15
    assert game.scores == {"me": -1} and game.owed_penalties == 1


def test_german_solitaire_is_lost_at_the_first_no_set() -> None:
    game = Game(["me"], GameOptions(solitaire_reading="lose"), seed=14)
    game.deal(cap_first_order())
    result = game.call_no_set()
    assert result.accepted and result.game_lost and game.is_over and game.outcome == "lost"
    assert len(game.table) == 12


def test_german_solitaire_is_won_by_reaching_the_end() -> None:
    for seed in range(40):
        game = Game(["me"], GameOptions(solitaire_reading="lose"), seed=seed)
        play_out(game, random.Random(seed))
        if game.outcome == "won":
            assert game.pile_size == 0 and not any(e["type"] == "no_set" for e in game.log)
            return
    pytest.fail("no German solitaire game was won in 40 seeds")


def test_easy_deck_game_uses_27_solid_cards_and_9_on_the_table() -> None:
    game = Game(["ann", "bob"], GameOptions(easy=True), seed=15)
    assert len(game.deal()) == 9 and game.pile_size == 18 and len(game.removed) == 54
    assert {c.shading for c in game.table + game.pile} == {"solid"}
    play_out(game, random.Random(15))
    assert game.is_over and game.pile_size == 0 and not has_set(game.table)


# -- properties -------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(0, 9), min_size=1, max_size=60),
       st.sampled_from([GameOptions(), GameOptions(easy=True), GameOptions(match=True)]))
def test_random_action_sequences_keep_the_invariants(seed: int, moves: list[int], options: GameOptions) -> None:
    game = Game(["ann", "bob"], options, seed=seed)
    rng = random.Random(seed)
    extra_deal_pending = False
    for move in moves:
        if game.is_over:
            break
        if game.phase != "playing":
            game.deal()
            continue
        sets = game.sets_on_table()
        if move == 0 and game.can_undo() and len(game.log) > 2:
            game.undo()
            extra_deal_pending = False
        elif move == 1:
            game.call_no_set()
            extra_deal_pending = not sets and game.phase == "playing"
        elif move == 2:
            try:
                game.claim("ann", rng.sample(range(len(game.table)), 3))
            except ValueError:
                pass
        elif sets:
            base = options.base_table_size
            before = len(game.table)
            game.claim("bob", list(sets[move % len(sets)]))
            if extra_deal_pending and before == base + 3 and game.pile_size:
                assert len(game.table) == base  # back to 12 after the SET that follows a deal of 3
            extra_deal_pending = len(game.table) > base
        assert accounted(game) == 81
        assert all(game.scores[p] == game.sets_taken[p] - game.penalties[p] for p in game.players)
        assert find_sets(game.table) == game.sets_on_table()
        json.dumps(game.log)
