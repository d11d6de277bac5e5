"""The solve, play, odds and puzzle commands: exit codes and exact output."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cards import Card, find_sets, parse_cards
from core.game import Game, GameOptions
from setfinder.cli import main
from setfinder.commands.play import _TerminalGame, card_cell, play_game, render_cards

THREE = "2 red striped oval; 1 green solid diamond; 3 purple outline squiggle"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["solve", "play", "odds", "puzzle"])
def test_every_command_has_help_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"Example: setfinder {command}" in capsys.readouterr().out


# -- solve ------------------------------------------------------------------------------------------
def test_solve_prints_every_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "solve", THREE + "; 2 red striped pills", "--color", "never")
    assert code == 0
    assert out.splitlines()[-3:] == [
        "2 SETs among 4 cards:",
        "   1  2  3:  2 red striped oval + 1 green solid diamond + 3 purple outline squiggle",
        "   2  3  4:  1 green solid diamond + 3 purple outline squiggle + 2 red striped oval",
    ]
    assert out.startswith(" 1  ◍◍  2 red striped oval")


def test_solve_says_deal_three_more_when_there_is_no_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "solve", "1 red solid oval; 2 red solid oval; 3 purple solid oval",
                           "--color", "never")
    assert code == 0
    assert "No SET among 3 cards: deal three more." in out
    assert "color: two red, one purple" in out


def test_solve_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "solve", THREE, "--json")
    data = json.loads(out)
    assert code == 0 and data["cards"] == THREE.split("; ")
    assert data["sets"][0]["ids"] == [1, 2, 3] and data["sets"][0]["explanation"].startswith("SET")


def test_solve_bad_word_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "solve", "2 red striped oval; 1 blue solid diamond")
    assert code == 1 and out == ""
    assert err == ("setfinder: error: card 2: unknown word 'blue' in card text "
                   "(expected e.g. '2 red striped oval'); separate cards with ';'\n")


def test_solve_reads_standard_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(THREE.replace("; ", "\n")))
    code, out, _ = run_cli(capsys, "solve", "-", "--json")
    assert code == 0 and len(json.loads(out)["sets"]) == 1


# -- puzzle and odds ----------------------------------------------------------------------------------
def test_puzzle_json_has_the_asked_sets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "puzzle", "--seed", "3", "--json")
    data = json.loads(out)
    cards = [Card.parse(text) for text in data["cards"]]
    assert code == 0 and len(cards) == 12 and len(data["sets"]) == 6
    assert data["sets"] == [[i + 1 for i in s] for s in find_sets(cards)]
    code, out, _ = run_cli(capsys, "puzzle", "--easy", "--seed", "3", "--solution", "--color", "never")
    assert code == 0 and "Find the 4 SETs among these 9 cards." in out and len(out.splitlines()) == 3 + 2 + 4


def test_puzzle_impossible_target_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "puzzle", "--sets", "40")
    assert code == 1 and "SETs at most" in err


def test_odds_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "odds", "--trials", "2000", "--games", "20", "--seed", "1", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["random_tables"]["12"]["trials"] == 2000 and data["random_tables"]["15"]["sheet_odds"] == 2500
    assert data["play"]["games"] == 20


def test_odds_text_shows_the_sheet_odds(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "odds", "--trials", "1000", "--games", "10", "--seed", "2")
    assert code == 0 and "about 33 : 1" in out and "about 2500 : 1" in out and "(rule sheets: 6 to 9)" in out


# -- play ---------------------------------------------------------------------------------------------
def autoplayer(game: Game, first_player: str | None = None) -> Iterator[str]:
    """Typed lines of a perfect player: the first SET on the table, or "n" when there is none."""
    while not game.is_over:
        sets = game.sets_on_table()
        if sets:
            ids = " ".join(str(i + 1) for i in sets[0])
            yield ids if first_player is None else f"{first_player} {ids}"
        else:
            yield "n"


def test_solitaire_in_the_terminal_runs_to_the_end() -> None:
    game = Game(["you"], seed=4)
    out = io.StringIO()
    play_game(game, autoplayer(game), out)
    text = out.getvalue()
    assert game.is_over and text.startswith("SET: solitaire. Type ? for help.")
    assert "Game over: the pile is empty and no SET remains" in text
    assert f"You {game.outcome}" in text and f"Scores: you {game.scores['you']}" in text


def test_players_sharing_a_keyboard_and_match_rounds() -> None:
    game = Game(["ann", "bob"], GameOptions(match=True), seed=5)
    out = io.StringIO()

    def lines() -> Iterator[str]:
        yield "carl 1 2 3"   # unknown player
        yield "ann 1 2"      # too few cards
        yield "2: 1 2 13"    # bob, a position that is not on the table
        yield "h"
        yield from autoplayer(game, "b")

    play_game(game, lines(), out)
    text = out.getvalue()
    assert "who is 'carl'?" in text and "type three card numbers" in text
    assert "Not allowed: position 12 is not on the table" in text
    assert "Round 2 of 2, dealt by bob." in text and game.is_over
    assert game.scores["bob"] > 27 and text.rstrip().endswith("Winner: bob")


def test_wrong_set_undo_and_quit() -> None:
    game = Game(["you"], seed=6)
    out = io.StringIO()
    game.deal()
    wrong = next(t for t in [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)] if t not in game.sets_on_table())
    game.undo()
    play_game(game, [" ".join(str(i + 1) for i in wrong), "s", "u", "s", "q", "1 2 3"], out)
    text = out.getvalue()
    assert "-1. Not a SET:" in text and "Scores: you -1" in text and "Undone." in text
    assert "Scores: you 0" in text and text.rstrip().endswith("Game stopped.\nScores: you 0")


def test_german_solitaire_loses_at_a_table_without_set() -> None:
    from tests.test_cards import TWENTY_WITHOUT_SET

    game = Game(["you"], GameOptions(solitaire_reading="lose"))
    game.deal([Card.from_index(i) for i in TWENTY_WITHOUT_SET])  # 12 cards, no SET among them
    out = io.StringIO()
    ui = _TerminalGame(game, out, color=False, ascii_only=False)
    assert ui.handle("n")
    ui.finish()
    assert game.outcome == "lost"
    assert out.getvalue().splitlines()[-2:] == ["Scores: you 0", "You lost."]


def test_board_drawing_has_ids_colours_and_symbols() -> None:
    cards = parse_cards(THREE)
    plain = render_cards(cards, color=False)
    assert plain == (" 1  ◍◍  2 red striped oval           2  ◆   1 green solid diamond       "
                     " 3  ~~~ 3 purple outline squiggle")
    coloured = render_cards(cards, color=True)
    assert "\033[31m" in coloured and "\033[32m" in coloured and "\033[35m" in coloured
    assert card_cell(cards[2], color=False, ascii_only=True) == "SSS 3 purple outline squiggle"


def test_play_command_reads_standard_input(tmp_path: Path) -> None:
    log = tmp_path / "game.json"
    done = subprocess.run([sys.executable, "-m", "setfinder", "play", "--seed", "1", "--color", "always",
                           "--players", "ann,bob", "--log", str(log)],
                          input="ann 1 2 3\nq\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "SET: ann, bob." in done.stdout and "\033[" in done.stdout
    events = json.loads(log.read_text())
    assert [e["type"] for e in events][:3] == ["start", "deal", "claim"]
