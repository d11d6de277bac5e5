"""Play 358 "Sargento mayor" in the terminal against two computer players, or simulate hands.

You sit at seat 0; Ada sits on your left (she plays after you) and Bo on your right. Type a card
as rank then suit (10h, AS, q♠), or its number in the list of legal cards; press Enter for the
suggested move; "help" lists the commands, "quit" leaves the table. Moves are read from stdin, so a
game can be scripted by piping lines in.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Sequence
from typing import TextIO

from core.game358 import (
    ROLES, Action, PlayingCardParseError, Hand358, HandView, PlayingCard, Rule358Error, Rules358,
    Session358, Suit, Trick, role_of, sort_for_display,
)
from core.strategy358 import HeuristicPlayer, Player358, RandomPlayer, simulate
from setfinder.errors import UserError

NAME = "358"
ORDER = 60

SEAT_NAMES = ("You", "Ada", "Bo")
HUMAN = 0
_PLAYER_KINDS = ("heuristic", "random")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        NAME, help="play 358 (Sargento mayor) against two computer players",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n  setfinder 358 --seed 7\n"
               "  setfinder 358 --simulate 1000 --json --players heuristic,random,random")
    parser.add_argument("--seed", type=int, default=None, help="seed for a reproducible deal")
    parser.add_argument("--hands", type=int, default=3, metavar="N",
                        help="hands in a session (default 3: everyone deals once)")
    parser.add_argument("--simulate", type=int, default=None, metavar="N",
                        help="play N hands between computer players and print statistics")
    parser.add_argument("--json", action="store_true", help="with --simulate: print one JSON object")
    parser.add_argument("--players", default="heuristic,heuristic,heuristic", metavar="A,B,C",
                        help="with --simulate: the player at seats 0,1,2 (heuristic or random)")
    parser.add_argument("--announcer", choices=ROLES, default="dealer",
                        help="who names trumps (default dealer, the usual rule)")
    parser.add_argument("--first-lead", choices=("announcer", *ROLES), default="announcer",
                        help="who leads trick 1 (default announcer, as the sheet says)")
    parser.add_argument("--kitty", choices=("discard-first", "take-first"), default="discard-first",
                        help="discard 4 then take the kitty (the sheet), or take it first")
    parser.add_argument("--sudden-win", type=int, default=None, metavar="TRICKS",
                        help="a player taking this many tricks in one hand wins at once (e.g. 12)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="ANSI colours (auto: only on a terminal, and not when NO_COLOR is set)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rules = _rules_from(args)
    if args.simulate is not None:
        return _run_simulation(args, rules)
    if args.json:
        raise UserError("--json goes with --simulate N (the interactive game prints no JSON)")
    use_colour = args.color == "always" or (
        args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    game = TerminalGame(rules, seed=args.seed, stdin=sys.stdin, stdout=sys.stdout, colour=use_colour)
    return game.play()


def _rules_from(args: argparse.Namespace) -> Rules358:
    if args.hands < 1:
        raise UserError(f"--hands must be at least 1, got {args.hands}")
    if args.sudden_win is not None and not 6 <= args.sudden_win <= 16:
        raise UserError(f"--sudden-win must be between 6 and 16 tricks, got {args.sudden_win}")
    return Rules358(announcer=args.announcer, first_lead=args.first_lead, kitty_order=args.kitty,
                    session_hands=args.hands, sudden_win=args.sudden_win)


def _run_simulation(args: argparse.Namespace, rules: Rules358) -> int:
    if args.simulate < 1:
        raise UserError(f"--simulate needs a positive number of hands, got {args.simulate}")
    kinds = [k.strip() for k in args.players.split(",")]
    if len(kinds) != 3 or any(k not in _PLAYER_KINDS for k in kinds):
        raise UserError(f"--players needs three of {', '.join(_PLAYER_KINDS)} separated by commas, "
                        f"got {args.players!r}")
    base = args.seed if args.seed is not None else random.randrange(2**31)
    players: list[Player358] = [
        HeuristicPlayer() if kind == "heuristic" else RandomPlayer(random.Random(base * 3 + seat + 1))
        for seat, kind in enumerate(kinds)]
    stats = simulate(args.simulate, players, seed=base, rules=rules)
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    print(f"{stats['hands']} hands, seed {base}, sessions of {rules.session_hands} hands")
    print(f"{'seat':<6}{'player':<11}{'tricks':>8}{'points':>8}{'made':>7}{'sessions':>10}")
    for row in stats["players"]:
        print(f"{row['seat']:<6}{row['player']:<11}{row['mean_tricks']:>8.2f}{row['mean_points']:>+8.2f}"
              f"{row['made_target']:>7.0%}{row['sessions_won']:>10}")
    for role, row in stats["roles"].items():
        print(f"{role:<7} target {row['target']}: mean {row['mean_tricks']:.2f} tricks, "
              f"made {row['made_target']:.0%}")
    print("trumps: " + ", ".join(f"{suit} {count}" for suit, count in stats["trump_choices"].items()))
    return 0


# -- drawing --------------------------------------------------------------------------------------
class Paint:
    """ANSI colours, or plain text when disabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text

    def card(self, card: PlayingCard, *, dim: bool = False) -> str:
        text = str(card)
        if dim:
            return self._wrap("2", text)
        return self._wrap("31;1", text) if card.suit.is_red else self._wrap("1", text)

    def suit(self, suit: Suit) -> str:
        text = f"{suit.symbol} {suit.label}"
        return self._wrap("31;1", text) if suit.is_red else self._wrap("1", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def draw_cards(cards: Sequence[PlayingCard], paint: Paint, *, playable: Sequence[PlayingCard] = (),
               per_row: int = 16) -> list[str]:
    """Cards as small boxes, three text lines per row of up to ``per_row`` cards. Cards not in
    ``playable`` (when given) are drawn dim."""
    lines: list[str] = []
    for start in range(0, len(cards), per_row):
        row = cards[start:start + per_row]
        top, middle, bottom = [], [], []
        for card in row:
            dim = bool(playable) and card not in playable
            face = paint.card(card, dim=dim) + " " * (3 - len(str(card)))
            edge = paint.dim if dim else (lambda text: text)
            top.append(edge("┌───┐"))
            middle.append(edge("│") + face + edge("│"))
            bottom.append(edge("└───┘"))
        lines += ["".join(top), "".join(middle), "".join(bottom)]
    return lines


# -- the interactive game -------------------------------------------------------------------------
class _Quit(Exception):
    """The player typed quit."""


class TerminalGame:
    """You (seat 0) against two `HeuristicPlayer`s; reads moves from ``stdin``, writes to ``stdout``."""

    def __init__(self, rules: Rules358, *, seed: int | None, stdin: TextIO, stdout: TextIO,
                 colour: bool = False) -> None:
        self.session = Session358(rules, rng=random.Random(seed))
        self.bots: dict[int, Player358] = {1: HeuristicPlayer(), 2: HeuristicPlayer()}
        self.adviser = HeuristicPlayer()
        self.stdin, self.stdout = stdin, stdout
        self.paint = Paint(colour)

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout)

    def play(self) -> int:
        """Play the whole session; returns the exit code."""
        self.say(self.paint.bold("358 Sargento mayor") + ": you against Ada (on your left, she plays "
                 "after you) and Bo (on your right). Type help for the commands.")
        try:
            while True:
                self._play_hand(self.session.hand)
                if self.session.is_over():
                    break
                self.session.deal_next()
        except _Quit:
            self.say("You left the table.")
            return 0
        winner = self.session.winner()
        totals = self.session.totals
        self.say(self.paint.bold("Session over. ") + self._per_seat(totals, signed=True))
        self.say(f"{SEAT_NAMES[winner.seat]} {'win' if winner.seat == HUMAN else 'wins'} "
                 f"the session: {winner.detail}.")
        return 0

    # -- one hand ----------------------------------------------------------------------------------
    def _play_hand(self, hand: Hand358) -> None:
        number = len(self.session.hands)
        self.say()
        self.say(self.paint.bold(f"=== Hand {number} of {self.session.rules.session_hands} === ")
                 + f"{SEAT_NAMES[hand.dealer]} deal{'' if hand.dealer == HUMAN else 's'}. "
                 + "Targets: " + self._per_seat(hand.targets))
        if hand.previous_points is not None:
            self.say("Last hand: " + self._per_seat(hand.previous_points, signed=True))
        self._show_hand(hand.view_for(HUMAN))
        while not hand.is_over():
            seat = hand.to_move
            assert seat is not None
            view = hand.view_for(seat)
            if seat == HUMAN:
                self._human_turn(hand, view)
            else:
                action = self.bots[seat].choose(view)
                hand.push(action, seat)
                self._narrate(hand, seat, action)
        result = hand.result()
        self.say(self.paint.bold("Hand over. ") + "Tricks: " + self._per_seat(result.tricks_won)
                 + " | points: " + self._per_seat(result.points, signed=True))
        self.say("Session totals: " + self._per_seat(self.session.totals, signed=True))

    def _narrate(self, hand: Hand358, seat: int, action: Action) -> None:
        name = SEAT_NAMES[seat]
        if action.kind == "pass":
            exchange = hand.exchanges[-1]
            if HUMAN in (exchange.giver, exchange.receiver):
                self._tell_exchange(exchange.giver, exchange.receiver, exchange.passed, exchange.returned)
            else:
                self.say(f"{name} passes a card to {SEAT_NAMES[exchange.receiver]} and gets one back.")
        elif action.kind == "announce":
            assert action.suit is not None
            took = " and takes the kitty" if hand.kitty_taken else ""
            self.say(f"{name} announces trumps: {self.paint.suit(action.suit)}{took}.")
        elif action.kind == "discard":
            if hand.phase != "discard":
                took = "" if hand.rules.kitty_order == "take-first" else " and takes the kitty"
                self.say(f"{name} sets aside 4 cards{took}.")
        elif action.kind == "play":
            self._after_play(hand)

    def _tell_exchange(self, giver: int, receiver: int, passed: PlayingCard, returned: PlayingCard) -> None:
        p = self.paint
        if passed == returned:
            self.say(f"Exchange: {SEAT_NAMES[giver]} pass{'' if giver == HUMAN else 'es'} "
                     f"{p.card(passed)} to {SEAT_NAMES[receiver]}; nothing stronger in that suit, "
                     f"so it comes back.")
        else:
            self.say(f"Exchange: {SEAT_NAMES[giver]} pass{'' if giver == HUMAN else 'es'} "
                     f"{p.card(passed)} to {SEAT_NAMES[receiver]} and get{'' if giver == HUMAN else 's'} "
                     f"{p.card(returned)} back.")

    def _after_play(self, hand: Hand358) -> None:
        if hand.current_trick:
            return  # the trick is still open: shown when it closes or on your turn
        trick = hand.tricks[-1]
        self.say(self._trick_line(trick, len(hand.tricks)))

    def _trick_line(self, trick: Trick, number: int) -> str:
        plays = " · ".join(f"{SEAT_NAMES[s]} {self.paint.card(c)}" for s, c in trick.plays)
        winner = SEAT_NAMES[trick.winner]
        return f"Trick {number:>2}: {plays}  -> {self.paint.bold(winner)} {'win' if trick.winner == HUMAN else 'wins'}"

    def _per_seat(self, values: Sequence[int], *, signed: bool = False) -> str:
        return " · ".join(f"{SEAT_NAMES[s]} {values[s]:+d}" if signed else f"{SEAT_NAMES[s]} {values[s]}"
                          for s in range(3))

    def _show_hand(self, view: HandView, playable: Sequence[PlayingCard] = ()) -> None:
        for line in draw_cards(sort_for_display(view.hand), self.paint, playable=playable):
            self.say(line)

    def _status(self, view: HandView) -> str:
        trumps = self.paint.suit(view.trump) if view.trump is not None else "not named yet"
        roles = " · ".join(f"{SEAT_NAMES[s]} {view.tricks_won[s]}/{view.targets[s]}"
                           f" ({role_of(s, view.dealer)})" for s in range(3))
        return f"Trumps {trumps} | tricks/target: {roles} | trick {len(view.tricks) + 1} of 16"

    # -- your turn ---------------------------------------------------------------------------------
    def _human_turn(self, hand: Hand358, view: HandView) -> None:
        suggestion = self.adviser.choose(view)
        legal = list(view.legal_actions)
        cards = [a.card for a in legal if a.card is not None]
        self.say()
        self.say(self._status(view))
        if view.phase == "play":
            table = " · ".join(f"{SEAT_NAMES[s]} {self.paint.card(c)}" for s, c in view.current_trick)
            self.say(f"Table: {table}" if table else "Table: empty, you lead.")
        self._show_hand(view, playable=cards if view.phase == "play" else ())
        prompt = self._prompt(view, legal, suggestion)
        while True:
            line = self._read(prompt)
            command = line.strip().lower()
            if command in ("q", "quit", "exit"):
                raise _Quit
            if command in ("?", "h", "help"):
                self._help()
                continue
            if command == "hint":
                self.say(f"Suggested: {suggestion}")
                continue
            applied = 0
            try:
                for action in self._parse(command, view, legal, suggestion):
                    hand.push(action, HUMAN)
                    applied += 1
                    self._narrate_human(hand, action)
                    if hand.to_move != HUMAN or hand.phase != view.phase:
                        break
                return
            except (Rule358Error, PlayingCardParseError) as error:
                self.say(f"  Not allowed: {error}")
                if applied:  # part of a list of discards went through: ask again afresh
                    return

    def _prompt(self, view: HandView, legal: Sequence[Action], suggestion: Action) -> str:
        if suggestion.suit is not None:
            shown = suggestion.suit.symbol
        else:
            assert suggestion.card is not None
            shown = self.paint.card(suggestion.card)
        if view.phase == "announce":
            return f"Name trumps (s/h/d/c) [Enter = {shown}]: "
        if view.phase == "exchange":
            pending = view.pending_exchange
            assert pending is not None
            return (f"Pass a card to {SEAT_NAMES[pending.receiver]} ({pending.count} to go) "
                    f"[Enter = {shown}]: ")
        if view.phase == "discard":
            return f"Set aside a card for the kitty ({4 - len(view.discards)} to go) [Enter = {shown}]: "
        numbered = " ".join(f"{i}:{self.paint.card(a.card)}" for i, a in enumerate(legal, 1)
                            if a.card is not None)
        return f"Play ({numbered}) [Enter = {shown}]: "

    def _parse(self, command: str, view: HandView, legal: Sequence[Action],
               suggestion: Action) -> list[Action]:
        if not command:
            return [suggestion]
        if view.phase == "announce":
            return [Action.announce(Suit.parse(command))]
        make = {"exchange": Action.pass_card, "discard": Action.discard, "play": Action.play}[view.phase]
        words = command.replace(",", " ").split()
        if view.phase != "discard" and len(words) > 1:
            raise PlayingCardParseError(f"one card at a time, please (got {command!r})")
        actions = []
        for word in words:
            if word.isdigit() and view.phase == "play" and 1 <= int(word) <= len(legal):
                actions.append(legal[int(word) - 1])
            else:
                actions.append(make(PlayingCard.parse(word)))
        return actions

    def _narrate_human(self, hand: Hand358, action: Action) -> None:
        if action.kind == "pass":
            e = hand.exchanges[-1]
            self._tell_exchange(e.giver, e.receiver, e.passed, e.returned)
        elif action.kind == "announce":
            assert action.suit is not None
            self.say(f"You announce trumps: {self.paint.suit(action.suit)}.")
            if hand.kitty_taken:
                self.say("You take the kitty: " + " ".join(self.paint.card(c) for c in hand.view_for(HUMAN).kitty_taken))
        elif action.kind == "discard":
            assert action.card is not None
            self.say(f"You set aside {self.paint.card(action.card)}.")
            if hand.phase != "discard" and hand.rules.kitty_order == "discard-first":
                self.say("You take the kitty: " + " ".join(self.paint.card(c) for c in hand.view_for(HUMAN).kitty_taken))
        else:
            self._after_play(hand)

    def _read(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.say()
            raise UserError("input ended before the game was over; type moves, or press Enter "
                            "for the suggested one (or type quit)")
        if not self.stdin.isatty():  # piped moves: echo them so the transcript reads like a game
            self.say(line.strip())
        return line

    def _help(self) -> None:
        self.say("Type a card as rank then suit: 10h, AS, q♠, Th. In play you may type its number "
                 "from the list instead.")
        self.say("Enter = the suggested move; hint = show it; quit = leave the table.")
        self.say("Rules: follow the suit led if you can (no need to beat it); otherwise play anything. "
                 "The highest trump wins, else the highest card of the suit led.")
