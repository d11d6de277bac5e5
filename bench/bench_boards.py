"""Accuracy of photo mode on the labelled table photos in ../shared.

For each photo: cards found against the label count, cards read exactly right (in reading
order, and as a multiset so that an ordering quirk is not counted as a misreading), attribute
accuracy, and whether the list of SETs is exactly right.

    python bench/bench_boards.py [--out DIR] [--model FILE]   # DIR: annotated images to look at
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from _common import add_model_option, labelled_boards_or_exit, markdown_table, recognizer_for, set_names

from core import Card
from vision.imageio import load_photo
from vision.overlay import draw_board

import cv2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_option(parser)
    parser.add_argument("--out", help="write annotated photos here")
    args = parser.parse_args()
    boards = labelled_boards_or_exit()
    recognizer = recognizer_for(args.model)
    rows = []
    totals = Counter()
    attribute_right = Counter()
    for dataset, path, labels in boards:
        truth = [Card.parse(text) for text in labels]
        photo = load_photo(path)
        board = recognizer.read_board(photo.image, photo.scale)
        seen = [s.card for s in board.cards if not s.partial]
        in_order = sum(a == b for a, b in zip(seen, truth)) if len(seen) == len(truth) else 0
        as_multiset = sum((Counter(seen) & Counter(truth)).values())
        sets_right = set_names(seen) == set_names(truth)
        uncertain = sum(s.uncertain for s in board.cards)
        totals.update(truth=len(truth), found=len(board.cards), in_order=in_order,
                      multiset=as_multiset, sets_right=int(sets_right), boards=1,
                      uncertain=uncertain)
        if len(seen) == len(truth):
            for a, b in zip(seen, truth):
                for attribute in ("count", "color", "shading", "shape"):
                    attribute_right[attribute] += getattr(a, attribute) == getattr(b, attribute)
        rows.append([f"{dataset}/{path.name}", len(truth), len(board.cards), in_order, as_multiset,
                     uncertain, "yes" if sets_right else "**no**", board.verdict])
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(Path(args.out) / f"{path.stem}.png"), draw_board(photo.image, board))
    print(markdown_table(["photo", "cards", "found", "right (order)", "right (multiset)",
                          "uncertain", "SETs exact", "verdict"], rows))
    print()
    n = totals["truth"]
    summary = [
        ["cards found / labelled", f"{totals['found']} / {n}"],
        ["cards exactly right (reading order)", f"{totals['in_order']} / {n} ({100 * totals['in_order'] / n:.1f}%)"],
        ["cards exactly right (multiset)", f"{totals['multiset']} / {n} ({100 * totals['multiset'] / n:.1f}%)"],
        ["readings flagged uncertain", totals["uncertain"]],
        ["photos with the SET list exactly right", f"{totals['sets_right']} / {totals['boards']}"],
    ]
    for attribute in ("count", "color", "shading", "shape"):
        summary.append([f"{attribute} right (in order)", f"{100 * attribute_right[attribute] / n:.1f}%"])
    print(markdown_table(["measure", "value"], summary))


if __name__ == "__main__":
    main()
