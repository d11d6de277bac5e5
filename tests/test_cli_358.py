"""`setfinder 358`: help, the simulator's JSON, and the terminal game driven by lines on stdin."""

from __future__ import annotations

import io
import json
import random

import pytest

from core.game358 import Rules358, Session358
from core.strategy358 import HeuristicPlayer
from setfinder.cli import main


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
            stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["358", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert "setfinder 358 --seed 7" in out and "--simulate" in out and "--first-lead" in out


def test_simulate_json_is_one_reproducible_object(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["358", "--simulate", "12", "--json", "--seed", "5", "--players", "heuristic,random,random"]
    code, out, err = run_cli(argv, capsys, monkeypatch)
    assert code == 0 and err == ""
    stats = json.loads(out)
    assert stats["hands"] == 12 and stats["seed"] == 5
    assert [p["player"] for p in stats["players"]] == ["heuristic", "random", "random"]
    assert sum(p["mean_tricks"] for p in stats["players"]) == pytest.approx(16.0)
    assert sum(stats["trump_choices"].values()) == 12
    assert stats["sessions"]["completed"] == 4 and sum(stats["sessions"]["winners_by_seat"]) == 4
    assert run_cli(argv, capsys, monkeypatch)[1] == out


def test_simulate_text_summary(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_cli(["358", "--simulate", "3", "--seed", "1"], capsys, monkeypatch)
    assert code == 0 and "3 hands, seed 1" in out and "dealer  target 8" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["358", "--json"], "--json goes with --simulate"),
    (["358", "--simulate", "5", "--players", "heuristic,alice,random"], "--players needs three"),
    (["358", "--simulate", "0"], "positive number"),
    (["358", "--hands", "0"], "--hands must be at least 1"),
])
def test_user_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run_cli(argv, capsys, monkeypatch)
    assert code == 1 and message in err and err.count("\n") == 1


def test_a_whole_hand_played_by_pressing_enter(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run_cli(["358", "--seed", "3", "--hands", "1"], capsys, monkeypatch, stdin="\n" * 40)
    assert code == 0, err
    assert "Targets:" in out and "Trick 16:" in out and "Session over." in out
    assert "\033[" not in out  # no colour when stdout is not a terminal
    assert "┌───┐" in out


def test_colour_always_paints_red_suits_red(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _, out, _ = run_cli(["358", "--seed", "3", "--hands", "1", "--color", "always"], capsys, monkeypatch,
                        stdin="quit\n")
    assert "\033[31;1m" in out and ("♥" in out or "♦" in out)


def test_quit_leaves_the_table_and_end_of_input_is_an_error(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_cli(["358", "--seed", "3"], capsys, monkeypatch, stdin="quit\n")
    assert code == 0 and "You left the table." in out
    code, _, err = run_cli(["358", "--seed", "3"], capsys, monkeypatch, stdin="\n\n")
    assert code == 1 and "input ended before the game was over" in err


def _enters_until_a_revoke_is_possible(seed: int) -> tuple[int, str, str]:
    """Replay the game the CLI will play (bots and the Enter suggestion are the same deterministic
    heuristic) up to the first turn where you follow a suit while holding another one. Returns the
    number of Enter presses before it, an off-suit card to try, and the suit led."""
    session = Session358(Rules358(session_hands=1), rng=random.Random(seed))
    hand, player, enters = session.hand, HeuristicPlayer(), 0
    while not hand.is_over():
        seat = hand.to_move
        assert seat is not None
        if seat == 0 and hand.phase == "play" and hand.current_trick:
            led = hand.current_trick[0][1].suit
            held = hand.cards_of(0)
            off_suit = sorted(c for c in held if c.suit != led)
            if off_suit and any(c.suit == led for c in held):
                return enters, off_suit[0].code, led.label
        if seat == 0:
            enters += 1
        hand.push(player.choose(hand.view_for(seat)), seat)
    raise AssertionError("no chance to revoke in this deal; pick another seed")


def test_an_illegal_card_is_refused_with_the_rule_and_asked_again(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    enters, card, suit = _enters_until_a_revoke_is_possible(3)
    stdin = "\n" * enters + f"{card}\nzz\n" + "\n" * 40
    code, out, err = run_cli(["358", "--seed", "3", "--hands", "1"], capsys, monkeypatch, stdin=stdin)
    assert code == 0, err
    assert f"Not allowed: must follow suit: you hold {suit}" in out
    assert "Not allowed: not a card: 'zz'" in out
    assert "Session over." in out
