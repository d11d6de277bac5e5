"""The referee on whole generated games: photos of the table after every deal, read by the card
reader, refereed through `setfinder referee`'s session.

    nice -n 10 python bench/bench_referee.py                 # 12 easy-deck games, about 2 minutes
    nice -n 10 python bench/bench_referee.py --effects 1.0   # with light, blur, noise and JPEG

Each game is played by the rules on a shuffled easy deck (9 cards out, SETs taken, three more
dealt on "no SET"); the scene generator photographs the table after each deal (one seed per game,
so the table, light and camera stay put). Players call the numbers the overlay shows on the
physical cards, found from the photo's ground truth corners, as a person reads them off the
screen. Per game it prints whether the referee followed the game exactly to its end, how many
views it flagged and how many calls it answered with "show the cards more clearly"; the last
line counts games refereed exactly and points awarded or taken wrongly (the referee's promise:
never, at worst it asks for a better view).
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.cards import Card, easy_deck, find_sets  # noqa: E402
from core.referee import Referee  # noqa: E402
from core.referee_table import inside_corners  # noqa: E402
from setfinder.commands.referee import PhotoSource, Session  # noqa: E402
from vision.recognize import Recognizer  # noqa: E402
from vision.scene import generate_scene  # noqa: E402


def photograph(folder: Path, seed: int, number: int, cards: list[Card], effects: float) -> dict[str, Any]:
    image, truth = generate_scene(seed, len(cards), cards=cards, layout="grid", tilt=5.0, partial=False,
                                  overlap=False, effects=effects, distractors=False)
    cv2.imwrite(str(folder / f"photo-{number:02d}.png"), image)
    return truth


def overlay_numbers(referee: Referee, truth: dict[str, Any], cards: list[Card]) -> list[str]:
    """The numbers drawn on these physical cards ("?" where the referee shows none)."""
    numbers = []
    for card in cards:
        entry = next(e for e in truth["cards"] if e["card"] == str(card))
        a, b, c, d = ((float(x), float(y)) for x, y in entry["corners"])
        hits = [i + 1 for i, seen in enumerate(referee.table) if inside_corners(seen.center, (a, b, c, d))]
        numbers.append(str(hits[0]) if hits else "?")
    return numbers


def play(seed: int, effects: float, recognizer: Recognizer) -> tuple[bool, int, int, int]:
    """One game: (refereed exactly, flagged views, better-view answers, points given wrongly)."""
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        deck = easy_deck()
        random.Random(seed).shuffle(deck)
        slots, pile = deck[:9], deck[9:]
        truths = [photograph(folder, seed, 1, slots, effects)]
        plan: list[tuple[str, str, list[Card]]] = []
        expected = {"Ana": 0, "Ben": 0}
        for turn in range(30):
            player = ("Ana", "Ben")[turn % 2]
            if not find_sets(slots):
                plan.append(("noset", player, []))
                if not pile:
                    break
                slots, pile = slots + pile[:3], pile[3:]
            else:
                taken = [slots[i] for i in find_sets(slots)[0]]
                plan.append(("claim", player, taken))
                expected[player] += 1
                if len(slots) <= 9 and pile:
                    slots = [pile[taken.index(c)] if c in taken else c for c in slots]
                    pile = pile[3:]
                else:
                    slots = [c for c in slots if c not in taken]
                if not pile and not find_sets(slots):
                    break
            truths.append(photograph(folder, seed, len(truths) + 1, slots, effects))
            plan.append(("next", "", []))
        out = io.StringIO()
        referee = Referee(["Ana", "Ben"], easy=True)
        session = Session(referee, PhotoSource(folder, recognizer), out)
        session.next_view()
        view = 0
        for kind, player, cards in plan:
            if kind == "next":
                view += 1
                session.execute("next")
            elif kind == "noset":
                session.execute(f"noset {player}")
            else:
                session.execute(f"claim {player} " + " ".join(overlay_numbers(referee, truths[view], cards)))
        text = out.getvalue()
        exact = referee.is_over and referee.scores == expected
        # Every claim in the plan is a real SET and every "no SET" true: a -1 or a score above
        # the expected one is a point given wrongly.
        wrong = sum(max(0, referee.scores[p] - expected[p]) for p in expected)
        wrong += sum(1 for e in referee.events if e["event"] == "claim" and e["verdict"] == "not-a-set")
        return exact, text.count("not accepted"), text.count("Cannot "), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--first-seed", type=int, default=40)
    parser.add_argument("--effects", type=float, default=0.0, help="0 = clean drawing .. 1 = full realism")
    args = parser.parse_args()
    recognizer = Recognizer()
    totals = [0, 0, 0, 0]
    for seed in range(args.first_seed, args.first_seed + args.games):
        exact, flagged, unsure, wrong = play(seed, args.effects, recognizer)
        print(f"seed {seed}: {'exact' if exact else 'not exact'}, flagged views {flagged}, "
              f"better-view answers {unsure}, points given wrongly {wrong}", flush=True)
        for i, value in enumerate((exact, flagged, unsure, wrong)):
            totals[i] += int(value)
    print(f"effects {args.effects}: {totals[0]}/{args.games} games refereed exactly to the end; "
          f"{totals[1]} views flagged, {totals[2]} better-view answers, {totals[3]} points given wrongly")


if __name__ == "__main__":
    main()
