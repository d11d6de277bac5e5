"""`setfinder play`: SET in the terminal, solitaire or several players sharing one keyboard.

The game loop reads commands line by line from a text stream and writes to another, so tests
drive it with `io.StringIO` (see `play_game`). The rules are all in `core.game`; this module
only draws the table and turns typed lines into engine actions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from core.cards import Card
from core.game import ClaimResult, Game, GameError, GameOptions
from setfinder.errors import UserError

NAME = "play"
ORDER = 40

# ANSI colours for the card colours (purple drawn as magenta), and a reset.
_ANSI = {"red": "\033[31m", "green": "\033[32m", "purple": "\033[35m"}
_BOLD, _RESET = "\033[1m", "\033[0m"
# One symbol per shape and shading; the words beside the symbols say the same, so the board
# reads without colour or a Unicode font.
_SYMBOLS = {
    "oval": {"solid": "●", "striped": "◍", "outline": "○"},
    "diamond": {"solid": "◆", "striped": "◈", "outline": "◇"},
    "squiggle": {"solid": "≈", "striped": "∿", "outline": "~"},
}
_ASCII_SYMBOLS = {"oval": "O", "diamond": "D", "squiggle": "S"}
COLUMNS = 3

HELP_TEXT = """\
Commands:
  1 5 9          take cards 1, 5 and 9 (solitaire)
  ann 1 5 9      player ann (or her number, e.g. 1: 1 5 9) calls SET and takes cards 1, 5, 9
  n              everybody agrees there is no SET: deal three more
  h              hint: one card of a SET on the table
  u              undo the last action
  s              scores
  ?              this help
  q              quit"""


def card_cell(card: Card, *, color: bool, ascii_only: bool = False) -> str:
    """One card as text: its symbols then its words, e.g. "◆◆ 2 red solid diamond"."""
    symbol = _ASCII_SYMBOLS[card.shape] if ascii_only else _SYMBOLS[card.shape][card.shading]
    text = f"{symbol * card.count:<3} {card}"
    if color:
        weight = _BOLD if card.shading == "solid" else ""
        return f"{weight}{_ANSI[card.color]}{text}{_RESET}"
    return text


def render_cards(cards: Sequence[Card], *, color: bool, ascii_only: bool = False,
                 columns: int = COLUMNS) -> str:
    """The cards as a numbered grid (1-based ids), ``columns`` to a row."""
    width = max((len(card_cell(c, color=False, ascii_only=ascii_only)) for c in cards), default=0)
    lines = []
    for start in range(0, len(cards), columns):
        cells = []
        for number, card in enumerate(cards[start:start + columns], start + 1):
            plain = card_cell(card, color=False, ascii_only=ascii_only)
            shown = card_cell(card, color=color, ascii_only=ascii_only)
            cells.append(f"{number:>2}  {shown}{' ' * (width - len(plain))}")
        lines.append("   ".join(cells).rstrip())
    return "\n".join(lines)


def use_color(choice: str, stream: TextIO) -> bool:
    """"always", "never", or "auto": colour when writing to a terminal and NO_COLOR is unset."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return stream.isatty() and "NO_COLOR" not in os.environ


def play_game(game: Game, lines: Iterable[str], out: TextIO, *, color: bool = False,
              ascii_only: bool = False) -> None:
    """Run ``game`` from typed lines until it is over, the input ends, or the player quits.

    ``lines`` is any iterable of lines (``sys.stdin``, a list, a generator that reads the game).
    Deals the first round (and each next round in match play) itself.
    """
    ui = _TerminalGame(game, out, color=color, ascii_only=ascii_only)
    ui.start()
    for line in lines:
        if not ui.handle(line):
            break
        if game.is_over:
            break
    ui.finish()


class _TerminalGame:
    def __init__(self, game: Game, out: TextIO, *, color: bool, ascii_only: bool) -> None:
        self.game = game
        self.out = out
        self.color = color
        self.ascii_only = ascii_only

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def start(self) -> None:
        game = self.game
        who = "solitaire" if game.is_solitaire else ", ".join(game.players)
        self.say(f"SET: {who}. Type ? for help.")
        self.deal()

    def deal(self) -> None:
        game = self.game
        game.deal()
        if game.rounds > 1:
            self.say(f"Round {game.round} of {game.rounds}, dealt by {game.dealer}.")
        self.show()

    def show(self) -> None:
        game = self.game
        self.say()
        self.say(render_cards(game.table, color=self.color, ascii_only=self.ascii_only))
        self.say(f"({len(game.table)} cards on the table, {game.pile_size} in the pile)")
        self.prompt()

    def prompt(self) -> None:
        if not self.game.is_over and self.game.phase == "playing":
            print("> ", end="", file=self.out, flush=True)

    def handle(self, line: str) -> bool:
        """Act on one typed line; False when the player quits."""
        words = line.replace(",", " ").replace(":", " ").split()
        if not words:
            self.prompt()
            return True
        command = words[0].lower()
        try:
            if command in ("q", "quit", "exit"):
                return False
            if command in ("?", "help"):
                self.say(HELP_TEXT)
                self.prompt()
            elif command in ("s", "score", "scores"):
                self.say(self.score_line())
                self.prompt()
            elif command in ("u", "undo"):
                self.undo()
            elif command in ("h", "hint"):
                self.hint()
            elif command in ("n", "no", "none", "noset", "no-set"):
                self.no_set()
            else:
                self.take(words)
        except GameError as error:
            self.say(f"Not allowed: {error}")
            self.prompt()
        except UserError as error:
            self.say(str(error))
            self.prompt()
        return True

    def undo(self) -> None:
        game = self.game
        game.undo()
        if game.phase == "round-over":  # the next round was dealt for the player: undo the SET too
            game.undo()
        if game.phase == "not-dealt":  # nothing before the first deal: deal it again (same cards)
            game.deal()
            self.say("Nothing to undo.")
            self.prompt()
            return
        self.say("Undone.")
        self.show()

    def take(self, words: list[str]) -> None:
        game = self.game
        if game.is_solitaire:
            player, ids = game.players[0], words
        else:
            player, ids = self.player_named(words[0]), words[1:]
        if len(ids) != 3 or not all(w.isdigit() for w in ids):
            raise UserError("type three card numbers, e.g. 1 5 9" +
                            ("" if game.is_solitaire else ", after the player's name or number"))
        positions = [int(w) - 1 for w in ids]
        result = game.claim(player, positions)
        self.report(result)

    def player_named(self, word: str) -> str:
        players = self.game.players
        if word.isdigit() and 1 <= int(word) <= len(players):
            return players[int(word) - 1]
        matches = [p for p in players if p.lower().startswith(word.lower())]
        if len(matches) != 1:
            raise UserError(f"who is {word!r}? Start with a player's name or number: "
                            + ", ".join(f"{i}={p}" for i, p in enumerate(players, 1)))
        return matches[0]

    def report(self, result: ClaimResult) -> None:
        who = "" if self.game.is_solitaire else f"{result.player}: "
        if result.is_set:
            note = " That cancels your \"no SET\" penalty." if result.cancels_penalty else ""
            self.say(f"{who}SET! +1.{note}")
        else:
            self.say(f"{who}-1. {result.reason}")
        self.after_action()

    def no_set(self) -> None:
        result = self.game.call_no_set()
        if not result.accepted:
            self.say(f"There is a SET on the table ({result.reason}). Keep looking.")
            self.prompt()
            return
        penalty = " -1." if result.points else ""
        self.say(f"Right: {result.reason}.{penalty}")
        self.after_action()

    def hint(self) -> None:
        sets = self.game.sets_on_table()
        if sets:
            self.say(f"Card {sets[0][0] + 1} is part of a SET.")
        else:
            self.say("There is no SET here: type n to deal three more.")
        self.prompt()

    def after_action(self) -> None:
        game = self.game
        if game.phase == "round-over":
            self.say(f"Round {game.round} over. {self.score_line()}")
            self.deal()
        elif not game.is_over:
            self.show()

    def score_line(self) -> str:
        game = self.game
        return "Scores: " + ", ".join(f"{p} {s}" for p, s in game.scores.items())

    def finish(self) -> None:
        game = self.game
        self.say()
        if game.is_over:
            left = len(game.table)
            self.say(f"Game over: the pile is empty and no SET remains ({left} cards left)."
                     if game.outcome != "lost" or game.options.solitaire_reading != "lose"
                     else "Game over: no SET among the cards on the table.")
        else:
            self.say("Game stopped.")
        self.say(self.score_line())
        if game.is_solitaire and game.outcome:
            reason = ""
            if game.outcome == "lost" and game.options.solitaire_reading == "penalty":
                reason = f" ({game.owed_penalties} \"no SET\" penalty not cancelled among the last cards)"
            self.say(f"You {game.outcome}{reason}.")
        elif game.is_over:
            self.say("Winner: " + " and ".join(game.winners))


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        NAME, help="play SET in the terminal (solitaire or players sharing a keyboard)",
        description="Play SET in the terminal. Alone it is solitaire; with --players several people "
                    "share the keyboard and type their name before the three card numbers. Commands "
                    "are read from standard input, one per line (type ? for help).",
        epilog="Example: setfinder play --players ann,bob --seed 7")
    parser.add_argument("--players", default="you",
                        help="comma-separated player names, in seating order (default: solitaire)")
    parser.add_argument("--easy", action="store_true", help="the 27 solid cards, 9 on the table")
    parser.add_argument("--match", action="store_true",
                        help="longer game: the deal passes left until every player has dealt once")
    parser.add_argument("--lose-on-no-set", action="store_true",
                        help="solitaire, German sheet: the first table without a SET loses "
                             "(default: a penalty to cancel among the last cards)")
    parser.add_argument("--seed", type=int, default=None, help="shuffle seed, to replay the same game")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the cards with ANSI codes (default: when writing to a terminal)")
    parser.add_argument("--ascii", action="store_true", help="letters O/S/D instead of Unicode symbols")
    parser.add_argument("--log", type=Path, default=None, help="write the game's event log (JSON) here")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    players = [name.strip() for name in args.players.split(",") if name.strip()]
    if not players or len(set(players)) != len(players):
        raise UserError("--players needs distinct names separated by commas, e.g. --players ann,bob")
    options = GameOptions(easy=args.easy, match=args.match,
                          solitaire_reading="lose" if args.lose_on_no_set else "penalty")
    game = Game(players, options, seed=args.seed)
    play_game(game, sys.stdin, sys.stdout, color=use_color(args.color, sys.stdout), ascii_only=args.ascii)
    if args.log is not None:
        try:
            args.log.write_text(json.dumps(game.log, indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            raise UserError(f"could not write the log to {args.log}: {error.strerror}") from None
    return 0
