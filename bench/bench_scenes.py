"""Photo mode on generated scenes with exact ground truth, across every table kind.

Detection precision and recall (a detection matches a labelled card when their quads overlap
with IoU > 0.5, for a card cut by the frame edge the part of it in view; cards under half in
view are not expected, and a detection reported partial that outlines the part in view of such
a card counts neither as found nor as false: "cut card reported partial"), reading accuracy
per attribute and per card on the cards found with the wrong readings not flagged uncertain
(the ones a user would trust), whole-board accuracy (every card found and read right, nothing
extra) and SET-list accuracy.

    python bench/bench_scenes.py [--scenes 200] [--effects 1.0] [--out DIR] [--model FILE]
    python bench/bench_scenes.py --scenes 45 --cards 1 --seed 7000   # close-ups of one card
    python bench/bench_scenes.py --scenes 90 --cards 0 --seed 11000  # empty tables, props and all
    python bench/bench_scenes.py --scenes 120 --seed 20000 --layout touching  # grids of touching cards
    python bench/bench_scenes.py --list       # also every card lost, false or read wrong, one a line
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from _common import add_model_option, markdown_table, recognizer_for

import cv2
import numpy as np

from core import Card, find_sets
from setfinder.progress import progress
from vision.overlay import draw_board
from vision.scene import LAYOUTS, generate_scene
from vision.tables import TABLES
from vision.quad import quad_iou  # as vision.training matches detections to cards

ATTRIBUTES = ("count", "color", "shading", "shape")


def in_frame_iou(quad: np.ndarray, card: list[list[float]], shape: tuple[int, ...]) -> float:
    """IoU of a detection with the part of a labelled card inside the image of ``shape``."""
    canvas_a = np.zeros(shape[:2], np.uint8)
    canvas_b = np.zeros_like(canvas_a)
    cv2.fillConvexPoly(canvas_a, np.round(quad).astype(np.int32), 1)
    cv2.fillConvexPoly(canvas_b, np.round(np.array(card)).astype(np.int32), 1)
    union = np.count_nonzero(canvas_a | canvas_b)
    return np.count_nonzero(canvas_a & canvas_b) / union if union else 0.0


def overlap(quad: np.ndarray, card: dict, shape: tuple[int, ...]) -> float:
    """IoU of a detection with a labelled card, or for a card cut by the frame with the part of
    it in view, where the detection has nothing else to outline (against the whole card, a card
    52% in view outlined exactly scores 0.52)."""
    iou = quad_iou(quad, np.array(card["corners"], np.float32))
    if card["partial"] and iou <= 0.5:
        iou = max(iou, in_frame_iou(quad, card["corners"], shape))
    return iou


def _where(corners: object) -> str:
    x, y = np.asarray(corners, np.float64).mean(axis=0)
    return f"{x:.0f},{y:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--effects", type=float, default=1.0, help="scene difficulty 0..1")
    parser.add_argument("--seed", type=int, default=1000, help="first scene seed")
    parser.add_argument("--cards", type=int, help="cards on every table (default: 3-21 at random)")
    parser.add_argument("--layout", choices=LAYOUTS,
                        help="how the cards lie (default: the generator's mix; touching: grids edge to edge)")
    add_model_option(parser)
    parser.add_argument("--out", help="write annotated scenes with errors here")
    parser.add_argument("--list", action="store_true",
                        help="also list every card lost, false or read wrong (seed, table, where, what), "
                             "to compare two versions of the code card by card")
    args = parser.parse_args()
    recognizer = recognizer_for(args.model)
    tables = list(TABLES)
    per_table: dict[str, Counter[str]] = defaultdict(Counter)
    attribute_right: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    listed: list[str] = []
    for index in progress(range(args.scenes), label="scenes"):
        seed = args.seed + index
        rng = np.random.default_rng(seed)
        table = tables[index % len(tables)]
        n_cards = args.cards if args.cards is not None else int(rng.integers(3, 22))
        image, truth = generate_scene(seed, n_cards, size=(960, 720), table=table, layout=args.layout,
                                      effects=args.effects)
        board = recognizer.read_board(image)
        # Cards a person would count: at least half visible.
        expected = [c for c in truth["cards"] if c["visible_fraction"] >= 0.5]
        cut_cards = [c for c in truth["cards"] if c["visible_fraction"] < 0.5 and c["partial"]]
        used: set[int] = set()
        matches = []
        false_cards = cut_reported = 0
        for i, seen in enumerate(board.cards):
            quad = np.array(seen.corners, np.float32)
            scores = [(overlap(quad, c, image.shape), j) for j, c in enumerate(expected)]
            best = max(scores, default=(0.0, -1))
            if best[0] > 0.5 and best[1] not in used:
                used.add(best[1])
                matches.append((i, best[1]))
            elif seen.partial and any(in_frame_iou(quad, c["corners"], image.shape) > 0.5 for c in cut_cards):
                cut_reported += 1
            else:
                false_cards += 1
                listed.append(f"{seed} {table} FALSE at {_where(seen.corners)} {seen.card} "
                              f"uncertain={seen.uncertain}")
        for j, card in enumerate(expected):
            if j in used:
                continue
            listed.append(f"{seed} {table} LOST {j} at {_where(card['corners'])} {card['card']} "
                          f"visibility={card['visibility']} in_view={card['visible_fraction']:.2f}")
        counts = per_table[table]
        counts.update(expected=len(expected), found=len(matches), false=false_cards, cut=cut_reported, scenes=1)
        wrong = 0
        for i, j in matches:
            truth_card = expected[j]
            if truth_card["visibility"] != "full":
                continue
            seen = board.cards[i]
            right = [getattr(seen.card, a) == truth_card[a] for a in ATTRIBUTES]
            for attribute, ok in zip(ATTRIBUTES, right):
                attribute_right[attribute] += ok
            counts.update(read=1, read_right=int(all(right)), uncertain=int(seen.uncertain),
                          wrong_sure=int(not all(right) and not seen.uncertain))
            wrong += not all(right)
            if not all(right):
                listed.append(f"{seed} {table} WRONG {j} at {_where(truth_card['corners'])} "
                              f"true={truth_card['card']} read={seen.card} uncertain={seen.uncertain} "
                              f"confidence={seen.confidence:.2f}")
        whole = (len(matches) == len(expected) and false_cards == 0 and wrong == 0)
        counts.update(board_right=int(whole))
        full_truth = [Card.parse(c["card"]) for c in truth["cards"] if c["visibility"] == "full"]
        truth_sets = {frozenset(map(str, (full_truth[a], full_truth[b], full_truth[c])))
                      for a, b, c in find_sets(full_truth)}
        seen_sets = {frozenset(str(board.cards[i].card) for i in triple) for triple in board.sets()}
        counts.update(sets_right=int(truth_sets == seen_sets))
        if args.out and not whole:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(Path(args.out) / f"scene-{seed}-{table}.jpg"), draw_board(image, board))
    rows = []
    for table in tables + ["all"]:
        c = per_table[table] if table != "all" else sum(per_table.values(), Counter())
        if table == "all":
            totals = c
        if not c["scenes"]:
            continue
        seen = c["found"] + c["false"]
        precision = f"{100 * c['found'] / seen:.1f}%" if seen else "-"
        # (Empty tables, --cards 0, have nothing to recall: their whole board is right when
        # no card is seen.)
        recall = f"{100 * c['found'] / c['expected']:.1f}%" if c["expected"] else "-"
        rows.append([table, c["scenes"], c["expected"], precision, recall, c["false"], c["cut"],
                     f"{100 * c['read_right'] / c['read']:.1f}%" if c["read"] else "-", c["wrong_sure"],
                     f"{100 * c['board_right'] / c['scenes']:.0f}%", f"{100 * c['sets_right'] / c['scenes']:.0f}%"])
    if args.list:
        print("\n".join(listed) + "\n")  # (scene by scene, as the scenes were read)
    print(markdown_table(["table", "scenes", "cards", "detection precision", "detection recall",
                          "false cards", "cut cards reported partial", "card read right",
                          "read wrong, not flagged", "whole board right", "SET list right"], rows))
    if not totals["read"]:
        return
    print()
    read = totals["read"]
    print(markdown_table(["attribute", "accuracy on cards found (full view)"],
                         [[a, f"{100 * attribute_right[a] / read:.2f}%"] for a in ATTRIBUTES]
                         + [["uncertain flags", f"{100 * totals['uncertain'] / read:.1f}% of cards"]]))


if __name__ == "__main__":
    main()
